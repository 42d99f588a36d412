package io.orbitkv.manager.events;

import io.orbitkv.index.BlockStore;
import io.orbitkv.index.NamespaceTable;
import io.orbitkv.manager.port.LineageListener;
import io.orbitkv.manager.status.SystemCounters;
import org.agrona.BitUtil;
import org.agrona.BufferUtil;
import org.agrona.CloseHelper;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.EpochNanoClock;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.SystemEpochNanoClock;
import org.agrona.concurrent.SystemNanoClock;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;

/**
 * The Manager's KV-event stream for routers, in vLLM's wire format (see docs/engines.md, "KV events for routers"):
 * each tier's residency observer is wrapped so that its seals and removals also go, as fixed records, into a bounded
 * off-heap ring; a publisher agent on its own thread drains the ring, batches, encodes msgpack and sends over ZMQ.
 * <p>
 * The ring has one writer, the Manager's agent thread (every store's residency callback runs there).
 */
public final class KvEvents implements AutoCloseable
{
    /**
     * Bytes of the ring from the agent to the publisher (about 50,000 residency records of 32-byte hashes, or 12,000
     * blocks published with the lineage of 16 tokens); a full ring drops and counts.
     */
    public static final int RING_BYTES = 1 << 22;
    /** Longest the publisher parks when idle: it never spins, and a batch waits at most this past its window. */
    public static final long PUBLISHER_MAX_PARK_NS = 20_000_000L;
    /** The vLLM medium of the DRAM pool. */
    public static final String MEDIUM_DRAM = "CPU";
    /** The vLLM medium of the SSD tier. */
    public static final String MEDIUM_SSD = "STORAGE";

    private final KvEventProxy proxy;
    private final KvEventPublisher publisher;
    private final AgentRunner runner;

    /**
     * Open the sockets and start publishing ({@code AllBlocksCleared} first).
     *
     * @param endpoint       PUB endpoint, {@code tcp://HOST:PORT}: bound for a wildcard host, connected otherwise.
     * @param replayEndpoint ROUTER endpoint to bind for replays, or null.
     * @param topic          topic frame of every message.
     * @param namespaces     the Manager's namespace table (tokens per block are read from namespace names).
     * @param counters       where {@link KvEventCounter}s live.
     * @param errorHandler   the publisher thread's error handler.
     */
    public KvEvents(
        final String endpoint,
        final String replayEndpoint,
        final String topic,
        final NamespaceTable namespaces,
        final SystemCounters counters,
        final ErrorHandler errorHandler)
    {
        this(endpoint, replayEndpoint, topic, namespaces, counters, errorHandler,
            new BackoffIdleStrategy(1, 1, 1_000, PUBLISHER_MAX_PARK_NS), SystemNanoClock.INSTANCE,
            new SystemEpochNanoClock());
    }

    KvEvents(
        final String endpoint,
        final String replayEndpoint,
        final String topic,
        final NamespaceTable namespaces,
        final SystemCounters counters,
        final ErrorHandler errorHandler,
        final IdleStrategy idleStrategy,
        final NanoClock nanoClock,
        final EpochNanoClock epochClock)
    {
        final OneToOneRingBuffer ring = new OneToOneRingBuffer(new UnsafeBuffer(BufferUtil.allocateDirectAligned(
            RING_BYTES + RingBufferDescriptor.TRAILER_LENGTH, BitUtil.CACHE_LINE_LENGTH)));
        this.proxy = new KvEventProxy(ring, namespaces, counters);
        this.publisher = new KvEventPublisher(ring, endpoint, replayEndpoint, topic, counters, nanoClock, epochClock);
        this.runner = new AgentRunner(idleStrategy, errorHandler, null, publisher);
        AgentRunner.startOnThread(runner);
    }

    /**
     * @param delegate the DRAM store's observer so far (the catalog's inventory, or {@link BlockStore#NO_OP_OBSERVER}).
     * @return an observer that tells both it and the event stream, medium {@value #MEDIUM_DRAM}.
     */
    public BlockStore.ResidencyObserver dramObserver(final BlockStore.ResidencyObserver delegate)
    {
        return new KvEventObserver(delegate, proxy, KvEventRecord.MEDIUM_CPU);
    }

    /**
     * @param delegate the SSD tier's observer so far.
     * @return an observer that tells both it and the event stream, medium {@value #MEDIUM_SSD}.
     */
    public BlockStore.ResidencyObserver ssdObserver(final BlockStore.ResidencyObserver delegate)
    {
        return new KvEventObserver(delegate, proxy, KvEventRecord.MEDIUM_STORAGE);
    }

    /**
     * @return where the engine ring hands the lineage of published blocks (parent hash, token ids).
     */
    public LineageListener lineage()
    {
        return proxy;
    }

    /**
     * @return the PUB endpoint as bound (a wildcard port resolved), or as connected.
     */
    public String endpoint()
    {
        return publisher.boundEndpoint();
    }

    /**
     * @return the ROUTER endpoint as bound, or null.
     */
    public String replayEndpoint()
    {
        return publisher.boundReplayEndpoint();
    }

    /**
     * Stop the publisher: what is queued goes out, then the sockets close. Call after the Manager's agent stopped.
     */
    public void close()
    {
        CloseHelper.close(runner);
    }
}
