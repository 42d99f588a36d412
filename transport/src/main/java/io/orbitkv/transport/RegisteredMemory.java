package io.orbitkv.transport;

/**
 * The memory ranges a {@link BuiltinTransport} may read into or export from, on the owner's thread only. Ranges
 * never overlap, and there are at most {@link BuiltinTransport#MAX_REGISTERED_RANGES} of them, so a linear scan is
 * the whole index.
 */
final class RegisteredMemory
{
    private final long[] address = new long[BuiltinTransport.MAX_REGISTERED_RANGES];
    private final long[] length = new long[BuiltinTransport.MAX_REGISTERED_RANGES];
    private final BuiltinTransportStats stats;
    private int count;

    RegisteredMemory(final BuiltinTransportStats stats)
    {
        this.stats = stats;
    }

    /**
     * @throws TransportException for an empty or wrapping range, one that overlaps a registered range, or one past
     *                            the limit; each is counted as an invalid range.
     */
    void register(final long start, final long bytes)
    {
        if (0 == start || bytes <= 0 || start + bytes < start)
        {
            stats.increment(BuiltinTransportStats.INVALID_RANGES);
            throw new TransportException("invalid memory range " + start + "+" + bytes);
        }
        for (int i = 0; i < count; i++)
        {
            if (start < address[i] + length[i] && address[i] < start + bytes)
            {
                stats.increment(BuiltinTransportStats.INVALID_RANGES);
                throw new TransportException("memory range " + start + "+" + bytes + " overlaps a registered one");
            }
        }
        if (count == BuiltinTransport.MAX_REGISTERED_RANGES)
        {
            stats.increment(BuiltinTransportStats.INVALID_RANGES);
            throw new TransportException(
                "more than " + BuiltinTransport.MAX_REGISTERED_RANGES + " registered memory ranges");
        }
        address[count] = start;
        length[count] = bytes;
        count++;
    }

    void unregister(final long start)
    {
        for (int i = 0; i < count; i++)
        {
            if (address[i] == start)
            {
                count--;
                address[i] = address[count];
                length[i] = length[count];
                return;
            }
        }
    }

    /**
     * @return true when {@code [start, start + bytes)} lies inside one registered range.
     */
    boolean contains(final long start, final long bytes)
    {
        for (int i = 0; i < count; i++)
        {
            final long from = address[i];
            if (start >= from && start <= from + length[i] - bytes)
            {
                return true;
            }
        }
        return false;
    }

    void clear()
    {
        count = 0;
    }
}
