package io.orbitkv.manager.e2e;

import io.orbitkv.client.EngineClient;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.Arrays;
import java.util.Random;

/**
 * Blocks of seeded random bytes in an engine's data region: block {@code i} is what {@code new Random(i)} gives, so
 * a restore is checked byte for byte without keeping the bytes.
 */
final class SeededBlocks
{
    private SeededBlocks()
    {
    }

    static void fill(final EngineClient client, final int count, final int blockBytes)
    {
        final UnsafeBuffer region = client.dataBuffer();
        final byte[] bytes = new byte[blockBytes];
        for (int i = 0; i < count; i++)
        {
            new Random(i).nextBytes(bytes);
            region.putBytes(i * blockBytes, bytes);
        }
    }

    /**
     * @return how many of the first {@code count} blocks differ from their seeded bytes.
     */
    static int mismatches(final EngineClient client, final int count, final int blockBytes)
    {
        final UnsafeBuffer region = client.dataBuffer();
        final byte[] expected = new byte[blockBytes];
        final byte[] actual = new byte[blockBytes];
        int bad = 0;
        for (int i = 0; i < count; i++)
        {
            new Random(i).nextBytes(expected);
            region.getBytes(i * blockBytes, actual);
            if (!Arrays.equals(expected, actual))
            {
                bad++;
            }
        }
        return bad;
    }
}
