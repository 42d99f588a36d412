package io.orbitkv.bench;

import io.orbitkv.manager.catalog.CatalogCounter;
import io.orbitkv.manager.status.CounterDescriptor;
import java.io.File;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import io.orbitkv.client.EngineClient;
import io.orbitkv.client.KeyBatch;
import io.orbitkv.client.OperationResult;
import io.orbitkv.codecs.engine.KeyStatus;
import io.orbitkv.manager.Configuration;
import io.orbitkv.manager.Manager;
import io.orbitkv.manager.ManagerContext;
import org.HdrHistogram.Histogram;
import org.agrona.CloseHelper;
import org.agrona.IoUtil;

/**
 * Discovery as an engine sees it, through real Managers (one JVM, each with its own agents, media driver and etcd
 * membership): blocks published by an engine on A, looked up with the peers flag by an engine on B. By default three
 * Managers a, b, c share the 16 shards; with two, a hosts every shard and b only asks.
 * <ul>
 *     <li>cold lookup: keys (128 by default) never asked on B before, so B's candidate index misses and B sends one
 *     cold query per other catalog host (keys of its own shards it reads itself); engine request to answer with every
 *     key PEER, optionally with think time between lookups so the agents back off to their longest sleeps;</li>
 *     <li>warm lookup: the same keys again, answered from B's candidate index (no catalog RPC, checked);</li>
 *     <li>publish-to-discoverable: one block published on A until a lookup on B offers it (includes the owner's
 *     stream, the host's apply and one cold query per poll).</li>
 * </ul>
 * Anchor, same run: Redis MGET of the same key bytes (one connection), the directory FlexKV uses.
 */
final class DiscoveryBench
{
    static final int QUERY_KEYS = 128;
    private static final int BLOCK_BYTES = 1024;
    private static final String NS = "llama-3-70b/bf16/b16";
    private static final long STEP_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(30);

    private final String etcdEndpoints;
    private final int queries;
    private final int warmupQueries;
    private final int lagSamples;
    private final long pauseUs;
    private final int queryKeys;
    private final int managerCount;
    private final boolean anchor;
    private final String redisScript;
    private final PrintWriter out;
    private final List<Manager> managers = new ArrayList<>();
    private final List<File> dirs = new ArrayList<>();

    DiscoveryBench(
        final String etcdEndpoints,
        final int queries,
        final int warmupQueries,
        final int lagSamples,
        final long pauseUs,
        final int queryKeys,
        final int managerCount,
        final boolean anchor,
        final String redisScript,
        final PrintWriter out)
    {
        this.etcdEndpoints = etcdEndpoints;
        this.queries = queries;
        this.warmupQueries = warmupQueries;
        this.lagSamples = lagSamples;
        this.pauseUs = pauseUs;
        this.queryKeys = queryKeys;
        this.managerCount = managerCount;
        this.anchor = anchor;
        this.redisScript = redisScript;
        this.out = out;
    }

