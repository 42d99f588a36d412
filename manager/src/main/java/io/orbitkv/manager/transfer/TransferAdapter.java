package io.orbitkv.manager.transfer;

import io.orbitkv.codecs.transfer.MessageHeaderDecoder;
import io.orbitkv.codecs.transfer.TransferAuthorizeDecoder;
import io.orbitkv.codecs.transfer.TransferGrantDecoder;
import io.orbitkv.codecs.transfer.TransferReleaseAckDecoder;
import io.orbitkv.codecs.transfer.TransferReleaseDecoder;
import io.orbitkv.codecs.transfer.TransferRouteDecoder;
import io.orbitkv.codecs.transfer.TransferStatus;
import io.orbitkv.manager.peer.PeerClient;
import io.orbitkv.manager.peer.PeerCounter;
import io.orbitkv.manager.peer.PeerCounters;
import io.orbitkv.manager.peer.PeerFrameException;
import io.orbitkv.manager.peer.PeerFrameHandler;
import io.orbitkv.manager.peer.PeerPublisher;
import io.orbitkv.manager.peer.PeerSession;
import io.orbitkv.manager.peer.PeerSessions;
import org.agrona.DirectBuffer;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Decodes the transfer control frames (schema {@code io.orbitkv.codecs.transfer}) the peer transport hands over: each
 * is checked for its version and block length, its peer session (a request) or client (an answer), its destination
 * incarnation and its sender, then handed to the {@link TransferHandler} with its decoder wrapped at the message.
 * Refusals have counters of their own in the transport's set and are never answered with a CatalogResponse; a request
 * naming another incarnation of this peer is answered STALE_INCARNATION through the {@link TransferProxy} (not counted
 * as a transfer message sent). Bad bytes never throw out of here: an overrun, in here or in the handler reading the
 * body, is counted as malformed. Single threaded (the peer agent's).
 */
public final class TransferAdapter implements PeerFrameHandler
{
    static final int MIN_SCHEMA_VERSION = 1;

    private static final PeerFrameException MALFORMED_TRANSFER_FRAME =
        new PeerFrameException("malformed peer transfer frame");
    private static final PeerFrameException UNKNOWN_TRANSFER_TEMPLATE_FRAME =
        new PeerFrameException("peer transfer frame with an unknown template");
    private static final int TRANSFER_HEADER_LENGTH = MessageHeaderDecoder.ENCODED_LENGTH;

    private final PeerSessions sessions;
    private final TransferProxy proxy;
    private final PeerCounters counters;
    private final ErrorHandler errorHandler;
    private final TransferHandler transferHandler;
    private final UnsafeBuffer frame = new UnsafeBuffer(0, 0);
    private final MessageHeaderDecoder headerDecoder = new MessageHeaderDecoder();
    private final TransferAuthorizeDecoder authorizeDecoder = new TransferAuthorizeDecoder();
    private final TransferGrantDecoder grantDecoder = new TransferGrantDecoder();
    private final TransferReleaseDecoder releaseDecoder = new TransferReleaseDecoder();
    private final TransferReleaseAckDecoder releaseAckDecoder = new TransferReleaseAckDecoder();
    private PeerSession staleSession;

    /**
     * @param publisher       the transport's publisher: where senders are found, refusals leave and malformed
     *                        frames are logged.
     * @param transferHandler where checked frames go, or null to count and drop every one.
     */
    public TransferAdapter(final PeerPublisher publisher, final TransferHandler transferHandler)
    {
        this(publisher, PublisherChannel.refusals(publisher), publisher.counters(), publisher.errorHandler(),
            transferHandler);
    }

    TransferAdapter(
        final PeerSessions sessions,
        final AnswerChannel refusals,
        final PeerCounters counters,
        final ErrorHandler errorHandler,
        final TransferHandler transferHandler)
    {
        this.sessions = sessions;
        this.proxy = new TransferProxy(refusals);
        this.counters = counters;
        this.errorHandler = errorHandler;
        this.transferHandler = transferHandler;
    }

    public int schemaId()
    {
        return MessageHeaderDecoder.SCHEMA_ID;
    }

    /**
     * One frame of the transfer schema (the transport checked it holds a header).
     */
    public void onFrame(final DirectBuffer buffer, final int offset, final int length, final long nowNs)
    {
        if (null == transferHandler)
        {
            counters.increment(PeerCounter.TRANSFER_REJECTED_NO_HANDLER);
            return;
        }
        try
        {
            frame.wrap(buffer, offset, length);
            headerDecoder.wrap(frame, 0);
            final int blockLength = headerDecoder.blockLength();
            final int version = headerDecoder.version();
            final int templateId = headerDecoder.templateId();
            if (length < TRANSFER_HEADER_LENGTH || version < MIN_SCHEMA_VERSION)
            {
                rejectTransferFrame();
                return;
            }
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
            // A group or var-data length past the frame, read here or by the handler through the bounded view.
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
        final PeerSession session = sessions.session(peerSessionId);
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
        return route.destinationIncarnation().msb() == sessions.localIncarnationMsb() &&
            route.destinationIncarnation().lsb() == sessions.localIncarnationLsb();
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
            proxy.refuse(staleSession, authorizeDecoder.correlationId(), authorizeDecoder.requesterSessionId(),
                TransferStatus.STALE_INCARNATION, 0);
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
            proxy.releaseAck(staleSession, releaseDecoder.correlationId(), releaseDecoder.transferSessionId(),
                TransferStatus.STALE_INCARNATION);
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
            sessions.client(peerSessionId, route.senderIncarnation().msb(), route.senderIncarnation().lsb());
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
