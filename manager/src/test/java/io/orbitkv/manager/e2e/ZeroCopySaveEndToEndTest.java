package io.orbitkv.manager.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.orbitkv.client.EngineClient;
import io.orbitkv.client.KeyBatch;
import io.orbitkv.client.OperationResult;
import io.orbitkv.codecs.engine.KeyStatus;
import io.orbitkv.manager.Configuration;
import io.orbitkv.manager.Manager;
import io.orbitkv.manager.ManagerContext;
import io.orbitkv.manager.cli.ChildJvm;
import io.orbitkv.manager.ring.RingCounter;
import io.orbitkv.manager.store.StoreCounter;
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.agrona.concurrent.YieldingIdleStrategy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Zero-copy saves against a real Manager ({@code --engine-pool-access write-reserved}, the pool a shared file): the
 * Java client maps the pool, writes into the slots its Prepare got and commits; the blocks read back byte-exact. An
 * engine process SIGKILLed between Prepare and Commit leaves nothing visible and no slot behind.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ZeroCopySaveEndToEndTest
{
    static final String NAMESPACE = "model=zero-copy-e2e;block=16";
    private static final int BLOCK_BYTES = 256 * 1024;
    private static final int BLOCKS = 8;

    @TempDir
    Path tempDir;

    @Test
    void shouldSaveWithoutACopyAndReadTheSameBytesBack()
    {
        try (Manager manager = Manager.launch(context(tempDir.toFile()));
            EngineClient client = connect(manager, "zero-copy-saver"))
        {
            final MemorySegment pool = client.pool();
            assertNotNull(pool, "the Manager lets engines map its pool");
            final KeyBatch batch = keys(BLOCKS);
            final OperationResult prepared = client.prepare(batch, new OperationResult(BLOCKS));
            assertEquals(BLOCKS, prepared.value());
            for (int i = 0; i < BLOCKS; i++)
            {
                assertEquals(KeyStatus.RESERVED, prepared.status(i));
                final MemorySegment slot = pool.asSlice(prepared.poolOffset(i), BLOCK_BYTES);
                for (int b = 0; b < BLOCK_BYTES; b += 8)
                {
                    slot.set(ValueLayout.JAVA_LONG_UNALIGNED, b, pattern(i, b));
                }
            }
            assertEquals(0, client.lookup(batch, false, new OperationResult(BLOCKS)).value(), "nothing visible yet");

            final OperationResult committed = client.commit(batch, new OperationResult(BLOCKS));
            assertEquals(BLOCKS, committed.value());
            assertEquals(BLOCKS, client.lookup(batch, false, new OperationResult(BLOCKS)).value());
            for (int i = 0; i < BLOCKS; i++)
            {
                batch.range(i, (long)i * BLOCK_BYTES, BLOCK_BYTES);
            }
            client.dataRegion().fill((byte)0);
            assertEquals(BLOCKS, client.read(batch, 0L, new OperationResult(BLOCKS)).value());
            for (int i = 0; i < BLOCKS; i++)
            {
                for (int b = 0; b < BLOCK_BYTES; b += 8)
                {
                    assertEquals(pattern(i, b),
                        client.dataRegion().get(ValueLayout.JAVA_LONG_UNALIGNED, (long)i * BLOCK_BYTES + b),
                        "block " + i + " byte " + b);
                }
            }

            final OperationResult again = client.prepare(batch, new OperationResult(BLOCKS));
            assertEquals(0, again.value(), "resident keys get no slot");
            assertEquals(KeyStatus.ALREADY_RESIDENT, again.status(0));
            assertEquals(-1, again.poolOffset(0));
            assertEquals(BLOCKS, manager.counter(RingCounter.BLOCKS_COMMITTED));
        }
    }

    @Test
    void shouldLeaveNothingOfAnEngineKilledBetweenPrepareAndCommit() throws Exception
    {
        try (Manager manager = Manager.launch(context(tempDir.toFile())))
        {
            final long payloadBefore = manager.counter(StoreCounter.POOL_PAYLOAD_BYTES);
            final Process engine = new ProcessBuilder(ChildJvm.javaCommand(List.of(), ZeroCopyEngine.class.getName(),
                List.of(manager.context().dir().getAbsolutePath(), Integer.toString(BLOCKS),
                    Integer.toString(BLOCK_BYTES))))
                .redirectErrorStream(true)
                .start();
            try
            {
                final BufferedReader out =
                    new BufferedReader(new InputStreamReader(engine.getInputStream(), StandardCharsets.UTF_8));
                String line;
                while (null != (line = out.readLine()) && !line.startsWith("prepared "))
                {
                    System.out.println("engine: " + line);
                }
                assertEquals("prepared " + BLOCKS, line);
            }
            finally
            {
                engine.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            }

            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            // Reclaimed when its reservations expire or when its silence times the client out, whichever comes first.
            while (reclaimed(manager) < BLOCKS || payloadBefore != manager.counter(StoreCounter.POOL_PAYLOAD_BYTES))
            {
                assertTrue(System.nanoTime() < deadline, "the dead engine's reservations were never reclaimed: " +
                    reclaimed(manager) + " reclaimed, pool payload " +
                    manager.counter(StoreCounter.POOL_PAYLOAD_BYTES) + " bytes, " + payloadBefore + " before");
                Thread.onSpinWait();
            }
            assertEquals(0, manager.counter(RingCounter.BLOCKS_COMMITTED));
            try (EngineClient client = connect(manager, "zero-copy-survivor"))
            {
                final KeyBatch batch = keys(BLOCKS);
                assertEquals(0, client.lookup(batch, false, new OperationResult(BLOCKS)).value(),
                    "nothing the dead engine wrote became visible");
                assertEquals(BLOCKS, client.prepare(batch, new OperationResult(BLOCKS)).value(),
                    "its keys are free to be saved");
            }
        }
    }

    @Test
    void shouldRefuseToPrepareWhenTheManagerGivesNoPoolAccess()
    {
        final ManagerContext ctx = context(tempDir.toFile()).enginePoolAccess(Configuration.EnginePoolAccess.NONE);
        try (Manager manager = Manager.launch(ctx);
            EngineClient client = connect(manager, "no-pool"))
        {
            assertNull(client.pool());
            assertThrows(IllegalStateException.class, () -> client.prepare(keys(1), new OperationResult(1)));
            assertTrue(!new File(manager.context().dir(), "pool.dat").exists(), "no pool file without the flag");
        }
    }

    private static long reclaimed(final Manager manager)
    {
        return manager.counter(RingCounter.RESERVATIONS_ABORTED) + manager.counter(RingCounter.RESERVATIONS_EXPIRED);
    }

    static byte[] hash(final int i)
    {
        final byte[] hash = new byte[32];
        hash[0] = (byte)i;
        hash[31] = (byte)0xC0;
        return hash;
    }

    private static KeyBatch keys(final int count)
    {
        final KeyBatch batch = new KeyBatch(count).namespace(NAMESPACE.getBytes(StandardCharsets.US_ASCII));
        for (int i = 0; i < count; i++)
        {
            batch.addKey(hash(i), 0, 32, 0, BLOCK_BYTES);
        }
        return batch;
    }

    private static long pattern(final int block, final int offset)
    {
        return (long)block << 48 ^ offset * 0x9E3779B97F4A7C15L;
    }

    private static ManagerContext context(final File dir)
    {
        return new ManagerContext()
            .dir(new File(dir, "manager"))
            .poolBytes(8L << 20)
            .maxBlockBytes(1 << 20)
            .indexBudgetBytes(1L << 20)
            .maxClients(8)
            .maxDataRegionBytes(8L << 20)
            .clientTimeoutNs(TimeUnit.SECONDS.toNanos(2))
            .idleStrategy(new YieldingIdleStrategy())
            .enginePoolAccess(Configuration.EnginePoolAccess.WRITE_RESERVED);
    }

    private static EngineClient connect(final Manager manager, final String name)
    {
        return EngineClient.connect(new EngineClient.Context()
            .dir(manager.context().dir().getAbsolutePath())
            .clientName(name)
            .dataRegionBytes(4L << 20));
    }
}
