package io.orbitkv.manager.membership;

import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.PutOption;
import io.orbitkv.codecs.ShardPlacement;
import io.orbitkv.codecs.StateKeyShard;
import io.orbitkv.manager.status.CncReader;
import io.orbitkv.manager.cli.ChildJvm;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.agrona.IoUtil;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

import static io.orbitkv.manager.membership.MembershipTestSupport.Joined;
import static io.orbitkv.manager.membership.MembershipTestSupport.await;
import static io.orbitkv.manager.membership.MembershipTestSupport.awaitCompleteWith;
import static io.orbitkv.manager.membership.MembershipTestSupport.bytes;
import static io.orbitkv.manager.membership.MembershipTestSupport.fakeRecord;
import static io.orbitkv.manager.membership.MembershipTestSupport.join;
import static io.orbitkv.manager.membership.MembershipTestSupport.put;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Membership against real etcd processes. The scenarios wait on leases and elections, so they run concurrently
 * (methods only; the class itself runs alone) and share one etcd, isolated by distinct cluster names; the ones
 * that kill etcd start their own.
 */
class MembershipSystemTest
{
    private static EtcdCluster etcd;
    private static Client raw;

    @BeforeAll
    static void startEtcd() throws Exception
    {
        etcd = EtcdCluster.start(1);
        raw = Client.builder().endpoints(etcd.endpoints().split(",")).build();
    }

    @AfterAll
    static void stopEtcd()
    {
        if (null != raw)
        {
            raw.close();
        }
        if (null != etcd)
        {
            etcd.close();
        }
    }

    private static String cluster(final String name)
    {
        return name + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    @Test
    @Timeout(60)
    @Execution(ExecutionMode.CONCURRENT)
    void shouldRegisterWithANewEpochPerStartAndRevokeTheLeaseOnGracefulClose() throws Exception
    {
        final String cluster = cluster("reg");
        try (Joined observer = join(etcd.endpoints(), cluster, "b", "a,b"))
        {
            final Joined first = join(etcd.endpoints(), cluster, "a", "a,b");
            assertEquals(1, first.membership.ownRecord().epoch());
            awaitCompleteWith(observer, "a", "b");
            awaitCompleteWith(first, "a", "b");
            assertTrue(first.membership.remoteWorkEnabled(System.nanoTime()));
            final MemberRecord seen = observer.membership.view().member("a");
            assertEquals(first.membership.ownRecord(), seen);
            assertTrue(seen.encode().length <= MembershipConfiguration.MAX_RECORD_BYTES);

            first.close();
            final GetResponse gone = raw.getKVClient()
                .get(bytes(MembershipConfiguration.memberKey(cluster, "a"))).get(5, TimeUnit.SECONDS);
            assertEquals(0, gone.getKvs().size(), "graceful close revokes the lease: the record is gone at once");
            await(() -> null == observer.membership.view().member("a"), 5_000, () -> "observer sees a leave");
            assertEquals(1, first.counter(MembershipCounter.ETCD_CALLS_LEASE_REVOKE));

            try (Joined second = join(etcd.endpoints(), cluster, "a", "a,b"))
            {
                assertEquals(2, second.membership.ownRecord().epoch(), "the epoch is persistent across restarts");
                awaitCompleteWith(observer, "a");
            }
        }
    }

    @Test
    @Timeout(60)
    @Execution(ExecutionMode.CONCURRENT)
    void shouldRetryAnUnreachableEtcdForTheJoinTimeoutThenGiveUpInsteadOfHanging() throws Exception
    {
        final int closedPort;
        try (java.net.ServerSocket socket = new java.net.ServerSocket(0))
        {
            closedPort = socket.getLocalPort();
        }
        final MembershipSettings base = MembershipTestSupport.settings(
            "http://127.0.0.1:" + closedPort, cluster("unreachable"), "a", "a");
        final long deadlineMs = 200;
        final long joinTimeoutMs = 2_500;
        final MembershipSettings settings = new MembershipSettings(base.etcdEndpoints(), base.clusterName(),
            base.nodeId(), base.ttlSecs(), deadlineMs, base.placement(), base.peerEndpoint(), base.transferEndpoint(),
            base.runtimeUuid(), base.startTimeMs(), joinTimeoutMs);
        final long startNs = System.nanoTime();
        final Membership.JoinTimeoutException ex =
            assertThrows(Membership.JoinTimeoutException.class, () -> join(settings, null));
        final long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs);
        assertTrue(ex.getMessage().contains("did not answer within the join timeout of 2500 ms"), ex.getMessage());
        // Kept trying (backoff 100 ms doubling to 2 s) for the join timeout, and not much longer: a round is bounded
        // by the call deadline.
        assertTrue(tookMs >= joinTimeoutMs - 2_000, "gave up after " + tookMs + " ms");
        // Client set-up and close (two jetcd clients) come on top: seconds on a loaded box (7.6 s seen at load 13 with
        // concurrent tests), still far from the hang this bound rules out.
        assertTrue(tookMs < joinTimeoutMs + 10_000, "took " + tookMs + " ms");
    }

