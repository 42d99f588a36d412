package io.orbitkv.manager.membership;

import io.orbitkv.codecs.ShardPlacement;
import io.orbitkv.codecs.StateKeyShard;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Registration validity, member and placement record rules and the member view's shard counts, without etcd.
 */
class MembershipUnitTest
{
    private static final long SEC = TimeUnit.SECONDS.toNanos(1);

    @Test
    void shouldBeValidUntilHalfTheAcknowledgedTtlMeasuredFromTheSend()
    {
        final long t0 = 1_000 * SEC;
        final RegistrationValidity validity = new RegistrationValidity(t0, 10);
        assertTrue(validity.isValid(t0 + 5 * SEC - 1));
        assertFalse(validity.isValid(t0 + 5 * SEC), "half of a 10 s TTL from the grant's send time");

        // a keepalive sent at t0+3 s and acknowledged 1.9 s later extends from the send, not from the reply
        assertTrue(validity.onAcknowledged(t0 + 3 * SEC, 10, t0 + 4_900_000_000L));
        assertEquals(t0 + 8 * SEC, validity.validUntilNs());
        assertTrue(validity.isValid(t0 + 8 * SEC - 1));
        assertFalse(validity.isExpired(t0 + 8 * SEC - 1));
    }

    @Test
    void shouldNotBeRevivedByALateAcknowledgement()
    {
        final long t0 = 0;
        final RegistrationValidity validity = new RegistrationValidity(t0, 10);
        // the keepalive was sent in time but its reply arrives after validity ran out
        assertFalse(validity.onAcknowledged(t0 + 4 * SEC, 10, t0 + 5 * SEC));
        assertTrue(validity.isExpired(t0 + 5 * SEC));
        assertFalse(validity.isValid(t0 + 5 * SEC));
        assertFalse(validity.onAcknowledged(t0 + 6 * SEC, 10, t0 + 6 * SEC + 1), "expired stays expired");
        assertFalse(validity.isValid(t0 + 6 * SEC + 2));
    }

    @Test
    void shouldRoundTripAMemberRecordAndRejectBadOnes()
    {
        final MemberRecord record = new MemberRecord("node-1", 7, UUID.randomUUID(), 0x1234L, "h:1", "h:2",
            MembershipConfiguration.PROTOCOL_VERSION, 1_700_000_000_000L);
        final String key = MembershipConfiguration.memberKey("c1", "node-1");
        assertEquals(record, MemberRecord.decode(key, record.encode()));

        assertThrows(MemberRecord.MalformedRecordException.class,
            () -> MemberRecord.decode(MembershipConfiguration.memberKey("c1", "other"), record.encode()),
            "the key names another node");
        assertThrows(MemberRecord.MalformedRecordException.class,
            () -> MemberRecord.decode(key, "{}".getBytes(StandardCharsets.UTF_8)));
        assertThrows(MemberRecord.MalformedRecordException.class,
            () -> MemberRecord.decode(key, "[1,2]".getBytes(StandardCharsets.UTF_8)));
        assertThrows(MemberRecord.MalformedRecordException.class,
            () -> MemberRecord.decode(key, new String(record.encode(), StandardCharsets.UTF_8)
                .replace("\"epoch\":7", "\"epoch\":0").getBytes(StandardCharsets.UTF_8)));
        assertThrows(MemberRecord.RecordTooLargeException.class,
            () -> MemberRecord.decode(key, new byte[MembershipConfiguration.MAX_RECORD_BYTES + 1]));
        assertEquals(1024, MembershipTestSupport.fakeRecord("x", 1024).length);
        MemberRecord.decode(MembershipConfiguration.memberKey("c1", "x"), MembershipTestSupport.fakeRecord("x", 1024));
    }

    @Test
    void shouldWriteOneCopyAsTheVersionOneRecordAndReadItBackAsOneCopy()
    {
        // the record a Manager wrote before copies existed, byte for byte
        final String v1 =
            "{\"version\":1,\"shardCount\":16,\"nodes\":[\"a\",\"b\",\"c\"],\"fingerprint\":\"021eb0c6a38944ead408005050cc9f45\"}";
        final ShardPlacement one = ShardPlacement.parse("a,b,c", 1);
        assertEquals(v1, new String(PlacementRecord.encode(one), StandardCharsets.UTF_8));
        final ShardPlacement decoded = PlacementRecord.decode(v1.getBytes(StandardCharsets.UTF_8));
        assertEquals(one, decoded);
        assertEquals(1, decoded.replicas());
        assertNotEquals(ShardPlacement.parse("a,b,c", 3), decoded);
    }

