package io.orbitkv.bench;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import io.orbitkv.client.KeyBatch;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The blocks {@link TransferBench} moves: key batches over consecutive ranges of an engine's data region, distinct
 * hashes derived from the key index, and a byte pattern derived from the offset so that a reader can check every word
 * it received without a copy of what was published.
 */
final class TransferBlocks
{
    private static final long PATTERN = 0x9E3779B97F4A7C15L;

    private TransferBlocks()
    {
    }

    /**
     * Key batches of at most {@code perBatch} keys over consecutive ranges of the data region.
     */
    static List<KeyBatch> batches(
        final String namespace, final int count, final int blockBytes, final long firstOffset, final int perBatch)
    {
        final List<KeyBatch> batches = new ArrayList<>();
        final byte[] ns = namespace.getBytes(StandardCharsets.US_ASCII);
        for (int first = 0; first < count; first += perBatch)
        {
            final int n = Math.min(perBatch, count - first);
            final KeyBatch batch = new KeyBatch(n).namespace(ns);
            for (int i = 0; i < n; i++)
            {
                batch.addKey(hash(first + i), 0, 32, firstOffset + (long)(first + i) * blockBytes, blockBytes);
            }
            batches.add(batch);
        }
        return batches;
    }

    static byte[] hash(final int i)
    {
        final byte[] hash = new byte[32];
        long x = (i + 1) * PATTERN;
        for (int b = 4; b < hash.length; b++)
        {
            x ^= x >>> 29;
            x *= 0xBF58476D1CE4E5B9L;
            hash[b] = (byte)x;
        }
        ByteBuffer.wrap(hash).putInt(i);
        return hash;
    }

    static void fill(final UnsafeBuffer region, final long bytes)
    {
        for (int i = 0; i < bytes; i += Long.BYTES)
        {
            region.putLong(i, word(i));
        }
    }

    static void verify(final UnsafeBuffer region, final long offset, final long bytes, final String what)
    {
        for (long i = offset; i < offset + bytes; i += Long.BYTES)
        {
            if (region.getLong((int)i) != word(i))
            {
                throw new IllegalStateException(what + ": byte " + i + " of the region is not what a published");
            }
        }
    }

    static long word(final long offset)
    {
        return (offset + 1) * PATTERN;
    }
}
