package io.orbitkv.manager.e2e;

import io.orbitkv.manager.catalog.CatalogCounter;
import io.orbitkv.manager.membership.MembershipCounter;
import io.orbitkv.manager.status.CounterDescriptor;
import io.orbitkv.manager.status.SystemCounterDescriptor;
import java.io.File;
import java.io.IOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.DatagramChannel;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import io.aeron.Aeron;
import io.aeron.ExclusivePublication;
import io.aeron.driver.MediaDriver;
import io.aeron.driver.ThreadingMode;
import io.aeron.protocol.DataHeaderFlyweight;
import io.aeron.protocol.HeaderFlyweight;
import io.aeron.protocol.SetupFlyweight;
import io.orbitkv.client.EngineClient;
import io.orbitkv.client.KeyBatch;
import io.orbitkv.client.OperationResult;
import io.orbitkv.codecs.ShardPlacement;
import io.orbitkv.catalog.JournalRecord;
import io.orbitkv.catalog.OwnerJournal;
import io.orbitkv.codecs.StateKeyShard;
import io.orbitkv.manager.CatalogTestKeys;
import io.orbitkv.manager.peer.PeerClient;
import io.orbitkv.codecs.catalog.ColdQueryEncoder;
import io.orbitkv.codecs.catalog.MessageHeaderEncoder;
import io.orbitkv.codecs.engine.KeyStatus;
import io.orbitkv.manager.membership.EtcdCluster;
import io.orbitkv.manager.peer.PeerCounter;
import io.orbitkv.manager.peer.PeerGuardCounter;
import io.orbitkv.manager.peer.PeerTransport;
import org.agrona.CloseHelper;
import org.agrona.IoUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Three Manager processes (a, b, c) with a real etcd and engines in this JVM: discovery across processes, warm hits
 * without RPC or etcd calls, a catalog host stopped long enough for its owner's journal to overflow and rebuilt by
 * snapshot afterwards, evictions forgotten, and fuzzed frames at a Manager's peer endpoint rejected and counted
 * without a crash.
 */
class CatalogEndToEndTest
{
    private static final String NS = "model=e2e-catalog;dtype=bf16";
    private static final int BLOCK = 4096;
    private static final long DEADLINE_NS = TimeUnit.SECONDS.toNanos(40);
    private static final String[] NODES = {"a", "b", "c"};

    private EtcdCluster etcd;
    private final List<OrbitKvProcesses> managers = new ArrayList<>();
    private final List<EngineClient> clients = new ArrayList<>();
    private final int[] peerPorts = new int[NODES.length];
    private String cluster;

    @AfterEach
    void tearDown()
    {
        CloseHelper.quietCloseAll(clients);
        CloseHelper.quietCloseAll(managers);
        CloseHelper.quietClose(etcd);
    }

    private void startCluster() throws IOException
    {
        etcd = EtcdCluster.start(1);
        cluster = "e2e-" + UUID.randomUUID().toString().substring(0, 8);
        for (int i = 0; i < NODES.length; i++)
        {
            managers.add(startManager(i));
        }
        for (final OrbitKvProcesses m : managers)
        {
            awaitCounter(m, CatalogCounter.INCOMPLETE_SHARDS, 0);
        }
    }

    private OrbitKvProcesses startManager(final int node) throws IOException
    {
        peerPorts[node] = freeUdpPort();
        final OrbitKvProcesses processes = new OrbitKvProcesses();
        processes.startManager(
            "--pool-bytes", "16m",
            "--max-block-bytes", "64k",
            "--etcd-endpoints", etcd.endpoints(),
            "--cluster-name", cluster,
            "--node-id", NODES[node],
            "--catalog-nodes", "a,b,c",
            // One copy per shard: the scenarios follow a shard's single host (copies: CatalogReplicaEndToEndTest).
            "--catalog-replicas", "1",
            "--membership-ttl-secs", "30",
            "--peer-endpoint", "127.0.0.1:" + peerPorts[node],
            "--catalog-journal-bytes", "1m");
        return processes;
    }

    private EngineClient engine(final int node)
    {
        final EngineClient client = EngineClient.connect(new EngineClient.Context()
            .dir(managers.get(node).dir.toString())
            .clientName("engine-" + clients.size())
            .dataRegionBytes(4L << 20));
        clients.add(client);
        return client;
    }

