package io.orbitkv.bench;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

import io.orbitkv.client.EngineClient;
import io.orbitkv.client.KeyBatch;
import io.orbitkv.client.OperationResult;
import io.orbitkv.codecs.engine.KeyStatus;
import org.agrona.CloseHelper;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The engine of one Manager in the replay: for each request routed to it, a Lookup of the chain with the pin flag
 * (and the peers flag unless the mode is isolated), a Read of what was found through the lookup's leases, a check of
 * every restored byte against the contents the block's hash id implies, then a Publish of the blocks after the
 * restored prefix (written from their ids, as an engine would write the KV it recomputed). A Manager that goes away
 * (a killed process) turns its requests into recomputes until it is back, then the engine attaches again.
 */
final class ReplayEngine implements Runnable
{
    /** The engine's wait for one answer. */
    static final long RESPONSE_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(10);

    /** Marks the end of a host's queue. */
    static final ReplayTrace.Request END = new ReplayTrace.Request(-1, 0, 0, 0, new long[0]);

    private static final byte[] NAMESPACE = "bench/replay".getBytes(StandardCharsets.US_ASCII);
    private static final long GOLDEN = 0x9E3779B97F4A7C15L;

    private final int host;
    private final BenchManager manager;
    private final int blockBytes;
    private final boolean peers;
    private final BlockingQueue<ReplayTrace.Request> queue;
    private final ReplayOutcomes outcomes;
    private final KeyBatch batch = new KeyBatch(ReplayTrace.MAX_CHAIN).namespace(NAMESPACE);
    private final KeyBatch publishBatch = new KeyBatch(ReplayTrace.MAX_CHAIN).namespace(NAMESPACE);
    private final OperationResult leases = new OperationResult(ReplayTrace.MAX_CHAIN);
    private final OperationResult read = new OperationResult(ReplayTrace.MAX_CHAIN);
    private final OperationResult published = new OperationResult(ReplayTrace.MAX_CHAIN);
    private final byte[] hash = new byte[32];
    private final long regionBytes;
    private EngineClient client;
    private volatile boolean managerUp = true;
    private volatile Throwable error;

    ReplayEngine(
        final int host,
        final BenchManager manager,
        final int blockBytes,
        final int maxChain,
        final boolean peers,
        final BlockingQueue<ReplayTrace.Request> queue,
        final ReplayOutcomes outcomes)
    {
        this.host = host;
        this.manager = manager;
        this.blockBytes = blockBytes;
        this.peers = peers;
        this.queue = queue;
        this.outcomes = outcomes;
        this.regionBytes = (long)Math.max(1, maxChain) * blockBytes;
    }

    void connect()
    {
        client = EngineClient.connect(new EngineClient.Context()
            .dir(manager.dir().toString())
            .clientName("bench-replay-" + host)
            .dataRegionBytes(regionBytes)
            .responseTimeoutNs(RESPONSE_TIMEOUT_NS));
    }

    /**
     * Say whether the Manager is there; while it is not, requests are recomputed without asking it.
     *
     * @param up whether it is up (ready).
     */
    void managerUp(final boolean up)
    {
        managerUp = up;
    }

    Throwable error()
    {
        return error;
    }

    public void run()
    {
        try
        {
            while (true)
            {
                final ReplayTrace.Request request = queue.take();
                if (END == request)
                {
                    break;
                }
                serve(request);
            }
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        catch (final RuntimeException | Error ex)
        {
            error = ex;
        }
        finally
        {
            CloseHelper.quietClose(client);
        }
    }

    private void serve(final ReplayTrace.Request request)
    {
        final long[] chain = request.hashIds();
        final long startNs = System.nanoTime();
        if (null == client && managerUp)
        {
            try
            {
                connect();
            }
            catch (final RuntimeException ex)
            {
                client = null;
            }
        }
        if (null == client || !managerUp)
        {
            outcomes.record(request, host, 0, 0, 0, 0, System.nanoTime() - startNs, 0, true);
            return;
        }
        try
        {
            batch.clear();
            for (int i = 0; i < chain.length; i++)
            {
                hashOf(chain[i], hash);
                batch.addKey(hash, 0, hash.length, (long)i * blockBytes, blockBytes);
            }
            client.lookup(batch, true, peers, leases);
            if (!leases.isOk())
            {
                client.release(leases);
                outcomes.record(request, host, 0, 0, 0, 0, System.nanoTime() - startNs, 0, true);
                return;
            }
            final long lookedUpNs = System.nanoTime();
            client.read(batch, leases, peers, read);
            final long readNs = System.nanoTime();
            int dram = 0;
            int ssd = 0;
            int peer = 0;
            int restored = 0;
            final int answered = read.isOk() ? read.keyCount() : 0;
            for (; restored < answered; restored++)
            {
                final KeyStatus status = read.status(restored);
                if (KeyStatus.DRAM == status)
                {
                    dram++;
                }
                else if (KeyStatus.SSD == status)
                {
                    ssd++;
                }
                else if (KeyStatus.PEER == status)
                {
                    peer++;
                }
                else
                {
                    break;
                }
            }
            final long wrong = verify(chain, restored);
            final UnsafeBuffer region = client.dataBuffer();
            publishBatch.clear();
            for (int i = restored; i < chain.length; i++)
            {
                fill(region, (long)i * blockBytes, chain[i], blockBytes);
                hashOf(chain[i], hash);
                publishBatch.addKey(hash, 0, hash.length, (long)i * blockBytes, blockBytes);
            }
            if (publishBatch.keyCount() > 0)
            {
                client.publish(publishBatch, published);
            }
            outcomes.record(request, host, dram, ssd, peer, readNs - lookedUpNs, readNs - startNs, wrong, false);
        }
        catch (final RuntimeException ex)
        {
            // The Manager went away (or stopped answering): this request is recomputed, the next one attaches again.
            CloseHelper.quietClose(client);
            client = null;
            outcomes.record(request, host, 0, 0, 0, 0, System.nanoTime() - startNs, 0, true);
        }
    }

    private long verify(final long[] chain, final int restored)
    {
        final UnsafeBuffer region = client.dataBuffer();
        long wrong = 0;
        for (int i = 0; i < restored; i++)
        {
            final int length = read.length(i);
            final long base = (long)i * blockBytes;
            if (length != blockBytes)
            {
                wrong += blockBytes;
                continue;
            }
            final long seed = chain[i] * GOLDEN;
            for (int w = 0; w < blockBytes; w += Long.BYTES)
            {
                if (region.getLong((int)(base + w)) != word(seed, w))
                {
                    wrong += Long.BYTES;
                }
            }
        }
        return wrong;
    }

    private static void fill(final UnsafeBuffer region, final long base, final long id, final int blockBytes)
    {
        final long seed = id * GOLDEN;
        for (int w = 0; w < blockBytes; w += Long.BYTES)
        {
            region.putLong((int)(base + w), word(seed, w));
        }
    }

    static long word(final long seed, final int offset)
    {
        return (seed + offset) * 0xBF58476D1CE4E5B9L;
    }

    static void hashOf(final long id, final byte[] hash)
    {
        final ByteBuffer buffer = ByteBuffer.wrap(hash);
        long x = id;
        for (int i = 0; i < hash.length / Long.BYTES; i++)
        {
            x = (x + GOLDEN) * 0xBF58476D1CE4E5B9L;
            x ^= x >>> 29;
            buffer.putLong(i * Long.BYTES, 0 == i ? id : x);
        }
    }
}
