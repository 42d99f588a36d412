package io.orbitkv.manager.events;

import io.orbitkv.index.BlockIndex;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.status.AtomicCounter;

import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The publisher's memory of what engines said about the blocks they published: per (namespace, hash) the parent
 * block's hash and the block's token ids. Every {@code BlockStored} of a block it remembers carries them, the first
 * (the publish) and later ones (the block written to SSD, stored again after an eviction). Least recently used
 * entries are forgotten past {@link #MAX_BYTES}, counted; a forgotten block's events go out without lineage.
 * <p>
 * Publisher thread only.
 */
final class KvEventLineage
{
    /** Memory bound: about 80,000 blocks of 16 tokens. */
    static final long MAX_BYTES = 16L * 1024 * 1024;
    /** What an entry costs besides its parent hash and token ids (key, value, map node). */
    static final int ENTRY_OVERHEAD_BYTES = 160;

    private final LinkedHashMap<Key, Lineage> entries = new LinkedHashMap<>(1024, 0.75f, true);
    private final Key probe = new Key(new byte[BlockIndex.MAX_HASH_BYTES]);
    private final AtomicCounter evicted;
    private final long maxBytes;
    private long bytes;

    KvEventLineage(final AtomicCounter evicted, final long maxBytes)
    {
        this.evicted = evicted;
        this.maxBytes = maxBytes;
    }

    /**
     * Remember a lineage record.
     *
     * @param record the ring's buffer.
     * @param index  where the record's body starts ({@link KvEventRecord} lineage layout).
     */
    void put(final DirectBuffer record, final int index)
    {
        final int namespaceId = record.getInt(index + KvEventRecord.LINEAGE_NAMESPACE_ID_OFFSET);
        final int hashLength = record.getByte(index + KvEventRecord.LINEAGE_HASH_LENGTH_OFFSET) & 0xFF;
        final int parentLength = record.getByte(index + KvEventRecord.LINEAGE_PARENT_LENGTH_OFFSET) & 0xFF;
        final int tokenCount = record.getShort(index + KvEventRecord.LINEAGE_TOKEN_COUNT_OFFSET) & 0xFFFF;
        int position = index + KvEventRecord.LINEAGE_HASH_OFFSET;
        final byte[] hash = new byte[hashLength];
        record.getBytes(position, hash);
        position += hashLength;
        byte[] parent = null;
        if (parentLength > 0)
        {
            parent = new byte[parentLength];
            record.getBytes(position, parent);
            position += parentLength;
        }
        final int[] tokens = new int[tokenCount];
        for (int i = 0; i < tokenCount; i++)
        {
            tokens[i] = record.getInt(position + i * Integer.BYTES, ByteOrder.LITTLE_ENDIAN);
        }
        final Lineage lineage = new Lineage(parent, tokens);
        final Lineage previous = entries.put(new Key(namespaceId, hash), lineage);
        bytes += lineage.bytes();
        if (null != previous)
        {
            bytes -= previous.bytes();
        }
        final Iterator<Map.Entry<Key, Lineage>> eldest = entries.entrySet().iterator();
        while (bytes > maxBytes && eldest.hasNext())
        {
            bytes -= eldest.next().getValue().bytes();
            eldest.remove();
            evicted.incrementRelease();
        }
    }

    /**
     * @param namespaceId the block's namespace.
     * @param hash        its hash bytes.
     * @param hashLength  how many.
     * @return what the engine said of the block, or null.
     */
    Lineage get(final int namespaceId, final byte[] hash, final int hashLength)
    {
        probe.set(namespaceId, hash, hashLength);
        return entries.get(probe);
    }

    int size()
    {
        return entries.size();
    }

    /**
     * @param parent the parent block's hash, or null.
     * @param tokens the block's token ids.
     */
    record Lineage(byte[] parent, int[] tokens)
    {
        long bytes()
        {
            return ENTRY_OVERHEAD_BYTES + (null == parent ? 0 : parent.length) + (long)tokens.length * Integer.BYTES;
        }
    }

    private static final class Key
    {
        private final byte[] hash;
        private int namespaceId;
        private int length;
        private int hashCode;

        Key(final byte[] hash)
        {
            this.hash = hash;
        }

        Key(final int namespaceId, final byte[] hash)
        {
            this.hash = hash;
            this.namespaceId = namespaceId;
            this.length = hash.length;
            this.hashCode = hashOf(namespaceId, hash, hash.length);
        }

        void set(final int namespaceId, final byte[] src, final int length)
        {
            System.arraycopy(src, 0, hash, 0, length);
            this.namespaceId = namespaceId;
            this.length = length;
            this.hashCode = hashOf(namespaceId, hash, length);
        }

        private static int hashOf(final int namespaceId, final byte[] hash, final int length)
        {
            int h = namespaceId;
            for (int i = 0; i < length; i++)
            {
                h = 31 * h + hash[i];
            }
            return h;
        }

        public int hashCode()
        {
            return hashCode;
        }

        public boolean equals(final Object other)
        {
            return other instanceof Key that && namespaceId == that.namespaceId &&
                Arrays.equals(hash, 0, length, that.hash, 0, that.length);
        }
    }
}
