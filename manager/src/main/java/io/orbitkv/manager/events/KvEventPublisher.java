package io.orbitkv.manager.events;

import io.orbitkv.manager.status.SystemCounters;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.EpochNanoClock;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.MessageHandler;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.RingBuffer;
import org.agrona.concurrent.status.AtomicCounter;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;

/**
 * Drains the residency ring, remembers the lineage records ({@link KvEventLineage}), batches the residency records
 * by count ({@link #MAX_EVENTS_PER_BATCH}) and time ({@link #BATCH_WINDOW_NS}), and publishes each batch the way
 * vLLM's {@code ZmqEventPublisher} does: a ZMQ PUB multipart {@code (topic, 8-byte big-endian sequence, msgpack
 * payload)}, sequences from 0 up. The first batch is
 * {@code AllBlocksCleared}: a consumer drops what it knew of this Manager. The last {@link #REPLAY_BATCHES} batches
 * are kept for the ROUTER replay socket: a request {@code (identity, "", 8-byte start sequence)} is answered with
 * every kept batch from that sequence on, {@code (identity, "", topic, sequence, payload)} each, and then the end
 * marker {@code (identity, "", "", -1, "")}.
 * <p>
 * Runs on its own thread; the Manager's agent never waits on it (a full ring drops records, counted).
 */
final class KvEventPublisher implements Agent
{
    /** Most events in one batch. */
    static final int MAX_EVENTS_PER_BATCH = 256;
    /** Longest a record waits in a partial batch before the batch goes out. */
    static final long BATCH_WINDOW_NS = 5_000_000L;
    /** Batches kept for replay (each at most {@link #MAX_EVENTS_PER_BATCH} events, ~160 bytes an event). */
    static final int REPLAY_BATCHES = 256;
    /** Replay requests answered in one duty cycle. */
    static final int MAX_REPLAY_REQUESTS_PER_CYCLE = 4;
    /** Frames of a replay request: identity, empty delimiter, start sequence. */
    static final int REPLAY_REQUEST_FRAMES = 3;
    /** Frames read from one request before it is refused as malformed. */
    static final int MAX_REPLAY_REQUEST_FRAMES = 8;
    /** Frames of one replayed batch: identity, delimiter, topic, sequence, payload. */
    static final int REPLAY_ANSWER_FRAMES = 5;
    /**
     * What the ROUTER socket queues before it drops: the answers to one cycle's requests, every kept batch and the end
     * marker each, whether the socket counts messages or frames; past it a slow requester loses the tail of an answer.
     */
    static final int REPLAY_HIGH_WATER_MARK = MAX_REPLAY_REQUESTS_PER_CYCLE * (REPLAY_BATCHES + 1) * REPLAY_ANSWER_FRAMES;
    /** Messages the PUB socket queues for a slow subscriber before it drops (vLLM's default high-water mark). */
    static final int PUB_HIGH_WATER_MARK = 100_000;
    /** The replay answer's end marker, sequence -1. */
    static final byte[] END_SEQUENCE = {-1, -1, -1, -1, -1, -1, -1, -1};
    /** Data-parallel rank named in every batch: one Manager is one publisher. */
    static final int DATA_PARALLEL_RANK = 0;

    private static final byte[] EMPTY = new byte[0];

    private final RingBuffer ring;
    private final NanoClock nanoClock;
    private final EpochNanoClock epochClock;
    private final byte[] topic;
    private final ZContext zmq;
    private final ZMQ.Socket pub;
    private final ZMQ.Socket replay;
    private final String boundEndpoint;
    private final String boundReplayEndpoint;
    private final KvEventLineage lineage;
    private final KvEventEncoder encoder;
    private final UnsafeBuffer pending = new UnsafeBuffer(new byte[MAX_EVENTS_PER_BATCH * KvEventRecord.SLOT_LENGTH]);
    private final ArrayDeque<ReplayBatch> replayBatches = new ArrayDeque<>(REPLAY_BATCHES);
    private final byte[][] requestFrames = new byte[MAX_REPLAY_REQUEST_FRAMES][];
    private final AtomicCounter batchesSent;
    private final AtomicCounter eventsSent;
    private final AtomicCounter replaysServed;
    private final AtomicCounter replaysRefused;
    private final AtomicCounter sendFailures;
    private final MessageHandler recordHandler = this::onRecord;
    private int pendingCount;
    private long firstPendingNs;
    private long nextSequence;
    private boolean clearSent;

