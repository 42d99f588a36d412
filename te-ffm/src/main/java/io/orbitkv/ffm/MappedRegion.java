package io.orbitkv.ffm;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * An anonymous mapping owned by one object and released by {@link #close()}.
 *
 * <p>The {@link #segment()} belongs to a shared arena that is closed before the range is unmapped, so a
 * stale access from any thread fails with {@link IllegalStateException} instead of touching memory that the
 * kernel may already have handed to someone else.
 */
@SuppressWarnings("restricted") // binding native code is this class's purpose; JVMs run with native access
public final class MappedRegion implements AutoCloseable
{
    private final long address;
    private final long length;
    private final boolean hugePageAdvised;
    private final int hugePageAdviceErrno;
    private final Arena arena;
    private final MemorySegment segment;
    private boolean isClosed;

    MappedRegion(final long address, final long length, final boolean hugePageAdvised, final int hugePageAdviceErrno)
    {
        this.address = address;
        this.length = length;
        this.hugePageAdvised = hugePageAdvised;
        this.hugePageAdviceErrno = hugePageAdviceErrno;
        this.arena = Arena.ofShared();
        this.segment = MemorySegment.ofAddress(address).reinterpret(length, arena, null);
    }

    /**
     * @return the start of the region, aligned to {@link HugePageMemory#HUGE_PAGE_SIZE}.
     */
    public long address()
    {
        return address;
    }

    /**
     * @return the length of the region in bytes, a multiple of {@link HugePageMemory#HUGE_PAGE_SIZE}.
     */
    public long length()
    {
        return length;
    }

    /**
     * @return the whole region, valid until {@link #close()}.
     */
    public MemorySegment segment()
    {
        return segment;
    }

    /**
     * Whether the kernel accepted {@code madvise(MADV_HUGEPAGE)} for the region. Acceptance makes the region
     * eligible for transparent huge pages; whether it is backed by them also depends on the system's THP mode
     * and on free contiguous memory at first touch.
     *
     * @return true if huge pages were requested and the advice accepted.
     */
    public boolean hugePageAdvised()
    {
        return hugePageAdvised;
    }

    /**
     * @return the {@code errno} of a refused huge page advice (e.g. {@link Errno#EINVAL} on a kernel built
     * without THP), 0 when the advice was accepted or not requested.
     */
    public int hugePageAdviceErrno()
    {
        return hugePageAdviceErrno;
    }

    /**
     * @return true once {@link #close()} has unmapped the region.
     */
    public synchronized boolean isClosed()
    {
        return isClosed;
    }

    /**
     * Invalidate {@link #segment()} and unmap the region; later calls do nothing.
     *
     * @throws IllegalStateException if a downcall on another thread still holds the segment; the region stays
     *                               mapped and close may be retried.
     * @throws NativeCallException   if {@code munmap} fails.
     */
    public synchronized void close()
    {
        if (isClosed)
        {
            return;
        }

        arena.close();
        isClosed = true;

        final CallState state = new CallState();
        if (LibC.munmap(state, MemorySegment.ofAddress(address), length) != 0)
        {
            throw new NativeCallException(
                "munmap(address=0x" + Long.toHexString(address) + ", length=" + length + ")", state.errno());
        }
    }

    public String toString()
    {
        return "MappedRegion{address=0x" + Long.toHexString(address) +
            ", length=" + length +
            ", hugePageAdvised=" + hugePageAdvised +
            ", hugePageAdviceErrno=" + hugePageAdviceErrno +
            '}';
    }
}