    private static KeyBatch batch(final int first, final int count)
    {
        return CatalogTestKeys.batch(NS, first, count, BLOCK, 512);
    }

    private static String hostOf(final int key)
    {
        return CatalogTestKeys.hostOf(NS, key, ShardPlacement.parse("a,b,c"));
    }

    static long value(final OrbitKvProcesses m, final CounterDescriptor d)
    {
        return m.counter(d.label());
    }

    static void awaitCounter(final OrbitKvProcesses m, final CounterDescriptor d, final long expected)
    {
        final long seen = m.awaitCounter(d.label(), expected, DEADLINE_NS);
        assertEquals(expected, seen, () -> d.label() + "\n" + m.dump());
    }

    private static void awaitAbove(final OrbitKvProcesses m, final String label, final long floor)
    {
        awaitAbove(m, label, floor, DEADLINE_NS);
    }

    private static void awaitAbove(final OrbitKvProcesses m, final String label, final long floor, final long timeoutNs)
    {
        final long deadline = System.nanoTime() + timeoutNs;
        while (m.counter(label) <= floor)
        {
            assertTrue(System.nanoTime() - deadline < 0,
                () -> label + " stayed at " + floor + "\n" + m.counters("Catalog") + m.counters("peer") + m.dump());
            Thread.onSpinWait();
        }
    }

    private static OperationResult awaitPeerKeys(
        final EngineClient client, final KeyBatch batch, final int expected, final OperationResult result)
    {
        return CatalogTestKeys.awaitPeerKeys(client, batch, expected, result, DEADLINE_NS);
    }