    @Test
    @Timeout(60)
    @Execution(ExecutionMode.CONCURRENT)
    void shouldRecogniseItsOwnRecordWhenRetryingAnUnknownOutcomeRegistration() throws Exception
    {
        final String cluster = cluster("retry");
        try (Joined a = join(etcd.endpoints(), cluster, "a", "a"))
        {
            final MemberRecord own = a.membership.ownRecord();
            // the placement agent makes transactions of its own (campaign, rounds): the keys tell registrations apart
            final long memberRevision = modRevision(MembershipConfiguration.memberKey(cluster, "a"));
            final long epochRevision = modRevision(MembershipConfiguration.epochKey(cluster, "a"));
            final MemberRecord again = a.membership.retryRegistration();
            assertEquals(own, again, "the retry finds the committed record by lease and runtime UUID");
            assertEquals(memberRevision, modRevision(MembershipConfiguration.memberKey(cluster, "a")),
                "no second registration txn");
            assertEquals(epochRevision, modRevision(MembershipConfiguration.epochKey(cluster, "a")));
            assertEquals(1, again.epoch());
        }
    }

    private static long modRevision(final String key) throws Exception
    {
        return raw.getKVClient().get(bytes(key)).get(5, TimeUnit.SECONDS).getKvs().get(0).getModRevision();
    }

    @Test
    @Timeout(60)
    @Execution(ExecutionMode.CONCURRENT)
    void shouldRefuseASecondLiveRuntimeForTheSameNodeId()
    {
        final String cluster = cluster("dup");
        try (Joined a = join(etcd.endpoints(), cluster, "a", "a"))
        {
            final Membership.NodeIdInUseException ex = assertThrows(Membership.NodeIdInUseException.class,
                () -> join(etcd.endpoints(), cluster, "a", "a"));
            assertTrue(ex.getMessage().contains(a.membership.ownRecord().runtimeUuid().toString()), ex.getMessage());
            assertTrue(ex.getMessage().contains("already registered"), ex.getMessage());
            assertEquals(a.membership.ownRecord(), a.membership.view().member("a"), "the live one is untouched");
        }
    }

    @Test
    @Timeout(60)
    @Execution(ExecutionMode.CONCURRENT)
    void shouldJoinWithOtherCatalogNodesAndFollowThePlacementInEtcd()
    {
        final String cluster = cluster("placement");
        final ShardPlacement installed = ShardPlacement.parse("a,b,c", 3);
        try (Joined a = join(etcd.endpoints(), cluster, "a", "c,a,b,a");
            Joined b = join(etcd.endpoints(), cluster, "b", "a,b", 1))
        {
            awaitCompleteWith(b, "a", "b");
            assertEquals(installed, b.membership.view().placement(), "the second Manager follows etcd, not its flags");
            assertEquals(1, b.membership.view().placementState().generation());
            assertTrue(b.membership.view().placementState().isStable());
            assertTrue(b.log().contains("following the cluster's placement generation 1: catalog nodes [a, b, c] " +
                "with 3 copies per shard") && b.log().contains("give catalog nodes [a, b] with 1 copy per shard"),
                b.log());
            assertFalse(a.log().contains("following the cluster's placement"), a.log());
            assertTrue(b.membership.remoteWorkEnabled(System.nanoTime()));
            assertEquals(FenceCause.NONE, b.membership.fenceCause());
            assertEquals(1, b.counter(MembershipCounter.PLACEMENT_GENERATION));

            // the flag bounding shard moves is checked before anything joins
            final java.io.StringWriter text = new java.io.StringWriter();
            final picocli.CommandLine cli = io.orbitkv.manager.cli.OrbitKvCli.commandLine();
            cli.setOut(new java.io.PrintWriter(text, true));
            cli.setErr(new java.io.PrintWriter(text, true));
            final File dir = new File("/dev/shm", "orbitkv-moves-" + UUID.randomUUID());
            try
            {
                assertEquals(1, cli.execute("manager", "--dir", dir.toString(), "--pool-bytes", "4m",
                    "--pool-pretouch=false", "--etcd-endpoints", etcd.endpoints(), "--cluster-name", cluster,
                    "--node-id", "d", "--catalog-nodes", "a,b,c,d", "--max-shard-moves", "17"), text.toString());
            }
            finally
            {
                IoUtil.delete(dir, true);
            }
            assertTrue(text.toString().contains("--max-shard-moves must be in [1, 16]"), text.toString());
            assertNull(a.membership.view().member("d"), "a refused launch leaves no record");
        }
    }

    @Test
    @Timeout(60)
    @Execution(ExecutionMode.CONCURRENT)
    void shouldInvalidateOnAMalformedRecordAndRecoverWithoutCrashing() throws Exception
    {
        final String cluster = cluster("malformed");
        try (Joined a = join(etcd.endpoints(), cluster, "a", "a"))
        {
            awaitCompleteWith(a, "a");
            final long snapshots = a.counter(MembershipCounter.SNAPSHOTS);
            put(raw, MembershipConfiguration.memberKey(cluster, "zz"), "{not json".getBytes(StandardCharsets.UTF_8));
            await(() -> 1 == a.counter(MembershipCounter.INVALIDATIONS_MALFORMED), 5_000, a::log);
            await(() -> a.counter(MembershipCounter.SNAPSHOTS) > snapshots &&
                1 == a.counter(MembershipCounter.RECORDS_REJECTED), 5_000, a::log);
            awaitCompleteWith(a, "a");
            assertNull(a.membership.view().member("zz"));
            assertEquals(FenceCause.NONE, a.membership.fenceCause());
            assertTrue(a.membership.remoteWorkEnabled(System.nanoTime()));
        }
    }

