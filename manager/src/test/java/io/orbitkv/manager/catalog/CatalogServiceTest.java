package io.orbitkv.manager.catalog;

import io.orbitkv.manager.SystemCounterFamilies;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import io.orbitkv.catalog.JournalRecord;
import io.orbitkv.catalog.ShardReceiver;
import io.orbitkv.codecs.CatalogLimits;
import io.orbitkv.codecs.ShardPlacement;
import io.orbitkv.codecs.StateKeyFlyweight;
import io.orbitkv.codecs.StateKeyShard;
import io.orbitkv.codecs.engine.FailureReason;
import io.orbitkv.codecs.engine.KeyStatus;
import io.orbitkv.index.CandidateSet;
import io.orbitkv.index.NamespaceTable;
import io.orbitkv.manager.ManagerTestSupport;
import io.orbitkv.manager.membership.EtcdCluster;
import io.orbitkv.manager.membership.Membership;
import io.orbitkv.manager.membership.MembershipSettings;
import io.orbitkv.manager.peer.PeerTransport;
import io.orbitkv.manager.status.SystemCounters;
import org.agrona.CloseHelper;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.SystemNanoClock;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersManager;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The catalog agent driven by hand, the way Aeron's DriverConductorTest drives the conductor: the test calls
 * {@code doWork()} and moves the agents' clock. Everything is real: etcd membership, the embedded media driver of each
 * node's peer transport over loopback UDP, journals, receivers and the candidate index. Node a hosts every shard
 * (placement {a}); node b is a member that owns residences and streams them to a.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class CatalogServiceTest
{
    private static final byte[] NAMESPACE = "model=catalog-agent;dtype=bf16".getBytes(StandardCharsets.US_ASCII);
    private static final long DEADLINE_NS = TimeUnit.SECONDS.toNanos(30);

    /**
     * Long enough that the validity of the registrations (half the TTL) outlasts every clock jump of these tests.
     */
    private static final int MEMBERSHIP_TTL_SECS = 30;

    private final OffsetClock clock = new OffsetClock();
    private final List<Throwable> errors = new CopyOnWriteArrayList<>();
    private final List<AutoCloseable> closeables = new ArrayList<>();
    private final List<File> dirs = new ArrayList<>();
    private final List<PendingLookup> answered = new ArrayList<>();
    private final LookupAnswerSink sink = answered::add;
    private final StateKeyFlyweight key = new StateKeyFlyweight();
    private final UnsafeBuffer namespace = new UnsafeBuffer(NAMESPACE);
    private final UnsafeBuffer hash = new UnsafeBuffer(new byte[32]);
    private EtcdCluster etcd;
    private ShardPlacement placement;
    private Node a;
    private Node b;

    /**
     * Real time plus what the test added: the media driver and etcd keep running on real time, while catalog
     * timeouts (candidate TTL, query budget) are crossed by a jump instead of a wait.
     */
    static final class OffsetClock implements NanoClock
    {
        private volatile long offsetNs;

        public long nanoTime()
        {
            return System.nanoTime() + offsetNs;
        }

        void advanceMs(final long ms)
        {
            offsetNs += TimeUnit.MILLISECONDS.toNanos(ms);
        }
    }

    final class Node
    {
        final CatalogContext ctx;
        final Membership membership;
        final CatalogService service;
        final UUID uuid = UUID.randomUUID();
        final SystemCounters counters;

        Node(final String nodeId, final ShardPlacement placement, final String cluster)
        {
            final File dir = ManagerTestSupport.newDir();
            dirs.add(dir);
            final CountersManager countersManager = new CountersManager(
                new UnsafeBuffer(new byte[2 << 20]), new UnsafeBuffer(new byte[512 << 10]), StandardCharsets.US_ASCII);
            counters = SystemCounterFamilies.allocate(countersManager);
            final PeerTransport peerTransport = PeerTransport.launch(new PeerTransport.Context()
                .endpoint("127.0.0.1:0")
                .directory(dir.toPath())
                .incarnation(uuid.getMostSignificantBits(), uuid.getLeastSignificantBits())
                .placementFingerprint(placement.routeFingerprint(1))
                .countersManager(countersManager)
                .errorHandler(errors::add)
                .nanoClock(clock));
            closeables.add(peerTransport);
            membership = Membership.start(
                new MembershipSettings(etcd.endpoints(), cluster, nodeId, MEMBERSHIP_TTL_SECS, 2_000, placement,
                    peerTransport.endpoint(), "", uuid, System.currentTimeMillis()),
                counters, errors::add, System.out, SystemNanoClock.INSTANCE);
            closeables.add(membership);
            final NamespaceTable namespaces = new NamespaceTable();
            ctx = new CatalogContext()
                .nodeId(nodeId)
                .placement(placement)
                .runtimeUuid(uuid)
                .namespaces(namespaces)
                .inventory(new OwnerInventory(namespaces, 4096, 16L << 20, 1L << 20, counters))
                .systemCounters(counters)
                .nanoClock(clock)
                .peerTransport(peerTransport)
                .membership(membership)
                .conclude();
            service = new CatalogService(ctx, null);
        }

        boolean sees(final int members)
        {
            return membership.view().isComplete() && membership.view().members().size() == members &&
                ctx.members().hasView();
        }
    }

    @BeforeEach
    void setUp() throws Exception
    {
        etcd = EtcdCluster.start(1);
        final String cluster = "agent-" + UUID.randomUUID().toString().substring(0, 8);
        placement = ShardPlacement.of(List.of("a", "b"));
        a = new Node("a", placement, cluster);
        b = new Node("b", placement, cluster);
        a.membership.awaitJoined();
        b.membership.awaitJoined();
        driveUntil(() -> a.sees(2) && b.sees(2), "both catalogs follow a complete view of 2");
    }

    @AfterEach
    void tearDown()
    {
        for (final Node node : new Node[]{a, b})
        {
            if (null != node)
            {
                node.service.onClose();
            }
        }
        for (int i = closeables.size() - 1; i >= 0; i--)
        {
            CloseHelper.quietClose(closeables.get(i));
        }
        CloseHelper.quietClose(etcd);
        dirs.forEach(ManagerTestSupport::deleteDir);
        assertEquals(List.of(), errors);
    }

    @Test
    void shouldApplyOwnerDeltaBatchesAndAnswerALookupFromTheHostedView()
    {
        final int shard = hashHostedBy("a", 32, 1);
        final long bMsb = b.uuid.getMostSignificantBits();
        // b's stream starts with a snapshot cut of its empty inventory; once a installed it, a residence is a delta.
        awaitBCoveredOnA(shard);
        final long appliedBefore = a.counters.get(CatalogCounter.RECORDS_APPLIED).get();

        assertTrue(b.ctx.streams().inventory().add(JournalRecord.TIER_DRAM, key(32), 7, 4096) > 0);
        driveUntil(() -> a.counters.get(CatalogCounter.RECORDS_APPLIED).get() > appliedBefore,
            "a applied b's delta");

        final PendingLookup lookup = lookup(a, 32);
        // The key's shard is a's: the answer comes from its own view in this call, with no cold query.
        assertEquals(List.of(lookup), answered);
        assertEquals(KeyStatus.PEER, lookup.statuses()[0]);
        assertEquals(4096, lookup.lengths()[0]);
        assertEquals("b", lookup.answer().ownerNodeId(0));
        assertEquals(bMsb, lookup.answer().ownerRuntimeUuidMsb(0));
        assertEquals(7, lookup.answer().candidateInsertionSequence(0));
        assertEquals(0, a.counters.get(CatalogCounter.COLD_QUERIES).get());
        assertEquals(1, a.counters.get(CatalogCounter.LOCAL_HOST_KEYS).get());
    }

    @Test
    void shouldAnswerFromTheCandidateIndexUntilItsTtlRunsOutOnTheAgentsClock()
    {
        // a's own view proves a key absent only once it covers b completely (b's snapshot installed).
        awaitBCoveredOnA(hashHostedBy("a", 16, 1_000));
        final CandidateSet set = new CandidateSet();
        set.add(1, b.uuid.getMostSignificantBits(), b.uuid.getLeastSignificantBits(), 42, 1, 8192);
        assertTrue(a.ctx.candidates().put(key(16), set, clock.nanoTime() / 1_000_000L));

        final PendingLookup warm = lookup(a, 16);
        assertEquals(List.of(warm), answered);
        assertEquals(KeyStatus.PEER, warm.statuses()[0]);
        assertEquals(KeyStatus.SSD, warm.answer().candidateTier(0));
        assertEquals(42, warm.answer().candidateInsertionSequence(0));
        assertEquals(1, a.counters.get(CatalogCounter.CANDIDATE_HITS).get());
        assertEquals(0, a.counters.get(CatalogCounter.LOCAL_HOST_KEYS).get());
        a.service.doWork();

        // design: reads do not extend the TTL; past it the evidence is gone and a's own (empty, complete) view answers.
        clock.advanceMs(a.ctx.candidates().ttlMs() + 1);
        answered.clear();
        final PendingLookup cold = lookup(a, 16);
        assertEquals(List.of(cold), answered);
        assertEquals(KeyStatus.MISS, cold.statuses()[0]);
        assertTrue(cold.answer().isEmpty());
        assertEquals(1, a.ctx.candidates().expirations());
        assertEquals(1, a.counters.get(CatalogCounter.CANDIDATE_HITS).get());
        assertEquals(1, a.counters.get(CatalogCounter.LOCAL_HOST_KEYS).get());
        assertEquals(0, a.ctx.candidates().logicalBytes());
    }

    @Test
    void shouldAnswerLocallyOnceTheColdQueryBudgetRunsOutOnTheAgentsClock()
    {
        hashHostedBy("b", 24, 2_000);
        driveUntil(() -> null != a.ctx.members().linkForNode("b").poll(clock.nanoTime() / 1_000_000L),
            "a's session to b");
        // b's agent is not driven from here on: a's cold query to it stays unanswered.
        final PendingLookup lookup = lookup(a, 24);
        assertEquals(List.of(), answered);
        for (int i = 0; i < 100; i++)
        {
            a.service.doWork();
        }
        assertEquals(List.of(), answered, "the 3 s budget has not run out on the agent's clock");

        clock.advanceMs(CatalogLimits.COLD_QUERY_BUDGET_MS);
        a.service.doWork();
        assertEquals(List.of(lookup), answered);
        // No copy answered within the budget: unavailable, not proven absent.
        assertEquals(KeyStatus.FAILED, lookup.statuses()[0]);
        assertEquals(FailureReason.CATALOG_UNAVAILABLE, lookup.reasons()[0]);
        assertTrue(lookup.answer().isEmpty());
    }

    private void awaitBCoveredOnA(final int shard)
    {
        final long bMsb = b.uuid.getMostSignificantBits();
        final long bLsb = b.uuid.getLeastSignificantBits();
        driveUntil(() ->
        {
            final ShardReceiver receiver = a.ctx.members().receiverOf(bMsb, bLsb, shard);
            return null != receiver && receiver.coverageComplete();
        }, "a installed b's snapshot of shard " + shard);
    }

    /**
     * Fill the hash with the first bytes from {@code seed} on whose key's shard {@code node} is the catalog host.
     *
     * @return the shard.
     */
    private int hashHostedBy(final String node, final int hashLength, final long seed)
    {
        final StateKeyShard shards = new StateKeyShard();
        for (long n = seed; ; n++)
        {
            hash.putLong(0, n);
            final int shard = shards.shard(key(hashLength));
            if (node.equals(placement.hostOf(shard)))
            {
                return shard;
            }
        }
    }

    private StateKeyFlyweight key(final int hashLength)
    {
        return key.wrap(StateKeyFlyweight.NO_NAMESPACE_ID, namespace, 0, NAMESPACE.length, hash, 0, hashLength);
    }

    private PendingLookup lookup(final Node node, final int hashLength)
    {
        final PendingLookup lookup = node.ctx.requester().acquireLookup();
        assertNotNull(lookup, "the catalog takes peer lookups once it follows a view");
        final KeyStatus[] statuses = {KeyStatus.MISS};
        final int[] lengths = {0};
        lookup.request(1, 2, 0, 0, statuses, lengths, 1).namespace(namespace, 0, NAMESPACE.length);
        assertTrue(lookup.addPeerKey(hash, 0, hashLength));
        node.ctx.requester().startLookup(lookup, sink);
        return lookup;
    }

    private void driveUntil(final BooleanSupplier condition, final String what)
    {
        final long deadlineNs = System.nanoTime() + DEADLINE_NS;
        while (!condition.getAsBoolean())
        {
            if (System.nanoTime() - deadlineNs > 0)
            {
                throw new AssertionError("timed out waiting until " + what);
            }
            final int work = a.service.doWork() + b.service.doWork();
            if (0 == work)
            {
                Thread.yield();
            }
        }
    }
}
