package io.orbitkv.transport;

import java.util.concurrent.atomic.AtomicLong;

/**
 * A bounded single-producer single-consumer ring of longs: the lock-free, allocation-free hand-over between the
 * owner's thread and the built-in transport's I/O thread. The producer publishes with a volatile store so that a
 * consumer about to sleep, which stores its flag and then reads the tail, cannot miss an element (see
 * {@link BuiltinTransport} on waking the I/O thread).
 */
final class LongRing
{
    private final long[] buffer;
    private final int mask;
    private final AtomicLong head = new AtomicLong();
    private final AtomicLong tail = new AtomicLong();
    private long headCache;
    private long tailCache;

    LongRing(final int minCapacity)
    {
        final int capacity = Integer.highestOneBit(Math.max(2, minCapacity - 1)) << 1;
        buffer = new long[capacity];
        mask = capacity - 1;
    }

    int capacity()
    {
        return buffer.length;
    }

    /**
     * Producer side.
     *
     * @return false when the ring is full (nothing was added).
     */
    boolean offer(final long value)
    {
        final long t = tail.getPlain();
        if (t - headCache >= buffer.length)
        {
            headCache = head.getAcquire();
            if (t - headCache >= buffer.length)
            {
                return false;
            }
        }
        buffer[(int)t & mask] = value;
        tail.set(t + 1);
        return true;
    }

    /**
     * Consumer side.
     *
     * @return true when an element is waiting.
     */
    boolean isEmpty()
    {
        final long h = head.getPlain();
        if (h < tailCache)
        {
            return false;
        }
        tailCache = tail.get();
        return h >= tailCache;
    }

    /**
     * Consumer side: call only after {@link #isEmpty} answered false.
     *
     * @return the oldest element, removed.
     */
    long take()
    {
        final long h = head.getPlain();
        final long value = buffer[(int)h & mask];
        head.setRelease(h + 1);
        return value;
    }
}
