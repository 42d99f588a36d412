package io.orbitkv.manager.transfer;

import io.orbitkv.manager.peer.PeerSession;
import org.agrona.DirectBuffer;

/**
 * Where the source sends its encoded grants and release acks: a requester's peer session (the Manager's
 * {@link io.orbitkv.manager.peer.PeerPublisher#offer(PeerSession, DirectBuffer, int, int)}), and the incarnation the
 * answers are sent as.
 */
interface AnswerChannel
{
    /**
     * @return false when the message could not be sent (counted by the caller; the requester's deadline or its
     * bounded release retry recovers).
     */
    boolean offer(PeerSession session, DirectBuffer buffer, int offset, int length);

    long localIncarnationMsb();

    long localIncarnationLsb();
}
