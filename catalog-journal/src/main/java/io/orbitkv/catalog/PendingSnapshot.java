package io.orbitkv.catalog;

import io.orbitkv.index.CatalogRecordTable;

/**
 * The replacement view a {@link ShardReceiver} builds privately while a snapshot streams in, with the bookkeeping
 * that decides whether it arrived whole: pages must come in order from 0 and interval records as the exact sequence
 * start + 1, start + 2, ... The view's bytes are reserved in the host budget by the receiver before {@link #begin}
 * and given back by {@link #abandon} unless the view is {@link #take taken} for installation.
 */
final class PendingSnapshot
{
    private CatalogRecordTable view;
    private long viewBytes;
    private long snapshotId;
    private long startWatermark;
    private int pages;
    private long nextIntervalSequence;

    void begin(final CatalogRecordTable view, final long viewBytes, final long snapshotId, final long startWatermark)
    {
        this.view = view;
        this.viewBytes = viewBytes;
        this.snapshotId = snapshotId;
        this.startWatermark = startWatermark;
        pages = 0;
        nextIntervalSequence = startWatermark + 1;
    }

    boolean matches(final long snapshotId)
    {
        return null != view && snapshotId == this.snapshotId;
    }

    CatalogRecordTable view()
    {
        return view;
    }

    long viewBytes()
    {
        return viewBytes;
    }

    /**
     * @param pageIndex the page that ended.
     * @return false when it is not the next page in order.
     */
    boolean onPageEnd(final int pageIndex)
    {
        if (pageIndex != pages)
        {
            return false;
        }
        pages++;
        return true;
    }

    /**
     * @param sequence the interval record's sequence.
     * @return false when it is not the next sequence of the interval.
     */
    boolean onIntervalRecord(final long sequence)
    {
        if (sequence != nextIntervalSequence)
        {
            return false;
        }
        nextIntervalSequence++;
        return true;
    }

    /**
     * @return true when every page and the whole interval (start, end] arrived as the end announces.
     */
    boolean isComplete(final long startWatermark, final long endWatermark, final int pageCount)
    {
        return startWatermark == this.startWatermark && pageCount == pages && nextIntervalSequence == endWatermark + 1;
    }

    /**
     * Hand the complete view over for installation; its reservation goes with it.
     *
     * @return the view.
     */
    CatalogRecordTable take()
    {
        final CatalogRecordTable taken = view;
        view = null;
        viewBytes = 0;
        return taken;
    }

    /**
     * Free the view under construction, if any, and give its bytes back to the budget.
     *
     * @param budget the host budget the view was reserved in.
     * @return true when there was a view to abandon.
     */
    boolean abandon(final HostBudget budget)
    {
        if (null == view)
        {
            return false;
        }
        view.free();
        budget.release(viewBytes);
        view = null;
        viewBytes = 0;
        return true;
    }
}
