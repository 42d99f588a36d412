package io.orbitkv.codecs;

import java.util.Arrays;
import java.util.HexFormat;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Identity of a cached block: the namespace (which binds model, computation and stored representation) and the
 * engine's chained block hash. Equality is exact on every byte of both parts; there is no truncated or
 * token-only form (design: do not weaken identity to a token hash or model name).
 *
 * <p>This immutable form is for control paths, tests and tools. Hot paths keep keys in buffers and use the
 * static helpers, which allocate nothing.
 *
 * <p>Canonical encoding, used wherever a key is hashed or compared across languages:
 * <pre>
 *   uint16 little-endian namespace length (1..256) | namespace bytes | uint8 hash length (1..64) | hash bytes
 * </pre>
 */
public final class StateKey
{
    public static final int MAX_NAMESPACE_LENGTH = EngineRingLimits.MAX_NAMESPACE_LENGTH;
    public static final int MAX_HASH_LENGTH = EngineRingLimits.MAX_HASH_LENGTH;

    /** Longest canonical encoding: 2 + 256 + 1 + 64. */
    public static final int MAX_ENCODED_LENGTH = 2 + MAX_NAMESPACE_LENGTH + 1 + MAX_HASH_LENGTH;

    private final byte[] namespace;
    private final byte[] hash;

    /**
     * Create a key, copying both parts.
     *
     * @param namespace 1..256 bytes.
     * @param hash      1..64 bytes.
     */
    public StateKey(final byte[] namespace, final byte[] hash)
    {
        checkLengths(namespace.length, hash.length);
        this.namespace = namespace.clone();
        this.hash = hash.clone();
    }

    /**
     * Validate the lengths of a key's parts.
     *
     * @param namespaceLength namespace length in bytes.
     * @param hashLength      hash length in bytes.
     * @throws IllegalArgumentException naming the part that is out of range.
     */
    public static void checkLengths(final int namespaceLength, final int hashLength)
    {
        if (namespaceLength < 1 || namespaceLength > MAX_NAMESPACE_LENGTH)
        {
            throw new IllegalArgumentException(
                "namespace must be 1.." + MAX_NAMESPACE_LENGTH + " bytes: " + namespaceLength);
        }
        if (hashLength < 1 || hashLength > MAX_HASH_LENGTH)
        {
            throw new IllegalArgumentException("block hash must be 1.." + MAX_HASH_LENGTH + " bytes: " + hashLength);
        }
    }

    /**
     * Write the canonical encoding of a key held in buffers.
     *
     * @param namespace       buffer holding the namespace.
     * @param namespaceOffset offset of the namespace.
     * @param namespaceLength namespace length, 1..256.
     * @param hash            buffer holding the hash.
     * @param hashOffset      offset of the hash.
     * @param hashLength      hash length, 1..64.
     * @param dst             destination.
     * @param dstOffset       offset in the destination.
     * @return bytes written.
     */
    public static int encode(
        final DirectBuffer namespace,
        final int namespaceOffset,
        final int namespaceLength,
        final DirectBuffer hash,
        final int hashOffset,
        final int hashLength,
        final MutableDirectBuffer dst,
        final int dstOffset)
    {
        checkLengths(namespaceLength, hashLength);
        int pos = dstOffset;
        dst.putShort(pos, (short)namespaceLength, java.nio.ByteOrder.LITTLE_ENDIAN);
        pos += 2;
        dst.putBytes(pos, namespace, namespaceOffset, namespaceLength);
        pos += namespaceLength;
        dst.putByte(pos, (byte)hashLength);
        pos += 1;
        dst.putBytes(pos, hash, hashOffset, hashLength);
        pos += hashLength;
        return pos - dstOffset;
    }

    public byte[] namespace()
    {
        return namespace.clone();
    }

    public byte[] hash()
    {
        return hash.clone();
    }

    public int namespaceLength()
    {
        return namespace.length;
    }

    public int hashLength()
    {
        return hash.length;
    }

    /**
     * The canonical encoding as a new array.
     *
     * @return canonical bytes.
     */
    public byte[] canonicalBytes()
    {
        final byte[] out = new byte[2 + namespace.length + 1 + hash.length];
        out[0] = (byte)namespace.length;
        out[1] = (byte)(namespace.length >>> 8);
        System.arraycopy(namespace, 0, out, 2, namespace.length);
        out[2 + namespace.length] = (byte)hash.length;
        System.arraycopy(hash, 0, out, 3 + namespace.length, hash.length);
        return out;
    }

    public boolean equals(final Object o)
    {
        if (this == o)
        {
            return true;
        }
        if (!(o instanceof StateKey))
        {
            return false;
        }
        final StateKey that = (StateKey)o;
        return Arrays.equals(namespace, that.namespace) && Arrays.equals(hash, that.hash);
    }

    public int hashCode()
    {
        return 31 * Arrays.hashCode(namespace) + Arrays.hashCode(hash);
    }

    public String toString()
    {
        return "StateKey{namespace=" + HexFormat.of().formatHex(namespace) + ", hash=" + HexFormat.of().formatHex(hash) + '}';
    }
}
