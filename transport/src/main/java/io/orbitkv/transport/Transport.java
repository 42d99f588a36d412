package io.orbitkv.transport;

/**
 * Moves block bytes between Managers once a source has granted a transfer session. A source exports the pinned ranges
 * of a session and revokes them when the session ends; a requester reads granted ranges into its own registered
 * memory and polls for completions. Addresses are absolute virtual addresses in the process that owns the memory:
 * the source's grant carries them, because a one-sided transport (Mooncake TE) reads them as they are.
 * <p>
 * Every method is called on one thread, the owning agent's; an implementation may run its own I/O thread behind
 * it, but completions are delivered only from {@link #poll}. Methods on the request path allocate nothing.
 */
public interface Transport extends AutoCloseable
{
    /**
     * @return the short name selected by {@code --transport}: "builtin" or "mooncake".
     */
    String name();

    /**
     * @return what a requester's transport needs to reach this one, carried in a grant ("host:port" for the
     * built-in transport, the TE segment name for Mooncake).
     */
    String localEndpoint();

    /**
     * Whether this transport can prove that no read of a revoked session is still in progress. The built-in
     * transport sends the bytes itself and can; a one-sided transport cannot, so a source keeps the holds of an
     * expired session quarantined until the requester is gone.
     *
     * @return true when {@link #revoke} leads to {@link TransportListener#onRevoked}.
     */
    boolean canRevoke();

    /**
     * Make {@code [address, address + length)} of this process available to the transport: the pool and the
     * staging memory on a source, the staging memory and engine data regions on a requester.
     *
     * @throws TransportException when the transport refuses the range.
     */
    void registerMemory(long address, long length);

    /**
     * Withdraw a range registered with {@link #registerMemory} starting at {@code address}.
     */
    void unregisterMemory(long address);

    /**
     * Source: allow reads that present {@code sessionId} and {@code token} of exactly the given ranges, until
     * {@link #revoke}. The arrays are read during the call only.
     *
     * @return false when the transport cannot hold another exported session (nothing is exported then).
     */
    boolean export(long sessionId, long token, long[] addresses, int[] lengths, int count);

    /**
     * Source: stop serving a session. Reads of it not yet started are refused; once none is in progress,
     * {@link TransportListener#onRevoked} is delivered by {@link #poll} (only when {@link #canRevoke}). Revoking an
     * unknown session delivers onRevoked too, so a caller can always wait for it.
     */
    void revoke(long sessionId);

    /**
     * Requester: a handle for reads from the transport at {@code endpoint} (see {@link #localEndpoint}); connections
     * are long-lived and shared by every session with that peer.
     *
     * @return a peer handle {@code >= 0}, or -1 when the endpoint is malformed or the transport cannot reach it.
     */
    int peer(CharSequence endpoint);

    /**
     * Requester: forget a peer (it left the member view); its reads in flight complete as failed.
     */
    void closePeer(int peer);

    /**
     * Requester: read {@code length} bytes at {@code remoteAddress} of the peer, granted under
     * {@code (sessionId, token)}, into registered local memory at {@code localAddress}. The outcome is delivered
     * by {@link #poll} with {@code requestId}.
     *
     * @return false when the transport cannot take the read now (back-pressure): nothing was submitted.
     */
    boolean submitRead(
        int peer, long sessionId, long token, long remoteAddress, long localAddress, int length, long requestId);

    /**
     * Deliver completed reads and revocations to {@code listener} on the caller's thread.
     *
     * @return the number of events delivered, at most {@code limit}.
     */
    int poll(TransportListener listener, int limit);

    /**
     * @return reads submitted and not yet delivered by {@link #poll}.
     */
    int readsInFlight();

    /**
     * Stop the transport: reads in flight complete as failed, exported sessions are dropped, memory unregistered.
     */
    void close();
}
