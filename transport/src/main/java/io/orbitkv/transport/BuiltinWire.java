package io.orbitkv.transport;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * The built-in transport's frames, little-endian, per stream. Requester to source: one hello, then requests;
 * source to requester: one response per request, in request order (the layouts are in {@link BuiltinTransport}).
 * Every encoder and decoder works at an offset of a segment the caller owns, so framing allocates nothing.
 */
final class BuiltinWire
{
    static final int HELLO_MAGIC = 0x42564B4F;
    static final short HELLO_VERSION = 1;
    static final int HELLO_BYTES = 8;
    static final int REQUEST_TYPE_READ = 1;
    static final int REQUEST_BYTES = 40;
    static final int RESPONSE_BYTES = 16;

    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort SHORT =
        ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private BuiltinWire()
    {
    }

    static void writeHello(final MemorySegment buffer, final long at)
    {
        writeHello(buffer, at, (short)0);
    }

    static void writeHello(final MemorySegment buffer, final long at, final short flags)
    {
        buffer.set(INT, at, HELLO_MAGIC);
        buffer.set(SHORT, at + 4, HELLO_VERSION);
        buffer.set(SHORT, at + 6, flags);
    }

    static short helloFlags(final MemorySegment buffer, final long at)
    {
        return buffer.get(SHORT, at + 6);
    }

    static boolean isHello(final MemorySegment buffer, final long at)
    {
        return HELLO_MAGIC == buffer.get(INT, at) && HELLO_VERSION == buffer.get(SHORT, at + 4);
    }

    static void writeReadRequest(
        final MemorySegment buffer,
        final long at,
        final int length,
        final long requestId,
        final long sessionId,
        final long token,
        final long address)
    {
        buffer.set(INT, at, REQUEST_TYPE_READ);
        buffer.set(INT, at + 4, length);
        buffer.set(LONG, at + 8, requestId);
        buffer.set(LONG, at + 16, sessionId);
        buffer.set(LONG, at + 24, token);
        buffer.set(LONG, at + 32, address);
    }

    static int requestType(final MemorySegment buffer, final long at)
    {
        return buffer.get(INT, at);
    }

    static int requestLength(final MemorySegment buffer, final long at)
    {
        return buffer.get(INT, at + 4);
    }

    static long requestId(final MemorySegment buffer, final long at)
    {
        return buffer.get(LONG, at + 8);
    }

    static long requestSessionId(final MemorySegment buffer, final long at)
    {
        return buffer.get(LONG, at + 16);
    }

    static long requestToken(final MemorySegment buffer, final long at)
    {
        return buffer.get(LONG, at + 24);
    }

    static long requestAddress(final MemorySegment buffer, final long at)
    {
        return buffer.get(LONG, at + 32);
    }

    static void writeResponse(final MemorySegment buffer, final long requestId, final int status, final int length)
    {
        buffer.set(LONG, 0, requestId);
        buffer.set(INT, 8, status);
        buffer.set(INT, 12, length);
    }

    static long responseRequestId(final MemorySegment buffer)
    {
        return buffer.get(LONG, 0);
    }

    static int responseStatus(final MemorySegment buffer)
    {
        return buffer.get(INT, 8);
    }

    static int responseLength(final MemorySegment buffer)
    {
        return buffer.get(INT, 12);
    }
}