    @Test
    @Timeout(240)
    void shouldDiscoverAcrossProcessesSurviveJournalOverflowAndRejectFuzzedFrames() throws Exception
    {
        startCluster();
        final OrbitKvProcesses a = managers.get(0);
        final OrbitKvProcesses b = managers.get(1);
        final EngineClient engineA = engine(0);
        final EngineClient engineB = engine(1);
        final OperationResult result = new OperationResult(512);

        // 1. Publish on A, discover on B (no etcd call on the request path).
        final KeyBatch prefix = batch(0, 64);
        engineA.publish(prefix, result);
        assertEquals(64, result.value());
        final long etcdBefore = etcdCalls(b);
        awaitPeerKeys(engineB, prefix, 64, result);
        assertEquals("a", result.ownerNodeId(0));
        assertEquals(KeyStatus.DRAM, result.candidateTier(0));
        assertEquals(BLOCK, result.candidateLength(0));

        // 2. Warm: no catalog RPC, no etcd call.
        final long cold = value(b, CatalogCounter.COLD_QUERIES);
        engineB.lookup(prefix, false, true, result);
        assertEquals(64, result.count(KeyStatus.PEER));
        assertEquals(cold, value(b, CatalogCounter.COLD_QUERIES), "warm hit sent a catalog RPC");
        assertEquals(etcdBefore, etcdCalls(b), "discovery called etcd");

        // 3. Stop the host of a key's shard (not A) long enough for A's 1 MiB journal to overflow, well inside the
        // lease TTL so the host stays a member; after SIGCONT the owner must rebuild it by snapshot, not lose data.
        int key = 100_000;
        while ("a".equals(hostOf(key)))
        {
            key++;
        }
        final int hostIndex = hostOf(key).charAt(0) - 'a';
        final OrbitKvProcesses host = managers.get(hostIndex);
        final long snapshotsBefore = value(a, CatalogCounter.SNAPSHOTS_COMPLETED);
        final int[] rounds = {0};
        signal(host, "STOP");
        try
        {
            // 512 4 KiB blocks per round through a 16 MiB pool: about 1,000 inventory transitions (additions and
            // evictions) per round, a third for the stopped host's shards, until A's 1 MiB journal overflows. The
            // stop must end well inside half the 30 s lease (a stopped Manager is fenced after that).
            final long stopDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (0 == value(a, CatalogCounter.JOURNAL_OVERFLOWS))
            {
                assertTrue(System.nanoTime() - stopDeadline < 0, () -> "no journal overflow after " + rounds[0] +
                    " rounds\n" + a.counters("Catalog"));
                engineA.publish(batch(1_000_000 + rounds[0] * 512, 512), result);
                assertEquals(512, result.value(), () -> "stored of 512 in round " + rounds[0] + "\n" + a.counters(""));
                rounds[0]++;
            }
        }
        finally
        {
            signal(host, "CONT");
        }
        awaitAbove(a, CatalogCounter.SNAPSHOTS_COMPLETED.label(), snapshotsBefore);
        final KeyBatch afterOverflow = batch(key, 1);
        engineA.publish(afterOverflow, result);
        final int requester = 1 == hostIndex ? 2 : 1;
        final EngineClient engineR = 1 == requester ? engineB : engine(2);
        awaitPeerKeys(engineR, afterOverflow, 1, result);
        // The last block published during the stop, still resident on A, is discoverable too once the stopped
        // host was rebuilt (by the snapshot, or by the stream that follows it).
        final KeyBatch late = batch(1_000_000 + (rounds[0] - 1) * 512 + 511, 1);
        engineA.lookup(late, false, false, result);
        assertEquals(KeyStatus.DRAM, result.status(0));
        awaitPeerKeys(engineB, late, 1, result);

        // 4. The first prefix was evicted on A by that traffic: B stops being offered it (after the 5 s TTL).
        engineA.lookup(batch(0, 1), false, false, result);
        assertEquals(KeyStatus.MISS, result.status(0));
        final long deadline = System.nanoTime() + DEADLINE_NS;
        do
        {
            engineB.lookup(batch(0, 1), false, true, result);
            assertTrue(System.nanoTime() - deadline < 0, "B still offered a block A evicted");
        }
        while (KeyStatus.MISS != result.status(0));

        // 5. Fuzzed frames at B's peer endpoint: rejected and counted, B keeps serving.
        fuzz(peerPorts[1], () ->
        {
            awaitAbove(b, PeerCounter.REJECTED_MALFORMED.label(), 0);
            awaitAbove(b, PeerCounter.REJECTED_UNKNOWN_TEMPLATE.label(), 0);
            awaitAbove(b, PeerCounter.REJECTED_WRONG_SCHEMA.label(), 0);
        });
        final KeyBatch fresh = batch(2_000_000, 8);
        engineA.publish(fresh, result);
        awaitPeerKeys(engineB, fresh, 8, result);
        for (final OrbitKvProcesses m : managers)
        {
            assertTrue(m.managerProcess().isAlive(), m::dump);
        }

        // 6. A foreign peer at B's endpoint: wrong fingerprint, unregistered publisher, cross-shard key, and the
        // retired incarnation of a Manager that restarted are each refused and counted by B.
        rogueFrames(b);

        // 6b. A stranger's raw Aeron frames at B's peer port: a setup of a 1 GiB term with data at an unaligned offset
        // near its end, setups of MTU 0 and term length 0, a well-formed setup from a host that is no member's. All are
        // dropped and counted before B's driver acts on them, none reaches B's error log, and B still serves peers.
        forgedAeronFrames(b, peerPorts[1]);
        final KeyBatch afterForgery = batch(2_500_000, 8);
        engineA.publish(afterForgery, result);
        awaitPeerKeys(engineB, afterForgery, 8, result);

        // 7. stat shows the catalog section: metadata rate, update lag, journal, resyncs, coverage, index bytes, and
        // the cold queries served as catalog host.
        final String stat = a.runStatOnce(60_000);
        assertTrue(stat.contains("catalog: metadata") && stat.contains("B/s out") && stat.contains("update lag") &&
            stat.contains("journal overflows") && stat.contains("incomplete shards") && stat.contains("host index") &&
            stat.contains("cold queries served"), stat);
    }

