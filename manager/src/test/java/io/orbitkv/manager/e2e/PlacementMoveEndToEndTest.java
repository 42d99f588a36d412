package io.orbitkv.manager.e2e;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.orbitkv.client.EngineClient;
import io.orbitkv.client.KeyBatch;
import io.orbitkv.client.OperationResult;
import io.orbitkv.codecs.ShardPlacement;
import io.orbitkv.codecs.StateKeyShard;
import io.orbitkv.manager.CatalogTestKeys;
import io.orbitkv.manager.SystemCounterFamilies;
import io.orbitkv.manager.catalog.CatalogCounter;
import io.orbitkv.manager.membership.EtcdCluster;
import io.orbitkv.manager.membership.EtcdGateway;
import io.orbitkv.manager.membership.PlacementAdmin;
import org.agrona.CloseHelper;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static io.orbitkv.manager.e2e.CatalogEndToEndTest.awaitCounter;
import static io.orbitkv.manager.e2e.CatalogEndToEndTest.freeUdpPort;
import static io.orbitkv.manager.e2e.CatalogEndToEndTest.value;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Four Manager processes on a real etcd, three copies of every catalog shard, placement changed online while A keeps
 * publishing and C keeps restoring through the peers what A published, each round a prefix never asked before (no
 * candidates cached), every block compared byte for byte:
 * <ol>
 *     <li>{@code orbitkv placement set} adds D, the reconciler: the moves complete, D hosts the
 *     shards the new placement gives it with complete copies, and every round found all its blocks, right;</li>
 *     <li>D is removed again the same way, and killed (SIGKILL) once a move is under way: another Manager is elected,
 *     finishes the transition from the state in etcd, and every round still found all its blocks.</li>
 * </ol>
 * A round during a transition proves that some copy of every shard it touched was complete; with 64 keys per round
 * and 16 shards, a round touches nearly all of them.
 */
class PlacementMoveEndToEndTest
{
    private static final String NS = "model=e2e-placement;dtype=bf16";
    private static final int BLOCK = 4096;
    private static final int KEYS = 64;
    private static final int REPLICAS = 3;
    private static final long STABLE_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(90);
    private static final long FIND_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(10);
    private static final long CLI_TIMEOUT_MS = 30_000;

    private static final ObjectMapper JSON = new ObjectMapper();

    private EtcdCluster etcd;
    private EtcdGateway gateway;
    private String cluster;
    private final List<OrbitKvProcesses> managers = new ArrayList<>();
    private final List<EngineClient> clients = new ArrayList<>();
    private int nextKey;

    @AfterEach
    void tearDown()
    {
        CloseHelper.quietClose(gateway);
        CloseHelper.quietCloseAll(clients);
        CloseHelper.quietCloseAll(managers);
        CloseHelper.quietClose(etcd);
    }

