package io.orbitkv.ffm;

import java.lang.foreign.Arena;
import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;

/**
 * {@code struct iovec} from {@code <sys/uio.h>}: one buffer of a vectored read or write and of the buffer
 * table passed to {@code IORING_REGISTER_BUFFERS}.
 */
public final class Iovec
{
    private static final GroupLayout $LAYOUT = MemoryLayout.structLayout(
        LibC.C_POINTER.withName("iov_base"),
        LibC.C_SIZE_T.withName("iov_len")
    ).withName("iovec");

    public static final long IOV_BASE$OFFSET = $LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("iov_base"));
    public static final long IOV_LEN$OFFSET = $LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("iov_len"));

    private Iovec()
    {
    }

    /**
     * @return the layout of {@code struct iovec}.
     */
    public static GroupLayout layout()
    {
        return $LAYOUT;
    }

    /**
     * @return {@code sizeof(struct iovec)}.
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
     * @return offset of {@code iov_base}.
     */
    public static long iov_base$offset()
    {
        return IOV_BASE$OFFSET;
    }

    /**
     * @param struct a {@code struct iovec}.
     * @return the value of {@code iov_base}.
     */
    public static MemorySegment iov_base(final MemorySegment struct)
    {
        return struct.get(LibC.C_POINTER, IOV_BASE$OFFSET);
    }

    /**
     * @param struct a {@code struct iovec}.
     * @param value  to store in {@code iov_base}.
     */
    public static void iov_base(final MemorySegment struct, final MemorySegment value)
    {
        struct.set(LibC.C_POINTER, IOV_BASE$OFFSET, value);
    }

    /**
     * @return offset of {@code iov_len}, bytes.
     */
    public static long iov_len$offset()
    {
        return IOV_LEN$OFFSET;
    }

    /**
     * @param struct a {@code struct iovec}.
     * @return the value of {@code iov_len}.
     */
    public static long iov_len(final MemorySegment struct)
    {
        return struct.get(LibC.C_SIZE_T, IOV_LEN$OFFSET);
    }

    /**
     * @param struct a {@code struct iovec}.
     * @param value  to store in {@code iov_len}.
     */
    public static void iov_len(final MemorySegment struct, final long value)
    {
        struct.set(LibC.C_SIZE_T, IOV_LEN$OFFSET, value);
    }
}
