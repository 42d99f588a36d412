package io.orbitkv.manager;

import io.orbitkv.codecs.RequestFlags;
import io.orbitkv.manager.catalog.CatalogCounter;
import io.orbitkv.manager.membership.MembershipCounter;
import io.orbitkv.manager.status.CounterDescriptor;
import io.orbitkv.manager.status.SystemCounterDescriptor;
import io.orbitkv.manager.store.StoreCounter;
import java.io.File;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import io.orbitkv.client.EngineClient;
import io.orbitkv.client.KeyBatch;
import io.orbitkv.client.OperationResult;
import io.orbitkv.codecs.engine.KeyStatus;
import io.orbitkv.manager.membership.EtcdCluster;
import org.agrona.CloseHelper;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Three clustered Managers in one JVM (each with its own media driver and agents) against a real etcd: blocks
 * published on A are discovered by an engine on B through the catalog, warm hits cost no RPC and no etcd call, and
 * an eviction on A stops B's answer from offering the block.
 */
class ManagerCatalogTest
{
    private static final String NS = "model=catalog;dtype=bf16";
    private static final int BLOCK = 64 * 1024;
    private static final long DEADLINE_NS = TimeUnit.SECONDS.toNanos(30);

    private EtcdCluster etcd;
    private final List<Manager> managers = new ArrayList<>();
    private final List<EngineClient> clients = new ArrayList<>();
    private final List<File> dirs = new ArrayList<>();
    private String cluster;

    @BeforeEach
    void setUp() throws Exception
    {
        etcd = EtcdCluster.start(1);
        cluster = "cat-" + UUID.randomUUID().toString().substring(0, 8);
        for (final String node : List.of("a", "b", "c"))
        {
            managers.add(launch(node));
        }
        for (final Manager manager : managers)
        {
            ManagerTestSupport.awaitTrue(
                () -> manager.membership().view().isComplete() && manager.membership().view().members().size() == 3,
                () -> "complete view of 3 at " + manager);
        }
    }

    @AfterEach
    void tearDown()
    {
        CloseHelper.quietCloseAll(clients);
        CloseHelper.quietCloseAll(managers);
        CloseHelper.quietClose(etcd);
        dirs.forEach(ManagerTestSupport::deleteDir);
    }

    private Manager launch(final String node)
    {
        final File dir = ManagerTestSupport.newDir();
        dirs.add(dir);
        final ManagerContext ctx = ManagerTestSupport.smallContext(dir);
        if ("c".equals(node))
        {
            // C also has an SSD tier: its evictions become SSD residences.
            final File ssdDir = new File("target/ssd-tests/" + dir.getName()).getAbsoluteFile();
            dirs.add(ssdDir);
            ctx.ssdDir(ssdDir).ssdBytes(32L << 20).ssdStagingBytes(4L << 20);
            // C idles with the Manager's default backoff, sleeping on its peer socket; A and B yield.
            ctx.idleStrategy(null);
        }
        return Manager.launch(ctx
            .etcdEndpoints(etcd.endpoints())
            .clusterName(cluster)
            .nodeId(node)
            .catalogNodes("a,b,c")
            // One copy per shard: these tests follow the cold queries to a shard's single host (copies: the
            // replica end-to-end test and PeerDiscoveryTest).
            .catalogReplicas(1)
            .membershipLog(System.out));
    }

    private EngineClient client(final Manager manager)
    {
        final EngineClient client = EngineClient.connect(new EngineClient.Context()
            .dir(manager.context().dir().getAbsolutePath())
            .clientName("engine-" + clients.size())
            .dataRegionBytes(4L << 20));
        clients.add(client);
        return client;
    }

    private static KeyBatch batch(final int first, final int count)
    {
        return CatalogTestKeys.batch(NS, first, count, BLOCK, 32);
    }

    private static long sum(final Manager manager, final CounterDescriptor... descriptors)
    {
        long sum = 0;
        for (final CounterDescriptor d : descriptors)
        {
            sum += manager.counter(d);
        }
        return sum;
    }

    private static long peerCounter(final Manager manager, final io.orbitkv.manager.peer.PeerCounter counter)
    {
        return manager.catalog().transport().counters().value(counter);
    }

    private long hostTotal(final CounterDescriptor descriptor)
    {
        long total = 0;
        for (final Manager manager : managers)
        {
            total += manager.counter(descriptor);
        }
        return total;
    }

