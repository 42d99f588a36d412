package io.orbitkv.ffm;

import java.lang.foreign.Arena;
import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;

/**
 * {@code struct msghdr} from {@code <sys/socket.h>} on LP64 Linux (x86_64 and aarch64 alike): the message a
 * {@link LibC#sendmsg} gathers from its {@link Iovec}s. Only the fields a connected stream socket uses have
 * accessors; the others stay zero.
 */
public final class MsgHdr
{
    private static final GroupLayout $LAYOUT = MemoryLayout.structLayout(
        LibC.C_POINTER.withName("msg_name"),
        LibC.C_INT.withName("msg_namelen"),
        MemoryLayout.paddingLayout(4),
        LibC.C_POINTER.withName("msg_iov"),
        LibC.C_SIZE_T.withName("msg_iovlen"),
        LibC.C_POINTER.withName("msg_control"),
        LibC.C_SIZE_T.withName("msg_controllen"),
        LibC.C_INT.withName("msg_flags"),
        MemoryLayout.paddingLayout(4)
    ).withName("msghdr");

    public static final long MSG_IOV$OFFSET = $LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("msg_iov"));
    public static final long MSG_IOVLEN$OFFSET =
        $LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("msg_iovlen"));

    private MsgHdr()
    {
    }

    /**
     * @return the layout of {@code struct msghdr}.
     */
    public static GroupLayout layout()
    {
        return $LAYOUT;
    }

    /**
     * @return {@code sizeof(struct msghdr)}.
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
     * @return offset of {@code msg_iov}, the message's first {@link Iovec}.
     */
    public static long msg_iov$offset()
    {
        return MSG_IOV$OFFSET;
    }

    /**
     * @return offset of {@code msg_iovlen}, the number of {@link Iovec}s.
     */
    public static long msg_iovlen$offset()
    {
        return MSG_IOVLEN$OFFSET;
    }

    /**
     * @param struct a {@code struct msghdr}.
     * @param iov    the first {@link Iovec} of the message.
     */
    public static void msg_iov(final MemorySegment struct, final MemorySegment iov)
    {
        struct.set(LibC.C_POINTER, MSG_IOV$OFFSET, iov);
    }

    /**
     * @param struct a {@code struct msghdr}.
     * @param count  {@link Iovec}s in the message.
     */
    public static void msg_iovlen(final MemorySegment struct, final long count)
    {
        struct.set(LibC.C_SIZE_T, MSG_IOVLEN$OFFSET, count);
    }
}
