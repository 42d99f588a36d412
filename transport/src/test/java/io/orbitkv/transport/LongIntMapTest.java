package io.orbitkv.transport;

import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

class LongIntMapTest
{
    @Test
    void shouldAgreeWithHashMapOverRandomPutsAndRemovesAtFullSize()
    {
        final int maxEntries = 64;
        final LongIntMap map = new LongIntMap(maxEntries);
        final Map<Long, Integer> expected = new HashMap<>();
        final SplittableRandom random = new SplittableRandom(7);
        for (int i = 0; i < 200_000; i++)
        {
            // Few distinct keys with clustered hashes, so probes wrap and removals shift entries back.
            final long key = random.nextInt(96) * 1024L;
            if (random.nextBoolean() && (expected.size() < maxEntries || expected.containsKey(key)))
            {
                map.put(key, i);
                expected.put(key, i);
            }
            else
            {
                final Integer removed = expected.remove(key);
                assertEquals(null == removed ? LongIntMap.MISSING : removed, map.remove(key));
            }
            assertEquals(expected.size(), map.size());
            final long probe = random.nextInt(96) * 1024L;
            assertEquals(expected.getOrDefault(probe, LongIntMap.MISSING), map.get(probe));
        }
    }
}
