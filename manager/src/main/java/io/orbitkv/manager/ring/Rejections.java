package io.orbitkv.manager.ring;

import io.orbitkv.manager.status.SystemCounterDescriptor;
import io.orbitkv.manager.status.SystemCounters;
import org.agrona.concurrent.errors.DistinctErrorLog;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * Counts a refusal by reason and records it once in the distinct error log, without allocating: one stackless
 * exception per {@link Rejection} is made at start.
 */
final class Rejections
{
    private final RequestRejectedException[] exceptions;
    private final AtomicCounter[] counters;
    private final DistinctErrorLog errorLog;

    Rejections(final SystemCounters systemCounters, final DistinctErrorLog errorLog)
    {
        this.errorLog = errorLog;
        final Rejection[] reasons = Rejection.values();
        exceptions = new RequestRejectedException[reasons.length];
        counters = new AtomicCounter[reasons.length];
        for (final Rejection reason : reasons)
        {
            exceptions[reason.ordinal()] = new RequestRejectedException(reason);
            counters[reason.ordinal()] = systemCounters.get(SystemCounterDescriptor.rejection(reason.code()));
        }
    }

    void record(final Rejection rejection)
    {
        counters[rejection.ordinal()].incrementRelease();
        errorLog.record(exceptions[rejection.ordinal()]);
    }
}
