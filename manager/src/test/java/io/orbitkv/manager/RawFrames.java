package io.orbitkv.manager;

import java.nio.ByteOrder;
import org.agrona.MutableDirectBuffer;

/**
 * Byte-level frame building for malformed-input tests: every header field and length can be set to anything,
 * which the generated encoders (rightly) refuse to do.
 */
final class RawFrames
{
    static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;

    private RawFrames()
    {
    }

    static int header(
        final MutableDirectBuffer buffer, final int blockLength, final int templateId, final int schemaId, final int version)
    {
        buffer.putShort(0, (short)blockLength, LE);
        buffer.putShort(2, (short)templateId, LE);
        buffer.putShort(4, (short)schemaId, LE);
        buffer.putShort(6, (short)version, LE);
        return 8;
    }

    /**
     * A Lookup frame with every length under the caller's control.
     *
     * @return frame length.
     */
    static int lookup(
        final MutableDirectBuffer buffer,
        final int schemaId,
        final int version,
        final long clientId,
        final long correlationId,
        final int flags,
        final int declaredCount,
        final byte[][] hashes,
        final byte[] namespace)
    {
        int position = header(buffer, 17, 5, schemaId, version);
        buffer.putLong(position, clientId, LE);
        buffer.putLong(position + 8, correlationId, LE);
        buffer.putByte(position + 16, (byte)flags);
        position += 17;
        buffer.putShort(position, (short)0, LE);
        buffer.putShort(position + 2, (short)declaredCount, LE);
        position += 4;
        for (final byte[] hash : hashes)
        {
            buffer.putByte(position, (byte)hash.length);
            buffer.putBytes(position + 1, hash);
            position += 1 + hash.length;
        }
        if (null != namespace)
        {
            buffer.putShort(position, (short)namespace.length, LE);
            buffer.putBytes(position + 2, namespace);
            position += 2 + namespace.length;
        }
        return position;
    }

    static int lookup(
        final MutableDirectBuffer buffer,
        final long clientId,
        final long correlationId,
        final byte[][] hashes,
        final byte[] namespace)
    {
        return lookup(buffer, 101, 1, clientId, correlationId, 0, hashes.length, hashes, namespace);
    }

    /**
     * A Publish frame of one block.
     *
     * @return frame length.
     */
    static int publishOne(
        final MutableDirectBuffer buffer,
        final long clientId,
        final long correlationId,
        final long offset,
        final int length,
        final byte[] hash,
        final byte[] namespace)
    {
        int position = header(buffer, 16, 4, 101, 1);
        buffer.putLong(position, clientId, LE);
        buffer.putLong(position + 8, correlationId, LE);
        position += 16;
        buffer.putShort(position, (short)12, LE);
        buffer.putShort(position + 2, (short)1, LE);
        position += 4;
        buffer.putLong(position, offset, LE);
        buffer.putInt(position + 8, length, LE);
        position += 12;
        buffer.putByte(position, (byte)hash.length);
        buffer.putBytes(position + 1, hash);
        position += 1 + hash.length;
        buffer.putShort(position, (short)namespace.length, LE);
        buffer.putBytes(position + 2, namespace);
        return position + 2 + namespace.length;
    }
}
