package io.orbitkv.client;

import io.orbitkv.codecs.EngineRingLimits;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteOrder;

/**
 * A reusable, ordered chain of keys under one namespace: the argument of every Publish, Lookup and Read.
 * Sized once at construction; {@link #clear()} and refill it for each operation so the steady state allocates
 * nothing. Hashes are copied into a fixed-stride buffer of {@link EngineRingLimits#MAX_HASH_LENGTH} bytes
 * per key.
 *
 * <p>Per key the batch holds an offset and a size inside the client's data region. For Publish they are the
 * block's source range; for Read they are the destination offset and its capacity; Lookup ignores them.
 * A chain may be longer than {@link EngineRingLimits#MAX_KEYS_PER_REQUEST}: the client splits it into several
 * requests. Limits are checked here, before anything is sent, with {@link IllegalArgumentException}.
 *
 * <p>Not thread safe.
 */
public final class KeyBatch
{
    private static final int HASH_STRIDE = EngineRingLimits.MAX_HASH_LENGTH;

    private final int maxKeys;
    private final UnsafeBuffer namespace = new UnsafeBuffer(new byte[EngineRingLimits.MAX_NAMESPACE_LENGTH]);
    private final UnsafeBuffer hashes;
    private final byte[] hashLengths;
    private final long[] offsets;
    private final int[] sizes;
    private final int maxTokensPerKey;
    private final UnsafeBuffer parents;
    private final byte[] parentLengths;
    private final UnsafeBuffer tokens;
    private final int[] tokenCounts;
    private int namespaceLength;
    private int keyCount;

    /**
     * Create a batch able to hold up to {@code maxKeys} keys.
     *
     * @param maxKeys capacity in keys, at least 1.
     */
    public KeyBatch(final int maxKeys)
    {
        this(maxKeys, 0);
    }

    /**
     * Create a batch able to hold up to {@code maxKeys} keys, each with a lineage of up to {@code maxTokensPerKey}
     * token ids (see {@link #lineage(int, DirectBuffer, int, int, int[], int, int)}).
     *
     * @param maxKeys         capacity in keys, at least 1.
     * @param maxTokensPerKey token ids a key's lineage may hold, 0..{@link EngineRingLimits#MAX_TOKENS_PER_BLOCK}; 0
     *                        for a batch without lineage.
     */
    public KeyBatch(final int maxKeys, final int maxTokensPerKey)
    {
        if (maxKeys < 1 || maxKeys > Integer.MAX_VALUE / HASH_STRIDE)
        {
            throw new IllegalArgumentException("maxKeys out of range: " + maxKeys);
        }
        if (maxTokensPerKey < 0 || maxTokensPerKey > EngineRingLimits.MAX_TOKENS_PER_BLOCK ||
            (long)maxKeys * maxTokensPerKey * Integer.BYTES > Integer.MAX_VALUE)
        {
            throw new IllegalArgumentException("maxTokensPerKey out of range: " + maxTokensPerKey);
        }
        this.maxKeys = maxKeys;
        this.maxTokensPerKey = maxTokensPerKey;
        hashes = new UnsafeBuffer(new byte[maxKeys * HASH_STRIDE]);
        hashLengths = new byte[maxKeys];
        offsets = new long[maxKeys];
        sizes = new int[maxKeys];
        final boolean lineage = maxTokensPerKey > 0;
        parents = new UnsafeBuffer(new byte[lineage ? maxKeys * HASH_STRIDE : 0]);
        parentLengths = new byte[maxKeys];
        tokens = new UnsafeBuffer(new byte[lineage ? maxKeys * maxTokensPerKey * Integer.BYTES : 0]);
        tokenCounts = new int[maxKeys];
    }

