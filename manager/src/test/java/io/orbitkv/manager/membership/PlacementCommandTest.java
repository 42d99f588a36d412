package io.orbitkv.manager.membership;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.orbitkv.codecs.ShardPlacement;
import io.orbitkv.codecs.StateKeyShard;
import io.orbitkv.manager.SystemCounterFamilies;
import io.orbitkv.manager.cli.OrbitKvCli;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

import static io.orbitkv.manager.membership.MembershipTestSupport.Joined;
import static io.orbitkv.manager.membership.MembershipTestSupport.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code orbitkv placement set} and {@code status} (and the generation line of {@code orbitkv members}) against a
 * real etcd and two Memberships, the test handing their coverage reports over as the catalog would.
 */
class PlacementCommandTest
{
    private static EtcdCluster etcd;
    private static EtcdGateway admin;

    @BeforeAll
    static void startEtcd() throws Exception
    {
        etcd = EtcdCluster.start(1);
        admin = new EtcdGateway(etcd.endpoints(), 2_000, SystemCounterFamilies.inMemory());
    }

    @AfterAll
    static void stopEtcd()
    {
        if (null != admin)
        {
            admin.close();
        }
        if (null != etcd)
        {
            etcd.close();
        }
    }

    /** One invocation's exit code and everything it printed. */
    private record Run(int exit, String out, String err)
    {
        String lastLine()
        {
            final String[] lines = out.trim().split("\n");
            return lines[lines.length - 1];
        }
    }