    private void rogueFrames(final OrbitKvProcesses b) throws Exception
    {
        final ShardPlacement placement = ShardPlacement.parse("a,b,c");
        final long fingerprint = placement.routeFingerprint(1);
        final long bMsb = b.runtimeUuid().getMostSignificantBits();
        final long bLsb = b.runtimeUuid().getLeastSignificantBits();
        int hostedByB = 0;
        while (!"b".equals(placement.hostOf(hostedByB)))
        {
            hostedByB++;
        }
        final int shard = hostedByB;
        final java.nio.file.Path rogueDir = Files.createTempDirectory("orbitkv-rogue");
        final String endpoint = "127.0.0.1:" + peerPorts[1];
        try
        {
            // Wrong fingerprint: the connect is refused.
            try (RoguePeer rogue = new RoguePeer(rogueDir, 9, 0x9A, 0x9B, fingerprint ^ 1, RoguePeer.allShards(),
                1L << 20, PeerTransport.TERM_LENGTH, new org.agrona.concurrent.YieldingIdleStrategy()))
            {
                final PeerClient client = rogue.publisher().connect(endpoint, 1, bMsb, bLsb);
                drive(rogue, client::isFailed, "connect with a wrong fingerprint refused");
            }
            awaitAbove(b, PeerCounter.REJECTED_WRONG_FINGERPRINT.label(), 0);

            // Right fingerprint, not a member: its deltas are refused; a key of another shard is refused earlier.
            try (RoguePeer rogue = new RoguePeer(rogueDir, 10, 0x9C, 0x9D, fingerprint, RoguePeer.allShards(),
                1L << 20, PeerTransport.TERM_LENGTH, new org.agrona.concurrent.YieldingIdleStrategy()))
            {
                final PeerClient client = rogue.publisher().connect(endpoint, 1, bMsb, bLsb);
                drive(rogue, client::isActive, "session of a non-member opened");
                appendKeyOfShard(rogue.journal(), shard, shard);
                final long unregistered = b.counter(PeerCounter.REJECTED_UNREGISTERED_PUBLISHER.label());
                drive(rogue, () -> rogue.catalogProxy().sendDeltaBatch(client, shard, rogue.journal(), 1, 1) > 0,
                    "delta offered");
                drive(rogue, () -> b.counter(PeerCounter.REJECTED_UNREGISTERED_PUBLISHER.label()) > unregistered,
                    "unregistered publisher counted");
                appendKeyOfShard(rogue.journal(), shard, (shard + 1) % 16);
                drive(rogue, () -> rogue.catalogProxy().sendDeltaBatch(client, shard, rogue.journal(), 2, 1) > 0,
                    "cross-shard delta offered");
                drive(rogue, () -> b.counter(PeerCounter.REJECTED_CROSS_SHARD_KEY.label()) > 0,
                    "cross-shard key counted");
            }

            // C restarts (graceful stop revokes its lease; the new process is a new incarnation). B retires the old
            // incarnation; a late frame sent with it is STALE_INCARNATION.
            final OrbitKvProcesses oldC = managers.get(2);
            final UUID retired = oldC.runtimeUuid();
            signal(oldC, "TERM");
            assertTrue(oldC.managerProcess().waitFor(30, TimeUnit.SECONDS), oldC::dump);
            final OrbitKvProcesses newC = startManager(2);
            managers.set(2, newC);
            awaitCounter(b, CatalogCounter.INCOMPLETE_SHARDS, 0);
            try (RoguePeer ghost = new RoguePeer(rogueDir, 11, retired.getMostSignificantBits(),
                retired.getLeastSignificantBits(), fingerprint, RoguePeer.allShards(), 1L << 20, PeerTransport.TERM_LENGTH,
                new org.agrona.concurrent.YieldingIdleStrategy()))
            {
                final PeerClient client = ghost.publisher().connect(endpoint, 1, bMsb, bLsb);
                drive(ghost, client::isActive, "session of the retired incarnation opened");
                appendKeyOfShard(ghost.journal(), shard, shard);
                drive(ghost, () -> ghost.catalogProxy().sendDeltaBatch(client, shard, ghost.journal(), 1, 1) > 0,
                    "late delta offered");
                drive(ghost, () -> b.counter(PeerCounter.REJECTED_STALE_INCARNATION.label()) > 0,
                    "stale incarnation counted");
            }
            CloseHelper.quietCloseAll(oldC);
        }
        finally
        {
            IoUtil.delete(rogueDir.toFile(), true);
        }
    }

