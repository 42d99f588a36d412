package io.orbitkv.transport;

/**
 * The free entries of a fixed table, as a stack of their indexes: {@link #take()} hands out the most recently
 * released entry (at first the lowest index), {@link #release(int)} gives one back. The transports keep their read,
 * session, connection and batch tables in parallel arrays sized at construction and take their free entries from
 * one of these, so neither taking nor releasing allocates.
 * <p>
 * Not thread safe: one owner thread. A slot is released only once per take; that is the caller's to keep.
 */
public final class SlotPool
{
    /** Returned by {@link #take()} and {@link #peek()} when every slot is in use. */
    public static final int NONE = -1;

    private final int[] free;
    private int freeCount;

    /**
     * @param capacity slots {@code 0..capacity-1}, all free.
     */
    public SlotPool(final int capacity)
    {
        free = new int[capacity];
        for (int i = 0; i < capacity; i++)
        {
            free[i] = capacity - 1 - i;
        }
        freeCount = capacity;
    }

    /**
     * @return a free slot, now in use, or {@link #NONE}.
     */
    public int take()
    {
        return 0 == freeCount ? NONE : free[--freeCount];
    }

    /**
     * @return the slot {@link #take()} would hand out next, still free, or {@link #NONE}.
     */
    public int peek()
    {
        return 0 == freeCount ? NONE : free[freeCount - 1];
    }

    /**
     * @param slot a slot in use, now free again.
     */
    public void release(final int slot)
    {
        free[freeCount++] = slot;
    }

    /**
     * @return slots free.
     */
    public int available()
    {
        return freeCount;
    }

    /**
     * @return slots in use.
     */
    public int inUse()
    {
        return free.length - freeCount;
    }

    /**
     * @return slots in the table.
     */
    public int capacity()
    {
        return free.length;
    }
}
