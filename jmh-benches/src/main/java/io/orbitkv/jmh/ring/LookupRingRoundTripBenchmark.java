package io.orbitkv.jmh.ring;

import io.orbitkv.codecs.engine.KeyStatus;
import io.orbitkv.codecs.engine.LookupRequestDecoder;
import io.orbitkv.codecs.engine.LookupRequestEncoder;
import io.orbitkv.codecs.engine.MessageHeaderDecoder;
import io.orbitkv.codecs.engine.MessageHeaderEncoder;
import io.orbitkv.codecs.engine.ResponseDecoder;
import io.orbitkv.codecs.engine.ResponseEncoder;
import io.orbitkv.codecs.engine.StatusCode;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.agrona.BufferUtil;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.MessageHandler;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The engine ring's codec path for a 64-key Lookup, single-threaded so it measures codec and ring cost only: encode
 * the request, write it to an in-memory request ring, read and decode it (every key's hash), encode the 64-row
 * Response, write it to a response ring, read and decode it. Expect {@code gc.alloc.rate.norm} ~ 0 B/op.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class LookupRingRoundTripBenchmark
{
    static final int KEYS = 64;
    static final int HASH_BYTES = 32;
    static final int RING_CAPACITY = 64 * 1024;

    private final UnsafeBuffer scratch = new UnsafeBuffer(BufferUtil.allocateDirectAligned(16 * 1024, 64));
    private final UnsafeBuffer hashes = new UnsafeBuffer(BufferUtil.allocateDirectAligned(KEYS * HASH_BYTES, 64));
    private final byte[] namespace = "model=llama-3-8b;dtype=bf16;layout=vllm-paged;block=16;tp=1"
        .getBytes(StandardCharsets.US_ASCII);
    private final MessageHeaderEncoder headerEncoder = new MessageHeaderEncoder();
    private final LookupRequestEncoder lookupEncoder = new LookupRequestEncoder();
    private final ResponseEncoder responseEncoder = new ResponseEncoder();

    private final RequestSide requestSide = new RequestSide();
    private final ResponseSide responseSide = new ResponseSide();

    private OneToOneRingBuffer requestRing;
    private OneToOneRingBuffer responseRing;
    private long correlationId;

    /**
     * Decodes a Lookup from the request ring and answers it (what the Manager's adapter and proxy do).
     */
    final class RequestSide implements MessageHandler
    {
        private final MessageHeaderDecoder headerDecoder = new MessageHeaderDecoder();
        private final LookupRequestDecoder decoder = new LookupRequestDecoder();
        private final UnsafeBuffer hashView = new UnsafeBuffer(0, 0);

        public void onMessage(final int msgTypeId, final MutableDirectBuffer buffer, final int index, final int length)
        {
            headerDecoder.wrap(buffer, index);
            decoder.wrap(buffer, index + MessageHeaderDecoder.ENCODED_LENGTH, headerDecoder.blockLength(),
                headerDecoder.version());
            final long clientId = decoder.clientId();
            final long requestCorrelationId = decoder.correlationId();
            final boolean pin = decoder.flags().pin();
            int hashBytes = 0;
            final LookupRequestDecoder.KeysDecoder keys = decoder.keys();
            final int count = keys.count();
            for (int i = 0; i < count; i++)
            {
                keys.next().wrapHash(hashView);
                hashBytes += hashView.getByte(0) & 1;
                hashBytes += hashView.capacity();
            }
            final int namespaceLength = decoder.keyNamespaceLength();
            decoder.skipKeyNamespace();

            final ResponseEncoder.KeysEncoder rows = responseEncoder.wrapAndApplyHeader(scratch, 0, headerEncoder)
                .clientId(clientId)
                .correlationId(requestCorrelationId)
                .requestTemplateId(LookupRequestDecoder.TEMPLATE_ID)
                .code(StatusCode.OK)
                .value(count)
                .leaseId(pin ? 1 : 0)
                .keysCount(count);
            for (int i = 0; i < count; i++)
            {
                rows.next().status(KeyStatus.DRAM).length(hashBytes + namespaceLength);
            }
            // as the Manager's ResponseProxy: an answer without peer candidates is a version-1 frame (no peer groups)
            headerEncoder.version(1);
            responseEncoder.putMessage(scratch, 0, 0);
            responseRing.write(ResponseEncoder.TEMPLATE_ID, scratch, 0,
                MessageHeaderEncoder.ENCODED_LENGTH + responseEncoder.encodedLength());
        }
    }

    /**
     * Decodes the Response (what the engine client does).
     */
    static final class ResponseSide implements MessageHandler
    {
        private final MessageHeaderDecoder headerDecoder = new MessageHeaderDecoder();
        private final ResponseDecoder decoder = new ResponseDecoder();
        long checksum;

        public void onMessage(final int msgTypeId, final MutableDirectBuffer buffer, final int index, final int length)
        {
            headerDecoder.wrap(buffer, index);
            decoder.wrap(buffer, index + MessageHeaderDecoder.ENCODED_LENGTH, headerDecoder.blockLength(),
                headerDecoder.version());
            long sum = decoder.correlationId() + decoder.value() + decoder.code().value();
            final ResponseDecoder.KeysDecoder rows = decoder.keys();
            final int count = rows.count();
            for (int i = 0; i < count; i++)
            {
                rows.next();
                sum += rows.status().value() + rows.length();
            }
            // the peer groups (schema version 2) come before the message; a version-1 frame reads them as empty
            sum += decoder.owners().count();
            sum += decoder.candidates().count();
            sum += decoder.messageLength();
            decoder.skipMessage();
            checksum = sum;
        }
    }

    @Setup
    public void setUp()
    {
        requestRing = new OneToOneRingBuffer(new UnsafeBuffer(
            BufferUtil.allocateDirectAligned(RING_CAPACITY + RingBufferDescriptor.TRAILER_LENGTH, 64)));
        responseRing = new OneToOneRingBuffer(new UnsafeBuffer(
            BufferUtil.allocateDirectAligned(RING_CAPACITY + RingBufferDescriptor.TRAILER_LENGTH, 64)));
        for (int i = 0; i < KEYS * HASH_BYTES; i++)
        {
            hashes.putByte(i, (byte)(i * 31 + 7));
        }
    }

    @Benchmark
    public long lookup64KeysRoundTrip()
    {
        final UnsafeBuffer request = scratch;
        lookupEncoder.wrapAndApplyHeader(request, 0, headerEncoder)
            .clientId(42L << 32 | 3)
            .correlationId(++correlationId)
            .flags().clear().pin(true);
        final LookupRequestEncoder.KeysEncoder keys = lookupEncoder.keysCount(KEYS);
        for (int i = 0; i < KEYS; i++)
        {
            keys.next().putHash(hashes, i * HASH_BYTES, HASH_BYTES);
        }
        lookupEncoder.putKeyNamespace(namespace, 0, namespace.length);
        if (!requestRing.write(LookupRequestEncoder.TEMPLATE_ID, request, 0,
            MessageHeaderEncoder.ENCODED_LENGTH + lookupEncoder.encodedLength()))
        {
            throw new IllegalStateException("request ring full");
        }

        // A read stops at the ring's end: when a frame wrapped, the first read only consumes the padding.
        while (0 == requestRing.read(requestSide, 1))
        {
            Thread.onSpinWait();
        }
        while (0 == responseRing.read(responseSide, 1))
        {
            Thread.onSpinWait();
        }
        return responseSide.checksum;
    }

    /** Request and response frame lengths of the codec path, so the anchor moves exactly as many bytes. */
    private int anchorRequestLength;
    private int anchorResponseLength;
    private final MessageHandler anchorRequestSide = (msgTypeId, buffer, index, length) ->
        responseRing.write(ResponseEncoder.TEMPLATE_ID, buffer, index, anchorResponseLength);
    private final MessageHandler anchorResponseSide = (msgTypeId, buffer, index, length) ->
        responseSide.checksum = buffer.getLong(index) + length;

    /**
     * Anchor for {@link #lookup64KeysRoundTrip()}: the same rings and the same frame lengths, bytes copied in and out
     * with no SBE encoding or decoding. The difference is what the codecs cost.
     *
     * @return a value depending on the bytes read back.
     */
    @Benchmark
    public long anchorRawFramesRoundTrip()
    {
        if (0 == anchorRequestLength)
        {
            lookup64KeysRoundTrip();
            anchorRequestLength = MessageHeaderEncoder.ENCODED_LENGTH + lookupEncoder.encodedLength();
            anchorResponseLength = MessageHeaderEncoder.ENCODED_LENGTH + responseEncoder.encodedLength();
        }
        scratch.putLong(0, ++correlationId);
        if (!requestRing.write(LookupRequestEncoder.TEMPLATE_ID, scratch, 0, anchorRequestLength))
        {
            throw new IllegalStateException("request ring full");
        }
        while (0 == requestRing.read(anchorRequestSide, 1))
        {
            Thread.onSpinWait();
        }
        while (0 == responseRing.read(anchorResponseSide, 1))
        {
            Thread.onSpinWait();
        }
        return responseSide.checksum;
    }
}
