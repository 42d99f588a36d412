package io.orbitkv.manager.ring;

import io.orbitkv.manager.Configuration;
import io.orbitkv.codecs.CandidateTable;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.orbitkv.client.ClientResponseReader;
import io.orbitkv.client.OperationResult;
import io.orbitkv.codecs.EngineRingLimits;
import io.orbitkv.codecs.engine.KeyStatus;
import io.orbitkv.codecs.engine.LookupRequestDecoder;
import io.orbitkv.codecs.engine.MessageHeaderDecoder;
import io.orbitkv.codecs.engine.MessageHeaderEncoder;
import io.orbitkv.codecs.engine.ResponseEncoder;
import io.orbitkv.codecs.engine.StatusCode;
import java.lang.management.ManagementFactory;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.agrona.BufferUtil;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;
import org.agrona.concurrent.status.AtomicCounter;
import org.agrona.concurrent.status.CountersManager;
import org.junit.jupiter.api.Test;

/**
 * The Response as the Manager encodes it ({@link ResponseProxy}) and as the engine client decodes it (its own
 * response handler, through {@link ClientResponseReader}), over a real response ring: peer owners and candidates,
 * the version an answer is written at, and the worst-case length against the ring limits.
 */
class ResponseProxyTest
{
    private static final int LOOKUP = LookupRequestDecoder.TEMPLATE_ID;

    private final CountersManager counters = new CountersManager(
        new UnsafeBuffer(new byte[64 * 1024]), new UnsafeBuffer(new byte[16 * 1024]));
    private final AtomicCounter dropped = counters.newCounter("responses dropped");
    private final ResponseProxy proxy = new ResponseProxy(dropped);
    private final OneToOneRingBuffer ring = ring(Configuration.RESPONSE_RING_BYTES_DEFAULT);
    private final ClientResponseReader reader = new ClientResponseReader();

    private static OneToOneRingBuffer ring(final int capacity)
    {
        return new OneToOneRingBuffer(new UnsafeBuffer(
            BufferUtil.allocateDirectAligned(capacity + RingBufferDescriptor.TRAILER_LENGTH, 64)));
    }

    @Test
    void shouldRoundTripOwnersAndCandidatesThroughTheClientDecoder()
    {
        final KeyStatus[] statuses = {KeyStatus.DRAM, KeyStatus.SSD, KeyStatus.PEER, KeyStatus.PEER, KeyStatus.MISS};
        final int[] lengths = {4096, 8192, 0, 0, 0};
        final CandidateTable peers = CandidateTable.forAnswer();
        final int nodeA = peers.addOwner(0x1111L, 0x2222L, "node-a");
        final int nodeB = peers.addOwner(0x3333L, 0x4444L, "node-b.rack-2");
        assertEquals(nodeA, peers.addOwner(0x1111L, 0x2222L, "node-a"));
        assertTrue(peers.addCandidate(2, nodeB, KeyStatus.SSD, 77L, 16384));
        assertTrue(peers.addCandidate(2, nodeA, KeyStatus.DRAM, 78L, 16384));
        assertTrue(peers.addCandidate(3, nodeA, KeyStatus.DRAM, Long.MAX_VALUE, 12345));

        assertTrue(proxy.sendKeys(ring, 9L, 41L, LOOKUP, 2, 0, statuses, lengths, statuses.length, peers));
        assertEquals(2, peekVersion(ring), "an answer with candidates is a version-2 frame");

        final OperationResult result = new OperationResult(16);
        assertTrue(reader.read(ring, 41L, 10, 5, statuses.length, result));
        assertEquals(StatusCode.OK, result.code());
        assertEquals(2, result.value());
        assertEquals(KeyStatus.DRAM, result.status(5));
        assertEquals(KeyStatus.PEER, result.status(7));
        assertEquals(KeyStatus.MISS, result.status(9));
        assertEquals(2, result.count(KeyStatus.PEER));

        assertEquals(2, result.ownerCount());
        assertEquals("node-a", result.ownerNodeId(0));
        assertEquals("node-b.rack-2", result.ownerNodeId(1, new StringBuilder()).toString());
        assertEquals(0x3333L, result.ownerRuntimeUuidMsb(1));
        assertEquals(0x4444L, result.ownerRuntimeUuidLsb(1));

        assertEquals(3, result.candidateCount());
        assertEquals(7, result.candidateKeyIndex(0), "key index rebased onto the batch (key base 5)");
        assertEquals(1, result.candidateOwnerIndex(0));
        assertEquals(KeyStatus.SSD, result.candidateTier(0));
        assertEquals(77L, result.candidateInsertionSequence(0));
        assertEquals(16384, result.candidateLength(0));
        assertEquals(7, result.candidateKeyIndex(1));
        assertEquals(0, result.candidateOwnerIndex(1));
        assertEquals(KeyStatus.DRAM, result.candidateTier(1));
        assertEquals(8, result.candidateKeyIndex(2));
        assertEquals(Long.MAX_VALUE, result.candidateInsertionSequence(2));
        assertEquals(12345, result.candidateLength(2));
        assertEquals("", result.message());
    }

