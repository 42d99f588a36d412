package io.orbitkv.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.orbitkv.codecs.EngineRingLimits;
import io.orbitkv.codecs.engine.FailureReason;
import io.orbitkv.codecs.engine.KeyStatus;
import io.orbitkv.codecs.engine.MessageHeaderEncoder;
import io.orbitkv.codecs.engine.ReadRequestEncoder;
import io.orbitkv.codecs.engine.ResponseEncoder;
import io.orbitkv.codecs.engine.StatusCode;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

/**
 * The client's Response decoding at every schema version a Manager may answer with: version 3 frames written by the
 * generated encoder, version 1 and 2 frames laid out byte by byte as encoders of those versions wrote them (a keys
 * row of 5 bytes, no reason).
 */
class ResponseDecodingTest
{
    private static final long CORRELATION_ID = 77L;
    private static final int HEADER_BYTES = MessageHeaderEncoder.ENCODED_LENGTH;
    /** Keys row before version 3: status (1) and length (4). */
    private static final int KEY_ROW_V2_BYTES = 5;

    private final UnsafeBuffer buffer = new UnsafeBuffer(new byte[4 * EngineRingLimits.MAX_RESPONSE_BYTES]);
    private final MessageHeaderEncoder headerEncoder = new MessageHeaderEncoder();
    private final ResponseEncoder encoder = new ResponseEncoder();
    private final ResponseHandler handler = new ResponseHandler();

    @Test
    void shouldDecodeFailedKeyWithItsReasonAndTheSourcesOfPeerKeysOfAReadAnswer()
    {
        final ResponseEncoder.KeysEncoder keys = root(ReadRequestEncoder.TEMPLATE_ID, 2).keysCount(4);
        keys.next().status(KeyStatus.DRAM).length(4096).reason(FailureReason.NONE);
        keys.next().status(KeyStatus.PEER).length(8192).reason(FailureReason.NONE);
        keys.next().status(KeyStatus.FAILED).length(0).reason(FailureReason.CHECKSUM);
        keys.next().status(KeyStatus.NOT_ATTEMPTED).length(0).reason(FailureReason.NONE);
        encoder.ownersCount(1).next().runtimeUuidMsb(11).runtimeUuidLsb(12).nodeId("node-b");
        encoder.candidatesCount(1).next().keyIndex(1).ownerIndex(0).tier(KeyStatus.SSD).insertionSequence(99).length(8192);
        encoder.message("");

        final OperationResult result = decode(encodedLength(), 4, 0, 4);

        assertEquals(StatusCode.OK, result.code());
        assertEquals(KeyStatus.DRAM, result.status(0));
        assertEquals(KeyStatus.PEER, result.status(1));
        assertEquals(8192, result.length(1));
        assertEquals(KeyStatus.FAILED, result.status(2));
        assertEquals(FailureReason.CHECKSUM, result.reason(2));
        assertEquals(FailureReason.NONE, result.reason(0));
        assertEquals(FailureReason.NONE, result.reason(1));
        assertEquals(KeyStatus.NOT_ATTEMPTED, result.status(3));
        assertEquals(1, result.candidateCount());
        assertEquals(1, result.candidateKeyIndex(0));
        assertEquals(KeyStatus.SSD, result.candidateTier(0));
        assertEquals(99, result.candidateInsertionSequence(0));
        assertEquals(1, result.ownerCount());
        assertEquals("node-b", result.ownerNodeId(result.candidateOwnerIndex(0)));
        assertEquals(0, result.droppedCandidates());
    }

    @Test
    void shouldDecodeEveryFailureReasonAndMapAnUnknownOneToNullValue()
    {
        final FailureReason[] known = {
            FailureReason.CHECKSUM, FailureReason.TRANSFER, FailureReason.REJECTED, FailureReason.NO_STAGING,
            FailureReason.BUDGET, FailureReason.IO };
        final ResponseEncoder.KeysEncoder keys = root(ReadRequestEncoder.TEMPLATE_ID, 0).keysCount(known.length + 1);
        for (final FailureReason reason : known)
        {
            keys.next().status(KeyStatus.FAILED).length(0).reason(reason);
        }
        keys.next().status(KeyStatus.FAILED).length(0);
        final int rowsEnd = encoder.limit();
        // a value a newer Manager might send: the last row's reason byte
        buffer.putByte(rowsEnd - 1, (byte)42);
        encoder.ownersCount(0);
        encoder.candidatesCount(0);
        encoder.message("");

        final OperationResult result = decode(encodedLength(), known.length + 1, 0, known.length + 1);
        for (int i = 0; i < known.length; i++)
        {
            assertEquals(known[i], result.reason(i));
        }
        assertEquals(FailureReason.NULL_VAL, result.reason(known.length));
    }

