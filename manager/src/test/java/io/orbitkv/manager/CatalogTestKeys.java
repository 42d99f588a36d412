package io.orbitkv.manager;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

import io.orbitkv.client.EngineClient;
import io.orbitkv.client.KeyBatch;
import io.orbitkv.client.OperationResult;
import io.orbitkv.codecs.ShardPlacement;
import io.orbitkv.codecs.StateKeyShard;
import io.orbitkv.codecs.engine.KeyStatus;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Keys and polling shared by the catalog tests (in-process and separate processes): distinct 32-byte hashes, key
 * batches laid out block after block in a client's data region, the catalog host of a key, and a deadline loop
 * for discovery through the peers flag.
 */
public final class CatalogTestKeys
{
    private CatalogTestKeys()
    {
    }

    /**
     * A distinct 32-byte hash per index (the index in the first four bytes).
     */
    public static byte[] hash(final int i)
    {
        final byte[] hash = new byte[32];
        for (int b = 4; b < hash.length; b++)
        {
            hash[b] = (byte)(i * 31 + b * 7);
        }
        ByteBuffer.wrap(hash).putInt(i);
        return hash;
    }

    /**
     * Keys {@code first .. first + count - 1}; key i's bytes sit at {@code (i % regionBlocks) * blockBytes}.
     */
    public static KeyBatch batch(
        final String namespace, final int first, final int count, final int blockBytes, final int regionBlocks)
    {
        final KeyBatch batch = new KeyBatch(count).namespace(namespace.getBytes(StandardCharsets.US_ASCII));
        for (int i = 0; i < count; i++)
        {
            batch.addKey(hash(first + i), 0, 32, (long)(i % regionBlocks) * blockBytes, blockBytes);
        }
        return batch;
    }

    /**
     * The catalog node hosting key {@code key}'s shard.
     */
    public static String hostOf(final String namespace, final int key, final ShardPlacement placement)
    {
        final byte[] ns = namespace.getBytes(StandardCharsets.US_ASCII);
        final int shard = new StateKeyShard().shard(
            new UnsafeBuffer(ns), 0, ns.length, new UnsafeBuffer(hash(key)), 0, 32);
        return placement.hostOf(shard);
    }

    /**
     * Look up with the peers flag until exactly {@code expected} keys come back as PEER.
     */
    public static OperationResult awaitPeerKeys(
        final EngineClient client,
        final KeyBatch batch,
        final int expected,
        final OperationResult result,
        final long timeoutNs)
    {
        final long deadline = System.nanoTime() + timeoutNs;
        while (true)
        {
            client.lookup(batch, false, true, result);
            if (result.count(KeyStatus.PEER) == expected)
            {
                return result;
            }
            if (System.nanoTime() - deadline > 0)
            {
                throw new AssertionError("expected " + expected + " PEER keys, got " + result.count(KeyStatus.PEER) +
                    " of " + result.keyCount());
            }
        }
    }
}