    @Test
    @Timeout(60)
    @Execution(ExecutionMode.CONCURRENT)
    void shouldAcceptARecordOfExactlyOneKibibyteAndRejectOneByteMore() throws Exception
    {
        final String cluster = cluster("kib");
        try (Joined a = join(etcd.endpoints(), cluster, "a", "a"))
        {
            awaitCompleteWith(a, "a");
            final byte[] exact = fakeRecord("big", MembershipConfiguration.MAX_RECORD_BYTES);
            assertEquals(1024, exact.length);
            put(raw, MembershipConfiguration.memberKey(cluster, "big"), exact);
            awaitCompleteWith(a, "big");

            final byte[] over = fakeRecord("big2", MembershipConfiguration.MAX_RECORD_BYTES + 1);
            assertEquals(1025, over.length);
            put(raw, MembershipConfiguration.memberKey(cluster, "big2"), over);
            await(() -> 1 == a.counter(MembershipCounter.INVALIDATIONS_RECORD_TOO_LARGE), 5_000, a::log);
            await(() -> 1 == a.counter(MembershipCounter.RECORDS_REJECTED), 5_000, a::log);
            awaitCompleteWith(a, "a", "big");
            assertNull(a.membership.view().member("big2"));
        }
    }

    @Test
    @Timeout(60)
    @Execution(ExecutionMode.CONCURRENT)
    void shouldTakeAFreshSnapshotAfterCompactionPastTheWatchedRevision() throws Exception
    {
        // Compaction is global to an etcd: this scenario gets its own so it cannot disturb the others.
        try (EtcdCluster own = EtcdCluster.start(1);
            Client ownRaw = Client.builder().endpoints(own.endpoints().split(",")).build())
        {
            compactBetweenSnapshotAndWatch(own, ownRaw);
        }
    }

    private static void compactBetweenSnapshotAndWatch(final EtcdCluster own, final Client raw)
    {
        final String cluster = cluster("compact");
        final AtomicBoolean once = new AtomicBoolean();
        final Runnable compactBeforeFirstWatch = () ->
        {
            if (once.compareAndSet(false, true))
            {
                try
                {
                    // history moves on and is compacted before the watch from snapshot revision + 1 opens
                    long head = 0;
                    for (int i = 0; i < 3; i++)
                    {
                        head = raw.getKVClient().put(bytes(MembershipConfiguration.clusterPrefix(cluster) + "noise"),
                            bytes("v" + i)).get(5, TimeUnit.SECONDS).getHeader().getRevision();
                    }
                    raw.getKVClient().compact(head).get(5, TimeUnit.SECONDS);
                }
                catch (final Exception ex)
                {
                    throw new IllegalStateException(ex);
                }
            }
        };
        try (Joined a = join(MembershipTestSupport.settings(own.endpoints(), cluster, "a", "a"), compactBeforeFirstWatch))
        {
            await(() -> 1 == a.counter(MembershipCounter.INVALIDATIONS_COMPACTION), 10_000, a::log);
            await(() -> a.counter(MembershipCounter.SNAPSHOTS) >= 2 && a.membership.view().isComplete(),
                10_000, a::log);
            assertTrue(a.log().contains("compacted"), a.log());
            assertEquals(FenceCause.NONE, a.membership.fenceCause());
        }
    }

    @Test
    @Timeout(120)
    @Execution(ExecutionMode.CONCURRENT)
    void shouldHoldExactly4096MembersAndGoIncompleteBeyond() throws Exception
    {
        final String cluster = cluster("many");
        final int fillers = MembershipConfiguration.MAX_MEMBERS - 1;
        final List<Op> batch = new ArrayList<>();
        for (int i = 0; i < fillers; i++)
        {
            final String id = String.format("f%05d", i);
            batch.add(Op.put(bytes(MembershipConfiguration.memberKey(cluster, id)),
                io.etcd.jetcd.ByteSequence.from(fakeRecord(id, 0)), PutOption.DEFAULT));
            if (batch.size() == 100 || i == fillers - 1)
            {
                raw.getKVClient().txn().Then(batch.toArray(new Op[0])).commit().get(10, TimeUnit.SECONDS);
                batch.clear();
            }
        }
        try (Joined a = join(etcd.endpoints(), cluster, "a", "a"))
        {
            awaitCompleteWith(a, "a");
            assertEquals(MembershipConfiguration.MAX_MEMBERS, a.membership.view().members().size());
            assertTrue(a.counter(MembershipCounter.SNAPSHOT_PAGES) >= 32, "pages of 128");
            assertTrue(a.membership.remoteWorkEnabled(System.nanoTime()));

            put(raw, MembershipConfiguration.memberKey(cluster, "one-more"), fakeRecord("one-more", 0));
            await(() -> a.counter(MembershipCounter.INVALIDATIONS_MEMBER_OVERFLOW) >= 1 &&
                !a.membership.view().isComplete(), 10_000, a::log);
            assertFalse(a.membership.remoteWorkEnabled(System.nanoTime()), "incomplete view disables remote work");

            raw.getKVClient().delete(bytes(MembershipConfiguration.memberKey(cluster, "f00000")),
                DeleteOption.DEFAULT).get(5, TimeUnit.SECONDS);
            awaitCompleteWith(a, "a", "one-more");
            assertEquals(MembershipConfiguration.MAX_MEMBERS, a.membership.view().members().size());
            assertEquals(FenceCause.NONE, a.membership.fenceCause());
        }
    }

