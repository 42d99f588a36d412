package io.orbitkv.manager;

import io.orbitkv.codecs.ShardPlacement;
import io.orbitkv.manager.membership.MembershipCounter;
import io.orbitkv.manager.ring.RingCounter;
import io.orbitkv.manager.status.CounterDescriptor;
import io.orbitkv.codecs.engine.KeyStatus;
import io.orbitkv.codecs.engine.StatusCode;
import io.orbitkv.manager.membership.EtcdCluster;
import io.orbitkv.manager.membership.FenceCause;
import io.orbitkv.manager.membership.Membership;
import io.orbitkv.manager.membership.MembershipConfiguration;
import io.orbitkv.manager.peer.PeerTransport;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

import static io.orbitkv.manager.ManagerTestSupport.awaitTrue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A whole Manager with membership: cache operations never touch etcd, local service survives an etcd outage, and
 * the membership flags are validated at their edges.
 */
class ManagerMembershipTest
{
    private static final int KB = 1024;
    private static final String NS = "model=m;dtype=bf16";
    private static final CounterDescriptor[] ETCD_CALLS = {
        MembershipCounter.ETCD_CALLS_GET,
        MembershipCounter.ETCD_CALLS_TXN,
        MembershipCounter.ETCD_CALLS_LEASE_GRANT,
        MembershipCounter.ETCD_CALLS_LEASE_REVOKE,
        MembershipCounter.ETCD_CALLS_WATCH,
    };

    private static ManagerContext clustered(final File dir, final String endpoints, final PrintStream log)
    {
        return ManagerTestSupport.smallContext(dir)
            .etcdEndpoints(endpoints)
            .clusterName("mgr-" + UUID.randomUUID().toString().substring(0, 8))
            .nodeId("a")
            .catalogNodes("a")
            .membershipLog(log);
    }

    private static long etcdCallsOtherThanKeepalive(final Manager manager)
    {
        long sum = 0;
        for (final CounterDescriptor d : ETCD_CALLS)
        {
            sum += manager.counter(d);
        }
        return sum;
    }

    private static void publishLookupRead(final RawRingClient client, final int round)
    {
        final byte[][] hashes = {RawRingClient.hash(round * 2), RawRingClient.hash(round * 2 + 1)};
        final RawRingClient.Reply published = client.awaitReply(
            client.publish(NS, new long[]{0, 8 * KB}, new int[]{4 * KB, 4 * KB}, hashes));
        assertEquals(StatusCode.OK, published.code(), published::toString);
        final RawRingClient.Reply found = client.awaitReply(client.lookup(NS, false, hashes));
        assertEquals(List.of(KeyStatus.DRAM, KeyStatus.DRAM), found.statuses());
        final RawRingClient.Reply read = client.awaitReply(
            client.read(NS, 0, new long[]{64 * KB, 72 * KB}, new int[]{4 * KB, 4 * KB}, hashes));
        assertEquals(2, read.value(), read::toString);
    }

    @Test
    @Timeout(90)
    @Execution(ExecutionMode.CONCURRENT)
    void shouldMakeNoEtcdCallPerCacheOperation() throws Exception
    {
        final File dir = ManagerTestSupport.newDir();
        try (EtcdCluster etcd = EtcdCluster.start(1);
            Manager manager = Manager.launch(clustered(dir, etcd.endpoints(), System.out));
            RawRingClient client = new RawRingClient(manager.cncFile()))
        {
            awaitTrue(() -> manager.membership().view().isComplete(), () -> "view complete");
            // The view keeper opens its watch just after it publishes the complete view: count from after that.
            awaitTrue(() -> manager.counter(MembershipCounter.ETCD_CALLS_WATCH) >= 1, () -> "member watch opened");
            // The placement agent campaigns and reads the placement keys once the view is complete; then it sleeps.
            awaitTrue(() -> 1 == manager.counter(MembershipCounter.RECONCILER), () -> "placement reconciler elected");
            client.attachOrFail("engine-a", 1L << 20);
            final long before = etcdCallsOtherThanKeepalive(manager);
            final long keepalivesBefore = manager.counter(MembershipCounter.ETCD_CALLS_LEASE_KEEPALIVE);
            final long startNs = System.nanoTime();
            for (int round = 0; round < 200; round++)
            {
                publishLookupRead(client, round);
            }
            final long elapsedNs = System.nanoTime() - startNs;
            // The placement agent's round after its own election may still land in the window (its watch event);
            // a call per operation would add 600.
            final long calls = etcdCallsOtherThanKeepalive(manager) - before;
            assertTrue(calls <= 2, "Publish/Lookup/Read made " + calls + " etcd calls");
            // keepalives run on their own clock (6 per TTL), never per operation
            final long keepalives = manager.counter(MembershipCounter.ETCD_CALLS_LEASE_KEEPALIVE) - keepalivesBefore;
            final long allowed = 2 + elapsedNs / (Configuration.MEMBERSHIP_TTL_SECS_DEFAULT * 1_000_000_000L /
                MembershipConfiguration.KEEPALIVES_PER_TTL);
            assertTrue(keepalives <= allowed, keepalives + " keepalives in " + elapsedNs / 1_000_000 + " ms");
            assertEquals(600, manager.counter(RingCounter.REQUESTS_PUBLISH) +
                manager.counter(RingCounter.REQUESTS_LOOKUP) + manager.counter(RingCounter.REQUESTS_READ));
            assertTrue(manager.membership().remoteWorkEnabled(System.nanoTime()));
            assertEquals(1, manager.counter(MembershipCounter.REMOTE_WORK_ENABLED) |
                manager.counter(MembershipCounter.VIEW_COMPLETE));
        }
        finally
        {
            ManagerTestSupport.deleteDir(dir);
        }
    }

