package io.orbitkv.manager.e2e;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.kv.GetResponse;
import io.orbitkv.client.EngineClient;
import io.orbitkv.client.KeyBatch;
import io.orbitkv.client.OperationResult;
import io.orbitkv.codecs.engine.KeyStatus;
import io.orbitkv.manager.CatalogTestKeys;
import io.orbitkv.manager.catalog.CatalogCounter;
import io.orbitkv.manager.membership.MembershipCounter;
import io.orbitkv.manager.status.CounterDescriptor;
import io.orbitkv.manager.membership.EtcdCluster;
import io.orbitkv.manager.membership.FenceCause;
import io.orbitkv.manager.membership.MemberRecord;
import io.orbitkv.manager.membership.Membership;
import io.orbitkv.manager.membership.MembershipConfiguration;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.agrona.CloseHelper;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * A clustered Manager process on a host where etcd is late, gone or the Manager itself stalls: it serves engines
 * while it joins in the background, gives up after its join timeout when etcd never answers, and after a stall
 * past its lease TTL registers a new incarnation by itself whose inventory the catalog hosts receive afresh.
 */
class ReincarnationEndToEndTest
{
    private static final String NS = "model=e2e-reincarnation;dtype=bf16";
    private static final int BLOCK = 4096;
    private static final long DEADLINE_NS = TimeUnit.SECONDS.toNanos(60);
    private static final long ETCD_LATE_NS = TimeUnit.SECONDS.toNanos(10);

    private EtcdCluster etcd;
    private Client raw;
    private final List<OrbitKvProcesses> managers = new ArrayList<>();
    private final List<EngineClient> clients = new ArrayList<>();

    @AfterEach
    void tearDown()
    {
        CloseHelper.quietCloseAll(clients);
        for (final OrbitKvProcesses m : managers)
        {
            try
            {
                EtcdCluster.signal(m.managerProcess().pid(), "CONT");
            }
            catch (final Exception ignore)
            {
                // already gone
            }
        }
        CloseHelper.quietCloseAll(managers);
        CloseHelper.quietClose(raw);
        CloseHelper.quietClose(etcd);
    }

    @Test
    @Timeout(150)
    void shouldServeEnginesWhileEtcdIsUnreachableAndJoinOnceItComesUp() throws Exception
    {
        etcd = EtcdCluster.planned();
        final String cluster = cluster("late");
        final OrbitKvProcesses a = new OrbitKvProcesses();
        managers.add(a);
        final long startNs = System.nanoTime();
        a.launchManager(clusterArgs(cluster, "a", "a"));
        // Ready for engines although nothing answers at the etcd endpoint.
        a.awaitReady(TimeUnit.SECONDS.toNanos(30));
        final EngineClient engine = engine(a);
        final OperationResult result = new OperationResult(256);
        int round = 0;
        while (System.nanoTime() - startNs - ETCD_LATE_NS < 0)
        {
            final KeyBatch batch = batch(round * 8, 8);
            engine.publish(batch, result);
            assertEquals(8, result.value(), a::dump);
            engine.lookup(batch, false, true, result);
            assertEquals(8, result.count(KeyStatus.DRAM), a::dump);
            assertEquals(Membership.STATE_REGISTERING, a.counter(label(MembershipCounter.REGISTRATION_STATE)));
            assertTrue(a.managerProcess().isAlive(), a::dump);
            round++;
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(200));
        }
        // It found etcd unreachable (a round failed) and kept going; on a loaded box the first round, paying for
        // jetcd's set-up and a 2 s deadline, may end after the 10 s.
        await(() -> a.counter(label(MembershipCounter.JOIN_RETRIES)) > 0, a::dump);
        assertTrue(a.managerProcess().isAlive(), a::dump);

