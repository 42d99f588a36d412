package io.orbitkv.ffm;

import java.lang.foreign.Arena;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;

/**
 * The buffer a downcall bound with {@code Linker.Option.captureCallState("errno")} writes {@code errno} into,
 * allocated once so that a failing call on a hot path allocates nothing.
 *
 * <p>Not thread-safe: the JVM overwrites the buffer on every call that captures into it, so each thread that
 * makes failing calls owns its own instance and reads {@link #errno()} before its next capturing call.
 */
public final class CallState
{
    private static final StructLayout LAYOUT = Linker.Option.captureStateLayout();
    private static final long ERRNO_OFFSET = LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("errno"));

    private final MemorySegment segment;

    /**
     * Allocate a capture buffer whose memory lives until this object is unreachable.
     */
    public CallState()
    {
        this(Arena.ofAuto());
    }

    /**
     * Allocate a capture buffer in the given arena; the buffer is valid as long as the arena is.
     *
     * @param arena that owns the buffer's memory.
     */
    public CallState(final Arena arena)
    {
        segment = arena.allocate(LAYOUT);
    }

    /**
     * The raw buffer passed as the leading argument of a capturing downcall handle.
     *
     * @return the capture buffer.
     */
    public MemorySegment segment()
    {
        return segment;
    }

    /**
     * The {@code errno} captured by the most recent capturing call made with this state. Only meaningful after
     * that call reported failure, as C only sets {@code errno} on failure.
     *
     * @return the captured {@code errno} value.
     */
    public int errno()
    {
        return segment.get(ValueLayout.JAVA_INT, ERRNO_OFFSET);
    }

    /**
     * Store a value, for a call made in Java that reports its failure the way a capturing call does.
     *
     * @param errno the value {@link #errno()} returns next.
     */
    public void errno(final int errno)
    {
        segment.set(ValueLayout.JAVA_INT, ERRNO_OFFSET, errno);
    }

    /**
     * Clear the captured value, e.g. before a call whose failure is signalled through {@code errno} alone.
     */
    public void reset()
    {
        segment.set(ValueLayout.JAVA_INT, ERRNO_OFFSET, 0);
    }
}
