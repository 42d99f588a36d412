package io.orbitkv.transport;

/**
 * Arithmetic on CRC32C values (the Castagnoli polynomial, as {@link java.util.zip.CRC32C} computes it): the sum of a
 * whole from the sums of its parts, without reading the bytes again.
 *
 * <p>A CRC is the remainder of the message, as a polynomial over GF(2), modulo the generator. Appending {@code n}
 * bytes to a message multiplies its remainder by {@code x^(8n)}; the initial and final inversions of the standard
 * CRC cancel between adjacent parts, so {@code crc(A || B) = crc(A) * x^(8|B|) xor crc(B)}
 * ({@link #combine}). Applied to every part of a message cut into consecutive parts, this gives
 * {@code crc(message) = xor over parts of shift(crc(part), bytes after the part)} ({@link #shift}): each part can be
 * added to the whole as soon as its own sum is known, in any order.
 *
 * <p>{@code x^(8n)} is built from a precomputed table of {@code x^(2^k)} in at most 31 multiplications, each a
 * 32-step shift-and-xor loop, so a shift costs well under a microsecond and allocates nothing. Values are in the
 * bit-reflected form {@code CRC32C.getValue()} returns (low 32 bits).
 */
public final class Crc32cCombine
{
    /** The Castagnoli polynomial, bit reflected. */
    static final int POLYNOMIAL = 0x82F63B78;

    /** x^0 in the reflected representation. */
    private static final int ONE = 0x80000000;

    /** {@code X2N[k]} = x^(2^k) mod P; 64 entries cover any shift of up to 2^60 bytes without wrapping. */
    private static final int[] X2N = new int[64];

    static
    {
        int p = ONE >>> 1; // x^1
        X2N[0] = p;
        for (int k = 1; k < X2N.length; k++)
        {
            p = multiply(p, p);
            X2N[k] = p;
        }
    }

    private Crc32cCombine()
    {
    }

    /**
     * The CRC32C of {@code A || B} from the CRC32C of each.
     *
     * @param crcA   CRC32C of the first part.
     * @param crcB   CRC32C of the second part.
     * @param bytesB length of the second part in bytes, {@code >= 0}.
     * @return CRC32C of the two parts one after the other.
     */
    public static int combine(final int crcA, final int crcB, final long bytesB)
    {
        return shift(crcA, bytesB) ^ crcB;
    }

    /**
     * A part's sum as it contributes to the sum of a message in which {@code bytesAfter} bytes follow it: the xor of
     * every part's contribution is the message's CRC32C.
     *
     * @param crc        CRC32C of the part.
     * @param bytesAfter bytes of the message after the part, {@code >= 0}.
     * @return {@code crc * x^(8 * bytesAfter) mod P}.
     */
    public static int shift(final int crc, final long bytesAfter)
    {
        if (bytesAfter < 0)
        {
            throw new IllegalArgumentException("negative length: " + bytesAfter);
        }
        return 0 == bytesAfter ? crc : multiply(xPower8n(bytesAfter), crc);
    }

    /**
     * @return x^(8n) mod P, reflected.
     */
    static int xPower8n(final long n)
    {
        int p = ONE;
        long rest = n;
        int k = 3;
        while (0 != rest)
        {
            if (0 != (rest & 1))
            {
                p = multiply(X2N[k], p);
            }
            rest >>>= 1;
            k++;
        }
        return p;
    }

    /**
     * @return {@code a * b mod P}, both reflected.
     */
    static int multiply(final int a, final int b)
    {
        int m = ONE;
        int p = 0;
        int v = b;
        while (true)
        {
            if (0 != (a & m))
            {
                p ^= v;
                if (0 == (a & (m - 1)))
                {
                    break;
                }
            }
            m >>>= 1;
            v = 0 != (v & 1) ? (v >>> 1) ^ POLYNOMIAL : v >>> 1;
        }
        return p;
    }
}
