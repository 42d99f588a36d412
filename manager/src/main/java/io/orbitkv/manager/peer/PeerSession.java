package io.orbitkv.manager.peer;

import io.orbitkv.codecs.catalog.CatalogStatus;

/**
 * A session a requester opened on this peer with a PeerConnect (archive style): the requester named its response
 * channel and stream; this peer assigned the session id and answers every request on that channel. Owned by the
 * peer agent.
 */
public final class PeerSession
{
    static final int AWAIT_RESPONSE_CHANNEL = 0;
    static final int ACTIVE = 1;
    static final int CLOSED = 2;

    private final long sessionId;
    private final long connectCorrelationId;
    private final int requesterNodeIndex;
    private final long requesterIncarnationMsb;
    private final long requesterIncarnationLsb;
    private final String responseChannel;
    private final long connectDeadlineMs;
    private final CatalogStatus connectStatus;
    private int state = AWAIT_RESPONSE_CHANNEL;

    PeerSession(
        final long sessionId,
        final long connectCorrelationId,
        final int requesterNodeIndex,
        final long requesterIncarnationMsb,
        final long requesterIncarnationLsb,
        final String responseChannel,
        final long connectDeadlineMs,
        final CatalogStatus connectStatus)
    {
        this.connectStatus = connectStatus;
        this.sessionId = sessionId;
        this.connectCorrelationId = connectCorrelationId;
        this.requesterNodeIndex = requesterNodeIndex;
        this.requesterIncarnationMsb = requesterIncarnationMsb;
        this.requesterIncarnationLsb = requesterIncarnationLsb;
        this.responseChannel = responseChannel;
        this.connectDeadlineMs = connectDeadlineMs;
    }

    public long sessionId()
    {
        return sessionId;
    }

    public int requesterNodeIndex()
    {
        return requesterNodeIndex;
    }

    public long requesterIncarnationMsb()
    {
        return requesterIncarnationMsb;
    }

    public long requesterIncarnationLsb()
    {
        return requesterIncarnationLsb;
    }

    public String responseChannel()
    {
        return responseChannel;
    }

    public boolean isActive()
    {
        return ACTIVE == state;
    }

    long connectCorrelationId()
    {
        return connectCorrelationId;
    }

    /**
     * OK for a session being opened; otherwise the refusal to send before discarding it.
     */
    CatalogStatus connectStatus()
    {
        return connectStatus;
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

    public boolean isFrom(final long msb, final long lsb)
    {
        return msb == requesterIncarnationMsb && lsb == requesterIncarnationLsb;
    }
}
