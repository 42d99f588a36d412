package io.orbitkv.manager.ring;

import io.orbitkv.codecs.CandidateTable;
import io.orbitkv.codecs.EngineRingLimits;
import io.orbitkv.codecs.engine.FailureReason;
import io.orbitkv.codecs.engine.KeyStatus;
import io.orbitkv.codecs.engine.MessageHeaderEncoder;
import io.orbitkv.codecs.engine.ResponseEncoder;
import io.orbitkv.codecs.engine.StatusCode;
import io.orbitkv.manager.Configuration;
import org.agrona.BitUtil;
import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.RingBuffer;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * Encodes the one generic {@code Response} with reusable encoders into a scratch buffer and writes it to a client's
 * response ring with a bounded retry. A response that still does not fit is dropped and counted: the Manager never
 * waits on an engine that stopped reading (its liveness timeout will reclaim it).
 *
 * <p>Versions: an answer is written at the lowest schema version that carries it. Without peer candidates that is
 * version 1 (no owners/candidates groups on the wire), which every client decodes, a version-2 decoder reading the
 * groups as empty; with candidates it is version 2, which only a client that set the Lookup {@code peers} flag gets.
 */
final class ResponseProxy
{
    /** Largest response: header, root block, every key of a full batch, every peer owner and candidate, longest message. */
    static final int MAX_RESPONSE_LENGTH = EngineRingLimits.MAX_RESPONSE_BYTES;

    /** The schema version of an answer without peer candidates. */
    static final int LOCAL_ANSWER_VERSION = 1;

    /** The schema version of an answer with peer candidates. */
    static final int PEER_ANSWER_VERSION = 2;

    /** The schema version of an answer with a FAILED row. */
    static final int FAILED_ANSWER_VERSION = 3;

    /** The schema version of a Prepare's answer, the only one with the slots group. */
    static final int SLOTS_ANSWER_VERSION = 4;

    private static final byte[] NO_MESSAGE = new byte[0];

    private final UnsafeBuffer buffer = new UnsafeBuffer(BufferUtil.allocateDirectAligned(
        BitUtil.findNextPositivePowerOfTwo(MAX_RESPONSE_LENGTH), 64));
    private final MessageHeaderEncoder headerEncoder = new MessageHeaderEncoder();
    private final ResponseEncoder responseEncoder = new ResponseEncoder();
    private final AtomicCounter responsesDropped;

    ResponseProxy(final AtomicCounter responsesDropped)
    {
        this.responsesDropped = responsesDropped;
    }

    /**
     * Answer with a status and no per-key rows.
     *
     * @param ring              the client's response ring.
     * @param clientId          client id (0 for a failed attach).
     * @param correlationId     the request's correlation id.
     * @param requestTemplateId template id of the request answered.
     * @param code              status.
     * @param value             see the schema: client id, prefix length, blocks stored or restored.
     * @param message           US-ASCII message, or null; only its first {@code MAX_MESSAGE_LENGTH} bytes are sent.
     * @return true if written.
     */
    boolean sendStatus(
        final RingBuffer ring,
        final long clientId,
        final long correlationId,
        final int requestTemplateId,
        final StatusCode code,
        final long value,
        final byte[] message)
    {
        final byte[] text = null == message ? NO_MESSAGE : message;
        encodeRoot(clientId, correlationId, requestTemplateId, code, value, 0L).keysCount(0);
        responseEncoder.putMessage(text, 0, Math.min(text.length, EngineRingLimits.MAX_MESSAGE_LENGTH));
        return send(ring);
    }