    /**
     * Set the namespace, keeping the keys.
     *
     * @param src    namespace bytes.
     * @param offset start in src.
     * @param length 1..{@link EngineRingLimits#MAX_NAMESPACE_LENGTH} bytes.
     * @return this.
     */
    public KeyBatch namespace(final DirectBuffer src, final int offset, final int length)
    {
        checkNamespaceLength(length);
        namespace.putBytes(0, src, offset, length);
        namespaceLength = length;
        return this;
    }

    /**
     * Set the namespace, keeping the keys.
     *
     * @param src    namespace bytes.
     * @param offset start in src.
     * @param length 1..{@link EngineRingLimits#MAX_NAMESPACE_LENGTH} bytes.
     * @return this.
     */
    public KeyBatch namespace(final byte[] src, final int offset, final int length)
    {
        checkNamespaceLength(length);
        namespace.putBytes(0, src, offset, length);
        namespaceLength = length;
        return this;
    }

    /**
     * Set the namespace from all of {@code src}, keeping the keys.
     *
     * @param src namespace bytes.
     * @return this.
     */
    public KeyBatch namespace(final byte[] src)
    {
        return namespace(src, 0, src.length);
    }

    /**
     * Forget the keys (the namespace stays).
     *
     * @return this.
     */
    public KeyBatch clear()
    {
        keyCount = 0;
        return this;
    }

    /**
     * Append a key with no data range, for Lookup.
     *
     * @param hash   hash bytes.
     * @param offset start in hash.
     * @param length 1..{@link EngineRingLimits#MAX_HASH_LENGTH} bytes.
     * @return the key's index.
     */
    public int addKey(final DirectBuffer hash, final int offset, final int length)
    {
        final int index = nextIndex(length);
        hashes.putBytes(index * HASH_STRIDE, hash, offset, length);
        return commit(index, length, 0, 0);
    }

    /**
     * Append a key with no data range, for Lookup.
     *
     * @param hash   hash bytes.
     * @param offset start in hash.
     * @param length 1..{@link EngineRingLimits#MAX_HASH_LENGTH} bytes.
     * @return the key's index.
     */
    public int addKey(final byte[] hash, final int offset, final int length)
    {
        final int index = nextIndex(length);
        hashes.putBytes(index * HASH_STRIDE, hash, offset, length);
        return commit(index, length, 0, 0);
    }

    /**
     * Append a key with its data range: for Publish the block's source {@code [offset, offset + size)}, for Read
     * the destination offset and capacity.
     *
     * @param hash       hash bytes.
     * @param hashOffset start in hash.
     * @param hashLength 1..{@link EngineRingLimits#MAX_HASH_LENGTH} bytes.
     * @param offset     offset in the data region, >= 0.
     * @param size       block length (Publish) or destination capacity (Read), > 0.
     * @return the key's index.
     */
    public int addKey(
        final DirectBuffer hash, final int hashOffset, final int hashLength, final long offset, final int size)
    {
        checkRange(offset, size);
        final int index = nextIndex(hashLength);
        hashes.putBytes(index * HASH_STRIDE, hash, hashOffset, hashLength);
        return commit(index, hashLength, offset, size);
    }

    /**
     * Append a key with its data range: for Publish the block's source {@code [offset, offset + size)}, for Read
     * the destination offset and capacity.
     *
     * @param hash       hash bytes.
     * @param hashOffset start in hash.
     * @param hashLength 1..{@link EngineRingLimits#MAX_HASH_LENGTH} bytes.
     * @param offset     offset in the data region, >= 0.
     * @param size       block length (Publish) or destination capacity (Read), > 0.
     * @return the key's index.
     */
    public int addKey(final byte[] hash, final int hashOffset, final int hashLength, final long offset, final int size)
    {
        checkRange(offset, size);
        final int index = nextIndex(hashLength);
        hashes.putBytes(index * HASH_STRIDE, hash, hashOffset, hashLength);
        return commit(index, hashLength, offset, size);
    }

