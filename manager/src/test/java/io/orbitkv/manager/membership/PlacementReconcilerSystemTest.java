package io.orbitkv.manager.membership;

import io.etcd.jetcd.Client;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.orbitkv.codecs.ShardPlacement;
import io.orbitkv.codecs.StateKeyShard;
import io.orbitkv.manager.SystemCounterFamilies;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

import static io.orbitkv.manager.membership.MembershipTestSupport.Joined;
import static io.orbitkv.manager.membership.MembershipTestSupport.await;
import static io.orbitkv.manager.membership.MembershipTestSupport.awaitCompleteWith;
import static io.orbitkv.manager.membership.MembershipTestSupport.bytes;
import static io.orbitkv.manager.membership.MembershipTestSupport.put;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Online placement changes against a real etcd: Memberships of a cluster (no whole Manager) elect one reconciler,
 * which drives a transition from the installed generation to the desired one while the test plays the catalog side
 * by handing coverage reports to {@link Membership#reportCoverage}.
 */
class PlacementReconcilerSystemTest
{
    private static EtcdCluster etcd;
    private static Client raw;
    private static EtcdGateway admin;

    @BeforeAll
    static void startEtcd() throws Exception
    {
        etcd = EtcdCluster.start(1);
        raw = Client.builder().endpoints(etcd.endpoints().split(",")).build();
        admin = new EtcdGateway(etcd.endpoints(), 2_000, SystemCounterFamilies.inMemory());
    }

    @AfterAll
    static void stopEtcd()
    {
        if (null != admin)
        {
            admin.close();
        }
        if (null != raw)
        {
            raw.close();
        }
        if (null != etcd)
        {
            etcd.close();
        }
    }

    private static String cluster(final String name)
    {
        return name + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    private static Joined join(
        final String cluster, final String nodeId, final String catalogNodes, final int replicas, final int maxMoves)
    {
        return MembershipTestSupport.join(
            MembershipTestSupport.settings(etcd.endpoints(), cluster, nodeId, catalogNodes, replicas, maxMoves), null);
    }

    /** Every value the transition key takes, from now on, as the watch delivers them. */
    private static final class TransitionHistory implements AutoCloseable
    {
        final List<PlacementTransition> values = Collections.synchronizedList(new ArrayList<>());
        final Watch.Watcher watcher;

        TransitionHistory(final String cluster) throws Exception
        {
            final long revision = raw.getKVClient().get(bytes("/")).get(5, TimeUnit.SECONDS).getHeader().getRevision();
            watcher = raw.getWatchClient().watch(bytes(MembershipConfiguration.placementTransitionKey(cluster)),
                WatchOption.builder().withRevision(revision + 1).build(), Watch.listener((response) ->
                {
                    for (final WatchEvent event : response.getEvents())
                    {
                        if (WatchEvent.EventType.PUT == event.getEventType())
                        {
                            values.add(TransitionRecord.decode(event.getKeyValue().getValue().getBytes()));
                        }
                    }
                }));
        }

        List<PlacementTransition> snapshot()
        {
            synchronized (values)
            {
                return new ArrayList<>(values);
            }
        }

        public void close()
        {
            watcher.close();
        }
    }

    private static Joined awaitReconciler(final List<Joined> candidates)
    {
        final Joined[] found = new Joined[1];
        await(() ->
        {
            int count = 0;
            for (final Joined j : candidates)
            {
                if (j.membership.isReconciler())
                {
                    found[0] = j;
                    count++;
                }
            }
            return 1 == count;
        }, 15_000, () -> "exactly one reconciler among " + candidates.size());
        return found[0];
    }

    private static PlacementAdmin.Status status(final String cluster)
    {
        return PlacementAdmin.status(admin, cluster);
    }

    private static void awaitInstalled(final List<Joined> views, final long generation, final ShardPlacement placement)
    {
        for (final Joined j : views)
        {
            await(() ->
            {
                final PlacementState state = j.membership.view().placementState();
                return j.membership.view().isComplete() && null != state && state.generation() == generation &&
                    state.isStable() && state.placement().equals(placement);
            }, 20_000, () -> "generation " + generation + " installed in the view, have " +
                j.membership.view().placementState() + "\n" + j.log());
        }
    }

    /** Coverage of every shard, each owner's sequence a function of the reporting node, the owner and the shard. */
    private static CoverageReport coverage(final long generation, final String reporter, final Set<Integer> shards)
    {
        final Map<Integer, Map<String, Long>> complete = new TreeMap<>();
        for (final int shard : shards)
        {
            complete.put(shard, Map.of("a", sequence(reporter, "a", shard), "b", sequence(reporter, "b", shard)));
        }
        return new CoverageReport(generation, complete);
    }

    private static long sequence(final String reporter, final String owner, final int shard)
    {
        return 100L * (reporter.charAt(0) - 'a' + 1) + 10L * (owner.charAt(0) - 'a') + shard;
    }

    private static Set<Integer> allShards()
    {
        final Set<Integer> all = new java.util.TreeSet<>();
        for (int s = 0; s < StateKeyShard.SHARD_COUNT; s++)
        {
            all.add(s);
        }
        return all;
    }

    @Test
    @Timeout(60)
    @Execution(ExecutionMode.CONCURRENT)
    void shouldDriveEveryMoveThroughItsPhasesInOrderWithAtMostTheLimitInFlight() throws Exception
    {
        final String cluster = cluster("phases");
        final ShardPlacement installed = ShardPlacement.parse("a,b", 1);
        final ShardPlacement desired = ShardPlacement.parse("a,b,c", 1);
        final int maxMoves = 2;
        try (Joined a = join(cluster, "a", "a,b", 1, maxMoves);
            Joined b = join(cluster, "b", "a,b", 1, maxMoves);
            Joined c = join(cluster, "c", "a,b,c", 1, maxMoves);
            TransitionHistory history = new TransitionHistory(cluster))
        {
            final List<Joined> all = List.of(a, b, c);
            for (final Joined j : all)
            {
                awaitCompleteWith(j, "a", "b", "c");
            }
            final Joined reconciler = awaitReconciler(all);
            assertEquals(1, reconciler.counter(MembershipCounter.RECONCILER_ELECTIONS_WON));
            await(() -> 1 == reconciler.counter(MembershipCounter.RECONCILER), 5_000, reconciler::log);
            awaitInstalled(all, 1, installed);

            final PlacementTransition plan = PlacementTransition.plan(1, installed, 2, desired);
            final Set<Integer> moving = plan.phases().keySet();
            assertTrue(moving.size() > maxMoves, "the test needs more moves than the limit: " + moving);
            assertEquals(new PlacementAdmin.SetResult(true, 2), PlacementAdmin.setDesired(admin, cluster, desired));

            // No coverage from c yet: the first two moves start and wait, the others stay pending.
            await(() -> reconciler.log().contains("reconciler waits for coverage"), 10_000, reconciler::log);
            final PlacementTransition waiting = status(cluster).transition();
            assertNotNull(waiting);
            assertEquals(maxMoves, waiting.inFlight());
            assertEquals(maxMoves, waiting.count(MovePhase.PREPARE));
            assertEquals(moving.size() - maxMoves, waiting.count(MovePhase.PENDING));
            final int lowest = moving.iterator().next();
            assertEquals(MovePhase.PREPARE, waiting.move(lowest).phase(), "lowest shard first");
            assertEquals(List.of("c"), status(cluster).awaitingCoverage(lowest));
            for (final Joined j : all)
            {
                // every view holds the preparing shard on its old host and on c; queries still go to the old host
                await(() -> null != j.membership.view().placementState().transition() &&
                    j.membership.view().placementState().holds(lowest, "c"), 5_000, j::log);
                final PlacementState state = j.membership.view().placementState();
                assertEquals(List.of(installed.hostOf(lowest)), List.of(state.queryOrder(lowest)));
                assertEquals(1, state.generation());
            }

            c.membership.reportCoverage(coverage(2, "c", moving));
            awaitInstalled(all, 2, desired);
            assertNull(status(cluster).transition());
            assertTrue(status(cluster).isStable());

            final Map<Integer, List<MovePhase>> phases = new HashMap<>();
            for (final PlacementTransition value : history.snapshot())
            {
                assertTrue(value.inFlight() <= maxMoves, "at most " + maxMoves + " in flight: " + value);
                assertEquals(moving, value.phases().keySet());
                for (final ShardMove move : value.moveList())
                {
                    final List<MovePhase> seen = phases.computeIfAbsent(move.shard(), (s) -> new ArrayList<>());
                    if (seen.isEmpty() || seen.get(seen.size() - 1) != move.phase())
                    {
                        seen.add(move.phase());
                    }
                    if (move.phase().ordinal() >= MovePhase.CAUGHT_UP.ordinal())
                    {
                        assertEquals(Map.of("a", sequence("c", "a", move.shard()), "b", sequence("c", "b", move.shard())),
                            move.handoff(), "handoff of shard " + move.shard());
                    }
                }
            }
            for (final int shard : moving)
            {
                assertEquals(List.of(MovePhase.PENDING, MovePhase.PREPARE, MovePhase.CAUGHT_UP, MovePhase.SWITCHED,
                    MovePhase.RETIRED), phases.get(shard), "phases of shard " + shard);
            }
            // the reconciler counts a step once its txn returned; the views may see the step first
            await(() -> 1 == reconciler.counter(MembershipCounter.TRANSITIONS_COMPLETED), 5_000, reconciler::log);
            assertEquals(1, reconciler.counter(MembershipCounter.TRANSITIONS_PLANNED));
            assertEquals(moving.size(), reconciler.counter(MembershipCounter.SHARD_MOVES_STARTED));
            assertEquals(moving.size(), reconciler.counter(MembershipCounter.SHARD_MOVES_COMPLETED));
            assertEquals(0, reconciler.counter(MembershipCounter.TRANSITIONS_ABANDONED));
            for (final Joined j : all)
            {
                await(() -> 2 == j.counter(MembershipCounter.PLACEMENT_GENERATION) &&
                    0 == j.counter(MembershipCounter.SHARD_MOVES_IN_FLIGHT), 5_000, j::log);
                assertEquals(j == reconciler ? 1 : 0, j.counter(MembershipCounter.RECONCILER));
                assertEquals(FenceCause.NONE, j.membership.fenceCause());
            }
            assertEquals(1, c.counter(MembershipCounter.COVERAGE_REPORTS_WRITTEN));
            assertTrue(reconciler.log().contains("completed transition 1 -> 2"), reconciler::log);
        }
    }

    @Test
    @Timeout(60)
    @Execution(ExecutionMode.CONCURRENT)
    void shouldLetAnotherManagerTakeOverAndFinishWhenTheReconcilerLeavesMidMove()
    {
        final String cluster = cluster("takeover");
        final ShardPlacement installed = ShardPlacement.parse("a,b,c,d", 1);
        final List<Joined> all = new ArrayList<>();
        try
        {
            for (final String node : List.of("a", "b", "c", "d"))
            {
                all.add(join(cluster, node, "a,b,c,d", 1, MembershipConfiguration.MAX_SHARD_MOVES));
            }
            final Joined first = awaitReconciler(all);
            final List<Joined> others = new ArrayList<>(all);
            others.remove(first);
            // the target leaves the reconciler's node out, so every copy it adds belongs to a Manager that stays
            final List<String> rest = new ArrayList<>();
            others.forEach((j) -> rest.add(j.membership.settings().nodeId()));
            final ShardPlacement desired = ShardPlacement.of(rest, 2);
            final PlacementTransition plan = PlacementTransition.plan(1, installed, 2, desired);
            assertEquals(StateKeyShard.SHARD_COUNT, plan.moveList().size(), "one copy to two moves every shard");
            PlacementAdmin.setDesired(admin, cluster, desired);

            // coverage for half the shards: those moves run through SWITCHED while the others wait in PREPARE
            final Set<Integer> half = new java.util.TreeSet<>();
            for (int s = 0; s < StateKeyShard.SHARD_COUNT / 2; s++)
            {
                half.add(s);
            }
            for (final Joined j : others)
            {
                j.membership.reportCoverage(coverage(2, j.membership.settings().nodeId(), half));
            }
            await(() ->
            {
                final PlacementTransition t = status(cluster).transition();
                return null != t && t.anySwitched();
            }, 15_000, first::log);
            first.close();
            all.remove(first);

            final Joined second = awaitReconciler(others);
            assertEquals(1, second.counter(MembershipCounter.RECONCILER_ELECTIONS_WON));
            assertFalse(first.membership.isReconciler());
            for (final Joined j : others)
            {
                j.membership.reportCoverage(coverage(2, j.membership.settings().nodeId(), allShards()));
            }
            awaitInstalled(others, 2, desired);
            await(() -> 1 == second.counter(MembershipCounter.TRANSITIONS_COMPLETED), 5_000, second::log);
            assertEquals(0, second.counter(MembershipCounter.TRANSITIONS_PLANNED), "the new reconciler resumed");
            assertEquals(1, first.counter(MembershipCounter.TRANSITIONS_PLANNED));
            assertTrue(second.log().contains("is the placement reconciler (won the election"), second::log);
            assertTrue(status(cluster).isStable());
        }
        finally
        {
            all.forEach(Joined::close);
        }
    }

    @Test
    @Timeout(60)
    @Execution(ExecutionMode.CONCURRENT)
    void shouldRecordTheSmallestSequenceOverTheAddedCopiesAsTheHandoff() throws Exception
    {
        final String cluster = cluster("handoff");
        final ShardPlacement installed = ShardPlacement.parse("a,b", 1);
        final ShardPlacement desired = ShardPlacement.parse("a,b,c,d", 3);
        try (Joined a = join(cluster, "a", "a,b", 1, MembershipConfiguration.MAX_SHARD_MOVES);
            Joined b = join(cluster, "b", "a,b", 1, MembershipConfiguration.MAX_SHARD_MOVES);
            Joined c = join(cluster, "c", "a,b", 1, MembershipConfiguration.MAX_SHARD_MOVES);
            Joined d = join(cluster, "d", "a,b", 1, MembershipConfiguration.MAX_SHARD_MOVES);
            TransitionHistory history = new TransitionHistory(cluster))
        {
            final List<Joined> all = List.of(a, b, c, d);
            awaitReconciler(all);
            PlacementAdmin.setDesired(admin, cluster, desired);
            for (final Joined j : all)
            {
                j.membership.reportCoverage(coverage(2, j.membership.settings().nodeId(), allShards()));
            }
            awaitInstalled(all, 2, desired);
            final PlacementTransition last = history.snapshot().get(history.snapshot().size() - 1);
            for (final ShardMove move : last.moveList())
            {
                final Set<String> added = PlacementAgent.copies(desired, move.shard());
                added.removeAll(PlacementAgent.copies(installed, move.shard()));
                assertTrue(added.size() >= 2, "three copies of four nodes add two to one: " + added);
                for (final String owner : List.of("a", "b"))
                {
                    long min = Long.MAX_VALUE;
                    for (final String node : added)
                    {
                        min = Math.min(min, sequence(node, owner, move.shard()));
                    }
                    assertEquals(min, move.handoff().get(owner), "shard " + move.shard() + " owner " + owner);
                }
            }
        }
    }

    @Test
    @Timeout(60)
    @Execution(ExecutionMode.CONCURRENT)
    void shouldAbandonATransitionWithNoSwitchedMoveForANewerDesiredPlacement()
    {
        final String cluster = cluster("abandon");
        try (Joined a = join(cluster, "a", "a,b", 1, 4);
            Joined b = join(cluster, "b", "a,b", 1, 4))
        {
            final Joined reconciler = awaitReconciler(List.of(a, b));
            // c is no member: moves to it wait for coverage that never comes
            PlacementAdmin.setDesired(admin, cluster, ShardPlacement.parse("a,b,c", 1));
            await(() -> reconciler.log().contains("reconciler waits for coverage"), 10_000, reconciler::log);
            final PlacementAdmin.Status stuck = status(cluster);
            assertFalse(stuck.isStable());
            final int first = stuck.transition().moveList().get(0).shard();
            assertEquals(List.of("c"), stuck.awaitingCoverage(first));

            final ShardPlacement newer = ShardPlacement.parse("a,b", 2);
            assertEquals(new PlacementAdmin.SetResult(true, 3), PlacementAdmin.setDesired(admin, cluster, newer));
            await(() -> 1 == reconciler.counter(MembershipCounter.TRANSITIONS_ABANDONED), 10_000, reconciler::log);
            await(() ->
            {
                final PlacementTransition t = status(cluster).transition();
                return null != t && 3 == t.toGeneration() && 1 == t.fromGeneration();
            }, 10_000, reconciler::log);
            for (final Joined j : List.of(a, b))
            {
                j.membership.reportCoverage(coverage(3, j.membership.settings().nodeId(), allShards()));
            }
            awaitInstalled(List.of(a, b), 3, newer);
            await(() -> 1 == reconciler.counter(MembershipCounter.TRANSITIONS_COMPLETED), 5_000, reconciler::log);
            assertEquals(2, reconciler.counter(MembershipCounter.TRANSITIONS_PLANNED));
            assertTrue(reconciler.log().contains("abandoned transition 1 -> 2 (no shard switched) for the newer " +
                "desired generation 3"), reconciler::log);

            // asking for the placement the cluster heads to writes nothing
            assertEquals(new PlacementAdmin.SetResult(false, 3), PlacementAdmin.setDesired(admin, cluster, newer));
        }
    }

    @Test
    @Timeout(60)
    @Execution(ExecutionMode.CONCURRENT)
    void shouldInstallAtOnceWhenNoShardChangesCopiesAndLetLaterJoinsFollowIt()
    {
        final String cluster = cluster("direct");
        final ShardPlacement more = ShardPlacement.parse("a,b", 3);
        try (Joined a = join(cluster, "a", "a,b", 2, 2))
        {
            final Joined reconciler = awaitReconciler(List.of(a));
            PlacementAdmin.setDesired(admin, cluster, more);
            awaitInstalled(List.of(a), 2, more);
            await(() -> 1 == reconciler.counter(MembershipCounter.TRANSITIONS_COMPLETED), 5_000, reconciler::log);
            assertEquals(1, reconciler.counter(MembershipCounter.TRANSITIONS_PLANNED));
            assertEquals(0, reconciler.counter(MembershipCounter.SHARD_MOVES_STARTED));
            assertTrue(reconciler.log().contains("installed generation 2 at once"), reconciler::log);

            try (Joined b = join(cluster, "b", "a,b", 2, 2))
            {
                awaitInstalled(List.of(b), 2, more);
                assertTrue(b.log().contains("following the cluster's placement generation 2"), b::log);
                assertFalse(b.membership.isReconciler());
                assertEquals(0, b.counter(MembershipCounter.RECONCILER_ELECTIONS_WON));
            }
        }
    }

    @Test
    @Timeout(60)
    @Execution(ExecutionMode.CONCURRENT)
    void shouldRefuseALowerGenerationAndMalformedRecordsAndKeepTheLastState() throws Exception
    {
        final String cluster = cluster("refuse");
        final ShardPlacement two = ShardPlacement.parse("a,b", 2);
        try (Joined a = join(cluster, "a", "a,b", 1, 2))
        {
            awaitReconciler(List.of(a));
            // a later generation written by hand is followed like any other
            final long refusedBefore = a.counter(MembershipCounter.PLACEMENT_RECORDS_REFUSED);
            put(raw, MembershipConfiguration.placementKey(cluster), PlacementRecord.encode(two, 5));
            awaitInstalled(List.of(a), 5, two);

            put(raw, MembershipConfiguration.placementKey(cluster), PlacementRecord.encode(two, 4));
            await(() -> a.counter(MembershipCounter.PLACEMENT_RECORDS_REFUSED) > refusedBefore, 5_000, a::log);
            assertTrue(a.log().contains("of generation 4") && a.log().contains("does not follow the applied generation 5"),
                a::log);
            put(raw, MembershipConfiguration.placementKey(cluster), "{\"version\":2,\"garbage\":".getBytes());
            await(() -> a.log().contains("malformed placement record"), 5_000, a::log);
            put(raw, MembershipConfiguration.placementTransitionKey(cluster), "{\"version\":1}".getBytes());
            await(() -> a.log().contains("malformed placement transition record"), 5_000, a::log);
            assertTrue(a.counter(MembershipCounter.PLACEMENT_RECORDS_REFUSED) >= refusedBefore + 3,
                () -> "refused " + a.counter(MembershipCounter.PLACEMENT_RECORDS_REFUSED) + "\n" + a.log());

            final PlacementState kept = a.membership.view().placementState();
            assertEquals(5, kept.generation());
            assertEquals(two, kept.placement());
            assertTrue(kept.isStable());
            assertEquals(5, a.counter(MembershipCounter.PLACEMENT_GENERATION));
            assertEquals(FenceCause.NONE, a.membership.fenceCause());
            assertTrue(a.membership.remoteWorkEnabled(System.nanoTime()));
            assertFalse(status(cluster).isStable(), "status names the unreadable keys");
        }
    }

    @Test
    @Timeout(60)
    @Execution(ExecutionMode.CONCURRENT)
    void shouldFinishATransitionThatSwitchedAShardBeforeMovingToANewerDesiredPlacement()
    {
        final String cluster = cluster("finish-first");
        final ShardPlacement installed = ShardPlacement.parse("a,b", 1);
        final ShardPlacement desired = ShardPlacement.parse("a,b,c", 1);
        try (Joined a = join(cluster, "a", "a,b", 1, MembershipConfiguration.MAX_SHARD_MOVES);
            Joined b = join(cluster, "b", "a,b", 1, MembershipConfiguration.MAX_SHARD_MOVES);
            Joined c = join(cluster, "c", "a,b", 1, MembershipConfiguration.MAX_SHARD_MOVES))
        {
            final List<Joined> all = List.of(a, b, c);
            final Joined reconciler = awaitReconciler(all);
            final Set<Integer> moving = PlacementTransition.plan(1, installed, 2, desired).phases().keySet();
            final int first = moving.iterator().next();
            PlacementAdmin.setDesired(admin, cluster, desired);
            // coverage of one shard only: it switches (and retires), the others wait in PREPARE
            c.membership.reportCoverage(coverage(2, "c", Set.of(first)));
            await(() ->
            {
                final PlacementTransition t = status(cluster).transition();
                return null != t && t.anySwitched();
            }, 10_000, reconciler::log);

            final ShardPlacement newer = ShardPlacement.parse("a,b", 2);
            assertEquals(new PlacementAdmin.SetResult(true, 3), PlacementAdmin.setDesired(admin, cluster, newer));
            await(() -> reconciler.log().contains("desired generation 3 waits for transition 1 -> 2 to finish"), 10_000,
                reconciler::log);
            assertEquals(2, status(cluster).transition().toGeneration(), "not abandoned");
            assertEquals(0, reconciler.counter(MembershipCounter.TRANSITIONS_ABANDONED));

            c.membership.reportCoverage(coverage(2, "c", moving));
            await(() ->
            {
                final PlacementTransition t = status(cluster).transition();
                return null != t && 3 == t.toGeneration();
            }, 15_000, reconciler::log);
            assertEquals(2, status(cluster).generation(), "the switched transition was installed first");
            for (final Joined j : all)
            {
                j.membership.reportCoverage(coverage(3, j.membership.settings().nodeId(), allShards()));
            }
            awaitInstalled(all, 3, newer);
            await(() -> 2 == reconciler.counter(MembershipCounter.TRANSITIONS_COMPLETED), 5_000, reconciler::log);
            assertEquals(0, reconciler.counter(MembershipCounter.TRANSITIONS_ABANDONED));
        }
    }

    @Test
    @Timeout(60)
    @Execution(ExecutionMode.CONCURRENT)
    void shouldStepDownWhenTheReconcilerKeyIsNoLongerItsOwnAndLetTheNextOneResume() throws Exception
    {
        final String cluster = cluster("deposed");
        final ShardPlacement desired = ShardPlacement.parse("a,b", 2);
        try (Joined a = join(cluster, "a", "a,b", 1, 4);
            Joined b = join(cluster, "b", "a,b", 1, 4))
        {
            final List<Joined> all = List.of(a, b);
            final Joined reconciler = awaitReconciler(all);
            PlacementAdmin.setDesired(admin, cluster, desired);
            await(() -> reconciler.log().contains("reconciler waits for coverage"), 10_000, reconciler::log);
            final PlacementTransition waiting = status(cluster).transition();

            // another holder (as after this one's lease had lapsed and someone else won): no step of ours commits
            final String key = MembershipConfiguration.reconcilerKey(cluster);
            put(raw, key, new ReconcilerRecord("elsewhere", UUID.randomUUID()).encode());
            await(() -> !a.membership.isReconciler() && !b.membership.isReconciler(), 10_000, reconciler::log);
            assertEquals(0, reconciler.counter(MembershipCounter.RECONCILER));
            assertTrue(reconciler.log().contains("is no longer the placement reconciler: the reconciler key is " +
                "another one now"), reconciler::log);
            for (final Joined j : all)
            {
                j.membership.reportCoverage(coverage(2, j.membership.settings().nodeId(), allShards()));
            }
            await(() -> 2 == a.counter(MembershipCounter.COVERAGE_REPORTS_WRITTEN) +
                b.counter(MembershipCounter.COVERAGE_REPORTS_WRITTEN), 10_000, a::log);
            assertEquals(waiting, status(cluster).transition(), "nobody advances a transition without the key");

            MembershipTestSupport.delete(raw, key);
            awaitReconciler(all);
            awaitInstalled(all, 2, desired);
        }
    }

    @Test
    @Timeout(60)
    @Execution(ExecutionMode.CONCURRENT)
    void shouldRetryItsEtcdWritesWithBackoffWhileEtcdStallsAndThenFinish() throws Exception
    {
        final ShardPlacement desired = ShardPlacement.parse("a,b", 2);
        try (EtcdCluster own = EtcdCluster.start(1);
            Joined a = MembershipTestSupport.join(MembershipTestSupport.settings(own.endpoints(), cluster("stall"), "a",
                "b", 1, MembershipConfiguration.MAX_SHARD_MOVES), null);
            EtcdGateway ownAdmin = new EtcdGateway(own.endpoints(), 2_000, SystemCounterFamilies.inMemory()))
        {
            awaitReconciler(List.of(a));
            PlacementAdmin.setDesired(ownAdmin, a.clusterName, desired);
            await(() -> a.log().contains("reconciler waits for coverage"), 10_000, a::log);

            // stall etcd right after an acknowledged keepalive, for less than the registration's validity
            final long acked = a.counter(MembershipCounter.KEEPALIVES_ACKED);
            await(() -> a.counter(MembershipCounter.KEEPALIVES_ACKED) > acked, 10_000, a::log);
            EtcdCluster.signal(own.member(0).pid(), "STOP");
            try
            {
                a.membership.reportCoverage(coverage(2, "a", allShards()));
                await(() -> a.counter(MembershipCounter.RECONCILER_STEP_RETRIES) >= 1, 10_000, a::log);
            }
            finally
            {
                EtcdCluster.signal(own.member(0).pid(), "CONT");
            }
            assertTrue(a.log().contains("placement agent: etcd call failed, retrying in 100 ms"), a::log);
            awaitInstalled(List.of(a), 2, desired);
            assertEquals(1, a.counter(MembershipCounter.COVERAGE_REPORTS_WRITTEN));
            assertEquals(FenceCause.NONE, a.membership.fenceCause());
        }
    }
}
