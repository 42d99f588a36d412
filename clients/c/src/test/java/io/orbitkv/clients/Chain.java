package io.orbitkv.clients;

import org.agrona.MutableDirectBuffer;

/**
 * The deterministic test chain that okv-tool (C) and tests/chain.py (Python) compute the same way: hashes and block
 * contents from xorshift64 streams, so that each language checks the bytes the others wrote.
 */
final class Chain
{
    static final int HASH_BYTES = 32;

    private Chain()
    {
    }

    private static long xorshift(final long state)
    {
        long x = state;
        x ^= x << 13;
        x ^= x >>> 7;
        x ^= x << 17;
        return x;
    }

    static byte[] hash(final long seed, final int index)
    {
        long state = seed * 0x9E3779B97F4A7C15L + index + 1;
        final byte[] out = new byte[HASH_BYTES];
        for (int w = 0; w < 4; w++)
        {
            state = xorshift(state);
            for (int b = 0; b < 8; b++)
            {
                out[w * 8 + b] = (byte)(state >>> (8 * b));
            }
        }
        return out;
    }

    static byte[] content(final byte[] hash, final int length)
    {
        long state = 0;
        for (int i = 7; i >= 0; i--)
        {
            state = (state << 8) | (hash[i] & 0xff);
        }
        state |= 1;
        final byte[] out = new byte[length];
        for (int at = 0; at < length; at += 8)
        {
            state = xorshift(state);
            for (int b = 0; b < 8 && at + b < length; b++)
            {
                out[at + b] = (byte)(state >>> (8 * b));
            }
        }
        return out;
    }

    static void fill(final byte[] hash, final MutableDirectBuffer dst, final int offset, final int length)
    {
        dst.putBytes(offset, content(hash, length));
    }
}
