package io.orbitkv.transport;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.zip.CRC32C;

/**
 * The memory ranges a {@link BuiltinTransport} may read into or export from, on the owner's thread only. Ranges
 * never overlap, and there are at most {@link BuiltinTransport#MAX_REGISTERED_RANGES} of them, so a linear scan is
 * the whole index.
 *
 * <p>Each range comes with {@link ReadWindows}: buffer views of it, made once at registration, through which the
 * I/O thread sums the bytes reads land there without allocating.
 */
final class RegisteredMemory
{
    private final long[] address = new long[BuiltinTransport.MAX_REGISTERED_RANGES];
    private final long[] length = new long[BuiltinTransport.MAX_REGISTERED_RANGES];
    private final ReadWindows[] windows = new ReadWindows[BuiltinTransport.MAX_REGISTERED_RANGES];
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
        windows[count] = new ReadWindows(start, bytes);
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
                windows[i] = windows[count];
                windows[count] = null;
                return;
            }
        }
    }

    /**
     * @return true when {@code [start, start + bytes)} lies inside one registered range.
     */
    boolean contains(final long start, final long bytes)
    {
        return null != windowsOf(start, bytes);
    }

    /**
     * @return the views of the registered range {@code [start, start + bytes)} lies inside, or null when none.
     */
    ReadWindows windowsOf(final long start, final long bytes)
    {
        for (int i = 0; i < count; i++)
        {
            final long from = address[i];
            if (start >= from && start <= from + length[i] - bytes)
            {
                return windows[i];
            }
        }
        return null;
    }

    void clear()
    {
        Arrays.fill(windows, 0, count, null);
        count = 0;
    }

    /**
     * Buffer views over one registered range, 2^{@link #WINDOW_SHIFT} bytes each (a buffer's capacity is an int), used
     * by the I/O thread only once a read naming the range was handed to it.
     */
    static final class ReadWindows
    {
        /** log2 of the bytes one view covers. */
        static final int WINDOW_SHIFT = 30;

        private final long base;
        private final int windowShift;
        private final ByteBuffer[] views;

        ReadWindows(final long base, final long bytes)
        {
            this(base, bytes, WINDOW_SHIFT);
        }

        /**
         * @param windowShift log2 of the bytes of one view, at most {@link #WINDOW_SHIFT} (tests cross views with
         *                    small ones).
         */
        ReadWindows(final long base, final long bytes, final int windowShift)
        {
            this.base = base;
            this.windowShift = windowShift;
            final long windowBytes = 1L << windowShift;
            final MemorySegment range = MemorySegment.ofAddress(base).reinterpret(bytes);
            views = new ByteBuffer[(int)((bytes + windowBytes - 1) >>> windowShift)];
            for (int i = 0; i < views.length; i++)
            {
                final long start = (long)i << windowShift;
                views[i] = range.asSlice(start, Math.min(windowBytes, bytes - start)).asByteBuffer();
            }
        }

        /**
         * Add {@code [address, address + bytes)}, which lies inside the range, to a running sum.
         */
        void update(final CRC32C crc, final long address, final long bytes)
        {
            long position = address - base;
            long remaining = bytes;
            while (remaining > 0)
            {
                final ByteBuffer view = views[(int)(position >>> windowShift)];
                final int start = (int)(position & ((1L << windowShift) - 1));
                final int n = (int)Math.min(remaining, view.capacity() - start);
                view.limit(start + n).position(start);
                crc.update(view);
                position += n;
                remaining -= n;
            }
        }
    }
}
