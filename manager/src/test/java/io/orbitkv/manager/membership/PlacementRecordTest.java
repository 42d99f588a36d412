package io.orbitkv.manager.membership;

import io.orbitkv.codecs.ShardPlacement;
import io.orbitkv.codecs.StateKeyShard;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The records of the placement keys: installed and desired placements with their generation, the transition, the
 * coverage reports and the reconciler key.
 */
class PlacementRecordTest
{
    private static byte[] bytes(final String text)
    {
        return text.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }

    private static String text(final byte[] bytes)
    {
        return new String(bytes, StandardCharsets.UTF_8);
    }

    @Test
    void shouldKeepTheVersionOneBytesForGenerationOneAndNameLaterGenerations()
    {
        final String v1 =
            "{\"version\":1,\"shardCount\":16,\"nodes\":[\"a\",\"b\",\"c\"],\"fingerprint\":\"021eb0c6a38944ead408005050cc9f45\"}";
        final ShardPlacement one = ShardPlacement.parse("a,b,c", 1);
        assertEquals(v1, text(PlacementRecord.encode(one, 1)));
        assertEquals(new PlacementRecord.Generational(1, one), PlacementRecord.decodeGenerational(v1.getBytes()));

        // one copy at a later generation is a version 2 record that names it
        final String later = text(PlacementRecord.encode(one, 7));
        assertTrue(later.contains("\"version\":2") && later.contains("\"generation\":7") &&
            later.contains("\"replicas\":1"), later);
        assertEquals(new PlacementRecord.Generational(7, one), PlacementRecord.decodeGenerational(later.getBytes()));

        // a version 2 record without a generation (written before generations existed) is generation 1, same bytes
        final ShardPlacement three = ShardPlacement.parse("a,b,c,d", 3);
        final String v2 = text(PlacementRecord.encode(three, 1));
        assertFalse(v2.contains("generation"), v2);
        assertEquals(new PlacementRecord.Generational(1, three), PlacementRecord.decodeGenerational(v2.getBytes()));
        assertEquals(three, PlacementRecord.decodeGenerational(PlacementRecord.encode(three, 12)).placement());
        assertEquals(12, PlacementRecord.decodeGenerational(PlacementRecord.encode(three, 12)).generation());
    }

    @Test
    void shouldRoundTripCapacityWeightsAndTheSeedAndRefuseATamperedWeight()
    {
        final ShardPlacement weighted = ShardPlacement.parse("a=3,b@rack2,c", 3).withSeed("blue");
        final String text = text(PlacementRecord.encode(weighted, 4));
        assertTrue(text.contains("\"weights\":{\"a\":3}") && text.contains("\"seed\":\"blue\""), text);
        final PlacementRecord.Generational decoded = PlacementRecord.decodeGenerational(bytes(text));
        assertEquals(weighted, decoded.placement());
        assertEquals(4, decoded.generation());
        assertThrows(IllegalStateException.class,
            () -> PlacementRecord.decode(bytes(text.replace("\"a\":3", "\"a\":2"))), "the fingerprint names the weight");
        assertThrows(IllegalStateException.class,
            () -> PlacementRecord.decode(bytes(text.replace("\"a\":3", "\"a\":\"x\""))));
        assertTrue(text(PlacementRecord.encode(ShardPlacement.parse("a,b", 1).withSeed("s"), 1))
            .startsWith("{\"version\":2,"), "a seeded one-copy record is version 2: a reader without seeds refuses it");
    }

    @Test
    void shouldRefuseMalformedGenerations()
    {
        final String v2 = text(PlacementRecord.encode(ShardPlacement.parse("a,b", 2), 3));
        for (final String bad : new String[]{
            v2.replace("\"generation\":3", "\"generation\":0"),
            v2.replace("\"generation\":3", "\"generation\":-2"),
            v2.replace("\"generation\":3", "\"generation\":\"3\""),
            v2.replace("\"generation\":3", "\"generation\":3.5"),
            text(PlacementRecord.encode(ShardPlacement.parse("a,b", 1), 1)).replace("\"shardCount\"",
                "\"generation\":2,\"shardCount\"")})
        {
            final IllegalStateException ex = assertThrows(IllegalStateException.class,
                () -> PlacementRecord.decodeGenerational(bad.getBytes()), bad);
            assertTrue(ex.getMessage().contains("generation must be a whole number of 1 or more"), ex.getMessage());
        }
        assertThrows(IllegalStateException.class, () -> PlacementRecord.decodeGenerational("{".getBytes()));
        assertThrows(IllegalStateException.class, () -> PlacementRecord.decodeGenerational(new byte[0]));
        assertThrows(IllegalArgumentException.class, () -> PlacementRecord.encode(ShardPlacement.parse("a"), 0));
    }

    @Test
    void shouldRoundTripATransitionWithItsPhasesAndHandoffs()
    {
        final ShardPlacement from = ShardPlacement.parse("a,b", 1);
        final ShardPlacement to = ShardPlacement.parse("a,b,c", 2);
        PlacementTransition transition = PlacementTransition.plan(4, from, 5, to);
        final int first = transition.moveList().get(0).shard();
        transition = transition.with(transition.move(first).advance(MovePhase.CAUGHT_UP, Map.of("a", 12L, "b", 0L)));
        final byte[] bytes = TransitionRecord.encode(transition);
        final String json = text(bytes);
        assertTrue(json.startsWith("{\"version\":1,\"fromGeneration\":4,\"toGeneration\":5,\"target\":{\"version\":2,"),
            json);
        assertTrue(json.contains("{\"shard\":" + first + ",\"phase\":\"CAUGHT_UP\",\"handoff\":{\"a\":12,\"b\":0}}"),
            json);
        final PlacementTransition decoded = TransitionRecord.decode(bytes);
        assertEquals(transition, decoded);
        assertEquals(transition.moveList().size(), decoded.moveList().size());
        assertEquals(Map.of("a", 12L, "b", 0L), decoded.move(first).handoff());
        assertEquals(to, decoded.target());
    }

