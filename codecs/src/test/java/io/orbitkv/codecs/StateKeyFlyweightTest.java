package io.orbitkv.codecs;

import java.nio.charset.StandardCharsets;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class StateKeyFlyweightTest
{
    private static final byte[] NAMESPACE = "model=m;dtype=bf16".getBytes(StandardCharsets.US_ASCII);

    @Test
    void shouldShardExactlyAsTheImmutableKey()
    {
        final StateKeyShard shards = new StateKeyShard();
        final UnsafeBuffer frame = new UnsafeBuffer(new byte[128]);
        frame.putBytes(3, NAMESPACE);
        final StateKeyFlyweight key = new StateKeyFlyweight()
            .wrapNamespace(StateKeyFlyweight.NO_NAMESPACE_ID, frame, 3, NAMESPACE.length);
        for (int i = 0; i < 64; i++)
        {
            final byte[] hash = {(byte)i, (byte)(i * 7), 9};
            frame.putBytes(64, hash);
            key.wrapHash(frame, 64, hash.length);
            assertEquals(shards.shard(new StateKey(NAMESPACE, hash)), shards.shard(key));
            assertEquals(new StateKey(NAMESPACE, hash), key.toStateKey());
        }
    }

    @Test
    void shouldCompareEveryByteOfBothPartsButNotTheIds()
    {
        final UnsafeBuffer a = new UnsafeBuffer(new byte[64]);
        final UnsafeBuffer b = new UnsafeBuffer(new byte[64]);
        a.putBytes(0, NAMESPACE);
        b.putBytes(10, NAMESPACE);
        a.putBytes(40, new byte[]{1, 2, 3});
        b.putBytes(50, new byte[]{1, 2, 3, 4});
        final StateKeyFlyweight left = new StateKeyFlyweight().wrap(5, a, 0, NAMESPACE.length, a, 40, 3);
        final StateKeyFlyweight right = new StateKeyFlyweight().wrap(9, b, 10, NAMESPACE.length, b, 50, 3);

        assertTrue(left.sameKey(right));
        assertEquals(left.fingerprint(), right.fingerprint());
        right.wrapHash(b, 50, 4);
        assertFalse(left.sameKey(right));
        assertNotEquals(left.fingerprint(), right.fingerprint());
        right.wrapHash(b, 50, 3).wrapNamespace(9, b, 10, NAMESPACE.length - 1);
        assertFalse(left.sameKey(right));
        assertEquals(5, left.namespaceId());
    }
}
