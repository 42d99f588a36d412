package io.orbitkv.ffm;

import java.lang.foreign.Arena;
import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * {@code struct io_uring_sqe} from {@code <linux/io_uring.h>}, the 64 byte submission queue entry.
 *
 * <p>The C struct overlays several fields in unions; the layout names the member OrbitKV uses and the other
 * members it needs are aliases sharing that offset ({@code addr2} = {@code off}, {@code fsync_flags} =
 * {@code rw_flags}, {@code buf_group} = {@code buf_index}, {@code splice_fd_in} = {@code file_index}). The
 * C layout harness checks aliases like any other field.
 */
public final class IoUringSqe
{
    private static final GroupLayout $LAYOUT = MemoryLayout.structLayout(
        ValueLayout.JAVA_BYTE.withName("opcode"),
        ValueLayout.JAVA_BYTE.withName("flags"),
        ValueLayout.JAVA_SHORT.withName("ioprio"),
        LibC.C_INT.withName("fd"),
        LibC.C_LONG.withName("off"),
        LibC.C_LONG.withName("addr"),
        LibC.C_INT.withName("len"),
        LibC.C_INT.withName("rw_flags"),
        LibC.C_LONG.withName("user_data"),
        ValueLayout.JAVA_SHORT.withName("buf_index"),
        ValueLayout.JAVA_SHORT.withName("personality"),
        LibC.C_INT.withName("file_index"),
        LibC.C_LONG.withName("addr3"),
        LibC.C_LONG.withName("pad2")
    ).withName("io_uring_sqe");

