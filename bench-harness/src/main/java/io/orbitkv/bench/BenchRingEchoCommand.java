package io.orbitkv.bench;

import java.io.File;
import java.nio.MappedByteBuffer;
import java.util.concurrent.Callable;

import io.orbitkv.codecs.engine.MessageHeaderEncoder;
import io.orbitkv.codecs.engine.RingPingEncoder;
import io.orbitkv.manager.Configuration;
import org.agrona.IoUtil;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The bare-ring anchor's far end: the same two ring types the engine ring uses (many-to-one in, one-to-one out),
 * in a file of their own, with the Manager's idle strategy, echoing every message verbatim. Whatever the engine
 * ring costs beyond this is the Manager's decoding, lookup and encoding.
 */
@Command(name = "ring-echo", hidden = true, description = "Anchor for bench local: echo frames between two shm rings.")
public final class BenchRingEchoCommand implements Callable<Integer>
{
    static final int RING_CAPACITY = 64 * 1024;
    static final int RING_LENGTH = RING_CAPACITY + RingBufferDescriptor.TRAILER_LENGTH;
    static final int READY_OFFSET = 0;
    static final int HEADER_LENGTH = 4096;

    /**
     * Where a padded ping carries the length to answer with: the int right after the SBE header and RingPing's fixed
     * block. A ping no longer than {@link #REPLY_LENGTH_END} is echoed whole.
     */
    static final int REPLY_LENGTH_OFFSET = MessageHeaderEncoder.ENCODED_LENGTH + RingPingEncoder.BLOCK_LENGTH;

    /** End of the reply length in a padded ping. */
    static final int REPLY_LENGTH_END = REPLY_LENGTH_OFFSET + Integer.BYTES;
    static final int FILE_LENGTH = HEADER_LENGTH + 2 * RING_LENGTH;

    @Option(names = "--file", required = true, description = "Ring file to create.")
    private File file;

    @Option(names = "--idle-strategy", defaultValue = Configuration.IDLE_STRATEGY_DEFAULT,
        description = "As the Manager's --idle-strategy (default ${DEFAULT-VALUE}).")
    private String idleStrategyName;

    public Integer call()
    {
        final MappedByteBuffer mapped = IoUtil.mapNewFile(file, FILE_LENGTH);
        try
        {
            final UnsafeBuffer header = new UnsafeBuffer(mapped, 0, HEADER_LENGTH);
            final ManyToOneRingBuffer in = new ManyToOneRingBuffer(new UnsafeBuffer(mapped, HEADER_LENGTH, RING_LENGTH));
            final OneToOneRingBuffer out = new OneToOneRingBuffer(
                new UnsafeBuffer(mapped, HEADER_LENGTH + RING_LENGTH, RING_LENGTH));
            final IdleStrategy idle = Configuration.newIdleStrategy(idleStrategyName);
            header.putIntRelease(READY_OFFSET, 1);
            final org.agrona.concurrent.MessageHandler echo = (msgTypeId, buffer, index, length) ->
            {
                final int reply = length < REPLY_LENGTH_END ? length :
                    Math.min(length, Math.max(REPLY_LENGTH_OFFSET, buffer.getInt(index + REPLY_LENGTH_OFFSET)));
                while (!out.write(msgTypeId, buffer, index, reply))
                {
                    Thread.onSpinWait();
                }
            };
            while (!Thread.currentThread().isInterrupted() && header.getIntVolatile(READY_OFFSET) == 1)
            {
                idle.idle(in.read(echo));
            }
            return 0;
        }
        finally
        {
            IoUtil.unmap(mapped);
        }
    }
}