    private static void forgedAeronFrames(final OrbitKvProcesses b, final int peerPort) throws IOException
    {
        final long errorsBefore = b.counter(SystemCounterDescriptor.ERRORS.label());
        final InetSocketAddress target = new InetSocketAddress("127.0.0.1", peerPort);
        final ByteBuffer bytes = ByteBuffer.allocateDirect(256);
        final UnsafeBuffer frame = new UnsafeBuffer(bytes);
        try (DatagramChannel local = DatagramChannel.open();
            DatagramChannel foreign = DatagramChannel.open())
        {
            local.bind(new InetSocketAddress("127.0.0.1", 0));
            foreign.bind(new InetSocketAddress("127.0.0.2", 0));
            for (int i = 0; i < 10; i++)
            {
                sendForged(local, bytes, target, forgedSetup(frame, 1 << 30, 1_408));
                sendForged(local, bytes, target, forgedData(frame, (1 << 30) - 1));
            }
            sendForged(local, bytes, target, forgedSetup(frame, PeerTransport.TERM_LENGTH, 0));
            sendForged(local, bytes, target, forgedSetup(frame, 0, 1_408));
            sendForged(foreign, bytes, target, forgedSetup(frame, PeerTransport.TERM_LENGTH, 1_408));
        }
        awaitAbove(b, PeerGuardCounter.DROPPED_SETUP_TERM_LENGTH.label(), 0);
        awaitAbove(b, PeerGuardCounter.DROPPED_DATA_OFFSET.label(), 0);
        awaitAbove(b, PeerGuardCounter.DROPPED_SETUP_MTU.label(), 0);
        awaitAbove(b, PeerGuardCounter.DROPPED_NOT_MEMBER.label(), 0);
        assertEquals(0, b.counter(PeerGuardCounter.IMAGE_POLL_ERRORS.label()), b::dump);
        assertEquals(errorsBefore, b.counter(SystemCounterDescriptor.ERRORS.label()), b::dump);
    }

    private static int forgedSetup(final UnsafeBuffer frame, final int termLength, final int mtuLength)
    {
        final SetupFlyweight setup = new SetupFlyweight(frame);
        setup.frameLength(SetupFlyweight.HEADER_LENGTH);
        setup.version(HeaderFlyweight.CURRENT_VERSION).flags((short)0).headerType(HeaderFlyweight.HDR_TYPE_SETUP);
        setup.termOffset(0).sessionId(0x5150).streamId(PeerTransport.DEFAULT_STREAM_ID).initialTermId(7)
            .activeTermId(7).termLength(termLength).mtuLength(mtuLength).ttl(0);
        return SetupFlyweight.HEADER_LENGTH;
    }

    private static int forgedData(final UnsafeBuffer frame, final int termOffset)
    {
        final int length = DataHeaderFlyweight.HEADER_LENGTH + 8;
        final DataHeaderFlyweight data = new DataHeaderFlyweight(frame);
        data.frameLength(length);
        data.version(HeaderFlyweight.CURRENT_VERSION).flags(DataHeaderFlyweight.BEGIN_AND_END_FLAGS)
            .headerType(HeaderFlyweight.HDR_TYPE_DATA);
        data.termOffset(termOffset).sessionId(0x5150).streamId(PeerTransport.DEFAULT_STREAM_ID).termId(7);
        return length;
    }

    private static void sendForged(
        final DatagramChannel channel, final ByteBuffer bytes, final InetSocketAddress target, final int length)
        throws IOException
    {
        bytes.clear().limit(length);
        channel.send(bytes, target);
    }

    /**
     * Append to a journal's {@code journalShard} stream one record whose key belongs to {@code keyShard}.
     */
    private static void appendKeyOfShard(final OwnerJournal journal, final int journalShard, final int keyShard)
    {
        final byte[] ns = NS.getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        final StateKeyShard shards = new StateKeyShard();
        for (int i = 3_000_000; ; i++)
        {
            final byte[] hash = CatalogTestKeys.hash(i);
            if (shards.shard(new UnsafeBuffer(ns), 0, ns.length, new UnsafeBuffer(hash), 0, 32) == keyShard)
            {
                journal.append(journalShard, new JournalRecord()
                    .key(new UnsafeBuffer(ns), 0, ns.length, new UnsafeBuffer(hash), 0, 32)
                    .set(0, JournalRecord.TIER_DRAM, JournalRecord.OP_ADD, 1, 1, BLOCK));
                return;
            }
        }
    }

    /**
     * Run an invoked peer until a condition holds (deadline).
     */
    private static void drive(final RoguePeer peer, final java.util.function.BooleanSupplier done, final String what)
    {
        final long deadline = System.nanoTime() + DEADLINE_NS;
        while (!done.getAsBoolean())
        {
            assertTrue(System.nanoTime() - deadline < 0, () -> "timed out: " + what + ", errors " + peer.errors());
            if (0 == peer.doWork())
            {
                Thread.yield();
            }
        }
    }

    private static long etcdCalls(final OrbitKvProcesses m)
    {
        return value(m, MembershipCounter.ETCD_CALLS_GET) + value(m, MembershipCounter.ETCD_CALLS_TXN) +
            value(m, MembershipCounter.ETCD_CALLS_LEASE_GRANT) + value(m, MembershipCounter.ETCD_CALLS_WATCH);
    }