    public static final long OPCODE$OFFSET = $LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("opcode"));
    public static final long FLAGS$OFFSET = $LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("flags"));
    public static final long IOPRIO$OFFSET = $LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("ioprio"));
    public static final long FD$OFFSET = $LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("fd"));
    public static final long OFF$OFFSET = $LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("off"));
    public static final long ADDR$OFFSET = $LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("addr"));
    public static final long LEN$OFFSET = $LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("len"));
    public static final long RW_FLAGS$OFFSET = $LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("rw_flags"));
    public static final long USER_DATA$OFFSET = $LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("user_data"));
    public static final long BUF_INDEX$OFFSET = $LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("buf_index"));
    public static final long PERSONALITY$OFFSET = $LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("personality"));
    public static final long FILE_INDEX$OFFSET = $LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("file_index"));
    public static final long ADDR3$OFFSET = $LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("addr3"));
    public static final long PAD2$OFFSET = $LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("pad2"));
    public static final long ADDR2$OFFSET = OFF$OFFSET;
    public static final long FSYNC_FLAGS$OFFSET = RW_FLAGS$OFFSET;
    public static final long BUF_GROUP$OFFSET = BUF_INDEX$OFFSET;
    public static final long SPLICE_FD_IN$OFFSET = FILE_INDEX$OFFSET;

    private IoUringSqe()
    {
    }

    /**
     * @return the layout of {@code struct io_uring_sqe}.
     */
    public static GroupLayout layout()
    {
        return $LAYOUT;
    }

    /**
     * @return {@code sizeof(struct io_uring_sqe)}.
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
     * @return offset of {@code opcode}, an {@code IORING_OP_*} value.
     */
    public static long opcode$offset()
    {
        return OPCODE$OFFSET;
    }

    /**
     * @param struct a {@code struct io_uring_sqe}.
     * @return the value of {@code opcode}.
     */
    public static byte opcode(final MemorySegment struct)
    {
        return struct.get(ValueLayout.JAVA_BYTE, OPCODE$OFFSET);
    }

    /**
     * @param struct a {@code struct io_uring_sqe}.
     * @param value  to store in {@code opcode}.
     */
    public static void opcode(final MemorySegment struct, final byte value)
    {
        struct.set(ValueLayout.JAVA_BYTE, OPCODE$OFFSET, value);
    }

    /**
     * @return offset of {@code flags}, {@code IOSQE_*} bits.
     */
    public static long flags$offset()
    {
        return FLAGS$OFFSET;
    }

    /**
     * @param struct a {@code struct io_uring_sqe}.
     * @return the value of {@code flags}.
     */
    public static byte flags(final MemorySegment struct)
    {
        return struct.get(ValueLayout.JAVA_BYTE, FLAGS$OFFSET);
    }

    /**
     * @param struct a {@code struct io_uring_sqe}.
     * @param value  to store in {@code flags}.
     */
    public static void flags(final MemorySegment struct, final byte value)
    {
        struct.set(ValueLayout.JAVA_BYTE, FLAGS$OFFSET, value);
    }

    /**
     * @return offset of {@code ioprio}.
     */
    public static long ioprio$offset()
    {
        return IOPRIO$OFFSET;
    }

    /**
     * @param struct a {@code struct io_uring_sqe}.
     * @return the value of {@code ioprio}.
     */
    public static short ioprio(final MemorySegment struct)
    {
        return struct.get(ValueLayout.JAVA_SHORT, IOPRIO$OFFSET);
    }

    /**
     * @param struct a {@code struct io_uring_sqe}.
     * @param value  to store in {@code ioprio}.
     */
    public static void ioprio(final MemorySegment struct, final short value)
    {
        struct.set(ValueLayout.JAVA_SHORT, IOPRIO$OFFSET, value);
    }

    /**
     * @return offset of {@code fd}.
     */
    public static long fd$offset()
    {
        return FD$OFFSET;
    }

    /**
     * @param struct a {@code struct io_uring_sqe}.
     * @return the value of {@code fd}.
     */
    public static int fd(final MemorySegment struct)
    {
        return struct.get(LibC.C_INT, FD$OFFSET);
    }

    /**
     * @param struct a {@code struct io_uring_sqe}.
     * @param value  to store in {@code fd}.
     */
    public static void fd(final MemorySegment struct, final int value)
    {
        struct.set(LibC.C_INT, FD$OFFSET, value);
    }

    /**
     * @return offset of {@code off}, the file offset.
     */
    public static long off$offset()
    {
        return OFF$OFFSET;
    }

    /**
     * @param struct a {@code struct io_uring_sqe}.
     * @return the value of {@code off}.
     */
    public static long off(final MemorySegment struct)
    {
        return struct.get(LibC.C_LONG, OFF$OFFSET);
    }

    /**
     * @param struct a {@code struct io_uring_sqe}.
     * @param value  to store in {@code off}.
     */
    public static void off(final MemorySegment struct, final long value)
    {
        struct.set(LibC.C_LONG, OFF$OFFSET, value);
    }

    /**
     * @return offset of {@code addr}, the buffer or iovec array address.
     */
    public static long addr$offset()
    {
        return ADDR$OFFSET;
    }

    /**
     * @param struct a {@code struct io_uring_sqe}.
     * @return the value of {@code addr}.
     */
    public static long addr(final MemorySegment struct)
    {
        return struct.get(LibC.C_LONG, ADDR$OFFSET);
    }

    /**
     * @param struct a {@code struct io_uring_sqe}.
     * @param value  to store in {@code addr}.
     */
    public static void addr(final MemorySegment struct, final long value)
    {
        struct.set(LibC.C_LONG, ADDR$OFFSET, value);
    }

    /**
     * @return offset of {@code len}, buffer bytes or iovec count.
     */
    public static long len$offset()
    {
        return LEN$OFFSET;
    }

    /**
     * @param struct a {@code struct io_uring_sqe}.
     * @return the value of {@code len}.
     */
    public static int len(final MemorySegment struct)
    {
        return struct.get(LibC.C_INT, LEN$OFFSET);
    }

    /**
     * @param struct a {@code struct io_uring_sqe}.
     * @param value  to store in {@code len}.
     */
    public static void len(final MemorySegment struct, final int value)
    {
        struct.set(LibC.C_INT, LEN$OFFSET, value);
    }

    /**
     * @return offset of {@code rw_flags}, {@code RWF_*} bits for reads and writes.
     */
    public static long rw_flags$offset()
    {
        return RW_FLAGS$OFFSET;
    }

    /**
     * @param struct a {@code struct io_uring_sqe}.
     * @return the value of {@code rw_flags}.
     */
    public static int rw_flags(final MemorySegment struct)
    {
        return struct.get(LibC.C_INT, RW_FLAGS$OFFSET);
    }

    /**
     * @param struct a {@code struct io_uring_sqe}.
     * @param value  to store in {@code rw_flags}.
     */
    public static void rw_flags(final MemorySegment struct, final int value)
    {
        struct.set(LibC.C_INT, RW_FLAGS$OFFSET, value);
    }

    /**
     * @return offset of {@code user_data}, returned unchanged in the CQE.
     */
    public static long user_data$offset()
    {
        return USER_DATA$OFFSET;
    }

    /**
     * @param struct a {@code struct io_uring_sqe}.
     * @return the value of {@code user_data}.
     */
    public static long user_data(final MemorySegment struct)
    {
        return struct.get(LibC.C_LONG, USER_DATA$OFFSET);
    }

    /**
     * @param struct a {@code struct io_uring_sqe}.
     * @param value  to store in {@code user_data}.
     */
    public static void user_data(final MemorySegment struct, final long value)
    {
        struct.set(LibC.C_LONG, USER_DATA$OFFSET, value);
    }

    /**
     * @return offset of {@code buf_index}, the registered buffer of a fixed read or write.
     */
    public static long buf_index$offset()
    {
        return BUF_INDEX$OFFSET;
    }

    /**
     * @param struct a {@code struct io_uring_sqe}.
     * @return the value of {@code buf_index}.
     */
    public static short buf_index(final MemorySegment struct)
    {
        return struct.get(ValueLayout.JAVA_SHORT, BUF_INDEX$OFFSET);
    }

    /**
     * @param struct a {@code struct io_uring_sqe}.
     * @param value  to store in {@code buf_index}.
     */
    public static void buf_index(final MemorySegment struct, final short value)
    {
        struct.set(ValueLayout.JAVA_SHORT, BUF_INDEX$OFFSET, value);
    }

    /**
     * @return offset of {@code personality}.
     */
    public static long personality$offset()
    {
        return PERSONALITY$OFFSET;
    }

    /**
     * @param struct a {@code struct io_uring_sqe}.
     * @return the value of {@code personality}.
     */
    public static short personality(final MemorySegment struct)
    {
        return struct.get(ValueLayout.JAVA_SHORT, PERSONALITY$OFFSET);
    }

    /**
     * @param struct a {@code struct io_uring_sqe}.
     * @param value  to store in {@code personality}.
     */
    public static void personality(final MemorySegment struct, final short value)
    {
        struct.set(ValueLayout.JAVA_SHORT, PERSONALITY$OFFSET, value);
    }

    /**
     * @return offset of {@code file_index}.
     */
    public static long file_index$offset()
    {
        return FILE_INDEX$OFFSET;
    }

    /**
     * @param struct a {@code struct io_uring_sqe}.
     * @return the value of {@code file_index}.
     */
    public static int file_index(final MemorySegment struct)
    {
        return struct.get(LibC.C_INT, FILE_INDEX$OFFSET);
    }

    /**
     * @param struct a {@code struct io_uring_sqe}.
     * @param value  to store in {@code file_index}.
     */
    public static void file_index(final MemorySegment struct, final int value)
    {
        struct.set(LibC.C_INT, FILE_INDEX$OFFSET, value);
    }

    /**
     * @return offset of {@code addr3}.
     */
    public static long addr3$offset()
    {
        return ADDR3$OFFSET;
    }

    /**
     * @param struct a {@code struct io_uring_sqe}.
     * @return the value of {@code addr3}.
     */
    public static long addr3(final MemorySegment struct)
    {
        return struct.get(LibC.C_LONG, ADDR3$OFFSET);
    }

    /**
     * @param struct a {@code struct io_uring_sqe}.
     * @param value  to store in {@code addr3}.
     */
    public static void addr3(final MemorySegment struct, final long value)
    {
        struct.set(LibC.C_LONG, ADDR3$OFFSET, value);
    }

    /**
     * @return offset of {@code pad2}, {@code __pad2[0]}.
     */
    public static long pad2$offset()
    {
        return PAD2$OFFSET;
    }

    /**
     * @param struct a {@code struct io_uring_sqe}.
     * @return the value of {@code pad2}.
     */
    public static long pad2(final MemorySegment struct)
    {
        return struct.get(LibC.C_LONG, PAD2$OFFSET);
    }

    /**
     * @param struct a {@code struct io_uring_sqe}.
     * @param value  to store in {@code pad2}.
     */
    public static void pad2(final MemorySegment struct, final long value)
    {
        struct.set(LibC.C_LONG, PAD2$OFFSET, value);
    }

    /**
     * @return offset of {@code addr2}.
     */
    public static long addr2$offset()
    {
        return ADDR2$OFFSET;
    }

    /**
     * @param struct a {@code struct io_uring_sqe}.
     * @return the value of {@code addr2}.
     */
    public static long addr2(final MemorySegment struct)
    {
        return struct.get(LibC.C_LONG, ADDR2$OFFSET);
    }

    /**
     * @param struct a {@code struct io_uring_sqe}.
     * @param value  to store in {@code addr2}.
     */
    public static void addr2(final MemorySegment struct, final long value)
    {
        struct.set(LibC.C_LONG, ADDR2$OFFSET, value);
    }

    /**
     * @return offset of {@code fsync_flags}, {@code IORING_FSYNC_*} bits.
     */
    public static long fsync_flags$offset()
    {
        return FSYNC_FLAGS$OFFSET;
    }

    /**
     * @param struct a {@code struct io_uring_sqe}.
     * @return the value of {@code fsync_flags}.
     */
    public static int fsync_flags(final MemorySegment struct)
    {
        return struct.get(LibC.C_INT, FSYNC_FLAGS$OFFSET);
    }

    /**
     * @param struct a {@code struct io_uring_sqe}.
     * @param value  to store in {@code fsync_flags}.
     */
    public static void fsync_flags(final MemorySegment struct, final int value)
    {
        struct.set(LibC.C_INT, FSYNC_FLAGS$OFFSET, value);
    }

    /**
     * @return offset of {@code buf_group}.
     */
    public static long buf_group$offset()
    {
        return BUF_GROUP$OFFSET;
    }

    /**
     * @param struct a {@code struct io_uring_sqe}.
     * @return the value of {@code buf_group}.
     */
    public static short buf_group(final MemorySegment struct)
    {
        return struct.get(ValueLayout.JAVA_SHORT, BUF_GROUP$OFFSET);
    }

    /**
     * @param struct a {@code struct io_uring_sqe}.
     * @param value  to store in {@code buf_group}.
     */
    public static void buf_group(final MemorySegment struct, final short value)
    {
        struct.set(ValueLayout.JAVA_SHORT, BUF_GROUP$OFFSET, value);
    }

    /**
     * @return offset of {@code splice_fd_in}.
     */
    public static long splice_fd_in$offset()
    {
        return SPLICE_FD_IN$OFFSET;
    }

    /**
     * @param struct a {@code struct io_uring_sqe}.
     * @return the value of {@code splice_fd_in}.
     */
    public static int splice_fd_in(final MemorySegment struct)
    {
        return struct.get(LibC.C_INT, SPLICE_FD_IN$OFFSET);
    }

    /**
     * @param struct a {@code struct io_uring_sqe}.
     * @param value  to store in {@code splice_fd_in}.
     */
    public static void splice_fd_in(final MemorySegment struct, final int value)
    {
        struct.set(LibC.C_INT, SPLICE_FD_IN$OFFSET, value);
    }
}
