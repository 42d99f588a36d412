package io.orbitkv.catalog;

import java.nio.charset.StandardCharsets;

import io.orbitkv.codecs.StateKeyShard;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Test keys: one namespace, hashes derived from an int; and helpers to find keys of a given shard.
 */
final class Keys
{
    static final byte[] NAMESPACE_BYTES = "model=test;dtype=bf16;block=16".getBytes(StandardCharsets.US_ASCII);
    static final UnsafeBuffer NAMESPACE = new UnsafeBuffer(NAMESPACE_BYTES);
    static final int HASH_LENGTH = 32;

    private static final StateKeyShard SHARDS = new StateKeyShard();

    private Keys()
    {
    }

    static UnsafeBuffer hash(final int n)
    {
        final byte[] bytes = new byte[HASH_LENGTH];
        for (int i = 0; i < HASH_LENGTH; i++)
        {
            bytes[i] = (byte)(n * 31 + i * 7 + (n >>> 8));
        }
        bytes[0] = (byte)n;
        bytes[1] = (byte)(n >>> 8);
        bytes[2] = (byte)(n >>> 16);
        return new UnsafeBuffer(bytes);
    }

    static int shardOf(final int n)
    {
        return SHARDS.shard(NAMESPACE, 0, NAMESPACE_BYTES.length, hash(n), 0, HASH_LENGTH);
    }

    /**
     * The {@code count} smallest key numbers that map to a shard.
     */
    static int[] keysOfShard(final int shard, final int count)
    {
        final int[] keys = new int[count];
        int found = 0;
        for (int n = 0; found < count; n++)
        {
            if (shardOf(n) == shard)
            {
                keys[found++] = n;
            }
        }
        return keys;
    }

    static JournalRecord record(final int n, final long sequence, final int tier, final int op, final long generation)
    {
        return new JournalRecord()
            .key(NAMESPACE, 0, NAMESPACE_BYTES.length, hash(n), 0, HASH_LENGTH)
            .set(sequence, tier, op, generation, 1000 + n, 4096);
    }
}
