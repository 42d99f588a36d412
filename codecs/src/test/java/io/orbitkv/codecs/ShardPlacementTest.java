package io.orbitkv.codecs;

import java.io.InputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ShardPlacementTest
{
    @Test
    void shouldMatchEveryCommittedVector() throws Exception
    {
        final JsonNode root;
        try (InputStream in = getClass().getResourceAsStream("/shard-placement-vectors.json"))
        {
            root = new ObjectMapper().readTree(in);
        }
        assertEquals(ShardPlacement.SCORE_DOMAIN_TAG, root.get("scoreDomainTag").asText());
        assertEquals(ShardPlacement.FINGERPRINT_DOMAIN_TAG, root.get("fingerprintDomainTag").asText());
        assertEquals(StateKeyShard.SHARD_COUNT, root.get("shardCount").asInt());
        for (final JsonNode s : root.get("scores"))
        {
            assertEquals(s.get("scoreHex").asText(),
                HexFormat.of().formatHex(ShardPlacement.score(s.get("shard").asInt(), s.get("node").asText())));
        }

        int checked = 0;
        for (final JsonNode v : root.get("vectors"))
        {
            final ShardPlacement placement = ShardPlacement.of(strings(v.get("catalogNodes")));
            assertEquals(strings(v.get("canonicalNodes")), placement.nodes());
            assertEquals(v.get("canonicalConfig").asText(), placement.canonicalConfig());
            assertEquals(v.get("fingerprint").asText(), placement.fingerprint());
            final List<String> hosts = strings(v.get("hostByShard"));
            for (int shard = 0; shard < StateKeyShard.SHARD_COUNT; shard++)
            {
                assertEquals(hosts.get(shard), placement.hostOf(shard), placement + " shard " + shard);
            }
            checked++;
        }
        assertTrue(checked >= 9, "vectors file must hold the full set, found " + checked);

        int replicaChecked = 0;
        for (final JsonNode v : root.get("replicaVectors"))
        {
            final ShardPlacement placement = ShardPlacement.of(strings(v.get("catalogNodes")), v.get("replicas").asInt());
            assertEquals(strings(v.get("canonicalNodes")), placement.nodes());
            assertEquals(v.get("replicas").asInt(), placement.replicas());
            assertEquals(v.get("replicaCount").asInt(), placement.replicaCount(), placement.toString());
            assertEquals(v.get("canonicalConfig").asText(), placement.canonicalConfig());
            assertEquals(v.get("fingerprint").asText(), placement.fingerprint());
            for (int shard = 0; shard < StateKeyShard.SHARD_COUNT; shard++)
            {
                assertEquals(strings(v.get("replicasByShard").get(shard)), replicas(placement, shard),
                    placement + " shard " + shard);
            }
            replicaChecked++;
        }
        assertTrue(replicaChecked >= 8, "vectors file must hold the replica cases, found " + replicaChecked);

        int weightedChecked = 0;
        for (final JsonNode v : root.get("weightedVectors"))
        {
            final Map<String, Integer> weights = new TreeMap<>();
            v.get("weights").properties().forEach((e) -> weights.put(e.getKey(), e.getValue().asInt()));
            final ShardPlacement placement = ShardPlacement.of(strings(v.get("catalogNodes")), v.get("replicas").asInt(),
                Map.of(), weights, v.get("seed").asText());
            assertEquals(v.get("canonicalConfig").asText(), placement.canonicalConfig());
            assertEquals(v.get("fingerprint").asText(), placement.fingerprint());
            assertEquals(v.get("replicaCount").asInt(), placement.replicaCount());
            for (int shard = 0; shard < StateKeyShard.SHARD_COUNT; shard++)
            {
                assertEquals(strings(v.get("replicasByShard").get(shard)), replicas(placement, shard),
                    placement + " shard " + shard);
            }
            weightedChecked++;
        }
        assertTrue(weightedChecked >= 5, "vectors file must hold the weighted cases, found " + weightedChecked);
    }

    @Test
    void shouldGiveAHeavierNodeMoreShardsAndKeepUnweightedPlacementsAsTheyWere()
    {
        final ShardPlacement plain = ShardPlacement.parse("a,b,c,d", 1);
        assertEquals(plain, ShardPlacement.parse("a=1,b,c,d", 1), "weight 1 is no weight");
        assertEquals(plain.fingerprint(), ShardPlacement.parse("a=1,b,c,d", 1).fingerprint());
        final ShardPlacement heavy = ShardPlacement.parse("a=1000,b,c,d", 1);
        assertEquals(Map.of("a", 1000), heavy.weights());
        assertTrue(heavy.canonicalConfig().endsWith(";weights=a=1000"), heavy.canonicalConfig());
        int heldByA = 0;
        for (int shard = 0; shard < StateKeyShard.SHARD_COUNT; shard++)
        {
            heldByA += "a".equals(heavy.hostOf(shard)) ? 1 : 0;
        }
        assertTrue(heldByA >= 14, "a node 1000 times heavier holds nearly every shard: " + heldByA);
        final ShardPlacement withDomain = ShardPlacement.parse("a@rack1=3,b@rack2,c", 3);
        assertEquals(Map.of("a", 3), withDomain.weights());
        assertEquals(Map.of("a", "rack1", "b", "rack2"), withDomain.domains());
        assertThrows(IllegalArgumentException.class, () -> ShardPlacement.parse("a=0,b", 1));
        assertThrows(IllegalArgumentException.class, () -> ShardPlacement.parse("a=1001,b", 1));
        assertThrows(IllegalArgumentException.class, () -> ShardPlacement.parse("a=x,b", 1));
    }

    @Test
    void shouldPlaceIndependentlyUnderAnotherSeed()
    {
        final ShardPlacement plain = ShardPlacement.parse("a,b,c,d,e,f", 1);
        final ShardPlacement seeded = plain.withSeed("blue");
        assertEquals("blue", seeded.seed());
        assertNotEquals(plain.fingerprint(), seeded.fingerprint());
        assertTrue(seeded.canonicalConfig().endsWith(";seed=blue"));
        int moved = 0;
        for (int shard = 0; shard < StateKeyShard.SHARD_COUNT; shard++)
        {
            moved += plain.hostOf(shard).equals(seeded.hostOf(shard)) ? 0 : 1;
        }
        assertTrue(moved > 0, "another seed places some shard elsewhere");
        assertEquals(plain, seeded.withSeed(""));
        assertThrows(IllegalArgumentException.class, () -> plain.withSeed("no spaces"));
    }

    @Test
    void shouldRankDistinctReplicasWithTheHostFirst()
    {
        final ShardPlacement placement = ShardPlacement.parse("a,b,c,d,e", 3);
        assertEquals(3, placement.replicas());
        assertEquals(3, placement.replicaCount());
        for (int shard = 0; shard < StateKeyShard.SHARD_COUNT; shard++)
        {
            final List<String> replicas = replicas(placement, shard);
            assertEquals(3, new HashSet<>(replicas).size(), "shard " + shard + " " + replicas);
            assertEquals(placement.hostOf(shard), replicas.get(0), "shard " + shard);
            for (int i = 0; i < replicas.size(); i++)
            {
                assertEquals(i, placement.replicaIndex(shard, replicas.get(i)));
                if (i > 0)
                {
                    // rank order: each copy's score is below the one before it
                    assertTrue(Arrays.compareUnsigned(ShardPlacement.score(shard, replicas.get(i - 1)),
                        ShardPlacement.score(shard, replicas.get(i))) > 0, "shard " + shard + " " + replicas);
                }
            }
            for (final String node : placement.nodes())
            {
                if (!replicas.contains(node))
                {
                    assertEquals(-1, placement.replicaIndex(shard, node));
                    // the nodes left out score below the last copy
                    assertTrue(Arrays.compareUnsigned(ShardPlacement.score(shard, replicas.get(2)),
                        ShardPlacement.score(shard, node)) > 0, "shard " + shard + " " + node);
                }
            }
        }
        assertEquals(-1, placement.replicaIndex(0, "z"));
    }

    @Test
    void shouldKeepTheOneCopyHostAsReplicaZero()
    {
        final ShardPlacement one = ShardPlacement.parse("a,b,c,d,e");
        final ShardPlacement three = ShardPlacement.parse("a,b,c,d,e", 3);
        assertEquals(1, one.replicas());
        assertEquals(1, one.replicaCount());
        for (int shard = 0; shard < StateKeyShard.SHARD_COUNT; shard++)
        {
            assertEquals(one.hostOf(shard), three.hostOf(shard), "shard " + shard);
            assertEquals(one.hostOf(shard), one.replicaOf(shard, 0), "shard " + shard);
        }
    }

    @Test
    void shouldGiveEveryNodeEveryShardWhenThereAreFewerNodesThanReplicas()
    {
        final ShardPlacement two = ShardPlacement.parse("b,a", 3);
        assertEquals(3, two.replicas());
        assertEquals(2, two.replicaCount());
        final ShardPlacement solo = ShardPlacement.parse("solo", 5);
        assertEquals(1, solo.replicaCount());
        for (int shard = 0; shard < StateKeyShard.SHARD_COUNT; shard++)
        {
            assertEquals(Set.of("a", "b"), new HashSet<>(replicas(two, shard)), "shard " + shard);
            assertEquals(List.of("solo"), replicas(solo, shard));
        }
        // the copies asked still name the placement: two nodes with R=3 is not two nodes with R=2
        assertNotEquals(ShardPlacement.parse("a,b", 2), two);
        assertNotEquals(ShardPlacement.parse("a,b", 2).fingerprint(), two.fingerprint());
    }

    @Test
    void shouldRefuseReplicasOutsideOneToFive()
    {
        ShardPlacement.parse("a,b", ShardPlacement.MIN_REPLICAS);
        ShardPlacement.parse("a,b", ShardPlacement.MAX_REPLICAS);
        for (final int replicas : new int[]{0, -1, ShardPlacement.MAX_REPLICAS + 1})
        {
            final IllegalArgumentException ex =
                assertThrows(IllegalArgumentException.class, () -> ShardPlacement.parse("a,b", replicas));
            assertTrue(ex.getMessage().contains("--catalog-replicas must be 1-5") &&
                ex.getMessage().contains("got " + replicas), ex.getMessage());
        }
    }

    @Test
    void shouldNameTheReplicaCountInTheFingerprintOnlyAboveOne()
    {
        final ShardPlacement one = ShardPlacement.parse("a,b,c", 1);
        final ShardPlacement three = ShardPlacement.parse("a,b,c", 3);
        // one copy keeps the text and fingerprint placements had before replicas existed (committed vector)
        assertEquals(ShardPlacement.parse("a,b,c"), one);
        assertEquals("shards=16;nodes=a,b,c", one.canonicalConfig());
        assertEquals("021eb0c6a38944ead408005050cc9f45", one.fingerprint());
        assertEquals("shards=16;replicas=3;nodes=a,b,c", three.canonicalConfig());
        assertNotEquals(one.fingerprint(), three.fingerprint());
        assertNotEquals(one, three);
        assertNotEquals(one.hashCode(), three.hashCode());
        assertEquals(ShardPlacement.parse("c,b,a", 3), three);
        assertEquals(ShardPlacement.parse("c,b,a", 3).hashCode(), three.hashCode());
    }

    @Test
    void shouldChangeOnlyTheReplicaSetsANewNodeJoins()
    {
        final ShardPlacement four = ShardPlacement.parse("a,b,c,d", 3);
        final ShardPlacement five = ShardPlacement.parse("a,b,c,d,e", 3);
        int joined = 0;
        for (int shard = 0; shard < StateKeyShard.SHARD_COUNT; shard++)
        {
            final List<String> before = replicas(four, shard);
            final List<String> after = replicas(five, shard);
            if (!after.contains("e"))
            {
                assertEquals(before, after, "shard " + shard + " has no copy on e and must not change");
                continue;
            }
            joined++;
            // e takes one slot; the old copies keep their relative order and only the lowest ranked one drops out
            final List<String> kept = new ArrayList<>(after);
            kept.remove("e");
            assertEquals(before.subList(0, 2), kept, "shard " + shard + ": " + before + " -> " + after);
            final Set<String> lost = new HashSet<>(before);
            lost.removeAll(after);
            assertEquals(1, lost.size(), "shard " + shard + ": " + before + " -> " + after);
        }
        assertTrue(joined > 0 && joined < StateKeyShard.SHARD_COUNT, "e should hold some shards, holds " + joined);
    }

    @Test
    void shouldSpreadEachShardsCopiesOverFailureDomainsFirst()
    {
        // Two racks of three: with two copies every shard has one in each rack, with three both racks and then the
        // next by rank; with no domains the same nodes may put both copies in one rack.
        final String racks = "a@r1,b@r1,c@r1,d@r2,e@r2,f@r2";
        final ShardPlacement two = ShardPlacement.parse(racks, 2);
        final ShardPlacement three = ShardPlacement.parse(racks, 3);
        final ShardPlacement plain = ShardPlacement.parse("a,b,c,d,e,f", 2);
        boolean plainSharesARack = false;
        for (int s = 0; s < StateKeyShard.SHARD_COUNT; s++)
        {
            assertNotEquals(two.domains().get(two.replicaOf(s, 0)), two.domains().get(two.replicaOf(s, 1)), "shard " + s);
            final Set<String> used = new HashSet<>();
            for (int r = 0; r < 3; r++)
            {
                used.add(three.domains().get(three.replicaOf(s, r)));
            }
            assertEquals(Set.of("r1", "r2"), used, "shard " + s);
            // Domains only reorder: the first copy is the plain placement's host.
            assertEquals(plain.hostOf(s), two.hostOf(s));
            plainSharesARack |= two.domains().get(plain.replicaOf(s, 0)).equals(two.domains().get(plain.replicaOf(s, 1)));
        }
        assertTrue(plainSharesARack, "the test needs a shard whose plain copies share a rack");
        assertNotEquals(plain.fingerprint(), ShardPlacement.parse(racks, 2).fingerprint());
        assertTrue(two.canonicalConfig().endsWith(";domains=a@r1,b@r1,c@r1,d@r2,e@r2,f@r2"), two.canonicalConfig());
        assertNotEquals(two, plain);
        assertEquals(two, ShardPlacement.parse("f@r2,e@r2,d@r2,c@r1,b@r1,a@r1", 2));
        assertThrows(IllegalArgumentException.class, () -> ShardPlacement.parse("a@,b", 2));
        assertThrows(IllegalArgumentException.class, () -> ShardPlacement.parse("a@r 1,b", 2));
    }

    @Test
    void shouldCanonicaliseOrderAndDuplicates()
    {
        final ShardPlacement a = ShardPlacement.parse("c, a,b,a");
        final ShardPlacement b = ShardPlacement.parse("a,b,c");
        assertEquals(List.of("a", "b", "c"), a.nodes());
        assertEquals(b.fingerprint(), a.fingerprint());
        assertEquals(b, a);
        assertNotEquals(b.fingerprint(), ShardPlacement.parse("a,b").fingerprint());
    }

    @Test
    void shouldMoveOnlyTheShardsANewNodeWins()
    {
        final ShardPlacement three = ShardPlacement.parse("a,b,c");
        final ShardPlacement four = ShardPlacement.parse("a,b,c,d");
        for (int shard = 0; shard < StateKeyShard.SHARD_COUNT; shard++)
        {
            if (!"d".equals(four.hostOf(shard)))
            {
                assertEquals(three.hostOf(shard), four.hostOf(shard), "shard " + shard);
            }
        }
    }

    @Test
    void shouldAcceptOneToSixteenNodesOnly()
    {
        ShardPlacement.parse("solo");
        final List<String> sixteen = new ArrayList<>();
        for (int i = 0; i < ShardPlacement.MAX_CATALOG_NODES; i++)
        {
            sixteen.add("n" + i);
        }
        assertEquals(16, ShardPlacement.of(sixteen).nodes().size());
        sixteen.add("n16");
        final IllegalArgumentException tooMany =
            assertThrows(IllegalArgumentException.class, () -> ShardPlacement.of(sixteen));
        assertTrue(tooMany.getMessage().contains("1-16"), tooMany.getMessage());
        assertThrows(IllegalArgumentException.class, () -> ShardPlacement.parse(""));
        assertThrows(IllegalArgumentException.class, () -> ShardPlacement.parse("a,,b"));
        assertThrows(IllegalArgumentException.class, () -> ShardPlacement.parse("a/b"));
        assertThrows(IllegalArgumentException.class, () -> ShardPlacement.parse("x".repeat(65)));
        ShardPlacement.parse("x".repeat(64));
    }

    private static List<String> replicas(final ShardPlacement placement, final int shard)
    {
        final List<String> out = new ArrayList<>();
        for (int i = 0; i < placement.replicaCount(); i++)
        {
            out.add(placement.replicaOf(shard, i));
        }
        return out;
    }

    private static List<String> strings(final JsonNode array)
    {
        final List<String> out = new ArrayList<>();
        array.forEach((n) -> out.add(n.asText()));
        return out;
    }
}