    /**
     * Change the data range of a key already in the batch, e.g. to reuse the hashes of a Publish for a Read.
     *
     * @param index  key index.
     * @param offset offset in the data region, >= 0.
     * @param size   block length or destination capacity, > 0.
     * @return this.
     */
    public KeyBatch range(final int index, final long offset, final int size)
    {
        checkIndex(index);
        checkRange(offset, size);
        offsets[index] = offset;
        sizes[index] = size;
        return this;
    }

    /**
     * Give a Publish key its lineage, which the Manager passes on in its KV events ({@code BlockStored}'s
     * {@code parent_block_hash} and {@code token_ids}): the hash of the block before it in its chain and the tokens
     * whose KV it holds. Replaces what the key had; a key added afresh has none.
     *
     * @param index        key index.
     * @param parent       the parent hash, or null for none.
     * @param parentOffset start in parent.
     * @param parentLength 0..{@link EngineRingLimits#MAX_HASH_LENGTH} bytes.
     * @param tokenIds     token ids, or null for none.
     * @param tokenOffset  start in tokenIds.
     * @param tokenCount   0..the batch's maxTokensPerKey.
     * @return this.
     */
    public KeyBatch lineage(
        final int index,
        final DirectBuffer parent,
        final int parentOffset,
        final int parentLength,
        final int[] tokenIds,
        final int tokenOffset,
        final int tokenCount)
    {
        checkIndex(index);
        if (parentLength < 0 || parentLength > EngineRingLimits.MAX_HASH_LENGTH || (parentLength > 0 && null == parent))
        {
            throw new IllegalArgumentException(
                "parent hash length must be 0.." + EngineRingLimits.MAX_HASH_LENGTH + " bytes: " + parentLength);
        }
        if (tokenCount < 0 || tokenCount > maxTokensPerKey || (tokenCount > 0 && null == tokenIds))
        {
            throw new IllegalArgumentException("token count must be 0.." + maxTokensPerKey + " (the batch's " +
                "maxTokensPerKey): " + tokenCount);
        }
        if (maxTokensPerKey == 0)
        {
            throw new IllegalStateException("batch made without lineage: use KeyBatch(maxKeys, maxTokensPerKey)");
        }
        if (parentLength > 0)
        {
            parents.putBytes(index * HASH_STRIDE, parent, parentOffset, parentLength);
        }
        final int base = index * maxTokensPerKey * Integer.BYTES;
        for (int i = 0; i < tokenCount; i++)
        {
            tokens.putInt(base + i * Integer.BYTES, tokenIds[tokenOffset + i], ByteOrder.LITTLE_ENDIAN);
        }
        parentLengths[index] = (byte)parentLength;
        tokenCounts[index] = tokenCount;
        return this;
    }

    /**
     * @param index key index.
     * @return bytes of the key's parent hash, 0 for none.
     */
    public int parentLength(final int index)
    {
        checkIndex(index);
        return parentLengths[index];
    }

    /**
     * @param index key index.
     * @return token ids in the key's lineage.
     */
    public int tokenCount(final int index)
    {
        checkIndex(index);
        return tokenCounts[index];
    }

    DirectBuffer parentBuffer()
    {
        return parents;
    }

    /** Where key {@code index}'s parent hash starts in {@link #parentBuffer()}; 0 when it has none. */
    int parentOffset(final int index)
    {
        return 0 == parentLengths[index] ? 0 : index * HASH_STRIDE;
    }

    /** Token ids of all keys, little-endian int32, at {@link #tokenOffset(int)}. */
    DirectBuffer tokenBuffer()
    {
        return tokens;
    }

    /** Where key {@code index}'s token ids start in {@link #tokenBuffer()}; 0 when it has none. */
    int tokenOffset(final int index)
    {
        return 0 == tokenCounts[index] ? 0 : index * maxTokensPerKey * Integer.BYTES;
    }

    public int maxKeys()
    {
        return maxKeys;
    }

    public int keyCount()
    {
        return keyCount;
    }

