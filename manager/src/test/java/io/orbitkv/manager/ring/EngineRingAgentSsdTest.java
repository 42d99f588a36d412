package io.orbitkv.manager.ring;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.orbitkv.codecs.engine.KeyStatus;
import io.orbitkv.manager.Configuration;
import io.orbitkv.manager.status.SystemCounterDescriptor;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The tiered store under the ring agent, one duty cycle at a time: DRAM victims admitted to SSD, the lookup
 * reporting each key's tier, and a Read restoring SSD-only blocks through staging.
 */
class EngineRingAgentSsdTest
{
    private static final String NAMESPACE = "model=test;block=16";
    private static final int BLOCK_BYTES = 256 * 1024;
    private static final int BLOCKS = 24;

    @TempDir
    Path tempDir;

    private RingAgentFixture fixture;
    private RingAgentFixture.Engine engine;

    @BeforeEach
    void setUp()
    {
        fixture = new RingAgentFixture(
            tempDir.toFile(), TimeUnit.SECONDS.toNanos(5), Configuration.SsdAdmission.ON_EVICT);
        engine = fixture.engine(4242L);
        engine.attachOrFail("engine-a", 16L << 20);
    }

    @AfterEach
    void tearDown()
    {
        engine.close();
        fixture.close();
    }

    @Test
    void shouldAdmitDramVictimsToSsdAndRestoreThemThroughStaging()
    {
        // A 4 MiB pool holds fewer than 24 blocks of 256 KiB: the first ones are evicted, and admitted to SSD.
        for (int i = 0; i < BLOCKS; i++)
        {
            engine.fill((long)i * BLOCK_BYTES, BLOCK_BYTES, 100 + i);
            final RingAgentFixture.Reply reply = engine.awaitReply(engine.sendPublish(
                NAMESPACE, new long[]{(long)i * BLOCK_BYTES}, new int[]{BLOCK_BYTES},
                new byte[][]{RingAgentFixture.hash(i)}));
            assertEquals(1, reply.value(), () -> "stored: " + reply);
        }
        final byte[][] all = new byte[BLOCKS][];
        for (int i = 0; i < BLOCKS; i++)
        {
            all[i] = RingAgentFixture.hash(i);
        }
        awaitSsdWrites();

        final RingAgentFixture.Reply looked = engine.awaitReply(engine.sendLookup(NAMESPACE, 0, all));
        assertEquals(BLOCKS, looked.value(), "every key is in one tier or the other");
        assertEquals(KeyStatus.SSD, looked.statuses()[0], "the first victim is on SSD only");
        assertEquals(KeyStatus.DRAM, looked.statuses()[BLOCKS - 1], "the last publish is in DRAM");
        assertTrue(fixture.counter(SystemCounterDescriptor.SSD_LOOKUP_HITS) >= 1);

        // Restore the first two (SSD) and the last (DRAM) into the upper half of the region.
        final long base = 12L << 20;
        final RingAgentFixture.Reply read = engine.awaitReply(engine.sendRead(
            NAMESPACE, 0L,
            new long[]{base, base + BLOCK_BYTES, base + 2L * BLOCK_BYTES},
            new int[]{BLOCK_BYTES, BLOCK_BYTES, BLOCK_BYTES},
            new byte[][]{all[0], all[1], all[BLOCKS - 1]}));
        assertArrayEquals(new KeyStatus[]{KeyStatus.SSD, KeyStatus.SSD, KeyStatus.DRAM}, read.statuses());
        assertEquals(3, read.value());
        assertTrue(engine.matches(base, BLOCK_BYTES, 100));
        assertTrue(engine.matches(base + BLOCK_BYTES, BLOCK_BYTES, 101));
        assertTrue(engine.matches(base + 2L * BLOCK_BYTES, BLOCK_BYTES, 100 + BLOCKS - 1));
        assertTrue(fixture.counter(SystemCounterDescriptor.SSD_READS) >= 2);

        fixture.housekeeping();
        assertEquals(0, fixture.counter(SystemCounterDescriptor.PINS_ACTIVE), "no DRAM pin left");
    }

    private void awaitSsdWrites()
    {
        for (int i = 0; i < 1_000 && fixture.counter(SystemCounterDescriptor.SSD_QUEUE_DEPTH) > 0; i++)
        {
            fixture.housekeeping();
        }
        fixture.housekeeping();
        assertTrue(fixture.counter(SystemCounterDescriptor.SSD_WRITES) >= 1, "victims were written to SSD");
        assertEquals(0, fixture.counter(SystemCounterDescriptor.SSD_QUEUE_DEPTH), "no write still in flight");
    }
}
