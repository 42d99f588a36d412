package io.orbitkv.client;

import io.orbitkv.codecs.engine.StatusCode;
import org.agrona.concurrent.ringbuffer.RingBuffer;

/**
 * Test seam: the engine client's own response decoding ({@link ResponseHandler}, package-private) driven over a ring
 * that a Manager-side encoder wrote, so that Manager tests can round-trip answers through the real client decoder.
 */
public final class ClientResponseReader
{
    private final ResponseHandler handler = new ResponseHandler();

    /**
     * Read the answer with the given correlation id into a result, as {@code EngineClient} does for one request whose
     * keys start at {@code keyBase} of the batch.
     *
     * @param ring          the response ring.
     * @param correlationId the answer to wait for (others are dropped).
     * @param batchKeys     keys of the whole batch; the result is reset to it.
     * @param keyBase       batch index of the request's first key.
     * @param keyCount      keys of the request.
     * @param result        the result to fill.
     * @return true if the answer was found on the ring.
     */
    public boolean read(
        final RingBuffer ring,
        final long correlationId,
        final int batchKeys,
        final int keyBase,
        final int keyCount,
        final OperationResult result)
    {
        result.reset(batchKeys);
        handler.expect(correlationId, result, keyBase, keyCount);
        // a read can return nothing but the padding of a message that wrapped: poll a few times, as the client does
        for (int attempt = 0; attempt < 4 && !handler.received; attempt++)
        {
            ring.read(handler, 16);
        }
        if (handler.received && handler.code == StatusCode.OK)
        {
            result.addValue(handler.value);
        }
        return handler.received;
    }
}
