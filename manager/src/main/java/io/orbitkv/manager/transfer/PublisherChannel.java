package io.orbitkv.manager.transfer;

import io.orbitkv.manager.peer.PeerClient;
import io.orbitkv.manager.peer.PeerPublisher;
import io.orbitkv.manager.peer.PeerSession;
import org.agrona.DirectBuffer;

/**
 * The peer transport's publisher as the transfer parts' channels: the source's answers and the requester's requests.
 */
final class PublisherChannel implements AnswerChannel, RequestChannel
{
    private final PeerPublisher publisher;

    PublisherChannel(final PeerPublisher publisher)
    {
        this.publisher = publisher;
    }

    public boolean offer(final PeerSession session, final DirectBuffer buffer, final int offset, final int length)
    {
        return publisher.offer(session, buffer, offset, length);
    }

    public boolean offer(final PeerClient client, final DirectBuffer buffer, final int offset, final int length)
    {
        return publisher.offer(client, buffer, offset, length);
    }

    public long nextCorrelationId()
    {
        return publisher.nextCorrelationId();
    }

    public long localIncarnationMsb()
    {
        return publisher.localIncarnationMsb();
    }

    public long localIncarnationLsb()
    {
        return publisher.localIncarnationLsb();
    }
}
