package io.orbitkv.manager.peer;

import java.nio.charset.StandardCharsets;

import io.orbitkv.catalog.JournalRecord;
import io.orbitkv.codecs.StateKeyShard;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Test keys: one namespace, 32-byte hashes derived from an int, and the keys that fall in a given shard.
 */
final class PeerKeys
{
    static final byte[] NAMESPACE_BYTES = "model=peer;dtype=bf16;block=16".getBytes(StandardCharsets.US_ASCII);
    static final UnsafeBuffer NAMESPACE = new UnsafeBuffer(NAMESPACE_BYTES);
    static final int HASH_LENGTH = 32;

    private static final StateKeyShard SHARDS = new StateKeyShard();

    private PeerKeys()
    {
    }

    static UnsafeBuffer hash(final int n)
    {
        final byte[] bytes = new byte[HASH_LENGTH];
        for (int i = 0; i < HASH_LENGTH; i++)
        {
            bytes[i] = (byte)(n * 13 + i * 5 + 1);
        }
        bytes[0] = (byte)n;
        bytes[1] = (byte)(n >>> 8);
        return new UnsafeBuffer(bytes);
    }

    static int shardOf(final int n)
    {
        return SHARDS.shard(NAMESPACE, 0, NAMESPACE_BYTES.length, hash(n), 0, HASH_LENGTH);
    }

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

    static int keyNotInShard(final int shard)
    {
        int n = 0;
        while (shardOf(n) == shard)
        {
            n++;
        }
        return n;
    }

    static long insertionSequence(final int n)
    {
        return 1000 + n;
    }

    static JournalRecord record(final int n, final long sequence)
    {
        return new JournalRecord()
            .key(NAMESPACE, 0, NAMESPACE_BYTES.length, hash(n), 0, HASH_LENGTH)
            .set(sequence, JournalRecord.TIER_DRAM, JournalRecord.OP_ADD, 1, insertionSequence(n), 4096);
    }
}
