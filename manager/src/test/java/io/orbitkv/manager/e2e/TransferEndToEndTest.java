package io.orbitkv.manager.e2e;

import io.orbitkv.client.EngineClient;
import io.orbitkv.client.KeyBatch;
import io.orbitkv.client.OperationResult;
import io.orbitkv.codecs.engine.FailureReason;
import io.orbitkv.codecs.engine.KeyStatus;
import io.orbitkv.codecs.engine.StatusCode;
import io.orbitkv.manager.CatalogTestKeys;
import io.orbitkv.manager.catalog.CatalogCounter;
import io.orbitkv.manager.membership.EtcdCluster;
import io.orbitkv.manager.membership.MembershipCounter;
import io.orbitkv.manager.ring.RingCounter;
import io.orbitkv.manager.status.CounterDescriptor;
import io.orbitkv.manager.store.StoreCounter;
import io.orbitkv.manager.transfer.TransferCounter;
import org.agrona.CloseHelper;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Peer transfers between Manager processes on a real etcd, with engines in this JVM: a Read with the peers flag
 * restores blocks published on another Manager byte-exact and releases the source's pins; a pinned peer Lookup holds
 * the sources under its lease until a Read or a Release; a payload byte flipped at the source fails its CRC32C check
 * and stops the prefix there; admission keeps fetched blocks locally only when asked.
 */
class TransferEndToEndTest
{
    private static final String NS = "model=e2e-transfer;dtype=bf16";
    private static final int BLOCK = 64 * 1024;
    private static final int REGION_BLOCKS = 64;
    private static final long DEADLINE_NS = TimeUnit.SECONDS.toNanos(40);
    private static final String[] NODES = {"a", "b", "c"};

    private EtcdCluster etcd;
    private final List<OrbitKvProcesses> managers = new ArrayList<>();
    private final List<EngineClient> clients = new ArrayList<>();
    private String cluster;
    private String catalogNodes;

    @AfterEach
    void tearDown()
    {
        CloseHelper.quietCloseAll(clients);
        CloseHelper.quietCloseAll(managers);
        CloseHelper.quietClose(etcd);
    }

    private void startCluster(final String[] sourceJvmArgs, final String... requesterArgs) throws IOException
    {
        startCluster(2, sourceJvmArgs, new String[0], requesterArgs);
    }

    private void startCluster(
        final int nodes, final String[] sourceJvmArgs, final String[] sourceArgs, final String... requesterArgs)
        throws IOException
    {
        etcd = EtcdCluster.start(1);
        cluster = "e2e-" + UUID.randomUUID().toString().substring(0, 8);
        catalogNodes = String.join(",", java.util.Arrays.copyOf(NODES, nodes));
        managers.add(startManager(0, sourceJvmArgs, sourceArgs));
        managers.add(startManager(1, new String[0], requesterArgs));
        for (int i = 2; i < nodes; i++)
        {
            managers.add(startManager(i, sourceJvmArgs, sourceArgs));
        }
        for (final OrbitKvProcesses m : managers)
        {
            awaitCounter(m, CatalogCounter.INCOMPLETE_SHARDS, 0);
        }
    }

    private OrbitKvProcesses startManager(final int node, final String[] jvmArgs, final String[] extra)
        throws IOException
    {
        final OrbitKvProcesses processes = new OrbitKvProcesses().jvmArgs(jvmArgs);
        final List<String> args = new ArrayList<>(List.of(
            "--pool-bytes", List.of(extra).contains("--pool-bytes") ? extra[List.of(extra).indexOf("--pool-bytes") + 1] : "32m",
            "--max-block-bytes", "64k",
            "--etcd-endpoints", etcd.endpoints(),
            "--cluster-name", cluster,
            "--node-id", NODES[node],
            "--catalog-nodes", catalogNodes,
            "--membership-ttl-secs", "30",
            "--transfer-endpoint", "127.0.0.1:0"));
        for (int i = 0; i < extra.length; i++)
        {
            if ("--pool-bytes".equals(extra[i]))
            {
                i++;
                continue;
            }
            args.add(extra[i]);
        }
        processes.startManager(args.toArray(new String[0]));
        return processes;
    }

    private EngineClient engine(final int node)
    {
        final EngineClient client = EngineClient.connect(new EngineClient.Context()
            .dir(managers.get(node).dir.toString())
            .clientName("engine-" + clients.size())
            .dataRegionBytes((long)REGION_BLOCKS * BLOCK));
        clients.add(client);
        return client;
    }

