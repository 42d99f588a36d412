package io.orbitkv.manager.peer;

import io.orbitkv.codecs.catalog.CatalogStatus;

/**
 * Active peer sessions for tests of handlers that answer on a session without a transport behind it.
 */
public final class TestPeerSessions
{
    private TestPeerSessions()
    {
    }

    /**
     * @return an active session opened by the requester incarnation (msb, lsb).
     */
    public static PeerSession active(final long sessionId, final int nodeIndex, final long msb, final long lsb)
    {
        final PeerSession session = new PeerSession(
            sessionId, 1, nodeIndex, msb, lsb, "aeron:udp?endpoint=127.0.0.1:1", Long.MAX_VALUE, CatalogStatus.OK);
        session.state(PeerSession.ACTIVE);
        return session;
    }

    /**
     * @return an active client session this peer opened on the remote incarnation (msb, lsb), as its connect answer
     * made it.
     */
    public static PeerClient activeClient(final int clientId, final long sessionId, final long msb, final long lsb)
    {
        final PeerClient client =
            new PeerClient(clientId, "aeron:udp?endpoint=127.0.0.1:2", 0, msb, lsb, clientId, Long.MAX_VALUE);
        client.sessionId(sessionId);
        client.state(PeerClient.ACTIVE);
        return client;
    }
}
