package io.orbitkv.manager.catalog;

import io.orbitkv.catalog.OwnerJournal;
import io.orbitkv.catalog.ShardInventory;
import io.orbitkv.catalog.SnapshotCut;
import io.orbitkv.manager.peer.PeerPublisher;
import io.orbitkv.manager.peer.PeerClient;
import io.orbitkv.manager.status.SystemCounters;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * The ordered stream of one shard of this Manager's inventory to the shard's catalog host. A new host incarnation
 * always starts with a snapshot cut (an empty inventory included, so an idle owner still gives the host a complete
 * baseline); afterwards journal records go out in batches as they are appended, acks release journal retention, and
 * a stream that stops progressing is resent from its last ack or, when the journal lost that history or the host asks
 * for it, rebuilt with a new cut. Runs on the Manager's agent thread, the one that appends to the journal.
 */
final class OwnerStream
{
    /**
     * A stream whose sent records are not acknowledged within this time is resent from the last ack.
     */
    static final long PROGRESS_TIMEOUT_NS = 1_000_000_000L;

    /**
     * A complete snapshot not acknowledged within this time is cut again.
     */
    static final long SNAPSHOT_ACK_TIMEOUT_NS = 2_000_000_000L;

    /**
     * Pause before a snapshot cut that exhausted its retries (or a host's resync demand) is started again.
     */
    static final long SNAPSHOT_RETRY_NS = 500_000_000L;

    /**
     * Publication window a frame needs before it is encoded: a snapshot page of the longest keys or a delta batch of
     * ordinary ones. Below it the stream waits for the host to consume (flow control) instead of encoding frames that
     * a back-pressured publication refuses (a refused snapshot frame would break the whole cut).
     */
    static final int PACING_WINDOW_BYTES = 48 * 1024;

    final int shard;
    private final PeerPublisher publisher;
    private final CatalogProxy proxy;
    private final OwnerJournal journal;
    private final ShardInventory inventory;
    private final AtomicCounter recordsSent;
    private final AtomicCounter snapshotsStarted;
    private final AtomicCounter snapshotsCompleted;
    private final AtomicCounter snapshotsFailed;
    private final AtomicCounter streamRewinds;
    private final AtomicCounter updateLagUs;
    private final AtomicCounter updateLagMaxUs;
    private HostLink link;
    private int receiver = OwnerJournal.NO_RECEIVER_SLOT;
    private PeerClient senderClient;
    private SnapshotCut cut;
    private boolean snapshotting;
    private boolean needSnapshot;
    private long snapshotRetryAtNs;
    private boolean awaitingSnapshotAck;
    private long snapshotEnd;
    private long snapshotDeadlineNs;
    private long sentUpTo;
    private long lastProgressNs;
    private long lagSequence;
    private long lagStartNs;

    OwnerStream(
        final int shard,
        final ShardInventory inventory,
        final SystemCounters counters,
        final PeerPublisher publisher,
        final CatalogProxy proxy)
    {
        this.publisher = publisher;
        this.proxy = proxy;
        this.shard = shard;
        this.inventory = inventory;
        this.journal = inventory.journal();
        this.recordsSent = counters.get(CatalogCounter.RECORDS_SENT);
        this.snapshotsStarted = counters.get(CatalogCounter.SNAPSHOTS_STARTED);
        this.snapshotsCompleted = counters.get(CatalogCounter.SNAPSHOTS_COMPLETED);
        this.snapshotsFailed = counters.get(CatalogCounter.SNAPSHOTS_FAILED);
        this.streamRewinds = counters.get(CatalogCounter.STREAM_REWINDS);
        this.updateLagUs = counters.get(CatalogCounter.UPDATE_LAG_US);
        this.updateLagMaxUs = counters.get(CatalogCounter.UPDATE_LAG_MAX_US);
    }

    /**
     * Stream to another host incarnation (or to none): the old receiver's retention is released, the new one starts
     * with a snapshot.
     */
    void retarget(final HostLink newLink)
    {
        if (newLink == link)
        {
            return;
        }
        if (OwnerJournal.NO_RECEIVER_SLOT != receiver)
        {
            journal.removeReceiver(shard, receiver);
            receiver = OwnerJournal.NO_RECEIVER_SLOT;
        }
        link = newLink;
        senderClient = null;
        cut = null;
        snapshotting = false;
        awaitingSnapshotAck = false;
        lagSequence = 0;
        if (null != link)
        {
            receiver = journal.addReceiver(shard);
            needSnapshot = true;
            snapshotRetryAtNs = 0;
        }
    }