    @Test
    @Timeout(420)
    void shouldMoveShardsOnlineAndFinishAMoveWhoseReconcilerWasKilled() throws Exception
    {
        etcd = EtcdCluster.start(1);
        cluster = "e2e-move-" + UUID.randomUUID().toString().substring(0, 8);
        // D starts first and alone, so it wins the reconciler election; A, B and C join its cluster.
        final OrbitKvProcesses d = startManager("d");
        awaitStatus((s) -> "d".equals(reconciler(s)), "d elected");
        final OrbitKvProcesses a = startManager("a");
        startManager("b");
        final OrbitKvProcesses c = startManager("c");
        for (final OrbitKvProcesses m : managers)
        {
            awaitCounter(m, CatalogCounter.INCOMPLETE_SHARDS, 0);
        }
        assertEquals(0, value(d, CatalogCounter.HOSTED_SHARDS), "d is no catalog node yet");
        final EngineClient engineA = engine(a);
        final EngineClient engineC = engine(c);
        final OperationResult result = new OperationResult(512);
        assertEquals(0, round(engineA, engineC, result), "before any move");

        // 1. Add D while the rounds go on (two moves at a time, the default).
        final long generationBefore = status().path("generation").asLong();
        placementSet("a,b,c,d");
        int rounds = 0;
        int wrong = 0;
        long deadlineNs = System.nanoTime() + STABLE_TIMEOUT_NS;
        while (!isStable(status(), generationBefore + 1))
        {
            wrong += round(engineA, engineC, result);
            rounds++;
            assertTrue(System.nanoTime() - deadlineNs < 0, "adding d did not finish:\n" + status());
        }
        assertTrue(rounds > 0, "no round ran while d was added");
        assertEquals(0, wrong, "wrong or missing blocks while adding d");
        final ShardPlacement withD = ShardPlacement.parse("a,b,c,d", REPLICAS);
        awaitCounter(d, CatalogCounter.HOSTED_SHARDS, held(withD, "d"));
        awaitCounter(d, CatalogCounter.INCOMPLETE_SHARDS, 0);
        awaitCounter(a, CatalogCounter.HOSTED_SHARDS, held(withD, "a"));
        assertEquals(0, round(engineA, engineC, result), "after adding d");

        // 2. Remove D again, and kill it, the reconciler, once a move is under way.
        placementSet("a,b,c");
        awaitStatus((s) -> s.path("transition").path("inFlight").asInt() > 0, "a move under way");
        d.managerProcess().destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        rounds = 0;
        // The next reconciler is elected once the killed one's lease (10 s) has run out.
        deadlineNs = System.nanoTime() + STABLE_TIMEOUT_NS;
        while (!isStable(status(), generationBefore + 2))
        {
            wrong += round(engineA, engineC, result);
            rounds++;
            assertTrue(System.nanoTime() - deadlineNs < 0, "removing d did not finish after its reconciler died:\n" +
                status());
        }
        assertTrue(rounds > 0, "no round ran while d was removed");
        assertEquals(0, wrong, "wrong or missing blocks while removing d");
        final String reconciler = reconciler(status());
        assertTrue(List.of("a", "b", "c").contains(reconciler), "another Manager finished the move: " + reconciler);
        final ShardPlacement withoutD = ShardPlacement.parse("a,b,c", REPLICAS);
        awaitCounter(a, CatalogCounter.HOSTED_SHARDS, held(withoutD, "a"));
        awaitCounter(c, CatalogCounter.INCOMPLETE_SHARDS, 0);
        assertEquals(0, round(engineA, engineC, result), "after removing d");
    }

    /**
     * Publish a fresh prefix on A, restore it on C through the peers within the deadline and compare every byte.
     *
     * @return blocks missing or wrong.
     */
    private int round(final EngineClient publisher, final EngineClient reader, final OperationResult result)
        throws InterruptedException
    {
        final int first = nextKey;
        nextKey += KEYS;
        final KeyBatch batch = CatalogTestKeys.batch(NS, first, KEYS, BLOCK, KEYS);
        fill(publisher, first);
        publisher.publish(batch, result);
        assertEquals(KEYS, result.value(), "publish");
        final long deadlineNs = System.nanoTime() + FIND_TIMEOUT_NS;
        int bad = KEYS;
        while (System.nanoTime() - deadlineNs < 0)
        {
            reader.dataBuffer().setMemory(0, KEYS * BLOCK, (byte)0);
            reader.read(batch, 0L, true, result);
            bad = KEYS - (int)result.value() + mismatches(reader, first, (int)result.value());
            if (0 == bad)
            {
                return 0;
            }
            // The owner's deltas may still be on their way to the copies: ask again (candidates are never cached
            // for keys found missing).
            TimeUnit.MILLISECONDS.sleep(20);
        }
        return bad;
    }

    private static void fill(final EngineClient client, final int first)
    {
        final UnsafeBuffer region = client.dataBuffer();
        final byte[] bytes = new byte[BLOCK];
        for (int i = 0; i < KEYS; i++)
        {
            new Random(first + i).nextBytes(bytes);
            region.putBytes(i * BLOCK, bytes);
        }
    }

