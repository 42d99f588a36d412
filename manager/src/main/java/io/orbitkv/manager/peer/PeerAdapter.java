package io.orbitkv.manager.peer;

import java.util.Arrays;

import io.aeron.logbuffer.FragmentHandler;
import io.aeron.logbuffer.Header;
import io.orbitkv.codecs.catalog.CatalogResponseDecoder;
import io.orbitkv.codecs.catalog.CatalogStatus;
import io.orbitkv.codecs.catalog.MessageHeaderDecoder;
import io.orbitkv.codecs.catalog.PeerConnectDecoder;
import io.orbitkv.codecs.catalog.RouteDecoder;
import org.agrona.DirectBuffer;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The transport's side of every frame arriving on the peer endpoint: counts its bytes, checks that it holds a message
 * header, and by the header's schema id either handles the session protocol itself (a PeerConnect opening a session,
 * the CatalogResponse answering one this peer opened) or hands the raw frame to the {@link PeerFrameHandler} of that
 * schema (the catalog's messages, the transfer control messages). Nothing here reads a message body other than the
 * session protocol's. When the cluster has a secret, a {@link FrameAuth} verifies each frame's MAC trailer and replay
 * window before the header is read; a frame it drops reaches nothing here.
 * <p>
 * Bad bytes never throw out of here: the frame is read through a view bounded to its length, so any overrun is an
 * {@link IndexOutOfBoundsException} turned into a counted MALFORMED rejection with an entry in the error log. A frame
 * of a schema nobody handles is counted as a schema mismatch. Single threaded (the peer agent).
 */
final class PeerAdapter implements FragmentHandler
{
    static final int MIN_SCHEMA_VERSION = 1;

    private static final PeerFrameException MALFORMED_FRAME = new PeerFrameException("malformed peer frame");
    private static final PeerFrameException WRONG_SCHEMA_FRAME = new PeerFrameException("peer frame of another schema");

    private final PeerAgent agent;
    private final PeerPublisher publisher;
    private final RouteValidator routes;
    private final PeerCounters counters;
    private final ErrorHandler errorHandler;
    private final int streamId;
    private final PeerFrameHandler catalogFrames;
    private final PeerFrameHandler[] otherFrames;
    private final FrameAuth verifier;

    private final UnsafeBuffer frame = new UnsafeBuffer(0, 0);
    private final MessageHeaderDecoder headerDecoder = new MessageHeaderDecoder();
    private final PeerConnectDecoder connectDecoder = new PeerConnectDecoder();
    private final CatalogResponseDecoder responseDecoder = new CatalogResponseDecoder();

    private long nowNs;

    /**
     * @param verifier      checks each frame's MAC trailer first and strips it; null when the channel is not
     *                      authenticated.
     * @param frameHandlers one per schema id; the catalog schema's is required (its messages other than the session
     *                      protocol go there).
     */
    PeerAdapter(
        final PeerAgent agent,
        final PeerPublisher publisher,
        final RouteValidator routes,
        final PeerCounters counters,
        final ErrorHandler errorHandler,
        final int streamId,
        final FrameAuth verifier,
        final PeerFrameHandler... frameHandlers)
    {
        this.verifier = verifier;
        this.agent = agent;
        this.publisher = publisher;
        this.routes = routes;
        this.counters = counters;
        this.errorHandler = errorHandler;
        this.streamId = streamId;
        PeerFrameHandler catalog = null;
        final PeerFrameHandler[] others = new PeerFrameHandler[frameHandlers.length];
        int otherCount = 0;
        for (final PeerFrameHandler handler : frameHandlers)
        {
            if (null == handler)
            {
                continue;
            }
            if (null != catalog && catalog.schemaId() == handler.schemaId())
            {
                throw new IllegalArgumentException("two frame handlers for schema " + handler.schemaId());
            }
            for (int i = 0; i < otherCount; i++)
            {
                if (others[i].schemaId() == handler.schemaId())
                {
                    throw new IllegalArgumentException("two frame handlers for schema " + handler.schemaId());
                }
            }
            if (MessageHeaderDecoder.SCHEMA_ID == handler.schemaId())
            {
                catalog = handler;
            }
            else
            {
                others[otherCount++] = handler;
            }
        }
        if (null == catalog)
        {
            throw new IllegalArgumentException("no frame handler for the catalog schema");
        }
        this.catalogFrames = catalog;
        this.otherFrames = Arrays.copyOf(others, otherCount);
    }

    void nowNs(final long nowNs)
    {
        this.nowNs = nowNs;
    }

    public void onFragment(final DirectBuffer buffer, final int offset, final int frameLength, final Header header)
    {
        counters.add(PeerCounter.METADATA_BYTES_RECEIVED, frameLength);
        // Authenticated first: a frame that fails is counted by the verifier and seen by nothing else.
        final int length = null == verifier ? frameLength : verifier.verify(buffer, offset, frameLength, nowNs);
        if (length < 0)
        {
            return;
        }
        try
        {
            frame.wrap(buffer, offset, length);
            if (length < MessageHeaderDecoder.ENCODED_LENGTH)
            {
                rejectFrame(CatalogStatus.MALFORMED);
                return;
            }
            // Every schema on this endpoint has the standard header layout: its schema id is read the same way.
            headerDecoder.wrap(frame, 0);
            final int schemaId = headerDecoder.schemaId();
            if (MessageHeaderDecoder.SCHEMA_ID != schemaId)
            {
                final PeerFrameHandler handler = handlerOf(schemaId);
                if (null == handler)
                {
                    rejectFrame(CatalogStatus.SCHEMA_MISMATCH);
                }
                else
                {
                    handler.onFrame(frame, 0, length, nowNs);
                }
                return;
            }
            final int blockLength = headerDecoder.blockLength();
            final int version = headerDecoder.version();
            if (version < MIN_SCHEMA_VERSION)
            {
                // Newer versions are read through their block length (appended fields skipped); older never existed.
                rejectFrame(CatalogStatus.SCHEMA_MISMATCH);
                return;
            }
            switch (headerDecoder.templateId())
            {
                case PeerConnectDecoder.TEMPLATE_ID ->
                {
                    counters.increment(PeerCounter.FRAMES_CONNECT);
                    if (blockOk(blockLength, PeerConnectDecoder.BLOCK_LENGTH, length))
                    {
                        connectDecoder.wrap(frame, MessageHeaderDecoder.ENCODED_LENGTH, blockLength, version);
                        onConnect();
                    }
                }
                case CatalogResponseDecoder.TEMPLATE_ID ->
                {
                    // Counted here for every response: one answering a connect is the session protocol's, any other
                    // goes on to the catalog's handler.
                    counters.increment(PeerCounter.FRAMES_RESPONSE);
                    if (blockOk(blockLength, CatalogResponseDecoder.BLOCK_LENGTH, length))
                    {
                        responseDecoder.wrap(frame, MessageHeaderDecoder.ENCODED_LENGTH, blockLength, version);
                        if (!onConnectResponse())
                        {
                            catalogFrames.onFrame(frame, 0, length, nowNs);
                        }
                    }
                }
                default -> catalogFrames.onFrame(frame, 0, length, nowNs);
            }
        }
        catch (final IndexOutOfBoundsException | IllegalArgumentException | IllegalStateException ex)
        {
            rejectFrame(CatalogStatus.MALFORMED);
        }
    }

    private PeerFrameHandler handlerOf(final int schemaId)
    {
        for (final PeerFrameHandler handler : otherFrames)
        {
            if (handler.schemaId() == schemaId)
            {
                return handler;
            }
        }
        return null;
    }

    private boolean blockOk(final int blockLength, final int minimumBlockLength, final int length)
    {
        if (blockLength < minimumBlockLength || MessageHeaderDecoder.ENCODED_LENGTH + blockLength > length)
        {
            rejectFrame(CatalogStatus.MALFORMED);
            return false;
        }
        return true;
    }

    private void onConnect()
    {
        final RouteDecoder route = connectDecoder.route();
        final long correlationId = connectDecoder.correlationId();
        final int nodeIndex = connectDecoder.requesterNodeIndex();
        final int responseStreamId = connectDecoder.responseStreamId();
        final long senderMsb = route.senderIncarnation().msb();
        final long senderLsb = route.senderIncarnation().lsb();
        final CatalogStatus status = routes.checkRoute(route.shard(), route.placementFingerprint(),
            route.destinationIncarnation().msb(), route.destinationIncarnation().lsb(), false);
        final String responseChannel = connectDecoder.responseChannel();
        if (responseStreamId != streamId || !PeerTransport.isPeerChannel(responseChannel))
        {
            rejectFrame(CatalogStatus.MALFORMED);
            return;
        }
        if (CatalogStatus.OK != status)
        {
            // Counted here; the refusal is answered on the named response channel once it connects.
            counters.countRejection(status);
        }
        agent.openSession(correlationId, nodeIndex, senderMsb, senderLsb, responseChannel, status);
    }

    /**
     * The answer to a PeerConnect of one of this peer's clients.
     *
     * @return false when the response answers no connect (it is the catalog's).
     */
    private boolean onConnectResponse()
    {
        final RouteDecoder route = responseDecoder.route();
        final long sessionId = responseDecoder.sessionId();
        final long correlationId = responseDecoder.correlationId();
        final CatalogStatus code = responseDecoder.code();
        final PeerClient connecting =
            publisher.connectingClient(correlationId, route.senderIncarnation().msb(), route.senderIncarnation().lsb());
        if (null == connecting)
        {
            return false;
        }
        if (CatalogStatus.OK != code)
        {
            // A refusal can only stop this client, so it is taken even when this peer's placement differs.
            publisher.onConnectResponse(connecting, sessionId, code);
            return true;
        }
        final CatalogStatus status = routes.checkRoute(route.shard(), route.placementFingerprint(),
            route.destinationIncarnation().msb(), route.destinationIncarnation().lsb(), false);
        if (CatalogStatus.OK != status)
        {
            // No session of this peer's is behind a connect answer: the refusal is only counted.
            counters.countRejection(status);
            return true;
        }
        publisher.onConnectResponse(connecting, sessionId, code);
        return true;
    }

    private void rejectFrame(final CatalogStatus status)
    {
        errorHandler.onError(CatalogStatus.SCHEMA_MISMATCH == status ? WRONG_SCHEMA_FRAME : MALFORMED_FRAME);
        counters.countRejection(status);
    }
}
