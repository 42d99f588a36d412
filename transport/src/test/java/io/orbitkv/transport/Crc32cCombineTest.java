package io.orbitkv.transport;

import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.zip.CRC32C;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class Crc32cCombineTest
{
    private static int crc(final byte[] bytes, final int from, final int to)
    {
        final CRC32C crc = new CRC32C();
        crc.update(bytes, from, to - from);
        return (int)crc.getValue();
    }

    @Test
    void combineOfTwoPartsEqualsTheSumOfTheWholeAtEverySplit()
    {
        final byte[] bytes = new byte[300];
        new SplittableRandom(1).nextBytes(bytes);
        final int whole = crc(bytes, 0, bytes.length);
        for (int split = 0; split <= bytes.length; split++)
        {
            final int combined = Crc32cCombine.combine(
                crc(bytes, 0, split), crc(bytes, split, bytes.length), bytes.length - split);
            assertEquals(whole, combined, "split at " + split);
        }
    }

    @Test
    void shiftedPartsXorToTheSumOfTheWholeInAnyOrderOverRandomCuts()
    {
        final SplittableRandom random = new SplittableRandom(27);
        for (int trial = 0; trial < 200; trial++)
        {
            final byte[] bytes = new byte[1 + random.nextInt(1 << 17)];
            random.nextBytes(bytes);
            final int parts = 1 + random.nextInt(Math.min(16, bytes.length));
            final int[] cuts = new int[parts + 1];
            for (int i = 1; i < parts; i++)
            {
                cuts[i] = random.nextInt(bytes.length + 1);
            }
            cuts[parts] = bytes.length;
            Arrays.sort(cuts);

            int accumulated = 0;
            // Parts added back to front, the order a receiver may see them in.
            for (int i = parts - 1; i >= 0; i--)
            {
                accumulated ^= Crc32cCombine.shift(crc(bytes, cuts[i], cuts[i + 1]), bytes.length - cuts[i + 1]);
            }
            assertEquals(crc(bytes, 0, bytes.length), accumulated, "trial " + trial + " cuts " + Arrays.toString(cuts));
        }
    }

    @Test
    void aCorruptedByteInOnePartChangesTheCombinedSum()
    {
        final byte[] bytes = new byte[4096];
        new SplittableRandom(3).nextBytes(bytes);
        final int whole = crc(bytes, 0, bytes.length);
        bytes[3000] ^= 0x10;
        final int combined = Crc32cCombine.combine(crc(bytes, 0, 2048), crc(bytes, 2048, 4096), 2048);
        assertEquals(crc(bytes, 0, bytes.length), combined);
        assertNotEquals(whole, combined);
    }

    @Test
    void shiftByLengthsBeyondAnIntIsConsistentWithRepeatedShifts()
    {
        // x^(8(a+b)) = x^(8a) * x^(8b): shifting in two steps equals shifting once.
        final int crc = 0x1234_5678;
        final long a = 3L << 30;
        final long b = (1L << 33) + 12_345;
        assertEquals(Crc32cCombine.shift(Crc32cCombine.shift(crc, a), b), Crc32cCombine.shift(crc, a + b));
        assertEquals(crc, Crc32cCombine.shift(crc, 0));
        assertThrows(IllegalArgumentException.class, () -> Crc32cCombine.shift(crc, -1));
    }
}
