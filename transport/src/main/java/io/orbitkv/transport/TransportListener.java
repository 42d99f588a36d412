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
     * Source: no read of a revoked session is in progress any more, and none will start.
     */
    void onRevoked(long sessionId);
}
