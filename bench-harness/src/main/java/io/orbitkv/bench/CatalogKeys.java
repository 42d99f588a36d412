package io.orbitkv.bench;

import static io.orbitkv.bench.CatalogBench.HASH_LENGTH;
import static io.orbitkv.bench.CatalogBench.NAMESPACE;
import static io.orbitkv.bench.CatalogBench.QUERY_KEYS;

import java.util.SplittableRandom;

import io.orbitkv.catalog.JournalRecord;
import io.orbitkv.catalog.ShardInventory;
import io.orbitkv.codecs.StateKeyShard;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The key pool of {@link CatalogBench}: one namespace and {@code keyPool} pseudo-random hashes of
 * {@link CatalogBench#HASH_LENGTH} bytes from a fixed seed (the same keys every run, for us and for the Redis anchor),
 * with the shard of each key computed once.
 */
final class CatalogKeys
{
    final UnsafeBuffer namespace = new UnsafeBuffer(NAMESPACE);
    final byte[] hashes;
    final UnsafeBuffer hashBuffer;
    final byte[] shardOfKey;

    CatalogKeys(final int keyPool)
    {
        this.hashes = new byte[keyPool * HASH_LENGTH];
        final SplittableRandom random = new SplittableRandom(0x5EED_CA7AL);
        for (int i = 0; i < hashes.length; i += 8)
        {
            final long v = random.nextLong();
            for (int b = 0; b < 8; b++)
            {
                hashes[i + b] = (byte)(v >>> (b * 8));
            }
        }
        this.hashBuffer = new UnsafeBuffer(hashes);
        this.shardOfKey = new byte[keyPool];
        final StateKeyShard shards = new StateKeyShard();
        for (int k = 0; k < keyPool; k++)
        {
            shardOfKey[k] = (byte)shards.shard(
                namespace, 0, NAMESPACE.length, hashBuffer, k * HASH_LENGTH,
                HASH_LENGTH);
        }
    }

    /**
     * Add a DRAM residence of a pool key to an owner's inventory.
     *
     * @return the journal sequence of the record.
     */
    long add(final ShardInventory inventory, final int key, final long insertionSequence)
    {
        final long sequence = inventory.add(JournalRecord.TIER_DRAM, namespace, 0, NAMESPACE.length, hashBuffer,
            key * HASH_LENGTH, HASH_LENGTH, insertionSequence, 2 * 1024 * 1024);
        if (sequence < 0)
        {
            throw new IllegalStateException("inventory refused key " + key + ": " + sequence);
        }
        return sequence;
    }

    /**
     * Copy query {@code q}'s key hashes into one contiguous request, outside the timed region of both the lookup and
     * its MGET anchor: an engine hands a lookup's keys over in one request message (a prefix chain), not scattered
     * over the bench's whole key pool, whose cache misses would otherwise be timed (serialised behind each key's
     * SHA-256 on our side).
     */
    static void requestKeys(final byte[] hashes, final int[] keys, final int q, final byte[] request)
    {
        for (int i = 0; i < QUERY_KEYS; i++)
        {
            System.arraycopy(hashes, keys[q * QUERY_KEYS + i] * HASH_LENGTH, request, i * HASH_LENGTH, HASH_LENGTH);
        }
    }
}