    @Test
    void shouldWriteAnswersWithoutCandidatesAsVersionOneFramesThatAVersionOneDecoderReads()
    {
        final KeyStatus[] statuses = {KeyStatus.DRAM, KeyStatus.MISS};
        final int[] lengths = {4096, 0};
        final CandidateTable empty = CandidateTable.forAnswer();
        empty.addOwner(1, 2, "owner-without-candidates");

        assertTrue(proxy.sendKeys(ring, 9L, 50L, LOOKUP, 1, 0, statuses, lengths, 2));
        assertTrue(proxy.sendKeys(ring, 9L, 51L, LOOKUP, 1, 0, statuses, lengths, 2, null));
        assertTrue(proxy.sendKeys(ring, 9L, 52L, LOOKUP, 1, 0, statuses, lengths, 2, empty));
        final byte[] reason = "no such lease".getBytes(StandardCharsets.US_ASCII);
        assertTrue(proxy.sendStatus(ring, 9L, 53L, LOOKUP, StatusCode.UNKNOWN_LEASE, 0, reason));

        final int[] seen = new int[1];
        ring.read((msgTypeId, buffer, index, length) ->
        {
            // a version-1 decoder: header, root block, keys group, then the message right away
            assertEquals(1, buffer.getShort(index + 6, ByteOrder.LITTLE_ENDIAN), "header version");
            final int keysOffset = index + MessageHeaderDecoder.ENCODED_LENGTH + ResponseEncoder.BLOCK_LENGTH;
            final int keyCount = buffer.getShort(keysOffset + 2, ByteOrder.LITTLE_ENDIAN) & 0xFFFF;
            final int messageOffset = keysOffset + 4 + keyCount * ResponseEncoder.KeysEncoder.sbeBlockLength();
            final int messageLength = buffer.getShort(messageOffset, ByteOrder.LITTLE_ENDIAN) & 0xFFFF;
            assertEquals(length, messageOffset + 2 + messageLength - index, "nothing between keys and message");
            final long correlationId = buffer.getLong(index + MessageHeaderDecoder.ENCODED_LENGTH + 8, ByteOrder.LITTLE_ENDIAN);
            if (53L == correlationId)
            {
                assertEquals("no such lease", buffer.getStringWithoutLengthAscii(messageOffset + 2, messageLength));
            }
            else
            {
                assertEquals(2, keyCount);
                assertEquals(0, messageLength);
            }
            seen[0]++;
        });
        assertEquals(4, seen[0]);

        assertTrue(proxy.sendKeys(ring, 9L, 54L, LOOKUP, 1, 0, statuses, lengths, 2, empty));
        final OperationResult result = new OperationResult(2);
        assertTrue(reader.read(ring, 54L, 2, 0, 2, result));
        assertEquals(0, result.candidateCount(), "a version-2 decoder reads a version-1 frame as no candidates");
        assertEquals(0, result.ownerCount());
        assertEquals(KeyStatus.MISS, result.status(1));
    }

