package io.orbitkv.manager.transfer;

import io.orbitkv.codecs.TransferLimits;

/**
 * Sources that left an authorization unanswered, planned around for
 * {@link TransferLimits#UNANSWERED_SOURCE_BACKOFF_MS}: a killed Manager stays in the member view until its lease
 * expires, and every fetch would wait out its own timeout on it. The table is small and its oldest entry is reused
 * first; an answer from the source ends its backoff.
 */
final class UnansweredSources
{
    /**
     * Sources remembered as unanswering at once (a few Managers failing together; the oldest is forgotten first).
     */
    static final int CAPACITY = 16;

    private final long[] msbs = new long[CAPACITY];
    private final long[] lsbs = new long[CAPACITY];
    private final long[] untilMs = new long[CAPACITY];

    void suspect(final long msb, final long lsb, final long nowMs)
    {
        int slot = 0;
        for (int i = 0; i < msbs.length; i++)
        {
            if (msbs[i] == msb && lsbs[i] == lsb)
            {
                slot = i;
                break;
            }
            if (untilMs[i] - untilMs[slot] < 0)
            {
                slot = i;
            }
        }
        msbs[slot] = msb;
        lsbs[slot] = lsb;
        untilMs[slot] = nowMs + TransferLimits.UNANSWERED_SOURCE_BACKOFF_MS;
    }

    boolean isSuspect(final long msb, final long lsb, final long nowMs)
    {
        for (int i = 0; i < msbs.length; i++)
        {
            if (msbs[i] == msb && lsbs[i] == lsb)
            {
                return nowMs - untilMs[i] < 0;
            }
        }
        return false;
    }

    void answeredBy(final long msb, final long lsb, final long nowMs)
    {
        for (int i = 0; i < msbs.length; i++)
        {
            if (msbs[i] == msb && lsbs[i] == lsb)
            {
                untilMs[i] = nowMs;
            }
        }
    }
}