    @Test
    void shouldDecodeVersionOneFrameWithReasonNoneAndNoCandidates()
    {
        int at = rootV(1, 3);
        at = keyGroupV2(at, new KeyStatus[] {KeyStatus.DRAM, KeyStatus.MISS, KeyStatus.NOT_ATTEMPTED}, 4096);
        at = message(at, "");

        final OperationResult result = decode(at, 3, 0, 3);

        assertEquals(StatusCode.OK, result.code());
        assertEquals(KeyStatus.DRAM, result.status(0));
        assertEquals(4096, result.length(0));
        assertEquals(KeyStatus.MISS, result.status(1));
        assertEquals(KeyStatus.NOT_ATTEMPTED, result.status(2));
        for (int i = 0; i < 3; i++)
        {
            assertEquals(FailureReason.NONE, result.reason(i));
        }
        assertEquals(0, result.candidateCount());
        assertEquals(0, result.ownerCount());
    }

    @Test
    void shouldDecodeVersionTwoFrameWithCandidatesAndReasonNone()
    {
        int at = rootV(2, 1);
        at = keyGroupV2(at, new KeyStatus[] {KeyStatus.DRAM, KeyStatus.PEER, KeyStatus.MISS}, 4096);
        // owners: blockLength 16, one entry, then its node id
        at = groupHeader(at, 16, 1);
        buffer.putLong(at, 21, ByteOrder.LITTLE_ENDIAN);
        buffer.putLong(at + 8, 22, ByteOrder.LITTLE_ENDIAN);
        at = varAscii(at + 16, "node-c");
        // candidates: blockLength 17, two copies of key 1
        at = groupHeader(at, 17, 2);
        for (int c = 0; c < 2; c++)
        {
            buffer.putShort(at, (short)1, ByteOrder.LITTLE_ENDIAN);
            buffer.putShort(at + 2, (short)0, ByteOrder.LITTLE_ENDIAN);
            buffer.putByte(at + 4, (byte)(c == 0 ? KeyStatus.DRAM.value() : KeyStatus.SSD.value()));
            buffer.putLong(at + 5, 500 + c, ByteOrder.LITTLE_ENDIAN);
            buffer.putInt(at + 13, 4096, ByteOrder.LITTLE_ENDIAN);
            at += 17;
        }
        at = message(at, "");

        final OperationResult result = decode(at, 3, 0, 3);

        assertEquals(KeyStatus.PEER, result.status(1));
        assertEquals(FailureReason.NONE, result.reason(1));
        assertEquals(2, result.candidateCount());
        assertEquals(KeyStatus.DRAM, result.candidateTier(0));
        assertEquals(KeyStatus.SSD, result.candidateTier(1));
        assertEquals(501, result.candidateInsertionSequence(1));
        assertEquals("node-c", result.ownerNodeId(0));
    }

    @Test
    void shouldDecodeErrorMessageOfAVersionOneFrame()
    {
        int at = rootV(1, 0);
        buffer.putByte(HEADER_BYTES + 18, (byte)StatusCode.OUT_OF_RANGE.value());
        at = keyGroupV2(at, new KeyStatus[0], 0);
        at = message(at, "offset outside the data region");

        final OperationResult result = decode(at, 2, 0, 2);

        assertEquals(StatusCode.OUT_OF_RANGE, result.code());
        assertEquals("offset outside the data region", result.message());
    }

    @Test
    void shouldKeepOneOwnerPerRuntimeUuidAcrossTheAnswersOfABatch()
    {
        final OperationResult result = new OperationResult(2 * EngineRingLimits.MAX_KEYS_PER_REQUEST);
        result.reset(2 * EngineRingLimits.MAX_KEYS_PER_REQUEST);
        for (int request = 0; request < 2; request++)
        {
            final ResponseEncoder.KeysEncoder keys = root(ReadRequestEncoder.TEMPLATE_ID, 2).keysCount(2);
            keys.next().status(KeyStatus.PEER).length(100).reason(FailureReason.NONE);
            keys.next().status(KeyStatus.PEER).length(100).reason(FailureReason.NONE);
            final ResponseEncoder.OwnersEncoder owners = encoder.ownersCount(2);
            // the second answer names the shared owner second: its index in the answer differs from the result's
            owners.next().runtimeUuidMsb(request == 0 ? 1 : 9).runtimeUuidLsb(request == 0 ? 1 : 9)
                .nodeId(request == 0 ? "shared" : "only-second");
            owners.next().runtimeUuidMsb(request == 0 ? 5 : 1).runtimeUuidLsb(request == 0 ? 5 : 1)
                .nodeId(request == 0 ? "only-first" : "shared");
            final ResponseEncoder.CandidatesEncoder candidates = encoder.candidatesCount(2);
            candidates.next().keyIndex(0).ownerIndex(request == 0 ? 0 : 1).tier(KeyStatus.DRAM).insertionSequence(1).length(100);
            candidates.next().keyIndex(1).ownerIndex(request == 0 ? 1 : 0).tier(KeyStatus.DRAM).insertionSequence(2).length(100);
            encoder.message("");
            final int keyBase = request * EngineRingLimits.MAX_KEYS_PER_REQUEST;
            handler.expect(CORRELATION_ID, result, keyBase, 2);
            handler.onMessage(ResponseEncoder.TEMPLATE_ID, buffer, 0, encodedLength());
            assertTrue(handler.received);
        }

        assertEquals(3, result.ownerCount());
        assertEquals(4, result.candidateCount());
        assertEquals(EngineRingLimits.MAX_KEYS_PER_REQUEST, result.candidateKeyIndex(2));
        assertEquals(EngineRingLimits.MAX_KEYS_PER_REQUEST + 1, result.candidateKeyIndex(3));
        assertEquals("shared", result.ownerNodeId(result.candidateOwnerIndex(0)));
        assertEquals("only-first", result.ownerNodeId(result.candidateOwnerIndex(1)));
        assertEquals("shared", result.ownerNodeId(result.candidateOwnerIndex(2)));
        assertEquals(result.candidateOwnerIndex(0), result.candidateOwnerIndex(2));
        assertEquals("only-second", result.ownerNodeId(result.candidateOwnerIndex(3)));
    }

