package io.orbitkv.bench;

import static io.orbitkv.bench.CatalogBench.AWAIT_NS;
import static io.orbitkv.bench.CatalogBench.HASH_LENGTH;
import static io.orbitkv.bench.CatalogBench.HOSTS;
import static io.orbitkv.bench.CatalogBench.NAMESPACE;
import static io.orbitkv.bench.CatalogBench.QUERY_KEYS;

import java.io.PrintWriter;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import io.orbitkv.codecs.StateKeyShard;
import io.orbitkv.codecs.catalog.ColdQueryResponseDecoder;
import io.orbitkv.manager.peer.PeerClient;
import io.orbitkv.bench.peer.BenchPeer;
import org.HdrHistogram.Histogram;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The cold lookup phase of {@link CatalogBench}: lookups of {@link CatalogBench#QUERY_KEYS} random keys, each fanned
 * out as one ColdQuery per catalog host that holds some of its shards and timed until the requester holds every
 * answer. Hosts run on the bench thread between the requester's steps, or each on a thread of its own
 * ({@code --host-threads}). Every looked-up key must come back with a candidate.
 */
final class CatalogColdLookups
{
    private final CatalogBench.Settings settings;
    private final PrintWriter out;
    private final Map<String, Object> results;
    private final CatalogKeys pool;
    private final StateKeyShard shardFunction = new StateKeyShard();

    CatalogColdLookups(
        final CatalogBench.Settings settings, final PrintWriter out, final Map<String, Object> results,
        final CatalogKeys keys)
    {
        this.settings = settings;
        this.out = out;
        this.results = results;
        this.pool = keys;
    }

    /**
     * Run the phase against hosts already holding the lookup keys.
     *
     * @return the keys looked up, {@link CatalogBench#QUERY_KEYS} per query, warm-up first.
     */
    int[] run(final BenchPeer owner, final BenchPeer[] hosts, final PeerClient[] clients, final int[] hostOfShard)
        throws InterruptedException
    {
        return settings.hostThreads ? withHostThreads(owner, hosts, clients, hostOfShard) :
            lookups(owner, hosts, clients, hostOfShard, hosts);
    }

    /**
     * One 128-key lookup fanned out as one ColdQuery per host, rows re-aligned to the request order.
     */
    private static final class LookupFanOut implements BenchPeer.ColdResponseListener
    {
        final UnsafeBuffer[][] hashViews = new UnsafeBuffer[HOSTS][QUERY_KEYS];
        final DirectBuffer[][] namespaces = new DirectBuffer[HOSTS][QUERY_KEYS];
        final int[][] namespaceLengths = new int[HOSTS][QUERY_KEYS];
        final int[][] hashLengths = new int[HOSTS][QUERY_KEYS];
        final int[][] keyShards = new int[HOSTS][QUERY_KEYS];
        final int[][] requestIndex = new int[HOSTS][QUERY_KEYS];
        final int[] count = new int[HOSTS];
        final int[] shardOfQuery = new int[HOSTS];
        final long[] correlation = new long[HOSTS];
        final int[] candidates = new int[QUERY_KEYS];
        final int firstHostNode;
        int responses;
        long mismatches;

        LookupFanOut(final int firstHostNode, final byte[] hashes, final DirectBuffer namespace)
        {
            this.firstHostNode = firstHostNode;
            for (int h = 0; h < HOSTS; h++)
            {
                for (int i = 0; i < QUERY_KEYS; i++)
                {
                    hashViews[h][i] = new UnsafeBuffer(hashes, 0, HASH_LENGTH);
                    namespaces[h][i] = namespace;
                    namespaceLengths[h][i] = NAMESPACE.length;
                    hashLengths[h][i] = HASH_LENGTH;
                }
            }
        }

        public void onColdQueryResponse(final PeerClient client, final ColdQueryResponseDecoder response)
        {
            final int h = client.remoteNodeIndex() - firstHostNode;
            if (h < 0 || h >= HOSTS || response.correlationId() != correlation[h])
            {
                return;
            }
            final ColdQueryResponseDecoder.RowsDecoder rows = response.rows();
            while (rows.hasNext())
            {
                rows.next();
                final int row = rows.rowIndex();
                final ColdQueryResponseDecoder.RowsDecoder.CandidatesDecoder found = rows.candidates();
                if (row < count[h])
                {
                    candidates[requestIndex[h][row]] = found.count();
                }
                while (found.hasNext())
                {
                    found.next();
                }
            }
            responses++;
        }
    }

    /**
     * The lookup phase with each host's agent on its own thread (the deployment shape: hosts answer in parallel); the
     * bench thread runs only the requester. The threads are joined before the hosts are touched again.
     */
    private int[] withHostThreads(
        final BenchPeer owner, final BenchPeer[] hosts, final PeerClient[] clients, final int[] hostOfShard)
        throws InterruptedException
    {
        final AtomicBoolean running = new AtomicBoolean(true);
        final Thread[] threads = new Thread[hosts.length];
        for (int h = 0; h < hosts.length; h++)
        {
            final BenchPeer host = hosts[h];
            threads[h] = new Thread(() ->
            {
                final IdleStrategy idle = CatalogPeers.agentIdleStrategy();
                while (running.get())
                {
                    idle.idle(host.doWork());
                }
            }, "bench-host-" + h);
            threads[h].start();
        }
        try
        {
            return lookups(owner, hosts, clients, hostOfShard, new BenchPeer[0]);
        }
        finally
        {
            running.set(false);
            for (final Thread thread : threads)
            {
                thread.join();
            }
        }
    }

    private int[] lookups(
        final BenchPeer owner,
        final BenchPeer[] hosts,
        final PeerClient[] clients,
        final int[] hostOfShard,
        final BenchPeer[] invokedHosts)
    {
        final LookupFanOut fanOut = new LookupFanOut(hosts[0].nodeIndex(), pool.hashes, pool.namespace);
        owner.coldResponseListener(fanOut);
        final int total = settings.warmupQueries + settings.queries;
        final int[] keys = new int[total * QUERY_KEYS];
        final SplittableRandom random = new SplittableRandom(0xC01D);
        for (int i = 0; i < keys.length; i++)
        {
            keys[i] = random.nextInt(settings.lookupKeys);
        }
        final Histogram ours = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
        final byte[] request = new byte[QUERY_KEYS * HASH_LENGTH];
        final UnsafeBuffer requestBuffer = new UnsafeBuffer(request);
        final long deadlineNs = System.nanoTime() + AWAIT_NS;
        for (int q = 0; q < total; q++)
        {
            CatalogKeys.requestKeys(pool.hashes, keys, q, request);
            final long startNs = System.nanoTime();
            java.util.Arrays.fill(fanOut.count, 0);
            for (int i = 0; i < QUERY_KEYS; i++)
            {
                // The requester hashes every key to find its shard, as a Manager's discovery does.
                final int shard = shardFunction.shard(pool.namespace, 0, NAMESPACE.length, requestBuffer, i * HASH_LENGTH,
                    HASH_LENGTH);
                final int h = hostOfShard[shard];
                final int at = fanOut.count[h]++;
                fanOut.hashViews[h][at].wrap(request, i * HASH_LENGTH, HASH_LENGTH);
                fanOut.requestIndex[h][at] = i;
                fanOut.keyShards[h][at] = shard;
                if (0 == at)
                {
                    fanOut.shardOfQuery[h] = shard;
                }
                fanOut.candidates[i] = -1;
            }
            fanOut.responses = 0;
            int expected = 0;
            for (int h = 0; h < HOSTS; h++)
            {
                if (fanOut.count[h] > 0)
                {
                    expected++;
                    fanOut.correlation[h] = owner.publisher().nextCorrelationId();
                    while (!owner.catalogProxy().sendColdQuery(clients[h], fanOut.correlation[h], fanOut.shardOfQuery[h],
                        fanOut.count[h], fanOut.keyShards[h], fanOut.namespaces[h], fanOut.namespaceLengths[h], fanOut.hashViews[h],
                        fanOut.hashLengths[h]))
                    {
                        CatalogPeers.dutyAll(owner, invokedHosts);
                    }
                }
            }
            while (fanOut.responses < expected)
            {
                // The lookup ends when the requester holds every answer: hosts run elsewhere in a cluster, so their
                // idle polls after answering are not run on this lookup's clock.
                int work = owner.doWork();
                for (int h = 0; h < invokedHosts.length && fanOut.responses < expected; h++)
                {
                    work += invokedHosts[h].doWork();
                }
                if (0 == work)
                {
                    Thread.yield();
                }
                if (System.nanoTime() - deadlineNs > 0)
                {
                    throw new IllegalStateException("cold query " + q + " timed out; errors " + owner.errors());
                }
            }
            final long elapsedNs = System.nanoTime() - startNs;
            for (int i = 0; i < QUERY_KEYS; i++)
            {
                if (fanOut.candidates[i] < 1)
                {
                    fanOut.mismatches++;
                }
            }
            if (q >= settings.warmupQueries)
            {
                ours.recordValue(elapsedNs);
            }
        }
        owner.coldResponseListener(null);
        if (fanOut.mismatches > 0)
        {
            throw new IllegalStateException(fanOut.mismatches + " looked-up keys came back without a candidate");
        }
        out.printf(Locale.ROOT, "%n[2] cold lookup, 128 keys over 3 hosts" + (settings.hostThreads ?
            " (hosts on their own threads)" : " (requester and hosts on one thread)") + " (%d queries after %d warm-up): " +
            "p50 %.1f us, p99 %.1f us, p99.9 %.1f us, max %.1f us%n", settings.queries, settings.warmupQueries,
            ours.getValueAtPercentile(50) / 1e3, ours.getValueAtPercentile(99) / 1e3,
            ours.getValueAtPercentile(99.9) / 1e3, ours.getMaxValue() / 1e3);
        out.flush();
        results.put("cold_lookup_host_threads", settings.hostThreads);
        results.put("cold_lookup_p50_us", ours.getValueAtPercentile(50) / 1e3);
        results.put("cold_lookup_p99_us", ours.getValueAtPercentile(99) / 1e3);
        results.put("cold_lookup_p999_us", ours.getValueAtPercentile(99.9) / 1e3);
        return keys;
    }
}
