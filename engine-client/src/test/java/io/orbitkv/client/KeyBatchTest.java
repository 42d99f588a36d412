package io.orbitkv.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.orbitkv.codecs.EngineRingLimits;
import org.junit.jupiter.api.Test;

class KeyBatchTest
{
    @Test
    void shouldRejectNamespaceOutsideLimits()
    {
        final KeyBatch batch = new KeyBatch(4);
        assertThrows(IllegalArgumentException.class, () -> batch.namespace(new byte[0]));
        assertThrows(IllegalArgumentException.class,
            () -> batch.namespace(new byte[EngineRingLimits.MAX_NAMESPACE_LENGTH + 1]));
        batch.namespace(new byte[EngineRingLimits.MAX_NAMESPACE_LENGTH]);
        assertEquals(EngineRingLimits.MAX_NAMESPACE_LENGTH, batch.namespaceLength());
    }

    @Test
    void shouldRejectHashOutsideLimits()
    {
        final KeyBatch batch = new KeyBatch(4);
        assertThrows(IllegalArgumentException.class, () -> batch.addKey(new byte[0], 0, 0));
        assertThrows(IllegalArgumentException.class,
            () -> batch.addKey(new byte[EngineRingLimits.MAX_HASH_LENGTH + 1], 0, EngineRingLimits.MAX_HASH_LENGTH + 1));
        batch.addKey(new byte[EngineRingLimits.MAX_HASH_LENGTH], 0, EngineRingLimits.MAX_HASH_LENGTH);
        assertEquals(1, batch.keyCount());
    }

    @Test
    void shouldRejectKeysBeyondCapacity()
    {
        final KeyBatch batch = new KeyBatch(2);
        batch.addKey(new byte[]{1}, 0, 1);
        batch.addKey(new byte[]{2}, 0, 1);
        assertThrows(IllegalArgumentException.class, () -> batch.addKey(new byte[]{3}, 0, 1));
        batch.clear();
        assertEquals(0, batch.keyCount());
        batch.addKey(new byte[]{3}, 0, 1);
    }

    @Test
    void shouldRejectRangesOutsideTheDataRegionBeforeSending()
    {
        final KeyBatch batch = new KeyBatch(2).namespace(new byte[]{'n'});
        assertThrows(IllegalArgumentException.class, () -> batch.addKey(new byte[]{1}, 0, 1, -1, 10));
        assertThrows(IllegalArgumentException.class, () -> batch.addKey(new byte[]{1}, 0, 1, 0, 0));
        batch.addKey(new byte[]{1}, 0, 1, 4000, 96);
        batch.checkRangesWithin(4096);
        assertThrows(IllegalArgumentException.class, () -> batch.checkRangesWithin(4095));
    }

    @Test
    void shouldRefuseToSendWithoutNamespaceOrKeys()
    {
        final KeyBatch batch = new KeyBatch(2);
        assertThrows(IllegalArgumentException.class, batch::checkReadyToSend);
        batch.namespace(new byte[]{'n'});
        assertThrows(IllegalArgumentException.class, batch::checkReadyToSend);
        batch.addKey(new byte[]{1}, 0, 1);
        batch.checkReadyToSend();
    }
}
