package io.orbitkv.ffm;

import java.lang.foreign.Arena;
import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;

/**
 * {@code struct io_uring_cqe} from {@code <linux/io_uring.h>}, the 16 byte completion queue entry (rings set up
 * without {@code IORING_SETUP_CQE32}).
 */
public final class IoUringCqe
{
    private static final GroupLayout $LAYOUT = MemoryLayout.structLayout(
        LibC.C_LONG.withName("user_data"),
        LibC.C_INT.withName("res"),
        LibC.C_INT.withName("flags")
    ).withName("io_uring_cqe");

    public static final long USER_DATA$OFFSET = $LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("user_data"));
    public static final long RES$OFFSET = $LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("res"));
    public static final long FLAGS$OFFSET = $LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("flags"));

    private IoUringCqe()
    {
    }

    /**
     * @return the layout of {@code struct io_uring_cqe}.
     */
    public static GroupLayout layout()
    {
        return $LAYOUT;
    }

    /**
     * @return {@code sizeof(struct io_uring_cqe)}.
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
     * @return offset of {@code user_data}, copied from the SQE.
     */
    public static long user_data$offset()
    {
        return USER_DATA$OFFSET;
    }

    /**
     * @param struct a {@code struct io_uring_cqe}.
     * @return the value of {@code user_data}.
     */
    public static long user_data(final MemorySegment struct)
    {
        return struct.get(LibC.C_LONG, USER_DATA$OFFSET);
    }

    /**
     * @param struct a {@code struct io_uring_cqe}.
     * @param value  to store in {@code user_data}.
     */
    public static void user_data(final MemorySegment struct, final long value)
    {
        struct.set(LibC.C_LONG, USER_DATA$OFFSET, value);
    }

    /**
     * @return offset of {@code res}, the result, {@code -errno} on failure.
     */
    public static long res$offset()
    {
        return RES$OFFSET;
    }

    /**
     * @param struct a {@code struct io_uring_cqe}.
     * @return the value of {@code res}.
     */
    public static int res(final MemorySegment struct)
    {
        return struct.get(LibC.C_INT, RES$OFFSET);
    }

    /**
     * @param struct a {@code struct io_uring_cqe}.
     * @param value  to store in {@code res}.
     */
    public static void res(final MemorySegment struct, final int value)
    {
        struct.set(LibC.C_INT, RES$OFFSET, value);
    }

    /**
     * @return offset of {@code flags}, {@code IORING_CQE_F_*} bits.
     */
    public static long flags$offset()
    {
        return FLAGS$OFFSET;
    }

    /**
     * @param struct a {@code struct io_uring_cqe}.
     * @return the value of {@code flags}.
     */
    public static int flags(final MemorySegment struct)
    {
        return struct.get(LibC.C_INT, FLAGS$OFFSET);
    }

    /**
     * @param struct a {@code struct io_uring_cqe}.
     * @param value  to store in {@code flags}.
     */
    public static void flags(final MemorySegment struct, final int value)
    {
        struct.set(LibC.C_INT, FLAGS$OFFSET, value);
    }
}
