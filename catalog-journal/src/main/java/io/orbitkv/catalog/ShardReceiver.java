package io.orbitkv.catalog;

import io.orbitkv.index.CandidateSet;
import io.orbitkv.index.CatalogRecordTable;
import io.orbitkv.index.NamespaceTable;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Catalog-host state for one (owner node, shard): the owner's current incarnation, the applied view of its stream,
 * contiguous progress, gap repair and snapshot installation, accounted against the host's {@link HostBudget}.
 * <p>
 * Modes:
 * <ul>
 *     <li>NO_BASELINE: nothing applied for this incarnation. A delta with sequence 1 is a baseline by itself (an
 *     incarnation's stream starts from an empty inventory at sequence 0); any later first sequence is a gap from 1,
 *     repaired from the owner's journal or, if the owner has dropped it, by snapshot. This is how a restarted host
 *     gets a new baseline.</li>
 *     <li>STREAMING: deltas are deduplicated by sequence, applied in order, acked contiguously; a gap drops later
 *     records and raises a rate-limited repair request for (contiguous, first seen).</li>
 *     <li>RESYNC: the owner reported lost history, the view filled, or the budget refused growth. Deltas are refused
 *     until a snapshot installs; the old view answers queries as hints with incomplete coverage.</li>
 *     <li>SNAPSHOT: a replacement view is built privately from pages and the interval, with versions: the newest
 *     version of a (key, tier) wins, removals leave tombstones so an older page record cannot resurrect an evicted
 *     residency episode, equal versions with different content are counted conflicts. It is installed only when
 *     every page and the whole interval (start, end] arrived; then tombstones at or below the end watermark are
 *     purged, because the contiguous sequence itself now rejects every older event.</li>
 * </ul>
 * Only the current incarnation admitted from the member view is accepted; a retired incarnation's late evidence is
 * refused (STALE_INCARNATION) and can never be re-admitted; an unknown one is UNREGISTERED_PUBLISHER.
 * <p>
 * Before a snapshot is admitted the replacement view is reserved in the host budget; if old and new cannot both fit,
 * the old view (derived hints) is dropped and coverage is incomplete while rebuilding; if the new view alone cannot
 * fit the snapshot is refused (BUDGET_EXCEEDED). The budget is never exceeded. Single threaded; allocation only when
 * a view is created (snapshot admission, growth).
 */
public final class ShardReceiver
{
    public static final int DEFAULT_INITIAL_VIEW_RECORDS = 1024;
    public static final int DEFAULT_SNAPSHOT_HEADROOM_RECORDS = SnapshotCut.DEFAULT_MAX_INTERVAL_RECORDS;
    public static final long DEFAULT_REPAIR_INTERVAL_NS = 50_000_000L;
    public static final int MAX_RETIRED_INCARNATIONS = 8;

    /**
     * Keys one {@link #touchQueuedKeys()} brings into cache: a full delta batch.
     */
    public static final int MAX_TOUCH_KEYS = 256;

    public static final int NO_BASELINE = 0;
    public static final int STREAMING = 1;
    public static final int RESYNC = 2;
    public static final int SNAPSHOT = 3;

    public static final int APPLIED = 0;
    public static final int DUPLICATE = 1;
    public static final int GAP = 2;
    public static final int STALE_INCARNATION = 3;
    public static final int UNREGISTERED_PUBLISHER = 4;
    public static final int RESYNC_REQUIRED = 5;
    public static final int CONFLICT = 6;
    public static final int REJECTED_OLDER = 7;
    public static final int VIEW_FULL = 8;
    public static final int NAMESPACE_LIMIT = 9;
    public static final int BUDGET_EXCEEDED = 10;
    public static final int UNKNOWN_SNAPSHOT = 11;
    public static final int INCOMPLETE_SNAPSHOT = 12;

    private final int shard;
    private final int ownerNode;
    private final int[] touchHashCodes = new int[MAX_TOUCH_KEYS];
    private int touchCount;
    // Sum of the touched words: stored so the JIT cannot drop the loads as unused.
    private long touchSink;
    private final HostBudget budget;
    private final NamespaceTable namespaces;
    private final int initialViewRecords;
    private final int snapshotHeadroomRecords;
    private final UnsafeBuffer scratchHash = new UnsafeBuffer(new byte[64]);

    private boolean hasIncarnation;
    private long incarnationMsb;
    private long incarnationLsb;
    private final RetiredIncarnations retired = new RetiredIncarnations();

    private int mode = NO_BASELINE;
    private long contiguousSequence;
    private CatalogRecordTable liveView;
    private long liveViewBytes;

    private final GapRepair gap;
    private final VersionedApply versions;

    private final PendingSnapshot pending = new PendingSnapshot();

    private long deltasApplied;
    private long staleIncarnationRejections;
    private long unregisteredPublisherRejections;
    private long viewFullEvents;
    private long budgetRejections;
    private long hintsDropped;
    private long snapshotsInstalled;
    private long snapshotsAbandoned;
    private long resyncs;
    private long refusedAwaitingBaseline;

    public ShardReceiver(final int shard, final int ownerNode, final HostBudget budget, final NamespaceTable namespaces)
    {
        this(shard, ownerNode, budget, namespaces, DEFAULT_INITIAL_VIEW_RECORDS, DEFAULT_SNAPSHOT_HEADROOM_RECORDS,
            DEFAULT_REPAIR_INTERVAL_NS);
    }

    public ShardReceiver(
        final int shard,
        final int ownerNode,
        final HostBudget budget,
        final NamespaceTable namespaces,
        final int initialViewRecords,
        final int snapshotHeadroomRecords,
        final long repairIntervalNs)
    {
        this.shard = shard;
        this.ownerNode = ownerNode;
        this.budget = budget;
        this.namespaces = namespaces;
        this.initialViewRecords = initialViewRecords;
        this.snapshotHeadroomRecords = snapshotHeadroomRecords;
        this.gap = new GapRepair(repairIntervalNs);
        this.versions = new VersionedApply(namespaces);
    }

    /**
     * The member view shows this owner with an incarnation. A new incarnation retires the previous one and drops its
     * evidence; a retired incarnation can never come back.
     *
     * @return false when the incarnation was retired.
     */
    public boolean admitIncarnation(final long msb, final long lsb)
    {
        if (hasIncarnation && msb == incarnationMsb && lsb == incarnationLsb)
        {
            return true;
        }
        if (retired.contains(msb, lsb))
        {
            staleIncarnationRejections++;
            return false;
        }
        if (hasIncarnation)
        {
            retireCurrent();
        }
        hasIncarnation = true;
        incarnationMsb = msb;
        incarnationLsb = lsb;
        return true;
    }

    /**
     * The member left, expired or was fenced: retire its incarnation and drop its evidence.
     */
    public void dropMember()
    {
        if (hasIncarnation)
        {
            retireCurrent();
            hasIncarnation = false;
        }
    }

    /**
     * This host stops serving the shard: the view and any snapshot being built are freed and their bytes returned to
     * the budget. The receiver takes no more frames.
     */
    public void close()
    {
        abandonPending();
        releaseLiveView();
        hasIncarnation = false;
        mode = NO_BASELINE;
        gap.clear();
    }

    /**
     * Apply one delta record of the owner stream.
     *
     * @return an outcome constant.
     */
    public int onDelta(final long msb, final long lsb, final JournalRecord record)
    {
        final int admitted = checkIncarnation(msb, lsb);
        if (APPLIED != admitted)
        {
            return admitted;
        }
        if (RESYNC == mode || SNAPSHOT == mode)
        {
            refusedAwaitingBaseline++;
            return RESYNC_REQUIRED;
        }
        final long sequence = record.sequence();
        if (sequence <= contiguousSequence)
        {
            return versions.duplicate(liveView, record);
        }
        if (sequence > contiguousSequence + 1)
        {
            gap.onEarlySequence(sequence);
            return GAP;
        }
        if (null == liveView && !createLiveView(initialViewRecords))
        {
            enterResync();
            return BUDGET_EXCEEDED;
        }
        int outcome = versions.apply(liveView, record, true);
        if (VIEW_FULL == outcome)
        {
            if (!growLiveView())
            {
                viewFullEvents++;
                enterResync();
                return VIEW_FULL;
            }
            outcome = versions.apply(liveView, record, true);
        }
        if (NAMESPACE_LIMIT == outcome)
        {
            enterResync();
            return outcome;
        }
        mode = STREAMING;
        contiguousSequence = sequence;
        deltasApplied++;
        gap.onContiguous(contiguousSequence);
        return APPLIED;
    }

    /**
     * Queue a key of an incoming batch so {@link #touchQueuedKeys()} can bring its record into cache together with the
     * others (their cache misses overlap instead of being paid one by one while the batch is applied). Keys beyond
     * {@link #MAX_TOUCH_KEYS}, of an unknown namespace, of an invalid tier or of a tier the view holds nothing of are
     * skipped: this is only a hint.
     */
    public void queueTouch(
        final int tier,
        final DirectBuffer namespace,
        final int namespaceOffset,
        final int namespaceLength,
        final DirectBuffer hash,
        final int hashOffset,
        final int hashLength)
    {
        if (null == liveView || touchCount == touchHashCodes.length || tier < 0 ||
            tier >= CatalogRecordTable.TIER_COUNT || !liveView.holdsTier(tier))
        {
            return;
        }
        final int namespaceId = namespaces.lookup(namespace, namespaceOffset, namespaceLength);
        if (namespaceId >= 0)
        {
            touchHashCodes[touchCount++] =
                CatalogRecordTable.hashCodeOf(namespaceId, tier, hash, hashOffset, hashLength);
        }
    }

    /**
     * Load the live view's slots and records of the keys queued by {@link #queueTouch} and clear the queue.
     */
    public void touchQueuedKeys()
    {
        if (touchCount > 0 && null != liveView)
        {
            touchSink += liveView.touch(touchHashCodes, touchCount);
        }
        touchCount = 0;
    }

    /**
     * Whether the live view holds a key for a tier. Every key enters a view only after the host checked it belongs to
     * this shard, so a host may skip recomputing the shard of a key it already holds.
     *
     * @param tier            residence tier, already validated.
     * @param namespace       buffer holding the namespace (length already validated).
     * @param namespaceOffset offset of the namespace.
     * @param namespaceLength namespace length.
     * @param hash            buffer holding the hash (length already validated).
     * @param hashOffset      offset of the hash.
     * @param hashLength      hash length.
     * @return true if the live view has a record for the key and tier.
     */
    public boolean holdsKey(
        final int tier,
        final DirectBuffer namespace,
        final int namespaceOffset,
        final int namespaceLength,
        final DirectBuffer hash,
        final int hashOffset,
        final int hashLength)
    {
        if (null == liveView)
        {
            return false;
        }
        final int namespaceId = namespaces.lookup(namespace, namespaceOffset, namespaceLength);
        return namespaceId >= 0 && liveView.find(namespaceId, tier, hash, hashOffset, hashLength) >= 0;
    }

    /**
     * Whether a repair request should be sent now; rate limited to one per repair interval.
     */
    public boolean pollRepair(final long nowNs)
    {
        return gap.outstanding() && (STREAMING == mode || NO_BASELINE == mode) && gap.poll(nowNs);
    }

    /**
     * The owner no longer retains the requested history (journal overflow): a snapshot is needed.
     */
    public void onResyncRequired()
    {
        enterResync();
    }

    /**
     * Admit a snapshot: reserve a private replacement view for {@code recordCount} records plus the interval headroom.
     *
     * @return APPLIED, BUDGET_EXCEEDED or an incarnation rejection.
     */
    public int onSnapshotBegin(
        final long msb, final long lsb, final long snapshotId, final long startWatermark, final int recordCount)
    {
        final int admitted = checkIncarnation(msb, lsb);
        if (APPLIED != admitted)
        {
            return admitted;
        }
        abandonPending();
        final int records = recordCount + snapshotHeadroomRecords;
        final long needed = CatalogRecordTable.budgetFor(records);
        if (!budget.tryReserve(needed))
        {
            if (null != liveView)
            {
                // design: if the budget cannot hold both views, discard derived hints and expose incomplete coverage.
                hintsDropped++;
                releaseLiveView();
            }
            if (!budget.tryReserve(needed))
            {
                budgetRejections++;
                mode = RESYNC;
                return BUDGET_EXCEEDED;
            }
        }
        pending.begin(new CatalogRecordTable(needed), needed, snapshotId, startWatermark);
        mode = SNAPSHOT;
        gap.clear();
        return APPLIED;
    }

    /**
     * One page record (sequence = its version).
     */
    public int onSnapshotRecord(final long snapshotId, final JournalRecord record)
    {
        if (!pendingMatches(snapshotId))
        {
            return UNKNOWN_SNAPSHOT;
        }
        return applyPending(record);
    }

    public int onSnapshotPageEnd(final long snapshotId, final int pageIndex)
    {
        if (!pendingMatches(snapshotId))
        {
            return UNKNOWN_SNAPSHOT;
        }
        if (!pending.onPageEnd(pageIndex))
        {
            abandonPending();
            enterResync();
            return INCOMPLETE_SNAPSHOT;
        }
        return APPLIED;
    }

    /**
     * One interval record; they must arrive as the exact sequence start + 1, start + 2, ...
     */
    public int onSnapshotIntervalRecord(final long snapshotId, final JournalRecord record)
    {
        if (!pendingMatches(snapshotId))
        {
            return UNKNOWN_SNAPSHOT;
        }
        if (!pending.onIntervalRecord(record.sequence()))
        {
            abandonPending();
            enterResync();
            return INCOMPLETE_SNAPSHOT;
        }
        return applyPending(record);
    }

    /**
     * End of a snapshot: install the replacement view only if every page and the whole interval arrived.
     */
    public int onSnapshotEnd(
        final long snapshotId, final long startWatermark, final long endWatermark, final int pageCount)
    {
        if (!pendingMatches(snapshotId))
        {
            return UNKNOWN_SNAPSHOT;
        }
        if (!pending.isComplete(startWatermark, endWatermark, pageCount))
        {
            abandonPending();
            enterResync();
            return INCOMPLETE_SNAPSHOT;
        }
        pending.view().purgeTombstonesUpTo(endWatermark);
        releaseLiveView();
        liveViewBytes = pending.viewBytes();
        liveView = pending.take();
        contiguousSequence = endWatermark;
        mode = STREAMING;
        gap.clear();
        snapshotsInstalled++;
        return APPLIED;
    }

    /**
     * Append this owner's live residences of a key (DRAM first, then SSD) to a cold-query row.
     *
     * @return candidates appended.
     */
    public int lookup(
        final DirectBuffer namespace,
        final int namespaceOffset,
        final int namespaceLength,
        final DirectBuffer hash,
        final int hashOffset,
        final int hashLength,
        final CandidateSet row)
    {
        if (null == liveView || !hasIncarnation)
        {
            return 0;
        }
        final int namespaceId = namespaces.lookup(namespace, namespaceOffset, namespaceLength);
        if (namespaceId < 0)
        {
            return 0;
        }
        int added = 0;
        for (int tier = 0; tier < CatalogRecordTable.TIER_COUNT; tier++)
        {
            final int id = liveView.find(namespaceId, tier, hash, hashOffset, hashLength);
            if (id >= 0 && !liveView.isTombstone(id) && row.add(
                ownerNode, incarnationMsb, incarnationLsb, liveView.insertionSequence(id), tier, liveView.byteSize(id),
                liveView.generation(id)))
            {
                added++;
            }
        }
        return added;
    }

    /**
     * @return true when the view reflects the whole stream so far (streaming, no gap outstanding), or when no
     * incarnation is admitted: an owner outside the member view has no residences to cover.
     */
    public boolean coverageComplete()
    {
        return !hasIncarnation || (STREAMING == mode && !gap.outstanding());
    }

    public int shard()
    {
        return shard;
    }

    public int mode()
    {
        return mode;
    }

    public long contiguousSequence()
    {
        return contiguousSequence;
    }

    public long gapFrom()
    {
        return contiguousSequence + 1;
    }

    public long gapTo()
    {
        return gap.gapTo();
    }

    /**
     * @return live residences in the installed view.
     */
    public int viewSize()
    {
        return null == liveView ? 0 : liveView.liveSize();
    }

    /**
     * @return host budget bytes held by this receiver (live view plus any replacement being built).
     */
    public long reservedBytes()
    {
        return liveViewBytes + pending.viewBytes();
    }

    public long deltasApplied()
    {
        return deltasApplied;
    }

    public long duplicates()
    {
        return versions.duplicates();
    }

    public long gapsDetected()
    {
        return gap.gapsDetected();
    }

    public long repairRequests()
    {
        return gap.repairRequests();
    }

    public long staleIncarnationRejections()
    {
        return staleIncarnationRejections;
    }

    public long unregisteredPublisherRejections()
    {
        return unregisteredPublisherRejections;
    }

    public long conflicts()
    {
        return versions.conflicts();
    }

    public long olderRejected()
    {
        return versions.olderRejected();
    }

    public long resurrectionsPrevented()
    {
        return versions.resurrectionsPrevented();
    }

    public long viewFullEvents()
    {
        return viewFullEvents;
    }

    public long budgetRejections()
    {
        return budgetRejections;
    }

    public long hintsDropped()
    {
        return hintsDropped;
    }

    public long snapshotsInstalled()
    {
        return snapshotsInstalled;
    }

    public long snapshotsAbandoned()
    {
        return snapshotsAbandoned;
    }

    public long resyncs()
    {
        return resyncs;
    }

    public long refusedAwaitingBaseline()
    {
        return refusedAwaitingBaseline;
    }

    private int checkIncarnation(final long msb, final long lsb)
    {
        if (hasIncarnation && msb == incarnationMsb && lsb == incarnationLsb)
        {
            return APPLIED;
        }
        if (retired.contains(msb, lsb))
        {
            staleIncarnationRejections++;
            return STALE_INCARNATION;
        }
        unregisteredPublisherRejections++;
        return UNREGISTERED_PUBLISHER;
    }

    private int applyPending(final JournalRecord record)
    {
        final int outcome = versions.apply(pending.view(), record, false);
        if (VIEW_FULL == outcome || NAMESPACE_LIMIT == outcome)
        {
            viewFullEvents++;
            abandonPending();
            enterResync();
        }
        return outcome;
    }

    private boolean createLiveView(final int records)
    {
        final long bytes = CatalogRecordTable.budgetFor(records);
        if (!budget.tryReserve(bytes))
        {
            budgetRejections++;
            return false;
        }
        liveView = new CatalogRecordTable(bytes);
        liveViewBytes = bytes;
        return true;
    }

    private boolean growLiveView()
    {
        final CatalogRecordTable old = liveView;
        final long bytes = CatalogRecordTable.budgetFor(old.capacity() * 2);
        if (!budget.tryReserve(bytes))
        {
            budgetRejections++;
            return false;
        }
        final CatalogRecordTable grown = new CatalogRecordTable(bytes);
        for (int id = old.nextLive(0, Integer.MAX_VALUE); id >= 0; id = old.nextLive(id + 1, Integer.MAX_VALUE))
        {
            old.getHash(id, scratchHash, 0);
            final int copy = grown.insert(old.namespaceId(id), old.tier(id), scratchHash, 0, old.hashLength(id));
            grown.set(copy, old.version(id), old.generation(id), old.insertionSequence(id), old.byteSize(id),
                old.isTombstone(id));
        }
        old.free();
        budget.release(liveViewBytes);
        liveView = grown;
        liveViewBytes = bytes;
        return true;
    }

    private void releaseLiveView()
    {
        if (null != liveView)
        {
            liveView.free();
            budget.release(liveViewBytes);
            liveView = null;
            liveViewBytes = 0;
        }
    }

    private void abandonPending()
    {
        if (pending.abandon(budget))
        {
            snapshotsAbandoned++;
        }
    }

    private boolean pendingMatches(final long snapshotId)
    {
        return SNAPSHOT == mode && pending.matches(snapshotId);
    }

    private void enterResync()
    {
        if (RESYNC != mode)
        {
            resyncs++;
        }
        mode = RESYNC;
        gap.clear();
    }

    private void retireCurrent()
    {
        retired.retire(incarnationMsb, incarnationLsb);
        abandonPending();
        releaseLiveView();
        mode = NO_BASELINE;
        contiguousSequence = 0;
        gap.clear();
    }
}
