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

/**
 * Ping-pong over the anchor rings with the same SBE header + fixed block as a small engine request, or padded to the
 * size of a bigger one: the frame then carries, right after the fixed block, the length the responder answers with
 * (e.g. a 64-key Lookup out and its answer back), see {@link BenchRingEchoCommand}.
 */
final class RingPinger
{
    /** Longest round trip recorded; a slower one is recorded as this. */
    static final long MAX_RTT_NS = TimeUnit.SECONDS.toNanos(10);

    private final ManyToOneRingBuffer out;
    private final OneToOneRingBuffer in;
    private final IdleStrategy idle;
    private final UnsafeBuffer buffer;
    private final int frameBytes;
    private final int replyBytes;
    private final MessageHeaderEncoder headerEncoder = new MessageHeaderEncoder();
    private final MessageHeaderDecoder headerDecoder = new MessageHeaderDecoder();
    private final RingPingEncoder encoder = new RingPingEncoder();
    private final RingPingDecoder decoder = new RingPingDecoder();
    private long correlationId;
    private long echoedCorrelationId;
    private final MessageHandler handler = this::onEcho;

    RingPinger(final ManyToOneRingBuffer out, final OneToOneRingBuffer in, final IdleStrategy idle)
    {
        this(out, in, idle, 0, 0);
    }

    /**
     * @param frameBytes bytes of each ping (0: the bare header and fixed block).
     * @param replyBytes bytes of each answer (0: the ping echoed whole).
     */
    RingPinger(
        final ManyToOneRingBuffer out,
        final OneToOneRingBuffer in,
        final IdleStrategy idle,
        final int frameBytes,
        final int replyBytes)
    {
        this.out = out;
        this.in = in;
        this.idle = idle;
        final int bare = MessageHeaderEncoder.ENCODED_LENGTH + RingPingEncoder.BLOCK_LENGTH;
        this.frameBytes = Math.max(bare, frameBytes);
        this.replyBytes = replyBytes;
        if (replyBytes > 0 && (this.frameBytes < BenchRingEchoCommand.REPLY_LENGTH_END || replyBytes < bare))
        {
            throw new IllegalArgumentException("a ping with a reply length needs " +
                BenchRingEchoCommand.REPLY_LENGTH_END + "+ bytes and a reply of " + bare + "+: " + frameBytes + ", " +
                replyBytes);
        }
        this.buffer = new UnsafeBuffer(new byte[Math.max(128, this.frameBytes)]);
    }

    long ping()
    {
        final long id = ++correlationId;
        final long start = System.nanoTime();
        encoder.wrapAndApplyHeader(buffer, 0, headerEncoder).clientId(1).correlationId(id).sendTimeNs(start);
        if (replyBytes > 0)
        {
            buffer.putInt(BenchRingEchoCommand.REPLY_LENGTH_OFFSET, replyBytes);
        }
        while (!out.write(RingPingEncoder.TEMPLATE_ID, buffer, 0, frameBytes))
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
