package io.orbitkv.manager.ring;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.orbitkv.codecs.RequestFlags;
import io.orbitkv.codecs.cnc.CncFileDescriptor;
import io.orbitkv.codecs.engine.KeyStatus;
import io.orbitkv.codecs.engine.LookupRequestDecoder;
import io.orbitkv.codecs.engine.PublishRequestDecoder;
import io.orbitkv.codecs.engine.ReadRequestDecoder;
import io.orbitkv.codecs.engine.ReleaseRequestDecoder;
import io.orbitkv.codecs.engine.StatusCode;
import io.orbitkv.manager.store.StoreCounter;
import java.io.File;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The ring agent driven one duty cycle at a time on the test thread, with cached clocks the test advances: no
 * agent thread, no sleeps. Frames are written into the request ring and responses read from the slot's response
 * ring exactly as an engine in another process would.
 */
class EngineRingAgentTest
{
    private static final String NAMESPACE = "model=test;block=16";
    private static final int BLOCK_BYTES = 4096;
    private static final long TIMEOUT_NS = TimeUnit.MILLISECONDS.toNanos(100);

    @TempDir
    Path tempDir;

    private RingAgentFixture fixture;
    private RingAgentFixture.Engine engine;

    @BeforeEach
    void setUp()
    {
        fixture = new RingAgentFixture(tempDir.toFile(), TIMEOUT_NS);
        engine = fixture.engine(4242L);
    }

    @AfterEach
    void tearDown()
    {
        engine.close();
        fixture.close();
    }

    @Test
    void shouldAttachThroughAClaimedSlotAndMarkTheSlotAttached()
    {
        final int slot = engine.claimSlot();
        final long correlationId = engine.sendAttach("engine-a", 1 << 20);
        assertEquals(1, fixture.doWork());

        final RingAgentFixture.Reply reply = engine.takeReply(correlationId);
        assertEquals(StatusCode.OK, reply.code());
        assertEquals(slot, (int)reply.value(), "the client id's low word is the slot");
        assertTrue(new File(reply.message()).isFile(), "the data region file exists: " + reply.message());
        final int slotOffset = CncFileDescriptor.Sections.slotOffset(slot);
        assertEquals(CncFileDescriptor.SLOT_ATTACHED,
            fixture.sections().slotTable().getIntVolatile(slotOffset + CncFileDescriptor.SLOT_STATE_OFFSET));
        assertEquals(reply.value(),
            fixture.sections().slotTable().getLongVolatile(slotOffset + CncFileDescriptor.SLOT_CLIENT_ID_OFFSET));
        assertEquals(1, fixture.counter(RingCounter.CLIENTS_ATTACHED));
        assertEquals(1, fixture.agent().attachedClients());
    }

    @Test
    void shouldRejectAttachThroughASlotClaimedByAnotherPid()
    {
        engine.claimSlot();
        final RingAgentFixture.Engine impostor = fixture.engine(7777L);
        impostor.useSlot(engine.slotIndex());
        impostor.sendAttach("impostor", 1 << 20);
        fixture.doWork();

        assertEquals(1, fixture.counter(RingCounter.rejection(Rejection.SLOT_NOT_CLAIMED.code())));
        assertEquals(0, fixture.agent().attachedClients());
        assertTrue(engine.drainReplies().isEmpty(), "nothing is written into a ring whose slot is not the sender's");
    }

