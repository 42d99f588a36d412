package io.orbitkv.manager.membership;

import io.etcd.jetcd.Watch;
import io.etcd.jetcd.common.exception.CompactedException;
import io.etcd.jetcd.watch.WatchEvent;
import io.etcd.jetcd.watch.WatchResponse;
import io.orbitkv.manager.status.CounterDescriptor;
import io.orbitkv.manager.status.SystemCounters;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.TreeMap;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * Keeps the member view: a paged snapshot at one revision, then a Watch from the next revision over the whole
 * cluster prefix. jetcd delivers watch callbacks on its own threads; they only offer to a bounded queue that this
 * agent drains, so all view state has one writer. Reconnect, compaction, a malformed or oversized record, more
 * than 4,096 members or a full queue invalidate the view (counted by cause) and trigger a fresh snapshot.
 *
 * <p>Choice where the design is silent: a snapshot skips (and counts) malformed and oversized records rather
 * than refusing to complete, so one bad writer cannot disable remote work for the whole cluster; only the events
 * that carry such a record invalidate the view. Exceeding 4,096 members keeps the view incomplete until the
 * count drops.
 *
 * <p>Placement: the view carries the {@link PlacementState} of the installed placement key and the transition key,
 * read by the snapshot and then followed by the watch (both keys of one revision applied together). A later generation
 * replaces the installed one; an unreadable record, a lower generation, another placement under the same generation
 * or a transition that does not start at the installed generation is refused (counted, logged) and the last state
 * kept; deleting the installed placement fences the incarnation ({@link FenceCause#PLACEMENT_CHANGED}). Events on
 * any placement key, the reconciler key or a coverage report wake the {@link PlacementAgent}.
 */
final class MemberViewKeeper implements Agent
{
    private static final int DRAIN_LIMIT = 64;

    private final Membership membership;
    private final DueTimeIdleStrategy idle;
    private final EtcdGateway etcd;
    private final NanoClock clock;
    private final String clusterPrefix;
    private final String membersPrefix;
    private final String placementKey;
    private final String desiredKey;
    private final String transitionKey;
    private final String reconcilerKey;
    private final String coveragePrefix;
    private final String ownNodeId;
    private final PlacementAgent placementAgent;
    private final ManyToOneConcurrentArrayQueue<WatchItem> queue =
        new ManyToOneConcurrentArrayQueue<>(MembershipConfiguration.WATCH_QUEUE_CAPACITY);
    private final SystemCounters counters;
    private final AtomicCounter snapshots;
    private final AtomicCounter snapshotPages;
    private final AtomicCounter watchEvents;
    private final AtomicCounter recordsRejected;
    private final AtomicCounter placementRefused;

    private final TreeMap<String, MemberRecord> working = new TreeMap<>();
    private long revision;
    private boolean needSnapshot = true;
    private long retryAtNs;
    private long retryDelayNs = MembershipConfiguration.SNAPSHOT_RETRY_MIN_NS;
    private volatile long generation;
    private volatile long overflowedGeneration = -1;
    private Watch.Watcher watcher;
    private PlacementRecord.Generational installed;
    private PlacementTransition transition;
    private PlacementState placementState;

    MemberViewKeeper(final Membership membership, final DueTimeIdleStrategy idle, final PlacementAgent placementAgent)
    {
        this.placementAgent = placementAgent;
        this.membership = membership;
        this.idle = idle;
        this.etcd = membership.etcd();
        this.clock = membership.clock();
        final String cluster = membership.settings().clusterName();
        this.clusterPrefix = MembershipConfiguration.clusterPrefix(cluster);
        this.membersPrefix = MembershipConfiguration.membersPrefix(cluster);
        this.placementKey = MembershipConfiguration.placementKey(cluster);
        this.desiredKey = MembershipConfiguration.placementDesiredKey(cluster);
        this.transitionKey = MembershipConfiguration.placementTransitionKey(cluster);
        this.reconcilerKey = MembershipConfiguration.reconcilerKey(cluster);
        this.coveragePrefix = MembershipConfiguration.coveragePrefix(cluster);
        this.ownNodeId = membership.settings().nodeId();
        this.counters = membership.counters();
        this.snapshots = counters.get(MembershipCounter.SNAPSHOTS);
        this.snapshotPages = counters.get(MembershipCounter.SNAPSHOT_PAGES);
        this.watchEvents = counters.get(MembershipCounter.WATCH_EVENTS);
        this.recordsRejected = counters.get(MembershipCounter.RECORDS_REJECTED);
        this.placementRefused = counters.get(MembershipCounter.PLACEMENT_RECORDS_REFUSED);
    }

    /** One callback from jetcd: a response, an error, or the end of the stream. */
    private record WatchItem(long generation, WatchResponse response, Throwable error)
    {
    }

    public int doWork()
    {
        if (null == membership.incarnation() || membership.isClosed())
        {
            // Nothing to keep before the first registration; the lease keeper signals it.
            idle.dueAt(Long.MAX_VALUE);
            return 0;
        }
        final long nowNs = clock.nanoTime();
        int work = 0;
        if (needSnapshot)
        {
            if (nowNs - retryAtNs >= 0)
            {
                snapshot();
                work++;
            }
        }
        else
        {
            work += drain();
        }
        // Sleeps until the snapshot retry or the next watch callback (which signals); nothing here is periodic.
        idle.dueAt(needSnapshot ? retryAtNs : Long.MAX_VALUE);
        return work;
    }

    private int drain()
    {
        if (overflowedGeneration == generation)
        {
            invalidate(MembershipCounter.INVALIDATIONS_QUEUE_OVERFLOW, "watch queue overflow");
            return 1;
        }
        int drained = 0;
        boolean changed = false;
        WatchItem item;
        while (drained < DRAIN_LIMIT && null != (item = queue.poll()))
        {
            drained++;
            if (item.generation() != generation)
            {
                continue;
            }
            if (null != item.error())
            {
                if (isCompaction(item.error()))
                {
                    invalidate(MembershipCounter.INVALIDATIONS_COMPACTION,
                        "watch history compacted: " + item.error().getMessage());
                }
                else
                {
                    invalidate(MembershipCounter.INVALIDATIONS_RECONNECT,
                        "watch interrupted: " + item.error());
                }
                return drained;
            }
            if (null == item.response())
            {
                invalidate(MembershipCounter.INVALIDATIONS_RECONNECT, "watch stream ended");
                return drained;
            }
            final int applied = apply(item.response());
            if (applied < 0)
            {
                return drained;
            }
            changed |= applied > 0;
        }
        if (changed)
        {
            publishComplete();
        }
        return drained;
    }

    private static boolean isCompaction(final Throwable error)
    {
        for (Throwable t = error; null != t; t = t.getCause())
        {
            if (t instanceof CompactedException ||
                (null != t.getMessage() && t.getMessage().contains("compacted")))
            {
                return true;
            }
        }
        return false;
    }

    /**
     * Apply one watch response to the working set.
     *
     * @return events applied, or -1 if the view was invalidated.
     */
    private int apply(final WatchResponse response)
    {
        int applied = 0;
        // The events of one transaction (one revision) arrive in one response: the placement and transition keys
        // are applied together, so installing a target and deleting its transition is one state change.
        PlacementRecord.Generational nextInstalled = installed;
        PlacementTransition nextTransition = transition;
        for (final WatchEvent event : response.getEvents())
        {
            final String key = event.getKeyValue().getKey().toString(StandardCharsets.UTF_8);
            final long modRevision = event.getKeyValue().getModRevision();
            final boolean delete = WatchEvent.EventType.DELETE == event.getEventType();
            watchEvents.increment();
            if (key.startsWith(membersPrefix))
            {
                final String nodeId = key.substring(membersPrefix.length());
                if (delete)
                {
                    working.remove(nodeId);
                    final Incarnation current = membership.incarnation();
                    if (ownNodeId.equals(nodeId) && modRevision > current.registeredRevision())
                    {
                        // A deletion older than the current registration removed an earlier incarnation's record.
                        membership.fence(current, FenceCause.OWN_RECORD_REMOVED);
                    }
                }
                else
                {
                    final MemberRecord record;
                    try
                    {
                        record = MemberRecord.decode(key, event.getKeyValue().getValue().getBytes());
                    }
                    catch (final MemberRecord.RecordTooLargeException ex)
                    {
                        invalidate(MembershipCounter.INVALIDATIONS_RECORD_TOO_LARGE, ex.getMessage());
                        return -1;
                    }
                    catch (final MemberRecord.MalformedRecordException ex)
                    {
                        invalidate(MembershipCounter.INVALIDATIONS_MALFORMED, ex.getMessage());
                        return -1;
                    }
                    if (ownNodeId.equals(nodeId))
                    {
                        checkOwnEvent(record, event.getKeyValue().getLease(), modRevision);
                    }
                    working.put(nodeId, record);
                    if (working.size() > MembershipConfiguration.MAX_MEMBERS)
                    {
                        invalidate(MembershipCounter.INVALIDATIONS_MEMBER_OVERFLOW,
                            "more than " + MembershipConfiguration.MAX_MEMBERS + " members");
                        return -1;
                    }
                }
            }
            else if (key.equals(placementKey))
            {
                placementAgent.placementKeysChanged();
                if (delete)
                {
                    membership.fence(membership.incarnation(), FenceCause.PLACEMENT_CHANGED);
                }
                else
                {
                    nextInstalled = acceptInstalled(nextInstalled, event.getKeyValue().getValue().getBytes(),
                        "at revision " + modRevision);
                }
            }
            else if (key.equals(transitionKey))
            {
                placementAgent.placementKeysChanged();
                if (delete)
                {
                    nextTransition = null;
                }
                else
                {
                    try
                    {
                        nextTransition = TransitionRecord.decode(event.getKeyValue().getValue().getBytes());
                    }
                    catch (final IllegalStateException ex)
                    {
                        refuse("transition record at revision " + modRevision + ": " + ex.getMessage());
                    }
                }
            }
            else if (key.equals(reconcilerKey))
            {
                if (delete)
                {
                    placementAgent.reconcilerKeyDeleted();
                }
                else
                {
                    placementAgent.reconcilerKeyPut(modRevision);
                }
            }
            else if (key.equals(desiredKey) || key.startsWith(coveragePrefix))
            {
                placementAgent.placementKeysChanged();
            }
            // Epoch counters and other keys under the cluster prefix do not change the view.
            if (modRevision > revision)
            {
                revision = modRevision;
            }
            applied++;
        }
        applyPlacement(nextInstalled, nextTransition, "watch at revision " + revision);
        return applied;
    }

    /**
     * An installed placement record, if it may follow the one applied: readable, and of a later generation (or the
     * same one, unchanged).
     *
     * @return the record to apply, or {@code current} when it is refused.
     */
    private PlacementRecord.Generational acceptInstalled(
        final PlacementRecord.Generational current, final byte[] bytes, final String where)
    {
        final PlacementRecord.Generational next;
        try
        {
            next = PlacementRecord.decodeGenerational(bytes);
        }
        catch (final IllegalStateException ex)
        {
            refuse("placement record " + where + ": " + ex.getMessage());
            return current;
        }
        if (null != current && (next.generation() < current.generation() ||
            (next.generation() == current.generation() && !next.placement().equals(current.placement()))))
        {
            refuse("placement record " + where + " of generation " + next.generation() + " (" +
                PlacementRecord.describe(next.placement()) + ") does not follow the applied generation " +
                current.generation());
            return current;
        }
        return next;
    }

    private void refuse(final String reason)
    {
        // Logged before it is counted: whoever sees the count finds the line.
        membership.log().println("orbitkv membership: refused " + reason + "; keeping placement " +
            (null == placementState ? "generation " + (null == installed ? "?" : installed.generation()) :
            describe(placementState)));
        placementRefused.increment();
    }

    /**
     * Apply an installed placement and transition read together: a transition must start at the installed
     * generation, else the pair is refused and the last state kept.
     */
    private void applyPlacement(
        final PlacementRecord.Generational nextInstalled, final PlacementTransition nextTransition, final String where)
    {
        if (null == nextInstalled || (nextInstalled == installed && nextTransition == transition))
        {
            return;
        }
        final PlacementState next;
        try
        {
            next = new PlacementState(nextInstalled.generation(), nextInstalled.placement(), nextTransition);
        }
        catch (final IllegalArgumentException ex)
        {
            refuse("placement state from " + where + ": " + ex.getMessage());
            return;
        }
        installed = nextInstalled;
        transition = nextTransition;
        if (!next.equals(placementState))
        {
            placementState = next;
            counters.get(MembershipCounter.PLACEMENT_GENERATION).setRelease(next.generation());
            counters.get(MembershipCounter.SHARD_MOVES_IN_FLIGHT)
                .setRelease(null == nextTransition ? 0 : nextTransition.inFlight());
            membership.log().println("orbitkv membership: placement now " + describe(next) + " (" + where + ")");
        }
    }

    static String describe(final PlacementState state)
    {
        final PlacementTransition t = state.transition();
        return "generation " + state.generation() + " " + PlacementRecord.describe(state.placement()) +
            (null == t ? ", stable" : ", transition " + t.fromGeneration() + " -> " + t.toGeneration() + " to " +
            PlacementRecord.describe(t.target()) + ", moves " + t.phases());
    }

    /**
     * A watched write of the own member key. The current incarnation's own record must match it exactly; a record
     * of a runtime this process is registering is its own write in flight; a write older than the current
     * registration is about an earlier incarnation; anything else means the node id now speaks for someone else.
     */
    private void checkOwnEvent(final MemberRecord record, final long leaseId, final long modRevision)
    {
        final Incarnation current = membership.incarnation();
        if (record.runtimeUuid().equals(current.runtimeUuid()))
        {
            checkOwnBinding(current, record, leaseId);
        }
        else if (!membership.isOwnRuntime(record.runtimeUuid()) && modRevision > current.registeredRevision())
        {
            membership.fence(current, FenceCause.BINDING_CHANGED);
        }
    }

    private void checkOwnBinding(final Incarnation incarnation, final MemberRecord record, final long leaseId)
    {
        final MemberRecord own = incarnation.record();
        if (record.epoch() != own.epoch() || !record.runtimeUuid().equals(own.runtimeUuid()) ||
            record.leaseId() != incarnation.leaseId() || leaseId != incarnation.leaseId())
        {
            membership.fence(incarnation, FenceCause.BINDING_CHANGED);
        }
    }

    private void snapshot()
    {
        // Evidence from this snapshot can only be about the incarnation current before it was read: a later one
        // registered at a revision the snapshot may not include.
        final Incarnation observed = membership.incarnation();
        closeWatcher();
        generation++;
        queue.clear();
        snapshots.increment();
        final MemberSnapshot snapshot;
        try
        {
            snapshot = MemberSnapshot.read(etcd, membership.settings().clusterName(), snapshotPages);
        }
        catch (final MemberSnapshot.MemberOverflowException ex)
        {
            snapshotFailed(ex.getMessage());
            counters.get(MembershipCounter.INVALIDATIONS_MEMBER_OVERFLOW).increment();
            return;
        }
        catch (final RuntimeException ex)
        {
            snapshotFailed("snapshot failed: " + ex.getMessage());
            return;
        }

        if (!snapshot.rejected().isEmpty())
        {
            recordsRejected.getAndAdd(snapshot.rejected().size());
            membership.log().println("orbitkv membership: snapshot at revision " + snapshot.revision() +
                " skipped " + snapshot.rejected().size() + " invalid member record(s): " + snapshot.rejected());
        }
        if (null == placementState && null != membership.adoptedPlacement())
        {
            installed = membership.adoptedPlacement();
            transition = null;
            placementState = installed.asState();
            counters.get(MembershipCounter.PLACEMENT_GENERATION).setRelease(installed.generation());
        }
        if (null == snapshot.placement() && null == snapshot.placementError())
        {
            membership.fence(observed, FenceCause.PLACEMENT_CHANGED);
        }
        PlacementRecord.Generational nextInstalled = installed;
        if (null != snapshot.placementError())
        {
            refuse("placement record in the snapshot at revision " + snapshot.revision() + ": " +
                snapshot.placementError());
        }
        else if (null != snapshot.placement())
        {
            nextInstalled = acceptInstalled(installed, PlacementRecord.encode(snapshot.placement(),
                snapshot.generation()), "in the snapshot at revision " + snapshot.revision());
        }
        PlacementTransition nextTransition = snapshot.transition();
        if (null != snapshot.transitionError())
        {
            refuse("transition record in the snapshot at revision " + snapshot.revision() + ": " +
                snapshot.transitionError());
            nextTransition = transition;
        }
        applyPlacement(nextInstalled, nextTransition, "snapshot at revision " + snapshot.revision());
        final MemberRecord own = snapshot.members().get(ownNodeId);
        if (null == own)
        {
            membership.fence(observed, FenceCause.OWN_RECORD_REMOVED);
        }
        else if (own.runtimeUuid().equals(observed.runtimeUuid()))
        {
            checkOwnBinding(observed, own, snapshot.leaseIds().get(ownNodeId));
        }
        else if (!membership.isOwnRuntime(own.runtimeUuid()))
        {
            membership.fence(observed, FenceCause.BINDING_CHANGED);
        }

        working.clear();
        working.putAll(snapshot.members());
        revision = snapshot.revision();
        needSnapshot = false;
        retryDelayNs = MembershipConfiguration.SNAPSHOT_RETRY_MIN_NS;
        publishComplete();
        // Events may have gone unseen while there was no complete view: the placement agent looks again.
        placementAgent.reconcilerKeyDeleted();
        placementAgent.placementKeysChanged();

        final Runnable hook = membership.beforeWatchHook();
        if (null != hook)
        {
            hook.run();
        }
        final long watchGeneration = generation;
        try
        {
            watcher = etcd.watch(clusterPrefix, revision + 1, new Watch.Listener()
            {
                public void onNext(final WatchResponse response)
                {
                    offer(new WatchItem(watchGeneration, response, null));
                }

                public void onError(final Throwable throwable)
                {
                    offer(new WatchItem(watchGeneration, null, throwable));
                }

                public void onCompleted()
                {
                    offer(new WatchItem(watchGeneration, null, null));
                }
            });
        }
        catch (final RuntimeException ex)
        {
            invalidate(MembershipCounter.INVALIDATIONS_RECONNECT, "cannot open watch: " + ex);
        }
    }

    private void offer(final WatchItem item)
    {
        if (!queue.offer(item))
        {
            overflowedGeneration = item.generation();
        }
        idle.signal();
    }

    private void snapshotFailed(final String reason)
    {
        membership.publish(membership.view().invalidated(reason));
        membership.updateGauges(clock.nanoTime());
        needSnapshot = true;
        retryAtNs = clock.nanoTime() + retryDelayNs;
        retryDelayNs = Math.min(retryDelayNs * 2, MembershipConfiguration.SNAPSHOT_RETRY_MAX_NS);
    }

    private void invalidate(final CounterDescriptor cause, final String reason)
    {
        // The incomplete view is published before the cause is counted: whoever sees the count sees the view.
        membership.publish(membership.view().invalidated(reason));
        membership.updateGauges(clock.nanoTime());
        counters.get(cause).increment();
        membership.log().println("orbitkv membership: view invalidated (" + cause.label() + "): " + reason +
            "; taking a fresh snapshot");
        closeWatcher();
        needSnapshot = true;
        retryAtNs = clock.nanoTime();
    }

    private void publishComplete()
    {
        final boolean wasComplete = membership.view().isComplete();
        final MemberView view = new MemberView(revision, true, Map.copyOf(working), placementState, null);
        membership.publish(view);
        membership.updateGauges(clock.nanoTime());
        if (!wasComplete)
        {
            membership.log().println("orbitkv membership: member view complete at revision " + revision + ": " +
                view.members().size() + " member(s), " + view.unavailableShards() + " of 16 shards unavailable, " +
                view.degradedShards() + " with fewer live copies than the " + placementState.target().replicas() + " asked");
        }
    }

    void closeWatcher()
    {
        final Watch.Watcher current = watcher;
        watcher = null;
        if (null != current)
        {
            try
            {
                current.close();
            }
            catch (final RuntimeException ignore)
            {
                // closing a broken stream may throw; the generation check drops its late callbacks anyway
            }
        }
    }

    public void onClose()
    {
        closeWatcher();
    }

    public String roleName()
    {
        return "orbitkv-member-view-keeper";
    }
}
