package io.orbitkv.bench;

/**
 * A benchmark's wait that scales with the work: it expires only when the watched progress figure (records applied,
 * sequences acknowledged, bytes touched) has not moved for the stall interval, however long the whole wait takes.
 * A fixed limit either fails a large run on a slow box or hides a hang behind minutes of waiting.
 */
final class StallDeadline
{
    private final long stallNs;
    private long lastProgress;
    private long deadlineNs;

    StallDeadline(final long stallNs, final long progress, final long nowNs)
    {
        this.stallNs = stallNs;
        this.lastProgress = progress;
        this.deadlineNs = nowNs + stallNs;
    }

    /**
     * Note the current progress and say whether the wait has stalled for the whole interval.
     *
     * @param progress a figure that grows while the awaited work goes on.
     * @param nowNs    the clock.
     * @return true once progress has stood still for the stall interval.
     */
    boolean stalled(final long progress, final long nowNs)
    {
        if (progress != lastProgress)
        {
            lastProgress = progress;
            deadlineNs = nowNs + stallNs;
            return false;
        }
        return nowNs - deadlineNs > 0;
    }
}