    /**
     * Answer OK with one row per key of the request and no peer candidates.
     *
     * @param ring              the client's response ring.
     * @param clientId          client id.
     * @param correlationId     the request's correlation id.
     * @param requestTemplateId template id of the request answered.
     * @param value             prefix length / blocks stored / blocks restored.
     * @param leaseId           lease of a pinned lookup, else 0.
     * @param statuses          per-key status.
     * @param lengths           per-key block length (0 where unknown).
     * @param keyCount          number of rows.
     * @return true if written.
     */
    boolean sendKeys(
        final RingBuffer ring,
        final long clientId,
        final long correlationId,
        final int requestTemplateId,
        final long value,
        final long leaseId,
        final KeyStatus[] statuses,
        final int[] lengths,
        final int keyCount)
    {
        return sendKeys(ring, clientId, correlationId, requestTemplateId, value, leaseId, statuses, lengths, keyCount, null);
    }

    /**
     * Answer OK with one row per key of the request and, for a Lookup with the {@code peers} flag, the owners and
     * candidates of its {@code PEER} keys. Owners are written before candidates, so a one-pass decoder knows every
     * owner a candidate points at. Candidates whose key index is not below {@code keyCount} are not sent (they are
     * in key order, so those are the tail).
     *
     * @param ring              the client's response ring.
     * @param clientId          client id.
     * @param correlationId     the request's correlation id.
     * @param requestTemplateId template id of the request answered.
     * @param value             prefix length / blocks stored / blocks restored.
     * @param leaseId           lease of a pinned lookup, else 0.
     * @param statuses          per-key status ({@code PEER} for the keys the candidates cover).
     * @param lengths           per-key block length (0 where unknown).
     * @param keyCount          number of rows.
     * @param peers             the peer part of the answer; null or empty for a plain (version 1) answer.
     * @return true if written.
     */
    boolean sendKeys(
        final RingBuffer ring,
        final long clientId,
        final long correlationId,
        final int requestTemplateId,
        final long value,
        final long leaseId,
        final KeyStatus[] statuses,
        final int[] lengths,
        final int keyCount,
        final CandidateTable peers)
    {
        return sendKeys(ring, clientId, correlationId, requestTemplateId, value, leaseId, statuses, lengths, null,
            keyCount, peers);
    }

    /**
     * As {@link #sendKeys(RingBuffer, long, long, int, long, long, KeyStatus[], int[], int, CandidateTable)}, with the
     * reason of each {@code FAILED} row. The frame's version is the lowest that carries the answer: 1 for local rows,
     * 2 with candidates, 3 with a {@code FAILED} row.
     *
     * @param reasons per-key reason, or null when no row failed.
     */
    boolean sendKeys(
        final RingBuffer ring,
        final long clientId,
        final long correlationId,
        final int requestTemplateId,
        final long value,
        final long leaseId,
        final KeyStatus[] statuses,
        final int[] lengths,
        final FailureReason[] reasons,
        final int keyCount,
        final CandidateTable peers)
    {
        final ResponseEncoder.KeysEncoder keys =
            encodeRoot(clientId, correlationId, requestTemplateId, StatusCode.OK, value, leaseId).keysCount(keyCount);
        int version = LOCAL_ANSWER_VERSION;
        for (int i = 0; i < keyCount; i++)
        {
            final KeyStatus status = statuses[i];
            final FailureReason reason = null == reasons || KeyStatus.FAILED != status ? FailureReason.NONE : reasons[i];
            keys.next().status(status).length(lengths[i]).reason(reason);
            if (KeyStatus.FAILED == status)
            {
                version = FAILED_ANSWER_VERSION;
            }
        }
        final int candidateCount = null == peers ? 0 : candidatesBelow(peers, keyCount);
        if (candidateCount > 0)
        {
            version = Math.max(version, PEER_ANSWER_VERSION);
            encodePeers(peers, candidateCount);
        }
        else if (version > PEER_ANSWER_VERSION)
        {
            // A version 3 frame has the peer groups, empty here.
            responseEncoder.ownersCount(0);
            responseEncoder.candidatesCount(0);
        }
        headerEncoder.version(version);
        responseEncoder.putMessage(NO_MESSAGE, 0, 0);
        return send(ring);
    }