    @Test
    void shouldDropAndCountCandidatesNamingAnUnknownRowOrOwner()
    {
        final ResponseEncoder.KeysEncoder keys = root(ReadRequestEncoder.TEMPLATE_ID, 1).keysCount(2);
        keys.next().status(KeyStatus.PEER).length(10).reason(FailureReason.NONE);
        keys.next().status(KeyStatus.MISS).length(0).reason(FailureReason.NONE);
        encoder.ownersCount(1).next().runtimeUuidMsb(3).runtimeUuidLsb(4).nodeId("n");
        final ResponseEncoder.CandidatesEncoder candidates = encoder.candidatesCount(3);
        candidates.next().keyIndex(0).ownerIndex(0).tier(KeyStatus.DRAM).insertionSequence(1).length(10);
        candidates.next().keyIndex(0).ownerIndex(1).tier(KeyStatus.DRAM).insertionSequence(1).length(10);
        candidates.next().keyIndex(7).ownerIndex(0).tier(KeyStatus.DRAM).insertionSequence(1).length(10);
        encoder.message("");

        final OperationResult result = decode(encodedLength(), 2, 0, 2);

        assertEquals(1, result.candidateCount());
        assertEquals(2, result.droppedCandidates());
    }

    @Test
    void shouldKeepCandidatesUpToCapacityAndCountTheRest()
    {
        final int capacity = OperationResult.candidateCapacity(1);
        assertEquals(EngineRingLimits.MAX_CANDIDATES_PER_LOOKUP, capacity);
        final ResponseEncoder.KeysEncoder keys = root(ReadRequestEncoder.TEMPLATE_ID, 1).keysCount(1);
        keys.next().status(KeyStatus.PEER).length(10).reason(FailureReason.NONE);
        encoder.ownersCount(1).next().runtimeUuidMsb(3).runtimeUuidLsb(4).nodeId("n");
        final ResponseEncoder.CandidatesEncoder candidates = encoder.candidatesCount(capacity + 1);
        for (int i = 0; i <= capacity; i++)
        {
            candidates.next().keyIndex(0).ownerIndex(0).tier(KeyStatus.DRAM).insertionSequence(i).length(10);
        }
        encoder.message("done");

        final OperationResult result = decode(encodedLength(), 1, 0, 1);

        assertEquals(capacity, result.candidateCount());
        assertEquals(capacity - 1, result.candidateInsertionSequence(capacity - 1));
        assertEquals(1, result.droppedCandidates());
    }

