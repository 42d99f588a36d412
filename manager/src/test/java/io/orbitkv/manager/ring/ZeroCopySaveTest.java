package io.orbitkv.manager.ring;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.orbitkv.codecs.engine.KeyStatus;
import io.orbitkv.codecs.engine.StatusCode;
import io.orbitkv.manager.Configuration;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Zero-copy saves through the ring agent: Prepare reserves pool slots, the engine writes them (here through the
 * store's pool, as an engine would through its mapping of the pool file), Commit sums and seals them; a reservation
 * that is never committed, or whose client goes, is reclaimed without ever being visible.
 */
class ZeroCopySaveTest
{
    private static final String NAMESPACE = "model=zero-copy;block=16";
    private static final int BLOCK_BYTES = 8192;
    private static final long TIMEOUT_NS = TimeUnit.MILLISECONDS.toNanos(100);

    @TempDir
    Path tempDir;

    private RingAgentFixture fixture;
    private RingAgentFixture.Engine engine;

    @BeforeEach
    void setUp()
    {
        fixture = new RingAgentFixture(
            tempDir.toFile(), TIMEOUT_NS, null, Configuration.EnginePoolAccess.WRITE_RESERVED);
        engine = fixture.engine(4242L);
        engine.attachOrFail("zero-copy-engine", 1 << 20);
    }

    @AfterEach
    void tearDown()
    {
        engine.close();
        fixture.close();
    }

    @Test
    void shouldSealWhatTheEngineWroteIntoItsSlotsOnlyAtCommit()
    {
        final byte[][] hashes = {RingAgentFixture.hash(1), RingAgentFixture.hash(2)};
        final long prepareId = engine.sendPrepare(NAMESPACE, new int[]{BLOCK_BYTES, BLOCK_BYTES}, hashes);
        fixture.doWork();
        final RingAgentFixture.Reply prepared = engine.takeReply(prepareId);
        assertEquals(StatusCode.OK, prepared.code());
        assertEquals(2, prepared.value());
        assertArrayEquals(new KeyStatus[]{KeyStatus.RESERVED, KeyStatus.RESERVED}, prepared.statuses());
        assertArrayEquals(new int[]{BLOCK_BYTES, BLOCK_BYTES}, prepared.lengths());
        final long[] slots = prepared.poolOffsets();
        assertEquals(2, slots.length);
        assertTrue(slots[0] >= 0 && slots[1] >= 0);
        assertTrue(Math.abs(slots[0] - slots[1]) >= BLOCK_BYTES, "slots do not overlap");
        assertEquals(2, fixture.counter(RingCounter.BLOCKS_RESERVED));

        assertEquals(0, lookup(hashes), "a reserved slot is not visible");
        final MemorySegment pool = fixture.store().pool();
        write(pool, slots[0], 11);
        write(pool, slots[1], 12);

        final long commitId = engine.sendCommit(NAMESPACE, hashes);
        final RingAgentFixture.Reply committed = engine.awaitReply(commitId);
        assertEquals(StatusCode.OK, committed.code());
        assertEquals(2, committed.value());
        assertArrayEquals(new KeyStatus[]{KeyStatus.STORED, KeyStatus.STORED}, committed.statuses());
        assertEquals(2, fixture.counter(RingCounter.BLOCKS_COMMITTED));
        assertEquals(2L * BLOCK_BYTES, fixture.counter(RingCounter.BYTES_COMMITTED));

        assertEquals(2, lookup(hashes));
        final long residence = fixture.residence(NAMESPACE, hashes[0]);
        assertEquals(expectedCrc(11), fixture.store().crc32c(residence), "sealed with the sum of the slot's bytes");
        final long readId = engine.sendRead(NAMESPACE, 0L, new long[]{0, BLOCK_BYTES},
            new int[]{BLOCK_BYTES, BLOCK_BYTES}, hashes);
        final RingAgentFixture.Reply read = engine.awaitReply(readId);
        assertEquals(2, read.value());
        assertTrue(engine.matches(0, BLOCK_BYTES, 11));
        assertTrue(engine.matches(BLOCK_BYTES, BLOCK_BYTES, 12));
    }

    @Test
    void shouldGiveNoSlotForAResidentKeyAndMissACommitWithoutAReservation()
    {
        engine.fill(0, BLOCK_BYTES, 3);
        final byte[] resident = RingAgentFixture.hash(7);
        final long publishId = engine.sendPublish(NAMESPACE, new long[]{0}, new int[]{BLOCK_BYTES},
            new byte[][]{resident});
        assertEquals(1, engine.awaitReply(publishId).value());

        final byte[] fresh = RingAgentFixture.hash(8);
        final long prepareId = engine.sendPrepare(NAMESPACE, new int[]{BLOCK_BYTES, BLOCK_BYTES},
            new byte[][]{resident, fresh});
        fixture.doWork();
        final RingAgentFixture.Reply prepared = engine.takeReply(prepareId);
        assertArrayEquals(new KeyStatus[]{KeyStatus.ALREADY_RESIDENT, KeyStatus.RESERVED}, prepared.statuses());
        assertEquals(-1, prepared.poolOffsets()[0]);
        assertEquals(1, prepared.value());

        // The resident key was never reserved, the unknown one never prepared: only the fresh one seals.
        final long commitId = engine.sendCommit(NAMESPACE, new byte[][]{resident, RingAgentFixture.hash(9), fresh});
        final RingAgentFixture.Reply committed = engine.awaitReply(commitId);
        assertArrayEquals(new KeyStatus[]{KeyStatus.MISS, KeyStatus.MISS, KeyStatus.STORED}, committed.statuses());
        assertEquals(1, committed.value());
        assertEquals(2, fixture.counter(RingCounter.COMMITS_NOT_RESERVED));
    }

    @Test
    void shouldReclaimAReservationNotCommittedInTimeWithoutItEverBeingVisible()
    {
        final byte[][] hashes = {RingAgentFixture.hash(21)};
        final long freeBefore = fixture.store().dram().freeBytes();
        final long prepareId = engine.sendPrepare(NAMESPACE, new int[]{BLOCK_BYTES}, hashes);
        fixture.doWork();
        assertEquals(KeyStatus.RESERVED, engine.takeReply(prepareId).statuses()[0]);
        assertTrue(fixture.store().dram().freeBytes() < freeBefore);

        // The client stays alive (heartbeats) while its reservation runs out.
        fixture.advanceNs(TIMEOUT_NS / 2);
        engine.sendHeartbeat();
        fixture.doWork();
        assertEquals(0, fixture.counter(RingCounter.RESERVATIONS_EXPIRED), "not yet");
        fixture.advanceNs(TIMEOUT_NS / 2 + 1);
        engine.sendHeartbeat();
        fixture.housekeeping();
        assertEquals(1, fixture.counter(RingCounter.RESERVATIONS_EXPIRED));
        assertEquals(freeBefore, fixture.store().dram().freeBytes(), "the slot went back to the pool");

        final long commitId = engine.sendCommit(NAMESPACE, hashes);
        assertArrayEquals(new KeyStatus[]{KeyStatus.MISS}, engine.awaitReply(commitId).statuses());
        assertEquals(0, lookup(hashes));
    }

    @Test
    void shouldAbortTheReservationsOfAClientThatGoesAndFreeTheirKeys()
    {
        final byte[][] hashes = {RingAgentFixture.hash(31), RingAgentFixture.hash(32)};
        final long prepareId = engine.sendPrepare(NAMESPACE, new int[]{BLOCK_BYTES, BLOCK_BYTES}, hashes);
        fixture.doWork();
        assertEquals(2, engine.takeReply(prepareId).value());
        engine.sendDetach();
        fixture.doWork();
        assertEquals(2, fixture.counter(RingCounter.RESERVATIONS_ABORTED));

        try (RingAgentFixture.Engine other = fixture.engine(4343L))
        {
            other.attachOrFail("other-engine", 1 << 20);
            final long id = other.sendPrepare(NAMESPACE, new int[]{BLOCK_BYTES, BLOCK_BYTES}, hashes);
            fixture.doWork();
            assertArrayEquals(new KeyStatus[]{KeyStatus.RESERVED, KeyStatus.RESERVED}, other.takeReply(id).statuses(),
                "the keys are free to be saved again");
        }
    }

    @Test
    void shouldNotLetOneClientCommitAnothersReservation()
    {
        final byte[][] hashes = {RingAgentFixture.hash(41)};
        final long prepareId = engine.sendPrepare(NAMESPACE, new int[]{BLOCK_BYTES}, hashes);
        fixture.doWork();
        assertEquals(1, engine.takeReply(prepareId).value());
        try (RingAgentFixture.Engine other = fixture.engine(4444L))
        {
            other.attachOrFail("thief", 1 << 20);
            final long id = other.sendCommit(NAMESPACE, hashes);
            assertArrayEquals(new KeyStatus[]{KeyStatus.MISS}, other.awaitReply(id).statuses());
        }
        assertEquals(0, lookup(hashes));
        final long commitId = engine.sendCommit(NAMESPACE, hashes);
        assertArrayEquals(new KeyStatus[]{KeyStatus.STORED}, engine.awaitReply(commitId).statuses());
    }

    @Test
    void shouldRefuseBadBlockLengthsAndStoreNothing()
    {
        final long zeroId = engine.sendPrepare(NAMESPACE, new int[]{0}, new byte[][]{RingAgentFixture.hash(51)});
        fixture.doWork();
        assertEquals(StatusCode.OUT_OF_RANGE, engine.takeReply(zeroId).code());
        final long largeId = engine.sendPrepare(NAMESPACE, new int[]{Integer.MAX_VALUE},
            new byte[][]{RingAgentFixture.hash(52)});
        fixture.doWork();
        assertEquals(StatusCode.BATCH_TOO_LARGE, engine.takeReply(largeId).code());
        assertEquals(0, fixture.counter(RingCounter.BLOCKS_RESERVED));
    }

    @Test
    void shouldRefusePrepareAndCommitWhenEnginesHaveNoPoolAccess()
    {
        engine.close();
        fixture.close();
        fixture = new RingAgentFixture(tempDir.resolve("none").toFile(), TIMEOUT_NS);
        engine = fixture.engine(4545L);
        engine.attachOrFail("no-access", 1 << 20);
        final byte[][] hashes = {RingAgentFixture.hash(61)};
        final long prepareId = engine.sendPrepare(NAMESPACE, new int[]{BLOCK_BYTES}, hashes);
        final long commitId = engine.sendCommit(NAMESPACE, hashes);
        fixture.doWork();
        assertEquals(StatusCode.NOT_ENABLED, engine.takeReply(prepareId).code());
        assertEquals(StatusCode.NOT_ENABLED, engine.takeReply(commitId).code());
        assertEquals(2, fixture.counter(RingCounter.REJECTED_NOT_ENABLED));
        assertNotEquals(0, fixture.store().dram().freeBytes());
    }

    private int lookup(final byte[][] hashes)
    {
        final long id = engine.sendLookup(NAMESPACE, 0, hashes);
        fixture.doWork();
        return (int)engine.takeReply(id).value();
    }

    private static void write(final MemorySegment pool, final long offset, final long seed)
    {
        for (int i = 0; i < BLOCK_BYTES; i++)
        {
            pool.set(ValueLayout.JAVA_BYTE, offset + i, RingAgentFixture.pattern(seed, i));
        }
    }

    private static int expectedCrc(final long seed)
    {
        final byte[] bytes = new byte[BLOCK_BYTES];
        for (int i = 0; i < BLOCK_BYTES; i++)
        {
            bytes[i] = RingAgentFixture.pattern(seed, i);
        }
        final CRC32C crc = new CRC32C();
        crc.update(bytes);
        return (int)crc.getValue();
    }
}
