package io.orbitkv.index;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.Objects;
import java.util.zip.CRC32C;

/**
 * CRC32C of byte ranges of one off-heap region, of any size, without allocating per range.
 * <p>
 * {@link CRC32C#update(ByteBuffer)} sums a direct buffer with the processor's CRC32C instructions, but a buffer
 * cannot span more than 2 GiB and making one per range would allocate. So the region is covered at construction by
 * fixed {@link #WINDOW_BYTES} views, and a range is summed through the view(s) it falls in, moving only their
 * position and limit; a range that crosses a window boundary is summed in two pieces, which CRC32C allows as it is
 * a running sum.
 * <p>
 * Not thread safe: the views' positions are shared state. Use one instance per thread over the same region.
 */
public final class BlockChecksum
{
    /**
     * log2 of {@link #WINDOW_BYTES}.
     */
    public static final int WINDOW_SHIFT = 30;

    /**
     * Bytes covered by one preallocated view.
     */
    public static final long WINDOW_BYTES = 1L << WINDOW_SHIFT;

    private final long regionBytes;
    private final int windowShift;
    private final long windowMask;
    private final ByteBuffer[] windows;
    private final CRC32C scratch = new CRC32C();

    /**
     * @param region the memory whose ranges are summed; must stay mapped while this is used.
     */
    public BlockChecksum(final MemorySegment region)
    {
        this(region, WINDOW_SHIFT);
    }

    /**
     * @param region      the memory whose ranges are summed.
     * @param windowShift log2 of the bytes of one view, 12..{@link #WINDOW_SHIFT} (tests cross windows with small
     *                    ones).
     */
    BlockChecksum(final MemorySegment region, final int windowShift)
    {
        if (windowShift < 12 || windowShift > WINDOW_SHIFT)
        {
            throw new IllegalArgumentException("window shift must be in [12, " + WINDOW_SHIFT + "]: " + windowShift);
        }
        this.regionBytes = region.byteSize();
        this.windowShift = windowShift;
        final long windowBytes = 1L << windowShift;
        this.windowMask = windowBytes - 1;
        final int count = (int)((regionBytes + windowBytes - 1) >>> windowShift);
        windows = new ByteBuffer[count];
        for (int i = 0; i < count; i++)
        {
            final long start = (long)i << windowShift;
            windows[i] = region.asSlice(start, Math.min(windowBytes, regionBytes - start)).asByteBuffer();
        }
    }

    /**
     * @return size of the region.
     */
    public long regionBytes()
    {
        return regionBytes;
    }

    /**
     * Add a range of the region to a running sum.
     *
     * @param crc    the running sum.
     * @param offset first byte of the range in the region.
     * @param length bytes in the range, may be 0.
     * @throws IndexOutOfBoundsException if the range is not inside the region.
     */
    public void update(final CRC32C crc, final long offset, final long length)
    {
        Objects.checkFromIndexSize(offset, length, regionBytes);
        long position = offset;
        long remaining = length;
        while (remaining > 0)
        {
            final ByteBuffer window = windows[(int)(position >>> windowShift)];
            final int start = (int)(position & windowMask);
            final int bytes = (int)Math.min(remaining, window.capacity() - start);
            window.limit(start + bytes).position(start);
            crc.update(window);
            position += bytes;
            remaining -= bytes;
        }
    }

    /**
     * The CRC32C of one range on its own.
     *
     * @param offset first byte of the range in the region.
     * @param length bytes in the range.
     * @return the sum, the low 32 bits of {@link CRC32C#getValue()}.
     */
    public int compute(final long offset, final long length)
    {
        final CRC32C crc = scratch;
        crc.reset();
        update(crc, offset, length);
        return (int)crc.getValue();
    }
}
