package io.orbitkv.codecs;

import org.agrona.DirectBuffer;

/**
 * A {@link StateKey} over buffers the caller owns: the namespace (its bytes and, where the holder resolved it, its id
 * in that holder's namespace table) and a region of a {@link DirectBuffer} holding the block hash. Re-wrapped per
 * key on hot paths instead of passing (namespace, buffer, offset, length) as loose arguments; it copies nothing and
 * allocates nothing.
 *
 * <p>A namespace id means something only to the table it came from: a receiver uses {@link #namespaceId()} only when
 * it was built with that table (the owner's inventory and its block stores share the Manager's table), and falls back
 * to the namespace bytes otherwise. Valid while the wrapped buffers hold the key. Not thread safe.
 */
public final class StateKeyFlyweight
{
    /**
     * {@link #namespaceId()} when the holder did not resolve the namespace against a table.
     */
    public static final int NO_NAMESPACE_ID = -1;

    private int namespaceId = NO_NAMESPACE_ID;
    private DirectBuffer namespaceBuffer;
    private int namespaceOffset;
    private int namespaceLength;
    private DirectBuffer hashBuffer;
    private int hashOffset;
    private int hashLength;

    /**
     * Wrap the namespace of the keys that follow (a request names one namespace for all its hashes).
     *
     * @param namespaceId id of the namespace in the holder's table, or {@link #NO_NAMESPACE_ID}.
     * @param buffer      holding the namespace bytes.
     * @param offset      of the namespace.
     * @param length      of the namespace, 1..{@link StateKey#MAX_NAMESPACE_LENGTH}.
     * @return this.
     */
    public StateKeyFlyweight wrapNamespace(final int namespaceId, final DirectBuffer buffer, final int offset,
        final int length)
    {
        this.namespaceId = namespaceId;
        this.namespaceBuffer = buffer;
        this.namespaceOffset = offset;
        this.namespaceLength = length;
        return this;
    }

    /**
     * Wrap the hash of the next key under the current namespace.
     *
     * @param buffer holding the hash.
     * @param offset of the hash.
     * @param length of the hash, 1..{@link StateKey#MAX_HASH_LENGTH}.
     * @return this.
     */
    public StateKeyFlyweight wrapHash(final DirectBuffer buffer, final int offset, final int length)
    {
        this.hashBuffer = buffer;
        this.hashOffset = offset;
        this.hashLength = length;
        return this;
    }

    /**
     * Wrap both parts of a key.
     *
     * @return this.
     */
    public StateKeyFlyweight wrap(
        final int namespaceId,
        final DirectBuffer namespace,
        final int namespaceOffset,
        final int namespaceLength,
        final DirectBuffer hash,
        final int hashOffset,
        final int hashLength)
    {
        return wrapNamespace(namespaceId, namespace, namespaceOffset, namespaceLength)
            .wrapHash(hash, hashOffset, hashLength);
    }

    public int namespaceId()
    {
        return namespaceId;
    }

    public DirectBuffer namespaceBuffer()
    {
        return namespaceBuffer;
    }

    public int namespaceOffset()
    {
        return namespaceOffset;
    }

    public int namespaceLength()
    {
        return namespaceLength;
    }

    public DirectBuffer hashBuffer()
    {
        return hashBuffer;
    }

    public int hashOffset()
    {
        return hashOffset;
    }

    public int hashLength()
    {
        return hashLength;
    }

    /**
     * Exact equality on every byte of both parts (design: identity is never weakened); ids are not compared, since
     * the other key's may come from another table.
     *
     * @param other key to compare with.
     * @return true when namespace and hash are equal.
     */
    public boolean sameKey(final StateKeyFlyweight other)
    {
        return sameNamespace(other.namespaceBuffer, other.namespaceOffset, other.namespaceLength) &&
            sameHash(other.hashBuffer, other.hashOffset, other.hashLength);
    }

    /**
     * @return true when the wrapped namespace equals the given bytes.
     */
    public boolean sameNamespace(final DirectBuffer buffer, final int offset, final int length)
    {
        return regionEquals(namespaceBuffer, namespaceOffset, namespaceLength, buffer, offset, length);
    }

    /**
     * @return true when the wrapped hash equals the given bytes.
     */
    public boolean sameHash(final DirectBuffer buffer, final int offset, final int length)
    {
        return regionEquals(hashBuffer, hashOffset, hashLength, buffer, offset, length);
    }

    /**
     * FNV-1a over the namespace, a separator and the hash: a cheap in-process fingerprint (e.g. to find a key that
     * is already being asked for), never a wire or cross-process identity.
     *
     * @return the fingerprint.
     */
    public long fingerprint()
    {
        long h = 0xcbf29ce484222325L;
        for (int i = 0; i < namespaceLength; i++)
        {
            h = (h ^ (namespaceBuffer.getByte(namespaceOffset + i) & 0xFF)) * 0x100000001b3L;
        }
        h = (h ^ 0xFF) * 0x100000001b3L;
        for (int i = 0; i < hashLength; i++)
        {
            h = (h ^ (hashBuffer.getByte(hashOffset + i) & 0xFF)) * 0x100000001b3L;
        }
        return h;
    }

    /**
     * A copy for control paths, tests and logs (allocates).
     *
     * @return the immutable key.
     */
    public StateKey toStateKey()
    {
        final byte[] namespace = new byte[namespaceLength];
        final byte[] hash = new byte[hashLength];
        namespaceBuffer.getBytes(namespaceOffset, namespace);
        hashBuffer.getBytes(hashOffset, hash);
        return new StateKey(namespace, hash);
    }

    public String toString()
    {
        return null == namespaceBuffer || null == hashBuffer ? "StateKeyFlyweight{}" : toStateKey().toString();
    }

    private static boolean regionEquals(
        final DirectBuffer a, final int aOffset, final int aLength, final DirectBuffer b, final int bOffset,
        final int bLength)
    {
        if (aLength != bLength)
        {
            return false;
        }
        for (int i = 0; i < aLength; i++)
        {
            if (a.getByte(aOffset + i) != b.getByte(bOffset + i))
            {
                return false;
            }
        }
        return true;
    }
}
