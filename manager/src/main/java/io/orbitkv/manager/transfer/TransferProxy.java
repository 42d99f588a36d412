package io.orbitkv.manager.transfer;

import java.nio.ByteBuffer;

import io.orbitkv.codecs.transfer.MessageHeaderEncoder;
import io.orbitkv.codecs.transfer.ReleaseReason;
import io.orbitkv.codecs.transfer.TransferAuthorizeEncoder;
import io.orbitkv.codecs.transfer.TransferReleaseEncoder;
import io.orbitkv.codecs.transfer.TransferTier;
import io.orbitkv.manager.peer.PeerClient;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The requester's encoder of transfer messages: owns the reusable encoders and one frame, encodes a span's
 * TransferAuthorize or a TransferRelease and offers it through the {@link RequestChannel}. Single threaded (the agent
 * that owns the fetches); allocation free after construction.
 */
final class TransferProxy
{
    private static final int MAX_FRAME_BYTES = 64 * 1024;

    private final RequestChannel channel;
    private final UnsafeBuffer frame = new UnsafeBuffer(ByteBuffer.allocateDirect(MAX_FRAME_BYTES));
    private final MessageHeaderEncoder headerEncoder = new MessageHeaderEncoder();
    private final TransferAuthorizeEncoder authorizeEncoder = new TransferAuthorizeEncoder();
    private final TransferReleaseEncoder releaseEncoder = new TransferReleaseEncoder();

    TransferProxy(final RequestChannel channel)
    {
        this.channel = channel;
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
        final PeerFetch.SourceAttempt attempt)
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
}