    @Test
    void shouldPublishThenLookupThenReadTheSameBytes()
    {
        engine.attachOrFail("engine-a", 1 << 20);
        final byte[][] hashes = {RingAgentFixture.hash(1), RingAgentFixture.hash(2)};
        engine.fill(0, BLOCK_BYTES, 11);
        engine.fill(BLOCK_BYTES, BLOCK_BYTES, 12);

        final long publishId = engine.sendPublish(
            NAMESPACE, new long[]{0, BLOCK_BYTES}, new int[]{BLOCK_BYTES, BLOCK_BYTES}, hashes);
        fixture.doWork();
        final RingAgentFixture.Reply published = engine.takeReply(publishId);
        assertEquals(PublishRequestDecoder.TEMPLATE_ID, published.requestTemplateId());
        assertEquals(2, published.value(), "both blocks stored");
        assertArrayEquals(new KeyStatus[]{KeyStatus.STORED, KeyStatus.STORED}, published.statuses());
        assertEquals(2, fixture.counter(RingCounter.BLOCKS_PUBLISHED));

        final byte[][] lookupHashes = {hashes[0], hashes[1], RingAgentFixture.hash(3), hashes[0]};
        final long lookupId = engine.sendLookup(NAMESPACE, 0, lookupHashes);
        fixture.doWork();
        final RingAgentFixture.Reply looked = engine.takeReply(lookupId);
        assertEquals(LookupRequestDecoder.TEMPLATE_ID, looked.requestTemplateId());
        assertEquals(2, looked.value(), "the prefix ends at the first miss");
        assertArrayEquals(
            new KeyStatus[]{KeyStatus.DRAM, KeyStatus.DRAM, KeyStatus.MISS, KeyStatus.NOT_ATTEMPTED}, looked.statuses());
        assertEquals(BLOCK_BYTES, looked.lengths()[1]);
        assertEquals(0L, looked.leaseId(), "no pin asked, no lease");

        final long readId = engine.sendRead(
            NAMESPACE, 0L, new long[]{4 * BLOCK_BYTES, 6 * BLOCK_BYTES}, new int[]{2 * BLOCK_BYTES, BLOCK_BYTES}, hashes);
        fixture.doWork();
        final RingAgentFixture.Reply read = engine.takeReply(readId);
        assertEquals(ReadRequestDecoder.TEMPLATE_ID, read.requestTemplateId());
        assertEquals(2, read.value());
        assertArrayEquals(new KeyStatus[]{KeyStatus.DRAM, KeyStatus.DRAM}, read.statuses());
        assertTrue(engine.matches(4 * BLOCK_BYTES, BLOCK_BYTES, 11));
        assertTrue(engine.matches(6 * BLOCK_BYTES, BLOCK_BYTES, 12));
        fixture.housekeeping();
        assertEquals(0, fixture.counter(StoreCounter.PINS_ACTIVE), "a finished read holds no pin");
    }

    @Test
    void shouldRefuseUnknownReadFlagsAndServeThePeersFlagLocallyWithoutACluster()
    {
        engine.attachOrFail("engine-a", 1 << 20);
        final byte[][] hashes = {RingAgentFixture.hash(1), RingAgentFixture.hash(2)};
        final long[] offsets = {0, BLOCK_BYTES};
        final int[] capacities = {BLOCK_BYTES, BLOCK_BYTES};

        final long refusedId = engine.sendRead(NAMESPACE, 0L, 0x80 | RequestFlags.READ_PEERS, offsets,
            capacities, hashes);
        fixture.doWork();
        final RingAgentFixture.Reply refused = engine.takeReply(refusedId);
        assertEquals(StatusCode.BAD_FLAGS, refused.code());
        assertEquals(1, fixture.counter(RingCounter.rejection(Rejection.UNKNOWN_FLAGS.code())));

        // A standalone Manager has no peers to fetch from: the flag is accepted and the read stays local.
        final long localId = engine.sendRead(NAMESPACE, 0L, RequestFlags.READ_PEERS, offsets, capacities, hashes);
        fixture.doWork();
        final RingAgentFixture.Reply local = engine.takeReply(localId);
        assertEquals(StatusCode.OK, local.code());
        assertEquals(0, local.value());
        assertArrayEquals(new KeyStatus[]{KeyStatus.MISS, KeyStatus.NOT_ATTEMPTED}, local.statuses());
    }

    @Test
    void shouldCopyALargePublishAcrossDutyCyclesInChunks()
    {
        engine.attachOrFail("engine-a", 1 << 20);
        final int length = 4 * RingAgentFixture.COPY_CHUNK_BYTES;
        engine.fill(0, length, 5);
        final long publishId = engine.sendPublish(
            NAMESPACE, new long[]{0}, new int[]{length}, new byte[][]{RingAgentFixture.hash(9)});

        fixture.doWork();
        assertTrue(engine.drainReplies().isEmpty(), "one chunk per duty cycle: not done after the first");
        for (int i = 0; i < 3; i++)
        {
            fixture.doWork();
        }
        assertEquals(1, engine.takeReply(publishId).value());
    }