    private static int mismatches(final EngineClient client, final int first, final int count)
    {
        final UnsafeBuffer region = client.dataBuffer();
        final byte[] expected = new byte[BLOCK];
        final byte[] actual = new byte[BLOCK];
        int bad = 0;
        for (int i = 0; i < count; i++)
        {
            new Random(first + i).nextBytes(expected);
            region.getBytes(i * BLOCK, actual);
            bad += java.util.Arrays.equals(expected, actual) ? 0 : 1;
        }
        return bad;
    }

    private static long held(final ShardPlacement placement, final String node)
    {
        int held = 0;
        for (int s = 0; s < StateKeyShard.SHARD_COUNT; s++)
        {
            held += placement.replicaIndex(s, node) >= 0 ? 1 : 0;
        }
        return held;
    }

    /**
     * @return the node id of the reconciler the status names ({@code node 'a' runtime ...}), or "".
     */
    private static String reconciler(final JsonNode status)
    {
        final String text = status.path("reconciler").asText();
        final int open = text.indexOf('\'');
        final int close = text.indexOf('\'', open + 1);
        return open < 0 || close < 0 ? "" : text.substring(open + 1, close);
    }

    private static boolean isStable(final JsonNode status, final long generation)
    {
        return status.path("stable").asBoolean() && status.path("generation").asLong() >= generation;
    }

    private void placementSet(final String nodes) throws IOException, InterruptedException
    {
        final OrbitKvProcesses.ClientRun run = managers.get(0).runCommand(CLI_TIMEOUT_MS, "placement", "set",
            "--etcd-endpoints", etcd.endpoints(), "--cluster-name", cluster, "--catalog-nodes", nodes,
            "--catalog-replicas", Integer.toString(REPLICAS));
        assertEquals(0, run.exitCode(), run.stdout());
    }

    /**
     * The placement status as {@code orbitkv placement status --json} prints it, read in this JVM (a CLI process per
     * poll would cost a JVM start each).
     */
    private JsonNode status() throws IOException
    {
        if (null == gateway)
        {
            gateway = new EtcdGateway(etcd.endpoints(), CLI_TIMEOUT_MS, SystemCounterFamilies.inMemory());
        }
        return JSON.readTree(PlacementAdmin.toJson(PlacementAdmin.status(gateway, cluster)));
    }

    private void awaitStatus(final java.util.function.Predicate<JsonNode> test, final String what)
        throws IOException, InterruptedException
    {
        final long deadlineNs = System.nanoTime() + STABLE_TIMEOUT_NS;
        JsonNode last = status();
        while (!test.test(last))
        {
            assertTrue(System.nanoTime() - deadlineNs < 0, "not " + what + ":\n" + last);
            TimeUnit.MILLISECONDS.sleep(50);
            last = status();
        }
    }

    private OrbitKvProcesses startManager(final String node) throws IOException
    {
        final OrbitKvProcesses processes = new OrbitKvProcesses();
        managers.add(processes);
        processes.startManager(
            "--pool-bytes", "32m",
            "--max-block-bytes", "64k",
            "--etcd-endpoints", etcd.endpoints(),
            "--cluster-name", cluster,
            "--node-id", node,
            "--catalog-nodes", "a,b,c",
            "--catalog-replicas", Integer.toString(REPLICAS),
            "--membership-ttl-secs", "10",
            "--peer-endpoint", "127.0.0.1:" + freeUdpPort(),
            "--transfer-endpoint", "127.0.0.1:0",
            "--peer-admission", "off");
        return processes;
    }

    private EngineClient engine(final OrbitKvProcesses manager)
    {
        final EngineClient client = EngineClient.connect(new EngineClient.Context()
            .dir(manager.dir.toString())
            .clientName("engine-" + clients.size())
            .dataRegionBytes((long)KEYS * BLOCK));
        clients.add(client);
        return client;
    }
}