    private static final CounterDescriptor[] ETCD_CALLS = {
        MembershipCounter.ETCD_CALLS_GET,
        MembershipCounter.ETCD_CALLS_TXN,
        MembershipCounter.ETCD_CALLS_LEASE_GRANT,
        MembershipCounter.ETCD_CALLS_LEASE_REVOKE,
        MembershipCounter.ETCD_CALLS_WATCH,
    };

    private static OperationResult awaitPeerKeys(
        final EngineClient client, final KeyBatch batch, final int expected, final OperationResult result)
    {
        return CatalogTestKeys.awaitPeerKeys(client, batch, expected, result, DEADLINE_NS);
    }

    @Test
    @Timeout(120)
    void shouldDiscoverBlocksPublishedOnAnotherManagerAndForgetThemWhenEvicted()
    {
        final Manager a = managers.get(0);
        final Manager b = managers.get(1);
        final EngineClient engineA = client(a);
        final EngineClient engineB = client(b);
        final int count = 24;
        final KeyBatch published = batch(0, count);
        final OperationResult result = new OperationResult(512);
        engineA.publish(published, result);
        assertEquals(count, result.value(), "stored on A");

        // Discovery on B: the answer carries A's candidates for every key, with A's node id and runtime UUID.
        awaitPeerKeys(engineB, published, count, result);
        assertEquals(0, result.value(), "nothing is local on B");
        assertEquals(count, result.candidateCount());
        assertEquals(1, result.ownerCount());
        assertEquals("a", result.ownerNodeId(0));
        assertEquals(a.runtimeUuid().getMostSignificantBits(), result.ownerRuntimeUuidMsb(0));
        assertEquals(a.runtimeUuid().getLeastSignificantBits(), result.ownerRuntimeUuidLsb(0));
        for (int i = 0; i < count; i++)
        {
            assertEquals(i, result.candidateKeyIndex(i));
            assertEquals(KeyStatus.DRAM, result.candidateTier(i));
            assertEquals(BLOCK, result.candidateLength(i));
        }

        // The catalog hosts that answered show it in their own counters (published on their housekeeping tick):
        // every key B asked was answered as a row, by at most as many queries as B sent.
        final long deadlineNs = System.nanoTime() + DEADLINE_NS;
        while (hostTotal(CatalogCounter.COLD_ROWS_SERVED) < b.counter(
            CatalogCounter.COLD_KEYS))
        {
            assertTrue(System.nanoTime() - deadlineNs < 0, "hosts' cold query counters did not catch up");
            Thread.onSpinWait();
        }
        assertTrue(hostTotal(CatalogCounter.COLD_QUERIES_SERVED) >= 1);
        // Keys of shards B hosts itself were read from B's own view: no RPC to itself, and none served by B.
        assertTrue(b.counter(CatalogCounter.LOCAL_HOST_KEYS) > 0, "no key of B's own shards");
        assertEquals(0, b.counter(CatalogCounter.COLD_QUERIES_SERVED), "B sent itself a query");
        assertTrue(hostTotal(CatalogCounter.COLD_QUERIES_SERVED) <=
            b.counter(CatalogCounter.COLD_QUERIES));
        assertEquals(0, hostTotal(CatalogCounter.COLD_QUERIES_REFUSED));
        assertEquals(0, hostTotal(CatalogCounter.COLD_QUERIES_MALFORMED));
        assertEquals(0, hostTotal(CatalogCounter.COLD_CLAIMS_CORRECTED));

        // C's idle waits watch its peer socket and datagrams (A's stream, B's queries) end them: a park of the backoff
        // phase (peer counter) or, once idle long enough, a deep sleep (system counter), whichever C was in; A only
        // yields.
        final Manager c = managers.get(2);
        ManagerTestSupport.awaitTrue(() -> peerCounter(c, io.orbitkv.manager.peer.PeerCounter.IDLE_SOCKET_WAKEUPS) +
            c.counter(SystemCounterDescriptor.IDLE_PEER_WAKEUPS) > 0, () -> "no idle wait of C ended by a datagram");
        assertEquals(0, peerCounter(a, io.orbitkv.manager.peer.PeerCounter.IDLE_SOCKET_WAITS));

        // Warm: answered from B's candidate index with no catalog RPC and no etcd call.
        final long coldBefore = b.counter(CatalogCounter.COLD_QUERIES);
        final long etcdBefore = sum(b, ETCD_CALLS);
        final long hitsBefore = b.counter(CatalogCounter.CANDIDATE_HITS);
        engineB.lookup(published, false, true, result);
        assertEquals(count, result.count(KeyStatus.PEER));
        assertEquals(coldBefore, b.counter(CatalogCounter.COLD_QUERIES), "warm hit sent a query");
        assertEquals(etcdBefore, sum(b, ETCD_CALLS), "warm hit called etcd");
        assertEquals(hitsBefore + count, b.counter(CatalogCounter.CANDIDATE_HITS));

        // Warm keys followed by cold ones: the warm prefix is answered from the index, the rest after the queries,
        // and candidates stay in key order.
        engineA.publish(batch(count, 8), result);
        awaitPeerKeys(engineB, batch(0, count + 8), count + 8, result);
        assertEquals(count + 8, result.candidateCount());
        for (int i = 0; i < count + 8; i++)
        {
            assertEquals(i, result.candidateKeyIndex(i));
        }

        // A lookup without the flag stays local.
        engineB.lookup(published, false, false, result);
        assertEquals(0, result.count(KeyStatus.PEER));
        assertEquals(KeyStatus.MISS, result.status(0));

        // Evict the first key on A by filling its 8 MiB pool with other blocks; B stops being offered it.
        for (int round = 1; round <= 8; round++)
        {
            engineA.publish(batch(round * 1000, 32), result);
        }
        final KeyBatch first = batch(0, 1);
        engineA.lookup(first, false, false, result);
        assertEquals(KeyStatus.MISS, result.status(0), "evicted on A");
        assertTrue(a.counter(CatalogCounter.INVENTORY_REMOVES) > 0);
        final long deadline = System.nanoTime() + DEADLINE_NS;
        do
        {
            engineB.lookup(first, false, true, result);
            assertTrue(System.nanoTime() - deadline < 0, "B still offered the evicted block");
        }
        while (KeyStatus.MISS != result.status(0));
    }

