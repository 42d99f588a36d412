package io.orbitkv.ffm;

import java.lang.foreign.Arena;
import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;

/**
 * {@code struct io_uring_getevents_arg} from {@code <linux/io_uring.h>}: the extended argument of
 * {@code io_uring_enter} with {@code IORING_ENTER_EXT_ARG}, used here to bound a wait by a timeout.
 */
public final class IoUringGeteventsArg
{
    private static final GroupLayout $LAYOUT = MemoryLayout.structLayout(
        LibC.C_LONG.withName("sigmask"),
        LibC.C_INT.withName("sigmask_sz"),
        LibC.C_INT.withName("min_wait_usec"),
        LibC.C_LONG.withName("ts")
    ).withName("io_uring_getevents_arg");

    public static final long SIGMASK$OFFSET = $LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("sigmask"));
    public static final long SIGMASK_SZ$OFFSET = $LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("sigmask_sz"));
    public static final long MIN_WAIT_USEC$OFFSET = $LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("min_wait_usec"));
    public static final long TS$OFFSET = $LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("ts"));

    private IoUringGeteventsArg()
    {
    }

    /**
     * @return the layout of {@code struct io_uring_getevents_arg}.
     */
    public static GroupLayout layout()
    {
        return $LAYOUT;
    }

    /**
     * @return {@code sizeof(struct io_uring_getevents_arg)}.
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
     * @return offset of {@code sigmask}, address of a signal mask, 0 for none.
     */
    public static long sigmask$offset()
    {
        return SIGMASK$OFFSET;
    }

    /**
     * @param struct a {@code struct io_uring_getevents_arg}.
     * @return the value of {@code sigmask}.
     */
    public static long sigmask(final MemorySegment struct)
    {
        return struct.get(LibC.C_LONG, SIGMASK$OFFSET);
    }

    /**
     * @param struct a {@code struct io_uring_getevents_arg}.
     * @param value  to store in {@code sigmask}.
     */
    public static void sigmask(final MemorySegment struct, final long value)
    {
        struct.set(LibC.C_LONG, SIGMASK$OFFSET, value);
    }

    /**
     * @return offset of {@code sigmask_sz}.
     */
    public static long sigmask_sz$offset()
    {
        return SIGMASK_SZ$OFFSET;
    }

    /**
     * @param struct a {@code struct io_uring_getevents_arg}.
     * @return the value of {@code sigmask_sz}.
     */
    public static int sigmask_sz(final MemorySegment struct)
    {
        return struct.get(LibC.C_INT, SIGMASK_SZ$OFFSET);
    }

    /**
     * @param struct a {@code struct io_uring_getevents_arg}.
     * @param value  to store in {@code sigmask_sz}.
     */
    public static void sigmask_sz(final MemorySegment struct, final int value)
    {
        struct.set(LibC.C_INT, SIGMASK_SZ$OFFSET, value);
    }

    /**
     * @return offset of {@code min_wait_usec}, {@code pad} in headers before 6.12.
     */
    public static long min_wait_usec$offset()
    {
        return MIN_WAIT_USEC$OFFSET;
    }

    /**
     * @param struct a {@code struct io_uring_getevents_arg}.
     * @return the value of {@code min_wait_usec}.
     */
    public static int min_wait_usec(final MemorySegment struct)
    {
        return struct.get(LibC.C_INT, MIN_WAIT_USEC$OFFSET);
    }

    /**
     * @param struct a {@code struct io_uring_getevents_arg}.
     * @param value  to store in {@code min_wait_usec}.
     */
    public static void min_wait_usec(final MemorySegment struct, final int value)
    {
        struct.set(LibC.C_INT, MIN_WAIT_USEC$OFFSET, value);
    }

    /**
     * @return offset of {@code ts}, address of a {@link KernelTimespec}, 0 to wait forever.
     */
    public static long ts$offset()
    {
        return TS$OFFSET;
    }

    /**
     * @param struct a {@code struct io_uring_getevents_arg}.
     * @return the value of {@code ts}.
     */
    public static long ts(final MemorySegment struct)
    {
        return struct.get(LibC.C_LONG, TS$OFFSET);
    }

    /**
     * @param struct a {@code struct io_uring_getevents_arg}.
     * @param value  to store in {@code ts}.
     */
    public static void ts(final MemorySegment struct, final long value)
    {
        struct.set(LibC.C_LONG, TS$OFFSET, value);
    }
}
