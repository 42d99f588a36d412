package io.orbitkv.codecs;

import java.io.InputStream;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

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

    private static List<String> strings(final JsonNode array)
    {
        final List<String> out = new ArrayList<>();
        array.forEach((n) -> out.add(n.asText()));
        return out;
    }
}
