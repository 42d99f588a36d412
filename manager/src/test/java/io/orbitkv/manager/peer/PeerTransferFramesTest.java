package io.orbitkv.manager.peer;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import io.orbitkv.codecs.transfer.MessageHeaderEncoder;
import io.orbitkv.codecs.transfer.ReleaseReason;
import io.orbitkv.codecs.transfer.TransferAuthorizeDecoder;
import io.orbitkv.codecs.transfer.TransferAuthorizeEncoder;
import io.orbitkv.codecs.transfer.TransferGrantDecoder;
import io.orbitkv.codecs.transfer.TransferGrantEncoder;
import io.orbitkv.codecs.transfer.TransferReleaseAckDecoder;
import io.orbitkv.codecs.transfer.TransferReleaseDecoder;
import io.orbitkv.codecs.transfer.TransferReleaseEncoder;
import io.orbitkv.codecs.transfer.TransferStatus;
import io.orbitkv.codecs.transfer.TransferTier;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import io.orbitkv.manager.transfer.TransferHandler;

/**
 * Transfer control frames over two real peer transports on loopback: the adapter hands well-formed ones from the
 * right session, sender and destination to the TransferHandler, answers a request to another incarnation with
 * STALE_INCARNATION, and counts everything else without throwing. Every wait polls with a deadline.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class PeerTransferFramesTest
{
    private static final long AWAIT_NS = TimeUnit.SECONDS.toNanos(10);
    private static final long SOURCE_MSB = 0x1111;
    private static final long SOURCE_LSB = 0x2222;
    private static final long REQUESTER_MSB = 0x3333;
    private static final long REQUESTER_LSB = 0x4444;

    @TempDir
    Path dir;

    private final Recording sourceHandler = new Recording();
    private final Recording requesterHandler = new Recording();
    private final UnsafeBuffer raw = new UnsafeBuffer(new byte[64 * 1024]);
    private final MessageHeaderEncoder headerEncoder = new MessageHeaderEncoder();
    private PeerNode source;
    private PeerNode requester;
    private PeerClient client;

    @AfterEach
    void tearDown()
    {
        try
        {
            for (final PeerNode node : new PeerNode[]{ source, requester })
            {
                if (null != node)
                {
                    for (final Throwable error : node.errors)
                    {
                        if (!(error instanceof PeerFrameException))
                        {
                            fail("unexpected error logged by node " + node.nodeIndex + ": " + error, error);
                        }
                    }
                }
            }
        }
        finally
        {
            if (null != requester)
            {
                requester.close();
            }
            if (null != source)
            {
                source.close();
            }
        }
    }

    private void start()
    {
        source = new PeerNode(dir, 1, SOURCE_MSB, SOURCE_LSB, PeerNode.FINGERPRINT, PeerTransport.AUTO_MTU, false,
            org.agrona.concurrent.SystemNanoClock.INSTANCE, sourceHandler);
        requester = new PeerNode(dir, 2, REQUESTER_MSB, REQUESTER_LSB, PeerNode.FINGERPRINT, PeerTransport.AUTO_MTU,
            false, org.agrona.concurrent.SystemNanoClock.INSTANCE, requesterHandler);
        sourceHandler.agent = source.publisher();
        client = requester.publisher().connect(source.transport.endpoint(), 1, SOURCE_MSB, SOURCE_LSB);
        await(client::isActive, "peer session");
    }

    @Test
    void shouldDeliverAuthorizeAndReleaseAndCarryTheAnswersBackOnTheSession()
    {
        start();
        send(authorize(client.sessionId(), SOURCE_MSB, SOURCE_LSB, REQUESTER_MSB, 7, 1));
        await(() -> 1 == requesterHandler.grants, "grant answered on the session");
        assertEquals(1, sourceHandler.authorizes);
        assertEquals(7, sourceHandler.lastRequesterSessionId);
        assertEquals(TransferStatus.OK, requesterHandler.lastGrantStatus);
        assertEquals(client, requesterHandler.lastClient);

        send(release(client.sessionId(), SOURCE_MSB, 99));
        await(() -> 1 == requesterHandler.acks, "release acknowledged");
        assertEquals(1, sourceHandler.releases);
        assertEquals(TransferStatus.OK, requesterHandler.lastAckStatus);
        assertEquals(1, source.counter(PeerCounter.FRAMES_TRANSFER_AUTHORIZE));
        assertEquals(1, source.counter(PeerCounter.FRAMES_TRANSFER_RELEASE));
        assertEquals(1, requester.counter(PeerCounter.FRAMES_TRANSFER_GRANT));
        assertEquals(1, requester.counter(PeerCounter.FRAMES_TRANSFER_RELEASE_ACK));
        assertTrue(source.counter(PeerCounter.TRANSFER_MESSAGES_SENT) >= 2);
        assertTrue(requester.counter(PeerCounter.TRANSFER_MESSAGES_SENT) >= 2);
    }

    @Test
    void shouldAnswerARequestToAnotherIncarnationStaleAndOnlyCountAWrongSenderOrSession()
    {
        start();
        send(authorize(client.sessionId(), SOURCE_MSB, SOURCE_LSB + 1, REQUESTER_MSB, 8, 1));
        await(() -> 1 == requesterHandler.grants, "stale answer");
        assertEquals(TransferStatus.STALE_INCARNATION, requesterHandler.lastGrantStatus);
        send(release(client.sessionId(), SOURCE_MSB + 1, 5));
        await(() -> 1 == requesterHandler.acks, "stale release answer");
        assertEquals(TransferStatus.STALE_INCARNATION, requesterHandler.lastAckStatus);
        assertEquals(2, source.counter(PeerCounter.TRANSFER_REJECTED_STALE_INCARNATION));

        send(authorize(client.sessionId(), SOURCE_MSB, SOURCE_LSB, REQUESTER_MSB + 1, 9, 1));
        await(() -> 1 == source.counter(PeerCounter.TRANSFER_REJECTED_WRONG_SENDER), "wrong sender counted");
        send(authorize(client.sessionId() + 1000, SOURCE_MSB, SOURCE_LSB, REQUESTER_MSB, 10, 1));
        await(() -> 1 == source.counter(PeerCounter.TRANSFER_REJECTED_UNKNOWN_SESSION), "unknown session counted");
        assertEquals(0, sourceHandler.authorizes, "nothing refused reaches the handler");
        assertEquals(0, sourceHandler.releases);

        // A well-formed request after the refusals is served, and the wrong sender got no answer.
        send(authorize(client.sessionId(), SOURCE_MSB, SOURCE_LSB, REQUESTER_MSB, 11, 1));
        await(() -> 2 == requesterHandler.grants, "served after refusals");
        assertEquals(TransferStatus.OK, requesterHandler.lastGrantStatus);
    }

    @Test
    void shouldCountMalformedTransferFramesWithoutThrowingAndServeTheNextOne()
    {
        start();
        final int length = authorize(client.sessionId(), SOURCE_MSB, SOURCE_LSB, REQUESTER_MSB, 12, 2);
        send(MessageHeaderEncoder.ENCODED_LENGTH + 4);

        authorize(client.sessionId(), SOURCE_MSB, SOURCE_LSB, REQUESTER_MSB, 13, 2);
        raw.putShort(0, (short)8, java.nio.ByteOrder.LITTLE_ENDIAN);
        send(length);

        authorize(client.sessionId(), SOURCE_MSB, SOURCE_LSB, REQUESTER_MSB, 14, 2);
        raw.putShort(6, (short)0, java.nio.ByteOrder.LITTLE_ENDIAN);
        send(length);

        authorize(client.sessionId(), SOURCE_MSB, SOURCE_LSB, REQUESTER_MSB, 15, 2);
        raw.putShort(MessageHeaderEncoder.ENCODED_LENGTH + TransferAuthorizeEncoder.BLOCK_LENGTH + 2, (short)0x7FFF,
            java.nio.ByteOrder.LITTLE_ENDIAN);
        send(length);

        authorize(client.sessionId(), SOURCE_MSB, SOURCE_LSB, REQUESTER_MSB, 16, 2);
        raw.putShort(2, (short)99, java.nio.ByteOrder.LITTLE_ENDIAN);
        send(length);

        await(() -> 4 == source.counter(PeerCounter.TRANSFER_REJECTED_MALFORMED), "four malformed frames counted");
        await(() -> 1 == source.counter(PeerCounter.TRANSFER_REJECTED_UNKNOWN_TEMPLATE), "unknown template counted");
        assertEquals(0, source.counter(PeerCounter.REJECTED_MALFORMED), "not counted as catalog frames");
        assertEquals(0, requesterHandler.grants, "malformed frames are not answered by the adapter");

        send(authorize(client.sessionId(), SOURCE_MSB, SOURCE_LSB, REQUESTER_MSB, 17, 2));
        await(() -> 1 == requesterHandler.grants, "served after the malformed frames");
        assertEquals(17, sourceHandler.lastRequesterSessionId);
        assertEquals(1, source.agent().sessionCount());
    }

    @Test
    void shouldCountTransferAnswersForAnotherIncarnationOrFromAStranger()
    {
        start();
        // A grant to the requester naming another incarnation of it, then one from an incarnation it has no client of.
        grantTo(REQUESTER_MSB + 1, SOURCE_MSB);
        await(() -> 1 == requester.counter(PeerCounter.TRANSFER_REJECTED_STALE_INCARNATION), "stale grant counted");
        grantTo(REQUESTER_MSB, SOURCE_MSB + 5);
        await(() -> 1 == requester.counter(PeerCounter.TRANSFER_REJECTED_UNKNOWN_SESSION), "stranger counted");
        assertEquals(0, requesterHandler.grants);
    }

    // ---------------------------------------------------------------------------------------------------------------

    private int authorize(
        final long peerSessionId,
        final long destinationMsb,
        final long destinationLsb,
        final long senderMsb,
        final long requesterSessionId,
        final int keys)
    {
        final TransferAuthorizeEncoder encoder = new TransferAuthorizeEncoder().wrapAndApplyHeader(raw, 0, headerEncoder);
        encoder.route().destinationIncarnation().msb(destinationMsb).lsb(destinationLsb);
        encoder.route().senderIncarnation().msb(senderMsb).lsb(REQUESTER_LSB);
        encoder.peerSessionId(peerSessionId).correlationId(requesterSessionId).requesterSessionId(requesterSessionId)
            .operationId(1).maxBytes(4096L * keys).requesterNodeIndex(2);
        final TransferAuthorizeEncoder.KeysEncoder group = encoder.keysCount(keys);
        for (int i = 0; i < keys; i++)
        {
            group.next().tier(TransferTier.DRAM).insertionSequence(i + 1).expectedBytes(4096)
                .putKeyHash(new UnsafeBuffer(new byte[]{ 1, 2, 3, (byte)i }), 0, 4);
        }
        encoder.putKeyNamespace(new UnsafeBuffer(new byte[]{ 'n', 's' }), 0, 2);
        return MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength();
    }

    private int release(final long peerSessionId, final long destinationMsb, final long transferSessionId)
    {
        final TransferReleaseEncoder encoder = new TransferReleaseEncoder().wrapAndApplyHeader(raw, 0, headerEncoder);
        encoder.route().destinationIncarnation().msb(destinationMsb).lsb(SOURCE_LSB);
        encoder.route().senderIncarnation().msb(REQUESTER_MSB).lsb(REQUESTER_LSB);
        encoder.peerSessionId(peerSessionId).correlationId(3).transferSessionId(transferSessionId)
            .requesterSessionId(7).reason(ReleaseReason.COMPLETED);
        return MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength();
    }

    private void grantTo(final long destinationMsb, final long senderMsb)
    {
        final UnsafeBuffer out = new UnsafeBuffer(new byte[1024]);
        final TransferGrantEncoder encoder = new TransferGrantEncoder().wrapAndApplyHeader(out, 0, headerEncoder);
        encoder.route().destinationIncarnation().msb(destinationMsb).lsb(REQUESTER_LSB);
        encoder.route().senderIncarnation().msb(senderMsb).lsb(SOURCE_LSB);
        encoder.peerSessionId(client.sessionId()).correlationId(1).requesterSessionId(1).status(TransferStatus.OK)
            .transferSessionId(5).token(6).ttlMs(1000).grantedKeys(0);
        encoder.keysCount(0);
        encoder.putTransportEndpoint(new UnsafeBuffer(new byte[0]), 0, 0);
        encoder.putMessage(new UnsafeBuffer(new byte[0]), 0, 0);
        final int length = MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength();
        final PeerSession session = source.agent().session(client.sessionId());
        final long deadlineNs = System.nanoTime() + AWAIT_NS;
        while (!source.publisher().offer(session, out, 0, length))
        {
            duty();
            if (System.nanoTime() - deadlineNs > 0)
            {
                fail("offer timed out");
            }
        }
    }

    private void send(final int length)
    {
        final long deadlineNs = System.nanoTime() + AWAIT_NS;
        while (!requester.publisher().offer(client, raw, 0, length))
        {
            duty();
            if (System.nanoTime() - deadlineNs > 0)
            {
                fail("offer timed out");
            }
        }
    }

    private void await(final BooleanSupplier condition, final String what)
    {
        final long deadlineNs = System.nanoTime() + AWAIT_NS;
        while (!condition.getAsBoolean())
        {
            duty();
            if (System.nanoTime() - deadlineNs > 0)
            {
                fail("timed out awaiting " + what);
            }
        }
    }

    private void duty()
    {
        final int work = source.transport.doWork() + requester.transport.doWork();
        if (0 == work)
        {
            Thread.yield();
        }
    }

    /**
     * Records deliveries; as source it reads every key (so an overrun group is found) and answers through the
     * agent's raw offers, as the transfer source does.
     */
    private static final class Recording implements TransferHandler
    {
        private final UnsafeBuffer out = new UnsafeBuffer(new byte[1024]);
        private final MessageHeaderEncoder header = new MessageHeaderEncoder();
        PeerPublisher agent;
        int authorizes;
        int releases;
        int grants;
        int acks;
        long lastRequesterSessionId;
        TransferStatus lastGrantStatus;
        TransferStatus lastAckStatus;
        PeerClient lastClient;

        public void onAuthorize(final PeerSession session, final TransferAuthorizeDecoder request)
        {
            final TransferAuthorizeDecoder.KeysDecoder keys = request.keys();
            while (keys.hasNext())
            {
                keys.next().skipKeyHash();
            }
            request.skipKeyNamespace();
            authorizes++;
            lastRequesterSessionId = request.requesterSessionId();
            final TransferGrantEncoder encoder = new TransferGrantEncoder().wrapAndApplyHeader(out, 0, header);
            encoder.route().destinationIncarnation()
                .msb(session.requesterIncarnationMsb()).lsb(session.requesterIncarnationLsb());
            encoder.route().senderIncarnation().msb(agent.localIncarnationMsb()).lsb(agent.localIncarnationLsb());
            encoder.peerSessionId(session.sessionId()).correlationId(request.correlationId())
                .requesterSessionId(request.requesterSessionId()).status(TransferStatus.OK)
                .transferSessionId(99).token(1).ttlMs(1000).grantedKeys(0);
            encoder.keysCount(0);
            encoder.putTransportEndpoint(new UnsafeBuffer(new byte[0]), 0, 0);
            encoder.putMessage(new UnsafeBuffer(new byte[0]), 0, 0);
            agent.offer(session, out, 0, MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength());
        }

        public void onRelease(final PeerSession session, final TransferReleaseDecoder request)
        {
            releases++;
            final io.orbitkv.codecs.transfer.TransferReleaseAckEncoder encoder =
                new io.orbitkv.codecs.transfer.TransferReleaseAckEncoder().wrapAndApplyHeader(out, 0, header);
            encoder.route().destinationIncarnation()
                .msb(session.requesterIncarnationMsb()).lsb(session.requesterIncarnationLsb());
            encoder.route().senderIncarnation().msb(agent.localIncarnationMsb()).lsb(agent.localIncarnationLsb());
            encoder.peerSessionId(session.sessionId()).correlationId(request.correlationId())
                .transferSessionId(request.transferSessionId()).status(TransferStatus.OK);
            agent.offer(session, out, 0, MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength());
        }

        public void onGrant(final PeerClient client, final TransferGrantDecoder grant)
        {
            grants++;
            lastGrantStatus = grant.status();
            lastClient = client;
        }

        public void onReleaseAck(final PeerClient client, final TransferReleaseAckDecoder ack)
        {
            acks++;
            lastAckStatus = ack.status();
        }
    }
}