    @Test
    @Timeout(120)
    void shouldOfferTheSsdResidenceOfABlockTheOwnerEvictedToSsd()
    {
        final Manager c = managers.get(2);
        final Manager b = managers.get(1);
        final EngineClient engineC = client(c);
        final EngineClient engineB = client(b);
        final OperationResult result = new OperationResult(512);
        final KeyBatch first = batch(40_000, 1);
        engineC.publish(first, result);
        // C's 8 MiB pool holds 128 of these 64 KiB blocks: the first one is evicted, written to SSD, sealed there.
        for (int round = 1; round <= 8; round++)
        {
            engineC.publish(batch(40_000 + round * 32, 32), result);
        }
        ManagerTestSupport.awaitTrue(() -> c.counter(StoreCounter.SSD_ADMISSIONS) > 0, () -> "admitted");
        engineC.lookup(first, false, false, result);
        assertEquals(KeyStatus.SSD, result.status(0), "evicted from DRAM to SSD on C");

        // B never asked for it before: the host's answer carries C's SSD residence only (the DRAM one was removed).
        awaitPeerKeys(engineB, first, 1, result);
        assertEquals(1, result.candidateCount());
        assertEquals(KeyStatus.SSD, result.candidateTier(0));
        assertEquals(BLOCK, result.candidateLength(0));
        assertEquals("c", result.ownerNodeId(0));
    }

