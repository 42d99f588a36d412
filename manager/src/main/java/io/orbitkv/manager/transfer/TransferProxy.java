package io.orbitkv.manager.transfer;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

import io.orbitkv.codecs.transfer.MessageHeaderEncoder;
import io.orbitkv.codecs.transfer.ReleaseReason;
import io.orbitkv.codecs.transfer.TransferAuthorizeEncoder;
import io.orbitkv.codecs.transfer.TransferGrantEncoder;
import io.orbitkv.codecs.transfer.TransferReleaseAckEncoder;
import io.orbitkv.codecs.transfer.TransferReleaseEncoder;
import io.orbitkv.codecs.transfer.TransferStatus;
import io.orbitkv.codecs.transfer.TransferTier;
import io.orbitkv.manager.peer.PeerClient;
import io.orbitkv.manager.peer.PeerSession;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The encoder of transfer messages: owns the reusable encoders and one frame. The requester's encodes a span's
 * TransferAuthorize or a TransferRelease and offers it through its {@link RequestChannel}; the source's encodes
 * grants, refusals and release acks and offers them through its {@link AnswerChannel} (the transfer adapter has one
 * too, for the refusals it gives before any handler saw a request). Single threaded (the agent that owns the fetches
 * or the holds); allocation free after construction.
 */
final class TransferProxy
{
    /**
     * Largest grant: header, block, every key's entry and the longest endpoint and message the schema allows.
     */
    static final int MAX_ANSWER_BYTES = 16 * 1024;

    private static final int MAX_FRAME_BYTES = 64 * 1024;
    private static final byte[] EXPORT_REFUSED = "the transport would not export the session".getBytes(
        StandardCharsets.US_ASCII);

    private final RequestChannel channel;
    private final AnswerChannel answers;
    private final UnsafeBuffer frame;
    private final UnsafeBuffer exportRefused = new UnsafeBuffer(EXPORT_REFUSED);
    private final UnsafeBuffer nothing = new UnsafeBuffer(new byte[0]);
    private final MessageHeaderEncoder headerEncoder = new MessageHeaderEncoder();
    private final TransferAuthorizeEncoder authorizeEncoder = new TransferAuthorizeEncoder();
    private final TransferReleaseEncoder releaseEncoder = new TransferReleaseEncoder();
    private final TransferGrantEncoder grantEncoder = new TransferGrantEncoder();
    private final TransferReleaseAckEncoder ackEncoder = new TransferReleaseAckEncoder();

    /**
     * The requester's: authorizations and releases.
     */
    TransferProxy(final RequestChannel channel)
    {
        this.channel = channel;
        this.answers = null;
        this.frame = new UnsafeBuffer(ByteBuffer.allocateDirect(MAX_FRAME_BYTES));
    }

    /**
     * The source's: grants, refusals and release acks.
     */
    TransferProxy(final AnswerChannel answers)
    {
        this.channel = null;
        this.answers = answers;
        this.frame = new UnsafeBuffer(ByteBuffer.allocateDirect(MAX_ANSWER_BYTES));
    }

    long nextCorrelationId()
    {
        return channel.nextCorrelationId();
    }

    /**
     * Ask a source to authorize and pin the keys of one attempt: each with the candidate version chosen for it.
     *
     * @return whether the message was sent.
     */
    boolean authorize(
        final PeerClient client,
        final long correlationId,
        final long senderMsb,
        final long senderLsb,
        final PeerFetch fetch,
        final SourceAttempt attempt)
    {
        authorizeEncoder.wrapAndApplyHeader(frame, 0, headerEncoder);
        authorizeEncoder.route().destinationIncarnation().msb(attempt.ownerMsb).lsb(attempt.ownerLsb);
        authorizeEncoder.route().senderIncarnation().msb(senderMsb).lsb(senderLsb);
        authorizeEncoder.peerSessionId(client.sessionId())
            .correlationId(correlationId)
            .requesterSessionId(attempt.requesterSessionId)
            .operationId(fetch.correlationId)
            .requesterNodeIndex(0);
        long maxBytes = 0;
        final TransferAuthorizeEncoder.KeysEncoder keys = authorizeEncoder.keysCount(attempt.keyCount);
        for (int i = attempt.firstKey; i < attempt.firstKey + attempt.keyCount; i++)
        {
            final int at = i * PeerFetch.MAX_CANDIDATES + fetch.keyCandidates[i];
            final int length = fetch.candidateLengths[at];
            maxBytes += length;
            keys.next()
                .tier(0 == fetch.candidateTiers[at] ? TransferTier.DRAM : TransferTier.SSD)
                .insertionSequence(fetch.candidateSequences[at])
                .expectedBytes(length)
                .putKeyHash(fetch.hashes, fetch.hashOffset(i), fetch.hashLengths[i]);
        }
        authorizeEncoder.putKeyNamespace(fetch.namespace, 0, fetch.namespaceLength);
        authorizeEncoder.maxBytes(maxBytes);
        return channel.offer(client, frame, 0, MessageHeaderEncoder.ENCODED_LENGTH + authorizeEncoder.encodedLength());
    }

