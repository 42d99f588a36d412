package io.orbitkv.manager.ring;

import io.orbitkv.manager.status.SystemCounters;
import org.agrona.concurrent.errors.DistinctErrorLog;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * Counts a refusal by reason and records it once in the distinct error log, without allocating: one stackless
 * exception per {@link Rejection} is made at start. A refusal of a client's request is also answered on that client's
 * response ring (a status with the reason's code and text).
 */
final class Rejections
{
    private final RequestRejectedException[] exceptions;
    private final AtomicCounter[] counters;
    private final DistinctErrorLog errorLog;
    private final ResponseProxy responseProxy;

    Rejections(final SystemCounters systemCounters, final DistinctErrorLog errorLog, final ResponseProxy responseProxy)
    {
        this.errorLog = errorLog;
        this.responseProxy = responseProxy;
        final Rejection[] reasons = Rejection.values();
        exceptions = new RequestRejectedException[reasons.length];
        counters = new AtomicCounter[reasons.length];
        for (final Rejection reason : reasons)
        {
            exceptions[reason.ordinal()] = new RequestRejectedException(reason);
            counters[reason.ordinal()] = systemCounters.get(RingCounter.rejection(reason.code()));
        }
    }

    void record(final Rejection rejection)
    {
        counters[rejection.ordinal()].incrementRelease();
        errorLog.record(exceptions[rejection.ordinal()]);
    }

    /**
     * Count a refusal of a client's request and answer it.
     */
    void answer(
        final ClientSession session,
        final long clientId,
        final long correlationId,
        final int templateId,
        final Rejection rejection)
    {
        record(rejection);
        send(session, clientId, correlationId, templateId, rejection);
    }

    /**
     * Answer a refusal already counted.
     */
    void send(
        final ClientSession session,
        final long clientId,
        final long correlationId,
        final int templateId,
        final Rejection rejection)
    {
        responseProxy.sendStatus(
            session.responseRing, clientId, correlationId, templateId, rejection.code(), 0, rejection.bytes());
    }
}
