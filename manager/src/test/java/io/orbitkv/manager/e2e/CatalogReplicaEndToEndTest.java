package io.orbitkv.manager.e2e;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.IntPredicate;

import io.orbitkv.client.EngineClient;
import io.orbitkv.client.KeyBatch;
import io.orbitkv.client.OperationResult;
import io.orbitkv.codecs.ShardPlacement;
import io.orbitkv.codecs.StateKeyShard;
import io.orbitkv.codecs.engine.FailureReason;
import io.orbitkv.codecs.engine.KeyStatus;
import io.orbitkv.manager.CatalogTestKeys;
import io.orbitkv.manager.catalog.CatalogCounter;
import io.orbitkv.manager.membership.EtcdCluster;
import org.agrona.CloseHelper;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static io.orbitkv.manager.e2e.CatalogEndToEndTest.awaitCounter;
import static io.orbitkv.manager.e2e.CatalogEndToEndTest.freeUdpPort;
import static io.orbitkv.manager.e2e.CatalogEndToEndTest.signal;
import static io.orbitkv.manager.e2e.CatalogEndToEndTest.value;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Five Manager processes on a real etcd, three copies of every catalog shard. A publishes; B, with no candidates
 * cached, looks up through copies that are stopped or killed (they stay in the member view: the lease TTL is longer
 * than the test), so every answer depends on the requester going around a dead copy within the 3 s budget:
 * <ol>
 *     <li>the first-ranked copy of the keys' shards stopped (SIGSTOP) mid-query: answered by the next copy;</li>
 *     <li>two of the three copies killed (kill -9): still found, 64 of 64;</li>
 *     <li>all three copies of a shard killed: its keys are counted unavailable, not answered as proven absent.</li>
 * </ol>
 * The node ids are picked so that the placement has shards of each kind (the placement depends on the ids only).
 */
class CatalogReplicaEndToEndTest
{
    private static final String NS = "model=e2e-replicas;dtype=bf16";
    private static final byte[] NS_BYTES = NS.getBytes(StandardCharsets.US_ASCII);
    private static final int BLOCK = 4096;
    private static final int KEYS = 64;
    private static final int MANAGERS = 5;
    private static final int REPLICAS = 3;
    private static final long DEADLINE_NS = TimeUnit.SECONDS.toNanos(40);
    private static final long LOOKUP_BUDGET_NS = TimeUnit.SECONDS.toNanos(3);
    private static final StateKeyShard SHARDS = new StateKeyShard();

    private EtcdCluster etcd;
    private final List<OrbitKvProcesses> managers = new ArrayList<>();
    private final List<EngineClient> clients = new ArrayList<>();

    @AfterEach
    void tearDown()
    {
        CloseHelper.quietCloseAll(clients);
        CloseHelper.quietCloseAll(managers);
        CloseHelper.quietClose(etcd);
    }

    @Test
    @Timeout(300)
    void shouldFindKeysThroughLiveCopiesAndCallShardsWithNoLiveCopyUnavailable() throws Exception
    {
        // Node 0 (A) publishes, node 1 (B) asks; 2, 3 and 4 are the copies that fail.
        final String[] nodes = pickNodes();
        final ShardPlacement placement = ShardPlacement.of(List.of(nodes), REPLICAS);
        final String a = nodes[0];
        final String b = nodes[1];
        final String c = nodes[2];
        final String d = nodes[3];
        final String e = nodes[4];
        final int[] stopped = keysWhere(0, (s) -> e.equals(placement.replicaOf(s, 0)) && !holds(placement, s, b));
        final int[] twoDown = keysWhere(1_000_000, (s) -> holds(placement, s, c) && holds(placement, s, d) &&
            !holds(placement, s, b) && !holds(placement, s, e) && !a.equals(placement.replicaOf(s, 0)));
        final int[] allDown = keysWhere(2_000_000,
            (s) -> holds(placement, s, c) && holds(placement, s, d) && holds(placement, s, e));

        etcd = EtcdCluster.start(1);
        final String cluster = "e2e-rep-" + UUID.randomUUID().toString().substring(0, 8);
        for (final String node : nodes)
        {
            managers.add(startManager(cluster, node, String.join(",", nodes)));
        }
        for (final OrbitKvProcesses m : managers)
        {
            awaitCounter(m, CatalogCounter.INCOMPLETE_SHARDS, 0);
        }
        final EngineClient engineA = engine(0);
        final EngineClient engineB = engine(1);
        final OperationResult result = new OperationResult(512);
        for (final int[] keys : new int[][]{ stopped, twoDown, allDown })
        {
            engineA.publish(batch(keys), result);
            assertEquals(KEYS, result.value());
        }
        // Every copy's stream from A acknowledged everything: each live copy holds the whole evidence.
        awaitCounter(managers.get(0), CatalogCounter.REPLICA_LAG_MAX_RECORDS, 0);
        final OrbitKvProcesses requester = managers.get(1);

        // 1. The first-ranked copy of these keys' shards is stopped: B's query to it goes unanswered, and the keys
        // are asked of the next copy after the attempt time, well inside the budget.
        signal(managers.get(4), "STOP");
        try
        {
            final long timeoutsBefore = value(requester, CatalogCounter.COLD_ATTEMPT_TIMEOUTS);
            final long startNs = System.nanoTime();
            engineB.lookup(batch(stopped), false, true, result);
            final long tookNs = System.nanoTime() - startNs;
            assertEquals(KEYS, result.count(KeyStatus.PEER), () -> "found through the next copy\n" + requester.dump());
            assertTrue(tookNs < LOOKUP_BUDGET_NS, "took " + tookNs / 1_000_000 + " ms");
            assertTrue(value(requester, CatalogCounter.COLD_ATTEMPT_TIMEOUTS) > timeoutsBefore);
            assertEquals(a, result.ownerNodeId(0));
        }
        finally
        {
            signal(managers.get(4), "CONT");
        }

        // 2. Two of the three copies of these keys' shards are killed, one of them ranked first: the third answers.
        managers.get(2).managerProcess().destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        managers.get(3).managerProcess().destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        final long failoversBefore = value(requester, CatalogCounter.COLD_FAILOVERS);
        engineB.lookup(batch(twoDown), false, true, result);
        assertEquals(KEYS, result.count(KeyStatus.PEER), () -> "two of three copies down\n" + requester.dump());
        assertTrue(value(requester, CatalogCounter.COLD_FAILOVERS) > failoversBefore, "no copy was gone around");

        // 3. All three copies of these keys' shards are down: nothing answers, and the keys are unavailable rather
        // than absent.
        managers.get(4).managerProcess().destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        final long unavailableBefore = value(requester, CatalogCounter.COLD_KEYS_UNAVAILABLE);
        engineB.lookup(batch(allDown), false, true, result);
        assertEquals(0, result.count(KeyStatus.PEER));
        assertEquals(KeyStatus.FAILED, result.status(0), "unavailable, not a MISS");
        assertEquals(FailureReason.CATALOG_UNAVAILABLE, result.reason(0));
        assertTrue(value(requester, CatalogCounter.COLD_KEYS_UNAVAILABLE) > unavailableBefore,
            () -> "unanswered keys not counted unavailable\n" + requester.counters("Catalog"));
    }