    @Test
    @Timeout(120)
    void shouldCoalesceConcurrentMissesForTheSameKeysIntoOneQuery()
    {
        final Manager a = managers.get(0);
        final Manager b = managers.get(1);
        final EngineClient engineA = client(a);
        final OperationResult result = new OperationResult(512);
        final EngineClient probe = client(managers.get(2));
        try (RawRingClient first = new RawRingClient(b.cncFile());
            RawRingClient second = new RawRingClient(b.cncFile()))
        {
            first.attachOrFail("coalesce-1", 1L << 20);
            second.attachOrFail("coalesce-2", 1L << 20);
            // Each round: fresh keys published on A and known to their hosts, then two engines on B miss on them
            // at the same moment. The second lookup finds the keys in flight and waits for the first one's query.
            final long deadline = System.nanoTime() + DEADLINE_NS;
            for (int round = 0; b.counter(CatalogCounter.COLD_COALESCED) == 0; round++)
            {
                assertTrue(System.nanoTime() - deadline < 0, "two concurrent misses never coalesced");
                final KeyBatch keys = batch(20_000 + round * 8, 8);
                engineA.publish(keys, result);
                final byte[][] hashes = new byte[8][];
                for (int i = 0; i < hashes.length; i++)
                {
                    hashes[i] = CatalogTestKeys.hash(20_000 + round * 8 + i);
                }
                // Wait until the hosts know them (lookups by an engine on C; B's candidate index stays cold).
                awaitPeerKeys(probe, keys, 8, result);
                final long queriesBefore = b.counter(CatalogCounter.COLD_QUERIES);
                final long one = first.lookup(NS, RequestFlags.LOOKUP_PEERS, hashes);
                final long two = second.lookup(NS, RequestFlags.LOOKUP_PEERS, hashes);
                final RawRingClient.Reply replyOne = first.awaitReply(one);
                final RawRingClient.Reply replyTwo = second.awaitReply(two);
                assertEquals(java.util.Collections.nCopies(8, KeyStatus.PEER), replyOne.statuses(), replyOne::toString);
                assertEquals(java.util.Collections.nCopies(8, KeyStatus.PEER), replyTwo.statuses(), replyTwo::toString);
                assertEquals(8, replyOne.candidates());
                assertEquals(8, replyTwo.candidates());
                if (b.counter(CatalogCounter.COLD_COALESCED) > 0)
                {
                    // The coalesced pair asked each host at most once between them.
                    assertTrue(b.counter(CatalogCounter.COLD_QUERIES) - queriesBefore <= 3);
                }
            }
        }
    }

    @Test
    @Timeout(120)
    void shouldRebuildARestartedCatalogHostFromTheOwners()
    {
        final Manager a = managers.get(0);
        final EngineClient engineA = client(a);
        final OperationResult result = new OperationResult(512);
        // A key whose shard is hosted by b or c (a owns the data and must stay up).
        int key = 5000;
        while ("a".equals(hostOf(a, key)))
        {
            key++;
        }
        final String host = hostOf(a, key);
        final int hostIndex = host.charAt(0) - 'a';
        final Manager requester = managers.get(1 == hostIndex ? 2 : 1);
        final KeyBatch published = batch(key, 1);
        engineA.publish(published, result);
        assertEquals(1, result.value());
        final EngineClient engineR = client(requester);
        awaitPeerKeys(engineR, published, 1, result);

        final long snapshotsBefore = a.counter(CatalogCounter.SNAPSHOTS_COMPLETED);
        final long queriesBefore = requester.counter(CatalogCounter.COLD_QUERIES);
        managers.get(hostIndex).close();
        managers.set(hostIndex, launch(host));
        final Manager restarted = managers.get(hostIndex);
        ManagerTestSupport.awaitTrue(() -> restarted.membership().view().isComplete() &&
            restarted.membership().view().members().size() == 3, () -> "rejoined");
        // The owner rebuilds the new host incarnation's shards with snapshot cuts (the restarted host starts empty).
        ManagerTestSupport.awaitTrue(
            () -> a.counter(CatalogCounter.SNAPSHOTS_COMPLETED) >= snapshotsBefore + 16 / 3,
            () -> "owner sent snapshots to the restarted host");
        ManagerTestSupport.awaitTrue(
            () -> 0 == restarted.counter(CatalogCounter.INCOMPLETE_SHARDS),
            () -> "restarted host complete");
        // Past the candidate TTL the requester must ask the new host, which knows the block from the snapshot.
        final long deadline = System.nanoTime() + DEADLINE_NS;
        while (requester.counter(CatalogCounter.COLD_QUERIES) == queriesBefore ||
            result.count(KeyStatus.PEER) != 1)
        {
            engineR.lookup(published, false, true, result);
            assertTrue(System.nanoTime() - deadline < 0, "no discovery through the restarted host");
        }
        assertEquals("a", result.ownerNodeId(0));
        assertTrue(restarted.counter(CatalogCounter.RECORDS_APPLIED) +
            restarted.catalog().transport().counters().value(io.orbitkv.manager.peer.PeerCounter.FRAMES_SNAPSHOT) > 0);
    }

    private static String hostOf(final Manager manager, final int key)
    {
        return CatalogTestKeys.hostOf(NS, key, manager.context().placement());
    }
}
