package io.orbitkv.manager.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.orbitkv.client.ClientResponseReader;
import io.orbitkv.client.OperationResult;
import io.orbitkv.codecs.engine.FailureReason;
import io.orbitkv.codecs.engine.KeyStatus;
import io.orbitkv.codecs.engine.MessageHeaderEncoder;
import io.orbitkv.codecs.engine.ReadRequestEncoder;
import io.orbitkv.codecs.engine.ResponseEncoder;
import io.orbitkv.codecs.engine.StatusCode;
import java.nio.ByteBuffer;
import java.util.List;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;
import org.junit.jupiter.api.Test;

/**
 * The per-key report of {@code orbitkv client read --peers}, fed with results the client's own decoder read from
 * encoded Response frames: two answers of a read that went to two peers and stopped at a failed key.
 */
class KeySourcesReportTest
{
    private static final long REQUEST_1_NS = 1_500_000;
    private static final long REQUEST_2_NS = 250_000;

    private final OneToOneRingBuffer ring = new OneToOneRingBuffer(
        new UnsafeBuffer(ByteBuffer.allocateDirect((64 * 1024) + RingBufferDescriptor.TRAILER_LENGTH)));
    private final UnsafeBuffer frame = new UnsafeBuffer(new byte[16 * 1024]);
    private final MessageHeaderEncoder headerEncoder = new MessageHeaderEncoder();
    private final ResponseEncoder encoder = new ResponseEncoder();
    private final ClientResponseReader reader = new ClientResponseReader();

    @Test
    void shouldPrintRunsOfKeysWithTheirSourceBytesAndRequestTime()
    {
        final KeySources sources = twoAnswers();

        assertEquals(List.of(
            "key 0: LOCAL DRAM, 100 bytes, request 1 1.500 ms",
            "key 1: LOCAL DRAM MISMATCH, 100 bytes, request 1 1.500 ms",
            "key 2: LOCAL DRAM, 100 bytes, request 1 1.500 ms",
            "key 3: LOCAL SSD, 100 bytes, request 1 1.500 ms",
            "keys 4-5: PEER node-b DRAM, 400 bytes, request 1 1.500 ms",
            "key 6: PEER node-b DRAM, 200 bytes, request 2 0.250 ms",
            "key 7: PEER node-c SSD, 200 bytes, request 2 0.250 ms",
            "key 8: FAILED CHECKSUM, request 2 0.250 ms",
            "keys 9-11: NOT_ATTEMPTED"), sources.lines());
        assertEquals("read: 8 of 12 blocks restored (4 local, 4 peer), 1200 bytes, 2.000 ms, mismatches: 1",
            sources.readSummary(1));
        assertEquals("lookup: 8 of 12 blocks held (4 local, 4 peer), 1200 bytes, 2.000 ms", sources.lookupSummary());
    }

    @Test
    void shouldKeepTheSourceOwnerAndReasonOfEveryKey()
    {
        final KeySources sources = twoAnswers();

        assertEquals("node-b", sources.sourceNode(4));
        assertEquals(sources.sourceRuntimeUuid(4), sources.sourceRuntimeUuid(6), "one owner across both answers");
        assertEquals(KeyStatus.SSD, sources.sourceTier(7));
        assertNull(sources.sourceNode(3), "a local key has no peer source");
        assertEquals(FailureReason.CHECKSUM, sources.reason(8));
        assertEquals(FailureReason.NONE, sources.reason(7));
        assertEquals(1, sources.request(6));
        assertEquals(KeySources.NOT_SENT, sources.request(10));
        assertTrue(sources.mismatched(1));

        final List<KeySources.Range> ranges = sources.ranges();
        assertEquals(9, ranges.size());
        assertEquals(new KeySources.Range(4, 5, "PEER node-b DRAM", 400, 0, REQUEST_1_NS), ranges.get(4));
    }

