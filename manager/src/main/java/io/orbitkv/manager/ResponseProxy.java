package io.orbitkv.manager;

import io.orbitkv.codecs.EngineRingLimits;
import io.orbitkv.codecs.engine.KeyStatus;
import io.orbitkv.codecs.engine.MessageHeaderEncoder;
import io.orbitkv.codecs.engine.ResponseEncoder;
import io.orbitkv.codecs.engine.StatusCode;
import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.RingBuffer;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * Encodes the one generic {@code Response} with reusable encoders into a scratch buffer and writes it to a client's
 * response ring with a bounded retry. A response that still does not fit is dropped and counted: the Manager never
 * waits on an engine that stopped reading (its liveness timeout will reclaim it).
 */
final class ResponseProxy
{
    /** Largest response: header, root block, every key of a full batch and the longest message. */
    static final int MAX_RESPONSE_LENGTH = MessageHeaderEncoder.ENCODED_LENGTH + ResponseEncoder.BLOCK_LENGTH +
        4 + EngineRingLimits.MAX_KEYS_PER_REQUEST * 5 + 2 + 4096;

    private static final byte[] NO_MESSAGE = new byte[0];

    private final UnsafeBuffer buffer = new UnsafeBuffer(BufferUtil.allocateDirectAligned(
        org.agrona.BitUtil.findNextPositivePowerOfTwo(MAX_RESPONSE_LENGTH), 64));
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
     * @param message           US-ASCII message, or null.
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
        responseEncoder.putMessage(text, 0, text.length);
        return send(ring);
    }

    /**
     * Answer OK with one row per key of the request.
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
        final ResponseEncoder.KeysEncoder keys =
            encodeRoot(clientId, correlationId, requestTemplateId, StatusCode.OK, value, leaseId).keysCount(keyCount);
        for (int i = 0; i < keyCount; i++)
        {
            keys.next().status(statuses[i]).length(lengths[i]);
        }
        responseEncoder.putMessage(NO_MESSAGE, 0, 0);
        return send(ring);
    }

    private ResponseEncoder encodeRoot(
        final long clientId,
        final long correlationId,
        final int requestTemplateId,
        final StatusCode code,
        final long value,
        final long leaseId)
    {
        return responseEncoder.wrapAndApplyHeader(buffer, 0, headerEncoder)
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
