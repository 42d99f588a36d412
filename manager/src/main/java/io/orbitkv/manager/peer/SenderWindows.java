package io.orbitkv.manager.peer;

import org.agrona.collections.Long2LongHashMap;

/**
 * Replay windows of authenticated peer frames, one per sender incarnation: the highest sequence accepted and a sliding
 * bitmap of the {@link #WINDOW_BITS} sequences up to it. A sequence above the highest is accepted and slides the
 * window; one inside the window is accepted once; one at or below {@code highest - WINDOW_BITS} is too old. A sender's
 * frames reach one receiver through one publication, in order, so the window only has to absorb the gaps left by frames
 * the sender addressed to other peers; its width bounds how far a frame may lag a later one and still count.
 * <p>
 * At most {@link #MAX_SENDERS} windows, allocated up front (no allocation per frame or per new sender). Only frames
 * whose MAC verified open a window. When every window is taken, the one unused longest is recycled if it has been idle
 * for {@link #RECYCLE_IDLE_NS}; otherwise the new incarnation gets none and its frames are refused as unknown. Single
 * threaded (the peer agent).
 */
final class SenderWindows
{
    /** Width of each replay window in sequences: a multiple of 64. */
    static final int WINDOW_BITS = 1024;

    /** Sender incarnations tracked at once: twice the largest member view (4,096), for restarts. */
    static final int MAX_SENDERS = 8192;

    /** A window unused this long may be given to a new incarnation when all are taken. */
    static final long RECYCLE_IDLE_NS = 600_000_000_000L;

    static final int ACCEPTED = 0;
    static final int DUPLICATE = 1;
    static final int TOO_OLD = 2;
    static final int NO_WINDOW = 3;

    /** One word more than the window needs: the word holding the highest sequence is part future (RFC 6479). */
    private static final int WORDS = WINDOW_BITS / 64 + 1;
    private static final long MISSING = -1;

    private final int capacity;
    private final long recycleIdleNs;
    private final long[] msbs;
    private final long[] lsbs;
    private final long[] highest;
    private final long[] lastUsedNs;
    private final long[] bits;
    private final Long2LongHashMap slotByKey;
    private int used;
    private long recycled;

    SenderWindows()
    {
        this(MAX_SENDERS, RECYCLE_IDLE_NS);
    }

    SenderWindows(final int capacity, final long recycleIdleNs)
    {
        this.capacity = capacity;
        this.recycleIdleNs = recycleIdleNs;
        this.msbs = new long[capacity];
        this.lsbs = new long[capacity];
        this.highest = new long[capacity];
        this.lastUsedNs = new long[capacity];
        this.bits = new long[capacity * WORDS];
        this.slotByKey = new Long2LongHashMap(capacity * 2, 0.65f, MISSING);
    }

    /**
     * Judge one authenticated frame's sequence and, when accepted, record it.
     *
     * @return {@link #ACCEPTED}, {@link #DUPLICATE}, {@link #TOO_OLD} or {@link #NO_WINDOW}.
     */
    int accept(final long msb, final long lsb, final long sequence, final long nowNs)
    {
        final long key = key(msb, lsb);
        int slot = (int)slotByKey.get(key);
        if (MISSING != slot && (msbs[slot] != msb || lsbs[slot] != lsb))
        {
            // Two incarnations with one 64-bit key: the later one gets no window.
            return NO_WINDOW;
        }
        if (MISSING == slot)
        {
            slot = open(key, msb, lsb, nowNs);
            if (slot < 0)
            {
                return NO_WINDOW;
            }
            highest[slot] = sequence;
            setBit(slot, sequence);
            lastUsedNs[slot] = nowNs;
            return ACCEPTED;
        }
        lastUsedNs[slot] = nowNs;
        final long top = highest[slot];
        if (sequence > top)
        {
            slide(slot, top, sequence);
            highest[slot] = sequence;
            setBit(slot, sequence);
            return ACCEPTED;
        }
        if (top - sequence >= WINDOW_BITS)
        {
            return TOO_OLD;
        }
        final int index = slot * WORDS + (int)((sequence >>> 6) % WORDS);
        final long mask = 1L << (sequence & 63);
        if (0 != (bits[index] & mask))
        {
            return DUPLICATE;
        }
        bits[index] |= mask;
        return ACCEPTED;
    }

    int size()
    {
        return used;
    }

    long recycled()
    {
        return recycled;
    }

    private int open(final long key, final long msb, final long lsb, final long nowNs)
    {
        int slot;
        if (used < capacity)
        {
            slot = used++;
        }
        else
        {
            slot = 0;
            for (int i = 1; i < capacity; i++)
            {
                if (lastUsedNs[i] - lastUsedNs[slot] < 0)
                {
                    slot = i;
                }
            }
            if (nowNs - lastUsedNs[slot] < recycleIdleNs)
            {
                return -1;
            }
            slotByKey.remove(key(msbs[slot], lsbs[slot]));
            recycled++;
        }
        msbs[slot] = msb;
        lsbs[slot] = lsb;
        final int base = slot * WORDS;
        for (int w = 0; w < WORDS; w++)
        {
            bits[base + w] = 0;
        }
        slotByKey.put(key, slot);
        return slot;
    }

    private void slide(final int slot, final long top, final long sequence)
    {
        final int base = slot * WORDS;
        final long fromWord = (top >>> 6) + 1;
        final long toWord = sequence >>> 6;
        if (toWord - fromWord + 1 >= WORDS)
        {
            for (int w = 0; w < WORDS; w++)
            {
                bits[base + w] = 0;
            }
            return;
        }
        for (long w = fromWord; w <= toWord; w++)
        {
            bits[base + (int)(w % WORDS)] = 0;
        }
    }

    private void setBit(final int slot, final long sequence)
    {
        bits[slot * WORDS + (int)((sequence >>> 6) % WORDS)] |= 1L << (sequence & 63);
    }

    private static long key(final long msb, final long lsb)
    {
        final long key = msb * 0x9E3779B97F4A7C15L ^ lsb;
        // The map's missing value is -1: a key of -1 is folded onto another.
        return MISSING == key ? 0x5DEECE66DL : key;
    }
}