    @Test
    @Timeout(60)
    @Execution(ExecutionMode.CONCURRENT)
    void shouldFenceOnOwnRecordRemovalRebindingAndPlacementChange() throws Exception
    {
        final String c1 = cluster("fence-removed");
        final String c2 = cluster("fence-rebound");
        final String c3 = cluster("fence-placement");
        final String c4 = cluster("fence-replicas");
        try (Joined removed = join(etcd.endpoints(), c1, "a", "a");
            Joined rebound = join(etcd.endpoints(), c2, "a", "a");
            Joined replaced = join(etcd.endpoints(), c3, "a", "a");
            Joined recopied = join(etcd.endpoints(), c4, "a", "a", 3))
        {
            awaitCompleteWith(removed, "a");
            awaitCompleteWith(rebound, "a");
            awaitCompleteWith(replaced, "a");
            awaitCompleteWith(recopied, "a");

            MembershipTestSupport.delete(raw, MembershipConfiguration.memberKey(c1, "a"));
            final MemberRecord own = rebound.membership.ownRecord();
            put(raw, MembershipConfiguration.memberKey(c2, "a"), new MemberRecord("a", own.epoch() + 1,
                UUID.randomUUID(), 0, "elsewhere", "elsewhere", 1, 0).encode());
            // deleting the installed placement fences; another placement under the applied generation is refused
            MembershipTestSupport.delete(raw, MembershipConfiguration.placementKey(c3));
            put(raw, MembershipConfiguration.placementKey(c4), PlacementRecord.encode(ShardPlacement.parse("a", 1)));

            // A removed record is a lapsed registration: the old incarnation stays fenced, a new one registers.
            final Incarnation firstRemoved = removed.membership.incarnation();
            await(() -> FenceCause.OWN_RECORD_REMOVED == firstRemoved.fenceCause(), 5_000, removed::log);
            await(() -> removed.membership.incarnation() != firstRemoved &&
                Membership.STATE_REGISTERED == removed.membership.registrationState(), 10_000, removed::log);
            final Incarnation secondRemoved = removed.membership.incarnation();
            assertEquals(2, secondRemoved.number());
            assertEquals(firstRemoved.epoch() + 1, secondRemoved.epoch());
            assertFalse(firstRemoved.runtimeUuid().equals(secondRemoved.runtimeUuid()));
            assertEquals(FenceCause.OWN_RECORD_REMOVED, firstRemoved.fenceCause(), "the old incarnation never revives");
            assertEquals(FenceCause.NONE, removed.membership.fenceCause());
            awaitCompleteWith(removed, "a");
            await(() -> removed.membership.remoteWorkEnabled(System.nanoTime()), 5_000, removed::log);
            assertEquals(secondRemoved.record(), removed.membership.view().member("a"));
            assertEquals(1, removed.counter(MembershipCounter.REREGISTRATIONS));
            assertTrue(removed.log().contains("registering a new incarnation"), removed::log);

            // Another runtime's record or another placement: fenced for good, no new incarnation.
            await(() -> FenceCause.BINDING_CHANGED == rebound.membership.fenceCause(), 5_000, rebound::log);
            await(() -> FenceCause.PLACEMENT_CHANGED == replaced.membership.fenceCause(), 5_000, replaced::log);
            await(() -> 1 == recopied.counter(MembershipCounter.PLACEMENT_RECORDS_REFUSED), 5_000, recopied::log);
            assertEquals(FenceCause.NONE, recopied.membership.fenceCause());
            assertEquals(ShardPlacement.parse("a", 3), recopied.membership.view().placement(), "last state kept");
            assertTrue(recopied.log().contains("does not follow the applied generation 1"), recopied::log);
            for (final Joined j : List.of(rebound, replaced))
            {
                // the log line is written last by the fencing thread: state and counter are set by then
                await(() -> j.log().contains("FENCED until restart"), 5_000, j::log);
                assertFalse(j.membership.remoteWorkEnabled(System.nanoTime()));
                assertEquals(Membership.STATE_FENCED, j.membership.registrationState());
                assertEquals(j.membership.fenceCause().code(), j.counter(MembershipCounter.FENCED));
                assertTrue(j.log().contains("FENCED until restart"), j.log());
                assertEquals(1, j.membership.incarnation().number());
                assertEquals(0, j.counter(MembershipCounter.REREGISTRATIONS));
            }
        }
    }

    @Test
    @Timeout(60)
    @Execution(ExecutionMode.CONCURRENT)
    void shouldLeaveTheShardsOfAMissingHostUnavailableWithoutMovingThem()
    {
        // one copy per shard: a shard is available exactly while its host is registered
        final String cluster = cluster("shards");
        final ShardPlacement placement = ShardPlacement.parse("a,b,c", 1);
        int shardsOfA = 0;
        int shardsOfAb = 0;
        for (int shard = 0; shard < StateKeyShard.SHARD_COUNT; shard++)
        {
            shardsOfA += "a".equals(placement.hostOf(shard)) ? 1 : 0;
            shardsOfAb += "c".equals(placement.hostOf(shard)) ? 0 : 1;
        }
        try (Joined a = join(etcd.endpoints(), cluster, "a", "a,b,c", 1))
        {
            awaitCompleteWith(a, "a");
            assertEquals(StateKeyShard.SHARD_COUNT - shardsOfA, a.membership.view().unavailableShards());
            assertEquals(0, a.membership.view().degradedShards());
            try (Joined b = join(etcd.endpoints(), cluster, "b", "a,b,c", 1))
            {
                awaitCompleteWith(a, "a", "b");
                assertEquals(StateKeyShard.SHARD_COUNT - shardsOfAb, a.membership.view().unavailableShards());
                final String listing = membersCli(cluster);
                assertTrue(listing.contains(a.membership.ownRecord().runtimeUuid().toString()) &&
                    listing.contains(b.membership.ownRecord().runtimeUuid().toString()) &&
                    listing.contains("peer-a:7470") && listing.contains(placement.fingerprint()) &&
                    listing.contains((StateKeyShard.SHARD_COUNT - shardsOfAb) + " of 16 shards unavailable") &&
                    listing.contains("UNAVAILABLE (no copy registered)") && listing.contains(" c* ") &&
                    listing.contains("1 copy per shard") && !listing.contains("reduced failure coverage"), listing);
                for (int shard = 0; shard < StateKeyShard.SHARD_COUNT; shard++)
                {
                    final MemberRecord host = a.membership.view().hostRecord(shard);
                    assertEquals("c".equals(placement.hostOf(shard)), null == host, "shard " + shard);
                    assertEquals(placement.hostOf(shard), a.membership.view().placement().hostOf(shard));
                }
            }
            // b left: its shards are unavailable again, and still assigned to b
            final int unavailableWithB = StateKeyShard.SHARD_COUNT - shardsOfAb;
            await(() -> unavailableWithB < a.membership.view().unavailableShards(), 5_000, a::log);
            assertEquals(StateKeyShard.SHARD_COUNT - shardsOfA, a.membership.view().unavailableShards());
        }
    }

