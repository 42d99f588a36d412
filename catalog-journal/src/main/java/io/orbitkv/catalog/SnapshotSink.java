package io.orbitkv.catalog;

/**
 * Where a {@link SnapshotCut} emits its frames; the transport's proxy encodes them as SnapshotBegin, SnapshotPage and
 * SnapshotEnd, and tests feed a {@link ShardReceiver} directly.
 */
public interface SnapshotSink
{
    void onBegin(long snapshotId, long startWatermark, int recordCount);

    void onPageRecord(long snapshotId, JournalRecord record);

    void onPageEnd(long snapshotId, int pageIndex, int nextCursor);

    /**
     * One record of the delta interval (startWatermark, endWatermark], in sequence order, before {@link #onEnd}.
     */
    void onIntervalRecord(long snapshotId, JournalRecord record);

    void onEnd(long snapshotId, long startWatermark, long endWatermark, int pageCount);
}