    Map<String, Object> run() throws Exception
    {
        final Map<String, Object> results = new LinkedHashMap<>();
        final int rounds = warmupQueries + queries;
        final int keys = rounds * queryKeys;
        final long poolBytes = Math.max(64L << 20, ((long)(keys + lagSamples) * BLOCK_BYTES * 4 + (2 << 20) - 1) &
            ~((2L << 20) - 1));
        final String cluster = "bench-discovery-" + UUID.randomUUID().toString().substring(0, 8);
        final boolean peerWait = Configuration.idlePeerWait();
        final List<String> nodes = 3 == managerCount ? List.of("a", "b", "c") : List.of("a", "b");
        final String catalogNodes = 3 == managerCount ? "a,b,c" : "a";
        out.printf(Locale.ROOT, "bench discovery: Managers %s (catalog %s) in one JVM, etcd %s, %d cold lookups of %d " +
            "keys after %d warm-up (%d us apart), %d publish-to-discoverable samples, %d B blocks; idle agents %s%n",
            String.join(", ", nodes), catalogNodes, etcdEndpoints, queries, queryKeys, warmupQueries, pauseUs,
            lagSamples, BLOCK_BYTES, peerWait ? "wait on their peer socket" : "park on a timer");
        results.put("managers", managerCount);
        results.put("keys_per_lookup", queryKeys);
        results.put("pause_us", pauseUs);
        results.put("idle_peer_wait", peerWait);
        out.flush();
        try
        {
            for (final String node : nodes)
            {
                managers.add(launch(node, cluster, catalogNodes, "a".equals(node) ? poolBytes : 64L << 20));
            }
            for (final Manager manager : managers)
            {
                await(() -> manager.membership().view().isComplete() &&
                    manager.membership().view().members().size() == managerCount &&
                    0 == manager.counter(CatalogCounter.INCOMPLETE_SHARDS), "complete views");
            }
            try (EngineClient engineA = engine(managers.get(0), "bench-a", 1L << 20);
                EngineClient engineB = engine(managers.get(1), "bench-b", 1L << 20))
            {
                final OperationResult result = new OperationResult(512);
                for (int first = 0; first < keys; first += 512)
                {
                    engineA.publish(batch(first, Math.min(512, keys - first)), result);
                    if (result.value() != Math.min(512, keys - first))
                    {
                        throw new IllegalStateException("A stored " + result.value() + " of a batch: " + result);
                    }
                }
                if (0 != managers.get(0).counter(CatalogCounter.INVENTORY_REMOVES) +
                    managers.get(0).counter(CatalogCounter.INVENTORY_FULL))
                {
                    throw new IllegalStateException("A evicted or could not announce blocks: " +
                        catalogCounters(managers.get(0)));
                }
                // Every key known to its catalog host before measuring (B's candidate index stays cold): the hosts
                // together applied a record per published block.
                try
                {
                    await(() -> appliedRecords() >= keys, "hosts applied A's stream");
                }
                catch (final IllegalStateException ex)
                {
                    for (final Manager m : managers)
                    {
                        out.println(m.catalog().nodeId() + ": " + catalogCounters(m));
                    }
                    out.flush();
                    throw ex;
                }
                measureLookups(engineB, rounds, results);
                measureLag(engineA, engineB, keys, results);
            }
        }
        finally
        {
            CloseHelper.quietCloseAll(managers);
            dirs.forEach((dir) -> IoUtil.delete(dir, true));
        }
        if (anchor)
        {
            measureRedis(rounds, results);
        }
        summary(results);
        return results;
    }

