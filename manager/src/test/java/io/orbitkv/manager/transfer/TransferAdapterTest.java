package io.orbitkv.manager.transfer;

import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

import io.orbitkv.codecs.transfer.MessageHeaderDecoder;
import io.orbitkv.codecs.transfer.MessageHeaderEncoder;
import io.orbitkv.codecs.transfer.ReleaseReason;
import io.orbitkv.codecs.transfer.TransferAuthorizeDecoder;
import io.orbitkv.codecs.transfer.TransferAuthorizeEncoder;
import io.orbitkv.codecs.transfer.TransferGrantDecoder;
import io.orbitkv.codecs.transfer.TransferGrantEncoder;
import io.orbitkv.codecs.transfer.TransferReleaseAckDecoder;
import io.orbitkv.codecs.transfer.TransferReleaseAckEncoder;
import io.orbitkv.codecs.transfer.TransferReleaseDecoder;
import io.orbitkv.codecs.transfer.TransferReleaseEncoder;
import io.orbitkv.codecs.transfer.TransferStatus;
import io.orbitkv.codecs.transfer.TransferTier;
import io.orbitkv.manager.peer.PeerClient;
import io.orbitkv.manager.peer.PeerCounter;
import io.orbitkv.manager.peer.PeerCounters;
import io.orbitkv.manager.peer.PeerSession;
import io.orbitkv.manager.peer.PeerSessions;
import io.orbitkv.manager.peer.TestPeerSessions;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersManager;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link TransferAdapter} fed frames directly, over fakes of the sessions it finds senders among and of the channel its
 * refusals leave through: each message reaches the {@link TransferHandler} with its session or client and its values;
 * a short, malformed or unknown frame is counted and logged and never throws; a frame from no session, from another
 * sender or to another incarnation is counted, and a request to another incarnation answered STALE_INCARNATION.
 */
class TransferAdapterTest
{
    private static final long SELF_MSB = 0x51L;
    private static final long SELF_LSB = 0x52L;
    private static final long REQUESTER_MSB = 0x61L;
    private static final long REQUESTER_LSB = 0x62L;
    private static final long SOURCE_MSB = 0x71L;
    private static final long SOURCE_LSB = 0x72L;
    private static final long HOST_SESSION_ID = 40;
    private static final long CLIENT_SESSION_ID = 80;

    private final PeerSession session = TestPeerSessions.active(HOST_SESSION_ID, 2, REQUESTER_MSB, REQUESTER_LSB);
    private final PeerClient client = TestPeerSessions.activeClient(1, CLIENT_SESSION_ID, SOURCE_MSB, SOURCE_LSB);
    private final PeerCounters counters = new PeerCounters(new CountersManager(
        new UnsafeBuffer(new byte[64 * 1024 * 4]), new UnsafeBuffer(new byte[64 * 1024])));
    private final List<Throwable> errors = new ArrayList<>();
    private final RecordingChannel refusals = new RecordingChannel();
    private final Recording handler = new Recording();
    private final UnsafeBuffer frame = new UnsafeBuffer(new byte[4096]);
    private final MessageHeaderEncoder header = new MessageHeaderEncoder();
    private final TransferAdapter adapter =
        new TransferAdapter(new FakeSessions(), refusals, counters, errors::add, handler);

    @Test
    void shouldHandEachMessageToTheHandlerWithItsSessionAndValues()
    {
        adapter.onFrame(frame, 0, authorize(HOST_SESSION_ID, SELF_MSB, REQUESTER_MSB, 21, 3), 0);
        assertSame(session, handler.lastSession);
        assertEquals(21, handler.lastRequesterSessionId);
        assertEquals(3, handler.lastKeyCount);
        assertEquals(3 * 4096L, handler.lastMaxBytes);

        adapter.onFrame(frame, 0, release(HOST_SESSION_ID, SELF_MSB, REQUESTER_MSB, 33), 0);
        assertEquals(1, handler.releases);
        assertEquals(33, handler.lastTransferSessionId);

        adapter.onFrame(frame, 0, grant(CLIENT_SESSION_ID, SELF_MSB, SOURCE_MSB, TransferStatus.PENDING), 0);
        assertSame(client, handler.lastClient);
        assertEquals(TransferStatus.PENDING, handler.lastGrantStatus);
        assertEquals(44, handler.lastGrantTransferSessionId);

        adapter.onFrame(frame, 0, releaseAck(CLIENT_SESSION_ID, SELF_MSB, SOURCE_MSB, TransferStatus.UNKNOWN_SESSION), 0);
        assertEquals(1, handler.acks);
        assertEquals(TransferStatus.UNKNOWN_SESSION, handler.lastAckStatus);

        assertEquals(1, counters.value(PeerCounter.FRAMES_TRANSFER_AUTHORIZE));
        assertEquals(1, counters.value(PeerCounter.FRAMES_TRANSFER_RELEASE));
        assertEquals(1, counters.value(PeerCounter.FRAMES_TRANSFER_GRANT));
        assertEquals(1, counters.value(PeerCounter.FRAMES_TRANSFER_RELEASE_ACK));
        assertEquals(0, refusals.sent.size(), "nothing answered by the adapter");
        assertTrue(errors.isEmpty(), () -> "errors: " + errors);
    }