    @Test
    void shouldReleaseADeadClientsPinsWhenItsHeartbeatsStop()
    {
        final long clientId = engine.attachOrFail("engine-a", 1 << 20);
        final byte[][] hashes = {RingAgentFixture.hash(1), RingAgentFixture.hash(2), RingAgentFixture.hash(3)};
        engine.fill(0, 3 * BLOCK_BYTES, 3);
        engine.awaitReply(engine.sendPublish(
            NAMESPACE, new long[]{0, BLOCK_BYTES, 2 * BLOCK_BYTES}, new int[]{BLOCK_BYTES, BLOCK_BYTES, BLOCK_BYTES},
            hashes));

        final long lookupId = engine.sendLookup(NAMESPACE, 1, hashes);
        fixture.doWork();
        final RingAgentFixture.Reply leased = engine.takeReply(lookupId);
        assertNotEquals(0L, leased.leaseId());
        fixture.housekeeping();
        assertEquals(3, fixture.counter(StoreCounter.PINS_ACTIVE));
        assertEquals(1, fixture.counter(RingCounter.LEASES_ACTIVE));

        // Heartbeats inside the timeout keep the client, and its pins, alive.
        fixture.advanceNs(TIMEOUT_NS / 2 + 1);
        engine.sendHeartbeat();
        fixture.doWork();
        fixture.advanceNs(TIMEOUT_NS / 2 + 1);
        fixture.doWork();
        assertEquals(1, fixture.agent().attachedClients());
        assertEquals(3, fixture.counter(StoreCounter.PINS_ACTIVE));
        assertEquals(1, fixture.counter(RingCounter.REQUESTS_HEARTBEAT));

        // Silence past the timeout: the session goes and everything it held with it.
        fixture.advanceNs(TIMEOUT_NS + 1);
        fixture.doWork();
        assertEquals(1, fixture.counter(RingCounter.CLIENT_TIMEOUTS));
        assertEquals(0, fixture.agent().attachedClients());
        assertEquals(0, fixture.counter(StoreCounter.PINS_ACTIVE));
        assertEquals(0, fixture.counter(RingCounter.LEASES_ACTIVE));
        assertEquals(0L, engine.claimPid(), "the slot is free for the next engine");

        // A late request from the dead client is refused as stale, never answered into a reset ring.
        engine.sendHeartbeat();
        fixture.doWork();
        assertEquals(1, fixture.counter(RingCounter.rejection(Rejection.STALE_CLIENT.code())));
        assertNotEquals(0L, clientId);
    }

    @Test
    void shouldReleaseALeaseOnRequestAndRefuseItTwice()
    {
        engine.attachOrFail("engine-a", 1 << 20);
        final byte[][] hashes = {RingAgentFixture.hash(1)};
        engine.fill(0, BLOCK_BYTES, 1);
        engine.awaitReply(engine.sendPublish(NAMESPACE, new long[]{0}, new int[]{BLOCK_BYTES}, hashes));
        final long lookupId = engine.sendLookup(NAMESPACE, 1, hashes);
        fixture.doWork();
        final long leaseId = engine.takeReply(lookupId).leaseId();
        fixture.housekeeping();
        assertEquals(1, fixture.counter(StoreCounter.PINS_ACTIVE));

        final long releaseId = engine.sendRelease(leaseId);
        fixture.doWork();
        final RingAgentFixture.Reply released = engine.takeReply(releaseId);
        assertEquals(ReleaseRequestDecoder.TEMPLATE_ID, released.requestTemplateId());
        assertEquals(StatusCode.OK, released.code());
        assertEquals(1, released.value(), "one block unpinned");
        fixture.housekeeping();
        assertEquals(0, fixture.counter(StoreCounter.PINS_ACTIVE));

        final long againId = engine.sendRelease(leaseId);
        fixture.doWork();
        assertEquals(Rejection.UNKNOWN_LEASE.code(), engine.takeReply(againId).code());
    }