    /**
     * @param ring           the residency ring the Manager's agent writes.
     * @param endpoint       PUB endpoint: bound when it has a wildcard host ({@code *} or {@code ::}) or is ipc/inproc,
     *                       connected otherwise (vLLM's rule, so a router that binds can be pointed at).
     * @param replayEndpoint ROUTER endpoint, always bound; null for none.
     * @param topic          topic frame of every message.
     * @param counters       where {@link KvEventCounter}s live.
     * @param nanoClock      batching clock.
     * @param epochClock     the batches' {@code ts}.
     */
    KvEventPublisher(
        final RingBuffer ring,
        final String endpoint,
        final String replayEndpoint,
        final String topic,
        final SystemCounters counters,
        final NanoClock nanoClock,
        final EpochNanoClock epochClock)
    {
        this.ring = ring;
        this.nanoClock = nanoClock;
        this.epochClock = epochClock;
        this.topic = topic.getBytes(StandardCharsets.UTF_8);
        this.batchesSent = counters.get(KvEventCounter.BATCHES_SENT);
        this.eventsSent = counters.get(KvEventCounter.EVENTS_SENT);
        this.replaysServed = counters.get(KvEventCounter.REPLAY_REQUESTS_SERVED);
        this.replaysRefused = counters.get(KvEventCounter.REPLAY_REQUESTS_REFUSED);
        this.sendFailures = counters.get(KvEventCounter.SEND_FAILURES);
        this.lineage = new KvEventLineage(counters.get(KvEventCounter.LINEAGE_EVICTED), KvEventLineage.MAX_BYTES);
        this.encoder = new KvEventEncoder(lineage);
        this.zmq = new ZContext(1);
        try
        {
            pub = zmq.createSocket(SocketType.PUB);
            pub.setSndHWM(PUB_HIGH_WATER_MARK);
            pub.setLinger(0);
            if (isBindEndpoint(endpoint))
            {
                pub.bind(endpoint);
                boundEndpoint = pub.getLastEndpoint();
            }
            else
            {
                pub.connect(endpoint);
                boundEndpoint = endpoint;
            }
            if (null != replayEndpoint)
            {
                replay = zmq.createSocket(SocketType.ROUTER);
                replay.setLinger(0);
                replay.setSndHWM(REPLAY_HIGH_WATER_MARK);
                replay.bind(replayEndpoint);
                boundReplayEndpoint = replay.getLastEndpoint();
            }
            else
            {
                replay = null;
                boundReplayEndpoint = null;
            }
        }
        catch (final RuntimeException ex)
        {
            zmq.close();
            throw new IllegalStateException("cannot open the KV event sockets (" + endpoint + ", replay " +
                replayEndpoint + "): " + ex.getMessage(), ex);
        }
    }

    static boolean isBindEndpoint(final String endpoint)
    {
        return endpoint.contains("*") || endpoint.contains("::") ||
            endpoint.startsWith("ipc://") || endpoint.startsWith("inproc://");
    }

    public String roleName()
    {
        return "orbitkv-kv-events";
    }

    public int doWork()
    {
        final long nowNs = nanoClock.nanoTime();
        int work = 0;
        if (!clearSent)
        {
            clearSent = true;
            send(nowNs, true);
            work++;
        }
        final int pendingBefore = pendingCount;
        work += ring.read(recordHandler, MAX_EVENTS_PER_BATCH - pendingCount);
        if (0 == pendingBefore && pendingCount > 0)
        {
            firstPendingNs = nowNs;
        }
        if (MAX_EVENTS_PER_BATCH == pendingCount || (pendingCount > 0 && nowNs - firstPendingNs >= BATCH_WINDOW_NS))
        {
            send(nowNs, false);
            work++;
        }
        if (null != replay)
        {
            work += serveReplays();
        }
        return work;
    }