    public int namespaceLength()
    {
        return namespaceLength;
    }

    /**
     * The namespace bytes, valid for {@link #namespaceLength()} bytes from index 0.
     *
     * @return a view over the batch's namespace storage.
     */
    public DirectBuffer namespaceBuffer()
    {
        return namespace;
    }

    public int hashLength(final int index)
    {
        checkIndex(index);
        return hashLengths[index];
    }

    /**
     * Where key {@code index}'s hash starts in {@link #hashBuffer()}.
     *
     * @param index key index.
     * @return byte offset.
     */
    public int hashOffset(final int index)
    {
        checkIndex(index);
        return index * HASH_STRIDE;
    }

    /**
     * The hashes of all keys, at {@link #hashOffset(int)} for {@link #hashLength(int)} bytes each.
     *
     * @return a view over the batch's hash storage.
     */
    public DirectBuffer hashBuffer()
    {
        return hashes;
    }

    /**
     * Copy a key's hash out.
     *
     * @param index     key index.
     * @param dst       destination.
     * @param dstOffset start in dst.
     * @return the hash length.
     */
    public int getHash(final int index, final MutableDirectBuffer dst, final int dstOffset)
    {
        final int length = hashLength(index);
        dst.putBytes(dstOffset, hashes, index * HASH_STRIDE, length);
        return length;
    }

    public long offset(final int index)
    {
        checkIndex(index);
        return offsets[index];
    }

    /**
     * Block length (Publish) or destination capacity (Read) of a key.
     *
     * @param index key index.
     * @return size in bytes, 0 for keys added without a range.
     */
    public int size(final int index)
    {
        checkIndex(index);
        return sizes[index];
    }

    void checkReadyToSend()
    {
        if (namespaceLength == 0)
        {
            throw new IllegalArgumentException("namespace not set");
        }
        if (keyCount == 0)
        {
            throw new IllegalArgumentException("batch has no keys");
        }
    }

    void checkRangesWithin(final long regionBytes)
    {
        for (int i = 0; i < keyCount; i++)
        {
            final long end = offsets[i] + sizes[i];
            if (sizes[i] <= 0 || end > regionBytes)
            {
                throw new IllegalArgumentException("key " + i + " range [" + offsets[i] + ", " + end +
                    ") not inside the data region of " + regionBytes + " bytes");
            }
        }
    }

    private int nextIndex(final int hashLength)
    {
        if (hashLength < 1 || hashLength > EngineRingLimits.MAX_HASH_LENGTH)
        {
            throw new IllegalArgumentException(
                "hash length must be 1.." + EngineRingLimits.MAX_HASH_LENGTH + " bytes: " + hashLength);
        }
        if (keyCount == maxKeys)
        {
            throw new IllegalArgumentException("batch full: " + maxKeys + " keys");
        }
        return keyCount;
    }

    private int commit(final int index, final int hashLength, final long offset, final int size)
    {
        hashLengths[index] = (byte)hashLength;
        offsets[index] = offset;
        sizes[index] = size;
        parentLengths[index] = 0;
        tokenCounts[index] = 0;
        keyCount = index + 1;
        return index;
    }

    private void checkIndex(final int index)
    {
        if (index < 0 || index >= keyCount)
        {
            throw new IndexOutOfBoundsException("key index " + index + " not in [0, " + keyCount + ")");
        }
    }

    private static void checkNamespaceLength(final int length)
    {
        if (length < 1 || length > EngineRingLimits.MAX_NAMESPACE_LENGTH)
        {
            throw new IllegalArgumentException(
                "namespace length must be 1.." + EngineRingLimits.MAX_NAMESPACE_LENGTH + " bytes: " + length);
        }
    }

    private static void checkRange(final long offset, final int size)
    {
        if (offset < 0 || size <= 0)
        {
            throw new IllegalArgumentException("bad data range: offset=" + offset + " size=" + size);
        }
    }
}
