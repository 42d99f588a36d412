package io.orbitkv.manager.membership;

/**
 * Local validity of the own registration (design: valid until half the acknowledged TTL, measured from sending the
 * keepalive; a delayed response cannot revive an expired or fenced runtime).
 *
 * <p>Written only by the lease keeper thread; {@link #validUntilNs()} is read by any thread.
 */
final class RegistrationValidity
{
    private volatile long validUntilNs;
    private volatile boolean expired;

    /**
     * Start valid until half the granted TTL after the grant request was sent.
     *
     * @param grantSentNs when the grant was sent.
     * @param ttlSecs     granted TTL.
     */
    RegistrationValidity(final long grantSentNs, final long ttlSecs)
    {
        this.validUntilNs = grantSentNs + halfTtlNs(ttlSecs);
    }

    static long halfTtlNs(final long ttlSecs)
    {
        return ttlSecs * 500_000_000L;
    }

    /**
     * A keepalive acknowledged with a TTL.
     *
     * @param sentNs  when that keepalive was sent.
     * @param ttlSecs acknowledged TTL.
     * @param nowNs   now (the response's arrival).
     * @return false if the registration had already expired (the acknowledgement is ignored).
     */
    boolean onAcknowledged(final long sentNs, final long ttlSecs, final long nowNs)
    {
        if (isExpired(nowNs))
        {
            return false;
        }
        final long candidate = sentNs + halfTtlNs(ttlSecs);
        if (candidate > validUntilNs)
        {
            validUntilNs = candidate;
        }
        return true;
    }

    /**
     * Whether validity has run out; once true it stays true (the runtime needs a restart to register again).
     *
     * @param nowNs now.
     * @return true if expired.
     */
    boolean isExpired(final long nowNs)
    {
        if (!expired && nowNs - validUntilNs >= 0)
        {
            expired = true;
        }
        return expired;
    }

    /**
     * Read-only check for any thread: valid and not latched expired.
     *
     * @param nowNs now.
     * @return true while valid.
     */
    boolean isValid(final long nowNs)
    {
        return !expired && nowNs - validUntilNs < 0;
    }

    long validUntilNs()
    {
        return validUntilNs;
    }
}
