package io.orbitkv.manager.peer;

import java.io.File;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import io.aeron.ExclusivePublication;
import io.orbitkv.catalog.JournalRecord;
import io.orbitkv.catalog.ShardInventory;
import io.orbitkv.catalog.ShardReceiver;
import io.orbitkv.catalog.SnapshotCut;
import io.orbitkv.codecs.catalog.CatalogDeltaBatchEncoder;
import io.orbitkv.codecs.catalog.CatalogOp;
import io.orbitkv.codecs.catalog.CatalogStatus;
import io.orbitkv.codecs.catalog.ColdQueryEncoder;
import io.orbitkv.codecs.catalog.Coverage;
import io.orbitkv.codecs.catalog.MessageHeaderEncoder;
import io.orbitkv.codecs.catalog.PeerConnectEncoder;
import io.orbitkv.codecs.catalog.ResidenceTier;
import io.orbitkv.codecs.catalog.RouteEncoder;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersManager;
import org.agrona.nio.TransportPoller;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import io.orbitkv.manager.catalog.SnapshotSender;
import io.orbitkv.manager.catalog.CatalogProxy;

/**
 * Two peer transports in one JVM over loopback UDP, each driven by this thread's duty-cycle loop (the agents and
 * their embedded drivers run invoked). Every wait polls with a deadline; no sleeps.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class PeerTransportTest
{
    private static final long AWAIT_NS = TimeUnit.SECONDS.toNanos(10);
    private static final int SHARD = 3;
    private static final long HOST_MSB = 0x1111;
    private static final long HOST_LSB = 0x2222;
    private static final long OWNER_MSB = 0x3333;
    private static final long OWNER_LSB = 0x4444;

    @TempDir
    Path dir;

    private PeerNode host;
    private PeerNode owner;
    private Class<? extends Throwable> expectedErrors;

    private final UnsafeBuffer raw = new UnsafeBuffer(new byte[64 * 1024]);
    private final MessageHeaderEncoder headerEncoder = new MessageHeaderEncoder();

    @AfterEach
    void tearDown()
    {
        try
        {
            for (final PeerNode node : new PeerNode[]{ host, owner })
            {
                if (null != node)
                {
                    for (final Throwable error : node.errors)
                    {
                        if (null == expectedErrors || !expectedErrors.isInstance(error))
                        {
                            fail("unexpected error logged by node " + node.nodeIndex + ": " + error, error);
                        }
                    }
                }
            }
        }
        finally
        {
            if (null != owner)
            {
                owner.close();
            }
            if (null != host)
            {
                host.close();
            }
        }
    }

    @Test
    void shouldEndAnIdleWaitWhenADatagramReachesThePeerSocket() throws java.io.IOException
    {
        startPair();
        final PeerWakeup wakeup = host.transport.wakeup();
        // The host's endpoint is open (its port was resolved at launch); the first wait arms on its socket. Nothing
        // runs the owner's driver here, so once anything already pending is reported the socket stays quiet.
        while (wakeup.await(1_000_000L))
        {
            wakeup.takeDatagramSignal();
        }
        wakeup.takeDatagramSignal();
        assertTrue(wakeup.isArmed(), "the wait is on the peer socket");
        assertFalse(wakeup.await(1_000_000L), "a quiet socket: the wait ends at its timeout");
        assertFalse(wakeup.takeDatagramSignal());
        final long wakeupsBefore = host.counter(PeerCounter.IDLE_SOCKET_WAKEUPS);
        final long waitsBefore = host.counter(PeerCounter.IDLE_SOCKET_WAITS);

        try (java.nio.channels.DatagramChannel sender = java.nio.channels.DatagramChannel.open())
        {
            final String endpoint = host.transport.endpoint();
            final int colon = endpoint.lastIndexOf(':');
            sender.send(java.nio.ByteBuffer.wrap(new byte[]{1, 2, 3, 4}), new java.net.InetSocketAddress(
                endpoint.substring(0, colon), Integer.parseInt(endpoint.substring(colon + 1))));
        }
        assertTrue(wakeup.await(AWAIT_NS), "the datagram ended the wait");
        assertEquals(wakeupsBefore + 1, host.counter(PeerCounter.IDLE_SOCKET_WAKEUPS));
        assertEquals(waitsBefore + 1, host.counter(PeerCounter.IDLE_SOCKET_WAITS));
        assertTrue(wakeup.takeDatagramSignal(), "the next duty cycle runs the driver");
        assertFalse(wakeup.takeDatagramSignal(), "once");
    }

    @Test
    void shouldSendWhatWasOfferedOutsideFragmentHandlingInTheNextDutyCycle()
    {
        // The owner's clock stands still once the session is up: its driver is then never due by time, and after a
        // few empty cycles no longer hot, so only the rule under test can send the query.
        final org.agrona.concurrent.CachedNanoClock ownerClock = new org.agrona.concurrent.CachedNanoClock();
        host = new PeerNode(dir, 1, HOST_MSB, HOST_LSB);
        owner = new PeerNode(dir, 2, OWNER_MSB, OWNER_LSB, PeerNode.FINGERPRINT, PeerTransport.AUTO_MTU, false,
            ownerClock);
        final PeerClient client = owner.publisher().connect(
            host.transport.endpoint(), host.nodeIndex, host.incarnationMsb, host.incarnationLsb);
        await(() ->
        {
            ownerClock.advance(100_000L);
            return client.isActive();
        }, "session on the host");
        for (int i = 0; i < 4 * PeerAgent.DRIVER_HOT_EMPTY_LIMIT; i++)
        {
            host.transport.doWork();
            owner.transport.doWork();
        }
        for (int i = 0; i < 4 * PeerAgent.DRIVER_HOT_EMPTY_LIMIT; i++)
        {
            owner.transport.doWork();
        }
        final long queriesBefore = host.counter(PeerCounter.FRAMES_COLD_QUERY);

        final int key = PeerKeys.keysOfShard(SHARD, 1)[0];
        assertTrue(owner.catalogProxy().sendColdQuery(client, 77, SHARD, 1, new int[]{SHARD},
            new DirectBuffer[]{PeerKeys.NAMESPACE}, new int[]{PeerKeys.NAMESPACE_BYTES.length},
            new DirectBuffer[]{PeerKeys.hash(key)}, new int[]{PeerKeys.HASH_LENGTH}));
        owner.transport.doWork();

        // Only the host runs from here: the query left in that one duty cycle or never.
        final long deadlineNs = System.nanoTime() + AWAIT_NS;
        while (host.counter(PeerCounter.FRAMES_COLD_QUERY) == queriesBefore)
        {
            host.transport.doWork();
            assertTrue(System.nanoTime() - deadlineNs < 0, "the offered query never left the owner");
        }
    }

    @Test
    void shouldParkOnTheTimerUntilThereIsASocketToWaitOn()
    {
        try (PeerWakeup wakeup = new PeerWakeup(io.aeron.driver.Configuration.receiveChannelEndpointSupplier(),
            (ex) -> fail("no error expected: " + ex)))
        {
            final long start = System.nanoTime();
            assertFalse(wakeup.await(1_000_000L));
            assertTrue(System.nanoTime() - start >= 1_000_000L, "parked for the timeout");
            assertFalse(wakeup.isArmed());
            assertFalse(wakeup.takeDatagramSignal());
        }
    }

    @Test
    void shouldOpenSessionAndAnswerColdQueryWithRowsAlignedToRequest()
    {
        startPair();
        final int[] keys = PeerKeys.keysOfShard(SHARD, 3);
        host.admitOwner(7, 70, 71);
        final ShardReceiver receiver = host.directory.receiver(7, SHARD);
        assertEquals(ShardReceiver.APPLIED, receiver.onDelta(70, 71, PeerKeys.record(keys[0], 1)));
        assertEquals(ShardReceiver.APPLIED, receiver.onDelta(70, 71, PeerKeys.record(keys[2], 2)));

        final PeerClient client = connect(owner, host);
        assertEquals(1, host.agent().sessionCount());
        assertEquals(1, host.counter(PeerCounter.SESSIONS_OPENED));

        sendColdQuery(client, 42, keys[0], keys[1], keys[2]);
        await(() -> 1 == owner.coldResponses, "cold query response");

        assertEquals(3, owner.coldRows.size());
        final long[] row0 = owner.coldRows.get(0);
        final long[] row1 = owner.coldRows.get(1);
        final long[] row2 = owner.coldRows.get(2);
        assertEquals(0, row0[0]);
        assertEquals(1, row0[2]);
        assertEquals(PeerKeys.insertionSequence(keys[0]), row0[3]);
        assertEquals(1, row1[0]);
        assertEquals(0, row1[2], "a key nobody published has an empty row at its own index");
        assertEquals(2, row2[0]);
        assertEquals(1, row2[2]);
        assertEquals(PeerKeys.insertionSequence(keys[2]), row2[3]);
        for (final long[] row : owner.coldRows)
        {
            assertEquals(Coverage.COMPLETE.value(), row[1]);
        }
        assertEquals(1, host.counter(PeerCounter.FRAMES_COLD_QUERY));
        assertEquals(1, owner.counter(PeerCounter.FRAMES_COLD_QUERY_RESPONSE));
        assertTrue(host.counter(PeerCounter.RESPONSES_SENT) >= 2, "connect answer and query answer");
        assertTrue(host.counter(PeerCounter.METADATA_BYTES_RECEIVED) > 0);
        assertTrue(owner.counter(PeerCounter.METADATA_BYTES_SENT) > 0);
        assertTrue(host.counter(PeerCounter.IMAGES_AVAILABLE) >= 1, "image handled in doWork, not the callback");
    }

    @Test
    void shouldPollManySocketsThroughOneEpollWait()
    {
        startPair();
        // The driver's pollers read the threshold when their class loads, after the transport's class set it.
        assertEquals(PeerTransport.POLLER_ITERATION_THRESHOLD, TransportPoller.ITERATION_THRESHOLD);
    }

    @Test
    void shouldSizeDatagramsFromTheEndpointInterface() throws Exception
    {
        final int loopbackMtu = NetworkInterface.getByInetAddress(InetAddress.getLoopbackAddress()).getMTU();
        final int expected = Math.min(loopbackMtu - 28, PeerTransport.MAX_AUTO_MTU_LENGTH) & -32;
        assertEquals(expected, PeerTransport.autoMtuLength("127.0.0.1"));
        assertEquals(PeerTransport.FALLBACK_MTU_LENGTH, PeerTransport.autoMtuLength("192.0.2.1"), "not a local address");
        assertEquals(PeerTransport.FALLBACK_MTU_LENGTH, PeerTransport.autoMtuLength("no-such-host.invalid"));

        startPair();
        assertEquals(expected, host.transport.mtuLength());

        for (final int invalid : new int[]{ PeerTransport.MIN_MTU_LENGTH - 32, 1_000, PeerTransport.MAX_MTU_LENGTH + 32 })
        {
            final IllegalStateException ex = assertThrows(IllegalStateException.class,
                () -> validContext().mtuLength(invalid).conclude());
            assertTrue(ex.getMessage().contains("mtuLength"), ex.getMessage());
        }
        validContext().mtuLength(PeerTransport.MIN_MTU_LENGTH).conclude();
        validContext().mtuLength(PeerTransport.MAX_MTU_LENGTH).conclude();
    }

    @Test
    void shouldRefuseDeltasOfASessionWhosePublisherHasNoReceiverAsUnregistered()
    {
        startPair();
        final PeerClient client = connect(owner, host);
        final int[] keys = PeerKeys.keysOfShard(SHARD, 3);
        for (final int key : keys)
        {
            owner.journal.append(SHARD, PeerKeys.record(key, 0));
        }

        assertEquals(3, owner.catalogProxy().sendDeltaBatch(client, SHARD, owner.journal, 1, 3));
        await(() -> 1 == owner.responseCodes.size(), "refusal answered");
        assertEquals(CatalogStatus.UNREGISTERED_PUBLISHER, owner.responseCodes.get(0));
        assertEquals(1, host.counter(PeerCounter.REJECTED_UNREGISTERED_PUBLISHER));
        assertEquals(0, host.counter(PeerCounter.REJECTED_MALFORMED));
    }

    @Test
    void shouldCarryAFullDeltaBatchInTheSmallestDatagrams()
    {
        host = new PeerNode(dir, 1, HOST_MSB, HOST_LSB, PeerNode.FINGERPRINT, PeerTransport.MIN_MTU_LENGTH);
        owner = new PeerNode(dir, 2, OWNER_MSB, OWNER_LSB, PeerNode.FINGERPRINT, PeerTransport.MIN_MTU_LENGTH);
        host.admitOwner(owner.nodeIndex, OWNER_MSB, OWNER_LSB);
        final PeerClient client = connect(owner, host);
        final int count = CatalogProxy.MAX_DELTA_BATCH_RECORDS;
        for (final int key : PeerKeys.keysOfShard(SHARD, count))
        {
            owner.journal.append(SHARD, PeerKeys.record(key, 0));
        }
        final int slot = owner.receiverSlot(SHARD);

        assertEquals(count, owner.catalogProxy().sendDeltaBatch(client, SHARD, owner.journal, 1, count));
        await(() -> count == owner.journal.ackedSequence(SHARD, slot), "ack of one batch in ~40 datagrams");
        assertEquals(1, host.counter(PeerCounter.FRAMES_DELTA_BATCH));
        assertEquals(count, host.directory.receiver(owner.nodeIndex, SHARD).deltasApplied());
    }

    private PeerTransport.Context validContext()
    {
        return new PeerTransport.Context()
            .endpoint("127.0.0.1:0")
            .directory(dir)
            .countersManager(new CountersManager(new UnsafeBuffer(new byte[4096]), new UnsafeBuffer(new byte[1024])))
            .errorHandler(Throwable::printStackTrace);
    }

    @Test
    void shouldStreamDeltaBatchesAdvanceAcksAndRepairADroppedBatchFromTheJournal()
    {
        startPair();
        host.admitOwner(owner.nodeIndex, OWNER_MSB, OWNER_LSB);
        final PeerClient client = connect(owner, host);
        final int[] keys = PeerKeys.keysOfShard(SHARD, 6);
        for (final int key : keys)
        {
            owner.journal.append(SHARD, PeerKeys.record(key, 0));
        }
        final int slot = owner.receiverSlot(SHARD);

        assertEquals(2, owner.catalogProxy().sendDeltaBatch(client, SHARD, owner.journal, 1, 2));
        await(() -> 2 == owner.journal.ackedSequence(SHARD, slot), "ack of 1..2");

        // Sequences 3..4 are "lost": never offered. The next batch opens a gap the host asks to repair.
        assertEquals(2, owner.catalogProxy().sendDeltaBatch(client, SHARD, owner.journal, 5, 2));
        await(() -> 6 == owner.journal.ackedSequence(SHARD, slot), "repair and ack of 1..6");

        final ShardReceiver receiver = host.directory.receiver(owner.nodeIndex, SHARD);
        assertEquals(6, receiver.contiguousSequence());
        assertEquals(6, receiver.deltasApplied());
        assertEquals(1, receiver.gapsDetected());
        assertTrue(receiver.coverageComplete());
        assertEquals(1, owner.repairsServed);
        assertEquals(1, owner.counter(PeerCounter.FRAMES_GAP_REPAIR));
        assertEquals(3, host.counter(PeerCounter.FRAMES_DELTA_BATCH));
        assertTrue(owner.counter(PeerCounter.FRAMES_ACK) >= 3);

        sendColdQuery(client, 43, keys[3]);
        await(() -> 1 == owner.coldResponses, "query for a repaired key");
        assertEquals(1, owner.coldRows.get(0)[2], "the repaired record is discoverable");
    }

    @Test
    void shouldRebuildAHostShardFromASnapshotCutWithItsDeltaIntervalAndAckTheEndWatermark()
    {
        startPair();
        host.admitOwner(owner.nodeIndex, OWNER_MSB, OWNER_LSB);
        final PeerClient client = connect(owner, host);
        final ShardInventory inventory = new ShardInventory(owner.journal);
        final int[] keys = PeerKeys.keysOfShard(SHARD, 6);
        for (int i = 0; i < 5; i++)
        {
            addToInventory(inventory, keys[i]);
        }
        final ShardReceiver receiver = host.directory.receiver(owner.nodeIndex, SHARD);
        receiver.onResyncRequired();
        final int slot = owner.receiverSlot(SHARD);
        final SnapshotSender sender = owner.catalogProxy().snapshotSender(client, SHARD);
        final SnapshotCut cut = new SnapshotCut(SHARD, slot, inventory, sender);
        cut.start();
        assertEquals(1, cut.doWork(System.nanoTime()), "begin sent");
        addToInventory(inventory, keys[5]);
        await(() ->
        {
            cut.doWork(System.nanoTime());
            return SnapshotCut.COMPLETE == cut.state();
        }, "cut completes");
        await(() -> 1 == receiver.snapshotsInstalled(), "snapshot installed on the host");
        await(() -> 6 == owner.journal.ackedSequence(SHARD, slot), "end watermark acked");

        assertEquals(6, receiver.contiguousSequence());
        assertTrue(receiver.coverageComplete());
        assertEquals(0, sender.brokenSnapshots());
        assertTrue(host.counter(PeerCounter.FRAMES_SNAPSHOT) >= 3, "begin, at least one page, end");
        sendColdQuery(client, 70, keys[0], keys[5]);
        await(() -> 1 == owner.coldResponses, "query after rebuild");
        assertEquals(1, owner.coldRows.get(0)[2], "page record discoverable");
        assertEquals(1, owner.coldRows.get(1)[2], "interval record discoverable");
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS) // 4,000 round trips through two drivers: slow on a loaded machine
    void shouldStreamAndAckDeltasWithoutAllocatingOnTheAgentThreadOnceWarm()
    {
        // The embedded drivers get threads of their own here, so this thread runs only our agents and the Aeron
        // client: Aeron's driver pollers allocate an iterator per poll until C2 compiles them, which this short
        // warm-up does not always reach. SteadyStateAllocationTest measures a Manager's agent thread with its driver
        // invoked, after a longer warm-up.
        host = new PeerNode(dir, 1, HOST_MSB, HOST_LSB, PeerNode.FINGERPRINT, PeerTransport.AUTO_MTU, true);
        owner = new PeerNode(dir, 2, OWNER_MSB, OWNER_LSB, PeerNode.FINGERPRINT, PeerTransport.AUTO_MTU, true);
        host.admitOwner(owner.nodeIndex, OWNER_MSB, OWNER_LSB);
        final PeerClient client = connect(owner, host);
        final int[] keys = PeerKeys.keysOfShard(SHARD, 64);
        final JournalRecord[] records = new JournalRecord[keys.length];
        for (int i = 0; i < keys.length; i++)
        {
            records[i] = PeerKeys.record(keys[i], 0);
        }
        final int slot = owner.receiverSlot(SHARD);
        final com.sun.management.ThreadMXBean threads =
            (com.sun.management.ThreadMXBean)java.lang.management.ManagementFactory.getThreadMXBean();
        threads.setThreadAllocatedMemoryEnabled(true);
        final long threadId = Thread.currentThread().threadId();

        streamAndAck(records, slot, client, 2_000);
        final long before = threads.getThreadAllocatedBytes(threadId);
        streamAndAck(records, slot, client, 2_000);
        final long allocated = threads.getThreadAllocatedBytes(threadId) - before;

        assertEquals(4_000, host.directory.receiver(owner.nodeIndex, SHARD).contiguousSequence());
        // Below one minimal (16-byte) object per batch: runs have shown a few KB from something periodic on this
        // thread (not yet pinned down); any per-message allocation would exceed this bound.
        assertTrue(allocated < 16 * 2_000,
            "both agents and the handler allocated " + allocated + " bytes over 2,000 batches");
    }

    /**
     * Append, send and await the ack of one record at a time, without lambdas (the loop itself must not allocate).
     */
    private void streamAndAck(final JournalRecord[] records, final int slot, final PeerClient client, final int count)
    {
        for (int i = 0; i < count; i++)
        {
            final long deadlineNs = System.nanoTime() + AWAIT_NS;
            final long sequence = owner.journal.append(SHARD, records[i % records.length]);
            while (owner.catalogProxy().sendDeltaBatch(client, SHARD, owner.journal, sequence, 1) <= 0)
            {
                duty();
            }
            while (owner.journal.ackedSequence(SHARD, slot) < sequence)
            {
                duty();
                if (System.nanoTime() - deadlineNs > 0)
                {
                    fail("ack of " + sequence + " timed out");
                }
            }
        }
    }

    @Test
    void shouldRejectWrongFingerprintCrossShardKeyUnregisteredPublisherAndStaleIncarnationEachCounted()
    {
        startPair();
        host.admitOwner(owner.nodeIndex, OWNER_MSB, OWNER_LSB);
        final PeerClient client = connect(owner, host);
        final ShardReceiver receiver = host.directory.receiver(owner.nodeIndex, SHARD);
        final int key = PeerKeys.keysOfShard(SHARD, 1)[0];

        offerRaw(deltaBatch(client.sessionId(), SHARD, PeerNode.FINGERPRINT + 1, OWNER_MSB, OWNER_LSB, key));
        await(() -> 1 == owner.responseCodes.size(), "wrong fingerprint answered");
        assertEquals(CatalogStatus.WRONG_FINGERPRINT, owner.responseCodes.get(0));
        assertEquals(1, host.counter(PeerCounter.REJECTED_WRONG_FINGERPRINT));

        offerRaw(deltaBatch(client.sessionId(), SHARD, PeerNode.FINGERPRINT, OWNER_MSB, OWNER_LSB,
            PeerKeys.keyNotInShard(SHARD)));
        await(() -> 2 == owner.responseCodes.size(), "cross-shard key answered");
        assertEquals(CatalogStatus.CROSS_SHARD_KEY, owner.responseCodes.get(1));
        assertEquals(1, host.counter(PeerCounter.REJECTED_CROSS_SHARD_KEY));

        offerRaw(deltaBatch(client.sessionId(), SHARD, PeerNode.FINGERPRINT, OWNER_MSB + 1, OWNER_LSB, key));
        await(() -> 3 == owner.responseCodes.size(), "publisher other than the session's answered");
        assertEquals(CatalogStatus.UNREGISTERED_PUBLISHER, owner.responseCodes.get(2));
        assertEquals(1, host.counter(PeerCounter.REJECTED_UNREGISTERED_PUBLISHER));

        // The member view now shows a newer incarnation of the owner: this session's incarnation is retired.
        receiver.admitIncarnation(OWNER_MSB, OWNER_LSB + 1);
        owner.journal.append(SHARD, PeerKeys.record(key, 0));
        assertEquals(1, owner.catalogProxy().sendDeltaBatch(client, SHARD, owner.journal, 1, 1));
        await(() -> 4 == owner.responseCodes.size(), "stale incarnation answered");
        assertEquals(CatalogStatus.STALE_INCARNATION, owner.responseCodes.get(3));
        assertEquals(1, host.counter(PeerCounter.REJECTED_STALE_INCARNATION));

        assertEquals(0, receiver.deltasApplied(), "nothing rejected was applied");
        assertEquals(0, host.counter(PeerCounter.REJECTED_WRONG_DESTINATION));
        assertEquals(0, host.counter(PeerCounter.REJECTED_MALFORMED));
    }

    @Test
    void shouldAnswerAndCountColdQueriesTheHostRefusesByReason()
    {
        startPair();
        final PeerClient client = connect(owner, host);
        final int[] keys = PeerKeys.keysOfShard(SHARD, 129);
        sendColdQuery(client, 90, keys);
        await(() -> 1 == owner.responseCodes.size(), "oversized query answered");
        assertEquals(CatalogStatus.BATCH_TOO_LARGE, owner.responseCodes.get(0));
        assertEquals(1, host.counter(PeerCounter.REJECTED_BATCH_TOO_LARGE));

        final int length = coldQuery(client, 91, keys[0]);
        raw.putLong(MessageHeaderEncoder.ENCODED_LENGTH + RouteEncoder.destinationIncarnationEncodingOffset(), HOST_MSB + 1,
            java.nio.ByteOrder.LITTLE_ENDIAN);
        offerRaw(length);
        await(() -> 2 == owner.responseCodes.size(), "query to another incarnation answered");
        assertEquals(CatalogStatus.WRONG_DESTINATION, owner.responseCodes.get(1));
        assertEquals(1, host.counter(PeerCounter.REJECTED_WRONG_DESTINATION));
        assertEquals(0, owner.coldResponses);
    }

    @Test
    void shouldRefuseConnectWithWrongFingerprintAnswerTheRefusalAndCountIt()
    {
        host = new PeerNode(dir, 1, HOST_MSB, HOST_LSB);
        owner = new PeerNode(dir, 2, OWNER_MSB, OWNER_LSB, PeerNode.FINGERPRINT + 9);
        final PeerClient client = owner.publisher().connect(host.transport.endpoint(), host.nodeIndex, HOST_MSB, HOST_LSB);
        await(client::isFailed, "refusal answered on the requester's response channel");
        assertFalse(client.isActive());
        assertEquals(1, host.counter(PeerCounter.REJECTED_WRONG_FINGERPRINT));
        assertEquals(0, host.counter(PeerCounter.SESSIONS_OPENED));
        assertEquals(0, host.agent().sessionCount());
    }

    @Test
    void shouldReplaceTheSessionOfARequesterThatConnectsAgain()
    {
        startPair();
        final PeerClient first = connect(owner, host);
        final PeerClient second = connect(owner, host);
        assertEquals(1, host.agent().sessionCount());
        assertNull(host.agent().session(first.sessionId()));
        assertNotNull(host.agent().session(second.sessionId()));
        assertEquals(2, host.counter(PeerCounter.SESSIONS_OPENED));
    }

    @Test
    void shouldDropAConnectNamingAResponseChannelTheDriverRefusesAndKeepServing()
    {
        expectedErrors = io.aeron.exceptions.AeronException.class; // the client's refusal and the driver's own log entry
        startPair();
        final PeerClient client = connect(owner, host);
        final PeerConnectEncoder encoder = new PeerConnectEncoder().wrapAndApplyHeader(raw, 0, headerEncoder);
        encoder.route().shard((short)0).placementFingerprint(PeerNode.FINGERPRINT);
        encoder.route().destinationIncarnation().msb(HOST_MSB).lsb(HOST_LSB);
        encoder.route().senderIncarnation().msb(OWNER_MSB).lsb(OWNER_LSB + 5);
        encoder.correlationId(9).requesterNodeIndex(9).responseStreamId(PeerTransport.DEFAULT_STREAM_ID)
            .responseChannel("aeron:udp?endpoint=127.0.0.1:99999");
        offerRaw(MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength());
        await(() -> 1 == host.counter(PeerCounter.REJECTED_MALFORMED), "refused channel counted");
        assertEquals(1, host.agent().sessionCount());

        sendColdQuery(client, 80, PeerKeys.keysOfShard(SHARD, 1)[0]);
        await(() -> 1 == owner.coldResponses, "still serving");
    }

    @Test
    void shouldRejectFuzzedFramesWithoutCrashingAndKeepServingWellFormedQueries()
    {
        expectedErrors = PeerFrameException.class;
        startPair();
        host.admitOwner(7, 70, 71);
        final int key = PeerKeys.keysOfShard(SHARD, 1)[0];
        host.directory.receiver(7, SHARD).onDelta(70, 71, PeerKeys.record(key, 1));
        final PeerClient client = connect(owner, host);
        final Random random = new Random(0x5EED);

        for (int i = 0; i < 200; i++)
        {
            final int length = 1 + random.nextInt(600);
            final byte[] bytes = new byte[length];
            random.nextBytes(bytes);
            raw.putBytes(0, bytes);
            offerRaw(length);
        }

        final int queryLength = coldQuery(client, 50, key);
        for (int cut = 1; cut < queryLength; cut += 7)
        {
            coldQuery(client, 50, key);
            offerRaw(cut);
        }

        coldQuery(client, 51, key);
        raw.putShort(2, (short)99, java.nio.ByteOrder.LITTLE_ENDIAN);
        offerRaw(queryLength);

        coldQuery(client, 52, key);
        raw.putShort(4, (short)7, java.nio.ByteOrder.LITTLE_ENDIAN);
        offerRaw(queryLength);

        coldQuery(client, 55, key);
        raw.putShort(6, (short)0, java.nio.ByteOrder.LITTLE_ENDIAN);
        offerRaw(queryLength);

        final int headerAndBlock = MessageHeaderEncoder.ENCODED_LENGTH + ColdQueryEncoder.BLOCK_LENGTH;
        coldQuery(client, 53, key);
        raw.putShort(headerAndBlock + 2, (short)0xFFFF, java.nio.ByteOrder.LITTLE_ENDIAN);
        offerRaw(queryLength);

        coldQuery(client, 54, key);
        raw.putShort(headerAndBlock + 4, (short)0xFFFF, java.nio.ByteOrder.LITTLE_ENDIAN);
        offerRaw(queryLength);

        final int batchLength = deltaBatch(client.sessionId(), SHARD, PeerNode.FINGERPRINT, OWNER_MSB, OWNER_LSB, key);
        raw.putShort(MessageHeaderEncoder.ENCODED_LENGTH + CatalogDeltaBatchEncoder.BLOCK_LENGTH + 2, (short)0xFFFF,
            java.nio.ByteOrder.LITTLE_ENDIAN);
        offerRaw(batchLength);

        final long responsesBefore = owner.coldResponses;
        sendColdQuery(client, 60, key);
        await(() -> responsesBefore + 1 == owner.coldResponses, "well-formed query served after the fuzz");
        final long[] row = owner.coldRows.get(owner.coldRows.size() - 1);
        assertEquals(1, row[2]);
        assertEquals(PeerKeys.insertionSequence(key), row[3]);

        assertTrue(host.counter(PeerCounter.REJECTED_MALFORMED) > 0);
        assertTrue(host.counter(PeerCounter.REJECTED_UNKNOWN_TEMPLATE) >= 1);
        assertTrue(host.counter(PeerCounter.REJECTED_WRONG_SCHEMA) >= 2, "other schema id, and version 0");
        assertTrue(owner.responseCodes.contains(CatalogStatus.MALFORMED), "identifiable senders are answered");
        assertFalse(host.errors.isEmpty(), "rejections leave an error log entry");
        assertEquals(1, host.agent().sessionCount());
    }

    @Test
    void shouldEvictTheLeastRecentlyUsedPublicationBeyond64AndCountIt()
    {
        host = new PeerNode(dir, 1, HOST_MSB, HOST_LSB);
        final PeerPublisher agent = host.publisher();
        final int basePort = 41_000 + new Random().nextInt(10_000);
        final ExclusivePublication[] publications = new ExclusivePublication[PublicationLru.MAX_CLIENTS + 2];
        for (int i = 0; i < PublicationLru.MAX_CLIENTS; i++)
        {
            publications[i] = agent.publicationTo("127.0.0.1:" + (basePort + i));
        }
        assertEquals(PublicationLru.MAX_CLIENTS, agent.publicationCount());
        assertEquals(0, host.counter(PeerCounter.PUBLICATIONS_EVICTED));

        publications[PublicationLru.MAX_CLIENTS] = agent.publicationTo("127.0.0.1:" + (basePort + 64));
        assertEquals(PublicationLru.MAX_CLIENTS, agent.publicationCount());
        assertEquals(1, host.counter(PeerCounter.PUBLICATIONS_EVICTED));
        assertTrue(publications[0].isClosed(), "the least recently used is closed");

        assertTrue(publications[1] == agent.publicationTo("127.0.0.1:" + (basePort + 1)), "a hit reuses");
        publications[PublicationLru.MAX_CLIENTS + 1] = agent.publicationTo("127.0.0.1:" + (basePort + 65));
        assertEquals(2, host.counter(PeerCounter.PUBLICATIONS_EVICTED));
        assertFalse(publications[1].isClosed(), "a recent use protects from eviction");
        assertTrue(publications[2].isClosed());
    }

    @Test
    void shouldRemoveItsAeronDirectoryOnClose()
    {
        host = new PeerNode(dir, 1, HOST_MSB, HOST_LSB);
        final File aeronDir = new File(host.transport.aeronDirectoryName());
        assertTrue(aeronDir.exists());
        host.close();
        host = null;
        assertFalse(aeronDir.exists());
    }

    private static void addToInventory(final ShardInventory inventory, final int key)
    {
        assertTrue(inventory.add(JournalRecord.TIER_DRAM, PeerKeys.NAMESPACE, 0, PeerKeys.NAMESPACE_BYTES.length,
            PeerKeys.hash(key), 0, PeerKeys.HASH_LENGTH, PeerKeys.insertionSequence(key), 4096) > 0);
    }

    private void startPair()
    {
        host = new PeerNode(dir, 1, HOST_MSB, HOST_LSB);
        owner = new PeerNode(dir, 2, OWNER_MSB, OWNER_LSB);
    }

    private PeerClient connect(final PeerNode from, final PeerNode to)
    {
        final PeerClient client =
            from.publisher().connect(to.transport.endpoint(), to.nodeIndex, to.incarnationMsb, to.incarnationLsb);
        await(client::isActive, "session on " + to.transport.endpoint());
        assertNotNull(to.agent().session(client.sessionId()));
        return client;
    }

    private void sendColdQuery(final PeerClient client, final long correlationId, final int... keys)
    {
        final int length = coldQuery(client, correlationId, keys);
        offerRaw(length);
    }

    private int coldQuery(final PeerClient client, final long correlationId, final int... keys)
    {
        final ColdQueryEncoder encoder = new ColdQueryEncoder().wrapAndApplyHeader(raw, 0, headerEncoder);
        encoder.route().shard((short)SHARD).placementFingerprint(PeerNode.FINGERPRINT);
        encoder.route().destinationIncarnation().msb(HOST_MSB).lsb(HOST_LSB);
        encoder.route().senderIncarnation().msb(OWNER_MSB).lsb(OWNER_LSB);
        encoder.sessionId(client.sessionId()).correlationId(correlationId);
        final ColdQueryEncoder.KeysEncoder group = encoder.keysCount(keys.length);
        for (final int key : keys)
        {
            group.next()
                .putKeyNamespace(PeerKeys.NAMESPACE, 0, PeerKeys.NAMESPACE_BYTES.length)
                .putKeyHash(PeerKeys.hash(key), 0, PeerKeys.HASH_LENGTH);
        }
        return MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength();
    }

    private int deltaBatch(
        final long sessionId, final int shard, final long fingerprint, final long senderMsb, final long senderLsb,
        final int key)
    {
        final CatalogDeltaBatchEncoder encoder = new CatalogDeltaBatchEncoder().wrapAndApplyHeader(raw, 0, headerEncoder);
        encoder.route().shard((short)shard).placementFingerprint(fingerprint);
        encoder.route().destinationIncarnation().msb(HOST_MSB).lsb(HOST_LSB);
        encoder.route().senderIncarnation().msb(senderMsb).lsb(senderLsb);
        encoder.sessionId(sessionId).firstSequence(1);
        encoder.recordsCount(1).next()
            .tier(ResidenceTier.DRAM)
            .op(CatalogOp.ADD)
            .generation(1)
            .insertionSequence(PeerKeys.insertionSequence(key))
            .byteSize(4096)
            .putKeyNamespace(PeerKeys.NAMESPACE, 0, PeerKeys.NAMESPACE_BYTES.length)
            .putKeyHash(PeerKeys.hash(key), 0, PeerKeys.HASH_LENGTH);
        return MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength();
    }

    /**
     * Offer raw bytes from the owner to the host's endpoint on the owner's (shared, LRU-cached) publication, keeping
     * both agents working while back-pressured.
     */
    private void offerRaw(final int length)
    {
        final ExclusivePublication publication = owner.publisher().publicationTo(host.transport.endpoint());
        offer(publication, raw, length);
    }

    private void offer(final ExclusivePublication publication, final DirectBuffer buffer, final int length)
    {
        final long deadlineNs = System.nanoTime() + AWAIT_NS;
        while (publication.offer(buffer, 0, length) < 0)
        {
            duty();
            if (System.nanoTime() - deadlineNs > 0)
            {
                fail("offer timed out on " + publication.channel());
            }
        }
    }

    private void await(final BooleanSupplier condition, final String what)
    {
        final long deadlineNs = System.nanoTime() + AWAIT_NS;
        while (!condition.getAsBoolean())
        {
            duty();
            if (System.nanoTime() - deadlineNs > 0)
            {
                fail("timed out awaiting " + what);
            }
        }
    }

    private void duty()
    {
        int work = 0;
        if (null != host)
        {
            work += host.transport.doWork();
        }
        if (null != owner)
        {
            work += owner.transport.doWork();
        }
        if (0 == work)
        {
            Thread.yield();
        }
    }
}
