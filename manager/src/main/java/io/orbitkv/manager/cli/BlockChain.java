package io.orbitkv.manager.cli;

import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * A deterministic chain of block hashes and block contents derived from a seed, so that two shells (or two
 * hosts) address the same blocks and a reader can verify restored bytes exactly.
 *
 * <ul>
 *   <li>{@code hash_i} = the first 32 bytes of SHA-256 over {@code TAG || seed (8 bytes LE) || hash_(i-1) || i
 *   (8 bytes LE)}, with {@code hash_(-1)} = 32 zero bytes: a chained hash, as engines chain prefix blocks.</li>
 *   <li>length of block {@code i}: {@code maxBlockBytes} when fixed; otherwise drawn from
 *   {@code [minBlockBytes, maxBlockBytes]} by the hash.</li>
 *   <li>content of block {@code i}: an xorshift64 stream seeded from the first 8 bytes of {@code hash_i}.</li>
 * </ul>
 */
public final class BlockChain
{
    public static final int HASH_LENGTH = 32;
    private static final byte[] TAG = "orbitkv-block-chain-v1".getBytes(StandardCharsets.US_ASCII);

    private final long seed;
    private final int blockCount;
    private final int minBlockBytes;
    private final int maxBlockBytes;
    private final UnsafeBuffer hashes;
    private final int[] lengths;

    /**
     * Chain of fixed-size blocks.
     *
     * @param seed       chain seed.
     * @param blockCount number of blocks.
     * @param blockBytes size of every block.
     */
    public BlockChain(final long seed, final int blockCount, final int blockBytes)
    {
        this(seed, blockCount, blockBytes, blockBytes);
    }

    /**
     * Chain of blocks whose sizes vary between {@code minBlockBytes} and {@code maxBlockBytes}.
     *
     * @param seed          chain seed.
     * @param blockCount    number of blocks.
     * @param minBlockBytes smallest block.
     * @param maxBlockBytes largest block.
     */
    public BlockChain(final long seed, final int blockCount, final int minBlockBytes, final int maxBlockBytes)
    {
        if (blockCount < 1 || minBlockBytes < 1 || maxBlockBytes < minBlockBytes)
        {
            throw new IllegalArgumentException("bad chain: blocks=" + blockCount + " minBlockBytes=" + minBlockBytes +
                " maxBlockBytes=" + maxBlockBytes);
        }
        this.seed = seed;
        this.blockCount = blockCount;
        this.minBlockBytes = minBlockBytes;
        this.maxBlockBytes = maxBlockBytes;
        hashes = new UnsafeBuffer(new byte[blockCount * HASH_LENGTH]);
        lengths = new int[blockCount];

        final MessageDigest sha256 = sha256();
        final byte[] previous = new byte[HASH_LENGTH];
        final byte[] scratch = new byte[8];
        for (int i = 0; i < blockCount; i++)
        {
            sha256.reset();
            sha256.update(TAG);
            sha256.update(littleEndian(seed, scratch));
            sha256.update(previous);
            sha256.update(littleEndian(i, scratch));
            final byte[] digest = sha256.digest();
            System.arraycopy(digest, 0, previous, 0, HASH_LENGTH);
            hashes.putBytes(i * HASH_LENGTH, digest, 0, HASH_LENGTH);
            final long span = (long)maxBlockBytes - minBlockBytes + 1;
            lengths[i] = minBlockBytes + (int)Long.remainderUnsigned(hashes.getLong(i * HASH_LENGTH + 8, ByteOrder.LITTLE_ENDIAN), span);
        }
    }

    public long seed()
    {
        return seed;
    }

    public int blockCount()
    {
        return blockCount;
    }

    public int minBlockBytes()
    {
        return minBlockBytes;
    }

    public int maxBlockBytes()
    {
        return maxBlockBytes;
    }

    /**
     * All hashes, block {@code i} at {@code i * HASH_LENGTH}.
     *
     * @return the hash buffer.
     */
    public DirectBuffer hashes()
    {
        return hashes;
    }

    public int hashOffset(final int index)
    {
        return index * HASH_LENGTH;
    }

    public int blockLength(final int index)
    {
        return lengths[index];
    }

    /**
     * Total bytes of the first {@code count} blocks.
     *
     * @param count number of leading blocks.
     * @return bytes.
     */
    public long totalBytes(final int count)
    {
        long total = 0;
        for (int i = 0; i < count; i++)
        {
            total += lengths[i];
        }
        return total;
    }

    /**
     * Write block {@code index}'s content.
     *
     * @param index  block index.
     * @param dst    destination.
     * @param offset where in dst.
     */
    public void fill(final int index, final MutableDirectBuffer dst, final int offset)
    {
        final int length = lengths[index];
        long state = initialState(index);
        int i = 0;
        for (; i + 8 <= length; i += 8)
        {
            state = next(state);
            dst.putLong(offset + i, state, ByteOrder.LITTLE_ENDIAN);
        }
        state = next(state);
        for (int shift = 0; i < length; i++, shift += 8)
        {
            dst.putByte(offset + i, (byte)(state >>> shift));
        }
    }

    /**
     * Check that {@code length} bytes at {@code offset} are exactly block {@code index}.
     *
     * @param index  block index.
     * @param src    buffer holding the restored block.
     * @param offset where in src.
     * @param length restored length.
     * @return true when length and every byte match.
     */
    public boolean verify(final int index, final DirectBuffer src, final int offset, final int length)
    {
        if (length != lengths[index])
        {
            return false;
        }
        long state = initialState(index);
        int i = 0;
        for (; i + 8 <= length; i += 8)
        {
            state = next(state);
            if (src.getLong(offset + i, ByteOrder.LITTLE_ENDIAN) != state)
            {
                return false;
            }
        }
        state = next(state);
        for (int shift = 0; i < length; i++, shift += 8)
        {
            if (src.getByte(offset + i) != (byte)(state >>> shift))
            {
                return false;
            }
        }
        return true;
    }

    private long initialState(final int index)
    {
        final long state = hashes.getLong(index * HASH_LENGTH, ByteOrder.LITTLE_ENDIAN);
        return state == 0 ? 0x9E3779B97F4A7C15L : state;
    }

    private static long next(final long state)
    {
        long x = state;
        x ^= x << 13;
        x ^= x >>> 7;
        x ^= x << 17;
        return x;
    }

    private static byte[] littleEndian(final long value, final byte[] dst)
    {
        for (int i = 0; i < 8; i++)
        {
            dst[i] = (byte)(value >>> (8 * i));
        }
        return dst;
    }

    private static MessageDigest sha256()
    {
        try
        {
            return MessageDigest.getInstance("SHA-256");
        }
        catch (final NoSuchAlgorithmException ex)
        {
            throw new IllegalStateException(ex);
        }
    }
}
