package io.orbitkv.catalog;

/**
 * The gap part of a {@link ShardReceiver}: the one hole outstanding in an owner's stream, from the contiguous sequence
 * up to {@link #gapTo()}, and the rate limit on asking the owner to fill it from its journal. A delta further beyond
 * the hole widens it; the hole closes when the contiguous sequence reaches its end, and is forgotten when the stream
 * needs a new baseline (a snapshot, not a repair, brings the view back).
 */
final class GapRepair
{
    private final long repairIntervalNs;
    private boolean outstanding;
    private long gapTo;
    private long nextRepairAtNs;
    private long gapsDetected;
    private long repairRequests;

    GapRepair(final long repairIntervalNs)
    {
        this.repairIntervalNs = repairIntervalNs;
    }

    /**
     * A delta arrived past the next expected sequence: open a hole up to the one before it, or widen the open one.
     *
     * @param sequence the sequence that arrived early.
     */
    void onEarlySequence(final long sequence)
    {
        if (!outstanding)
        {
            gapsDetected++;
            outstanding = true;
            gapTo = sequence - 1;
        }
        else
        {
            gapTo = Math.max(gapTo, sequence - 1);
        }
    }

    /**
     * The contiguous sequence advanced: the hole is closed once it is reached.
     *
     * @param contiguousSequence the new contiguous sequence.
     */
    void onContiguous(final long contiguousSequence)
    {
        if (outstanding && contiguousSequence >= gapTo)
        {
            outstanding = false;
        }
    }

    void clear()
    {
        outstanding = false;
    }

    /**
     * Whether a repair request is due now; at most one per repair interval while a hole is outstanding.
     *
     * @param nowNs the caller's clock.
     * @return true when the caller should send a request now.
     */
    boolean poll(final long nowNs)
    {
        if (outstanding && nowNs - nextRepairAtNs >= 0)
        {
            nextRepairAtNs = nowNs + repairIntervalNs;
            repairRequests++;
            return true;
        }
        return false;
    }

    boolean outstanding()
    {
        return outstanding;
    }

    long gapTo()
    {
        return gapTo;
    }

    long gapsDetected()
    {
        return gapsDetected;
    }

    long repairRequests()
    {
        return repairRequests;
    }
}
