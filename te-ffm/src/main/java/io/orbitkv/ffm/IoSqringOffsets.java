package io.orbitkv.ffm;

import java.lang.foreign.Arena;
import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;

/**
 * {@code struct io_sqring_offsets} from {@code <linux/io_uring.h>}: where, inside the mapped SQ ring, the
 * kernel placed each field. Filled in by {@code io_uring_setup} as part of {@link IoUringParams}.
 */
public final class IoSqringOffsets
{
    private static final GroupLayout $LAYOUT = MemoryLayout.structLayout(
        LibC.C_INT.withName("head"),
        LibC.C_INT.withName("tail"),
        LibC.C_INT.withName("ring_mask"),
        LibC.C_INT.withName("ring_entries"),
        LibC.C_INT.withName("flags"),
        LibC.C_INT.withName("dropped"),
        LibC.C_INT.withName("array"),
        LibC.C_INT.withName("resv1"),
        LibC.C_LONG.withName("user_addr")
    ).withName("io_sqring_offsets");

    public static final long HEAD$OFFSET = $LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("head"));
    public static final long TAIL$OFFSET = $LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("tail"));
    public static final long RING_MASK$OFFSET = $LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("ring_mask"));
    public static final long RING_ENTRIES$OFFSET = $LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("ring_entries"));
    public static final long FLAGS$OFFSET = $LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("flags"));
    public static final long DROPPED$OFFSET = $LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("dropped"));
    public static final long ARRAY$OFFSET = $LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("array"));
    public static final long RESV1$OFFSET = $LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("resv1"));
    public static final long USER_ADDR$OFFSET = $LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("user_addr"));

    private IoSqringOffsets()
    {
    }

    /**
     * @return the layout of {@code struct io_sqring_offsets}.
     */
    public static GroupLayout layout()
    {
        return $LAYOUT;
    }

    /**
     * @return {@code sizeof(struct io_sqring_offsets)}.
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
     * @return offset of {@code head}, advanced by the kernel as it consumes SQEs.
     */
    public static long head$offset()
    {
        return HEAD$OFFSET;
    }

    /**
     * @param struct a {@code struct io_sqring_offsets}.
     * @return the value of {@code head}.
     */
    public static int head(final MemorySegment struct)
    {
        return struct.get(LibC.C_INT, HEAD$OFFSET);
    }

    /**
     * @param struct a {@code struct io_sqring_offsets}.
     * @param value  to store in {@code head}.
     */
    public static void head(final MemorySegment struct, final int value)
    {
        struct.set(LibC.C_INT, HEAD$OFFSET, value);
    }

    /**
     * @return offset of {@code tail}, advanced by the application to publish SQEs.
     */
    public static long tail$offset()
    {
        return TAIL$OFFSET;
    }

    /**
     * @param struct a {@code struct io_sqring_offsets}.
     * @return the value of {@code tail}.
     */
    public static int tail(final MemorySegment struct)
    {
        return struct.get(LibC.C_INT, TAIL$OFFSET);
    }

    /**
     * @param struct a {@code struct io_sqring_offsets}.
     * @param value  to store in {@code tail}.
     */
    public static void tail(final MemorySegment struct, final int value)
    {
        struct.set(LibC.C_INT, TAIL$OFFSET, value);
    }

    /**
     * @return offset of {@code ring_mask}.
     */
    public static long ring_mask$offset()
    {
        return RING_MASK$OFFSET;
    }

    /**
     * @param struct a {@code struct io_sqring_offsets}.
     * @return the value of {@code ring_mask}.
     */
    public static int ring_mask(final MemorySegment struct)
    {
        return struct.get(LibC.C_INT, RING_MASK$OFFSET);
    }

    /**
     * @param struct a {@code struct io_sqring_offsets}.
     * @param value  to store in {@code ring_mask}.
     */
    public static void ring_mask(final MemorySegment struct, final int value)
    {
        struct.set(LibC.C_INT, RING_MASK$OFFSET, value);
    }

    /**
     * @return offset of {@code ring_entries}.
     */
    public static long ring_entries$offset()
    {
        return RING_ENTRIES$OFFSET;
    }

    /**
     * @param struct a {@code struct io_sqring_offsets}.
     * @return the value of {@code ring_entries}.
     */
    public static int ring_entries(final MemorySegment struct)
    {
        return struct.get(LibC.C_INT, RING_ENTRIES$OFFSET);
    }

    /**
     * @param struct a {@code struct io_sqring_offsets}.
     * @param value  to store in {@code ring_entries}.
     */
    public static void ring_entries(final MemorySegment struct, final int value)
    {
        struct.set(LibC.C_INT, RING_ENTRIES$OFFSET, value);
    }

    /**
     * @return offset of {@code flags}, {@code IORING_SQ_*} bits set by the kernel.
     */
    public static long flags$offset()
    {
        return FLAGS$OFFSET;
    }

    /**
     * @param struct a {@code struct io_sqring_offsets}.
     * @return the value of {@code flags}.
     */
    public static int flags(final MemorySegment struct)
    {
        return struct.get(LibC.C_INT, FLAGS$OFFSET);
    }

    /**
     * @param struct a {@code struct io_sqring_offsets}.
     * @param value  to store in {@code flags}.
     */
    public static void flags(final MemorySegment struct, final int value)
    {
        struct.set(LibC.C_INT, FLAGS$OFFSET, value);
    }

    /**
     * @return offset of {@code dropped}, count of invalid SQE indexes skipped.
     */
    public static long dropped$offset()
    {
        return DROPPED$OFFSET;
    }

    /**
     * @param struct a {@code struct io_sqring_offsets}.
     * @return the value of {@code dropped}.
     */
    public static int dropped(final MemorySegment struct)
    {
        return struct.get(LibC.C_INT, DROPPED$OFFSET);
    }

    /**
     * @param struct a {@code struct io_sqring_offsets}.
     * @param value  to store in {@code dropped}.
     */
    public static void dropped(final MemorySegment struct, final int value)
    {
        struct.set(LibC.C_INT, DROPPED$OFFSET, value);
    }

    /**
     * @return offset of {@code array}, the SQE index array.
     */
    public static long array$offset()
    {
        return ARRAY$OFFSET;
    }

    /**
     * @param struct a {@code struct io_sqring_offsets}.
     * @return the value of {@code array}.
     */
    public static int array(final MemorySegment struct)
    {
        return struct.get(LibC.C_INT, ARRAY$OFFSET);
    }

    /**
     * @param struct a {@code struct io_sqring_offsets}.
     * @param value  to store in {@code array}.
     */
    public static void array(final MemorySegment struct, final int value)
    {
        struct.set(LibC.C_INT, ARRAY$OFFSET, value);
    }

    /**
     * @return offset of {@code resv1}.
     */
    public static long resv1$offset()
    {
        return RESV1$OFFSET;
    }

    /**
     * @param struct a {@code struct io_sqring_offsets}.
     * @return the value of {@code resv1}.
     */
    public static int resv1(final MemorySegment struct)
    {
        return struct.get(LibC.C_INT, RESV1$OFFSET);
    }

    /**
     * @param struct a {@code struct io_sqring_offsets}.
     * @param value  to store in {@code resv1}.
     */
    public static void resv1(final MemorySegment struct, final int value)
    {
        struct.set(LibC.C_INT, RESV1$OFFSET, value);
    }

    /**
     * @return offset of {@code user_addr}, {@code resv2} in headers before 6.5.
     */
    public static long user_addr$offset()
    {
        return USER_ADDR$OFFSET;
    }

    /**
     * @param struct a {@code struct io_sqring_offsets}.
     * @return the value of {@code user_addr}.
     */
    public static long user_addr(final MemorySegment struct)
    {
        return struct.get(LibC.C_LONG, USER_ADDR$OFFSET);
    }

    /**
     * @param struct a {@code struct io_sqring_offsets}.
     * @param value  to store in {@code user_addr}.
     */
    public static void user_addr(final MemorySegment struct, final long value)
    {
        struct.set(LibC.C_LONG, USER_ADDR$OFFSET, value);
    }
}