    @Test
    void shouldRoundTripAVersionTwoRecordWithItsCopies()
    {
        final ShardPlacement three = ShardPlacement.parse("a,b,c,d", 3);
        final String text = new String(PlacementRecord.encode(three), StandardCharsets.UTF_8);
        assertTrue(text.contains("\"version\":2") && text.contains("\"replicas\":3") &&
            text.contains(three.fingerprint()), text);
        final ShardPlacement decoded = PlacementRecord.decode(text.getBytes(StandardCharsets.UTF_8));
        assertEquals(three, decoded);
        assertEquals(3, decoded.replicas());
        assertEquals(three.fingerprint(), decoded.fingerprint());

        // fewer nodes than copies: the count asked is what the record keeps
        final ShardPlacement small = ShardPlacement.parse("a,b", 3);
        assertEquals(small, PlacementRecord.decode(PlacementRecord.encode(small)));
        assertEquals(2, PlacementRecord.decode(PlacementRecord.encode(small)).replicaCount());

        // failure domains travel in version 2, one copy included, and a record stripped of them does not match
        final ShardPlacement racks = ShardPlacement.parse("a@r1,b@r1,c@r2", 1);
        final String withDomains = new String(PlacementRecord.encode(racks), StandardCharsets.UTF_8);
        assertTrue(withDomains.contains("\"version\":2") && withDomains.contains("\"domains\":{\"a\":\"r1\""),
            withDomains);
        assertEquals(racks, PlacementRecord.decode(withDomains.getBytes(StandardCharsets.UTF_8)));
        assertRefused("fingerprint does not match", withDomains.replaceAll(",\"domains\":\\{[^}]*}", ""));
    }

    @Test
    void shouldRefuseUnknownVersionsAndFingerprintsThatDoNotMatchTheCopies()
    {
        final String fp1 = ShardPlacement.parse("a,b,c", 1).fingerprint();
        final String fp3 = ShardPlacement.parse("a,b,c", 3).fingerprint();
        assertRefused("unsupported placement record",
            "{\"version\":3,\"shardCount\":16,\"replicas\":3,\"nodes\":[\"a\",\"b\",\"c\"],\"fingerprint\":\"" + fp3 + "\"}");
        assertRefused("unsupported placement record",
            "{\"version\":2,\"shardCount\":16,\"nodes\":[\"a\",\"b\",\"c\"],\"fingerprint\":\"" + fp1 + "\"}");
        assertRefused("unsupported placement record",
            "{\"version\":2,\"shardCount\":16,\"replicas\":\"3\",\"nodes\":[\"a\",\"b\",\"c\"],\"fingerprint\":\"" + fp3 + "\"}");
        // another R than the fingerprint was made for, either way round
        assertRefused("fingerprint does not match",
            "{\"version\":2,\"shardCount\":16,\"replicas\":3,\"nodes\":[\"a\",\"b\",\"c\"],\"fingerprint\":\"" + fp1 + "\"}");
        assertRefused("fingerprint does not match",
            "{\"version\":1,\"shardCount\":16,\"nodes\":[\"a\",\"b\",\"c\"],\"fingerprint\":\"" + fp3 + "\"}");
        assertRefused("--catalog-replicas must be 1-5",
            "{\"version\":2,\"shardCount\":16,\"replicas\":9,\"nodes\":[\"a\",\"b\",\"c\"],\"fingerprint\":\"" + fp3 + "\"}");
    }

    @Test
    void shouldNameNodesCopiesAndFingerprintWhenDescribingAPlacement()
    {
        final ShardPlacement three = ShardPlacement.parse("a,b,c", 3);
        assertEquals("catalog nodes [a, b, c] with 3 copies per shard (fingerprint " + three.fingerprint() + ")",
            PlacementRecord.describe(three));
        final ShardPlacement one = ShardPlacement.parse("a,b,c", 1);
        assertEquals("catalog nodes [a, b, c] with 1 copy per shard (fingerprint " + one.fingerprint() + ")",
            PlacementRecord.describe(one));
        assertTrue(PlacementRecord.describe(ShardPlacement.parse("a", 3)).contains("with 3 copies per shard (1 held)"));
    }