    @Test
    @Timeout(120)
    @Execution(ExecutionMode.CONCURRENT)
    void shouldKeepServingLocallyWhileEtcdIsDownAndRecoverTheView() throws Exception
    {
        final File dir = ManagerTestSupport.newDir();
        final ByteArrayOutputStream logBytes = new ByteArrayOutputStream();
        final PrintStream log = new PrintStream(logBytes, true, StandardCharsets.UTF_8);
        try (EtcdCluster etcd = EtcdCluster.start(1);
            Manager manager = Manager.launch(clustered(dir, etcd.endpoints(), log));
            RawRingClient client = new RawRingClient(manager.cncFile()))
        {
            final Membership membership = manager.membership();
            awaitTrue(() -> membership.view().isComplete(), () -> "view complete");
            client.attachOrFail("engine-a", 1L << 20);
            publishLookupRead(client, 0);

            etcd.kill(etcd.member(0));
            awaitTrue(() -> manager.counter(MembershipCounter.INVALIDATIONS_RECONNECT) >= 1 &&
                !membership.view().isComplete(), () -> "view invalidated on reconnect\n" + logBytes);
            assertFalse(membership.remoteWorkEnabled(System.nanoTime()), "incomplete view disables remote work");
            for (int round = 1; round < 20; round++)
            {
                publishLookupRead(client, round);
            }

            etcd.restart(etcd.member(0));
            awaitTrue(() -> membership.view().isComplete() && null != membership.view().member("a"),
                () -> "view recovers after restart\n" + logBytes);
            publishLookupRead(client, 20);
            assertEquals(FenceCause.NONE, membership.fenceCause(), logBytes::toString);
            awaitTrue(() -> membership.remoteWorkEnabled(System.nanoTime()), () -> "remote work re-enabled");
            assertTrue(manager.counter(MembershipCounter.SNAPSHOTS) >= 2);
        }
        finally
        {
            ManagerTestSupport.deleteDir(dir);
        }
    }

    @Test
    void shouldStayStandaloneWithoutEtcdEndpoints()
    {
        final File dir = ManagerTestSupport.newDir();
        try (Manager manager = Manager.launch(ManagerTestSupport.smallContext(dir)))
        {
            assertNull(manager.membership());
            assertFalse(manager.context().hasMembership());
            assertEquals(Membership.STATE_STANDALONE,
                manager.counter(MembershipCounter.REGISTRATION_STATE));
            assertEquals(0, etcdCallsOtherThanKeepalive(manager) +
                manager.counter(MembershipCounter.ETCD_CALLS_LEASE_KEEPALIVE));
        }
        finally
        {
            ManagerTestSupport.deleteDir(dir);
        }
    }

