package io.orbitkv.client;

/**
 * The canonical bytes of an engine's integer block hash: its 64 bits, little-endian, 8 bytes. The C client
 * ({@code okv_hash_from_u64}) and the Python package ({@code orbitkv.hash_from_int}) write the same bytes, so a block
 * an engine names by an integer hash is found from any of the three languages.
 */
public final class BlockHashes
{
    /** Length of the canonical bytes of an integer hash. */
    public static final int LONG_HASH_LENGTH = 8;

    private BlockHashes()
    {
    }

    /**
     * Write the canonical bytes of an integer hash.
     *
     * @param hash   the engine's block hash.
     * @param dst    destination.
     * @param offset where the 8 bytes start in {@code dst}.
     */
    public static void fromLong(final long hash, final byte[] dst, final int offset)
    {
        for (int i = 0; i < LONG_HASH_LENGTH; i++)
        {
            dst[offset + i] = (byte)(hash >>> (8 * i));
        }
    }

    /**
     * @param hash the engine's block hash.
     * @return its canonical 8 bytes.
     */
    public static byte[] fromLong(final long hash)
    {
        final byte[] bytes = new byte[LONG_HASH_LENGTH];
        fromLong(hash, bytes, 0);
        return bytes;
    }
}