    private void measureLookups(final EngineClient engineB, final int rounds, final Map<String, Object> results)
    {
        final Manager b = managers.get(1);
        final Histogram cold = new Histogram(STEP_TIMEOUT_NS, 3);
        final Histogram warm = new Histogram(STEP_TIMEOUT_NS, 3);
        final OperationResult result = new OperationResult(512);
        long coldQueries = 0;
        long warmQueriesSent = 0;
        for (int q = 0; q < rounds; q++)
        {
            final KeyBatch batch = batch(q * queryKeys, queryKeys);
            if (pauseUs > 0)
            {
                // Think time, not synchronisation: the Managers' agents back off to their longest sleeps meanwhile.
                LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(pauseUs));
            }
            final long queriesBefore = b.counter(CatalogCounter.COLD_QUERIES);
            final long t0 = System.nanoTime();
            engineB.lookup(batch, false, true, result);
            final long t1 = System.nanoTime();
            check(result, "cold lookup " + q);
            final long queriesMid = b.counter(CatalogCounter.COLD_QUERIES);
            engineB.lookup(batch, false, true, result);
            final long t2 = System.nanoTime();
            check(result, "warm lookup " + q);
            if (q >= warmupQueries)
            {
                cold.recordValue(t1 - t0);
                warm.recordValue(t2 - t1);
                coldQueries += queriesMid - queriesBefore;
                warmQueriesSent += b.counter(CatalogCounter.COLD_QUERIES) - queriesMid;
            }
        }
        out.printf(Locale.ROOT, "%n[1] cold lookup, %d keys through B's engine ring and catalog (%d queries): p50 %.1f us, " +
            "p99 %.1f us, p99.9 %.1f us, max %.1f us; %.2f cold-query RPCs per lookup%n", queryKeys, queries,
            cold.getValueAtPercentile(50) / 1e3, cold.getValueAtPercentile(99) / 1e3,
            cold.getValueAtPercentile(99.9) / 1e3, cold.getMaxValue() / 1e3, (double)coldQueries / queries);
        out.printf(Locale.ROOT, "[2] warm lookup (same keys again, candidate index): p50 %.1f us, p99 %.1f us; " +
            "%d cold-query RPCs in %d warm lookups%n", warm.getValueAtPercentile(50) / 1e3,
            warm.getValueAtPercentile(99) / 1e3, warmQueriesSent, queries);
        out.flush();
        results.put("cold_lookup_p50_us", cold.getValueAtPercentile(50) / 1e3);
        results.put("cold_lookup_p99_us", cold.getValueAtPercentile(99) / 1e3);
        results.put("cold_rpcs_per_lookup", (double)coldQueries / queries);
        results.put("warm_lookup_p50_us", warm.getValueAtPercentile(50) / 1e3);
        results.put("warm_lookup_p99_us", warm.getValueAtPercentile(99) / 1e3);
        results.put("warm_lookup_rpcs", warmQueriesSent);
    }

    private void measureLag(
        final EngineClient engineA, final EngineClient engineB, final int firstKey, final Map<String, Object> results)
    {
        final Histogram lag = new Histogram(STEP_TIMEOUT_NS, 3);
        final OperationResult published = new OperationResult(512);
        final OperationResult found = new OperationResult(512);
        long polls = 0;
        for (int s = 0; s < lagSamples; s++)
        {
            final KeyBatch one = batch(firstKey + s, 1);
            final long t0 = System.nanoTime();
            engineA.publish(one, published);
            polls += awaitPeers(engineB, one, found);
            lag.recordValue(System.nanoTime() - t0);
        }
        out.printf(Locale.ROOT, "[3] publish on A -> offered by a lookup on B (%d samples, %.1f lookups each): p50 %.1f us, " +
            "p99 %.1f us, max %.1f us%n", lagSamples, (double)polls / lagSamples, lag.getValueAtPercentile(50) / 1e3,
            lag.getValueAtPercentile(99) / 1e3, lag.getMaxValue() / 1e3);
        out.flush();
        results.put("publish_to_discoverable_p50_us", lag.getValueAtPercentile(50) / 1e3);
        results.put("publish_to_discoverable_p99_us", lag.getValueAtPercentile(99) / 1e3);
    }

    private void measureRedis(final int rounds, final Map<String, Object> results) throws Exception
    {
        final String name = "bench-discovery-" + ProcessHandle.current().pid();
        final int port = RespClient.startServer(redisScript, name);
        try (RespClient redis = new RespClient(port))
        {
            final byte[] value = new byte[43];
            for (int q = 0; q < rounds; q++)
            {
                for (int i = 0; i < queryKeys; i++)
                {
                    final byte[] key = redisKey(q * queryKeys + i);
                    redis.command(3).arg("SET").arg(key, 0, key.length).arg(value, 0, value.length);
                }
                redis.flush();
                for (int i = 0; i < queryKeys; i++)
                {
                    redis.readReply();
                }
            }
            final Histogram mget = new Histogram(STEP_TIMEOUT_NS, 3);
            for (int q = 0; q < rounds; q++)
            {
                final long t0 = System.nanoTime();
                redis.command(1 + queryKeys).arg("MGET");
                for (int i = 0; i < queryKeys; i++)
                {
                    final byte[] key = redisKey(q * queryKeys + i);
                    redis.arg(key, 0, key.length);
                }
                redis.flush();
                final long found = redis.readReply();
                final long t1 = System.nanoTime();
                if (found != queryKeys)
                {
                    throw new IllegalStateException("MGET found " + found + " of " + queryKeys);
                }
                if (q >= warmupQueries)
                {
                    mget.recordValue(t1 - t0);
                }
            }
            out.printf(Locale.ROOT, "[1] anchor: redis MGET of the same %d key bytes (one connection): p50 %.1f us, " +
                "p99 %.1f us, max %.1f us%n", queryKeys, mget.getValueAtPercentile(50) / 1e3,
                mget.getValueAtPercentile(99) / 1e3, mget.getMaxValue() / 1e3);
            out.flush();
            results.put("anchor_redis_mget_p50_us", mget.getValueAtPercentile(50) / 1e3);
            results.put("anchor_redis_mget_p99_us", mget.getValueAtPercentile(99) / 1e3);
        }
        finally
        {
            RespClient.stopServer(redisScript, name);
        }
    }

    private void summary(final Map<String, Object> results)
    {
        out.println();
        out.println("| metric | OrbitKV | anchor (same run) | ratio | goal |");
        out.println("|---|---|---|---|---|");
        final String cold = "cold lookup " + queryKeys + " keys / " + (3 == managerCount ? "3 hosts" : "1 host");
        final String warm = "warm lookup " + queryKeys + " keys";
        row(cold + ", p50 (us)", results, "cold_lookup_p50_us", "anchor_redis_mget_p50_us", "report");
        row(cold + ", p99 (us)", results, "cold_lookup_p99_us", "anchor_redis_mget_p99_us", "<= 1x");
        row(warm + ", p50 (us)", results, "warm_lookup_p50_us", "anchor_redis_mget_p50_us", "report");
        row(warm + ", p99 (us)", results, "warm_lookup_p99_us", "anchor_redis_mget_p99_us", "report");
        out.printf(Locale.ROOT, "| publish on A -> offered on B, p50 / p99 (us) | %.1f / %.1f | - | - | report |%n",
            (double)results.get("publish_to_discoverable_p50_us"), (double)results.get("publish_to_discoverable_p99_us"));
        out.printf(Locale.ROOT, "| cold-query RPCs per cold lookup / in all warm lookups | %.2f / %d | - | - | " +
            "<= %d / 0 |%n", (double)results.get("cold_rpcs_per_lookup"), (long)results.get("warm_lookup_rpcs"),
            3 == managerCount ? 2 : 1);
        out.flush();
    }

    private void row(
        final String metric, final Map<String, Object> results, final String ours, final String anchorKey,
        final String goal)
    {
        final double value = (double)results.get(ours);
        final Object anchorValue = results.get(anchorKey);
        out.printf(Locale.ROOT, "| %s | %.1f | %s | %s | %s |%n", metric, value,
            null == anchorValue ? "-" : String.format(Locale.ROOT, "redis MGET %d: %.1f", queryKeys, (double)anchorValue),
            null == anchorValue ? "-" : String.format(Locale.ROOT, "%.2fx", value / (double)anchorValue), goal);
    }

    private long appliedRecords()
    {
        long applied = 0;
        for (final Manager m : managers)
        {
            applied += m.counter(CatalogCounter.RECORDS_APPLIED);
        }
        return applied;
    }

    private Manager launch(final String node, final String cluster, final String catalogNodes, final long poolBytes)
        throws IOException
    {
        final Path shm = Path.of("/dev/shm");
        final File dir = Files.createTempDirectory(Files.isDirectory(shm) ? shm : Path.of(System.getProperty(
            "java.io.tmpdir")), "orbitkv-bench-discovery-" + node + "-").toFile();
        dirs.add(dir);
        return Manager.launch(new ManagerContext()
            .dir(dir)
            .poolBytes(poolBytes)
            .maxBlockBytes(64 << 10)
            .indexBudgetBytes(64L << 20)
            .catalogInventoryBytes(128L << 20)
            .idleStrategyName(Configuration.IDLE_STRATEGY_DEFAULT)
            .etcdEndpoints(etcdEndpoints)
            .clusterName(cluster)
            .nodeId(node)
            .catalogNodes(catalogNodes)
            .membershipLog(new java.io.PrintStream(java.io.OutputStream.nullOutputStream())));
    }

    private static String catalogCounters(final Manager manager)
    {
        final StringBuilder text = new StringBuilder();
        for (final CounterDescriptor d : CatalogCounter.values())
        {
            if (0 != manager.counter(d))
            {
                text.append(d.label().substring("Catalog: ".length())).append('=').append(manager.counter(d))
                    .append("; ");
            }
        }
        return text.toString();
    }

    private static EngineClient engine(final Manager manager, final String name, final long regionBytes)
    {
        return EngineClient.connect(new EngineClient.Context()
            .dir(manager.context().dir().getAbsolutePath())
            .clientName(name)
            .dataRegionBytes(regionBytes));
    }

    private static KeyBatch batch(final int first, final int count)
    {
        final KeyBatch batch = new KeyBatch(count).namespace(NS.getBytes(StandardCharsets.US_ASCII));
        for (int i = 0; i < count; i++)
        {
            batch.addKey(hash(first + i), 0, 32, (long)i * BLOCK_BYTES, BLOCK_BYTES);
        }
        return batch;
    }

    private static byte[] hash(final int i)
    {
        final byte[] hash = new byte[32];
        long x = i * 0x9E3779B97F4A7C15L;
        for (int b = 4; b < hash.length; b++)
        {
            x ^= x >>> 29;
            x *= 0xBF58476D1CE4E5B9L;
            hash[b] = (byte)x;
        }
        ByteBuffer.wrap(hash).putInt(i);
        return hash;
    }

    private static byte[] redisKey(final int i)
    {
        final byte[] ns = NS.getBytes(StandardCharsets.US_ASCII);
        final byte[] key = new byte[ns.length + 32];
        System.arraycopy(ns, 0, key, 0, ns.length);
        System.arraycopy(hash(i), 0, key, ns.length, 32);
        return key;
    }

    private void check(final OperationResult result, final String what)
    {
        if (result.count(KeyStatus.PEER) != queryKeys)
        {
            throw new IllegalStateException(what + ": " + result.count(KeyStatus.PEER) + " of " + queryKeys +
                " keys offered by peers");
        }
    }

    private static int awaitPeers(final EngineClient engine, final KeyBatch batch, final OperationResult result)
    {
        final long deadline = System.nanoTime() + STEP_TIMEOUT_NS;
        int polls = 0;
        while (true)
        {
            polls++;
            engine.lookup(batch, false, true, result);
            if (result.count(KeyStatus.PEER) == batch.keyCount())
            {
                return polls;
            }
            if (System.nanoTime() - deadline > 0)
            {
                throw new IllegalStateException("the block(s) published on A were never all offered: " +
                    result.count(KeyStatus.PEER) + " of " + batch.keyCount() + " PEER, first status " + result.status(0) +
                    ", status after the peer prefix " + (result.count(KeyStatus.PEER) < batch.keyCount() ?
                    result.status(result.count(KeyStatus.PEER)) : "-"));
            }
        }
    }

    private static void await(final java.util.function.BooleanSupplier condition, final String what)
    {
        final long deadline = System.nanoTime() + STEP_TIMEOUT_NS;
        while (!condition.getAsBoolean())
        {
            if (System.nanoTime() - deadline > 0)
            {
                throw new IllegalStateException("timed out waiting for " + what);
            }
            Thread.yield();
        }
    }
}
