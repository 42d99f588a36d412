package io.orbitkv.manager.peer;

/**
 * This peer's side of a session it opens on a remote peer: the remote endpoint, the remote incarnation every request
 * is addressed to, and the session id the remote assigned once it answered the PeerConnect. Owned by the peer agent.
 */
public final class PeerClient
{
    static final int AWAIT_PUBLICATION = 0;
    static final int AWAIT_RESPONSE = 1;
    static final int ACTIVE = 2;
    static final int FAILED = 3;

    private final int clientId;
    private final String channel;
    private final int remoteNodeIndex;
    private final long remoteIncarnationMsb;
    private final long remoteIncarnationLsb;
    private final long connectCorrelationId;
    private final long connectDeadlineMs;
    private long sessionId = -1;
    private int state = AWAIT_PUBLICATION;

    PeerClient(
        final int clientId,
        final String channel,
        final int remoteNodeIndex,
        final long remoteIncarnationMsb,
        final long remoteIncarnationLsb,
        final long connectCorrelationId,
        final long connectDeadlineMs)
    {
        this.clientId = clientId;
        this.channel = channel;
        this.remoteNodeIndex = remoteNodeIndex;
        this.remoteIncarnationMsb = remoteIncarnationMsb;
        this.remoteIncarnationLsb = remoteIncarnationLsb;
        this.connectCorrelationId = connectCorrelationId;
        this.connectDeadlineMs = connectDeadlineMs;
    }

    public int clientId()
    {
        return clientId;
    }

    public String channel()
    {
        return channel;
    }

    public int remoteNodeIndex()
    {
        return remoteNodeIndex;
    }

    public long remoteIncarnationMsb()
    {
        return remoteIncarnationMsb;
    }

    public long remoteIncarnationLsb()
    {
        return remoteIncarnationLsb;
    }

    /**
     * @return the session id the remote assigned, or -1 before it answered.
     */
    public long sessionId()
    {
        return sessionId;
    }

    public boolean isActive()
    {
        return ACTIVE == state;
    }

    public boolean isFailed()
    {
        return FAILED == state;
    }

    long connectCorrelationId()
    {
        return connectCorrelationId;
    }

    long connectDeadlineMs()
    {
        return connectDeadlineMs;
    }

    int state()
    {
        return state;
    }

    void state(final int state)
    {
        this.state = state;
    }

    void sessionId(final long sessionId)
    {
        this.sessionId = sessionId;
    }
}