    public void onClose()
    {
        // What the agent queued before the Manager stopped it still goes out, once.
        ring.read(recordHandler, MAX_EVENTS_PER_BATCH - pendingCount);
        if (pendingCount > 0)
        {
            send(nanoClock.nanoTime(), false);
        }
        zmq.close();
    }

    String boundEndpoint()
    {
        return boundEndpoint;
    }

    String boundReplayEndpoint()
    {
        return boundReplayEndpoint;
    }

    private void onRecord(final int op, final MutableDirectBuffer buffer, final int index, final int length)
    {
        if (KvEventRecord.OP_LINEAGE == op)
        {
            // Written when the Publish reserved the block, so ahead of the block's seal on this ring.
            lineage.put(buffer, index);
            return;
        }
        final int slot = pendingCount * KvEventRecord.SLOT_LENGTH;
        pending.putInt(slot + KvEventRecord.SLOT_OP_OFFSET, op);
        pending.putBytes(slot + KvEventRecord.SLOT_BODY_OFFSET, buffer, index,
            Math.min(length, KvEventRecord.MAX_LENGTH));
        pendingCount++;
    }

    private void send(final long nowNs, final boolean clearAll)
    {
        final byte[] payload = encoder.encode(epochClock.nanoTime(), clearAll, pending, pendingCount, DATA_PARALLEL_RANK);
        final long sequence = nextSequence++;
        final byte[] sequenceBytes = sequenceBytes(sequence);
        final boolean sent = pub.sendMore(topic) && pub.sendMore(sequenceBytes) && pub.send(payload, ZMQ.DONTWAIT);
        if (sent)
        {
            batchesSent.incrementRelease();
            eventsSent.getAndAddRelease(pendingCount + (clearAll ? 1 : 0));
        }
        else
        {
            sendFailures.incrementRelease();
        }
        if (REPLAY_BATCHES == replayBatches.size())
        {
            replayBatches.pollFirst();
        }
        replayBatches.addLast(new ReplayBatch(sequence, sequenceBytes, payload));
        pendingCount = 0;
    }

    private int serveReplays()
    {
        int served = 0;
        while (served < MAX_REPLAY_REQUESTS_PER_CYCLE)
        {
            final byte[] identity = replay.recv(ZMQ.DONTWAIT);
            if (null == identity)
            {
                break;
            }
            served++;
            int frames = 0;
            requestFrames[frames++] = identity;
            boolean truncated = false;
            while (replay.hasReceiveMore())
            {
                final byte[] frame = replay.recv(0);
                if (frames < MAX_REPLAY_REQUEST_FRAMES)
                {
                    requestFrames[frames++] = frame;
                }
                else
                {
                    truncated = true;
                }
            }
            if (truncated || REPLAY_REQUEST_FRAMES != frames || 0 != requestFrames[1].length ||
                Long.BYTES != requestFrames[2].length)
            {
                replaysRefused.incrementRelease();
                continue;
            }
            answerReplay(identity, startSequence(requestFrames[2]));
        }
        return served;
    }

    private void answerReplay(final byte[] identity, final long startSequence)
    {
        for (final ReplayBatch batch : replayBatches)
        {
            if (batch.sequence() >= startSequence)
            {
                replay.sendMore(identity);
                replay.sendMore(EMPTY);
                replay.sendMore(topic);
                replay.sendMore(batch.sequenceBytes());
                replay.send(batch.payload(), ZMQ.DONTWAIT);
            }
        }
        replay.sendMore(identity);
        replay.sendMore(EMPTY);
        replay.sendMore(EMPTY);
        replay.sendMore(END_SEQUENCE);
        replay.send(EMPTY, ZMQ.DONTWAIT);
        replaysServed.incrementRelease();
    }

    static byte[] sequenceBytes(final long sequence)
    {
        final byte[] bytes = new byte[Long.BYTES];
        for (int i = 0; i < Long.BYTES; i++)
        {
            bytes[i] = (byte)(sequence >>> (56 - 8 * i));
        }
        return bytes;
    }

    static long startSequence(final byte[] bytes)
    {
        long value = 0;
        for (final byte b : bytes)
        {
            value = (value << 8) | (b & 0xFF);
        }
        return value;
    }

    private record ReplayBatch(long sequence, byte[] sequenceBytes, byte[] payload)
    {
    }
}