    @Test
    @Timeout(60)
    @Execution(ExecutionMode.CONCURRENT)
    void shouldCountShardsWithFewerLiveCopiesThanAskedAndListTheirMissingCopies() throws Exception
    {
        final String cluster = cluster("copies");
        final ShardPlacement placement = ShardPlacement.parse("a,b,c,d", 3);
        int holdsA = 0;
        int holdsD = 0;
        for (int shard = 0; shard < StateKeyShard.SHARD_COUNT; shard++)
        {
            holdsA += placement.replicaIndex(shard, "a") >= 0 ? 1 : 0;
            holdsD += placement.replicaIndex(shard, "d") >= 0 ? 1 : 0;
        }
        final int shardsOfA = holdsA;
        final int shardsOfD = holdsD;
        try (Joined a = join(etcd.endpoints(), cluster, "a", "a,b,c,d", 3))
        {
            awaitCompleteWith(a, "a");
            // alone: a's shards have one copy of three, the others none
            await(() -> shardsOfA == a.counter(MembershipCounter.SHARDS_DEGRADED) &&
                StateKeyShard.SHARD_COUNT - shardsOfA == a.counter(MembershipCounter.SHARDS_UNAVAILABLE), 5_000, a::log);
            assertEquals(shardsOfA, a.membership.view().degradedShards());
            // the view keeper sets the gauges, then logs
            await(() -> a.log().contains((StateKeyShard.SHARD_COUNT - shardsOfA) + " of 16 shards unavailable, " +
                shardsOfA + " with fewer live copies than the 3 asked"), 5_000, a::log);

            for (final String other : List.of("b", "c", "d"))
            {
                put(raw, MembershipConfiguration.memberKey(cluster, other), fakeRecord(other, 0));
            }
            awaitCompleteWith(a, "a", "b", "c", "d");
            await(() -> 0 == a.counter(MembershipCounter.SHARDS_DEGRADED) &&
                0 == a.counter(MembershipCounter.SHARDS_UNAVAILABLE), 5_000, a::log);
            final String whole = membersCli(cluster);
            assertTrue(whole.contains("3 copies per shard, fingerprint " + placement.fingerprint()) &&
                whole.contains("0 of 16 shards unavailable") && !whole.contains("reduced failure coverage") &&
                StateKeyShard.SHARD_COUNT == whole.split("available \\(3 of 3 copies live\\)", -1).length - 1, whole);

            // d leaves: its shards keep their copies elsewhere and lose only d's
            MembershipTestSupport.delete(raw, MembershipConfiguration.memberKey(cluster, "d"));
            await(() -> shardsOfD == a.counter(MembershipCounter.SHARDS_DEGRADED) &&
                0 == a.counter(MembershipCounter.SHARDS_UNAVAILABLE), 5_000, a::log);
            final String listing = membersCli(cluster);
            assertTrue(listing.contains("0 of 16 shards unavailable") &&
                listing.contains(shardsOfD + " of 16 shards with reduced failure coverage (fewest live copies: 2 of 3)") &&
                listing.contains("reduced failure coverage: 2 of 3 copies live") && listing.contains("d*"), listing);
            for (int shard = 0; shard < StateKeyShard.SHARD_COUNT; shard++)
            {
                final int rankOfD = placement.replicaIndex(shard, "d");
                assertEquals(rankOfD >= 0 ? 2 : 3, a.membership.view().liveReplicas(shard), "shard " + shard);
                final StringBuilder copies = new StringBuilder();
                for (int replica = 0; replica < placement.replicaCount(); replica++)
                {
                    copies.append(0 == replica ? "" : " ").append(placement.replicaOf(shard, replica))
                        .append(replica == rankOfD ? "*" : "");
                }
                assertTrue(listing.contains(String.format("%-6d %-40s", shard, copies)), copies + "\n" + listing);
            }
        }
    }

