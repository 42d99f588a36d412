package io.orbitkv.manager.peer;

import io.orbitkv.codecs.transfer.TransferAuthorizeDecoder;
import io.orbitkv.codecs.transfer.TransferGrantDecoder;
import io.orbitkv.codecs.transfer.TransferReleaseAckDecoder;
import io.orbitkv.codecs.transfer.TransferReleaseDecoder;
import io.orbitkv.codecs.transfer.TransferRouteDecoder;
import io.orbitkv.codecs.transfer.TransferStatus;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The transfer control frames (schema {@code io.orbitkv.codecs.transfer}) the {@link PeerAdapter} finds on the
 * endpoint: each is checked for its block length, its peer session (a request) or client (an answer), its
 * destination incarnation and its sender, then handed to the {@link TransferHandler}, which decodes the body. Refusals
 * have counters of their own and are never answered with a CatalogResponse; a request naming another incarnation of
 * this peer is answered STALE_INCARNATION. Single threaded (the peer agent's).
 */
final class TransferFrames
{
    private static final PeerFrameException MALFORMED_TRANSFER_FRAME =
        new PeerFrameException("malformed peer transfer frame");
    private static final PeerFrameException UNKNOWN_TRANSFER_TEMPLATE_FRAME =
        new PeerFrameException("peer transfer frame with an unknown template");
    private static final int TRANSFER_HEADER_LENGTH = io.orbitkv.codecs.transfer.MessageHeaderDecoder.ENCODED_LENGTH;

    private final PeerAgent agent;
    private final PeerPublisher publisher;
    private final PeerProxy proxy;
    private final PeerCounters counters;
    private final ErrorHandler errorHandler;
    private final TransferHandler transferHandler;
    private final TransferAuthorizeDecoder authorizeDecoder = new TransferAuthorizeDecoder();
    private final TransferGrantDecoder grantDecoder = new TransferGrantDecoder();
    private final TransferReleaseDecoder releaseDecoder = new TransferReleaseDecoder();
    private final TransferReleaseAckDecoder releaseAckDecoder = new TransferReleaseAckDecoder();
    private PeerSession staleSession;

    TransferFrames(
        final PeerAgent agent,
        final PeerPublisher publisher,
        final PeerCounters counters,
        final ErrorHandler errorHandler,
        final TransferHandler transferHandler)
    {
        this.agent = agent;
        this.publisher = publisher;
        this.proxy = publisher.proxy();
        this.counters = counters;
        this.errorHandler = errorHandler;
        this.transferHandler = transferHandler;
    }

    /**
     * One frame of the transfer schema (its header already read by the adapter).
     */
    void onFrame(
        final UnsafeBuffer frame, final int length, final int blockLength, final int version, final int templateId)
    {
        if (null == transferHandler)
        {
            counters.increment(PeerCounter.TRANSFER_REJECTED_NO_HANDLER);
            return;
        }
        if (version < PeerAdapter.MIN_SCHEMA_VERSION)
        {
            rejectTransferFrame();
            return;
        }
        try
        {
            switch (templateId)
            {
                case TransferAuthorizeDecoder.TEMPLATE_ID ->
                {
                    counters.increment(PeerCounter.FRAMES_TRANSFER_AUTHORIZE);
                    if (transferBlockOk(blockLength, TransferAuthorizeDecoder.BLOCK_LENGTH, length))
                    {
                        authorizeDecoder.wrap(frame, TRANSFER_HEADER_LENGTH, blockLength, version);
                        onTransferAuthorize();
                    }
                }
                case TransferReleaseDecoder.TEMPLATE_ID ->
                {
                    counters.increment(PeerCounter.FRAMES_TRANSFER_RELEASE);
                    if (transferBlockOk(blockLength, TransferReleaseDecoder.BLOCK_LENGTH, length))
                    {
                        releaseDecoder.wrap(frame, TRANSFER_HEADER_LENGTH, blockLength, version);
                        onTransferRelease();
                    }
                }
                case TransferGrantDecoder.TEMPLATE_ID ->
                {
                    counters.increment(PeerCounter.FRAMES_TRANSFER_GRANT);
                    if (transferBlockOk(blockLength, TransferGrantDecoder.BLOCK_LENGTH, length))
                    {
                        grantDecoder.wrap(frame, TRANSFER_HEADER_LENGTH, blockLength, version);
                        onTransferGrant();
                    }
                }
                case TransferReleaseAckDecoder.TEMPLATE_ID ->
                {
                    counters.increment(PeerCounter.FRAMES_TRANSFER_RELEASE_ACK);
                    if (transferBlockOk(blockLength, TransferReleaseAckDecoder.BLOCK_LENGTH, length))
                    {
                        releaseAckDecoder.wrap(frame, TRANSFER_HEADER_LENGTH, blockLength, version);
                        onTransferReleaseAck();
                    }
                }
                default ->
                {
                    errorHandler.onError(UNKNOWN_TRANSFER_TEMPLATE_FRAME);
                    counters.increment(PeerCounter.TRANSFER_REJECTED_UNKNOWN_TEMPLATE);
                }
            }
        }
        catch (final IndexOutOfBoundsException | IllegalArgumentException | IllegalStateException ex)
        {
            // A group or var-data length past the frame, read by the handler through the bounded view.
            rejectTransferFrame();
        }
    }

    private boolean transferBlockOk(final int blockLength, final int minimumBlockLength, final int length)
    {
        if (blockLength < minimumBlockLength || TRANSFER_HEADER_LENGTH + blockLength > length)
        {
            rejectTransferFrame();
            return false;
        }
        return true;
    }

    private void rejectTransferFrame()
    {
        errorHandler.onError(MALFORMED_TRANSFER_FRAME);
        counters.increment(PeerCounter.TRANSFER_REJECTED_MALFORMED);
    }

    /**
     * A request to this peer as transfer source: an active session whose requester is the route's sender, addressed
     * to this incarnation. A request from the session's requester to another incarnation of this peer leaves that
     * session in {@link #staleSession} for the caller to answer STALE_INCARNATION (the requester drops the
     * candidate); anything else is only counted.
     *
     * @return the session, or null when the frame was refused.
     */
    private PeerSession acceptTransferRequest(final TransferRouteDecoder route, final long peerSessionId)
    {
        staleSession = null;
        final PeerSession session = agent.session(peerSessionId);
        if (null == session || !session.isActive())
        {
            counters.increment(PeerCounter.TRANSFER_REJECTED_UNKNOWN_SESSION);
            return null;
        }
        if (!session.isFrom(route.senderIncarnation().msb(), route.senderIncarnation().lsb()))
        {
            // Not answered: the session's channel belongs to the incarnation that opened it, not to this sender.
            counters.increment(PeerCounter.TRANSFER_REJECTED_WRONG_SENDER);
            return null;
        }
        if (!isLocalDestination(route))
        {
            counters.increment(PeerCounter.TRANSFER_REJECTED_STALE_INCARNATION);
            staleSession = session;
            return null;
        }
        return session;
    }

    private boolean isLocalDestination(final TransferRouteDecoder route)
    {
        return route.destinationIncarnation().msb() == proxy.localIncarnationMsb() &&
            route.destinationIncarnation().lsb() == proxy.localIncarnationLsb();
    }

    private void onTransferAuthorize()
    {
        final PeerSession session = acceptTransferRequest(authorizeDecoder.route(), authorizeDecoder.peerSessionId());
        if (null != session)
        {
            transferHandler.onAuthorize(session, authorizeDecoder);
        }
        else if (null != staleSession)
        {
            proxy.transferRefusal(publisher.publication(staleSession), staleSession, authorizeDecoder.correlationId(),
                authorizeDecoder.requesterSessionId(), TransferStatus.STALE_INCARNATION);
        }
    }

    private void onTransferRelease()
    {
        final PeerSession session = acceptTransferRequest(releaseDecoder.route(), releaseDecoder.peerSessionId());
        if (null != session)
        {
            transferHandler.onRelease(session, releaseDecoder);
        }
        else if (null != staleSession)
        {
            proxy.transferReleaseAck(publisher.publication(staleSession), staleSession, releaseDecoder.correlationId(),
                releaseDecoder.transferSessionId(), TransferStatus.STALE_INCARNATION);
        }
    }

    private void onTransferGrant()
    {
        final TransferRouteDecoder route = grantDecoder.route();
        final PeerClient client = acceptTransferAnswer(route, grantDecoder.peerSessionId());
        if (null != client)
        {
            transferHandler.onGrant(client, grantDecoder);
        }
    }

    private void onTransferReleaseAck()
    {
        final TransferRouteDecoder route = releaseAckDecoder.route();
        final PeerClient client = acceptTransferAnswer(route, releaseAckDecoder.peerSessionId());
        if (null != client)
        {
            transferHandler.onReleaseAck(client, releaseAckDecoder);
        }
    }

    /**
     * An answer to this peer as requester: an active client whose remote incarnation is the route's sender (the
     * client lookup checks both), addressed to this incarnation. Only counted when refused.
     */
    private PeerClient acceptTransferAnswer(final TransferRouteDecoder route, final long peerSessionId)
    {
        final PeerClient client =
            publisher.client(peerSessionId, route.senderIncarnation().msb(), route.senderIncarnation().lsb());
        if (null == client)
        {
            counters.increment(PeerCounter.TRANSFER_REJECTED_UNKNOWN_SESSION);
            return null;
        }
        if (!isLocalDestination(route))
        {
            counters.increment(PeerCounter.TRANSFER_REJECTED_STALE_INCARNATION);
            return null;
        }
        return client;
    }
}