    @Test
    void shouldSendOnlyCandidatesOfKeysTheAnswerHas()
    {
        final CandidateTable peers = CandidateTable.forAnswer();
        final int owner = peers.addOwner(5, 6, "node-a");
        peers.addCandidate(1, owner, KeyStatus.DRAM, 1, 100);
        peers.addCandidate(2, owner, KeyStatus.DRAM, 2, 100);
        peers.addCandidate(2, owner, KeyStatus.SSD, 3, 100);
        final KeyStatus[] statuses = {KeyStatus.MISS, KeyStatus.PEER};
        assertTrue(proxy.sendKeys(ring, 9L, 60L, LOOKUP, 0, 0, statuses, new int[2], 2, peers));
        final OperationResult result = new OperationResult(2);
        assertTrue(reader.read(ring, 60L, 2, 0, 2, result));
        assertEquals(1, result.candidateCount());
        assertEquals(1, result.candidateKeyIndex(0));
    }

    @Test
    void shouldClampTheMessageToTheLimit()
    {
        final byte[] longMessage = new byte[EngineRingLimits.MAX_MESSAGE_LENGTH + 500];
        Arrays.fill(longMessage, (byte)'x');
        assertTrue(proxy.sendStatus(ring, 9L, 70L, LOOKUP, StatusCode.ERROR, 0, longMessage));
        final OperationResult result = new OperationResult(1);
        assertTrue(reader.read(ring, 70L, 1, 0, 1, result));
        assertEquals(StatusCode.ERROR, result.code());
        assertEquals(EngineRingLimits.MAX_MESSAGE_LENGTH, result.message().length());
    }

    @Test
    void shouldFitTheWorstCaseResponseInTheDefaultAndTheSmallestResponseRing()
    {
        final UnsafeBuffer frame = new UnsafeBuffer(new byte[2 * EngineRingLimits.MAX_RESPONSE_BYTES]);
        final ResponseEncoder encoder = new ResponseEncoder().wrapAndApplyHeader(frame, 0, new MessageHeaderEncoder())
            .clientId(Long.MAX_VALUE).correlationId(Long.MAX_VALUE).requestTemplateId(LOOKUP).code(StatusCode.OK)
            .value(0).leaseId(Long.MAX_VALUE);
        final ResponseEncoder.KeysEncoder keys = encoder.keysCount(EngineRingLimits.MAX_KEYS_PER_REQUEST);
        for (int i = 0; i < EngineRingLimits.MAX_KEYS_PER_REQUEST; i++)
        {
            keys.next().status(KeyStatus.PEER).length(0);
        }
        final ResponseEncoder.OwnersEncoder owners = encoder.ownersCount(EngineRingLimits.MAX_PEER_OWNERS_PER_LOOKUP);
        for (int i = 0; i < EngineRingLimits.MAX_PEER_OWNERS_PER_LOOKUP; i++)
        {
            owners.next().runtimeUuidMsb(i).runtimeUuidLsb(i).nodeId(nodeId(i));
        }
        final ResponseEncoder.CandidatesEncoder candidates = encoder.candidatesCount(EngineRingLimits.MAX_CANDIDATES_PER_LOOKUP);
        for (int i = 0; i < EngineRingLimits.MAX_CANDIDATES_PER_LOOKUP; i++)
        {
            candidates.next().keyIndex(i / EngineRingLimits.MAX_CANDIDATES_PER_KEY).ownerIndex(i % 32)
                .tier(KeyStatus.SSD).insertionSequence(i).length(Integer.MAX_VALUE);
        }
        encoder.message("m".repeat(EngineRingLimits.MAX_MESSAGE_LENGTH));
        final int length = MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength();

        assertEquals(EngineRingLimits.MAX_RESPONSE_BYTES, length, "the computed worst case is what the codec writes");
        assertEquals(15_481, length, "as docs/engine-ring.md says");

        // The largest Prepare answer: every key with a slot, no owners or candidates, the longest message.
        final ResponseEncoder.KeysEncoder prepared = encoder.wrapAndApplyHeader(frame, 0, new MessageHeaderEncoder())
            .clientId(1).correlationId(2).requestTemplateId(8).code(StatusCode.OK).value(0).leaseId(0)
            .keysCount(EngineRingLimits.MAX_KEYS_PER_REQUEST);
        for (int i = 0; i < EngineRingLimits.MAX_KEYS_PER_REQUEST; i++)
        {
            prepared.next().status(KeyStatus.RESERVED).length(1).reason(io.orbitkv.codecs.engine.FailureReason.NONE);
        }
        encoder.ownersCount(0);
        encoder.candidatesCount(0);
        final ResponseEncoder.SlotsEncoder slots = encoder.slotsCount(EngineRingLimits.MAX_KEYS_PER_REQUEST);
        for (int i = 0; i < EngineRingLimits.MAX_KEYS_PER_REQUEST; i++)
        {
            slots.next().poolOffset(i);
        }
        encoder.putMessage(new byte[EngineRingLimits.MAX_MESSAGE_LENGTH], 0, EngineRingLimits.MAX_MESSAGE_LENGTH);
        assertTrue(MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength() < EngineRingLimits.MAX_RESPONSE_BYTES,
            "a Prepare's answer is shorter than the worst case");
        assertTrue(length <= ring.maxMsgLength(), length + " fits the default ring's " + ring.maxMsgLength());
        assertTrue(ring.write(ResponseEncoder.TEMPLATE_ID, frame, 0, length));
        final OneToOneRingBuffer smallest = ring(Configuration.MIN_RESPONSE_RING_BYTES);
        assertTrue(length <= smallest.maxMsgLength(), "and the smallest ring the Manager accepts");
        assertTrue(smallest.write(ResponseEncoder.TEMPLATE_ID, frame, 0, length));
        assertFalse(length <= ring(Configuration.MIN_RESPONSE_RING_BYTES / 2).maxMsgLength(), "the minimum is tight");
        assertTrue(ResponseProxy.MAX_RESPONSE_LENGTH >= length);
    }

