package io.orbitkv.codecs;

import java.io.InputStream;
import java.util.HexFormat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class StateKeyShardTest
{
    private static final HexFormat HEX = HexFormat.of();

    @Test
    void shouldMatchEveryCommittedVector() throws Exception
    {
        final JsonNode root;
        try (InputStream in = getClass().getResourceAsStream("/state-key-shard-vectors.json"))
        {
            root = new ObjectMapper().readTree(in);
        }
        assertEquals(StateKeyShard.DOMAIN_TAG, root.get("domainTag").asText());
        assertEquals(StateKeyShard.SHARD_COUNT, root.get("shardCount").asInt());

        final StateKeyShard shard = new StateKeyShard();
        int checked = 0;
        for (final JsonNode v : root.get("vectors"))
        {
            final StateKey key = new StateKey(HEX.parseHex(v.get("namespaceHex").asText()), HEX.parseHex(v.get("hashHex").asText()));
            assertArrayEquals(HEX.parseHex(v.get("canonicalHex").asText()), key.canonicalBytes(), key.toString());

            final byte[] ns = key.namespace();
            final byte[] h = key.hash();
            final byte[] digest = shard.digest(new UnsafeBuffer(ns), 0, ns.length, new UnsafeBuffer(h), 0, h.length);
            assertEquals(v.get("digestHex").asText(), HEX.formatHex(digest), key.toString());
            assertEquals(v.get("shard").asInt(), shard.shard(key), key.toString());
            checked++;
        }
        assertTrue(checked >= 30, "vectors file must hold the full set, found " + checked);
    }

    @Test
    void shouldEncodeIntoBufferExactlyAsCanonicalBytes()
    {
        final byte[] ns = "model=m;dtype=bf16".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        final byte[] h = {1, 2, 3};
        final UnsafeBuffer dst = new UnsafeBuffer(new byte[StateKey.MAX_ENCODED_LENGTH]);
        final int length = StateKey.encode(new UnsafeBuffer(ns), 0, ns.length, new UnsafeBuffer(h), 0, h.length, dst, 0);
        final byte[] written = new byte[length];
        dst.getBytes(0, written);
        assertArrayEquals(new StateKey(ns, h).canonicalBytes(), written);
    }

    @Test
    void shouldTreatKeysAsEqualOnlyWhenEveryByteMatches()
    {
        final byte[] ns = {7};
        assertEquals(new StateKey(ns, new byte[]{1, 2}), new StateKey(ns, new byte[]{1, 2}));
        assertNotEquals(new StateKey(ns, new byte[]{1, 2}), new StateKey(ns, new byte[]{1, 3}));
        assertNotEquals(new StateKey(ns, new byte[]{1, 2}), new StateKey(ns, new byte[]{1, 2, 0}));
        assertNotEquals(new StateKey(ns, new byte[]{1, 2}), new StateKey(new byte[]{8}, new byte[]{1, 2}));
    }

    @Test
    void shouldRejectEmptyAndOversizedParts()
    {
        assertThrows(IllegalArgumentException.class, () -> new StateKey(new byte[0], new byte[]{1}));
        assertThrows(IllegalArgumentException.class, () -> new StateKey(new byte[257], new byte[]{1}));
        assertThrows(IllegalArgumentException.class, () -> new StateKey(new byte[]{1}, new byte[0]));
        assertThrows(IllegalArgumentException.class, () -> new StateKey(new byte[]{1}, new byte[65]));
        new StateKey(new byte[256], new byte[64]);
    }
}
