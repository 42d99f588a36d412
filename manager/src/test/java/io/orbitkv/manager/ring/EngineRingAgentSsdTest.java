package io.orbitkv.manager.ring;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.orbitkv.codecs.engine.KeyStatus;
import io.orbitkv.manager.Configuration;
import io.orbitkv.manager.store.Residence;
import io.orbitkv.manager.store.StoreCounter;
import io.orbitkv.manager.store.TieredStore;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;
import org.agrona.concurrent.UnsafeBuffer;
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
        assertTrue(fixture.counter(StoreCounter.SSD_LOOKUP_HITS) >= 1);

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
        assertTrue(fixture.counter(StoreCounter.SSD_READS) >= 2);

        fixture.housekeeping();
        assertEquals(0, fixture.counter(StoreCounter.PINS_ACTIVE), "no DRAM pin left");
    }

    @Test
    void shouldSealAPublishCopiedInManyChunksWithTheCrc32cOfItsBytesAndKeepItOnSsd()
    {
        // Two blocks of four copy chunks each in one Publish: the sum runs across duty cycles and across keys.
        assertTrue(BLOCK_BYTES >= 4 * RingAgentFixture.COPY_CHUNK_BYTES);
        engine.fill(0, BLOCK_BYTES, 500);
        engine.fill(BLOCK_BYTES, BLOCK_BYTES - 1, 501);
        final long correlationId = engine.sendPublish(
            NAMESPACE, new long[]{0, BLOCK_BYTES}, new int[]{BLOCK_BYTES, BLOCK_BYTES - 1},
            new byte[][]{RingAgentFixture.hash(500), RingAgentFixture.hash(501)});
        final int cycles = cyclesUntilReply(correlationId);
        assertTrue(cycles >= 8, "copied in chunks over " + cycles + " duty cycles");
        assertEquals(2, fixture.counter(StoreCounter.CHECKSUM_BLOCKS_PUBLISHED));
        assertEquals(2L * BLOCK_BYTES - 1, fixture.counter(StoreCounter.CHECKSUM_BYTES_PUBLISHED));

        final long first = fixture.residence(NAMESPACE, RingAgentFixture.hash(500));
        final long second = fixture.residence(NAMESPACE, RingAgentFixture.hash(501));
        assertTrue(Residence.isDram(first) && Residence.isDram(second));
        assertEquals(crc32c(500, BLOCK_BYTES), fixture.store().crc32c(first));
        assertEquals(crc32c(501, BLOCK_BYTES - 1), fixture.store().crc32c(second));

        // Push both out of the 4 MiB pool: their SSD residences keep the sums sealed at publish.
        for (int i = 0; i < BLOCKS; i++)
        {
            engine.fill(2L * BLOCK_BYTES, BLOCK_BYTES, 100 + i);
            engine.awaitReply(engine.sendPublish(NAMESPACE, new long[]{2L * BLOCK_BYTES}, new int[]{BLOCK_BYTES},
                new byte[][]{RingAgentFixture.hash(i)}));
        }
        awaitSsdWrites();
        final long firstOnSsd = fixture.residence(NAMESPACE, RingAgentFixture.hash(500));
        assertTrue(Residence.isSsd(firstOnSsd), "evicted from DRAM, resident on SSD");
        assertEquals(crc32c(500, BLOCK_BYTES), fixture.store().crc32c(firstOnSsd));

        final long base = 12L << 20;
        final RingAgentFixture.Reply read = engine.awaitReply(engine.sendRead(
            NAMESPACE, 0L, new long[]{base, base + BLOCK_BYTES}, new int[]{BLOCK_BYTES, BLOCK_BYTES},
            new byte[][]{RingAgentFixture.hash(500), RingAgentFixture.hash(501)}));
        assertArrayEquals(new KeyStatus[]{KeyStatus.SSD, KeyStatus.SSD}, read.statuses(), read::toString);
        assertTrue(engine.matches(base, BLOCK_BYTES, 500));
        assertTrue(engine.matches(base + BLOCK_BYTES, BLOCK_BYTES - 1, 501));
        assertEquals(2, fixture.counter(StoreCounter.CHECKSUM_BLOCKS_VERIFIED));
        assertEquals(2L * BLOCK_BYTES - 1, fixture.counter(StoreCounter.CHECKSUM_BYTES_VERIFIED));
        assertEquals(0, fixture.counter(StoreCounter.CHECKSUM_SSD_MISMATCHES));
    }

    @Test
    void shouldSealABlockFetchedFromAPeerWithItsSourcesSum()
    {
        engine.fill(0, BLOCK_BYTES, 600);
        assertEquals(1, engine.awaitReply(engine.sendPublish(NAMESPACE, new long[]{0}, new int[]{BLOCK_BYTES},
            new byte[][]{RingAgentFixture.hash(600)})).value());
        final long published = fixture.counter(StoreCounter.CHECKSUM_BLOCKS_PUBLISHED);

        // A block as a transport would land it: reserved PREPARING, bytes written straight into the pool.
        final TieredStore store = fixture.store();
        final byte[] hash = RingAgentFixture.hash(601);
        final int entry = store.reserve(
            fixture.namespaceId(NAMESPACE), new UnsafeBuffer(hash), 0, hash.length, BLOCK_BYTES);
        assertTrue(entry >= 0);
        final long poolOffset = store.offset(entry);
        for (int i = 0; i < BLOCK_BYTES; i++)
        {
            store.pool().set(ValueLayout.JAVA_BYTE, poolOffset + i, RingAgentFixture.pattern(601, i));
        }
        final int sourceCrc = crc32c(601, BLOCK_BYTES);
        assertEquals(sourceCrc, store.computePoolCrc32c(poolOffset, BLOCK_BYTES), "the landed bytes' sum");
        assertTrue(Residence.isNone(fixture.residence(NAMESPACE, hash)), "nothing visible before seal");

        store.sealFetched(entry, sourceCrc);
        final long residence = fixture.residence(NAMESPACE, hash);
        assertTrue(Residence.isDram(residence));
        assertEquals(sourceCrc, store.crc32c(residence), "sealed with its source's sum");
        assertEquals(published, fixture.counter(StoreCounter.CHECKSUM_BLOCKS_PUBLISHED),
            "a fetched block is not counted as checksummed at publish");

        final RingAgentFixture.Reply read = engine.awaitReply(engine.sendRead(
            NAMESPACE, 0L, new long[]{BLOCK_BYTES}, new int[]{BLOCK_BYTES}, new byte[][]{hash}));
        assertArrayEquals(new KeyStatus[]{KeyStatus.DRAM}, read.statuses());
        assertTrue(engine.matches(BLOCK_BYTES, BLOCK_BYTES, 601));
    }

    private int cyclesUntilReply(final long correlationId)
    {
        for (int cycles = 1; cycles <= 1_000; cycles++)
        {
            fixture.doWork();
            final RingAgentFixture.Reply reply = engine.poll(correlationId);
            if (null != reply)
            {
                assertEquals(2, reply.value(), reply::toString);
                return cycles;
            }
        }
        throw new AssertionError("no reply to " + correlationId);
    }

    private static int crc32c(final long seed, final int length)
    {
        final byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++)
        {
            bytes[i] = RingAgentFixture.pattern(seed, i);
        }
        final CRC32C crc = new CRC32C();
        crc.update(bytes);
        return (int)crc.getValue();
    }

    private void awaitSsdWrites()
    {
        for (int i = 0; i < 1_000 && fixture.counter(StoreCounter.SSD_QUEUE_DEPTH) > 0; i++)
        {
            fixture.housekeeping();
        }
        fixture.housekeeping();
        assertTrue(fixture.counter(StoreCounter.SSD_WRITES) >= 1, "victims were written to SSD");
        assertEquals(0, fixture.counter(StoreCounter.SSD_QUEUE_DEPTH), "no write still in flight");
    }
}