    private static KeyBatch batch(final int first, final int count)
    {
        return CatalogTestKeys.batch(NS, first, count, BLOCK, REGION_BLOCKS);
    }

    /**
     * Fill the engine's data region with the bytes of keys {@code first ..} in their slots (seeded per key).
     */
    private static void fill(final EngineClient client, final int first, final int count)
    {
        final UnsafeBuffer region = client.dataBuffer();
        final byte[] bytes = new byte[BLOCK];
        for (int i = 0; i < count; i++)
        {
            new Random(first + i).nextBytes(bytes);
            region.putBytes((i % REGION_BLOCKS) * BLOCK, bytes);
        }
    }

    private static void wipe(final EngineClient client)
    {
        client.dataBuffer().setMemory(0, REGION_BLOCKS * BLOCK, (byte)0);
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
            region.getBytes((i % REGION_BLOCKS) * BLOCK, actual);
            if (!java.util.Arrays.equals(expected, actual))
            {
                bad++;
            }
        }
        return bad;
    }

    /**
     * Publish keys {@code first ..} from the source engine and wait until the requester's Manager sees them all as
     * peer keys.
     */
    private static KeyBatch publishAndDiscover(
        final EngineClient source, final EngineClient requester, final int first, final int count,
        final OperationResult result)
    {
        final KeyBatch prefix = batch(first, count);
        fill(source, first, count);
        source.publish(prefix, result);
        assertEquals(count, result.value(), "published");
        CatalogTestKeys.awaitPeerKeys(requester, prefix, count, result, DEADLINE_NS);
        return prefix;
    }

    private static long value(final OrbitKvProcesses m, final CounterDescriptor d)
    {
        return m.counter(d.label());
    }

    private static void awaitCounter(final OrbitKvProcesses m, final CounterDescriptor d, final long expected)
    {
        final long seen = m.awaitCounter(d.label(), expected, DEADLINE_NS);
        assertEquals(expected, seen, () -> d.label() + "\n" + m.dump());
    }

    private static long etcdCalls(final OrbitKvProcesses m)
    {
        return value(m, MembershipCounter.ETCD_CALLS_GET) + value(m, MembershipCounter.ETCD_CALLS_TXN) +
            value(m, MembershipCounter.ETCD_CALLS_LEASE_GRANT) + value(m, MembershipCounter.ETCD_CALLS_WATCH);
    }

    @Test
    @Timeout(180)
    void shouldRestoreRemoteBlocksByteExactHoldThemUnderAPinnedLookupAndReleaseTheSource() throws Exception
    {
        startCluster(new String[0], "--peer-admission", "off");
        final OrbitKvProcesses a = managers.get(0);
        final OrbitKvProcesses b = managers.get(1);
        final EngineClient engineA = engine(0);
        final EngineClient engineB = engine(1);
        final OperationResult result = new OperationResult(512);

        final KeyBatch prefix = publishAndDiscover(engineA, engineB, 0, 32, result);

        // 1. Read with peers: every block from A, byte-exact, no etcd call, A's pins back to 0.
        final long etcdBefore = etcdCalls(b);
        wipe(engineB);
        engineB.read(prefix, 0L, true, result);
        assertEquals(StatusCode.OK, result.code(), result::message);
        assertEquals(32, result.value(), () -> describe(result));
        assertEquals(32, result.count(KeyStatus.PEER));
        assertEquals("a", result.ownerNodeId(result.candidateOwnerIndex(0)));
        assertEquals(0, mismatches(engineB, 0, 32));
        assertEquals(etcdBefore, etcdCalls(b), "a transfer called etcd");
        assertEquals(32, value(b, TransferCounter.BLOCKS_FETCHED));
        assertEquals(32, value(b, TransferCounter.CHECKSUMS_FROM_TRANSPORT), "checked against the I/O thread's sums");
        awaitCounter(a, StoreCounter.PINS_ACTIVE, 0);
        assertEquals(0, value(b, StoreCounter.BLOCKS_RESIDENT), "admission off kept a block");

        // 2. Lookup with pin and peers: the lease covers the blocks held at A; Read on it restores them.
        engineB.lookup(prefix, true, true, result);
        assertEquals(32, result.value(), () -> describe(result));
        assertEquals(32, result.count(KeyStatus.PEER));
        final long leaseId = result.leaseId();
        assertTrue(0 != leaseId, "a pinned peer lookup holds its sources under a lease");
        awaitCounter(a, StoreCounter.PINS_ACTIVE, 32);
        wipe(engineB);
        engineB.read(prefix, leaseId, false, result);
        assertEquals(32, result.value(), () -> describe(result));
        assertEquals(0, mismatches(engineB, 0, 32));
        awaitCounter(a, StoreCounter.PINS_ACTIVE, 0);

        // 3. Lookup with pin and peers, then Release: both sides let go.
        engineB.lookup(prefix, true, true, result);
        assertEquals(32, result.value(), () -> describe(result));
        awaitCounter(a, StoreCounter.PINS_ACTIVE, 32);
        assertEquals(StatusCode.OK, engineB.release(result.leaseId()));
        awaitCounter(a, StoreCounter.PINS_ACTIVE, 0);

        // 4. A key nobody holds after the prefix: the restored run stops there with a MISS.
        final KeyBatch longer = batch(0, 40);
        wipe(engineB);
        engineB.read(longer, 0L, true, result);
        assertEquals(32, result.value(), () -> describe(result));
        assertEquals(KeyStatus.MISS, result.status(32));
        assertEquals(0, mismatches(engineB, 0, 32));
    }

    @Test
    @Timeout(180)
    void shouldRestoreAPeerChainOfMoreKeysThanOneColdQueryOrOneAuthorization() throws Exception
    {
        startCluster(new String[0], "--peer-admission", "off");
        final OrbitKvProcesses b = managers.get(1);
        final EngineClient engineA = engine(0);
        final EngineClient engineB = engine(1);
        final OperationResult result = new OperationResult(512);

        // 200 keys after an empty local prefix: more than a cold query (128) or an authorization (128) carries, within
        // EngineRingLimits.MAX_PEER_KEYS_PER_LOOKUP. The region holds 64 blocks, so destinations repeat: this counts
        // restored keys; the byte checks are the other tests'.
        final int keys = 200;
        final KeyBatch chain = publishAndDiscover(engineA, engineB, 50_000, keys, result);
        engineB.lookup(chain, true, true, result);
        assertEquals(keys, result.value(), () -> describe(result));
        assertEquals(keys, result.count(KeyStatus.PEER));
        engineB.read(chain, result.leaseId(), false, result);
        assertEquals(keys, result.value(), () -> describe(result));
        assertEquals(keys, value(b, TransferCounter.BLOCKS_FETCHED));
        awaitCounter(managers.get(0), StoreCounter.PINS_ACTIVE, 0);
    }

    @Test
    @Timeout(180)
    void shouldGoOnThroughBlocksTheRequesterHoldsItselfBetweenPeerSpans() throws Exception
    {
        startCluster(new String[0], "--peer-admission", "off");
        final OrbitKvProcesses a = managers.get(0);
        final OrbitKvProcesses b = managers.get(1);
        final EngineClient engineA = engine(0);
        final EngineClient engineB = engine(1);
        final OperationResult result = new OperationResult(512);

        // One chain of 24: keys 0-7 and 16-23 at A, keys 8-15 published on B itself.
        publishAndDiscover(engineA, engineB, 0, 8, result);
        publishAndDiscover(engineA, engineB, 16, 8, result);
        fill(engineB, 8, 8);
        engineB.publish(batch(8, 8), result);
        assertEquals(8, result.value(), "published on B");
        final KeyBatch chain = batch(0, 24);

        // 1. Read with peers: A's first span, B's own span, A's second span, all byte-exact; B's pins let go.
        wipe(engineB);
        engineB.read(chain, 0L, true, result);
        assertEquals(24, result.value(), () -> describe(result));
        assertEquals(16, result.count(KeyStatus.PEER), () -> describe(result));
        assertEquals(KeyStatus.DRAM, result.status(8), () -> describe(result));
        assertEquals(KeyStatus.DRAM, result.status(15), () -> describe(result));
        assertEquals(KeyStatus.PEER, result.status(16), () -> describe(result));
        assertEquals(0, mismatches(engineB, 0, 24));
        assertEquals(8, value(b, TransferCounter.LOCAL_SPAN_KEYS));
        assertTrue(value(b, CatalogCounter.LOCAL_CONTINUATION_KEYS) >= 8);
        awaitCounter(a, StoreCounter.PINS_ACTIVE, 0);
        awaitCounter(b, StoreCounter.PINS_ACTIVE, 0);

        // 2. Lookup with pin and peers: the lease holds A's 16 blocks at A and B's 8 at B; a Read of it restores all.
        engineB.lookup(chain, true, true, result);
        assertEquals(24, result.value(), () -> describe(result));
        assertEquals(KeyStatus.DRAM, result.status(8), () -> describe(result));
        final long leaseId = result.leaseId();
        assertTrue(0 != leaseId);
        awaitCounter(a, StoreCounter.PINS_ACTIVE, 16);
        awaitCounter(b, StoreCounter.PINS_ACTIVE, 8);
        wipe(engineB);
        engineB.read(chain, leaseId, false, result);
        assertEquals(24, result.value(), () -> describe(result));
        assertEquals(0, mismatches(engineB, 0, 24));
        assertEquals(16, value(b, TransferCounter.LOCAL_SPAN_KEYS));
        awaitCounter(a, StoreCounter.PINS_ACTIVE, 0);
        awaitCounter(b, StoreCounter.PINS_ACTIVE, 0);

        // 3. Lookup with pin and peers, then Release: both Managers let go.
        engineB.lookup(chain, true, true, result);
        assertEquals(24, result.value(), () -> describe(result));
        awaitCounter(b, StoreCounter.PINS_ACTIVE, 8);
        assertEquals(StatusCode.OK, engineB.release(result.leaseId()));
        awaitCounter(a, StoreCounter.PINS_ACTIVE, 0);
        awaitCounter(b, StoreCounter.PINS_ACTIVE, 0);
        assertEquals(0, value(b, TransferCounter.BLOCKS_ADMITTED));
    }

    @Test
    @Timeout(180)
    void shouldRestoreThroughTheMooncakeBindingOverTheBuildsTeStandIn() throws Exception
    {
        // The real Transfer Engine cannot be installed here: the build compiles a C stand-in of its ABI, and both
        // Managers load it through --te-library exactly as they would load libtransfer_engine.so.
        final String library = System.getProperty("orbitkv.te.fakeLibrary");
        assertTrue(null != library && new java.io.File(library).isFile(), "the TE stand-in library: " + library);
        final String[] mooncake = {"--transport", "mooncake", "--te-library", library};
        final String[] requester = {"--transport", "mooncake", "--te-library", library, "--peer-admission", "off"};
        startCluster(2, new String[0], mooncake, requester);
        final OrbitKvProcesses a = managers.get(0);
        final EngineClient engineA = engine(0);
        final EngineClient engineB = engine(1);
        final OperationResult result = new OperationResult(512);

        final KeyBatch prefix = publishAndDiscover(engineA, engineB, 6_000, 16, result);
        wipe(engineB);
        engineB.read(prefix, 0L, true, result);
        assertEquals(16, result.value(), () -> describe(result));
        assertEquals(0, mismatches(engineB, 6_000, 16));
        // One-sided reads: the source unpins at the requester's release (it cannot revoke).
        awaitCounter(a, StoreCounter.PINS_ACTIVE, 0);
    }

    @Test
    @Timeout(180)
    void shouldKeepTheCandidatesOfASourceOutOfBudget() throws Exception
    {
        // A's transfer budget holds one 64 KiB block: a 4-key span is granted its first key only.
        startCluster(2, new String[0], new String[]{"--transfer-budget", "64k"}, "--peer-admission", "off");
        final OrbitKvProcesses a = managers.get(0);
        final OrbitKvProcesses b = managers.get(1);
        final EngineClient engineA = engine(0);
        final EngineClient engineB = engine(1);
        final OperationResult result = new OperationResult(512);

        final KeyBatch prefix = publishAndDiscover(engineA, engineB, 7_000, 4, result);
        wipe(engineB);
        engineB.read(prefix, 0L, true, result);
        assertEquals(1, result.value(), () -> describe(result));
        assertEquals(KeyStatus.FAILED, result.status(1));
        assertEquals(FailureReason.REJECTED, result.reason(1));
        assertEquals(0, mismatches(engineB, 7_000, 1));
        assertTrue(value(a, TransferCounter.SOURCE_REJECTED_OVER_BUDGET) >= 1);
        // The source still holds the blocks: its candidates stay in B's index, and the next Read is granted again.
        assertEquals(0, value(b, TransferCounter.CANDIDATES_REMOVED));
        engineB.lookup(prefix, false, true, result);
        assertEquals(4, result.count(KeyStatus.PEER), () -> describe(result));
        awaitCounter(a, StoreCounter.PINS_ACTIVE, 0);
        engineB.read(prefix, 0L, true, result);
        assertEquals(1, result.value(), () -> describe(result));
    }

    @Test
    @Timeout(180)
    void shouldRestoreSsdOnlyResidencesThroughTheSourcesExportStagingWithinItsCredits() throws Exception
    {
        // A's pool holds 64 blocks and evicts to its SSD tier; its export staging (2 MiB) holds 32 of them at once.
        final Path ssdDir = Files.createDirectories(
            Paths.get("target", "transfer-ssd-e2e", UUID.randomUUID().toString()).toAbsolutePath());
        startCluster(2, new String[0], new String[]{"--pool-bytes", "4m", "--ssd-dir", ssdDir.toString(),
            "--ssd-bytes", "64m", "--ssd-staging-bytes", "4m", "--transfer-ssd-staging-bytes", "2m"},
            "--peer-admission", "off");
        final OrbitKvProcesses a = managers.get(0);
        final OrbitKvProcesses b = managers.get(1);
        final EngineClient engineA = engine(0);
        final EngineClient engineB = engine(1);
        final OperationResult result = new OperationResult(512);

        // 48 blocks, then 64 others: the 48 leave A's DRAM for its SSD, and B's candidates for them say SSD.
        final KeyBatch prefix = batch(8_000, 48);
        fill(engineA, 8_000, 48);
        engineA.publish(prefix, result);
        assertEquals(48, result.value(), "published");
        fill(engineA, 9_000, 64);
        engineA.publish(batch(9_000, 64), result);
        final long deadline = System.nanoTime() + DEADLINE_NS;
        while (true)
        {
            engineB.lookup(prefix, false, true, result);
            if (result.count(KeyStatus.PEER) == 48 && onlySsdCandidates(result))
            {
                break;
            }
            assertTrue(System.nanoTime() - deadline < 0, () -> "SSD candidates: " + describe(result) + "\n" + a.dump());
        }

        // Read with peers: every block from A's SSD, byte-exact; staging runs out once (BACKPRESSURE) and B waits.
        wipe(engineB);
        engineB.read(prefix, 0L, true, result);
        assertEquals(StatusCode.OK, result.code(), result::message);
        assertEquals(48, result.value(), () -> describe(result) + "\n" + a.dump());
        assertEquals(48, result.count(KeyStatus.PEER));
        assertEquals(0, mismatches(engineB, 8_000, 48));
        assertEquals(48, value(a, TransferCounter.SOURCE_SSD_PREPARES));
        assertEquals(48, value(a, TransferCounter.SOURCE_SSD_GRANTED_KEYS));
        assertTrue(value(a, TransferCounter.SOURCE_PENDING) >= 1);
        assertTrue(value(a, TransferCounter.SOURCE_BACKPRESSURE) >= 1, a::dump);
        assertTrue(value(b, TransferCounter.PREPARE_WAITS) >= 1);
        assertTrue(value(b, TransferCounter.BUDGET_WAITS) >= 1, b::dump);
        assertEquals(0, value(a, TransferCounter.SOURCE_SSD_PREPARE_FAILURES));
        awaitCounter(a, TransferCounter.SOURCE_SSD_STAGED_BYTES, 0);
        awaitCounter(a, TransferCounter.SOURCE_SESSIONS_ACTIVE, 0);

        // Lookup with pin and peers: the lease holds A's prepared copies, so the count is loadable; Release frees them.
        final KeyBatch held = batch(8_000, 16);
        engineB.lookup(held, true, true, result);
        assertEquals(16, result.value(), () -> describe(result));
        assertTrue(0 != result.leaseId());
        assertEquals(16L * BLOCK, value(a, TransferCounter.SOURCE_SSD_STAGED_BYTES));
        assertEquals(StatusCode.OK, engineB.release(result.leaseId()));
        awaitCounter(a, TransferCounter.SOURCE_SSD_STAGED_BYTES, 0);
        awaitCounter(a, TransferCounter.SOURCE_SESSIONS_ACTIVE, 0);

        // stat shows both sides: what A served from SSD, what B fetched and how often it waited.
        final String statA = a.runStatOnce(30_000);
        assertTrue(statA.contains("transfers served: sessions ") && statA.contains("from SSD 64)"), statA);
        final String statB = b.runStatOnce(30_000);
        assertTrue(statB.contains("transfers fetched: blocks 48 (" + 48L * BLOCK + " bytes)"), statB);
    }

    @Test
    @Timeout(240)
    void shouldRestoreTheSsdBlocksARestartedSourceRecoveredAsPeerSsd() throws Exception
    {
        // A's pool holds 64 blocks and evicts to its SSD tier, whose manifest survives A's restart.
        final Path ssdDir = Files.createDirectories(
            Paths.get("target", "transfer-ssd-e2e", UUID.randomUUID().toString()).toAbsolutePath());
        final String[] sourceArgs = {"--pool-bytes", "4m", "--ssd-dir", ssdDir.toString(), "--ssd-bytes", "64m",
            "--ssd-staging-bytes", "4m", "--transfer-ssd-staging-bytes", "2m"};
        startCluster(3, new String[0], sourceArgs, "--peer-admission", "off");
        final OrbitKvProcesses b = managers.get(1);
        EngineClient engineA = engine(0);
        final EngineClient engineB = engine(1);
        final OperationResult result = new OperationResult(512);
        final KeyBatch prefix = batch(12_000, 48);
        fill(engineA, 12_000, 48);
        engineA.publish(prefix, result);
        assertEquals(48, result.value(), "published");
        fill(engineA, 13_000, 64);
        engineA.publish(batch(13_000, 64), result);
        // The SSD writes of the evicted blocks complete after the publish answered.
        final long written = System.nanoTime() + DEADLINE_NS;
        do
        {
            java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
            engineA.lookup(prefix, false, false, result);
        }
        while (result.count(KeyStatus.SSD) != 48 && System.nanoTime() - written < 0);
        assertEquals(48, result.count(KeyStatus.SSD), () -> describe(result));
        final java.util.UUID before = managers.get(0).runtimeUuid();

        // SIGTERM: A stops cleanly and comes back as a new incarnation on the same SSD directory, DRAM empty.
        clients.remove(engineA);
        CloseHelper.quietClose(engineA);
        final Process oldA = managers.get(0).managerProcess();
        oldA.destroy();
        assertTrue(oldA.waitFor(60, TimeUnit.SECONDS));
        managers.get(0).close();
        managers.set(0, startManager(0, new String[0], sourceArgs));
        final OrbitKvProcesses a = managers.get(0);
        assertTrue(!before.equals(a.runtimeUuid()), "a new incarnation");
        assertTrue(a.counter("SSD recovery: residences restored") >= 48, a::dump);
        assertEquals(0, a.counter("Blocks resident"), "DRAM starts empty");
        engineA = engine(0);
        engineA.lookup(prefix, false, false, result);
        assertEquals(48, result.count(KeyStatus.SSD), () -> describe(result));

        // B learns A's recovered inventory through the catalog (no per-key etcd call) and restores it from A's SSD.
        final long etcdBefore = etcdCalls(b);
        final long deadline = System.nanoTime() + DEADLINE_NS;
        while (true)
        {
            engineB.lookup(prefix, false, true, result);
            if (result.count(KeyStatus.PEER) == 48 && onlySsdCandidates(result))
            {
                break;
            }
            assertTrue(System.nanoTime() - deadline < 0, () -> "SSD candidates: " + describe(result) + "\n" + a.dump());
            java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
        }
        wipe(engineB);
        engineB.read(prefix, 0L, true, result);
        assertEquals(StatusCode.OK, result.code(), result::message);
        assertEquals(48, result.value(), () -> describe(result) + "\n" + a.dump());
        assertEquals(48, result.count(KeyStatus.PEER));
        assertEquals(0, mismatches(engineB, 12_000, 48));
        assertTrue(value(a, TransferCounter.SOURCE_SSD_PREPARES) >= 48, a::dump);
        assertTrue(etcdCalls(b) - etcdBefore < 48, "no etcd call per key");
    }

    private static boolean onlySsdCandidates(final OperationResult result)
    {
        for (int i = 0; i < result.candidateCount(); i++)
        {
            if (KeyStatus.SSD != result.candidateTier(i))
            {
                return false;
            }
        }
        return result.candidateCount() > 0;
    }

    @Test
    @Timeout(180)
    void shouldFailAFlippedPayloadByteAtItsChecksumAndAdmitNothing() throws Exception
    {
        startCluster(new String[]{"-D" + io.orbitkv.manager.Configuration.TRANSFER_TRANSPORT_SUPPLIER_PROP_NAME + "=" +
            io.orbitkv.manager.transfer.ext.FlipFirstByteTransportSupplier.class.getName()}, "--peer-admission", "always");
        final OrbitKvProcesses b = managers.get(1);
        final EngineClient engineA = engine(0);
        final EngineClient engineB = engine(1);
        final OperationResult result = new OperationResult(512);

        final KeyBatch prefix = publishAndDiscover(engineA, engineB, 1_000, 8, result);

        engineB.read(prefix, 0L, true, result);
        assertEquals(0, result.value(), () -> describe(result));
        assertEquals(KeyStatus.FAILED, result.status(0));
        assertEquals(FailureReason.CHECKSUM, result.reason(0));
        assertEquals(KeyStatus.NOT_ATTEMPTED, result.status(1));
        assertEquals(1, value(b, TransferCounter.CHECKSUM_MISMATCHES));
        assertEquals(0, value(b, TransferCounter.BLOCKS_ADMITTED));
        assertEquals(0, value(b, StoreCounter.BLOCKS_RESIDENT), "a block that failed its check was kept");
    }

    @Test
    @Timeout(180)
    void shouldAdmitFetchedBlocksWhenAlwaysSoALaterLookupHitsLocalDram() throws Exception
    {
        startCluster(new String[0], "--peer-admission", "always");
        final OrbitKvProcesses b = managers.get(1);
        final EngineClient engineA = engine(0);
        final EngineClient engineB = engine(1);
        final OperationResult result = new OperationResult(512);

        final KeyBatch prefix = publishAndDiscover(engineA, engineB, 2_000, 16, result);
        engineB.read(prefix, 0L, true, result);
        assertEquals(16, result.value(), () -> describe(result));
        assertEquals(16, value(b, TransferCounter.BLOCKS_ADMITTED));

        engineB.lookup(prefix, false, false, result);
        assertEquals(16, result.value(), "admitted blocks are local now");
        assertEquals(KeyStatus.DRAM, result.status(0));
        wipe(engineB);
        engineB.read(prefix, 0L, false, result);
        assertEquals(16, result.value());
        assertEquals(0, mismatches(engineB, 2_000, 16));
    }

    @Test
    @Timeout(240)
    void shouldUseTheOtherSourceWhenTheFirstEvictedAndFetchNothingFromARestartedSource() throws Exception
    {
        startCluster(3, new String[0], new String[0], "--peer-admission", "off");
        final OrbitKvProcesses b = managers.get(1);
        final EngineClient engineA = engine(0);
        final EngineClient engineB = engine(1);
        final EngineClient engineC = engine(2);
        final OperationResult result = new OperationResult(512);

        // A holds keys 0-31, C keys 0-15: the longest run is A's, so the planner asks A for the whole span.
        final KeyBatch prefix = batch(3_000, 32);
        fill(engineA, 3_000, 32);
        engineA.publish(prefix, result);
        fill(engineC, 3_000, 16);
        engineC.publish(batch(3_000, 16), result);
        awaitCandidates(engineB, batch(3_000, 16), 2, result);
        CatalogTestKeys.awaitPeerKeys(engineB, prefix, 32, result, DEADLINE_NS);

        // One request fills A's 32 MiB pool, quickly: B's index must still hold A's candidates when it reads.
        engineA.publish(CatalogTestKeys.batch(NS, 900_000, 512, BLOCK, REGION_BLOCKS), result);
        engineA.lookup(prefix, false, false, result);
        assertEquals(0, result.value(), "A still holds the prefix");

        // A refuses (MISSING): only its candidate of key 0 is dropped, and C serves what it holds, 0-15.
        wipe(engineB);
        engineB.read(prefix, 0L, true, result);
        assertEquals(16, result.value(), () -> describe(result));
        assertEquals("c", result.ownerNodeId(result.candidateOwnerIndex(0)));
        assertEquals(0, mismatches(engineB, 3_000, 16));
        assertTrue(value(b, TransferCounter.REFUSALS_RECEIVED) >= 1);
        assertTrue(value(b, TransferCounter.ALTERNATIVES_TRIED) >= 1);
        assertTrue(value(b, TransferCounter.CANDIDATES_REMOVED) >= 1);

        // C restarts: its old incarnation's candidates serve nothing, and no wrong byte arrives.
        final int other = 2;
        CloseHelper.quietClose(engineC);
        managers.get(other).close();
        // B may still hold the old incarnation's candidates (the index keeps them up to its TTL): whatever B asks,
        // the old incarnation is gone and the new one holds nothing, so no byte comes from either.
        managers.set(other, startManager(other, new String[0], new String[0]));
        final long fetched = value(b, TransferCounter.BLOCKS_FETCHED);
        wipe(engineB);
        engineB.read(prefix, 0L, true, result);
        assertEquals(0, result.value(), () -> describe(result));
        assertEquals(fetched, value(b, TransferCounter.BLOCKS_FETCHED));
    }

    @Test
    @Timeout(240)
    void shouldStopAtAKilledSourceAndLetGoOfEverythingOnTheRequester() throws Exception
    {
        startCluster(new String[0], "--peer-admission", "off");
        final OrbitKvProcesses a = managers.get(0);
        final OrbitKvProcesses b = managers.get(1);
        final EngineClient engineA = engine(0);
        final EngineClient engineB = engine(1);
        final OperationResult result = new OperationResult(512);

        final KeyBatch prefix = publishAndDiscover(engineA, engineB, 4_000, 32, result);
        engineB.lookup(prefix, true, true, result);
        assertEquals(32, result.value(), () -> describe(result));
        final long leaseId = result.leaseId();

        a.managerProcess().destroyForcibly().waitFor();
        final long startNs = System.nanoTime();
        wipe(engineB);
        engineB.read(prefix, leaseId, false, result);
        final long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs);
        assertEquals(0, result.value(), () -> describe(result));
        assertEquals(KeyStatus.FAILED, result.status(0), () -> describe(result));
        assertTrue(tookMs < io.orbitkv.codecs.TransferLimits.FETCH_BUDGET_MS + 2_000, "took " + tookMs + " ms");
        awaitCounter(b, RingCounter.LEASES_ACTIVE, 0);
        awaitCounter(b, TransferCounter.FETCHES_ACTIVE, 0);
        awaitCounter(b, TransferCounter.READS_IN_FLIGHT, 0);

        // A is still in the member view (its lease has not expired): the next Read with peers asks it and times out;
        // the one after plans around it for a while instead of waiting out its own timeout.
        engineB.read(prefix, 0L, true, result);
        assertEquals(0, result.value(), () -> describe(result));
        assertTrue(value(b, TransferCounter.AUTHORIZE_TIMEOUTS) >= 1, b::dump);
        engineB.read(prefix, 0L, true, result);
        assertEquals(0, result.value(), () -> describe(result));
        assertTrue(value(b, TransferCounter.UNANSWERED_SOURCE_SKIPS) >= 1, b::dump);
        awaitCounter(b, TransferCounter.FETCHES_ACTIVE, 0);
    }

    @Test
    @Timeout(240)
    void shouldRevokeAndUnpinAtTheSourceWhenTheRequesterIsKilled() throws Exception
    {
        startCluster(2, new String[0], new String[]{"--transfer-session-ttl", "2s"}, "--peer-admission", "off");
        final OrbitKvProcesses a = managers.get(0);
        final OrbitKvProcesses b = managers.get(1);
        final EngineClient engineA = engine(0);
        final EngineClient engineB = engine(1);
        final OperationResult result = new OperationResult(512);

        final KeyBatch prefix = publishAndDiscover(engineA, engineB, 5_000, 32, result);
        engineB.lookup(prefix, true, true, result);
        assertEquals(32, result.value(), () -> describe(result));
        awaitCounter(a, StoreCounter.PINS_ACTIVE, 32);

        b.managerProcess().destroyForcibly().waitFor();
        awaitCounter(a, StoreCounter.PINS_ACTIVE, 0);
    }

    private static void awaitCandidates(
        final EngineClient client, final KeyBatch batch, final int perKey, final OperationResult result)
    {
        final long deadline = System.nanoTime() + DEADLINE_NS;
        while (true)
        {
            client.lookup(batch, false, true, result);
            if (result.count(KeyStatus.PEER) == batch.keyCount() && result.candidateCount() == perKey * batch.keyCount())
            {
                return;
            }
            assertTrue(System.nanoTime() - deadline < 0, () -> "candidates: " + result.candidateCount());
        }
    }

    private static String describe(final OperationResult result)
    {
        final StringBuilder text = new StringBuilder("value ").append(result.value()).append(':');
        for (int i = 0; i < result.keyCount(); i++)
        {
            text.append(' ').append(result.status(i));
            if (KeyStatus.FAILED == result.status(i))
            {
                text.append('(').append(result.reason(i)).append(')');
            }
        }
        return text.toString();
    }
}
