package io.orbitkv.manager.membership;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import io.orbitkv.codecs.ShardPlacement;
import io.orbitkv.codecs.StateKeyShard;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * The placement side of a Manager's membership, on a thread of its own. On every Manager it
 * <ol>
 *   <li>writes this node's newest {@link CoverageReport} to its coverage key under its own lease whenever it differs
 *   from the one last written (or the lease changed);</li>
 *   <li>campaigns for the reconciler key when it is absent (create-if-absent under the own lease); a loser waits
 *   for the view keeper to see the key's deletion;</li>
 *   <li>as the elected reconciler, and only while its incarnation is valid and the key is the one it wrote, reads the
 *   installed, desired and transition keys with the coverage reports in one transaction per round and takes the next
 *   step, each one transaction conditioned on the reconciler key it wrote and on the transition key's modRevision
 *   (or its absence), so a deposed reconciler's late step fails:
 *   <ul>
 *     <li>no transition and a desired generation above the installed one: install the desired placement at once when
 *     no shard's copies change, else write the planned transition;</li>
 *     <li>a desired generation above the transition's target while no move has switched: abandon (delete) the
 *     transition, and plan towards the newer one in the next round; once some move switched, the running transition
 *     finishes first;</li>
 *     <li>retire a move SWITCHED for {@link MembershipConfiguration#SWITCH_DWELL_MS} as this reconciler observed;
 *     switch a CAUGHT_UP move; mark a PREPARE move CAUGHT_UP with its handoff watermarks when every copy it adds has
 *     reported the shard complete for the target generation; start the lowest PENDING move while fewer than
 *     {@code --max-shard-moves} are in flight;</li>
 *     <li>every move retired: install the target at its generation and delete the transition in one transaction.</li>
 *   </ul></li>
 * </ol>
 * The reconciler makes no block lookup or allocation and never looks at liveness: a move to a node that never
 * reports coverage waits (visible in {@code orbitkv placement status}). Every step is idempotent and derived from
 * etcd, so a reconciler that dies mid-move is replaced (its lease expires, the key goes, another Manager campaigns) and
 * the new one resumes. Nothing is periodic: it sleeps until a signal (watch events on the placement keys, a new
 * coverage report, a registration) or its next due time (a dwell ending, a retry after an etcd failure).
 */
final class PlacementAgent implements Agent
{
    private final Membership membership;
    private final DueTimeIdleStrategy idle;
    private final EtcdGateway etcd;
    private final NanoClock clock;
    private final String nodeId;
    private final String placementKey;
    private final String desiredKey;
    private final String transitionKey;
    private final String reconcilerKey;
    private final String coveragePrefix;
    private final String coverageKey;
    private final int maxShardMoves;
    private final long dwellNs = TimeUnit.MILLISECONDS.toNanos(MembershipConfiguration.SWITCH_DWELL_MS);
    private final AtomicCounter electionsWon;
    private final AtomicCounter transitionsPlanned;
    private final AtomicCounter transitionsCompleted;
    private final AtomicCounter transitionsAbandoned;
    private final AtomicCounter movesStarted;
    private final AtomicCounter movesCompleted;
    private final AtomicCounter recordsRefused;
    private final AtomicCounter reconcilerGauge;
    private final AtomicCounter coverageWritten;
    private final AtomicCounter retries;

    private volatile boolean keysChanged = true;
    private volatile boolean campaignDue = true;
    private volatile boolean leader;
    private volatile long reconcilerPutRevision;
    private boolean roundDue;
    private long leaderLeaseId;
    private long leaderKeyRevision;
    private String lastHolder;
    private CoverageReport writtenReport;
    private long writtenLeaseId;
    private long retryAtNs;
    private long retryDelayNs = MembershipConfiguration.PLACEMENT_RETRY_MIN_NS;
    private long dwellGeneration;
    private final boolean[] switchSeen = new boolean[StateKeyShard.SHARD_COUNT];
    private final long[] switchSeenNs = new long[StateKeyShard.SHARD_COUNT];
    private long dwellDueNs = Long.MAX_VALUE;
    private String lastWaiting;
    private long lastRefusedRevision;
    private long deferredDesired;

    PlacementAgent(final Membership membership, final DueTimeIdleStrategy idle)
    {
        this.membership = membership;
        this.idle = idle;
        this.etcd = membership.etcd();
        this.clock = membership.clock();
        final String cluster = membership.settings().clusterName();
        this.nodeId = membership.settings().nodeId();
        this.placementKey = MembershipConfiguration.placementKey(cluster);
        this.desiredKey = MembershipConfiguration.placementDesiredKey(cluster);
        this.transitionKey = MembershipConfiguration.placementTransitionKey(cluster);
        this.reconcilerKey = MembershipConfiguration.reconcilerKey(cluster);
        this.coveragePrefix = MembershipConfiguration.coveragePrefix(cluster);
        this.coverageKey = MembershipConfiguration.coverageKey(cluster, nodeId);
        this.maxShardMoves = membership.settings().maxShardMoves();
        final var counters = membership.counters();
        this.electionsWon = counters.get(MembershipCounter.RECONCILER_ELECTIONS_WON);
        this.transitionsPlanned = counters.get(MembershipCounter.TRANSITIONS_PLANNED);
        this.transitionsCompleted = counters.get(MembershipCounter.TRANSITIONS_COMPLETED);
        this.transitionsAbandoned = counters.get(MembershipCounter.TRANSITIONS_ABANDONED);
        this.movesStarted = counters.get(MembershipCounter.SHARD_MOVES_STARTED);
        this.movesCompleted = counters.get(MembershipCounter.SHARD_MOVES_COMPLETED);
        this.recordsRefused = counters.get(MembershipCounter.PLACEMENT_RECORDS_REFUSED);
        this.reconcilerGauge = counters.get(MembershipCounter.RECONCILER);
        this.coverageWritten = counters.get(MembershipCounter.COVERAGE_REPORTS_WRITTEN);
        this.retries = counters.get(MembershipCounter.RECONCILER_STEP_RETRIES);
    }

    /** The view keeper saw an event on a placement key, the reconciler key or a coverage report (any thread). */
    void placementKeysChanged()
    {
        keysChanged = true;
        idle.signal();
    }

    /**
     * The view keeper saw the reconciler key written (any thread): only a reconciler whose key it is not has to look.
     *
     * @param modRevision the write's revision.
     */
    void reconcilerKeyPut(final long modRevision)
    {
        reconcilerPutRevision = modRevision;
        idle.signal();
    }

    /** The reconciler key may be absent: campaign (any thread). */
    void reconcilerKeyDeleted()
    {
        campaignDue = true;
        idle.signal();
    }

    boolean isLeader()
    {
        return leader;
    }

    public int doWork()
    {
        final Incarnation incarnation = membership.incarnation();
        if (membership.isClosed() || null == incarnation)
        {
            idle.dueAt(Long.MAX_VALUE);
            return 0;
        }
        final long nowNs = clock.nanoTime();
        if (nowNs - retryAtNs < 0)
        {
            idle.dueAt(retryAtNs);
            return 0;
        }
        if (Membership.STATE_REGISTERED != membership.registrationState() ||
            FenceCause.NONE != incarnation.fenceCause() || !incarnation.validity().isValid(nowNs))
        {
            // A lapsed or fenced registration: nothing here speaks for the node until a new incarnation registers
            // (which signals). A reconciler steps down; its key goes with its lease.
            stepDown("this node's registration is not valid");
            campaignDue = true;
            idle.dueAt(Long.MAX_VALUE);
            return 0;
        }
        if (!membership.view().isComplete())
        {
            // Acts on a complete view only; the view keeper signals once it publishes one.
            idle.dueAt(Long.MAX_VALUE);
            return 0;
        }
        if (keysChanged)
        {
            keysChanged = false;
            roundDue = true;
        }
        final long putRevision = reconcilerPutRevision;
        if (leader && putRevision > leaderKeyRevision)
        {
            roundDue = true;
        }
        int work = 0;
        try
        {
            work += writeCoverage(incarnation);
            if (leader && incarnation.leaseId() != leaderLeaseId)
            {
                stepDown("this node registered a new incarnation");
                campaignDue = true;
            }
            if (campaignDue)
            {
                work += campaign(incarnation);
            }
            if (leader && (roundDue || nowNs - dwellDueNs >= 0))
            {
                work += reconcile(incarnation);
            }
            retryDelayNs = MembershipConfiguration.PLACEMENT_RETRY_MIN_NS;
        }
        catch (final RuntimeException ex)
        {
            // Each report is logged before it is counted or published: whoever sees the effect finds the line.
            membership.log().println("orbitkv membership: placement agent: etcd call failed, retrying in " +
                TimeUnit.NANOSECONDS.toMillis(retryDelayNs) + " ms: " + ex.getMessage());
            retries.increment();
            retryAtNs = clock.nanoTime() + retryDelayNs;
            retryDelayNs = Math.min(retryDelayNs * 2, MembershipConfiguration.PLACEMENT_RETRY_MAX_NS);
            roundDue = true;
            idle.dueAt(retryAtNs);
            return 1;
        }
        idle.dueAt(leader ? dwellDueNs : Long.MAX_VALUE);
        return work;
    }

    private int writeCoverage(final Incarnation incarnation)
    {
        final CoverageReport report = membership.coverageReport();
        if (null == report || (report.equals(writtenReport) && writtenLeaseId == incarnation.leaseId()))
        {
            return 0;
        }
        final byte[] value = new CoverageRecord(report, incarnation.runtimeUuid()).encode();
        etcd.txn(new Cmp[0], new Op[]{Op.put(EtcdGateway.bytes(coverageKey), EtcdGateway.bytes(value),
            PutOption.builder().withLeaseId(incarnation.leaseId()).build())}, new Op[0]);
        writtenReport = report;
        writtenLeaseId = incarnation.leaseId();
        coverageWritten.increment();
        return 1;
    }

    private int campaign(final Incarnation incarnation)
    {
        final byte[] identity = new ReconcilerRecord(nodeId, incarnation.runtimeUuid()).encode();
        final ByteSequence key = EtcdGateway.bytes(reconcilerKey);
        // Cleared before the call, so a deletion seen meanwhile asks again; set again if the call fails.
        campaignDue = false;
        final TxnResponse response;
        try
        {
            response = etcd.txn(
                new Cmp[]{new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(0))},
                new Op[]{Op.put(key, EtcdGateway.bytes(identity),
                    PutOption.builder().withLeaseId(incarnation.leaseId()).build())},
                new Op[]{Op.get(key, GetOption.DEFAULT)});
        }
        catch (final RuntimeException ex)
        {
            campaignDue = true;
            throw ex;
        }
        if (response.isSucceeded())
        {
            electionsWon.increment();
            becomeLeader(incarnation, response.getHeader().getRevision(), "won the election");
            return 1;
        }
        final var kvs = response.getGetResponses().get(0).getKvs();
        if (kvs.isEmpty())
        {
            // Deleted between the compare and the read: try again at once.
            campaignDue = true;
            return 1;
        }
        final KeyValue kv = kvs.get(0);
        if (leader && kv.getModRevision() == leaderKeyRevision)
        {
            // Still the key this node won (a fresh snapshot asks again): nothing changes.
            return 0;
        }
        if (kv.getLease() == incarnation.leaseId() && Arrays.equals(kv.getValue().getBytes(), identity))
        {
            // An earlier campaign of this incarnation whose outcome was unknown did commit: the key is ours.
            becomeLeader(incarnation, kv.getModRevision(), "holds the key it wrote");
            return 1;
        }
        stepDown("another node holds the reconciler key");
        final String holder = kv.getValue().toString(StandardCharsets.UTF_8);
        if (!holder.equals(lastHolder))
        {
            lastHolder = holder;
            membership.log().println("orbitkv membership: placement reconciler is " + holder +
                "; this node waits for the key to go");
        }
        return 1;
    }

    private void becomeLeader(final Incarnation incarnation, final long keyRevision, final String how)
    {
        membership.log().println("orbitkv membership: node '" + nodeId + "' is the placement reconciler (" + how +
            ", key revision " + keyRevision + ", lease " + Long.toHexString(incarnation.leaseId()) + ")");
        leaderLeaseId = incarnation.leaseId();
        leaderKeyRevision = keyRevision;
        lastHolder = null;
        roundDue = true;
        dwellGeneration = 0;
        leader = true;
    }

    private void stepDown(final String reason)
    {
        if (!leader)
        {
            return;
        }
        membership.log().println("orbitkv membership: node '" + nodeId + "' is no longer the placement reconciler: " +
            reason);
        reconcilerGauge.setRelease(0);
        leader = false;
        dwellDueNs = Long.MAX_VALUE;
    }

    /** What one round read, at one revision. */
    private record Round(
        KeyValue installedKv,
        PlacementRecord.Generational installed,
        PlacementRecord.Generational desired,
        KeyValue transitionKv,
        PlacementTransition transition,
        Map<String, CoverageRecord> coverage)
    {
    }

    private int reconcile(final Incarnation incarnation)
    {
        roundDue = false;
        final Round round = read();
        if (null == round)
        {
            return 1;
        }
        // Set once the first round as reconciler has read the keys (and again after each): whoever sees it sees a
        // reconciler that has looked at the cluster.
        reconcilerGauge.setRelease(1);
        final long nowNs = clock.nanoTime();
        final PlacementTransition t = round.transition();
        final long installedGeneration = round.installed().generation();
        if (null == t)
        {
            dwellDueNs = Long.MAX_VALUE;
            final PlacementRecord.Generational desired = round.desired();
            if (null == desired || desired.generation() <= installedGeneration)
            {
                return 0;
            }
            final PlacementTransition plan = PlacementTransition.plan(
                installedGeneration, round.installed().placement(), desired.generation(), desired.placement());
            if (plan.moveList().isEmpty())
            {
                if (step(round, new Op[]{putInstalled(desired.placement(), desired.generation())}, "installed " +
                    "generation " + desired.generation() + " at once (no shard's copies change): " +
                    PlacementRecord.describe(desired.placement())))
                {
                    transitionsPlanned.increment();
                    transitionsCompleted.increment();
                }
                return 1;
            }
            if (step(round, new Op[]{putTransition(plan)}, "planned transition " + installedGeneration + " -> " +
                desired.generation() + " to " + PlacementRecord.describe(desired.placement()) + ", moving shards " +
                plan.phases().keySet()))
            {
                transitionsPlanned.increment();
            }
            return 1;
        }

        if (t.fromGeneration() != installedGeneration)
        {
            if (step(round, new Op[]{deleteTransition()}, "abandoned transition " + t.fromGeneration() + " -> " +
                t.toGeneration() + ": it does not start at the installed generation " + installedGeneration))
            {
                transitionsAbandoned.increment();
            }
            return 1;
        }
        final PlacementRecord.Generational desired = round.desired();
        if (null != desired && desired.generation() > t.toGeneration() && !t.anySwitched())
        {
            if (step(round, new Op[]{deleteTransition()}, "abandoned transition " + t.fromGeneration() + " -> " +
                t.toGeneration() + " (no shard switched) for the newer desired generation " + desired.generation()))
            {
                transitionsAbandoned.increment();
            }
            return 1;
        }
        if (null != desired && desired.generation() > t.toGeneration() && desired.generation() != deferredDesired)
        {
            deferredDesired = desired.generation();
            membership.log().println("orbitkv membership: reconciler: desired generation " + desired.generation() +
                " waits for transition " + t.fromGeneration() + " -> " + t.toGeneration() + " to finish (shards " +
                "switched already: " + switchedShards(t) + ")");
        }
        if (t.isDone())
        {
            if (step(round, new Op[]{putInstalled(t.target(), t.toGeneration()), deleteTransition()},
                "completed transition " + t.fromGeneration() + " -> " + t.toGeneration() + ": installed " +
                PlacementRecord.describe(t.target())))
            {
                transitionsCompleted.increment();
            }
            return 1;
        }
        return advance(round, t, nowNs);
    }

    private static String switchedShards(final PlacementTransition t)
    {
        final StringBuilder shards = new StringBuilder();
        for (final ShardMove move : t.moveList())
        {
            if (move.phase().queriesSwitched())
            {
                shards.append(shards.isEmpty() ? "" : ",").append(move.shard());
            }
        }
        return shards.toString();
    }

    private int advance(final Round round, final PlacementTransition t, final long nowNs)
    {
        if (dwellGeneration != t.toGeneration())
        {
            dwellGeneration = t.toGeneration();
            Arrays.fill(switchSeen, false);
        }
        long dueNs = Long.MAX_VALUE;
        ShardMove retire = null;
        ShardMove toSwitch = null;
        ShardMove caughtUp = null;
        ShardMove toStart = null;
        final StringBuilder waiting = new StringBuilder();
        for (final ShardMove move : t.moveList())
        {
            final int s = move.shard();
            switch (move.phase())
            {
                case SWITCHED:
                    if (!switchSeen[s])
                    {
                        switchSeen[s] = true;
                        switchSeenNs[s] = nowNs;
                    }
                    if (nowNs - (switchSeenNs[s] + dwellNs) >= 0)
                    {
                        retire = null == retire ? move.advance(MovePhase.RETIRED, Map.of()) : retire;
                    }
                    else
                    {
                        dueNs = Math.min(dueNs, switchSeenNs[s] + dwellNs);
                    }
                    break;
                case CAUGHT_UP:
                    toSwitch = null == toSwitch ? move.advance(MovePhase.SWITCHED, Map.of()) : toSwitch;
                    break;
                case PREPARE:
                    if (null == caughtUp)
                    {
                        final Map<String, Long> handoff = handoff(round, t, s, waiting);
                        caughtUp = null == handoff ? null : move.advance(MovePhase.CAUGHT_UP, handoff);
                    }
                    break;
                case PENDING:
                    toStart = null == toStart && t.inFlight() < maxShardMoves ?
                        move.advance(MovePhase.PREPARE, Map.of()) : toStart;
                    break;
                default:
                    break;
            }
        }
        dwellDueNs = dueNs;
        final String name = "transition " + t.fromGeneration() + " -> " + t.toGeneration() + ": shard ";
        if (null != retire)
        {
            if (step(round, new Op[]{putTransition(t.with(retire))}, name + retire.shard() + " SWITCHED -> RETIRED"))
            {
                movesCompleted.increment();
            }
            return 1;
        }
        if (null != toSwitch)
        {
            if (step(round, new Op[]{putTransition(t.with(toSwitch))}, name + toSwitch.shard() +
                " CAUGHT_UP -> SWITCHED"))
            {
                switchSeen[toSwitch.shard()] = true;
                switchSeenNs[toSwitch.shard()] = clock.nanoTime();
                dwellDueNs = Math.min(dwellDueNs, switchSeenNs[toSwitch.shard()] + dwellNs);
            }
            return 1;
        }
        if (null != caughtUp)
        {
            step(round, new Op[]{putTransition(t.with(caughtUp))}, name + caughtUp.shard() +
                " PREPARE -> CAUGHT_UP, handoff " + caughtUp.handoff());
            return 1;
        }
        if (null != toStart)
        {
            if (step(round, new Op[]{putTransition(t.with(toStart))}, name + toStart.shard() + " PENDING -> PREPARE (" +
                (t.inFlight() + 1) + " of at most " + maxShardMoves + " in flight)"))
            {
                movesStarted.increment();
            }
            return 1;
        }
        final String text = waiting.toString();
        if (!text.isEmpty() && !text.equals(lastWaiting))
        {
            membership.log().println("orbitkv membership: reconciler waits for coverage: " + text.trim());
        }
        lastWaiting = text;
        return 0;
    }

    /**
     * The handoff watermarks of a PREPARE move, or null while some copy it adds has not reported the shard complete
     * for the target generation: per owner node, the smallest sequence over the added copies (an owner a copy does
     * not list counts as 0 there).
     */
    private Map<String, Long> handoff(final Round round, final PlacementTransition t, final int shard,
        final StringBuilder waiting)
    {
        final Set<String> added = copies(t.target(), shard);
        added.removeAll(copies(round.installed().placement(), shard));
        final List<Map<String, Long>> reports = new ArrayList<>(added.size());
        final Set<String> owners = new TreeSet<>();
        for (final String node : added)
        {
            final CoverageRecord record = round.coverage().get(node);
            final Map<String, Long> watermarks = null == record || record.report().generation() != t.toGeneration() ?
                null : record.report().completeShards().get(shard);
            if (null == watermarks)
            {
                waiting.append("shard ").append(shard).append(" on '").append(node).append("' ");
                return null;
            }
            reports.add(watermarks);
            owners.addAll(watermarks.keySet());
        }
        final Map<String, Long> handoff = new TreeMap<>();
        for (final String owner : owners)
        {
            long min = Long.MAX_VALUE;
            for (final Map<String, Long> watermarks : reports)
            {
                min = Math.min(min, watermarks.getOrDefault(owner, 0L));
            }
            handoff.put(owner, min);
        }
        return handoff;
    }

    static Set<String> copies(final ShardPlacement placement, final int shard)
    {
        final Set<String> copies = new LinkedHashSet<>();
        for (int r = 0; r < placement.replicaCount(); r++)
        {
            copies.add(placement.replicaOf(shard, r));
        }
        return copies;
    }

    /**
     * Read the placement keys, the reconciler key and the coverage reports in one transaction (one revision).
     *
     * @return what was read, or null when this node is no longer the reconciler or no round is possible.
     */
    private Round read()
    {
        final GetOption one = GetOption.DEFAULT;
        final TxnResponse response = etcd.txn(new Cmp[0], new Op[]{
            Op.get(EtcdGateway.bytes(reconcilerKey), one),
            Op.get(EtcdGateway.bytes(placementKey), one),
            Op.get(EtcdGateway.bytes(desiredKey), one),
            Op.get(EtcdGateway.bytes(transitionKey), one),
            Op.get(EtcdGateway.bytes(coveragePrefix), GetOption.builder().isPrefix(true).build())}, new Op[0]);
        final var gets = response.getGetResponses();
        final KeyValue reconcilerKv = first(gets.get(0));
        if (null == reconcilerKv || reconcilerKv.getModRevision() != leaderKeyRevision)
        {
            stepDown("the reconciler key is " + (null == reconcilerKv ? "gone" : "another one now"));
            campaignDue = null == reconcilerKv;
            return null;
        }
        final long revision = response.getHeader().getRevision();
        final KeyValue installedKv = first(gets.get(1));
        if (null == installedKv)
        {
            return null;
        }
        final PlacementRecord.Generational installed;
        try
        {
            installed = PlacementRecord.decodeGenerational(installedKv.getValue().getBytes());
        }
        catch (final IllegalStateException ex)
        {
            refused(revision, "installed placement: " + ex.getMessage());
            return null;
        }
        PlacementRecord.Generational desired = null;
        final KeyValue desiredKv = first(gets.get(2));
        if (null != desiredKv)
        {
            try
            {
                desired = PlacementRecord.decodeGenerational(desiredKv.getValue().getBytes());
            }
            catch (final IllegalStateException ex)
            {
                refused(revision, "desired placement (ignored): " + ex.getMessage());
            }
        }
        final KeyValue transitionKv = first(gets.get(3));
        PlacementTransition transition = null;
        if (null != transitionKv)
        {
            try
            {
                transition = TransitionRecord.decode(transitionKv.getValue().getBytes());
            }
            catch (final IllegalStateException ex)
            {
                refused(revision, "placement transition (no step until it is fixed or deleted): " + ex.getMessage());
                return null;
            }
        }
        final Map<String, CoverageRecord> coverage = new HashMap<>();
        for (final KeyValue kv : gets.get(4).getKvs())
        {
            final String node = kv.getKey().toString(StandardCharsets.UTF_8).substring(coveragePrefix.length());
            try
            {
                coverage.put(node, CoverageRecord.decode(kv.getValue().getBytes()));
            }
            catch (final IllegalStateException ex)
            {
                refused(revision, "coverage report of '" + node + "' (ignored): " + ex.getMessage());
            }
        }
        return new Round(installedKv, installed, desired, transitionKv, transition, coverage);
    }

    private void refused(final long revision, final String what)
    {
        if (revision != lastRefusedRevision)
        {
            lastRefusedRevision = revision;
            membership.log().println("orbitkv membership: reconciler refused the " + what);
            recordsRefused.increment();
        }
    }

    private static KeyValue first(final GetResponse response)
    {
        return response.getKvs().isEmpty() ? null : response.getKvs().get(0);
    }

    /**
     * One step: a transaction on the reconciler key this node wrote, the installed placement as read and the
     * transition key as read (its modRevision, or its absence).
     *
     * @return whether it committed; when it did not, the next round reads again.
     */
    private boolean step(final Round round, final Op[] ops, final String what)
    {
        final ByteSequence transition = EtcdGateway.bytes(transitionKey);
        final Cmp transitionAsRead = null == round.transitionKv() ?
            new Cmp(transition, Cmp.Op.EQUAL, CmpTarget.createRevision(0)) :
            new Cmp(transition, Cmp.Op.EQUAL, CmpTarget.modRevision(round.transitionKv().getModRevision()));
        final TxnResponse response = etcd.txn(new Cmp[]{
            new Cmp(EtcdGateway.bytes(reconcilerKey), Cmp.Op.EQUAL, CmpTarget.modRevision(leaderKeyRevision)),
            new Cmp(EtcdGateway.bytes(placementKey), Cmp.Op.EQUAL,
                CmpTarget.modRevision(round.installedKv().getModRevision())),
            transitionAsRead}, ops, new Op[0]);
        roundDue = true;
        if (!response.isSucceeded())
        {
            retries.increment();
            return false;
        }
        lastWaiting = null;
        membership.log().println("orbitkv membership: reconciler: " + what);
        return true;
    }

    private Op putInstalled(final ShardPlacement placement, final long generation)
    {
        return Op.put(EtcdGateway.bytes(placementKey), EtcdGateway.bytes(PlacementRecord.encode(placement, generation)),
            PutOption.DEFAULT);
    }

    private Op putTransition(final PlacementTransition transition)
    {
        return Op.put(EtcdGateway.bytes(transitionKey), EtcdGateway.bytes(TransitionRecord.encode(transition)),
            PutOption.DEFAULT);
    }

    private Op deleteTransition()
    {
        return Op.delete(EtcdGateway.bytes(transitionKey), DeleteOption.DEFAULT);
    }

    public void onClose()
    {
        // A closing Manager revokes its lease next, which deletes the reconciler key.
        reconcilerGauge.setRelease(0);
        leader = false;
    }

    public String roleName()
    {
        return "orbitkv-placement-agent";
    }
}