    @Test
    void shouldCountShortAndMalformedFramesWithoutThrowingAndServeTheNextOne()
    {
        final int length = authorize(HOST_SESSION_ID, SELF_MSB, REQUESTER_MSB, 1, 2);
        // Shorter than a header, then a body cut short.
        adapter.onFrame(frame, 0, 4, 0);
        adapter.onFrame(frame, 0, MessageHeaderEncoder.ENCODED_LENGTH + 4, 0);
        // A block length below the message's.
        frame.putShort(0, (short)8, ByteOrder.LITTLE_ENDIAN);
        adapter.onFrame(frame, 0, length, 0);
        // A version that never existed.
        authorize(HOST_SESSION_ID, SELF_MSB, REQUESTER_MSB, 1, 2);
        frame.putShort(6, (short)0, ByteOrder.LITTLE_ENDIAN);
        adapter.onFrame(frame, 0, length, 0);
        // A key group whose count runs past the frame: found while the handler reads the keys.
        authorize(HOST_SESSION_ID, SELF_MSB, REQUESTER_MSB, 1, 2);
        frame.putShort(MessageHeaderEncoder.ENCODED_LENGTH + TransferAuthorizeEncoder.BLOCK_LENGTH + 2, (short)0x7FFF,
            ByteOrder.LITTLE_ENDIAN);
        adapter.onFrame(frame, 0, length, 0);
        // A template of no transfer message.
        authorize(HOST_SESSION_ID, SELF_MSB, REQUESTER_MSB, 1, 2);
        frame.putShort(2, (short)99, ByteOrder.LITTLE_ENDIAN);
        adapter.onFrame(frame, 0, length, 0);

        assertEquals(5, counters.value(PeerCounter.TRANSFER_REJECTED_MALFORMED));
        assertEquals(1, counters.value(PeerCounter.TRANSFER_REJECTED_UNKNOWN_TEMPLATE));
        assertEquals(6, errors.size(), () -> "errors: " + errors);
        assertEquals(0, counters.value(PeerCounter.REJECTED_MALFORMED), "not counted as catalog frames");
        assertEquals(0, refusals.sent.size(), "malformed frames are not answered");

        adapter.onFrame(frame, 0, authorize(HOST_SESSION_ID, SELF_MSB, REQUESTER_MSB, 9, 2), 0);
        assertEquals(9, handler.lastRequesterSessionId);
        assertEquals(2, handler.lastKeyCount);
    }

    @Test
    void shouldCountRequestsOfNoSessionOrAnotherSenderAndAnswerThoseToAnotherIncarnation()
    {
        adapter.onFrame(frame, 0, authorize(HOST_SESSION_ID + 1, SELF_MSB, REQUESTER_MSB, 1, 1), 0);
        assertEquals(1, counters.value(PeerCounter.TRANSFER_REJECTED_UNKNOWN_SESSION));

        adapter.onFrame(frame, 0, authorize(HOST_SESSION_ID, SELF_MSB, REQUESTER_MSB + 1, 1, 1), 0);
        assertEquals(1, counters.value(PeerCounter.TRANSFER_REJECTED_WRONG_SENDER));
        assertEquals(0, refusals.sent.size(), "a stranger is not answered on the session's channel");

        adapter.onFrame(frame, 0, authorize(HOST_SESSION_ID, SELF_MSB + 1, REQUESTER_MSB, 17, 1), 0);
        assertEquals(1, counters.value(PeerCounter.TRANSFER_REJECTED_STALE_INCARNATION));
        assertEquals(1, refusals.sent.size());
        final TransferGrantDecoder refusal = refusals.grant(0);
        assertEquals(TransferStatus.STALE_INCARNATION, refusal.status());
        assertEquals(17, refusal.requesterSessionId());
        assertEquals(HOST_SESSION_ID, refusal.peerSessionId());
        assertEquals(REQUESTER_MSB, refusal.route().destinationIncarnation().msb());
        assertEquals(SELF_MSB, refusal.route().senderIncarnation().msb());

        adapter.onFrame(frame, 0, release(HOST_SESSION_ID, SELF_MSB + 1, REQUESTER_MSB, 55), 0);
        assertEquals(2, counters.value(PeerCounter.TRANSFER_REJECTED_STALE_INCARNATION));
        final TransferReleaseAckDecoder ack = refusals.releaseAck(1);
        assertEquals(TransferStatus.STALE_INCARNATION, ack.status());
        assertEquals(55, ack.transferSessionId());

        assertEquals(0, handler.authorizes + handler.releases, "no refused request reached the handler");
    }

