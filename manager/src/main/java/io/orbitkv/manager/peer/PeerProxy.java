package io.orbitkv.manager.peer;

import io.aeron.ExclusivePublication;
import io.aeron.Publication;
import io.orbitkv.codecs.catalog.CatalogResponseEncoder;
import io.orbitkv.codecs.catalog.CatalogStatus;
import io.orbitkv.codecs.catalog.MessageHeaderEncoder;
import io.orbitkv.codecs.catalog.PeerConnectEncoder;
import io.orbitkv.codecs.catalog.RouteEncoder;
import org.agrona.BufferUtil;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Encodes the session protocol (PeerConnect, the CatalogResponse answering it) with reusable encoders into one
 * preallocated buffer, and offers every message this transport sends, whoever encoded it, with a bounded retry:
 * a back-pressured or admin-action offer is counted and retried at most {@link #MAX_OFFER_ATTEMPTS} times; a
 * publication that is not connected or closed fails at once. A failed offer is never fatal: the protocol recovers by
 * gap repair, session reconnect or the requester's query budget. With a cluster secret every message leaves with its
 * {@link FrameAuth} MAC trailer, offered as a second buffer (no copy). Single threaded (the peer agent); allocation
 * free.
 */
final class PeerProxy
{
    /**
     * Bound on offer attempts per message (design: back-pressure is counted, never waited out on the agent).
     */
    static final int MAX_OFFER_ATTEMPTS = 3;

    private long localIncarnationMsb;
    private long localIncarnationLsb;
    private long placementFingerprint;
    private final PeerCounters counters;
    private final UnsafeBuffer buffer;
    private final UnsafeBuffer empty = new UnsafeBuffer(new byte[0]);
    private long offeredMessages;
    private final FrameAuth signer;

    private final MessageHeaderEncoder headerEncoder = new MessageHeaderEncoder();
    private final PeerConnectEncoder connectEncoder = new PeerConnectEncoder();
    private final CatalogResponseEncoder responseEncoder = new CatalogResponseEncoder();

    PeerProxy(
        final long localIncarnationMsb,
        final long localIncarnationLsb,
        final long placementFingerprint,
        final PeerCounters counters,
        final int maxMessageBytes,
        final FrameAuth signer)
    {
        this.signer = signer;
        this.buffer = new UnsafeBuffer(BufferUtil.allocateDirectAligned(maxMessageBytes, 64));
        this.localIncarnationMsb = localIncarnationMsb;
        this.localIncarnationLsb = localIncarnationLsb;
        this.placementFingerprint = placementFingerprint;
        this.counters = counters;
    }

    /**
     * Speak for a new incarnation of this runtime (a re-registration): routes are judged against, and sent from,
     * the new one; the old one's are refused from now on. Owner thread only.
     *
     * @param msb most significant half of the new runtime UUID.
     * @param lsb least significant half.
     */
    void localIncarnation(final long msb, final long lsb)
    {
        localIncarnationMsb = msb;
        localIncarnationLsb = lsb;
    }

    long localIncarnationMsb()
    {
        return localIncarnationMsb;
    }

    long localIncarnationLsb()
    {
        return localIncarnationLsb;
    }

    long placementFingerprint()
    {
        return placementFingerprint;
    }

    void placementFingerprint(final long fingerprint)
    {
        placementFingerprint = fingerprint;
    }

    boolean connect(
        final ExclusivePublication publication,
        final PeerClient client,
        final int localNodeIndex,
        final int responseStreamId,
        final String responseChannel)
    {
        connectEncoder.wrapAndApplyHeader(buffer, 0, headerEncoder);
        route(connectEncoder.route(), 0, client.remoteIncarnationMsb(), client.remoteIncarnationLsb());
        connectEncoder
            .correlationId(client.connectCorrelationId())
            .requesterNodeIndex(localNodeIndex)
            .responseStreamId(responseStreamId)
            .responseChannel(responseChannel);
        return offer(publication, buffer, 0, MessageHeaderEncoder.ENCODED_LENGTH + connectEncoder.encodedLength());
    }

    boolean response(
        final ExclusivePublication publication,
        final long destinationMsb,
        final long destinationLsb,
        final int shard,
        final long sessionId,
        final long correlationId,
        final CatalogStatus code,
        final long relevantSequence)
    {
        responseEncoder.wrapAndApplyHeader(buffer, 0, headerEncoder);
        route(responseEncoder.route(), shard, destinationMsb, destinationLsb);
        responseEncoder.sessionId(sessionId).correlationId(correlationId).code(code).relevantSequence(relevantSequence);
        responseEncoder.putErrorMessage(empty, 0, 0);
        final boolean sent =
            offer(publication, buffer, 0, MessageHeaderEncoder.ENCODED_LENGTH + responseEncoder.encodedLength());
        if (sent)
        {
            counters.increment(PeerCounter.RESPONSES_SENT);
        }
        return sent;
    }

    /**
     * Offer an encoded message with the bounded retry; counts back-pressure, failures and bytes sent.
     */
    boolean offer(final Publication publication, final DirectBuffer message, final int offset, final int length)
    {
        if (null == publication)
        {
            counters.increment(PeerCounter.OFFERS_FAILED);
            return false;
        }
        // Signed once: a retry after back-pressure offers the same trailer (nothing of the first attempt was sent).
        final DirectBuffer trailer = null == signer ? null :
            signer.sign(message, offset, length, localIncarnationMsb, localIncarnationLsb);
        for (int attempt = 0; attempt < MAX_OFFER_ATTEMPTS; attempt++)
        {
            final long result = null == trailer ? publication.offer(message, offset, length) :
                publication.offer(message, offset, length, trailer, 0, FrameAuth.TRAILER_BYTES);
            if (result > 0)
            {
                offeredMessages++;
                counters.add(PeerCounter.METADATA_BYTES_SENT, null == trailer ? length : length + FrameAuth.TRAILER_BYTES);
                return true;
            }
            if (Publication.BACK_PRESSURED == result || Publication.ADMIN_ACTION == result)
            {
                counters.increment(PeerCounter.OFFERS_BACK_PRESSURED);
                continue;
            }
            break;
        }
        counters.increment(PeerCounter.OFFERS_FAILED);
        return false;
    }

    /**
     * @return messages offered so far (the agent runs the driver after handling fragments only when this moved).
     */
    long offeredMessages()
    {
        return offeredMessages;
    }

    /**
     * @return the largest message other parts may encode: the publication's limit less the MAC trailer when frames are
     * signed.
     */
    int maxMessageBytes()
    {
        return null == signer ? buffer.capacity() : buffer.capacity() - FrameAuth.TRAILER_BYTES;
    }

    void route(final RouteEncoder route, final int shard, final long destinationMsb, final long destinationLsb)
    {
        route.shard((short)shard).placementFingerprint(placementFingerprint);
        route.destinationIncarnation().msb(destinationMsb).lsb(destinationLsb);
        route.senderIncarnation().msb(localIncarnationMsb).lsb(localIncarnationLsb);
    }
}
