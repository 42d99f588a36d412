package io.orbitkv.manager.transfer;

import io.orbitkv.manager.peer.PeerClient;
import org.agrona.DirectBuffer;

/**
 * Where the requester sends its encoded authorizations and releases: the peer session to a source, with the bounded
 * offer retry of every peer send. The Manager's is the peer transport's publisher; a unit test's records the frames.
 */
interface RequestChannel
{
    /**
     * @return false when the client is not active or the offer failed (counted by the channel): the requester's
     * deadline or its bounded release retry recovers.
     */
    boolean offer(PeerClient client, DirectBuffer buffer, int offset, int length);

    /**
     * @return a correlation id no other request of this peer carries.
     */
    long nextCorrelationId();
}
