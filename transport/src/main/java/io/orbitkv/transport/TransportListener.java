package io.orbitkv.transport;

/**
 * Completions of a {@link Transport}, delivered on the thread that calls {@link Transport#poll}.
 */
public interface TransportListener
{
    /**
     * A read submitted with {@link Transport#submitRead} ended.
     *
     * @param requestId the caller's id of the read.
     * @param status    one of {@link TransportStatus}.
     * @param bytes     bytes that landed in local memory (all of them only when status is OK).
     */
    void onReadComplete(long requestId, int status, long bytes);

    /**
     * A read submitted with {@link Transport#submitRead} ended OK, and the transport summed the bytes as they landed
     * in local memory (the built-in transport does, on its I/O thread, while each piece is still in cache): the
     * listener may compare {@code crc32c} with the block's expected checksum instead of reading the bytes again.
     * Transports that do not sum deliver {@link #onReadComplete(long, int, long)}; this default forgets the sum and
     * does that.
     *
     * @param requestId the caller's id of the read.
     * @param status    {@link TransportStatus#OK}.
     * @param bytes     bytes that landed in local memory, all of them.
     * @param crc32c    CRC32C of those bytes as they are in local memory, as {@code (int)CRC32C.getValue()}.
     */
    default void onReadComplete(final long requestId, final int status, final long bytes, final int crc32c)
    {
        onReadComplete(requestId, status, bytes);
    }

    /**
     * Source: no read of a revoked session is in progress any more, and none will start.
     */
    void onRevoked(long sessionId);
}
