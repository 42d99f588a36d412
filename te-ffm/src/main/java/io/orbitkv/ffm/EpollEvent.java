package io.orbitkv.ffm;

import java.lang.foreign.Arena;
import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * {@code struct epoll_event} from {@code <sys/epoll.h>}: a 32-bit event mask and a 64-bit user datum. The kernel
 * declares it packed on x86_64 (12 bytes, the datum at offset 4) and naturally aligned elsewhere (16 bytes, at 8).
 */
public final class EpollEvent
{
    private static final boolean PACKED = "amd64".equals(System.getProperty("os.arch")) ||
        "x86_64".equals(System.getProperty("os.arch"));

    private static final GroupLayout $LAYOUT = PACKED ?
        MemoryLayout.structLayout(
            LibC.C_INT.withName("events"),
            ValueLayout.JAVA_LONG_UNALIGNED.withName("data")
        ).withName("epoll_event") :
        MemoryLayout.structLayout(
            LibC.C_INT.withName("events"),
            MemoryLayout.paddingLayout(4),
            LibC.C_LONG.withName("data")
        ).withName("epoll_event");

    public static final long EVENTS$OFFSET = $LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("events"));
    public static final long DATA$OFFSET = $LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("data"));

    private EpollEvent()
    {
    }

    /**
     * @return the layout of {@code struct epoll_event} on this architecture.
     */
    public static GroupLayout layout()
    {
        return $LAYOUT;
    }

    /**
     * @return {@code sizeof(struct epoll_event)}.
     */
    public static long sizeof()
    {
        return $LAYOUT.byteSize();
    }

    /**
     * @param arena that owns the memory.
     * @param count elements.
     * @return a zeroed array of {@code count} structs allocated in the arena.
     */
    public static MemorySegment allocateArray(final Arena arena, final int count)
    {
        return arena.allocate($LAYOUT, count);
    }

    /**
     * @return offset of {@code events}, the {@code EPOLL*} mask.
     */
    public static long events$offset()
    {
        return EVENTS$OFFSET;
    }

    /**
     * @param struct a {@code struct epoll_event}.
     * @return the value of {@code events}.
     */
    public static int events(final MemorySegment struct)
    {
        return struct.get(LibC.C_INT, EVENTS$OFFSET);
    }

    /**
     * @param struct a {@code struct epoll_event}.
     * @param value  to store in {@code events}.
     */
    public static void events(final MemorySegment struct, final int value)
    {
        struct.set(LibC.C_INT, EVENTS$OFFSET, value);
    }

    /**
     * @return offset of {@code data}, the caller's datum returned with each event.
     */
    public static long data$offset()
    {
        return DATA$OFFSET;
    }

    /**
     * @param struct a {@code struct epoll_event}.
     * @return the value of {@code data} as a 64-bit integer.
     */
    public static long data(final MemorySegment struct)
    {
        return struct.get(ValueLayout.JAVA_LONG_UNALIGNED, DATA$OFFSET);
    }

    /**
     * @param struct a {@code struct epoll_event}.
     * @param value  to store in {@code data}.
     */
    public static void data(final MemorySegment struct, final long value)
    {
        struct.set(ValueLayout.JAVA_LONG_UNALIGNED, DATA$OFFSET, value);
    }
}