        etcd.startPlanned();
        raw = Client.builder().endpoints(etcd.endpoints().split(",")).build();
        awaitCounter(a, MembershipCounter.REGISTRATION_STATE, Membership.STATE_REGISTERED);
        assertEquals(1, record(cluster, "a").epoch());
        assertEquals(1, a.counter(label(MembershipCounter.INCARNATION)));
        await(() -> stdout(a).contains("registered node 'a'"), a::dump);
        // The engine ring kept serving throughout, and still does.
        engine.lookup(batch(0, 8), false, true, result);
        assertEquals(8, result.count(KeyStatus.DRAM), a::dump);
    }

    @Test
    @Timeout(60)
    void shouldGiveUpJoiningAfterTheJoinTimeoutWithAClearMessage() throws Exception
    {
        final int closedPort;
        try (ServerSocket socket = new ServerSocket(0))
        {
            closedPort = socket.getLocalPort();
        }
        final OrbitKvProcesses a = new OrbitKvProcesses();
        managers.add(a);
        final OrbitKvProcesses.Started started = a.launchManager(
            "--pool-bytes", "8m", "--pool-pretouch=false",
            "--etcd-endpoints", "http://127.0.0.1:" + closedPort, "--cluster-name", cluster("never"),
            "--node-id", "a", "--catalog-nodes", "a", "--join-timeout", "3s", "--etcd-deadline-ms", "500");
        assertTrue(started.process().waitFor(40, TimeUnit.SECONDS), a::dump);
        assertEquals(1, started.process().exitValue(), a::dump);
        final String err = Files.readString(started.err(), StandardCharsets.UTF_8);
        assertTrue(err.contains("did not answer within the join timeout of 3000 ms"), err);
        assertTrue(err.contains("cannot join cluster"), err);
        assertTrue(err.contains("127.0.0.1:" + closedPort), err);
    }

    @Test
    @Timeout(240)
    void shouldRegisterANewIncarnationAfterAStallPastTheTtlAndReannounceItsInventory() throws Exception
    {
        etcd = EtcdCluster.start(1);
        raw = Client.builder().endpoints(etcd.endpoints().split(",")).build();
        final String cluster = cluster("stall");
        final OrbitKvProcesses a = startManager(cluster, "a");
        final OrbitKvProcesses b = startManager(cluster, "b");
        for (final OrbitKvProcesses m : managers)
        {
            awaitCounter(m, CatalogCounter.INCOMPLETE_SHARDS, 0);
        }
        final EngineClient engineA = engine(a);
        final EngineClient engineB = engine(b);
        final OperationResult result = new OperationResult(512);
        final KeyBatch blocks = batch(0, 32);
        engineA.publish(blocks, result);
        assertEquals(32, result.value());

        final MemberRecord first = record(cluster, "a");
        assertEquals(a.runtimeUuid(), first.runtimeUuid());
        awaitOwner(engineB, blocks, first.runtimeUuid(), b);
        final long retiredBefore = b.counter(label(CatalogCounter.INCARNATIONS_RETIRED));

        // Stall A past its TTL: etcd expires its lease and every peer drops the record.
        EtcdCluster.signal(a.managerProcess().pid(), "STOP");
        await(() -> null == recordOrNull(cluster, "a"), () -> "A's record to expire\n" + a.dump());
        EtcdCluster.signal(a.managerProcess().pid(), "CONT");

        // A registers a new incarnation by itself: new runtime UUID, epoch + 1.
        await(() ->
        {
            final MemberRecord now = recordOrNull(cluster, "a");
            return null != now && !now.runtimeUuid().equals(first.runtimeUuid());
        }, () -> "a new incarnation of A\n" + a.dump());
        final MemberRecord second = record(cluster, "a");
        assertEquals(first.epoch() + 1, second.epoch());
        assertNotEquals(first.runtimeUuid(), second.runtimeUuid());
        awaitCounter(a, MembershipCounter.INCARNATION, 2);
        assertEquals(1, a.counter(label(MembershipCounter.REREGISTRATIONS)));
        assertEquals(second.epoch(), a.counter(label(MembershipCounter.EPOCH)));
        assertEquals(FenceCause.NONE.code(), a.counter(label(MembershipCounter.FENCED)));
        assertTrue(a.managerProcess().isAlive());
        assertEquals(first.runtimeUuid(), a.runtimeUuid(), "the CnC header keeps the process's first runtime UUID");

        // The hosts retired the old incarnation's evidence and hold the new one's, announced by snapshot: B finds
        // every block under the new runtime UUID only.
        awaitOwner(engineB, blocks, second.runtimeUuid(), b);
        assertTrue(b.counter(label(CatalogCounter.INCARNATIONS_RETIRED)) > retiredBefore, b::dump);
        assertTrue(stdout(b).contains("retired incarnation " + first.runtimeUuid()), b::dump);
        assertTrue(stdout(a).contains("registering a new incarnation"), a::dump);
        final String stat = a.runStatOnce(30_000);
        assertTrue(stat.contains("incarnation 2 (re-registrations 1"), stat);

        // And the new incarnation streams as usual: a block published now is found too.
        final KeyBatch fresh = batch(1_000, 4);
        engineA.publish(fresh, result);
        awaitOwner(engineB, fresh, second.runtimeUuid(), b);
    }

    private void awaitOwner(final EngineClient client, final KeyBatch batch, final UUID owner, final OrbitKvProcesses m)
    {
        final OperationResult result = new OperationResult(512);
        final long deadline = System.nanoTime() + DEADLINE_NS;
        while (true)
        {
            client.lookup(batch, false, true, result);
            if (result.count(KeyStatus.PEER) == batch.keyCount() && 1 == result.ownerCount() &&
                result.ownerRuntimeUuidMsb(0) == owner.getMostSignificantBits() &&
                result.ownerRuntimeUuidLsb(0) == owner.getLeastSignificantBits())
            {
                return;
            }
            if (System.nanoTime() - deadline > 0)
            {
                final StringBuilder state = new StringBuilder();
                for (final OrbitKvProcesses each : managers)
                {
                    state.append("==== ").append(each.dir).append('\n').append(each.counters("Catalog"))
                        .append(each.counters("Membership")).append(each.counters("peer")).append(each.dump());
                }
                fail("lookup never answered every key with owner " + owner + ": " + result.count(KeyStatus.PEER) +
                    " peer keys, " + result.ownerCount() + " owner(s)\n" + state);
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
        }
    }

    private OrbitKvProcesses startManager(final String cluster, final String node) throws IOException
    {
        final OrbitKvProcesses processes = new OrbitKvProcesses();
        managers.add(processes);
        processes.startManager(clusterArgs(cluster, node, "a,b"));
        return processes;
    }

    private String[] clusterArgs(final String cluster, final String node, final String catalog)
    {
        return new String[]{
            "--pool-bytes", "16m",
            "--max-block-bytes", "64k",
            "--pool-pretouch=false",
            "--etcd-endpoints", etcd.endpoints(),
            "--cluster-name", cluster,
            "--node-id", node,
            "--catalog-nodes", catalog,
            "--membership-ttl-secs", "" + io.orbitkv.manager.Configuration.MIN_MEMBERSHIP_TTL_SECS};
    }

    private EngineClient engine(final OrbitKvProcesses m)
    {
        final EngineClient client = EngineClient.connect(new EngineClient.Context()
            .dir(m.dir.toString())
            .clientName("engine-" + clients.size())
            .dataRegionBytes(4L << 20));
        clients.add(client);
        return client;
    }

    private static KeyBatch batch(final int first, final int count)
    {
        return CatalogTestKeys.batch(NS, first, count, BLOCK, 512);
    }

    private static String cluster(final String name)
    {
        return name + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    private static String label(final CounterDescriptor descriptor)
    {
        return descriptor.label();
    }

    private static void awaitCounter(final OrbitKvProcesses m, final CounterDescriptor d, final long expected)
    {
        final long seen = m.awaitCounter(d.label(), expected, DEADLINE_NS);
        assertEquals(expected, seen, () -> d.label() + "\n" + m.dump());
    }

    private static void await(final BooleanSupplier condition, final Supplier<String> message)
    {
        final long deadline = System.nanoTime() + DEADLINE_NS;
        while (!condition.getAsBoolean())
        {
            if (System.nanoTime() - deadline > 0)
            {
                fail("timed out: " + message.get());
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
        }
    }

    private MemberRecord recordOrNull(final String cluster, final String node)
    {
        try
        {
            final String key = MembershipConfiguration.memberKey(cluster, node);
            final GetResponse response =
                raw.getKVClient().get(ByteSequence.from(key, StandardCharsets.UTF_8)).get(5, TimeUnit.SECONDS);
            return response.getKvs().isEmpty() ? null :
                MemberRecord.decode(key, response.getKvs().get(0).getValue().getBytes());
        }
        catch (final Exception ex)
        {
            throw new AssertionError(ex);
        }
    }

    private MemberRecord record(final String cluster, final String node)
    {
        final MemberRecord record = recordOrNull(cluster, node);
        assertFalse(null == record, "no member record of " + node);
        return record;
    }

    private static String stdout(final OrbitKvProcesses m)
    {
        try
        {
            return m.managerOutput();
        }
        catch (final IOException ex)
        {
            return ex.toString();
        }
    }
}