    @Test
    void shouldNameAPeerKeyWithoutSourceAndAnUnknownTier()
    {
        final OperationResult result = new OperationResult(2);
        final ResponseEncoder.KeysEncoder keys = root(2).keysCount(2);
        keys.next().status(KeyStatus.PEER).length(10).reason(FailureReason.NONE);
        keys.next().status(KeyStatus.PEER).length(10).reason(FailureReason.NONE);
        encoder.ownersCount(1).next().runtimeUuidMsb(1).runtimeUuidLsb(2).nodeId("n");
        // only key 1 has a candidate, with a tier that is not a tier
        encoder.candidatesCount(1).next().keyIndex(1).ownerIndex(0).tier(KeyStatus.MISS).insertionSequence(1).length(10);
        encoder.message("");
        send(result, 2);
        final KeySources sources = new KeySources(2);
        sources.record(0, result, 2, 0);

        assertEquals(List.of("key 0: PEER ?, 10 bytes, request 1 0.000 ms", "key 1: PEER n ?, 10 bytes, request 1 0.000 ms"),
            sources.lines());
    }

    private KeySources twoAnswers()
    {
        final KeySources sources = new KeySources(12);
        final OperationResult result = new OperationResult(6);

        final ResponseEncoder.KeysEncoder firstKeys = root(6).keysCount(6);
        for (int i = 0; i < 3; i++)
        {
            firstKeys.next().status(KeyStatus.DRAM).length(100).reason(FailureReason.NONE);
        }
        firstKeys.next().status(KeyStatus.SSD).length(100).reason(FailureReason.NONE);
        firstKeys.next().status(KeyStatus.PEER).length(200).reason(FailureReason.NONE);
        firstKeys.next().status(KeyStatus.PEER).length(200).reason(FailureReason.NONE);
        encoder.ownersCount(1).next().runtimeUuidMsb(7).runtimeUuidLsb(8).nodeId("node-b");
        final ResponseEncoder.CandidatesEncoder firstCandidates = encoder.candidatesCount(2);
        firstCandidates.next().keyIndex(4).ownerIndex(0).tier(KeyStatus.DRAM).insertionSequence(40).length(200);
        firstCandidates.next().keyIndex(5).ownerIndex(0).tier(KeyStatus.DRAM).insertionSequence(41).length(200);
        encoder.message("");
        send(result, 6);
        sources.record(0, result, 6, REQUEST_1_NS);
        sources.mismatch(1);

        // the second answer names the first answer's owner second
        final ResponseEncoder.KeysEncoder secondKeys = root(2).keysCount(4);
        secondKeys.next().status(KeyStatus.PEER).length(200).reason(FailureReason.NONE);
        secondKeys.next().status(KeyStatus.PEER).length(200).reason(FailureReason.NONE);
        secondKeys.next().status(KeyStatus.FAILED).length(0).reason(FailureReason.CHECKSUM);
        secondKeys.next().status(KeyStatus.NOT_ATTEMPTED).length(0).reason(FailureReason.NONE);
        final ResponseEncoder.OwnersEncoder owners = encoder.ownersCount(2);
        owners.next().runtimeUuidMsb(9).runtimeUuidLsb(9).nodeId("node-c");
        owners.next().runtimeUuidMsb(7).runtimeUuidLsb(8).nodeId("node-b");
        final ResponseEncoder.CandidatesEncoder secondCandidates = encoder.candidatesCount(2);
        secondCandidates.next().keyIndex(0).ownerIndex(1).tier(KeyStatus.DRAM).insertionSequence(60).length(200);
        secondCandidates.next().keyIndex(1).ownerIndex(0).tier(KeyStatus.SSD).insertionSequence(61).length(200);
        encoder.message("");
        send(result, 4);
        sources.record(6, result, 4, REQUEST_2_NS);
        sources.elapsedNs(2_000_000);
        return sources;
    }

    private ResponseEncoder root(final long value)
    {
        final ResponseEncoder root = encoder.wrapAndApplyHeader(frame, 0, headerEncoder);
        // A Read's answer is version 3 at most: no slots group.
        headerEncoder.version(3);
        return root
            .clientId(1)
            .correlationId(5)
            .requestTemplateId(ReadRequestEncoder.TEMPLATE_ID)
            .code(StatusCode.OK)
            .value(value)
            .leaseId(0);
    }

    private void send(final OperationResult result, final int keys)
    {
        assertTrue(ring.write(ResponseEncoder.TEMPLATE_ID, frame, 0, MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength()));
        assertTrue(reader.read(ring, 5, keys, 0, keys, result), "answer decoded by the client");
    }
}