    /**
     * Tell a source a granted session is over.
     *
     * @return whether the message was sent.
     */
    boolean release(
        final PeerClient client,
        final long correlationId,
        final long senderMsb,
        final long senderLsb,
        final long transferSessionId,
        final long requesterSessionId,
        final ReleaseReason reason)
    {
        releaseEncoder.wrapAndApplyHeader(frame, 0, headerEncoder);
        releaseEncoder.route().destinationIncarnation()
            .msb(client.remoteIncarnationMsb()).lsb(client.remoteIncarnationLsb());
        releaseEncoder.route().senderIncarnation().msb(senderMsb).lsb(senderLsb);
        releaseEncoder.peerSessionId(client.sessionId())
            .correlationId(correlationId)
            .transferSessionId(transferSessionId)
            .requesterSessionId(requesterSessionId)
            .reason(reason);
        return channel.offer(client, frame, 0, MessageHeaderEncoder.ENCODED_LENGTH + releaseEncoder.encodedLength());
    }

    /**
     * Source: grant the session {@code hold} holds, answering the authorization {@code correlationId}: the granted
     * keys with their addresses, lengths and checksums, the first refused key with its reason, the rest NOT_ATTEMPTED,
     * and the transport endpoint to read from.
     *
     * @return whether the message was sent.
     */
    boolean grant(
        final PeerSession session,
        final TransferSession hold,
        final long correlationId,
        final int ttlMs,
        final DirectBuffer endpoint)
    {
        grantEncoder.wrapAndApplyHeader(frame, 0, headerEncoder);
        route(grantEncoder, session);
        grantEncoder
            .peerSessionId(session.sessionId())
            .correlationId(correlationId)
            .requesterSessionId(hold.requesterSessionId)
            .status(TransferStatus.OK)
            .transferSessionId(hold.transferSessionId)
            .token(hold.token)
            .ttlMs(ttlMs)
            .grantedKeys(hold.grantedKeys);
        final TransferGrantEncoder.KeysEncoder keys = grantEncoder.keysCount(hold.requestedKeys);
        for (int i = 0; i < hold.requestedKeys; i++)
        {
            keys.next();
            if (i < hold.grantedKeys)
            {
                keys.status(TransferStatus.OK).address(hold.addresses[i]).length(hold.lengths[i]).crc32c(hold.crcs[i]);
            }
            else
            {
                keys.status(i == hold.grantedKeys ? hold.refusedStatus : TransferStatus.NOT_ATTEMPTED)
                    .address(0).length(0).crc32c(0);
            }
        }
        grantEncoder.putTransportEndpoint(endpoint, 0, endpoint.capacity());
        grantEncoder.putMessage(nothing, 0, 0);
        return answers.offer(session, frame, 0, MessageHeaderEncoder.ENCODED_LENGTH + grantEncoder.encodedLength());
    }

    /**
     * Source: a refusal as a TransferGrant: no session, no address, no endpoint. With {@code keyCount} keys (a
     * refusal decided on the first key) the first carries the reason and the rest NOT_ATTEMPTED; a refusal of the
     * whole frame carries none. An ERROR (the transport would not export) says so in its message.
     *
     * @return whether the message was sent.
     */
    boolean refuse(
        final PeerSession session,
        final long correlationId,
        final long requesterSessionId,
        final TransferStatus status,
        final int keyCount)
    {
        grantEncoder.wrapAndApplyHeader(frame, 0, headerEncoder);
        route(grantEncoder, session);
        grantEncoder
            .peerSessionId(session.sessionId())
            .correlationId(correlationId)
            .requesterSessionId(requesterSessionId)
            .status(status)
            .transferSessionId(0)
            .token(0)
            .ttlMs(0)
            .grantedKeys(0);
        final TransferGrantEncoder.KeysEncoder keys = grantEncoder.keysCount(keyCount);
        for (int i = 0; i < keyCount; i++)
        {
            keys.next().status(0 == i ? status : TransferStatus.NOT_ATTEMPTED).address(0).length(0).crc32c(0);
        }
        grantEncoder.putTransportEndpoint(nothing, 0, 0);
        if (TransferStatus.ERROR == status)
        {
            grantEncoder.putMessage(exportRefused, 0, exportRefused.capacity());
        }
        else
        {
            grantEncoder.putMessage(nothing, 0, 0);
        }
        return answers.offer(session, frame, 0, MessageHeaderEncoder.ENCODED_LENGTH + grantEncoder.encodedLength());
    }

    /**
     * Source: answer a release.
     *
     * @return whether the message was sent.
     */
    boolean releaseAck(
        final PeerSession session, final long correlationId, final long transferSessionId, final TransferStatus status)
    {
        ackEncoder.wrapAndApplyHeader(frame, 0, headerEncoder);
        ackEncoder.route().destinationIncarnation()
            .msb(session.requesterIncarnationMsb())
            .lsb(session.requesterIncarnationLsb());
        ackEncoder.route().senderIncarnation().msb(answers.localIncarnationMsb()).lsb(answers.localIncarnationLsb());
        ackEncoder
            .peerSessionId(session.sessionId())
            .correlationId(correlationId)
            .transferSessionId(transferSessionId)
            .status(status);
        return answers.offer(session, frame, 0, MessageHeaderEncoder.ENCODED_LENGTH + ackEncoder.encodedLength());
    }

    private void route(final TransferGrantEncoder encoder, final PeerSession session)
    {
        encoder.route().destinationIncarnation()
            .msb(session.requesterIncarnationMsb())
            .lsb(session.requesterIncarnationLsb());
        encoder.route().senderIncarnation().msb(answers.localIncarnationMsb()).lsb(answers.localIncarnationLsb());
    }
}