    @Test
    void shouldCountAnswersForAnotherIncarnationOrFromAStranger()
    {
        adapter.onFrame(frame, 0, grant(CLIENT_SESSION_ID, SELF_MSB + 1, SOURCE_MSB, TransferStatus.OK), 0);
        assertEquals(1, counters.value(PeerCounter.TRANSFER_REJECTED_STALE_INCARNATION));
        adapter.onFrame(frame, 0, grant(CLIENT_SESSION_ID, SELF_MSB, SOURCE_MSB + 1, TransferStatus.OK), 0);
        assertEquals(1, counters.value(PeerCounter.TRANSFER_REJECTED_UNKNOWN_SESSION));
        assertEquals(0, handler.grants);
        assertEquals(0, refusals.sent.size(), "answers are never answered");
    }

    @Test
    void shouldCountAndDropEveryFrameWithoutAHandler()
    {
        final TransferAdapter withoutHandler =
            new TransferAdapter(new FakeSessions(), refusals, counters, errors::add, null);
        withoutHandler.onFrame(frame, 0, authorize(HOST_SESSION_ID, SELF_MSB, REQUESTER_MSB, 1, 1), 0);
        withoutHandler.onFrame(frame, 0, 4, 0);
        assertEquals(2, counters.value(PeerCounter.TRANSFER_REJECTED_NO_HANDLER));
        assertEquals(0, counters.value(PeerCounter.FRAMES_TRANSFER_AUTHORIZE));
    }

    // ---------------------------------------------------------------------------------------------------------------