    int doWork(final long nowNs, final long nowMs)
    {
        if (null == link || OwnerJournal.NO_RECEIVER_SLOT == receiver)
        {
            return 0;
        }
        final PeerClient client = link.poll(nowMs);
        if (null == client)
        {
            return 0;
        }
        if (client != senderClient)
        {
            // A new session to the same host incarnation: its snapshot sender is bound to the session.
            final SnapshotSender sender = proxy.snapshotSender(client, shard);
            cut = new SnapshotCut(shard, receiver, inventory, sender);
            senderClient = client;
            snapshotting = false;
            needSnapshot = true;
        }

        if (publisher.availableWindow(client) < PACING_WINDOW_BYTES)
        {
            return 0;
        }
        if (snapshotting)
        {
            final int work = cut.doWork(nowNs);
            final int state = cut.state();
            if (SnapshotCut.COMPLETE == state)
            {
                snapshotting = false;
                sentUpTo = journal.lastSequence(shard);
                snapshotEnd = sentUpTo;
                awaitingSnapshotAck = true;
                snapshotDeadlineNs = nowNs + SNAPSHOT_ACK_TIMEOUT_NS;
                lastProgressNs = nowNs;
                snapshotsCompleted.incrementRelease();
            }
            else if (SnapshotCut.FAILED == state)
            {
                snapshotting = false;
                requestSnapshot(nowNs + SNAPSHOT_RETRY_NS);
                snapshotsFailed.incrementRelease();
            }
            return work;
        }

        if (awaitingSnapshotAck && nowNs - snapshotDeadlineNs > 0)
        {
            awaitingSnapshotAck = false;
            requestSnapshot(nowNs);
            streamRewinds.incrementRelease();
        }
        if (needSnapshot || journal.resyncRequired(shard, receiver))
        {
            if (nowNs - snapshotRetryAtNs >= 0)
            {
                needSnapshot = false;
                snapshotting = true;
                awaitingSnapshotAck = false;
                lagSequence = 0;
                cut.start();
                snapshotsStarted.incrementRelease();
                return 1;
            }
            needSnapshot = true;
            return 0;
        }

        final long acked = journal.ackedSequence(shard, receiver);
        if (sentUpTo > acked && nowNs - lastProgressNs > PROGRESS_TIMEOUT_NS)
        {
            sentUpTo = acked;
            lastProgressNs = nowNs;
            lagSequence = 0;
            streamRewinds.incrementRelease();
        }
        if (journal.lastSequence(shard) > sentUpTo)
        {
            final int sent = proxy.sendDeltaBatch(client, shard, journal, sentUpTo + 1, proxy.maxBatchRecords());
            if (OwnerJournal.READ_RESYNC_REQUIRED == sent)
            {
                requestSnapshot(nowNs);
                return 1;
            }
            if (sent > 0)
            {
                if (sentUpTo <= acked)
                {
                    lastProgressNs = nowNs;
                }
                sentUpTo += sent;
                if (0 == lagSequence)
                {
                    lagSequence = sentUpTo;
                    lagStartNs = nowNs;
                }
                recordsSent.getAndAddRelease(sent);
                return sent;
            }
        }
        return 0;
    }

    void onAck(final PeerClient client, final long contiguousSequence, final long nowNs)
    {
        if (client != senderClient || OwnerJournal.NO_RECEIVER_SLOT == receiver)
        {
            return;
        }
        final long before = journal.ackedSequence(shard, receiver);
        journal.onAck(shard, receiver, contiguousSequence);
        if (journal.ackedSequence(shard, receiver) > before)
        {
            lastProgressNs = nowNs;
        }
        if (awaitingSnapshotAck && contiguousSequence >= snapshotEnd)
        {
            awaitingSnapshotAck = false;
        }
        if (0 != lagSequence && contiguousSequence >= lagSequence)
        {
            onLag(nowNs - lagStartNs);
            lagSequence = 0;
        }
    }

    /**
     * The host asked for records again: serve them from the journal, or ask for a snapshot when they are gone.
     */
    void onGapRepair(final PeerClient client, final long fromSequence, final long nowNs)
    {
        if (client != senderClient || snapshotting)
        {
            return;
        }
        if (fromSequence < journal.oldestRetainedSequence(shard))
        {
            requestSnapshot(nowNs);
            return;
        }
        // The host dropped everything after the gap too: resend from its first missing record.
        sentUpTo = Math.min(sentUpTo, fromSequence - 1);
        lastProgressNs = nowNs;
    }

    /**
     * The host cannot take the stream without a new baseline (it restarted its receiving state or lost budget).
     */
    void onResyncRequired(final PeerClient client, final long nowNs)
    {
        if (client == senderClient && !snapshotting && !needSnapshot)
        {
            requestSnapshot(nowNs + SNAPSHOT_RETRY_NS / 5);
        }
    }

    private void requestSnapshot(final long atNs)
    {
        needSnapshot = true;
        snapshotRetryAtNs = atNs;
    }

    /**
     * @return journal records appended but not yet acknowledged by this stream's host (0 with no host).
     */
    long lagRecords()
    {
        return OwnerJournal.NO_RECEIVER_SLOT == receiver ? 0 :
            Math.max(0, journal.lastSequence(shard) - journal.ackedSequence(shard, receiver));
    }

    void close()
    {
        retarget(null);
    }

    /**
     * The time from a record's append to its ack, shown as the last and the largest seen (in microseconds).
     */
    private void onLag(final long lagNs)
    {
        final long us = lagNs / 1000;
        updateLagUs.setRelease(us);
        if (us > updateLagMaxUs.getPlain())
        {
            updateLagMaxUs.setRelease(us);
        }
    }
}