    @Test
    @Timeout(60)
    @Execution(ExecutionMode.CONCURRENT)
    void shouldCallEveryShardDegradedWhenThereAreFewerCatalogNodesThanCopies()
    {
        final String cluster = cluster("fewnodes");
        try (Joined a = join(etcd.endpoints(), cluster, "a", "a,b", 3);
            Joined b = join(etcd.endpoints(), cluster, "b", "a,b", 3))
        {
            awaitCompleteWith(a, "a", "b");
            await(() -> StateKeyShard.SHARD_COUNT == a.counter(MembershipCounter.SHARDS_DEGRADED) &&
                0 == a.counter(MembershipCounter.SHARDS_UNAVAILABLE), 5_000, a::log);
            final String listing = membersCli(cluster);
            assertTrue(listing.contains("only 2 catalog node(s) for 3 copies") &&
                listing.contains("16 of 16 shards with reduced failure coverage (fewest live copies: 2 of 3)"), listing);
        }
    }

    @Test
    @Timeout(90)
    @Execution(ExecutionMode.CONCURRENT)
    void shouldKeepRegistrationsWhenTheEtcdLeaderIsKilled() throws Exception
    {
        try (EtcdCluster three = EtcdCluster.start(3))
        {
            final String cluster = cluster("leader");
            try (Joined a = join(three.endpoints(), cluster, "a", "a,b");
                Joined b = join(three.endpoints(), cluster, "b", "a,b"))
            {
                awaitCompleteWith(a, "a", "b");
                awaitCompleteWith(b, "a", "b");
                final int leader = three.awaitLeaderIndex();
                three.kill(three.member(leader));
                final long killedNs = System.nanoTime();
                three.awaitLeaderIndex();

                // Wait out more than one TTL (design default 10 s) with the leader gone: both stay registered.
                final long ttlNs = TimeUnit.SECONDS.toNanos(io.orbitkv.manager.Configuration.MEMBERSHIP_TTL_SECS_DEFAULT);
                await(() -> System.nanoTime() - killedNs > ttlNs + TimeUnit.SECONDS.toNanos(2) &&
                    a.counter(MembershipCounter.KEEPALIVES_ACKED) >= 4, 30_000, a::log);
                for (final Joined j : List.of(a, b))
                {
                    assertEquals(FenceCause.NONE, j.membership.fenceCause(), j.log());
                    assertEquals(Membership.STATE_REGISTERED, j.membership.registrationState());
                }
                awaitCompleteWith(a, "a", "b");
                awaitCompleteWith(b, "a", "b");
                assertTrue(a.membership.remoteWorkEnabled(System.nanoTime()), a.log());
                assertTrue(b.membership.remoteWorkEnabled(System.nanoTime()), b.log());
            }
        }
    }