    @Test
    void shouldRejectMembershipSettingsOutsideTheirLimits()
    {
        final File dir = ManagerTestSupport.newDir();
        final String ep = "http://127.0.0.1:1";

        final IllegalArgumentException ttl = assertThrows(IllegalArgumentException.class,
            () -> clustered(dir, ep, System.out).membershipTtlSecs(Configuration.MIN_MEMBERSHIP_TTL_SECS - 1)
                .conclude());
        assertTrue(ttl.getMessage().contains("at least 10") && ttl.getMessage().contains("etcd restart"),
            ttl.getMessage());
        clustered(dir, ep, System.out).membershipTtlSecs(Configuration.MIN_MEMBERSHIP_TTL_SECS).conclude();

        assertThrows(IllegalArgumentException.class,
            () -> clustered(dir, ep, System.out).etcdDeadlineMs(5_000).conclude(), "deadline must be below TTL/2");
        clustered(dir, ep, System.out).etcdDeadlineMs(4_999).conclude();
        assertThrows(IllegalArgumentException.class,
            () -> clustered(dir, ep, System.out).etcdDeadlineMs(Configuration.MIN_ETCD_DEADLINE_MS - 1)
                .conclude());

        assertThrows(IllegalArgumentException.class,
            () -> clustered(dir, ep, System.out).catalogNodes("n0,n1,n2,n3,n4,n5,n6,n7,n8,n9,n10,n11,n12,n13,n14,n15,n16")
                .conclude());
        clustered(dir, ep, System.out).catalogNodes("n0,n1,n2,n3,n4,n5,n6,n7,n8,n9,n10,n11,n12,n13,n14,n15").conclude();
        assertThrows(IllegalArgumentException.class, () -> clustered(dir, ep, System.out).catalogNodes(null).conclude());

        // Copies per shard: 1..5, three by default, part of the placement.
        final ManagerContext defaults = clustered(dir, ep, System.out).catalogNodes("a,b,c,d").conclude();
        assertEquals(Configuration.CATALOG_REPLICAS_DEFAULT, defaults.catalogReplicas());
        assertEquals(ShardPlacement.parse("a,b,c,d", 3), defaults.placement());
        assertEquals(ShardPlacement.parse("a,b,c,d", 1),
            clustered(dir, ep, System.out).catalogNodes("a,b,c,d").catalogReplicas(1).conclude().placement());
        assertEquals(5, clustered(dir, ep, System.out).catalogReplicas(5).conclude().placement().replicas());
        for (final int replicas : new int[]{ 0, 6 })
        {
            final IllegalArgumentException copies = assertThrows(IllegalArgumentException.class,
                () -> clustered(dir, ep, System.out).catalogReplicas(replicas).conclude());
            assertTrue(copies.getMessage().contains("--catalog-replicas must be in [1, 5]") &&
                copies.getMessage().contains(": " + replicas), copies.getMessage());
        }

        // The candidate index budget: 1 MiB..4 GiB, the design's 16 MiB by default.
        assertEquals(16L << 20, clustered(dir, ep, System.out).conclude().catalogCandidateBytes());
        clustered(dir, ep, System.out).catalogCandidateBytes(Configuration.MIN_CATALOG_CANDIDATE_BYTES).conclude();
        clustered(dir, ep, System.out).catalogCandidateBytes(Configuration.MAX_CATALOG_CANDIDATE_BYTES).conclude();
        assertThrows(IllegalArgumentException.class, () -> clustered(dir, ep, System.out)
            .catalogCandidateBytes(Configuration.MIN_CATALOG_CANDIDATE_BYTES - 1).conclude());
        assertThrows(IllegalArgumentException.class, () -> clustered(dir, ep, System.out)
            .catalogCandidateBytes(Configuration.MAX_CATALOG_CANDIDATE_BYTES + 1).conclude());

        for (final int mtu : new int[]{ PeerTransport.MIN_MTU_LENGTH - 32, 1_000, PeerTransport.MAX_MTU_LENGTH + 32 })
        {
            final IllegalArgumentException badMtu = assertThrows(IllegalArgumentException.class,
                () -> clustered(dir, ep, System.out).peerMtuLength(mtu).conclude());
            assertTrue(badMtu.getMessage().contains("--peer-mtu"), badMtu.getMessage());
        }
        clustered(dir, ep, System.out).peerMtuLength(PeerTransport.MIN_MTU_LENGTH).conclude();
        clustered(dir, ep, System.out).peerMtuLength(PeerTransport.MAX_MTU_LENGTH).conclude();
        clustered(dir, ep, System.out).peerMtuLength(PeerTransport.AUTO_MTU).conclude();
        assertThrows(IllegalArgumentException.class, () -> clustered(dir, ep, System.out).nodeId(null).conclude());
        assertThrows(IllegalArgumentException.class, () -> clustered(dir, ep, System.out).nodeId("a/b").conclude());
        assertThrows(IllegalArgumentException.class, () -> clustered(dir, ep, System.out).clusterName(null).conclude());
        assertThrows(IllegalArgumentException.class,
            () -> clustered(dir, "https://127.0.0.1:1", System.out).conclude(), "no TLS in this stage");

        final IllegalArgumentException big = assertThrows(IllegalArgumentException.class,
            () -> clustered(dir, ep, System.out).peerEndpoint("p".repeat(MembershipConfiguration.MAX_RECORD_BYTES))
                .conclude());
        assertTrue(big.getMessage().contains("1024"), big.getMessage());
    }
}
