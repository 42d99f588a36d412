package io.orbitkv.manager.transfer;

import io.orbitkv.codecs.TransferLimits;
import io.orbitkv.manager.ManagerContext;

/**
 * The source's limits, resolved: the transfer budget in bytes (whole allocations), the session limits, the session
 * lifetime. Built from a concluded {@link ManagerContext}, or directly by tests with small values.
 *
 * @param budgetBytes     bytes of pinned allocations all sessions together may hold.
 * @param maxSessions     sessions held at once, 1..{@link TransferLimits#MAX_SESSIONS}.
 * @param sessionsPerPeer sessions one requesting incarnation may hold, 1..maxSessions.
 * @param sessionTtlNs    how long a granted session lives without a release.
 */
public record TransferSettings(long budgetBytes, int maxSessions, int sessionsPerPeer, long sessionTtlNs)
{
    public TransferSettings
    {
        if (budgetBytes <= 0)
        {
            throw new IllegalArgumentException("budgetBytes must be positive: " + budgetBytes);
        }
        if (maxSessions < 1 || maxSessions > TransferLimits.MAX_SESSIONS)
        {
            throw new IllegalArgumentException(
                "maxSessions must be 1.." + TransferLimits.MAX_SESSIONS + ": " + maxSessions);
        }
        if (sessionsPerPeer < 1 || sessionsPerPeer > maxSessions)
        {
            throw new IllegalArgumentException("sessionsPerPeer must be 1.." + maxSessions + ": " + sessionsPerPeer);
        }
        if (sessionTtlNs < 1_000_000L || sessionTtlNs / 1_000_000L > Integer.MAX_VALUE)
        {
            throw new IllegalArgumentException("sessionTtlNs must be 1 ms..2^31 ms: " + sessionTtlNs);
        }
    }

    /**
     * @param ctx a concluded context.
     * @return the settings its flags chose.
     */
    public static TransferSettings of(final ManagerContext ctx)
    {
        return new TransferSettings(ctx.effectiveTransferBudgetBytes(), ctx.transferMaxSessions(),
            ctx.effectiveTransferSessionsPerPeer(), ctx.transferSessionTtlNs());
    }

    /**
     * @return the session lifetime as the grant carries it.
     */
    public int sessionTtlMs()
    {
        return (int)(sessionTtlNs / 1_000_000L);
    }
}