    @Test
    void shouldLetAnotherClientReadALeaseHandedToItAndReleaseItThere()
    {
        engine.attachOrFail("scheduler", 1 << 20);
        final RingAgentFixture.Engine worker = fixture.engine(5151L);
        worker.attachOrFail("worker", 1 << 20);
        final byte[][] hashes = {RingAgentFixture.hash(1), RingAgentFixture.hash(2)};
        engine.fill(0, BLOCK_BYTES, 21);
        engine.fill(BLOCK_BYTES, BLOCK_BYTES, 22);
        engine.awaitReply(engine.sendPublish(
            NAMESPACE, new long[]{0, BLOCK_BYTES}, new int[]{BLOCK_BYTES, BLOCK_BYTES}, hashes));
        final long lookupId = engine.sendLookup(NAMESPACE, 1, hashes);
        fixture.doWork();
        final long leaseId = engine.takeReply(lookupId).leaseId();
        final long[] offsets = {2 * BLOCK_BYTES, 3 * BLOCK_BYTES};
        final int[] capacities = {BLOCK_BYTES, BLOCK_BYTES};

        // Refused before it is taken over: the lease stays with its holder.
        final long outside = worker.sendRead(NAMESPACE, leaseId, new long[]{1 << 20, 0}, capacities, hashes);
        fixture.doWork();
        assertEquals(Rejection.RANGE_OUTSIDE_REGION.code(), worker.takeReply(outside).code());
        fixture.housekeeping();
        assertEquals(2, fixture.counter(StoreCounter.PINS_ACTIVE));

        final long readId = worker.sendRead(NAMESPACE, leaseId, offsets, capacities, hashes);
        final RingAgentFixture.Reply read = worker.awaitReply(readId);
        assertEquals(StatusCode.OK, read.code());
        assertEquals(2, read.value());
        assertTrue(worker.matches(offsets[0], BLOCK_BYTES, 21) && worker.matches(offsets[1], BLOCK_BYTES, 22));
        fixture.housekeeping();
        assertEquals(0, fixture.counter(StoreCounter.PINS_ACTIVE), "the read released the handed lease");
        assertEquals(0, fixture.counter(RingCounter.LEASES_ACTIVE));

        final long releaseId = engine.sendRelease(leaseId);
        fixture.doWork();
        assertEquals(Rejection.UNKNOWN_LEASE.code(), engine.takeReply(releaseId).code(), "the holder gave it away");
        final long againId = worker.sendRead(NAMESPACE, leaseId, offsets, capacities, hashes);
        fixture.doWork();
        assertEquals(Rejection.UNKNOWN_LEASE.code(), worker.takeReply(againId).code(), "a lease is read once");
        final long forgedId = worker.sendRead(NAMESPACE, leaseId + 1, offsets, capacities, hashes);
        fixture.doWork();
        assertEquals(Rejection.UNKNOWN_LEASE.code(), worker.takeReply(forgedId).code());
        worker.close();
    }

    @Test
    void shouldDetachReleasingPinsAndFreeTheSlotOnlyOnceTheResponseIsRead()
    {
        engine.attachOrFail("engine-a", 1 << 20);
        final byte[][] hashes = {RingAgentFixture.hash(1)};
        engine.fill(0, BLOCK_BYTES, 1);
        engine.awaitReply(engine.sendPublish(NAMESPACE, new long[]{0}, new int[]{BLOCK_BYTES}, hashes));
        engine.awaitReply(engine.sendLookup(NAMESPACE, 1, hashes));

        final long detachId = engine.sendDetach();
        fixture.housekeeping();
        assertEquals(0, fixture.agent().attachedClients());
        assertEquals(0, fixture.counter(RingCounter.CLIENTS_ATTACHED));
        assertEquals(0, fixture.counter(StoreCounter.PINS_ACTIVE));
        assertEquals(4242L, engine.claimPid(), "the slot stays draining until the engine read the response");

        assertEquals(StatusCode.OK, engine.takeReply(detachId).code());
        fixture.housekeeping();
        assertEquals(0L, engine.claimPid());
        assertEquals(1, fixture.counter(RingCounter.REQUESTS_DETACH));
    }

    @Test
    void shouldReclaimASlotClaimedByAnEngineThatNeverAttached()
    {
        engine.claimSlot();
        fixture.advanceNs(TimeUnit.MILLISECONDS.toNanos(1));
        fixture.doWork();
        fixture.advanceNs(TIMEOUT_NS);
        fixture.doWork();
        assertEquals(0, fixture.counter(RingCounter.CLAIMED_SLOTS_RECLAIMED), "not past the timeout yet");
        assertEquals(4242L, engine.claimPid());

        fixture.advanceNs(TimeUnit.MILLISECONDS.toNanos(2));
        fixture.doWork();
        assertEquals(1, fixture.counter(RingCounter.CLAIMED_SLOTS_RECLAIMED));
        assertEquals(0L, engine.claimPid());
    }
}
