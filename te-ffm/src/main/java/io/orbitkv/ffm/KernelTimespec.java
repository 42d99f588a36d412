package io.orbitkv.ffm;

import java.lang.foreign.Arena;
import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;

/**
 * {@code struct __kernel_timespec} from {@code <linux/time_types.h>}: the 64-bit time the io_uring system
 * calls take on every architecture.
 */
public final class KernelTimespec
{
    private static final GroupLayout $LAYOUT = MemoryLayout.structLayout(
        LibC.C_LONG.withName("tv_sec"),
        LibC.C_LONG.withName("tv_nsec")
    ).withName("__kernel_timespec");

    public static final long TV_SEC$OFFSET = $LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("tv_sec"));
    public static final long TV_NSEC$OFFSET = $LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("tv_nsec"));

    private KernelTimespec()
    {
    }

    /**
     * @return the layout of {@code struct __kernel_timespec}.
     */
    public static GroupLayout layout()
    {
        return $LAYOUT;
    }

    /**
     * @return {@code sizeof(struct __kernel_timespec)}.
     */
    public static long sizeof()
    {
        return $LAYOUT.byteSize();
    }

    /**
     * @param arena that owns the memory.
     * @return a zeroed struct allocated in the arena.
     */
    public static MemorySegment allocate(final Arena arena)
    {
        return arena.allocate($LAYOUT);
    }

    /**
     * @return offset of {@code tv_sec}, seconds.
     */
    public static long tv_sec$offset()
    {
        return TV_SEC$OFFSET;
    }

    /**
     * @param struct a {@code struct __kernel_timespec}.
     * @return the value of {@code tv_sec}.
     */
    public static long tv_sec(final MemorySegment struct)
    {
        return struct.get(LibC.C_LONG, TV_SEC$OFFSET);
    }

    /**
     * @param struct a {@code struct __kernel_timespec}.
     * @param value  to store in {@code tv_sec}.
     */
    public static void tv_sec(final MemorySegment struct, final long value)
    {
        struct.set(LibC.C_LONG, TV_SEC$OFFSET, value);
    }

    /**
     * @return offset of {@code tv_nsec}, nanoseconds.
     */
    public static long tv_nsec$offset()
    {
        return TV_NSEC$OFFSET;
    }

    /**
     * @param struct a {@code struct __kernel_timespec}.
     * @return the value of {@code tv_nsec}.
     */
    public static long tv_nsec(final MemorySegment struct)
    {
        return struct.get(LibC.C_LONG, TV_NSEC$OFFSET);
    }

    /**
     * @param struct a {@code struct __kernel_timespec}.
     * @param value  to store in {@code tv_nsec}.
     */
    public static void tv_nsec(final MemorySegment struct, final long value)
    {
        struct.set(LibC.C_LONG, TV_NSEC$OFFSET, value);
    }
}
