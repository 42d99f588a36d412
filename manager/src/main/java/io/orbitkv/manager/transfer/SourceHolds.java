package io.orbitkv.manager.transfer;

import io.orbitkv.codecs.TransferLimits;

/**
 * The source's table of {@link TransferSession}s: preallocated slots up to the session limit, the transfer budget
 * they charge (whole allocations: the slab size class of each pinned entry), and the counts the limits are checked
 * against. A session id names its slot in its low bits and a per-table sequence above them, so a release finds its
 * session without a map and an id of a freed session never matches the slot's next one. Owned by the agent thread;
 * allocation free after construction.
 */
final class SourceHolds
{
    static final int SLOT_BITS = 10;
    private static final long SLOT_MASK = (1L << SLOT_BITS) - 1;

    private final TransferSession[] sessions;
    private final int[] freeSlots;
    private final long budgetBytes;
    private int freeCount;
    private long nextSequence;
    private long chargedBytes;
    private int quarantinedSessions;
    private long quarantinedBytes;

    /**
     * @param maxSessions  slots, 1..{@link TransferLimits#MAX_SESSIONS}.
     * @param budgetBytes  bytes all sessions together may charge.
     * @param firstSequence where session id sequences start (random, so ids of a restarted source do not alias).
     */
    SourceHolds(final int maxSessions, final long budgetBytes, final long firstSequence)
    {
        if (maxSessions < 1 || maxSessions > TransferLimits.MAX_SESSIONS || maxSessions > SLOT_MASK + 1)
        {
            throw new IllegalArgumentException("maxSessions out of range: " + maxSessions);
        }
        sessions = new TransferSession[maxSessions];
        freeSlots = new int[maxSessions];
        for (int i = 0; i < maxSessions; i++)
        {
            sessions[i] = new TransferSession(i);
            freeSlots[i] = maxSessions - 1 - i;
        }
        freeCount = maxSessions;
        this.budgetBytes = budgetBytes;
        this.nextSequence = firstSequence & 0x1F_FFFF_FFFF_FFFFL;
    }

    int capacity()
    {
        return sessions.length;
    }

    /**
     * @return sessions holding pins, in any state but FREE.
     */
    int activeCount()
    {
        return sessions.length - freeCount;
    }

    long budgetBytes()
    {
        return budgetBytes;
    }

    long chargedBytes()
    {
        return chargedBytes;
    }

    /**
     * @return whether another {@code bytes} fit the budget on top of what is charged and {@code pendingBytes}.
     */
    boolean fits(final long pendingBytes, final long bytes)
    {
        return chargedBytes + pendingBytes + bytes <= budgetBytes;
    }

    int quarantinedSessions()
    {
        return quarantinedSessions;
    }

    long quarantinedBytes()
    {
        return quarantinedBytes;
    }

    TransferSession at(final int slot)
    {
        return sessions[slot];
    }

    /**
     * @return the session holding this id (any state but FREE), or null.
     */
    TransferSession byId(final long transferSessionId)
    {
        if (transferSessionId <= 0)
        {
            return null;
        }
        final int slot = (int)(transferSessionId & SLOT_MASK);
        if (slot >= sessions.length)
        {
            return null;
        }
        final TransferSession session = sessions[slot];
        return session.holdsPins() && session.transferSessionId == transferSessionId ? session : null;
    }

    /**
     * @return whether the id named a session of this table that has been freed since (a duplicate release).
     */
    boolean wasFreed(final long transferSessionId)
    {
        final int slot = (int)(transferSessionId & SLOT_MASK);
        return transferSessionId > 0 && slot < sessions.length &&
            sessions[slot].lastFreedSessionId == transferSessionId;
    }

    /**
     * @return the GRANTED session of this requester incarnation with this requester session id, or null.
     */
    TransferSession granted(final long requesterMsb, final long requesterLsb, final long requesterSessionId)
    {
        for (int i = 0; i < sessions.length; i++)
        {
            final TransferSession session = sessions[i];
            if (TransferSession.GRANTED == session.state && session.requesterSessionId == requesterSessionId &&
                session.isFrom(requesterMsb, requesterLsb))
            {
                return session;
            }
        }
        return null;
    }

    /**
     * @return sessions of this requester incarnation holding pins (the per-peer limit counts them all).
     */
    int countOf(final long requesterMsb, final long requesterLsb)
    {
        int count = 0;
        for (int i = 0; i < sessions.length; i++)
        {
            final TransferSession session = sessions[i];
            if (session.holdsPins() && session.isFrom(requesterMsb, requesterLsb))
            {
                count++;
            }
        }
        return count;
    }

    /**
     * Take a free slot for a grant; the caller fills it and calls {@link #granted(TransferSession)}.
     *
     * @return the session, or null when every slot is held.
     */
    TransferSession acquire()
    {
        if (0 == freeCount)
        {
            return null;
        }
        final TransferSession session = sessions[freeSlots[--freeCount]];
        session.transferSessionId = (++nextSequence << SLOT_BITS) | session.slot;
        return session;
    }

    /**
     * Put back a slot taken by {@link #acquire} that was never granted (the export was refused).
     */
    void abandon(final TransferSession session)
    {
        session.state = TransferSession.FREE;
        session.transferSessionId = 0;
        freeSlots[freeCount++] = session.slot;
    }

    void granted(final TransferSession session)
    {
        session.state = TransferSession.GRANTED;
        chargedBytes += session.chargedBytes;
    }

    void quarantine(final TransferSession session)
    {
        session.state = TransferSession.QUARANTINED;
        quarantinedSessions++;
        quarantinedBytes += session.chargedBytes;
    }

    /**
     * The session's pins are gone: its charge leaves the budget and its slot is free again.
     */
    void free(final TransferSession session)
    {
        if (TransferSession.QUARANTINED == session.state)
        {
            quarantinedSessions--;
            quarantinedBytes -= session.chargedBytes;
        }
        chargedBytes -= session.chargedBytes;
        session.state = TransferSession.FREE;
        session.lastFreedSessionId = session.transferSessionId;
        session.transferSessionId = 0;
        session.chargedBytes = 0;
        session.grantedKeys = 0;
        freeSlots[freeCount++] = session.slot;
    }
}
