package io.orbitkv.manager.catalog;

import io.orbitkv.catalog.ColdQueryHandler;
import io.orbitkv.catalog.JournalRecord;
import io.orbitkv.catalog.ShardReceiver;
import io.orbitkv.codecs.catalog.CatalogStatus;
import io.orbitkv.manager.peer.PeerSession;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * The catalog host's half of a {@link CatalogHandler}: owner deltas and snapshot frames go to the {@link ShardReceiver}
 * of (publisher, shard) that the subclass resolves, outcomes become wire statuses ({@link #catalogStatus}),
 * batch ends fill the ack and a rate-limited repair request, and cold queries are answered by the subclass's
 * {@link ColdQueryHandler}. A frame from a publisher with no receiver is
 * UNREGISTERED_PUBLISHER. Subclasses (the Manager's {@link CatalogPeerHandler}, the bench and test peers) decide how
 * a session maps to a publisher and may observe outcomes; the owner and requester callbacks stay theirs. It lives with
 * the catalog, not the transport: the peer package decodes and delivers frames, what a host does with them is the
 * catalog's.
 */
public abstract class CatalogHostHandler implements CatalogHandler
{
    /**
     * @return the receiver of the session's publisher for a hosted shard, or null when the publisher is unknown.
     */
    protected abstract ShardReceiver receiverOf(PeerSession session, int shard);

    /**
     * @return what answers this host's cold queries (over the subclass's directory and validator).
     */
    protected abstract ColdQueryHandler coldQueryHandler();

    public final int onColdQuery(
        final PeerSession session,
        final DirectBuffer frame,
        final int offset,
        final int length,
        final MutableDirectBuffer reply,
        final int replyOffset)
    {
        return coldQueryHandler().onFrame(frame, offset, length, reply, replyOffset);
    }

    public final CatalogStatus lastColdQueryStatus()
    {
        return coldQueryHandler().lastStatus();
    }

    /**
     * Observe the outcome of one delta record (a {@link ShardReceiver} outcome constant).
     */
    protected void onDeltaOutcome(final int outcome)
    {
    }

    /**
     * Observe a status about to be answered for a receiver outcome (counting rejections or resyncs).
     */
    protected void onStatus(final CatalogStatus status)
    {
    }

    /**
     * Observe the end of a delta batch once its ack is known.
     */
    protected void onBatchApplied(final PeerSession session, final int shard, final ShardReceiver receiver)
    {
    }

    public final CatalogStatus onDelta(
        final PeerSession session, final int shard, final long senderMsb, final long senderLsb,
        final JournalRecord record)
    {
        final ShardReceiver receiver = receiverOf(session, shard);
        if (null == receiver)
        {
            return status(ShardReceiver.UNREGISTERED_PUBLISHER);
        }
        final int outcome = receiver.onDelta(senderMsb, senderLsb, record);
        onDeltaOutcome(outcome);
        return status(outcome);
    }

    public final ShardReceiver deltaReceiver(final PeerSession session, final int shard)
    {
        return receiverOf(session, shard);
    }

    public final void onDeltaBatchEnd(
        final PeerSession session, final int shard, final long nowNs, final DeltaBatchOutcome outcome)
    {
        final ShardReceiver receiver = receiverOf(session, shard);
        if (null == receiver)
        {
            return;
        }
        outcome.ack(receiver.contiguousSequence());
        if (receiver.pollRepair(nowNs))
        {
            outcome.repair(receiver.contiguousSequence() + 1, receiver.gapTo());
        }
        onBatchApplied(session, shard, receiver);
    }

    public final CatalogStatus onSnapshotBegin(
        final PeerSession session, final int shard, final long senderMsb, final long senderLsb, final long snapshotId,
        final long startWatermark, final int recordCount)
    {
        final ShardReceiver receiver = receiverOf(session, shard);
        return status(null == receiver ? ShardReceiver.UNREGISTERED_PUBLISHER :
            receiver.onSnapshotBegin(senderMsb, senderLsb, snapshotId, startWatermark, recordCount));
    }

    public final CatalogStatus onSnapshotRecord(
        final PeerSession session, final int shard, final long snapshotId, final JournalRecord record)
    {
        final ShardReceiver receiver = receiverOf(session, shard);
        return status(null == receiver ? ShardReceiver.UNREGISTERED_PUBLISHER :
            receiver.onSnapshotRecord(snapshotId, record));
    }

    public final CatalogStatus onSnapshotPageEnd(
        final PeerSession session, final int shard, final long snapshotId, final int pageIndex)
    {
        final ShardReceiver receiver = receiverOf(session, shard);
        return status(null == receiver ? ShardReceiver.UNREGISTERED_PUBLISHER :
            receiver.onSnapshotPageEnd(snapshotId, pageIndex));
    }

    public final CatalogStatus onSnapshotIntervalRecord(
        final PeerSession session, final int shard, final long snapshotId, final JournalRecord record)
    {
        final ShardReceiver receiver = receiverOf(session, shard);
        return status(null == receiver ? ShardReceiver.UNREGISTERED_PUBLISHER :
            receiver.onSnapshotIntervalRecord(snapshotId, record));
    }

    public final CatalogStatus onSnapshotEnd(
        final PeerSession session, final int shard, final long snapshotId, final long startWatermark,
        final long endWatermark, final int pageCount, final DeltaBatchOutcome outcome)
    {
        final ShardReceiver receiver = receiverOf(session, shard);
        if (null == receiver)
        {
            return status(ShardReceiver.UNREGISTERED_PUBLISHER);
        }
        final CatalogStatus status = status(receiver.onSnapshotEnd(snapshotId, startWatermark, endWatermark, pageCount));
        if (CatalogStatus.OK == status)
        {
            outcome.ack(receiver.contiguousSequence());
        }
        return status;
    }

    private CatalogStatus status(final int outcome)
    {
        final CatalogStatus status = catalogStatus(outcome);
        onStatus(status);
        return status;
    }

    /**
     * The wire status a catalog host answers for an outcome of {@link ShardReceiver}: applied, duplicate, gap,
     * conflict and older records are OK for the batch (dedupe and repair handle them); outcomes that need a new
     * baseline are RESYNC_REQUIRED.
     *
     * @param outcome an outcome constant of {@link ShardReceiver}.
     * @return the status.
     */
    static CatalogStatus catalogStatus(final int outcome)
    {
        return switch (outcome)
        {
            case ShardReceiver.STALE_INCARNATION -> CatalogStatus.STALE_INCARNATION;
            case ShardReceiver.UNREGISTERED_PUBLISHER -> CatalogStatus.UNREGISTERED_PUBLISHER;
            case ShardReceiver.RESYNC_REQUIRED, ShardReceiver.VIEW_FULL, ShardReceiver.NAMESPACE_LIMIT,
                ShardReceiver.UNKNOWN_SNAPSHOT, ShardReceiver.INCOMPLETE_SNAPSHOT -> CatalogStatus.RESYNC_REQUIRED;
            case ShardReceiver.BUDGET_EXCEEDED -> CatalogStatus.BUDGET_EXCEEDED;
            default -> CatalogStatus.OK;
        };
    }
}