    @Test
    void shouldEncodeAndDecodeAFullCandidateTable()
    {
        final int keyCount = EngineRingLimits.MAX_KEYS_PER_REQUEST;
        final KeyStatus[] statuses = new KeyStatus[keyCount];
        Arrays.fill(statuses, KeyStatus.NOT_ATTEMPTED);
        final CandidateTable peers = fullAnswer(statuses);
        assertFalse(peers.addCandidate(keyCount - 1, 0, KeyStatus.DRAM, 0, 0), "full");

        assertTrue(proxy.sendKeys(ring, 1L, 80L, LOOKUP, 0, 0, statuses, new int[keyCount], keyCount, peers));
        final OperationResult result = new OperationResult(keyCount);
        assertTrue(reader.read(ring, 80L, keyCount, 0, keyCount, result));
        assertEquals(EngineRingLimits.MAX_CANDIDATES_PER_LOOKUP, result.candidateCount());
        assertEquals(EngineRingLimits.MAX_PEER_OWNERS_PER_LOOKUP, result.ownerCount());
        assertEquals(EngineRingLimits.MAX_PEER_KEYS_PER_LOOKUP, result.count(KeyStatus.PEER));
        assertEquals(nodeId(31), result.ownerNodeId(31));
        assertEquals(keyCount - EngineRingLimits.MAX_PEER_KEYS_PER_LOOKUP +
            (EngineRingLimits.MAX_CANDIDATES_PER_LOOKUP - 1) / EngineRingLimits.MAX_CANDIDATES_PER_KEY,
            result.candidateKeyIndex(EngineRingLimits.MAX_CANDIDATES_PER_LOOKUP - 1));
        assertEquals(0, dropped.get());
    }