    static void signal(final OrbitKvProcesses m, final String signal) throws Exception
    {
        final Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(m.managerProcess().pid()))
            .inheritIO().start();
        assertEquals(0, kill.waitFor());
    }

    /**
     * Random bytes, a valid header over garbage, a wrong schema, an unknown template and a group count far beyond
     * the frame, from an Aeron publication of this JVM's own media driver.
     */
    /**
     * Offer fuzzed frames to a peer endpoint, then run {@code awaitRejected} while the sending driver is still up: a
     * driver closed right after the last offer drops what B's flow-control window had not let it send yet.
     */
    private static void fuzz(final int port, final Runnable awaitRejected) throws IOException
    {
        final File aeronDir = Files.createTempDirectory("orbitkv-fuzz-aeron").toFile();
        try (MediaDriver driver = MediaDriver.launch(new MediaDriver.Context()
                .aeronDirectoryName(aeronDir.getAbsolutePath())
                .threadingMode(ThreadingMode.SHARED)
                .publicationTermBufferLength(PeerTransport.TERM_LENGTH)
                .dirDeleteOnStart(true));
            Aeron aeron = Aeron.connect(new Aeron.Context().aeronDirectoryName(aeronDir.getAbsolutePath()));
            ExclusivePublication publication = aeron.addExclusivePublication(
                PeerTransport.channel("127.0.0.1:" + port), PeerTransport.DEFAULT_STREAM_ID))
        {
            final long deadline = System.nanoTime() + DEADLINE_NS;
            while (!publication.isConnected())
            {
                assertTrue(System.nanoTime() - deadline < 0, "fuzz publication never connected");
                Thread.yield();
            }
            final Random random = new Random(0xF022);
            final UnsafeBuffer frame = new UnsafeBuffer(new byte[4096]);
            for (int i = 0; i < 300; i++)
            {
                final byte[] bytes = new byte[1 + random.nextInt(600)];
                random.nextBytes(bytes);
                frame.putBytes(0, bytes);
                offer(publication, frame, bytes.length);
            }
            final int headerAndBlock = MessageHeaderEncoder.ENCODED_LENGTH + ColdQueryEncoder.BLOCK_LENGTH;
            for (int i = 0; i < 50; i++)
            {
                final byte[] bytes = new byte[headerAndBlock + 64];
                random.nextBytes(bytes);
                frame.putBytes(0, bytes);
                header(frame, ColdQueryEncoder.BLOCK_LENGTH, ColdQueryEncoder.TEMPLATE_ID,
                    ColdQueryEncoder.SCHEMA_ID);
                switch (i % 4)
                {
                    case 0 -> frame.putShort(2, (short)99, ByteOrder.LITTLE_ENDIAN);
                    case 1 -> frame.putShort(4, (short)999, ByteOrder.LITTLE_ENDIAN);
                    case 2 -> frame.putShort(headerAndBlock + 2, (short)0xFFFF, ByteOrder.LITTLE_ENDIAN);
                    default -> frame.putShort(0, (short)0x7FFF, ByteOrder.LITTLE_ENDIAN);
                }
                offer(publication, frame, 1 + random.nextInt(bytes.length));
            }
            awaitRejected.run();
        }
        finally
        {
            IoUtil.delete(aeronDir, true);
        }
    }

    private static void header(final UnsafeBuffer frame, final int blockLength, final int templateId, final int schemaId)
    {
        frame.putShort(0, (short)blockLength, ByteOrder.LITTLE_ENDIAN);
        frame.putShort(2, (short)templateId, ByteOrder.LITTLE_ENDIAN);
        frame.putShort(4, (short)schemaId, ByteOrder.LITTLE_ENDIAN);
        frame.putShort(6, (short)2, ByteOrder.LITTLE_ENDIAN);
    }

    private static void offer(final ExclusivePublication publication, final UnsafeBuffer frame, final int length)
    {
        final long deadline = System.nanoTime() + DEADLINE_NS;
        while (publication.offer(frame, 0, length) < 0)
        {
            assertTrue(System.nanoTime() - deadline < 0, "fuzz offer never accepted");
            Thread.yield();
        }
    }

    static int freeUdpPort() throws IOException
    {
        try (DatagramSocket socket = new DatagramSocket(0, InetAddress.getLoopbackAddress()))
        {
            return socket.getLocalPort();
        }
    }
}
