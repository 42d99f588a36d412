package io.orbitkv.manager.catalog;

import io.orbitkv.manager.membership.MemberRecord;
import io.orbitkv.manager.peer.PeerPublisher;
import io.orbitkv.manager.peer.PeerClient;

/**
 * This Manager's session to one catalog host incarnation, shared by the owner streams of the shards it hosts and by
 * cold queries. A new incarnation of the host (restart) is a new link; a failed connect is retried after a pause.
 */
final class HostLink implements ColdQueryLink
{
    /**
     * Pause between connect attempts to a host that did not answer.
     */
    static final long RECONNECT_BACKOFF_MS = 500;

    final String nodeId;
    final String endpoint;
    final long incarnationMsb;
    final long incarnationLsb;
    private final PeerPublisher publisher;
    private PeerClient client;
    private long reconnectAtMs;
    private long suspectUntilMs;
    private boolean closed;

    HostLink(final MemberRecord record, final PeerPublisher publisher)
    {
        this.publisher = publisher;
        this.nodeId = record.nodeId();
        this.endpoint = record.peerEndpoint();
        this.incarnationMsb = record.runtimeUuid().getMostSignificantBits();
        this.incarnationLsb = record.runtimeUuid().getLeastSignificantBits();
    }

    public long suspectUntilMs()
    {
        return suspectUntilMs;
    }

    public void suspect(final long untilMs)
    {
        suspectUntilMs = untilMs;
    }

    boolean isFor(final MemberRecord record)
    {
        return null != record && record.runtimeUuid().getMostSignificantBits() == incarnationMsb &&
            record.runtimeUuid().getLeastSignificantBits() == incarnationLsb && record.peerEndpoint().equals(endpoint);
    }

    /**
     * Keep a session open: connect the first time and again after a failure (rate limited).
     *
     * @return the client when it is active, else null.
     */
    public PeerClient poll(final long nowMs)
    {
        if (closed)
        {
            return null;
        }
        if (null == client || (client.isFailed() && nowMs - reconnectAtMs >= 0))
        {
            if (null != client)
            {
                publisher.closeClient(client);
            }
            client = publisher.connect(endpoint, 0, incarnationMsb, incarnationLsb);
            reconnectAtMs = nowMs + RECONNECT_BACKOFF_MS;
        }
        return client.isActive() ? client : null;
    }

    public boolean owns(final PeerClient candidate)
    {
        return null != client && client == candidate;
    }

    void close()
    {
        closed = true;
        if (null != client)
        {
            publisher.closeClient(client);
            client = null;
        }
    }

    public boolean isClosed()
    {
        return closed;
    }

    public String toString()
    {
        return "HostLink{" + nodeId + '@' + endpoint + '}';
    }
}