    @Test
    @Timeout(90)
    @Execution(ExecutionMode.CONCURRENT)
    void shouldLetExactlyOneOfTwoRacingManagerProcessesRegisterAndExpireItAfterKillNine() throws Exception
    {
        final String cluster = cluster("race");
        final Path logs = Files.createDirectories(Paths.get("target", "e2e-logs"));
        final List<Process> processes = new ArrayList<>();
        final List<Path> outs = new ArrayList<>();
        final List<File> dirs = new ArrayList<>();
        try
        {
            for (int i = 0; i < 2; i++)
            {
                final File dir = new File("/dev/shm", "orbitkv-race-" + UUID.randomUUID());
                dirs.add(dir);
                final Path out = logs.resolve(cluster + "-" + i + ".log");
                outs.add(out);
                processes.add(new ProcessBuilder(ChildJvm.orbitkvCommand(List.of("-Xmx256m"), List.of(
                    "manager", "--dir", dir.toString(), "--pool-bytes", "4m", "--pool-pretouch=false",
                    "--etcd-endpoints", etcd.endpoints(), "--cluster-name", cluster, "--node-id", "same",
                    "--catalog-nodes", "same")))
                    .redirectErrorStream(true).redirectOutput(out.toFile()).start());
            }
            await(() -> processes.stream().filter((p) -> !p.isAlive()).count() == 1, 60_000,
                () -> "exactly one exits: " + read(outs.get(0)) + "\n----\n" + read(outs.get(1)));
            final int loser = processes.get(0).isAlive() ? 1 : 0;
            final int winner = 1 - loser;
            assertEquals(1, processes.get(loser).exitValue());
            assertTrue(read(outs.get(loser)).contains("node id 'same' is already registered"), read(outs.get(loser)));
            await(() -> read(outs.get(winner)).contains("OrbitKV Manager running"), 30_000, () -> read(outs.get(winner)));
            assertTrue(read(outs.get(winner)).contains("registered node 'same'"), read(outs.get(winner)));
            assertTrue(processes.get(winner).isAlive());

            // kill -9 revokes nothing: the record stays until the lease expires (about one TTL later)
            try (Joined watcher = join(etcd.endpoints(), cluster, "watcher", "same"))
            {
                awaitCompleteWith(watcher, "same", "watcher");
                processes.get(winner).destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                final long killedNs = System.nanoTime();
                await(() -> null == watcher.membership.view().member("same"), 30_000, () -> "lease expiry after kill -9");
                final long goneAfterMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedNs);
                assertTrue(goneAfterMs >= 3_000, "removed after " + goneAfterMs + " ms: expiry, not a revoke");
            }
        }
        finally
        {
            for (final Process p : processes)
            {
                p.destroy();
                p.waitFor(10, TimeUnit.SECONDS);
            }
            dirs.forEach((d) -> IoUtil.delete(d, true));
        }
    }

    @Test
    @Timeout(120)
    @Execution(ExecutionMode.CONCURRENT)
    void shouldExpireAStoppedManagerProcessAndRegisterANewIncarnationWhenItContinues() throws Exception
    {
        final String cluster = cluster("sigstop");
        final Path logs = Files.createDirectories(Paths.get("target", "e2e-logs"));
        final Path out = logs.resolve(cluster + "-stopped.log");
        final File dir = new File("/dev/shm", "orbitkv-sigstop-" + UUID.randomUUID());
        final Process manager = new ProcessBuilder(ChildJvm.orbitkvCommand(List.of("-Xmx256m"), List.of(
            "manager", "--dir", dir.toString(), "--pool-bytes", "4m", "--pool-pretouch=false",
            "--etcd-endpoints", etcd.endpoints(), "--cluster-name", cluster, "--node-id", "stopped",
            "--catalog-nodes", "stopped,watcher")))
            .redirectErrorStream(true).redirectOutput(out.toFile()).start();
        try (Joined watcher = join(etcd.endpoints(), cluster, "watcher", "stopped,watcher"))
        {
            // Start-up first (a loaded CI box can take long to start a JVM), then the view.
            await(() -> read(out).contains("OrbitKV Manager running"), 60_000, () -> read(out));
            awaitCompleteWith(watcher, "stopped", "watcher");
            final MemberRecord first = watcher.membership.view().member("stopped");

            EtcdCluster.signal(manager.pid(), "STOP");
            final long stoppedNs = System.nanoTime();
            await(() -> null == watcher.membership.view().member("stopped"), 30_000,
                () -> "watcher sees the stopped Manager's lease expire " + watcher.membership.view());
            final long expiredAfterMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stoppedNs);
            assertTrue(expiredAfterMs <= 25_000, "expired after " + expiredAfterMs + " ms");

            EtcdCluster.signal(manager.pid(), "CONT");
            // The stopped incarnation stays dead; the process registers a new one by itself.
            await(() -> read(out).contains("registering a new incarnation"), 15_000, () -> read(out));
            await(() ->
            {
                final MemberRecord now = watcher.membership.view().member("stopped");
                return null != now && !now.runtimeUuid().equals(first.runtimeUuid());
            }, 30_000, () -> "a new incarnation in the watcher's view " + watcher.membership.view() + "\n" + read(out));
            final MemberRecord second = watcher.membership.view().member("stopped");
            assertEquals(first.epoch() + 1, second.epoch(), "epoch + 1");
            assertTrue(manager.isAlive(), "local service continues");
            try (CncReader reader = CncReader.map(new File(dir, "cnc.dat")))
            {
                await(() -> 1 == reader.countersReader()
                    .getCounterValue(MembershipCounter.REMOTE_WORK_ENABLED.fixedId()), 15_000, () -> read(out));
                assertEquals(FenceCause.NONE.code(),
                    reader.countersReader().getCounterValue(MembershipCounter.FENCED.fixedId()));
                assertEquals(2, reader.countersReader()
                    .getCounterValue(MembershipCounter.INCARNATION.fixedId()));
                assertEquals(1, reader.countersReader()
                    .getCounterValue(MembershipCounter.REREGISTRATIONS.fixedId()));
                assertEquals(first.runtimeUuid(), reader.runtimeUuid(), "the CnC header keeps the first runtime UUID");
            }
            final Process stat = new ProcessBuilder(ChildJvm.orbitkvCommand(List.of("-Xmx128m"),
                List.of("stat", "--dir", dir.toString(), "--once"))).redirectErrorStream(true).start();
            final String statText = new String(stat.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            stat.waitFor(30, TimeUnit.SECONDS);
            assertTrue(statText.contains("registered, epoch " + second.epoch() + ", incarnation 2"), statText);
            // two catalog nodes and the default three copies: every shard is held twice of three
            assertTrue(statText.contains("shards unavailable 0 of 16, reduced failure coverage on 16 of 16"), statText);
        }
        finally
        {
            EtcdCluster.signal(manager.pid(), "CONT");
            manager.destroy();
            manager.waitFor(10, TimeUnit.SECONDS);
            IoUtil.delete(dir, true);
        }
    }

    @Test
    @Timeout(60)
    @Execution(ExecutionMode.CONCURRENT)
    void shouldSleepUntilDueOrSignalledWhenNothingHappens()
    {
        final String cluster = cluster("idle");
        try (Joined a = join(etcd.endpoints(), cluster, "a", "a"))
        {
            awaitCompleteWith(a, "a");
            // Settle first: opening the watch (first use of jetcd's watch path, classes loaded on this thread)
            // happens just after the view completes.
            final long settleNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
            await(() -> System.nanoTime() - settleNs >= 0, 5_000, () -> "settle");
            final long windowMs = 5_000;
            final java.lang.management.ThreadMXBean cpu = java.lang.management.ManagementFactory.getThreadMXBean();
            final Thread[] threads = a.membership.threads();
            final long leaseCpuBefore = cpu.getThreadCpuTime(threads[0].threadId());
            final long viewCpuBefore = cpu.getThreadCpuTime(threads[1].threadId());
            final long placementCpuBefore = cpu.getThreadCpuTime(threads[2].threadId());
            final long placementWrites = a.counter(MembershipCounter.ETCD_CALLS_TXN);
            final long before = a.counter(MembershipCounter.WAKEUPS);
            final long keepalivesBefore = a.counter(MembershipCounter.KEEPALIVES_ACKED);
            final long endNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(windowMs);
            await(() -> System.nanoTime() - endNs >= 0, windowMs + 1_000, () -> "window");
            final long wakeups = a.counter(MembershipCounter.WAKEUPS) - before;
            final long keepalives = a.counter(MembershipCounter.KEEPALIVES_ACKED) - keepalivesBefore;
            final long leaseCpuMs = TimeUnit.NANOSECONDS.toMillis(cpu.getThreadCpuTime(threads[0].threadId()) -
                leaseCpuBefore);
            final long viewCpuMs = TimeUnit.NANOSECONDS.toMillis(cpu.getThreadCpuTime(threads[1].threadId()) -
                viewCpuBefore);
            // CPU, measured apart from our own counter: sleeping 2 ms at a time the view keeper alone used ~7 ms of
            // CPU a second on this VM (35 ms in the window), the lease keeper ~3 ms a second; now the view keeper
            // has nothing to do and the lease keeper only its keepalives (~1 ms a second).
            assertTrue(viewCpuMs <= 12, "view keeper used " + viewCpuMs + " ms of CPU in " + windowMs + " ms");
            assertTrue(leaseCpuMs <= 25, "lease keeper used " + leaseCpuMs + " ms of CPU in " + windowMs + " ms");
            // the placement agent of a stable cluster stays parked: no periodic round, no etcd call
            final long placementCpuMs = TimeUnit.NANOSECONDS.toMillis(cpu.getThreadCpuTime(threads[2].threadId()) -
                placementCpuBefore);
            assertTrue(placementCpuMs <= 5, "placement agent used " + placementCpuMs + " ms of CPU in " + windowMs +
                " ms");
            assertEquals(placementWrites, a.counter(MembershipCounter.ETCD_CALLS_TXN), "no txn while stable");
            // Six keepalives per 10 s TTL: a wake-up to send each and one for its reply, nothing else. Sleeping
            // 10 ms and 2 ms at a time, the two threads woke about 600 times a second.
            assertTrue(keepalives >= 2, "keepalives " + keepalives);
            assertTrue(wakeups <= 4 * keepalives + 4, wakeups + " wake-ups in " + windowMs + " ms for " + keepalives +
                " keepalives");
            assertTrue(a.membership.remoteWorkEnabled(System.nanoTime()));
        }
    }

    @Test
    @Timeout(60)
    @Execution(ExecutionMode.CONCURRENT)
    void shouldUseAKeepaliveReplySlowerThanTheCallDeadlineWhileItCanStillExtendValidity() throws Exception
    {
        try (EtcdCluster own = EtcdCluster.start(1);
            Joined a = join(own.endpoints(), cluster("stall"), "a", "a"))
        {
            awaitCompleteWith(a, "a");
            // Stall etcd right after an acknowledged keepalive and resume it 1 s before local validity (that
            // keepalive's send + 5 s) runs out. The next keepalive, due 1.7 s after that send, goes out during the stall
            // and waits at least 2.3 s for its reply: longer than the 2 s call deadline, yet the reply still extends
            // validity. Bounded by the call deadline that keepalive was cancelled and the registration expired.
            final long acked = a.counter(MembershipCounter.KEEPALIVES_ACKED);
            await(() -> a.counter(MembershipCounter.KEEPALIVES_ACKED) > acked, 10_000, a::log);
            EtcdCluster.signal(own.member(0).pid(), "STOP");
            final long stoppedNs = System.nanoTime();
            try
            {
                // A reply already in flight may still land: read validity once etcd is surely still.
                await(() -> System.nanoTime() - stoppedNs >= TimeUnit.MILLISECONDS.toNanos(200), 5_000, () -> "stop");
                final long resumeAtNs = a.membership.incarnation().validity().validUntilNs() -
                    TimeUnit.MILLISECONDS.toNanos(1_000);
                await(() -> System.nanoTime() - resumeAtNs >= 0, 10_000, () -> "stall");
            }
            finally
            {
                EtcdCluster.signal(own.member(0).pid(), "CONT");
            }
            final long resumedAcked = a.counter(MembershipCounter.KEEPALIVES_ACKED);
            await(() -> a.counter(MembershipCounter.KEEPALIVES_ACKED) > resumedAcked, 10_000, a::log);
            final String state = a.log() + "\nkeepalive rtt max " +
                a.counter(MembershipCounter.KEEPALIVE_RTT_MAX_MS) + " ms, least validity margin " +
                a.counter(MembershipCounter.VALIDITY_MARGIN_MIN_MS) + " ms";
            assertTrue(a.counter(MembershipCounter.KEEPALIVE_RTT_MAX_MS) >
                io.orbitkv.manager.Configuration.ETCD_DEADLINE_MS_DEFAULT, state);
            assertEquals(FenceCause.NONE, a.membership.fenceCause(), state);
            assertEquals(1, a.membership.incarnation().number(), state);
            assertTrue(a.membership.remoteWorkEnabled(System.nanoTime()), state);
        }
    }

    private static String membersCli(final String cluster)
    {
        final java.io.StringWriter text = new java.io.StringWriter();
        final picocli.CommandLine cli = io.orbitkv.manager.cli.OrbitKvCli.commandLine();
        cli.setOut(new java.io.PrintWriter(text, true));
        cli.setErr(new java.io.PrintWriter(text, true));
        final int exit = cli.execute("members", "--etcd-endpoints", etcd.endpoints(), "--cluster-name", cluster);
        assertEquals(0, exit, text.toString());
        return text.toString();
    }

    private static String read(final Path path)
    {
        try
        {
            return Files.readString(path);
        }
        catch (final java.io.IOException ex)
        {
            return ex.toString();
        }
    }

    static KeyValue only(final GetResponse response)
    {
        assertNotNull(response);
        assertEquals(1, response.getKvs().size());
        return response.getKvs().get(0);
    }
}
