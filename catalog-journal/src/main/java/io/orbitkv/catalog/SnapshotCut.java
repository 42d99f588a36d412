package io.orbitkv.catalog;

/**
 * Sender side of snapshot recovery for one (shard, receiver) of this owner (design "Snapshot recovery has a defined
 * cut"):
 * <ol>
 *     <li>BEGIN: take the start watermark (the shard's last sequence) and rebase the receiver's journal retention
 *     there, so the journal retains the delta interval from then on;</li>
 *     <li>PAGING: enumerate the shard's inventory in pages of at most {@code pageRecords} records, each page scanning
 *     at most {@code pageScan} ids, with record versions and a stable cursor; changes made meanwhile stay in the
 *     journal;</li>
 *     <li>END: take the end watermark and emit the complete ordered interval (start, end] read back from the journal,
 *     then the end frame.</li>
 * </ol>
 * If the interval overflows (the journal dropped part of it and flagged the receiver, or it grew beyond
 * {@code maxIntervalRecords}, the most one end frame carries) the attempt is aborted and restarted after
 * {@code retryBackoffNs}, at most {@code retryBudget} times; past that the cut is FAILED, counted, and the shard's
 * lack of convergence is visible until {@link #start} is called again. A partial scan is never declared complete.
 * <p>
 * Driven by the owner's agent through {@link #doWork(long)}: one bounded step per call, no allocation.
 */
public final class SnapshotCut
{
    public static final int DEFAULT_PAGE_RECORDS = 128;
    public static final int DEFAULT_PAGE_SCAN = 4096;
    public static final int DEFAULT_MAX_INTERVAL_RECORDS = 1024;
    public static final int DEFAULT_RETRY_BUDGET = 3;
    public static final long DEFAULT_RETRY_BACKOFF_NS = 100_000_000L;

    public static final int IDLE = 0;
    public static final int BEGIN = 1;
    public static final int PAGING = 2;
    public static final int END = 3;
    public static final int COMPLETE = 4;
    public static final int BACKOFF = 5;
    public static final int FAILED = 6;

    private final int shard;
    private final int receiver;
    private final ShardInventory inventory;
    private final OwnerJournal journal;
    private final SnapshotSink sink;
    private final int pageRecords;
    private final int pageScan;
    private final int maxIntervalRecords;
    private final int retryBudget;
    private final long retryBackoffNs;
    private final JournalReader pageForwarder = this::forwardPageRecord;
    private final JournalReader intervalForwarder = this::forwardIntervalRecord;

    private int state = IDLE;
    private long snapshotId;
    private long startWatermark;
    private int cursor;
    private int pageIndex;
    private int attempts;
    private long retryAtNs;
    private int intervalDelivered;

    private long completed;
    private long aborts;
    private long failures;

    public SnapshotCut(
        final int shard,
        final int receiver,
        final ShardInventory inventory,
        final SnapshotSink sink)
    {
        this(shard, receiver, inventory, sink, DEFAULT_PAGE_RECORDS, DEFAULT_PAGE_SCAN, DEFAULT_MAX_INTERVAL_RECORDS,
            DEFAULT_RETRY_BUDGET, DEFAULT_RETRY_BACKOFF_NS);
    }

    public SnapshotCut(
        final int shard,
        final int receiver,
        final ShardInventory inventory,
        final SnapshotSink sink,
        final int pageRecords,
        final int pageScan,
        final int maxIntervalRecords,
        final int retryBudget,
        final long retryBackoffNs)
    {
        if (pageRecords < 1 || pageScan < 1 || maxIntervalRecords < 0 || retryBudget < 0)
        {
            throw new IllegalArgumentException("page sizes must be positive, interval and retry budget >= 0");
        }
        this.shard = shard;
        this.receiver = receiver;
        this.inventory = inventory;
        this.journal = inventory.journal();
        this.sink = sink;
        this.pageRecords = pageRecords;
        this.pageScan = pageScan;
        this.maxIntervalRecords = maxIntervalRecords;
        this.retryBudget = retryBudget;
        this.retryBackoffNs = retryBackoffNs;
    }

    /**
     * Start (or restart) a snapshot with a fresh retry budget.
     */
    public void start()
    {
        attempts = 0;
        begin();
    }

    /**
     * One bounded step.
     *
     * @param nowNs current time.
     * @return work done (0 when idle, complete, failed or backing off).
     */
    public int doWork(final long nowNs)
    {
        switch (state)
        {
            case BEGIN:
                sink.onBegin(snapshotId, startWatermark, inventory.size(shard));
                state = PAGING;
                return 1;

            case PAGING:
                if (intervalOverflowed())
                {
                    abort(nowNs);
                    return 1;
                }
                final int next = inventory.readPage(shard, cursor, pageRecords, pageScan, pageForwarder);
                sink.onPageEnd(snapshotId, pageIndex++, next);
                if (ShardInventory.END == next)
                {
                    state = END;
                }
                else
                {
                    cursor = next;
                }
                return 1;

            case END:
                return finish(nowNs);

            case BACKOFF:
                if (nowNs - retryAtNs >= 0)
                {
                    begin();
                    return 1;
                }
                return 0;

            default:
                return 0;
        }
    }

    public int state()
    {
        return state;
    }

    public long snapshotId()
    {
        return snapshotId;
    }

    public long startWatermark()
    {
        return startWatermark;
    }

    public int attempts()
    {
        return attempts;
    }

    public long completed()
    {
        return completed;
    }

    public long aborts()
    {
        return aborts;
    }

    /**
     * @return cuts that exhausted their retry budget (lack of convergence).
     */
    public long failures()
    {
        return failures;
    }

    private int finish(final long nowNs)
    {
        final long endWatermark = journal.lastSequence(shard);
        if (intervalOverflowed())
        {
            abort(nowNs);
            return 1;
        }
        final int intervalLength = (int)(endWatermark - startWatermark);
        intervalDelivered = 0;
        if (intervalLength > 0)
        {
            final int read = journal.read(shard, startWatermark + 1, intervalLength, intervalForwarder);
            if (read != intervalLength)
            {
                abort(nowNs);
                return 1;
            }
        }
        sink.onEnd(snapshotId, startWatermark, endWatermark, pageIndex);
        state = COMPLETE;
        completed++;
        return 1;
    }

    private boolean intervalOverflowed()
    {
        return journal.resyncRequired(shard, receiver) ||
            journal.lastSequence(shard) - startWatermark > maxIntervalRecords;
    }

    private void begin()
    {
        snapshotId++;
        startWatermark = journal.lastSequence(shard);
        journal.rebaseReceiver(shard, receiver, startWatermark);
        cursor = 0;
        pageIndex = 0;
        state = BEGIN;
    }

    private void abort(final long nowNs)
    {
        aborts++;
        attempts++;
        if (attempts > retryBudget)
        {
            failures++;
            state = FAILED;
        }
        else
        {
            retryAtNs = nowNs + retryBackoffNs;
            state = BACKOFF;
        }
    }

    private void forwardPageRecord(final JournalRecord record)
    {
        sink.onPageRecord(snapshotId, record);
    }

    private void forwardIntervalRecord(final JournalRecord record)
    {
        intervalDelivered++;
        sink.onIntervalRecord(snapshotId, record);
    }
}