    @Test
    void shouldCountShardsWithoutALiveCopyAsUnavailableAndWithFewerThanAskedAsDegraded()
    {
        final ShardPlacement placement = ShardPlacement.parse("a,b,c,d", 3);
        // only a: shards with a copy on a have one of three, the rest none
        int holdsA = 0;
        int holdsD = 0;
        for (int shard = 0; shard < StateKeyShard.SHARD_COUNT; shard++)
        {
            holdsA += placement.replicaIndex(shard, "a") >= 0 ? 1 : 0;
            holdsD += placement.replicaIndex(shard, "d") >= 0 ? 1 : 0;
        }
        final MemberView onlyA = view(placement, "a");
        assertEquals(StateKeyShard.SHARD_COUNT - holdsA, onlyA.unavailableShards());
        assertEquals(holdsA, onlyA.degradedShards());
        for (int shard = 0; shard < StateKeyShard.SHARD_COUNT; shard++)
        {
            final int rankOfA = placement.replicaIndex(shard, "a");
            assertEquals(rankOfA >= 0 ? 1 : 0, onlyA.liveReplicas(shard), "shard " + shard);
            assertEquals(0 == rankOfA, null != onlyA.hostRecord(shard), "shard " + shard);
            for (int replica = 0; replica < placement.replicaCount(); replica++)
            {
                assertEquals(replica == rankOfA, null != onlyA.replicaRecord(shard, replica), "shard " + shard);
            }
        }

        // d missing: the shards with a copy on d have two of three
        final MemberView withoutD = view(placement, "a", "b", "c");
        assertEquals(0, withoutD.unavailableShards());
        assertEquals(holdsD, withoutD.degradedShards());

        final MemberView all = view(placement, "a", "b", "c", "d");
        assertEquals(0, all.unavailableShards());
        assertEquals(0, all.degradedShards());
        for (int shard = 0; shard < StateKeyShard.SHARD_COUNT; shard++)
        {
            assertEquals(3, all.liveReplicas(shard));
        }

        // an incomplete view has no live copy anywhere
        final MemberView incomplete = all.invalidated("test");
        assertEquals(StateKeyShard.SHARD_COUNT, incomplete.unavailableShards());
        assertEquals(0, incomplete.degradedShards());
        assertEquals(0, incomplete.liveReplicas(0));
        assertNull(incomplete.replicaRecord(0, 0));
        assertEquals(StateKeyShard.SHARD_COUNT, MemberView.NONE.unavailableShards());
        assertEquals(0, MemberView.NONE.degradedShards());
    }

    @Test
    void shouldCountEveryShardAsDegradedWhenThereAreFewerNodesThanCopies()
    {
        final ShardPlacement small = ShardPlacement.parse("a,b", 3);
        final MemberView both = view(small, "a", "b");
        assertEquals(0, both.unavailableShards());
        assertEquals(StateKeyShard.SHARD_COUNT, both.degradedShards(), "2 of 3 copies everywhere");
        for (int shard = 0; shard < StateKeyShard.SHARD_COUNT; shard++)
        {
            assertEquals(2, both.liveReplicas(shard));
        }

        // one copy asked and held: never degraded, unavailable where the host is missing
        final ShardPlacement one = ShardPlacement.parse("a,b", 1);
        final MemberView onlyA = view(one, "a");
        int hostedByB = 0;
        for (int shard = 0; shard < StateKeyShard.SHARD_COUNT; shard++)
        {
            hostedByB += "b".equals(one.hostOf(shard)) ? 1 : 0;
        }
        assertEquals(hostedByB, onlyA.unavailableShards());
        assertEquals(0, onlyA.degradedShards());
        assertEquals(0, view(one, "a", "b").unavailableShards());
    }

    private static MemberView view(final ShardPlacement placement, final String... nodeIds)
    {
        final Map<String, MemberRecord> members = new HashMap<>();
        for (final String id : nodeIds)
        {
            members.put(id, new MemberRecord(id, 1, UUID.randomUUID(), 0, "peer-" + id, "transfer-" + id,
                MembershipConfiguration.PROTOCOL_VERSION, 0));
        }
        return new MemberView(7, true, members, PlacementState.stable(1, placement), null);
    }

    private static void assertRefused(final String expected, final String record)
    {
        final IllegalStateException ex = assertThrows(IllegalStateException.class,
            () -> PlacementRecord.decode(record.getBytes(StandardCharsets.UTF_8)));
        assertTrue(ex.getMessage().contains(expected), ex.getMessage());
    }
}
