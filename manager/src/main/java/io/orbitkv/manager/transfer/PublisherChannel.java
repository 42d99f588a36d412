package io.orbitkv.manager.transfer;

import io.orbitkv.manager.peer.PeerClient;
import io.orbitkv.manager.peer.PeerPublisher;
import io.orbitkv.manager.peer.PeerSession;
import org.agrona.DirectBuffer;

/**
 * The peer transport's publisher as the transfer parts' channels: the source's answers and the requester's requests,
 * counted as transfer messages sent; or, {@link #refusals}, the answers the transfer adapter gives before any handler
 * saw a request, counted only in the transport's bytes and offers.
 */
final class PublisherChannel implements AnswerChannel, RequestChannel
{
    private final PeerPublisher publisher;
    private final boolean transferMessages;

    PublisherChannel(final PeerPublisher publisher)
    {
        this(publisher, true);
    }

    private PublisherChannel(final PeerPublisher publisher, final boolean transferMessages)
    {
        this.publisher = publisher;
        this.transferMessages = transferMessages;
    }

    /**
     * @return the channel of the adapter's refusals: its answers are not counted as transfer messages sent.
     */
    static PublisherChannel refusals(final PeerPublisher publisher)
    {
        return new PublisherChannel(publisher, false);
    }

    public boolean offer(final PeerSession session, final DirectBuffer buffer, final int offset, final int length)
    {
        return transferMessages ?
            publisher.offer(session, buffer, offset, length) : publisher.send(session, buffer, offset, length);
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