    /**
     * Node ids whose placement has every kind of shard the test needs (ids with a numeric suffix, first that fits).
     */
    private static String[] pickNodes()
    {
        for (int suffix = 0; suffix < 1000; suffix++)
        {
            final String[] nodes = new String[MANAGERS];
            for (int i = 0; i < MANAGERS; i++)
            {
                nodes[i] = (char)('a' + i) + "-" + suffix;
            }
            final ShardPlacement p = ShardPlacement.of(List.of(nodes), REPLICAS);
            boolean stopped = false;
            boolean twoDown = false;
            boolean allDown = false;
            for (int s = 0; s < StateKeyShard.SHARD_COUNT; s++)
            {
                stopped |= nodes[4].equals(p.replicaOf(s, 0)) && !holds(p, s, nodes[1]);
                twoDown |= holds(p, s, nodes[2]) && holds(p, s, nodes[3]) && !holds(p, s, nodes[1]) &&
                    !holds(p, s, nodes[4]) && !nodes[0].equals(p.replicaOf(s, 0));
                allDown |= Set.of(p.replicaOf(s, 0), p.replicaOf(s, 1), p.replicaOf(s, 2))
                    .equals(Set.of(nodes[2], nodes[3], nodes[4]));
            }
            if (stopped && twoDown && allDown)
            {
                return nodes;
            }
        }
        throw new IllegalStateException("no node ids give the placement this test needs");
    }

    private static boolean holds(final ShardPlacement placement, final int shard, final String node)
    {
        return placement.replicaIndex(shard, node) >= 0;
    }

    /**
     * {@link #KEYS} key numbers from {@code first} on whose shard passes the test.
     */
    private static int[] keysWhere(final int first, final IntPredicate shardTest)
    {
        final int[] keys = new int[KEYS];
        int found = 0;
        for (int n = first; found < KEYS; n++)
        {
            final int shard = SHARDS.shard(
                new UnsafeBuffer(NS_BYTES), 0, NS_BYTES.length, new UnsafeBuffer(CatalogTestKeys.hash(n)), 0, 32);
            if (shardTest.test(shard))
            {
                keys[found++] = n;
            }
        }
        return keys;
    }

    private static KeyBatch batch(final int[] keys)
    {
        final KeyBatch batch = new KeyBatch(keys.length).namespace(NS_BYTES);
        for (int i = 0; i < keys.length; i++)
        {
            batch.addKey(CatalogTestKeys.hash(keys[i]), 0, 32, (long)i * BLOCK, BLOCK);
        }
        return batch;
    }

    private OrbitKvProcesses startManager(final String cluster, final String node, final String catalogNodes)
        throws IOException
    {
        final OrbitKvProcesses processes = new OrbitKvProcesses();
        processes.startManager(
            "--pool-bytes", "16m",
            "--max-block-bytes", "64k",
            "--etcd-endpoints", etcd.endpoints(),
            "--cluster-name", cluster,
            "--node-id", node,
            "--catalog-nodes", catalogNodes,
            "--catalog-replicas", Integer.toString(REPLICAS),
            "--membership-ttl-secs", "60",
            "--peer-endpoint", "127.0.0.1:" + freeUdpPort());
        return processes;
    }

    private EngineClient engine(final int node)
    {
        final EngineClient client = EngineClient.connect(new EngineClient.Context()
            .dir(managers.get(node).dir.toString())
            .clientName("engine-" + clients.size())
            .dataRegionBytes(4L << 20));
        clients.add(client);
        return client;
    }
}
