package io.orbitkv.manager;

import io.orbitkv.manager.status.CncReader;
import io.orbitkv.manager.status.SystemCounterDescriptor;
import io.orbitkv.manager.store.PoolToucher;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.orbitkv.client.EngineClient;
import io.orbitkv.client.KeyBatch;
import io.orbitkv.client.OperationResult;
import io.orbitkv.codecs.engine.KeyStatus;
import io.orbitkv.manager.cli.OrbitKvCli;
import io.orbitkv.manager.store.StoreCounter;
import java.io.File;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.agrona.concurrent.YieldingIdleStrategy;
import org.agrona.concurrent.status.CountersReader;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

/**
 * The pool pre-touch modes against a real Manager in this JVM, engines attached through {@link EngineClient}. A
 * throttle (pause after each 2 MiB chunk) keeps a background touch running long enough to publish into it.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class PoolPretouchTest
{
    private static final int MB = 1024 * 1024;
    private static final long CHUNK = Configuration.POOL_TOUCH_CHUNK_BYTES;
    private static final byte[] NS = "model=pretouch;block=1m".getBytes(StandardCharsets.US_ASCII);
    private static final long TOUCH_DEADLINE_NS = TimeUnit.SECONDS.toNanos(30);

    private File dir;
    private Manager manager;

    @BeforeEach
    void setUp()
    {
        dir = ManagerTestSupport.newDir();
    }

    @AfterEach
    void tearDown()
    {
        ManagerTestSupport.closeCheckingErrors(manager, dir, false);
    }

    @Test
    void shouldServeByteExactIntoUntouchedPoolWhileTheBackgroundTouchRunsAndKeepTheBlocksItPassesOver()
    {
        final long poolBytes = 32L * MB;
        final int blocks = 24;
        manager = Manager.launch(context(poolBytes)
            .poolPretouch(Configuration.PoolPretouch.BACKGROUND)
            .poolPretouchPauseNs(TimeUnit.MILLISECONDS.toNanos(250)));

        final long touchedAtReady = manager.counter(StoreCounter.POOL_BYTES_TOUCHED);
        assertTrue(touchedAtReady < poolBytes, "ready before the touch is done: " + touchedAtReady);
        assertEquals(Configuration.PoolPretouch.BACKGROUND.code(), manager.counter(StoreCounter.POOL_TOUCH_MODE));
        assertNotNull(toucherThread(), "the toucher thread runs");

        try (EngineClient engine = connect(2L * blocks * MB))
        {
            final MemorySegment region = engine.dataRegion();
            fill(region, 0, (long)blocks * MB, 0x9E3779B97F4A7C15L);
            final KeyBatch batch = batch(blocks, 0);
            final OperationResult result = new OperationResult(blocks);
            engine.publish(batch, result);
            assertEquals(blocks, result.count(KeyStatus.STORED), result.toString());

            readInto(engine, blocks, (long)blocks * MB);
            final long touchedAfterRead = manager.counter(StoreCounter.POOL_BYTES_TOUCHED);
            // Blocks fill the pool from offset 0: those above the toucher's frontier went into untouched memory.
            assertTrue(touchedAfterRead < (long)blocks * MB, "the touch overtook the publish: " + touchedAfterRead);
            assertEquals(StoreCounter.POOL_TOUCH_TOUCHING, manager.counter(StoreCounter.POOL_TOUCH_STATE));
            assertEquals(-1, mismatch(region, blocks), "bytes read back differ from those published");

            final String during = stat();
            assertTrue(during.matches("(?s).*pool touch: \\d+% \\(\\d+ MiB of 32 MiB\\), background, touching for .*"),
                during);

            awaitTrue(
                () -> manager.counter(StoreCounter.POOL_TOUCH_STATE) == StoreCounter.POOL_TOUCH_DONE,
                TOUCH_DEADLINE_NS,
                () -> "touch not done: " + manager.counter(StoreCounter.POOL_BYTES_TOUCHED));
            assertEquals(poolBytes, manager.counter(StoreCounter.POOL_BYTES_TOUCHED));
            awaitTrue(() -> null == toucherThread(), TOUCH_DEADLINE_NS, () -> "toucher thread still alive");

            // The toucher populated the pages under the stored blocks after they were written: they must be intact.
            region.asSlice((long)blocks * MB, (long)blocks * MB).fill((byte)0);
            readInto(engine, blocks, (long)blocks * MB);
            assertEquals(-1, mismatch(region, blocks), "stored blocks changed once the toucher passed over them");
        }
        final String after = stat();
        assertTrue(after.contains("pool touch: 100% (32 MiB of 32 MiB), background, done in "), after);
        assertTrue(manager.counter(StoreCounter.POOL_TOUCH_MS) >= 15 * 250, after);
    }

    @Test
    void shouldBecomeReadyOnlyOnceTheWholePoolIsTouchedInBlockingMode()
    {
        final long poolBytes = 32L * MB;
        final long startNs = System.nanoTime();
        manager = Manager.launch(context(poolBytes)
            .poolPretouch(Configuration.PoolPretouch.BLOCKING)
            .poolPretouchPauseNs(TimeUnit.MILLISECONDS.toNanos(100)));
        final long launchMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs);

        assertEquals(poolBytes, manager.counter(StoreCounter.POOL_BYTES_TOUCHED));
        assertEquals(StoreCounter.POOL_TOUCH_DONE, manager.counter(StoreCounter.POOL_TOUCH_STATE));
        assertEquals(Configuration.PoolPretouch.BLOCKING.code(), manager.counter(StoreCounter.POOL_TOUCH_MODE));
        assertTrue(launchMs >= 15 * 100, "launch returned after " + launchMs + " ms");
        assertNull(toucherThread(), "blocking mode touches on the launching thread");
        assertTrue(stat().contains("pool touch: 100% (32 MiB of 32 MiB), blocking, done in "));
    }

    @Test
    void shouldLeaveThePoolUntouchedWhenOff()
    {
        manager = Manager.launch(context(16L * MB).poolPretouch(Configuration.PoolPretouch.OFF));
        assertNull(toucherThread());

        try (EngineClient engine = connect(8L * MB))
        {
            fill(engine.dataRegion(), 0, 4L * MB, 42);
            final OperationResult result = new OperationResult(4);
            engine.publish(batch(4, 0), result);
            assertEquals(4, result.count(KeyStatus.STORED), result.toString());
            readInto(engine, 4, 4L * MB);
            assertEquals(-1, mismatch(engine.dataRegion(), 4));
        }
        assertEquals(0, manager.counter(StoreCounter.POOL_BYTES_TOUCHED));
        assertEquals(StoreCounter.POOL_TOUCH_NOT_STARTED, manager.counter(StoreCounter.POOL_TOUCH_STATE));
        assertEquals(Configuration.PoolPretouch.OFF.code(), manager.counter(StoreCounter.POOL_TOUCH_MODE));
        assertTrue(stat().contains("pool touch: off"));
    }

    @Test
    void shouldStopAPausedTouchAtOnceWhenClosed()
    {
        final long poolBytes = 64L * MB;
        manager = Manager.launch(context(poolBytes)
            .poolPretouch(Configuration.PoolPretouch.BACKGROUND)
            .poolPretouchPauseNs(TimeUnit.SECONDS.toNanos(20)));
        final Thread toucher = toucherThread();
        try (CncReader reader = CncReader.map(manager.cncFile()))
        {
            final CountersReader counters = reader.countersReader();
            awaitTrue(() -> touched(counters) >= CHUNK, TOUCH_DEADLINE_NS, () -> "no chunk touched");

            final long closeMs = closeAndTime();

            // The reader's mapping outlives the Manager's unlink of the file.
            assertTrue(closeMs < 2_000, "close took " + closeMs + " ms: the pause was not cut short");
            assertFalse(toucher.isAlive());
            assertEquals(CHUNK, touched(counters));
            assertEquals(StoreCounter.POOL_TOUCH_STOPPED,
                counters.getCounterValue(StoreCounter.POOL_TOUCH_STATE.fixedId()));
        }
    }

    @Test
    void shouldCloseCleanlyAndFastWhileTheKernelIsPopulatingALargePool()
    {
        final long poolBytes = 4L << 30;
        manager = Manager.launch(context(poolBytes).poolPretouch(Configuration.PoolPretouch.BACKGROUND));
        final Thread toucher = toucherThread();
        try (CncReader reader = CncReader.map(manager.cncFile()))
        {
            final CountersReader counters = reader.countersReader();
            awaitTrue(() -> touched(counters) >= 2 * CHUNK, TOUCH_DEADLINE_NS, () -> "no chunk touched");

            final long closeMs = closeAndTime();

            assertTrue(closeMs < 2_000, "close took " + closeMs + " ms");
            assertFalse(toucher.isAlive());
            final long touched = touched(counters);
            assertTrue(touched < poolBytes, "the touch ended before the close: nothing was tested");
            assertEquals(StoreCounter.POOL_TOUCH_STOPPED,
                counters.getCounterValue(StoreCounter.POOL_TOUCH_STATE.fixedId()));
            assertEquals(0, counters.getCounterValue(SystemCounterDescriptor.ERRORS.fixedId()));
        }
    }

    private static void awaitTrue(final BooleanSupplier condition, final long timeoutNs, final Supplier<String> message)
    {
        final long deadlineNs = System.nanoTime() + timeoutNs;
        while (!condition.getAsBoolean())
        {
            if (System.nanoTime() - deadlineNs > 0)
            {
                fail("timed out: " + message.get());
            }
            Thread.yield();
        }
    }

    private long closeAndTime()
    {
        final long startNs = System.nanoTime();
        manager.close();
        final long closeMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs);
        manager = null;
        return closeMs;
    }

    private static long touched(final CountersReader counters)
    {
        return counters.getCounterValue(StoreCounter.POOL_BYTES_TOUCHED.fixedId());
    }

    private ManagerContext context(final long poolBytes)
    {
        return ManagerTestSupport.smallContext(dir)
            .poolBytes(poolBytes)
            .maxBlockBytes(MB)
            .maxDataRegionBytes(64L * MB)
            .copyChunkBytes(MB);
    }

    private EngineClient connect(final long dataRegionBytes)
    {
        return EngineClient.connect(new EngineClient.Context()
            .dir(dir.getAbsolutePath())
            .clientName("pretouch-engine")
            .dataRegionBytes(dataRegionBytes)
            .idleStrategy(new YieldingIdleStrategy()));
    }

    /** Keys 0..count-1, block i at {@code base + i} MiB of the data region. */
    private static KeyBatch batch(final int count, final long base)
    {
        final KeyBatch batch = new KeyBatch(count).namespace(NS);
        final byte[] hash = new byte[16];
        for (int i = 0; i < count; i++)
        {
            hash[0] = (byte)i;
            batch.addKey(hash, 0, hash.length, base + (long)i * MB, MB);
        }
        return batch;
    }

    private static void readInto(final EngineClient engine, final int count, final long base)
    {
        final OperationResult result = new OperationResult(count);
        engine.read(batch(count, base), 0, result);
        assertEquals(count, result.value(), result.toString());
    }

    private static void fill(final MemorySegment region, final long offset, final long bytes, final long seed)
    {
        for (long at = offset; at < offset + bytes; at += Long.BYTES)
        {
            region.set(ValueLayout.JAVA_LONG_UNALIGNED, at, (at + 1) * seed);
        }
    }

    /** First differing offset between the published blocks and the blocks read back after them, -1 if none. */
    private static long mismatch(final MemorySegment region, final int blocks)
    {
        final long bytes = (long)blocks * MB;
        return region.asSlice(0, bytes).mismatch(region.asSlice(bytes, bytes));
    }

    private String stat()
    {
        final StringWriter out = new StringWriter();
        final CommandLine cli = OrbitKvCli.commandLine();
        cli.setOut(new PrintWriter(out));
        final int exit = cli.execute("stat", "--dir", dir.getAbsolutePath(), "--once");
        assertEquals(0, exit, out.toString());
        return out.toString();
    }

    /**
     * @return the live background toucher thread, found by its name, or null.
     */
    private static Thread toucherThread()
    {
        for (final Thread thread : Thread.getAllStackTraces().keySet())
        {
            if (PoolToucher.THREAD_NAME.equals(thread.getName()) && thread.isAlive())
            {
                return thread;
            }
        }
        return null;
    }
}
