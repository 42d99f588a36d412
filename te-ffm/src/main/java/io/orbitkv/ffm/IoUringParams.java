package io.orbitkv.ffm;

import java.lang.foreign.Arena;
import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;

/**
 * {@code struct io_uring_params} from {@code <linux/io_uring.h>}: passed to {@code io_uring_setup} with the
 * wanted flags and sizes, returned with the actual sizes, the features and the ring offsets.
 */
public final class IoUringParams
{
    private static final GroupLayout $LAYOUT = MemoryLayout.structLayout(
        LibC.C_INT.withName("sq_entries"),
        LibC.C_INT.withName("cq_entries"),
        LibC.C_INT.withName("flags"),
        LibC.C_INT.withName("sq_thread_cpu"),
        LibC.C_INT.withName("sq_thread_idle"),
        LibC.C_INT.withName("features"),
        LibC.C_INT.withName("wq_fd"),
        MemoryLayout.sequenceLayout(3, LibC.C_INT).withName("resv"),
        IoSqringOffsets.layout().withName("sq_off"),
        IoCqringOffsets.layout().withName("cq_off")
    ).withName("io_uring_params");

    public static final long SQ_ENTRIES$OFFSET = $LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("sq_entries"));
    public static final long CQ_ENTRIES$OFFSET = $LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("cq_entries"));
    public static final long FLAGS$OFFSET = $LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("flags"));
    public static final long SQ_THREAD_CPU$OFFSET = $LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("sq_thread_cpu"));
    public static final long SQ_THREAD_IDLE$OFFSET = $LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("sq_thread_idle"));
    public static final long FEATURES$OFFSET = $LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("features"));
    public static final long WQ_FD$OFFSET = $LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("wq_fd"));
    public static final long RESV$OFFSET = $LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("resv"));
    public static final long SQ_OFF$OFFSET = $LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("sq_off"));
    public static final long CQ_OFF$OFFSET = $LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("cq_off"));

    private IoUringParams()
    {
    }

    /**
     * @return the layout of {@code struct io_uring_params}.
     */
    public static GroupLayout layout()
    {
        return $LAYOUT;
    }

    /**
     * @return {@code sizeof(struct io_uring_params)}.
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
     * @return offset of {@code sq_entries}.
     */
    public static long sq_entries$offset()
    {
        return SQ_ENTRIES$OFFSET;
    }

    /**
     * @param struct a {@code struct io_uring_params}.
     * @return the value of {@code sq_entries}.
     */
    public static int sq_entries(final MemorySegment struct)
    {
        return struct.get(LibC.C_INT, SQ_ENTRIES$OFFSET);
    }

    /**
     * @param struct a {@code struct io_uring_params}.
     * @param value  to store in {@code sq_entries}.
     */
    public static void sq_entries(final MemorySegment struct, final int value)
    {
        struct.set(LibC.C_INT, SQ_ENTRIES$OFFSET, value);
    }

    /**
     * @return offset of {@code cq_entries}, read as input only with {@code IORING_SETUP_CQSIZE}.
     */
    public static long cq_entries$offset()
    {
        return CQ_ENTRIES$OFFSET;
    }

    /**
     * @param struct a {@code struct io_uring_params}.
     * @return the value of {@code cq_entries}.
     */
    public static int cq_entries(final MemorySegment struct)
    {
        return struct.get(LibC.C_INT, CQ_ENTRIES$OFFSET);
    }

    /**
     * @param struct a {@code struct io_uring_params}.
     * @param value  to store in {@code cq_entries}.
     */
    public static void cq_entries(final MemorySegment struct, final int value)
    {
        struct.set(LibC.C_INT, CQ_ENTRIES$OFFSET, value);
    }

    /**
     * @return offset of {@code flags}, {@code IORING_SETUP_*} bits.
     */
    public static long flags$offset()
    {
        return FLAGS$OFFSET;
    }

    /**
     * @param struct a {@code struct io_uring_params}.
     * @return the value of {@code flags}.
     */
    public static int flags(final MemorySegment struct)
    {
        return struct.get(LibC.C_INT, FLAGS$OFFSET);
    }

    /**
     * @param struct a {@code struct io_uring_params}.
     * @param value  to store in {@code flags}.
     */
    public static void flags(final MemorySegment struct, final int value)
    {
        struct.set(LibC.C_INT, FLAGS$OFFSET, value);
    }

    /**
     * @return offset of {@code sq_thread_cpu}.
     */
    public static long sq_thread_cpu$offset()
    {
        return SQ_THREAD_CPU$OFFSET;
    }

    /**
     * @param struct a {@code struct io_uring_params}.
     * @return the value of {@code sq_thread_cpu}.
     */
    public static int sq_thread_cpu(final MemorySegment struct)
    {
        return struct.get(LibC.C_INT, SQ_THREAD_CPU$OFFSET);
    }

    /**
     * @param struct a {@code struct io_uring_params}.
     * @param value  to store in {@code sq_thread_cpu}.
     */
    public static void sq_thread_cpu(final MemorySegment struct, final int value)
    {
        struct.set(LibC.C_INT, SQ_THREAD_CPU$OFFSET, value);
    }

    /**
     * @return offset of {@code sq_thread_idle}, milliseconds.
     */
    public static long sq_thread_idle$offset()
    {
        return SQ_THREAD_IDLE$OFFSET;
    }

    /**
     * @param struct a {@code struct io_uring_params}.
     * @return the value of {@code sq_thread_idle}.
     */
    public static int sq_thread_idle(final MemorySegment struct)
    {
        return struct.get(LibC.C_INT, SQ_THREAD_IDLE$OFFSET);
    }

    /**
     * @param struct a {@code struct io_uring_params}.
     * @param value  to store in {@code sq_thread_idle}.
     */
    public static void sq_thread_idle(final MemorySegment struct, final int value)
    {
        struct.set(LibC.C_INT, SQ_THREAD_IDLE$OFFSET, value);
    }

    /**
     * @return offset of {@code features}, {@code IORING_FEAT_*} bits reported by the kernel.
     */
    public static long features$offset()
    {
        return FEATURES$OFFSET;
    }

    /**
     * @param struct a {@code struct io_uring_params}.
     * @return the value of {@code features}.
     */
    public static int features(final MemorySegment struct)
    {
        return struct.get(LibC.C_INT, FEATURES$OFFSET);
    }

    /**
     * @param struct a {@code struct io_uring_params}.
     * @param value  to store in {@code features}.
     */
    public static void features(final MemorySegment struct, final int value)
    {
        struct.set(LibC.C_INT, FEATURES$OFFSET, value);
    }

    /**
     * @return offset of {@code wq_fd}.
     */
    public static long wq_fd$offset()
    {
        return WQ_FD$OFFSET;
    }

    /**
     * @param struct a {@code struct io_uring_params}.
     * @return the value of {@code wq_fd}.
     */
    public static int wq_fd(final MemorySegment struct)
    {
        return struct.get(LibC.C_INT, WQ_FD$OFFSET);
    }

    /**
     * @param struct a {@code struct io_uring_params}.
     * @param value  to store in {@code wq_fd}.
     */
    public static void wq_fd(final MemorySegment struct, final int value)
    {
        struct.set(LibC.C_INT, WQ_FD$OFFSET, value);
    }

    /**
     * @return offset of {@code resv}.
     */
    public static long resv$offset()
    {
        return RESV$OFFSET;
    }

    /**
     * @return offset of {@code sq_off}.
     */
    public static long sq_off$offset()
    {
        return SQ_OFF$OFFSET;
    }

    /**
     * @param struct a {@code struct io_uring_params}.
     * @return a slice over the nested {@code sq_off}; allocates, for slow paths.
     */
    public static MemorySegment sq_off(final MemorySegment struct)
    {
        return struct.asSlice(SQ_OFF$OFFSET, IoSqringOffsets.sizeof());
    }

    /**
     * @return offset of {@code cq_off}.
     */
    public static long cq_off$offset()
    {
        return CQ_OFF$OFFSET;
    }

    /**
     * @param struct a {@code struct io_uring_params}.
     * @return a slice over the nested {@code cq_off}; allocates, for slow paths.
     */
    public static MemorySegment cq_off(final MemorySegment struct)
    {
        return struct.asSlice(CQ_OFF$OFFSET, IoCqringOffsets.sizeof());
    }
}