    @Test
    void shouldNotAllocateWhileFillingEncodingAndDecodingACandidateTable()
    {
        final com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
        assertTrue(threads.isThreadAllocatedMemorySupported());
        threads.setThreadAllocatedMemoryEnabled(true);
        final int keyCount = EngineRingLimits.MAX_KEYS_PER_REQUEST;
        final KeyStatus[] statuses = new KeyStatus[keyCount];
        Arrays.fill(statuses, KeyStatus.NOT_ATTEMPTED);
        final int[] lengths = new int[keyCount];
        final String[] nodeIds = new String[EngineRingLimits.MAX_PEER_OWNERS_PER_LOOKUP];
        for (int i = 0; i < nodeIds.length; i++)
        {
            nodeIds[i] = nodeId(i);
        }
        final CandidateTable peers = CandidateTable.forAnswer();
        final OperationResult result = new OperationResult(keyCount);
        final StringBuilder nodeId = new StringBuilder(EngineRingLimits.MAX_NODE_ID_LENGTH);

        long allocated = -1;
        long correlationId = 0;
        for (int window = 0; window < 30 && 0 != allocated; window++)
        {
            final long before = threads.getCurrentThreadAllocatedBytes();
            for (int i = 0; i < 500; i++)
            {
                peers.reset();
                for (int k = 0; k < EngineRingLimits.MAX_PEER_KEYS_PER_LOOKUP; k++)
                {
                    final int owner = peers.addOwner(k % nodeIds.length, 7, nodeIds[k % nodeIds.length]);
                    peers.addCandidate(k, owner, KeyStatus.DRAM, k, 4096);
                }
                correlationId++;
                if (!proxy.sendKeys(ring, 1L, correlationId, LOOKUP, 0, 0, statuses, lengths, keyCount, peers) ||
                    !reader.read(ring, correlationId, keyCount, 0, keyCount, result))
                {
                    throw new AssertionError("round " + i + " of window " + window + " failed, dropped " + dropped.get());
                }
                nodeId.setLength(0);
                result.ownerNodeId(result.ownerCount() - 1, nodeId);
            }
            allocated = threads.getCurrentThreadAllocatedBytes() - before;
        }
        assertEquals(0, allocated, "bytes allocated in the last window of 500 fill/encode/decode rounds");
        assertEquals(EngineRingLimits.MAX_PEER_KEYS_PER_LOOKUP, result.candidateCount());
        assertEquals(nodeIds[31], nodeId.toString());
    }

    private static CandidateTable fullAnswer(final KeyStatus[] statuses)
    {
        final CandidateTable peers = CandidateTable.forAnswer();
        for (int i = 0; i < EngineRingLimits.MAX_PEER_OWNERS_PER_LOOKUP; i++)
        {
            assertEquals(i, peers.addOwner(i, -i, nodeId(i)));
        }
        final int firstPeerKey = statuses.length - EngineRingLimits.MAX_PEER_KEYS_PER_LOOKUP;
        for (int k = 0; k < EngineRingLimits.MAX_PEER_KEYS_PER_LOOKUP; k++)
        {
            statuses[firstPeerKey + k] = KeyStatus.PEER;
        }
        for (int c = 0; c < EngineRingLimits.MAX_CANDIDATES_PER_LOOKUP; c++)
        {
            assertTrue(peers.addCandidate(
                firstPeerKey + c / EngineRingLimits.MAX_CANDIDATES_PER_KEY, c % 32, KeyStatus.SSD, c, 1 << 20));
        }
        return peers;
    }

    private static String nodeId(final int i)
    {
        final String prefix = "node-" + i + "-";
        return prefix + "x".repeat(EngineRingLimits.MAX_NODE_ID_LENGTH - prefix.length());
    }

    private static int peekVersion(final OneToOneRingBuffer ring)
    {
        final DirectBuffer buffer = ring.buffer();
        final int head = (int)(ring.consumerPosition() & (ring.capacity() - 1));
        return buffer.getShort(head + 8 + 6, ByteOrder.LITTLE_ENDIAN) & 0xFFFF;
    }
}