    /**
     * The answer to a Prepare (schema version 4): per key its status ({@code RESERVED}, {@code ALREADY_RESIDENT} or
     * {@code NO_SPACE}) and block length, and in the slots group the pool offset of each reserved slot (-1 for the
     * other keys).
     *
     * @return true if written.
     */
    boolean sendSlots(
        final RingBuffer ring,
        final long clientId,
        final long correlationId,
        final int requestTemplateId,
        final long reserved,
        final KeyStatus[] statuses,
        final int[] lengths,
        final long[] poolOffsets,
        final int keyCount)
    {
        final ResponseEncoder.KeysEncoder keys =
            encodeRoot(clientId, correlationId, requestTemplateId, StatusCode.OK, reserved, 0L).keysCount(keyCount);
        for (int i = 0; i < keyCount; i++)
        {
            keys.next().status(statuses[i]).length(lengths[i]).reason(FailureReason.NONE);
        }
        responseEncoder.ownersCount(0);
        responseEncoder.candidatesCount(0);
        final ResponseEncoder.SlotsEncoder slots = responseEncoder.slotsCount(keyCount);
        for (int i = 0; i < keyCount; i++)
        {
            slots.next().poolOffset(poolOffsets[i]);
        }
        headerEncoder.version(SLOTS_ANSWER_VERSION);
        responseEncoder.putMessage(NO_MESSAGE, 0, 0);
        return send(ring);
    }

    private void encodePeers(final CandidateTable peers, final int candidateCount)
    {
        final int ownerCount = peers.ownerCount();
        final byte[] nodeIds = peers.ownerNodeIdBytes();
        final ResponseEncoder.OwnersEncoder owners = responseEncoder.ownersCount(ownerCount);
        for (int i = 0; i < ownerCount; i++)
        {
            owners.next()
                .runtimeUuidMsb(peers.ownerRuntimeUuidMsb(i))
                .runtimeUuidLsb(peers.ownerRuntimeUuidLsb(i))
                .putNodeId(nodeIds, i * EngineRingLimits.MAX_NODE_ID_LENGTH, peers.ownerNodeIdLength(i));
        }
        final ResponseEncoder.CandidatesEncoder candidates = responseEncoder.candidatesCount(candidateCount);
        for (int i = 0; i < candidateCount; i++)
        {
            candidates.next()
                .keyIndex(peers.candidateKeyIndex(i))
                .ownerIndex(peers.candidateOwnerIndex(i))
                .tier(peers.candidateTier(i))
                .insertionSequence(peers.candidateInsertionSequence(i))
                .length(peers.candidateLength(i));
        }
    }

    private static int candidatesBelow(final CandidateTable peers, final int keyCount)
    {
        int count = peers.candidateCount();
        while (count > 0 && peers.candidateKeyIndex(count - 1) >= keyCount)
        {
            count--;
        }
        return count;
    }

    private ResponseEncoder encodeRoot(
        final long clientId,
        final long correlationId,
        final int requestTemplateId,
        final StatusCode code,
        final long value,
        final long leaseId)
    {
        responseEncoder.wrapAndApplyHeader(buffer, 0, headerEncoder);
        // design: answers without peer candidates stay version 1 so that version-1 clients decode them.
        headerEncoder.version(LOCAL_ANSWER_VERSION);
        return responseEncoder
            .clientId(clientId)
            .correlationId(correlationId)
            .requestTemplateId(requestTemplateId)
            .code(code)
            .value(value)
            .leaseId(leaseId);
    }

    private boolean send(final RingBuffer ring)
    {
        final int length = MessageHeaderEncoder.ENCODED_LENGTH + responseEncoder.encodedLength();
        for (int attempt = 0; attempt < Configuration.RESPONSE_WRITE_ATTEMPTS; attempt++)
        {
            if (ring.write(ResponseEncoder.TEMPLATE_ID, buffer, 0, length))
            {
                return true;
            }
            Thread.onSpinWait();
        }
        responsesDropped.increment();
        return false;
    }
}
