package io.orbitkv.ffm;

import java.lang.foreign.Arena;
import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;

/**
 * {@code struct timespec} in the shape the io_uring struct classes will take (jextract's: a {@code $LAYOUT},
 * per-field offsets, accessors, {@code sizeof()}, {@code allocate()}); it exists so the C layout harness has a
 * struct to check before the first real one lands.
 */
final class TimespecFixture
{
    private static final GroupLayout $LAYOUT = MemoryLayout.structLayout(
        LibC.C_LONG.withName("tv_sec"),
        LibC.C_LONG.withName("tv_nsec")
    ).withName("timespec");

    private static final long TV_SEC$OFFSET = $LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("tv_sec"));
    private static final long TV_NSEC$OFFSET = $LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("tv_nsec"));

    private TimespecFixture()
    {
    }

    static GroupLayout layout()
    {
        return $LAYOUT;
    }

    static long sizeof()
    {
        return $LAYOUT.byteSize();
    }

    static MemorySegment allocate(final Arena arena)
    {
        return arena.allocate($LAYOUT);
    }

    static long tv_sec$offset()
    {
        return TV_SEC$OFFSET;
    }

    static long tv_nsec$offset()
    {
        return TV_NSEC$OFFSET;
    }

    static long tv_sec(final MemorySegment struct)
    {
        return struct.get(LibC.C_LONG, TV_SEC$OFFSET);
    }

    static void tv_sec(final MemorySegment struct, final long value)
    {
        struct.set(LibC.C_LONG, TV_SEC$OFFSET, value);
    }

    static long tv_nsec(final MemorySegment struct)
    {
        return struct.get(LibC.C_LONG, TV_NSEC$OFFSET);
    }

    static void tv_nsec(final MemorySegment struct, final long value)
    {
        struct.set(LibC.C_LONG, TV_NSEC$OFFSET, value);
    }
}