    @Test
    void shouldRefuseMalformedTransitionsNamingWhatIsWrong()
    {
        final PlacementTransition transition =
            PlacementTransition.plan(1, ShardPlacement.parse("a,b", 1), 2, ShardPlacement.parse("a,b,c", 1));
        final String good = text(TransitionRecord.encode(transition));
        final int shard = transition.moveList().get(0).shard();
        final String phase = "{\"shard\":" + shard + ",\"phase\":\"PENDING\"";
        assertRefused("unsupported version", good.replace("\"version\":1,\"from", "\"version\":9,\"from"));
        assertRefused("'toGeneration' is not a whole number", good.replace("\"toGeneration\":2", "\"toGeneration\":\"2\""));
        assertRefused("a transition goes to a later generation", good.replace("\"fromGeneration\":1", "\"fromGeneration\":2")
            .replace("\"toGeneration\":2", "\"toGeneration\":2"));
        assertRefused("target placement is generation 2, the transition's toGeneration is 3",
            good.replace("\"toGeneration\":2", "\"toGeneration\":3"));
        assertRefused("unknown phase 'MOVING'", good.replace(phase, "{\"shard\":" + shard + ",\"phase\":\"MOVING\""));
        assertRefused("shard 16 out of range", good.replace(phase, "{\"shard\":16,\"phase\":\"PENDING\""));
        assertRefused("no moves array", good.replaceAll("\"moves\":\\[.*]", "\"moves\":7"));
        assertRefused("fingerprint does not match", good.replace("\"nodes\":[\"a\",\"b\",\"c\"]", "\"nodes\":[\"a\",\"b\"]"));
        assertRefused("is not a sequence", good.replace(phase + ",\"handoff\":{}",
            phase + ",\"handoff\":{\"a\":-1}"));
        assertRefused("malformed placement transition record", "not json");
    }

    @Test
    void shouldRoundTripCoverageAndReconcilerRecords()
    {
        final UUID uuid = UUID.randomUUID();
        final CoverageReport report = new CoverageReport(3, Map.of(2, Map.of("a", 5L), 11, Map.of()));
        final CoverageRecord record = new CoverageRecord(report, uuid);
        final String json = text(record.encode());
        assertEquals("{\"generation\":3,\"runtimeUuid\":\"" + uuid + "\",\"shards\":{\"2\":{\"a\":5},\"11\":{}}}", json);
        assertEquals(record, CoverageRecord.decode(record.encode()));
        assertThrows(IllegalStateException.class,
            () -> CoverageRecord.decode(json.replace("\"2\":", "\"" + StateKeyShard.SHARD_COUNT + "\":").getBytes()));
        assertThrows(IllegalStateException.class, () -> CoverageRecord.decode("[]".getBytes()));

        final ReconcilerRecord reconciler = new ReconcilerRecord("a", uuid);
        assertEquals("{\"nodeId\":\"a\",\"runtimeUuid\":\"" + uuid + "\"}", text(reconciler.encode()));
        assertEquals(reconciler, ReconcilerRecord.decode(reconciler.encode()));
        assertThrows(IllegalStateException.class, () -> ReconcilerRecord.decode("{\"nodeId\":1}".getBytes()));
    }

    @Test
    void shouldKeepThePlacementKeysApartFromTheMemberRecords()
    {
        final String members = MembershipConfiguration.membersPrefix("c");
        for (final String key : new String[]{
            MembershipConfiguration.placementKey("c"),
            MembershipConfiguration.placementDesiredKey("c"),
            MembershipConfiguration.placementTransitionKey("c"),
            MembershipConfiguration.reconcilerKey("c"),
            MembershipConfiguration.coverageKey("c", "members")})
        {
            assertTrue(key.startsWith(MembershipConfiguration.clusterPrefix("c")), key);
            assertFalse(key.startsWith(members), key);
        }
        assertEquals("/orbitkv/v1/c/coverage/a", MembershipConfiguration.coverageKey("c", "a"));
    }

    @Test
    void shouldBoundTheShardMovesInFlight()
    {
        final MembershipSettings base = MembershipTestSupport.settings("http://127.0.0.1:1", "c", "a", "a");
        assertEquals(MembershipConfiguration.MAX_SHARD_MOVES_DEFAULT, base.maxShardMoves());
        for (final int moves : new int[]{MembershipConfiguration.MIN_SHARD_MOVES, MembershipConfiguration.MAX_SHARD_MOVES})
        {
            MembershipSettings.checkMaxShardMoves(moves);
        }
        for (final int moves : new int[]{0, MembershipConfiguration.MAX_SHARD_MOVES + 1})
        {
            final IllegalArgumentException ex =
                assertThrows(IllegalArgumentException.class, () -> MembershipSettings.checkMaxShardMoves(moves));
            assertTrue(ex.getMessage().contains("--max-shard-moves must be in [1, 16]"), ex.getMessage());
        }
    }

    private static void assertRefused(final String expected, final String record)
    {
        final IllegalStateException ex =
            assertThrows(IllegalStateException.class, () -> TransitionRecord.decode(record.getBytes()), record);
        assertTrue(ex.getMessage().contains(expected), ex.getMessage());
    }
}