    private static Run run(final String... args)
    {
        final StringWriter out = new StringWriter();
        final StringWriter err = new StringWriter();
        final CommandLine cli = OrbitKvCli.commandLine();
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(err, true));
        cli.setExecutionExceptionHandler((ex, line, parsed) ->
        {
            ex.printStackTrace(new PrintWriter(err, true));
            return 99;
        });
        final int exit = cli.execute(args);
        return new Run(exit, out.toString(), err.toString());
    }

    private static Run placement(final String cluster, final String... more)
    {
        final String[] args = new String[more.length + 4];
        args[0] = "placement";
        args[1] = more[0];
        args[2] = "--etcd-endpoints";
        args[3] = etcd.endpoints();
        args[4] = "--cluster-name=" + cluster;
        System.arraycopy(more, 1, args, 5, more.length - 1);
        return run(args);
    }

    private static CoverageReport everyShard(final long generation)
    {
        final Map<Integer, Map<String, Long>> shards = new TreeMap<>();
        for (int s = 0; s < StateKeyShard.SHARD_COUNT; s++)
        {
            shards.put(s, Map.of("a", 40L + s, "b", 7L));
        }
        return new CoverageReport(generation, shards);
    }

    @Test
    @Timeout(60)
    void shouldSetADesiredPlacementAndReportTheTransitionUntilStable() throws Exception
    {
        final String cluster = "cli-" + UUID.randomUUID().toString().substring(0, 8);
        try (Joined a = MembershipTestSupport.join(
                MembershipTestSupport.settings(etcd.endpoints(), cluster, "a", "a,b", 1, 16), null);
            Joined b = MembershipTestSupport.join(
                MembershipTestSupport.settings(etcd.endpoints(), cluster, "b", "a,b", 1, 16), null))
        {
            await(() -> a.membership.isReconciler() || b.membership.isReconciler(), 10_000, a::log);
            final Run stable = placement(cluster, "status");
            assertEquals(0, stable.exit(), stable.toString());
            assertTrue(stable.out().contains("installed: generation 1, catalog nodes [a, b] with 1 copy per shard") &&
                stable.out().contains("desired: none") && stable.out().contains("transition: none") &&
                stable.out().contains("reconciler: node '"), stable.out());
            assertEquals("stable", stable.lastLine());

            final Run set = placement(cluster, "set", "--catalog-nodes", "b,a", "--catalog-replicas", "2");
            assertEquals(0, set.exit(), set.toString());
            assertEquals("desired placement generation 2: catalog nodes [a, b] with 2 copies per shard (fingerprint " +
                ShardPlacement.parse("a,b", 2).fingerprint() + ")", set.out().trim());

            // no coverage yet: every shard waits in PREPARE for the copy it adds
            await(() ->
            {
                final PlacementTransition t = PlacementAdmin.status(admin, cluster).transition();
                return null != t && 16 == t.count(MovePhase.PREPARE);
            }, 10_000, a::log);
            final Run moving = placement(cluster, "status");
            assertEquals(0, moving.exit(), moving.toString());
            assertTrue(moving.out().contains("desired: generation 2, catalog nodes [a, b] with 2 copies per shard") &&
                moving.out().contains("transition: 1 -> 2 to catalog nodes [a, b] with 2 copies per shard") &&
                moving.out().contains("16 shard move(s), 16 in flight") && moving.out().contains("PREPARE") &&
                moving.out().contains("coverage from "), moving.out());
            final ShardPlacement one = ShardPlacement.parse("a,b", 1);
            final String host = one.hostOf(0);
            final String other = "a".equals(host) ? "b" : "a";
            assertTrue(moving.out().contains(" -> " + String.join(",",
                PlacementAdmin.copiesOf(ShardPlacement.parse("a,b", 2), 0)) + " ") &&
                moving.out().contains("coverage from " + other), moving.out());
            assertEquals("moving", moving.lastLine());
            final Run timedOut = placement(cluster, "status", "--wait-stable", "1");
            assertEquals(1, timedOut.exit(), timedOut.toString());
            assertTrue(timedOut.err().contains("not stable after 1 s"), timedOut.err());
            final Run members = run("members", "--etcd-endpoints", etcd.endpoints(), "--cluster-name", cluster);
            assertTrue(members.out().contains("placement generation 1, transition 1 -> 2: 16 shard move(s) in flight"),
                members.out());

            a.membership.reportCoverage(everyShard(2));
            b.membership.reportCoverage(everyShard(2));
            final Run done = placement(cluster, "status", "--wait-stable", "30");
            assertEquals(0, done.exit(), done.toString());
            assertTrue(done.out().contains("installed: generation 2, catalog nodes [a, b] with 2 copies per shard") &&
                done.out().contains("transition: none"), done.out());
            assertEquals("stable", done.lastLine());

            final long desiredRevision = admin.get(MembershipConfiguration.placementDesiredKey(cluster)).getKvs().get(0)
                .getModRevision();
            final Run again = placement(cluster, "set", "--catalog-nodes", "a,b", "--catalog-replicas", "2");
            assertEquals(0, again.exit(), again.toString());
            assertTrue(again.out().startsWith("unchanged"), again.out());
            assertEquals(desiredRevision, admin.get(MembershipConfiguration.placementDesiredKey(cluster)).getKvs()
                .get(0).getModRevision(), "nothing written");

            final JsonNode json = new ObjectMapper().readTree(placement(cluster, "status", "--json").out());
            assertTrue(json.get("stable").asBoolean(), json.toString());
            assertEquals(2, json.get("generation").asLong());
            assertEquals(List.of("a", "b"), List.of(json.get("installed").get("nodes").get(0).asText(),
                json.get("installed").get("nodes").get(1).asText()));
            final Run after = run("members", "--etcd-endpoints", etcd.endpoints(), "--cluster-name", cluster);
            assertTrue(after.out().contains("placement generation 2, stable"), after.out());
        }
    }

    @Test
    @Timeout(30)
    void shouldRefuseBadRequestsWithUsageErrorsAndAClusterWithoutPlacement()
    {
        final String cluster = "none-" + UUID.randomUUID().toString().substring(0, 8);
        final Run replicas = placement(cluster, "set", "--catalog-nodes", "a,b", "--catalog-replicas", "9");
        assertEquals(2, replicas.exit(), replicas.toString());
        assertTrue(replicas.err().contains("--catalog-replicas"), replicas.err());
        final Run name = run("placement", "status", "--etcd-endpoints", etcd.endpoints(), "--cluster-name", "a/b");
        assertEquals(2, name.exit(), name.toString());
        final Run none = placement(cluster, "status");
        assertEquals(1, none.exit(), none.toString());
        assertTrue(none.out().contains("installed: none"), none.out());
        final Run nowhere = placement(cluster, "set", "--catalog-nodes", "a,b");
        assertEquals(1, nowhere.exit(), nowhere.toString());
        assertTrue(nowhere.err().contains("has no readable placement"), nowhere.err());
    }
}
