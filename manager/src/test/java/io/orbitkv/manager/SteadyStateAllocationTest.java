package io.orbitkv.manager;

import io.orbitkv.codecs.RequestFlags;
import io.orbitkv.manager.catalog.CatalogCounter;
import io.orbitkv.manager.events.KvEventCounter;
import io.orbitkv.manager.status.CounterDescriptor;
import io.orbitkv.manager.status.SystemCounterDescriptor;
import static io.orbitkv.manager.ManagerTestSupport.agentThread;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.orbitkv.manager.store.StoreCounter;
import io.orbitkv.manager.transfer.TransferCounter;
import java.io.File;
import java.lang.management.ManagementFactory;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * design: the steady-state path (Publish/Lookup/Read for known namespaces) allocates nothing. Measured on the agent
 * thread itself with the JVM's per-thread allocation counter, over real requests through the CnC rings.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class SteadyStateAllocationTest
{
    private static final String NS = "model=alloc;dtype=bf16";
    private static final int KEYS = 64;
    private static final int BLOCK = 16 * 1024;
    private static final int WINDOWS = 5;
    private static final int ROUNDS = 1000;
    /** A loopback PUB socket on a port the system picks, with nobody subscribed. */
    private static final String KV_EVENTS = "tcp://127.0.0.1:*";

    private final File dir = ManagerTestSupport.newDir();
    private Manager manager;

    @AfterEach
    void tearDown()
    {
        if (null != manager)
        {
            manager.close();
        }
        ManagerTestSupport.deleteDir(dir);
    }

    @Test
    void shouldNotAllocateOnTheAgentThreadForPublishLookupAndRead()
    {
        // KV events on: every seal and eviction also goes through the event ring's observer on the agent thread.
        manager = Manager.launch(ManagerTestSupport.smallContext(dir).poolBytes(16L << 20).kvEventsEndpoint(KV_EVENTS));
        final com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
        assertTrue(threads.isThreadAllocatedMemorySupported());
        threads.setThreadAllocatedMemoryEnabled(true);

        try (RawRingClient client = new RawRingClient(manager.cncFile()))
        {
            client.attachOrFail("alloc-engine", 8L << 20);
            final RoundLayout layout = RoundLayout.filled(client);

            // Warm up: JIT, namespace registration and every code path once.
            runRounds(client, 0, 500, layout);

            final Thread agent = agentThread(manager);
            assertNotNull(agent);
            final int rounds = 1000;
            final int[] next = {500};
            final long allocated = quietestWindow(threads, agent, () ->
            {
                runRounds(client, next[0], rounds, layout);
                next[0] += rounds;
            });

            assertEquals(0, manager.counter(SystemCounterDescriptor.ERRORS));
            assertTrue(manager.counter(StoreCounter.EVICTIONS) > 0, "the run churned the pool");
            assertTrue(manager.counter(KvEventCounter.EVENTS_QUEUED) + manager.counter(KvEventCounter.EVENTS_DROPPED) >
                (long)rounds * KEYS, "every seal and eviction reached the event ring");
            // Three requests of 64 keys per round. One object per request would be >= 16 B/request; the bound of
            // < 1 B/request leaves room only for one-off runtime bookkeeping (JIT transitions), not for a leak.
            final int requests = rounds * 3;
            assertTrue(allocated < requests, "agent thread allocated " + allocated + " bytes over " + requests + " requests");
        }
    }

    @Test
    void shouldNotAllocateOnTheAgentThreadForZeroCopySaves()
    {
        manager = Manager.launch(ManagerTestSupport.smallContext(dir).poolBytes(16L << 20)
            .enginePoolAccess(Configuration.EnginePoolAccess.WRITE_RESERVED));
        final com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
        threads.setThreadAllocatedMemoryEnabled(true);
        try (RawRingClient client = new RawRingClient(manager.cncFile()))
        {
            client.attachOrFail("alloc-zero-copy-engine", 8L << 20);
            final int[] lengths = new int[KEYS];
            java.util.Arrays.fill(lengths, BLOCK);
            final byte[][] hashes = new byte[KEYS][];
            final java.util.function.IntConsumer rounds = start ->
            {
                for (int round = start; round < start + 500; round++)
                {
                    for (int i = 0; i < KEYS; i++)
                    {
                        hashes[i] = RawRingClient.hash(round * KEYS + i);
                    }
                    assertEquals(KEYS, client.awaitReply(client.prepare(NS, lengths, hashes)).value());
                    assertEquals(KEYS, client.awaitReply(client.commit(NS, hashes)).value());
                }
            };
            rounds.accept(0);
            final Thread agent = agentThread(manager);
            assertNotNull(agent);
            final int[] next = {500};
            final long allocated = quietestWindow(threads, agent, () ->
            {
                rounds.accept(next[0]);
                next[0] += 500;
            });
            assertTrue(manager.counter(StoreCounter.EVICTIONS) > 0, "the run churned the pool");
            final int requests = 500 * 2;
            assertTrue(allocated < requests, "agent thread allocated " + allocated + " bytes over " + requests + " requests");
        }
    }

    @Test
    void shouldNotAllocateOnTheAgentThreadWhileEvictingToSsdAndReadingFromSsd()
    {
        final File ssdDir = new File("target/ssd-alloc/" + dir.getName()).getAbsoluteFile();
        try
        {
            manager = Manager.launch(ManagerTestSupport.smallContext(dir)
                .poolBytes(16L << 20)
                .ssdDir(ssdDir)
                .ssdBytes(32L << 20)
                .ssdStagingBytes(8L << 20)
                .ssdQueueDepth(16)
                .ssdDirectReads(Configuration.SsdDirectReads.ON)
                .kvEventsEndpoint(KV_EVENTS));
            final com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
            threads.setThreadAllocatedMemoryEnabled(true);

            try (RawRingClient client = new RawRingClient(manager.cncFile()))
            {
                client.attachOrFail("alloc-ssd-engine", 8L << 20);
                final RoundLayout layout = RoundLayout.filled(client);

                runSsdRounds(client, 0, 2000, layout);

                final Thread agent = agentThread(manager);
                final long readsBefore = manager.counter(StoreCounter.SSD_READS);
                final int rounds = 500;
                final int requests = 3 * rounds;
                final int[] next = {2000};
                final long allocated = quietestWindow(threads, agent, () ->
                {
                    runSsdRounds(client, next[0], rounds, layout);
                    next[0] += rounds;
                });

                assertEquals(0, manager.counter(SystemCounterDescriptor.ERRORS));
                assertTrue(manager.counter(StoreCounter.SSD_READS) - readsBefore > rounds * KEYS / 2L,
                    "most old keys were served from SSD");
                assertEquals(manager.counter(StoreCounter.SSD_READS), manager.counter(StoreCounter.SSD_DIRECT_READS),
                    "aligned destinations: every SSD read went straight into the data region");
                assertTrue(manager.counter(StoreCounter.SSD_EVICTIONS) > 0, "the run churned the SSD");
                assertTrue(manager.counter(KvEventCounter.EVENTS_QUEUED) > 0, "SSD residences reached the event ring");
                assertTrue(allocated < requests,
                    "agent thread allocated " + allocated + " bytes over " + requests + " requests");
            }
        }
        finally
        {
            ManagerTestSupport.deleteDir(ssdDir);
        }
    }

    @Test
    void shouldNotAllocateOnTheAgentThreadWhileAnnouncingBlocksAndAnsweringFromItsOwnShards() throws Exception
    {
        try (io.orbitkv.manager.membership.EtcdCluster etcd = io.orbitkv.manager.membership.EtcdCluster.start(1))
        {
            // One clustered Manager hosting all 16 shards: every publish and eviction is an inventory transition
            // streamed to the host (itself, over UDP) and applied there; every peers lookup of keys nobody holds is
            // read from its own catalog view on the same agent thread (no RPC).
            manager = Manager.launch(catalogContext(dir, etcd, newCluster(), "a", "a"));
            awaitCatalogReady(manager, 1);
            final long queriesBefore = manager.counter(CatalogCounter.COLD_QUERIES);
            final long localBefore = manager.counter(CatalogCounter.LOCAL_HOST_KEYS);
            final long appliedBefore = manager.counter(CatalogCounter.RECORDS_APPLIED);

            final long allocated = measureCatalogRounds("a", agentThread(manager));

            assertEquals(0, manager.counter(SystemCounterDescriptor.ERRORS));
            assertEquals(queriesBefore, manager.counter(CatalogCounter.COLD_QUERIES),
                "a lookup sent a cold query to the Manager itself");
            assertTrue(manager.counter(CatalogCounter.LOCAL_HOST_KEYS) - localBefore >= 2L * ROUNDS,
                "every peers lookup read the Manager's own view");
            assertTrue(manager.counter(CatalogCounter.RECORDS_APPLIED) - appliedBefore >= ROUNDS,
                "the host applied the owner's stream");
            assertTrue(allocated < 2L * ROUNDS,
                "agent thread allocated " + allocated + " bytes over " + 2 * ROUNDS + " requests");
        }
    }

    @Test
    void shouldNotAllocateOnTheAgentThreadsWhileStreamingToAndQueryingAnotherHost() throws Exception
    {
        streamToAndQueryAnotherHost(null);
    }

    @Test
    void shouldNotAllocateOnTheAgentThreadsWhileStreamingToAndQueryingAnotherHostOverAnAuthenticatedChannel()
        throws Exception
    {
        streamToAndQueryAnotherHost(secretFile());
    }

    private void streamToAndQueryAnotherHost(final String secretFile) throws Exception
    {
        final File hostDir = ManagerTestSupport.newDir();
        Manager host = null;
        try (io.orbitkv.manager.membership.EtcdCluster etcd = io.orbitkv.manager.membership.EtcdCluster.start(1))
        {
            // A (engine, owner, requester) and B hosting all 16 shards: every transition on A is streamed to B and
            // applied there; every peers lookup on A is one cold query to B, answered on B's agent thread and decoded
            // on A's. Both agent threads are measured, each against its own budget (see HOST_SENDER_SWITCH_BYTES).
            final String cluster = newCluster();
            manager = Manager.launch(catalogContext(dir, etcd, cluster, "a", "b").clusterSecretFile(secretFile));
            host = Manager.launch(catalogContext(hostDir, etcd, cluster, "b", "b").clusterSecretFile(secretFile));
            awaitCatalogReady(manager, 2);
            awaitCatalogReady(host, 2);
            final long queriesBefore = manager.counter(CatalogCounter.COLD_QUERIES);
            final long appliedBefore = host.counter(CatalogCounter.RECORDS_APPLIED);

            final long[] window = measureCatalogWindows("b", agentThread(manager), agentThread(host));

            assertEquals(0, manager.counter(SystemCounterDescriptor.ERRORS));
            assertEquals(0, host.counter(SystemCounterDescriptor.ERRORS));
            assertTrue(manager.counter(CatalogCounter.COLD_QUERIES) - queriesBefore >= ROUNDS,
                "every peers lookup sent a cold query to B");
            assertTrue(host.counter(CatalogCounter.RECORDS_APPLIED) - appliedBefore >= ROUNDS,
                "B applied A's stream");
            assertAuthenticated(secretFile, manager, host);
            assertTrue(window[0] < 2L * ROUNDS && window[1] < hostBudget(window[2]),
                "over " + 2 * ROUNDS + " requests in " + window[2] / 1_000_000 + " ms A's agent thread allocated " +
                window[0] + " bytes and B's " + window[1] + " (budgets " + 2 * ROUNDS + ", " + hostBudget(window[2]) +
                ")");
        }
        finally
        {
            if (null != host)
            {
                host.close();
            }
            ManagerTestSupport.deleteDir(hostDir);
        }
    }

    @Test
    void shouldNotAllocateOnTheAgentThreadsWhileFetchingBlocksFromAPeer() throws Exception
    {
        fetchBlocksFromAPeer(null);
    }

    @Test
    void shouldNotAllocateOnTheAgentThreadsWhileFetchingBlocksFromAPeerOverAnAuthenticatedChannel() throws Exception
    {
        fetchBlocksFromAPeer(secretFile());
    }

    private void fetchBlocksFromAPeer(final String secretFile) throws Exception
    {
        final File sourceDir = ManagerTestSupport.newDir();
        Manager source = null;
        try (io.orbitkv.manager.membership.EtcdCluster etcd = io.orbitkv.manager.membership.EtcdCluster.start(1))
        {
            // A publishes a prefix once; every Read with peers on B restores it from A: discovery (warm index or
            // a cold query), authorization and grant, transport reads into B's engine region, CRC32C checks and the
            // release. Both agent threads are measured against the budgets of the catalog test.
            final String cluster = newCluster();
            source = Manager.launch(catalogContext(sourceDir, etcd, cluster, "a", "a,b").clusterSecretFile(secretFile));
            manager = Manager.launch(catalogContext(dir, etcd, cluster, "b", "a,b").clusterSecretFile(secretFile)
                .peerAdmission(io.orbitkv.manager.transfer.PeerAdmission.Policy.OFF));
            awaitCatalogReady(source, 2);
            awaitCatalogReady(manager, 2);

            final byte[][] hashes = new byte[KEYS][];
            final long[] offsets = new long[KEYS];
            final int[] lengths = new int[KEYS];
            for (int i = 0; i < KEYS; i++)
            {
                hashes[i] = RawRingClient.hash(7_000_000 + i);
                offsets[i] = (long)i * BLOCK;
                lengths[i] = BLOCK;
            }
            final com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
            threads.setThreadAllocatedMemoryEnabled(true);
            try (RawRingClient publisher = new RawRingClient(source.cncFile());
                RawRingClient reader = new RawRingClient(manager.cncFile()))
            {
                publisher.attachOrFail("alloc-source-engine", 8L << 20);
                for (int i = 0; i < KEYS; i++)
                {
                    publisher.fill(offsets[i], BLOCK, i);
                }
                assertEquals(KEYS, publisher.awaitReply(publisher.publish(NS, offsets, lengths, hashes)).value());
                reader.attachOrFail("alloc-fetch-engine", 8L << 20);
                final long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
                while (fetch(reader, hashes, offsets, lengths) < KEYS)
                {
                    assertTrue(System.nanoTime() - deadline < 0, "B never restored the prefix from A");
                }
                for (int i = 0; i < ROUNDS; i++)
                {
                    assertFetched(reader, hashes, offsets, lengths, source);
                }
                for (int i = 0; i < KEYS; i++)
                {
                    assertTrue(reader.matches(offsets[i], BLOCK, i), "block " + i + " restored byte-exact");
                }

                final long[] window = new long[3];
                final long requesterThreadId = agentThread(manager).threadId();
                final long sourceThreadId = agentThread(source).threadId();
                for (int w = 1; w <= WINDOWS; w++)
                {
                    final long requesterBefore = threads.getThreadAllocatedBytes(requesterThreadId);
                    final long sourceBefore = threads.getThreadAllocatedBytes(sourceThreadId);
                    final long start = System.nanoTime();
                    for (int i = 0; i < ROUNDS; i++)
                    {
                        assertFetched(reader, hashes, offsets, lengths, source);
                    }
                    window[2] = System.nanoTime() - start;
                    window[0] = threads.getThreadAllocatedBytes(requesterThreadId) - requesterBefore;
                    window[1] = threads.getThreadAllocatedBytes(sourceThreadId) - sourceBefore;
                    if (window[0] < hostBudget(window[2]) && window[1] < hostBudget(window[2]))
                    {
                        break;
                    }
                }
                assertEquals(0, manager.counter(SystemCounterDescriptor.ERRORS));
                assertEquals(0, source.counter(SystemCounterDescriptor.ERRORS));
                assertTrue(manager.counter(TransferCounter.BLOCKS_FETCHED) >= 2L * ROUNDS * KEYS);
                assertAuthenticated(secretFile, manager, source);
                assertTrue(window[0] < hostBudget(window[2]) && window[1] < hostBudget(window[2]),
                    "over " + ROUNDS + " peer reads of " + KEYS + " blocks in " + window[2] / 1_000_000 + " ms B's " +
                    "agent thread allocated " + window[0] + " bytes and A's " + window[1] + " (budget " +
                    hostBudget(window[2]) + " each)");
            }
        }
        finally
        {
            if (null != source)
            {
                source.close();
            }
            ManagerTestSupport.deleteDir(sourceDir);
        }
    }

    /**
     * One Read with the peers flag of the whole prefix.
     *
     * @return blocks restored.
     */
    private static long fetch(
        final RawRingClient reader, final byte[][] hashes, final long[] offsets, final int[] lengths)
    {
        return reader.awaitReply(
            reader.read(NS, 0L, RequestFlags.READ_PEERS, offsets, lengths, hashes)).value();
    }

    private void assertFetched(
        final RawRingClient reader, final byte[][] hashes, final long[] offsets, final int[] lengths,
        final Manager source)
    {
        final RawRingClient.Reply reply =
            reader.awaitReply(reader.read(NS, 0L, RequestFlags.READ_PEERS, offsets, lengths, hashes));
        if (KEYS != reply.value())
        {
            final int at = (int)reply.value();
            fail("fetch restored " + at + " of " + KEYS + ": " + reply.statuses().get(at) + " " +
                reply.reasons().get(at) + "\n" + counters(source, "Transfer") + counters(manager, "Transfer") +
                counters(manager, "Catalog"));
        }
    }

    private static String counters(final Manager m, final String prefix)
    {
        final StringBuilder text = new StringBuilder();
        try (io.orbitkv.manager.status.CncReader cnc = io.orbitkv.manager.status.CncReader.map(m.cncFile()))
        {
            cnc.readErrors((count, first, last, encoded) -> text.append(count).append("x ").append(encoded, 0,
                Math.min(300, encoded.length())).append('\n'));
        }
        for (final CounterDescriptor d : SystemCounterFamilies.descriptors().toList())
        {
            if (d.label().startsWith(prefix) && 0 != m.counter(d))
            {
                text.append(d.label()).append(" = ").append(m.counter(d)).append('\n');
            }
        }
        return text.toString();
    }

    private static String newCluster()
    {
        return "alloc-" + java.util.UUID.randomUUID().toString().substring(0, 8);
    }

    private static void awaitCatalogReady(final Manager m, final int members)
    {
        ManagerTestSupport.awaitTrue(() -> 0 == m.counter(CatalogCounter.INCOMPLETE_SHARDS) &&
            m.membership().view().members().size() == members && m.membership().remoteWorkEnabled(System.nanoTime()),
            () -> "catalog ready");
    }

    /**
     * Warm up, then the quietest window of {@link #ROUNDS} catalog rounds through an engine on {@link #manager}
     * asking keys of shards {@code host} holds.
     *
     * @return bytes the agent thread allocated in that window.
     */
    private long measureCatalogRounds(final String host, final Thread agent)
    {
        final com.sun.management.ThreadMXBean threads =
            (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
        threads.setThreadAllocatedMemoryEnabled(true);
        try (RawRingClient client = catalogClient(host))
        {
            final io.orbitkv.codecs.ShardPlacement placement = manager.context().placement();
            final int[] next = {ROUNDS};
            return quietestWindow(threads, agent, () ->
            {
                runCatalogRounds(client, placement, host, next[0], ROUNDS);
                next[0] += ROUNDS;
            });
        }
    }

    /**
     * An engine attached to {@link #manager}, after one warm-up window of catalog rounds.
     */
    private RawRingClient catalogClient(final String host)
    {
        final RawRingClient client = new RawRingClient(manager.cncFile());
        client.attachOrFail("alloc-catalog-engine", 8L << 20);
        // Until the session to the host is up, a key no copy can be asked of yet is answered unavailable (FAILED),
        // not absent: wait for the first MISS, then measure.
        final io.orbitkv.codecs.ShardPlacement placement = manager.context().placement();
        final byte[][] probe = {absentHash(placement, host, -7), absentHash(placement, host, -8)};
        ManagerTestSupport.awaitTrue(() -> io.orbitkv.codecs.engine.KeyStatus.MISS ==
            client.awaitReply(client.lookup(NS, RequestFlags.LOOKUP_PEERS, probe)).statuses().get(0),
            () -> "a peers lookup reaches the copy on " + host);
        runCatalogRounds(client, placement, host, 0, ROUNDS);
        return client;
    }

    /**
     * Host B's peer socket hears A's datagrams and the heartbeats of B's own idle streams to itself (Aeron sends one
     * on an idle publication every 100 ms). The JDK's {@code DatagramChannel.receive} allocates the source address
     * (~150 B) whenever a datagram's sender differs from the previous one's, so B's media driver allocates a few KB a
     * second whatever the request rate (docs/catalog.md). B's budget is one byte per request plus this much per second
     * of the window; an allocation per request (16 B or more: 32 KB a window) still exceeds it.
     */
    private static final long HOST_SENDER_SWITCH_BYTES_PER_SECOND = 4096;

    private static long hostBudget(final long windowNs)
    {
        return 2L * ROUNDS + HOST_SENDER_SWITCH_BYTES_PER_SECOND * (windowNs / 1_000_000_000L + 1);
    }

    /**
     * Warm up, then windows of {@link #ROUNDS} catalog rounds through an engine on {@link #manager} (A) asking keys
     * of shards {@code host} holds, until one is within both budgets or {@link #WINDOWS} were run.
     *
     * @return A's bytes, B's bytes and the duration of the first window within budget (else of the last window).
     */
    private long[] measureCatalogWindows(final String host, final Thread requester, final Thread hostAgent)
    {
        final com.sun.management.ThreadMXBean threads =
            (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
        threads.setThreadAllocatedMemoryEnabled(true);
        try (RawRingClient client = catalogClient(host))
        {
            final io.orbitkv.codecs.ShardPlacement placement = manager.context().placement();
            final long[] window = new long[3];
            for (int w = 1; w <= WINDOWS; w++)
            {
                final long requesterBefore = threads.getThreadAllocatedBytes(requester.threadId());
                final long hostBefore = threads.getThreadAllocatedBytes(hostAgent.threadId());
                final long start = System.nanoTime();
                runCatalogRounds(client, placement, host, w * ROUNDS, ROUNDS);
                window[2] = System.nanoTime() - start;
                window[0] = threads.getThreadAllocatedBytes(requester.threadId()) - requesterBefore;
                window[1] = threads.getThreadAllocatedBytes(hostAgent.threadId()) - hostBefore;
                if (window[0] < 2L * ROUNDS && window[1] < hostBudget(window[2]))
                {
                    break;
                }
            }
            return window;
        }
    }

    /**
     * An owner-only cluster secret file (outside the Managers' directories).
     */
    private static String secretFile() throws java.io.IOException
    {
        final java.nio.file.Path file = java.nio.file.Files.createTempFile("orbitkv-cluster-secret", "");
        file.toFile().deleteOnExit();
        java.nio.file.Files.writeString(file, "steady-state-allocation-secret-0123456789");
        java.nio.file.Files.setPosixFilePermissions(file, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        return file.toString();
    }

    /**
     * With a secret, both Managers verified frames and dropped none; without, neither signed any.
     */
    private static void assertAuthenticated(final String secretFile, final Manager... managers)
    {
        for (final Manager m : managers)
        {
            if (null == secretFile)
            {
                assertEquals(0, m.counter(io.orbitkv.manager.peer.PeerAuthCounter.FRAMES_SIGNED));
                continue;
            }
            assertTrue(m.counter(io.orbitkv.manager.peer.PeerAuthCounter.FRAMES_VERIFIED) >= ROUNDS);
            assertEquals(0, m.counter(io.orbitkv.manager.peer.PeerAuthCounter.DROPPED_BAD_MAC));
            assertEquals(0, m.counter(io.orbitkv.manager.peer.PeerAuthCounter.DROPPED_DUPLICATE));
            assertEquals(0, m.counter(io.orbitkv.manager.peer.PeerAuthCounter.DROPPED_TOO_OLD));
        }
    }

    private static ManagerContext catalogContext(
        final File dir, final io.orbitkv.manager.membership.EtcdCluster etcd, final String cluster, final String node,
        final String catalogNodes)
    {
        return ManagerTestSupport.smallContext(dir)
            .poolBytes(16L << 20)
            .etcdEndpoints(etcd.endpoints())
            .clusterName(cluster)
            .nodeId(node)
            .catalogNodes(catalogNodes)
            // One copy per shard, so a key of the other node's shards is a cold query to it, as this test measures.
            .catalogReplicas(1)
            .membershipLog(new java.io.PrintStream(java.io.OutputStream.nullOutputStream()));
    }

    /**
     * Bytes the agent thread allocated in the quietest of up to {@link #WINDOWS} measurement windows (stopping at the
     * first that allocated nothing). A deoptimisation in one window can make the interpreter allocate what compiled
     * code had scalar-replaced, once; an allocation per request shows in every window and still fails the bound.
     */
    private static long quietestWindow(
        final com.sun.management.ThreadMXBean threads, final Thread agent, final Runnable window)
    {
        long quietest = Long.MAX_VALUE;
        for (int w = 0; w < WINDOWS && quietest > 0; w++)
        {
            final long before = threads.getThreadAllocatedBytes(agent.threadId());
            window.run();
            quietest = Math.min(quietest, threads.getThreadAllocatedBytes(agent.threadId()) - before);
        }
        return quietest;
    }

    /**
     * Publish a new round (evictions follow), then a peers lookup of two keys nobody holds, of shards {@code host}
     * holds. The first misses, so the second is not attempted in the answer, but both were asked.
     */
    private static void runCatalogRounds(
        final RawRingClient client, final io.orbitkv.codecs.ShardPlacement placement, final String host,
        final int start, final int rounds)
    {
        final long[] offsets = new long[KEYS];
        final int[] lengths = new int[KEYS];
        for (int i = 0; i < KEYS; i++)
        {
            offsets[i] = (long)i * BLOCK;
            lengths[i] = BLOCK;
        }
        final byte[][] hashes = new byte[KEYS][];
        final byte[][] absent = new byte[2][];
        for (int round = start; round < start + rounds; round++)
        {
            for (int i = 0; i < KEYS; i++)
            {
                hashes[i] = RawRingClient.hash(round * KEYS + i);
            }
            absent[0] = absentHash(placement, host, -1 - 2 * round);
            absent[1] = absentHash(placement, host, -2 - 2 * round);
            assertEquals(KEYS, client.awaitReply(client.publish(NS, offsets, lengths, hashes)).value());
            final RawRingClient.Reply missed =
                client.awaitReply(client.lookup(NS, RequestFlags.LOOKUP_PEERS, absent));
            assertEquals(java.util.List.of(io.orbitkv.codecs.engine.KeyStatus.MISS,
                io.orbitkv.codecs.engine.KeyStatus.NOT_ATTEMPTED), missed.statuses());
        }
    }

    /**
     * A hash no engine publishes (negative seeds, stepping down by 1,000,000 until the shard's host is {@code host}).
     */
    private static byte[] absentHash(final io.orbitkv.codecs.ShardPlacement placement, final String host, final int seed)
    {
        final byte[] ns = NS.getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        final io.orbitkv.codecs.StateKeyShard shards = new io.orbitkv.codecs.StateKeyShard();
        for (int s = seed; ; s -= 1_000_000)
        {
            final byte[] hash = RawRingClient.hash(s);
            if (host.equals(placement.hostOf(shards.shard(new org.agrona.concurrent.UnsafeBuffer(ns), 0, ns.length,
                new org.agrona.concurrent.UnsafeBuffer(hash), 0, hash.length))))
            {
                return hash;
            }
        }
    }

    /** Publish a new round (evicting an older one to SSD), look it up, and read a round old enough to be on SSD. */
    private static int runSsdRounds(
        final RawRingClient client, final int start, final int rounds, final RoundLayout layout)
    {
        final byte[][] hashes = new byte[KEYS][];
        final byte[][] old = new byte[KEYS][];
        final long[] offsets = layout.offsets();
        final long[] dst = layout.dst();
        final int[] lengths = layout.lengths();
        final int[] capacities = lengths.clone();
        int requests = 0;
        for (int round = start; round < start + rounds; round++)
        {
            for (int i = 0; i < KEYS; i++)
            {
                hashes[i] = RawRingClient.hash(round * KEYS + i);
                old[i] = RawRingClient.hash(Math.max(0, round - 20) * KEYS + i);
            }
            assertEquals(KEYS, client.awaitReply(client.publish(NS, offsets, lengths, hashes)).value());
            assertEquals(KEYS, client.awaitReply(client.lookup(NS, false, hashes)).value());
            client.awaitReply(client.read(NS, 0, dst, capacities, old));
            requests += 3;
        }
        return requests;
    }

    private static void runRounds(
        final RawRingClient client, final int start, final int rounds, final RoundLayout layout)
    {
        final byte[][] hashes = new byte[KEYS][];
        final long[] offsets = layout.offsets();
        final long[] dst = layout.dst();
        final int[] lengths = layout.lengths();
        final int[] capacities = lengths.clone();
        // Every block carries a lineage, as the vLLM connector's do: the ring hands it to the KV events too.
        final byte[][] parents = new byte[KEYS][];
        final int[][] tokenIds = new int[KEYS][];
        for (int round = start; round < start + rounds; round++)
        {
            for (int i = 0; i < KEYS; i++)
            {
                hashes[i] = RawRingClient.hash(round * KEYS + i);
                parents[i] = 0 == i ? null : hashes[i - 1];
                tokenIds[i] = LINEAGE_TOKENS;
            }
            assertEquals(KEYS, client.awaitReply(client.publish(NS, offsets, lengths, hashes, parents, tokenIds)).value());
            assertEquals(KEYS, client.awaitReply(client.lookup(NS, false, hashes)).value());
            assertEquals(KEYS, client.awaitReply(client.read(NS, 0, dst, capacities, hashes)).value());
        }
    }

    /**
     * Where each of a round's {@link #KEYS} blocks sits in the engine's data region: published from the first 4 MB
     * (filled once with a pattern), read back into the next 4 MB.
     */
    private static final int[] LINEAGE_TOKENS = new int[16];

    private record RoundLayout(long[] offsets, long[] dst, int[] lengths)
    {
        static RoundLayout filled(final RawRingClient client)
        {
            final long[] offsets = new long[KEYS];
            final long[] dst = new long[KEYS];
            final int[] lengths = new int[KEYS];
            for (int i = 0; i < KEYS; i++)
            {
                offsets[i] = (long)i * BLOCK;
                dst[i] = (4L << 20) + (long)i * BLOCK;
                lengths[i] = BLOCK;
                client.fill(offsets[i], BLOCK, i);
            }
            return new RoundLayout(offsets, dst, lengths);
        }
    }
}