    private int authorize(
        final long peerSessionId,
        final long destinationMsb,
        final long senderMsb,
        final long requesterSessionId,
        final int keys)
    {
        final TransferAuthorizeEncoder encoder = new TransferAuthorizeEncoder().wrapAndApplyHeader(frame, 0, header);
        encoder.route().destinationIncarnation().msb(destinationMsb).lsb(SELF_LSB);
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

    private int release(
        final long peerSessionId, final long destinationMsb, final long senderMsb, final long transferSessionId)
    {
        final TransferReleaseEncoder encoder = new TransferReleaseEncoder().wrapAndApplyHeader(frame, 0, header);
        encoder.route().destinationIncarnation().msb(destinationMsb).lsb(SELF_LSB);
        encoder.route().senderIncarnation().msb(senderMsb).lsb(REQUESTER_LSB);
        encoder.peerSessionId(peerSessionId).correlationId(3).transferSessionId(transferSessionId)
            .requesterSessionId(7).reason(ReleaseReason.COMPLETED);
        return MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength();
    }

    private int grant(
        final long peerSessionId, final long destinationMsb, final long senderMsb, final TransferStatus status)
    {
        final TransferGrantEncoder encoder = new TransferGrantEncoder().wrapAndApplyHeader(frame, 0, header);
        encoder.route().destinationIncarnation().msb(destinationMsb).lsb(SELF_LSB);
        encoder.route().senderIncarnation().msb(senderMsb).lsb(SOURCE_LSB);
        encoder.peerSessionId(peerSessionId).correlationId(1).requesterSessionId(1).status(status)
            .transferSessionId(44).token(6).ttlMs(1000).grantedKeys(0);
        encoder.keysCount(0);
        encoder.putTransportEndpoint(new UnsafeBuffer(new byte[0]), 0, 0);
        encoder.putMessage(new UnsafeBuffer(new byte[0]), 0, 0);
        return MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength();
    }

    private int releaseAck(
        final long peerSessionId, final long destinationMsb, final long senderMsb, final TransferStatus status)
    {
        final TransferReleaseAckEncoder encoder = new TransferReleaseAckEncoder().wrapAndApplyHeader(frame, 0, header);
        encoder.route().destinationIncarnation().msb(destinationMsb).lsb(SELF_LSB);
        encoder.route().senderIncarnation().msb(senderMsb).lsb(SOURCE_LSB);
        encoder.peerSessionId(peerSessionId).correlationId(2).transferSessionId(45).status(status);
        return MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength();
    }

    /**
     * One session a requester opened here and one client this peer opened on a source.
     */
    private final class FakeSessions implements PeerSessions
    {
        public PeerSession session(final long sessionId)
        {
            return HOST_SESSION_ID == sessionId ? session : null;
        }

        public PeerClient client(final long sessionId, final long remoteMsb, final long remoteLsb)
        {
            return CLIENT_SESSION_ID == sessionId && SOURCE_MSB == remoteMsb && SOURCE_LSB == remoteLsb ? client : null;
        }

        public long localIncarnationMsb()
        {
            return SELF_MSB;
        }

        public long localIncarnationLsb()
        {
            return SELF_LSB;
        }
    }

    /**
     * Keeps a copy of every answer the adapter sends.
     */
    private static final class RecordingChannel implements AnswerChannel
    {
        final List<UnsafeBuffer> sent = new ArrayList<>();

        public boolean offer(final PeerSession session, final DirectBuffer buffer, final int offset, final int length)
        {
            final byte[] copy = new byte[length];
            buffer.getBytes(offset, copy);
            sent.add(new UnsafeBuffer(copy));
            return true;
        }

        public long localIncarnationMsb()
        {
            return SELF_MSB;
        }

        public long localIncarnationLsb()
        {
            return SELF_LSB;
        }

        TransferGrantDecoder grant(final int i)
        {
            final UnsafeBuffer message = sent.get(i);
            assertEquals(TransferGrantDecoder.TEMPLATE_ID, new MessageHeaderDecoder().wrap(message, 0).templateId());
            return new TransferGrantDecoder().wrap(message, MessageHeaderDecoder.ENCODED_LENGTH,
                TransferGrantDecoder.BLOCK_LENGTH, TransferGrantDecoder.SCHEMA_VERSION);
        }

        TransferReleaseAckDecoder releaseAck(final int i)
        {
            final UnsafeBuffer message = sent.get(i);
            assertEquals(TransferReleaseAckDecoder.TEMPLATE_ID,
                new MessageHeaderDecoder().wrap(message, 0).templateId());
            return new TransferReleaseAckDecoder().wrap(message, MessageHeaderDecoder.ENCODED_LENGTH,
                TransferReleaseAckDecoder.BLOCK_LENGTH, TransferReleaseAckDecoder.SCHEMA_VERSION);
        }
    }

    /**
     * Records what each call carried; reads every key of an authorization, as the source does.
     */
    private static final class Recording implements TransferHandler
    {
        int authorizes;
        int releases;
        int grants;
        int acks;
        PeerSession lastSession;
        PeerClient lastClient;
        long lastRequesterSessionId;
        int lastKeyCount;
        long lastMaxBytes;
        long lastTransferSessionId;
        long lastGrantTransferSessionId;
        TransferStatus lastGrantStatus;
        TransferStatus lastAckStatus;

        public void onAuthorize(final PeerSession session, final TransferAuthorizeDecoder request)
        {
            lastRequesterSessionId = request.requesterSessionId();
            lastMaxBytes = request.maxBytes();
            int keys = 0;
            final TransferAuthorizeDecoder.KeysDecoder group = request.keys();
            while (group.hasNext())
            {
                group.next().skipKeyHash();
                keys++;
            }
            request.skipKeyNamespace();
            lastKeyCount = keys;
            lastSession = session;
            authorizes++;
        }

        public void onRelease(final PeerSession session, final TransferReleaseDecoder request)
        {
            lastSession = session;
            lastTransferSessionId = request.transferSessionId();
            releases++;
        }

        public void onGrant(final PeerClient client, final TransferGrantDecoder grant)
        {
            lastClient = client;
            lastGrantStatus = grant.status();
            lastGrantTransferSessionId = grant.transferSessionId();
            grants++;
        }

        public void onReleaseAck(final PeerClient client, final TransferReleaseAckDecoder ack)
        {
            lastClient = client;
            lastAckStatus = ack.status();
            acks++;
        }
    }
}