    @Test
    void shouldSkipOwnersPastTheLimitOfOneAnswerAndStillReachTheMessage()
    {
        final int owners = EngineRingLimits.MAX_PEER_OWNERS_PER_LOOKUP + 1;
        assertEquals(EngineRingLimits.MAX_PEER_OWNERS_PER_LOOKUP, OperationResult.ownerCapacity(1));
        // an error answer: its message comes after both groups, so reading it shows they were walked in full
        final ResponseEncoder.KeysEncoder keys = root(ReadRequestEncoder.TEMPLATE_ID, 0).code(StatusCode.ERROR).keysCount(1);
        keys.next().status(KeyStatus.PEER).length(10).reason(FailureReason.NONE);
        final ResponseEncoder.OwnersEncoder ownerRows = encoder.ownersCount(owners);
        for (int o = 0; o < owners; o++)
        {
            ownerRows.next().runtimeUuidMsb(o).runtimeUuidLsb(o).nodeId("owner-" + o);
        }
        final ResponseEncoder.CandidatesEncoder candidates = encoder.candidatesCount(2);
        candidates.next().keyIndex(0).ownerIndex(owners - 2).tier(KeyStatus.DRAM).insertionSequence(1).length(10);
        candidates.next().keyIndex(0).ownerIndex(owners - 1).tier(KeyStatus.DRAM).insertionSequence(2).length(10);
        encoder.message("after the groups");
        final int length = encodedLength();

        final OperationResult result = new OperationResult(1);
        result.reset(1);
        handler.expect(CORRELATION_ID, result, 0, 1);
        handler.onMessage(ResponseEncoder.TEMPLATE_ID, buffer, 0, length);

        assertEquals(StatusCode.ERROR, result.code());
        assertEquals(EngineRingLimits.MAX_PEER_OWNERS_PER_LOOKUP, result.ownerCount());
        assertEquals(1, result.candidateCount());
        assertEquals("owner-" + (owners - 2), result.ownerNodeId(result.candidateOwnerIndex(0)));
        assertEquals(1, result.droppedCandidates());
        assertEquals("after the groups", result.message());
    }

    private ResponseEncoder root(final int requestTemplateId, final long value)
    {
        final ResponseEncoder root = encoder.wrapAndApplyHeader(buffer, 0, headerEncoder);
        // Answers with peer groups are version 2 or 3 on the wire; only a Prepare's (version 4) has the slots group.
        headerEncoder.version(3);
        return root
            .clientId(1)
            .correlationId(CORRELATION_ID)
            .requestTemplateId(requestTemplateId)
            .code(StatusCode.OK)
            .value(value)
            .leaseId(0);
    }

    private int encodedLength()
    {
        return HEADER_BYTES + encoder.encodedLength();
    }

    private OperationResult decode(final int length, final int batchKeys, final int keyBase, final int keyCount)
    {
        final OperationResult result = new OperationResult(batchKeys);
        result.reset(batchKeys);
        handler.expect(CORRELATION_ID, result, keyBase, keyCount);
        handler.onMessage(ResponseEncoder.TEMPLATE_ID, buffer, 0, length);
        assertTrue(handler.received, "answer decoded");
        return result;
    }

    /** Header and root block of an older frame; returns where the keys group starts. */
    private int rootV(final int version, final long value)
    {
        buffer.putShort(0, (short)ResponseEncoder.BLOCK_LENGTH, ByteOrder.LITTLE_ENDIAN);
        buffer.putShort(2, (short)ResponseEncoder.TEMPLATE_ID, ByteOrder.LITTLE_ENDIAN);
        buffer.putShort(4, (short)ResponseEncoder.SCHEMA_ID, ByteOrder.LITTLE_ENDIAN);
        buffer.putShort(6, (short)version, ByteOrder.LITTLE_ENDIAN);
        final int root = HEADER_BYTES;
        buffer.putLong(root, 1, ByteOrder.LITTLE_ENDIAN);
        buffer.putLong(root + 8, CORRELATION_ID, ByteOrder.LITTLE_ENDIAN);
        buffer.putShort(root + 16, (short)ReadRequestEncoder.TEMPLATE_ID, ByteOrder.LITTLE_ENDIAN);
        buffer.putByte(root + 18, (byte)StatusCode.OK.value());
        buffer.putLong(root + 19, value, ByteOrder.LITTLE_ENDIAN);
        buffer.putLong(root + 27, 0, ByteOrder.LITTLE_ENDIAN);
        return root + ResponseEncoder.BLOCK_LENGTH;
    }

    private int keyGroupV2(final int at, final KeyStatus[] statuses, final int length)
    {
        int row = groupHeader(at, KEY_ROW_V2_BYTES, statuses.length);
        for (final KeyStatus status : statuses)
        {
            buffer.putByte(row, (byte)status.value());
            buffer.putInt(row + 1, status == KeyStatus.DRAM ? length : 0, ByteOrder.LITTLE_ENDIAN);
            row += KEY_ROW_V2_BYTES;
        }
        return row;
    }

    private int groupHeader(final int at, final int blockLength, final int count)
    {
        buffer.putShort(at, (short)blockLength, ByteOrder.LITTLE_ENDIAN);
        buffer.putShort(at + 2, (short)count, ByteOrder.LITTLE_ENDIAN);
        return at + 4;
    }

    private int varAscii(final int at, final String text)
    {
        final byte[] bytes = text.getBytes(StandardCharsets.US_ASCII);
        buffer.putShort(at, (short)bytes.length, ByteOrder.LITTLE_ENDIAN);
        buffer.putBytes(at + 2, bytes);
        return at + 2 + bytes.length;
    }

    private int message(final int at, final String text)
    {
        return varAscii(at, text);
    }
}
