package io.orbitkv.manager.peer;

/**
 * The sessions a frame handler finds the sender of a frame among: the sessions requesters opened on this peer (this
 * peer answers on them) and the client sessions this peer opened on others (the remote answers on them), and the
 * incarnation this peer speaks as. The transport's is its {@link PeerPublisher}. Single threaded (the peer agent's).
 */
public interface PeerSessions
{
    /**
     * @return the session a requester opened on this peer with this id (in any state), or null.
     */
    PeerSession session(long sessionId);

    /**
     * @return the active client session on the remote incarnation (msb, lsb) with this id, or null.
     */
    PeerClient client(long sessionId, long remoteMsb, long remoteLsb);

    /**
     * @return most significant half of the incarnation this peer speaks as.
     */
    long localIncarnationMsb();

    /**
     * @return least significant half of the incarnation this peer speaks as.
     */
    long localIncarnationLsb();
}
