package io.orbitkv.bench;

import java.util.concurrent.TimeUnit;

import io.orbitkv.codecs.engine.MessageHeaderDecoder;
import io.orbitkv.codecs.engine.MessageHeaderEncoder;
import io.orbitkv.codecs.engine.RingPingDecoder;
import io.orbitkv.codecs.engine.RingPingEncoder;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.MessageHandler;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;

/** Ping-pong over the anchor rings with the same SBE header + fixed block as a small engine request. */
final class RingPinger
{
    /** Longest round trip recorded; a slower one is recorded as this. */
    static final long MAX_RTT_NS = TimeUnit.SECONDS.toNanos(10);

    private final ManyToOneRingBuffer out;
    private final OneToOneRingBuffer in;
    private final IdleStrategy idle;
    private final UnsafeBuffer buffer = new UnsafeBuffer(new byte[128]);
    private final MessageHeaderEncoder headerEncoder = new MessageHeaderEncoder();
    private final MessageHeaderDecoder headerDecoder = new MessageHeaderDecoder();
    private final RingPingEncoder encoder = new RingPingEncoder();
    private final RingPingDecoder decoder = new RingPingDecoder();
    private long correlationId;
    private long echoedCorrelationId;
    private final MessageHandler handler = this::onEcho;

    RingPinger(final ManyToOneRingBuffer out, final OneToOneRingBuffer in, final IdleStrategy idle)
    {
        this.out = out;
        this.in = in;
        this.idle = idle;
    }

    long ping()
    {
        final long id = ++correlationId;
        final long start = System.nanoTime();
        encoder.wrapAndApplyHeader(buffer, 0, headerEncoder).clientId(1).correlationId(id).sendTimeNs(start);
        final int length = MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength();
        while (!out.write(RingPingEncoder.TEMPLATE_ID, buffer, 0, length))
        {
            Thread.onSpinWait();
        }
        idle.reset();
        while (echoedCorrelationId != id)
        {
            idle.idle(in.read(handler, 1));
        }
        return Math.min(System.nanoTime() - start, MAX_RTT_NS);
    }

    private void onEcho(final int msgTypeId, final MutableDirectBuffer b, final int index, final int length)
    {
        decoder.wrapAndApplyHeader(b, index, headerDecoder);
        echoedCorrelationId = decoder.correlationId();
    }
}
