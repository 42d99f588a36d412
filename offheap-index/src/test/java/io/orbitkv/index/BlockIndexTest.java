package io.orbitkv.index;

import java.util.HashMap;
import java.util.Map;
import java.util.Random;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import static io.orbitkv.index.BlockIndex.FULL;
import static io.orbitkv.index.BlockIndex.NOT_FOUND;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class BlockIndexTest
{
    private final UnsafeBuffer key = new UnsafeBuffer(new byte[128]);

    @Test
    void shouldInsertIfAbsentWithOneProbeAndRefuseAPresentKeyOrAFullIndex()
    {
        final BlockIndex index = new BlockIndex(100_000);
        final int capacity = index.capacity();
        long touched = 0;
        for (int i = 0; i < capacity; i++)
        {
            writeKey(i, 32);
            touched += index.touch(7, key, 0, 32);
            final int id = index.insertIfAbsent(7, key, 0, 32);
            assertTrue(id >= 0 && id < capacity, "key " + i + ": " + id);
            assertEquals(id, index.find(7, key, 0, 32));
            assertEquals(BlockIndex.PRESENT, index.insertIfAbsent(7, key, 0, 32), "key " + i + " again");
            // Same hash bytes in another namespace are another key.
            if (i + 1 < capacity)
            {
                assertNotEquals(NOT_FOUND, index.find(7, key, 0, 32));
                assertEquals(NOT_FOUND, index.find(8, key, 0, 32));
            }
        }
        assertTrue(touched != 0, "touch reads the slots it is asked about");
        assertEquals(capacity, index.size());
        writeKey(0, 32);
        assertEquals(BlockIndex.PRESENT, index.insertIfAbsent(7, key, 0, 32), "present wins over full");
        writeKey(capacity, 32);
        assertEquals(FULL, index.insertIfAbsent(7, key, 0, 32));
        assertEquals(capacity, index.size());
    }

    @Test
    void shouldFitExactlyCapacityEntriesWithinTheBudget()
    {
        final long budget = 100_000;
        final BlockIndex index = new BlockIndex(budget);
        final int capacity = index.capacity();

        assertTrue(index.footprintBytes() <= budget);
        assertTrue(BlockIndex.capacityFor(budget + (long)Math.ceil(index.bytesPerEntry()) * 2) > capacity);
        assertTrue(capacity > budget / (BlockIndex.ENTRY_BYTES + 2 * BlockIndex.SLOT_BYTES));

        for (int i = 0; i < capacity; i++)
        {
            writeKey(i, 32);
            assertEquals(NOT_FOUND, index.find(7, key, 0, 32));
            final int id = index.insert(7, key, 0, 32);
            assertTrue(id >= 0 && id < capacity);
        }
        assertEquals(capacity, index.size());
        assertTrue(index.isFull());

        writeKey(capacity, 32);
        assertEquals(FULL, index.insert(7, key, 0, 32));
        assertEquals(capacity, index.capacity(), "the index never grows");

        for (int i = 0; i < capacity; i++)
        {
            writeKey(i, 32);
            assertNotEquals(NOT_FOUND, index.find(7, key, 0, 32), "key " + i);
        }

        writeKey(3, 32);
        final int removed = index.find(7, key, 0, 32);
        index.remove(removed);
        assertEquals(NOT_FOUND, index.find(7, key, 0, 32));
        writeKey(capacity, 32);
        assertEquals(removed, index.insert(7, key, 0, 32), "the freed id is reused");
    }

    @Test
    void shouldDistinguishHashesDifferingOnlyInTheLastByte()
    {
        final BlockIndex index = new BlockIndex(64 * 1024);
        for (int length = 1; length <= BlockIndex.MAX_HASH_BYTES; length++)
        {
            writeKey(length, length);
            final int first = index.insert(1, key, 0, length);
            key.putByte(length - 1, (byte)(key.getByte(length - 1) ^ 1));
            assertEquals(NOT_FOUND, index.find(1, key, 0, length), "length " + length);
            final int second = index.insert(1, key, 0, length);
            assertNotEquals(first, second);
            assertEquals(second, index.find(1, key, 0, length));
            key.putByte(length - 1, (byte)(key.getByte(length - 1) ^ 1));
            assertEquals(first, index.find(1, key, 0, length));
        }
    }

    @Test
    void shouldDistinguishHashesDifferingOnlyInLength()
    {
        final BlockIndex index = new BlockIndex(64 * 1024);
        writeKey(99, 64);
        final int full = index.insert(1, key, 0, 64);

        for (int length = 1; length < 64; length++)
        {
            assertEquals(NOT_FOUND, index.find(1, key, 0, length), "prefix of length " + length);
        }
        final int prefix = index.insert(1, key, 0, 63);
        assertNotEquals(full, prefix);
        assertEquals(full, index.find(1, key, 0, 64));
        assertEquals(prefix, index.find(1, key, 0, 63));
        assertEquals(63, index.hashLength(prefix));
    }

    @Test
    void shouldDistinguishTheSameHashInDifferentNamespaces()
    {
        final BlockIndex index = new BlockIndex(64 * 1024);
        writeKey(5, 32);
        final int inOne = index.insert(1, key, 0, 32);

        assertEquals(NOT_FOUND, index.find(2, key, 0, 32));
        final int inTwo = index.insert(2, key, 0, 32);
        assertNotEquals(inOne, inTwo);
        assertEquals(1, index.namespaceId(inOne));
        assertEquals(2, index.namespaceId(inTwo));
    }

    @Test
    void shouldCompareNamespaceLengthAndEveryByteInKeyEquality()
    {
        final BlockIndex index = new BlockIndex(64 * 1024);
        for (final int length : new int[]{1, 5, 13, 32, 63, 64})
        {
            writeKey(length, length);
            final int id = index.insert(2, key, 0, length);

            assertTrue(index.keyEquals(id, 2, key, 0, length));
            assertFalse(index.keyEquals(id, 3, key, 0, length), "namespace");
            assertFalse(index.keyEquals(id, 2, key, 0, length - 1 == 0 ? 2 : length - 1), "length");
            for (int i = 0; i < length; i++)
            {
                key.putByte(i, (byte)(key.getByte(i) + 1));
                assertFalse(index.keyEquals(id, 2, key, 0, length), "length " + length + " byte " + i);
                key.putByte(i, (byte)(key.getByte(i) - 1));
            }
        }
    }

    @Test
    void shouldKeepKeysApartWhenTheirHashCodesCollide()
    {
        final Map<Integer, Integer> seedByHashCode = new HashMap<>();
        int first = -1;
        int second = -1;
        for (int seed = 0; seed < 1_000_000 && first < 0; seed++)
        {
            writeKey(seed, 32);
            final Integer previous = seedByHashCode.putIfAbsent(BlockIndex.hashKey(1, key, 0, 32), seed);
            if (null != previous)
            {
                first = previous;
                second = seed;
            }
        }
        assertTrue(first >= 0, "a 32-bit collision is expected well within a million keys");

        final BlockIndex index = new BlockIndex(64 * 1024);
        writeKey(first, 32);
        final int firstId = index.insert(1, key, 0, 32);
        writeKey(second, 32);
        assertEquals(NOT_FOUND, index.find(1, key, 0, 32), "same fragment, different bytes");
        final int secondId = index.insert(1, key, 0, 32);

        assertEquals(secondId, index.find(1, key, 0, 32));
        writeKey(first, 32);
        assertEquals(firstId, index.find(1, key, 0, 32));
        index.remove(firstId);
        writeKey(second, 32);
        assertEquals(secondId, index.find(1, key, 0, 32), "still reachable after its neighbour is removed");
    }

    @Test
    void shouldFindKeysAtAnyBufferOffsetAndCopyThemBack()
    {
        final BlockIndex index = new BlockIndex(64 * 1024);
        final UnsafeBuffer shifted = new UnsafeBuffer(new byte[100]);
        for (int i = 0; i < 20; i++)
        {
            shifted.putByte(3 + i, (byte)(i * 7 + 1));
        }
        final int id = index.insert(4, shifted, 3, 20);

        final UnsafeBuffer aligned = new UnsafeBuffer(new byte[20]);
        aligned.putBytes(0, shifted, 3, 20);
        assertEquals(id, index.find(4, aligned, 0, 20));

        final UnsafeBuffer copy = new UnsafeBuffer(new byte[24]);
        index.getHash(id, copy, 2);
        final byte[] expected = new byte[20];
        final byte[] actual = new byte[20];
        aligned.getBytes(0, expected);
        copy.getBytes(2, actual);
        assertArrayEquals(expected, actual);
    }

    @Test
    void shouldStayConsistentUnderRandomInsertAndRemoveChurn()
    {
        final BlockIndex index = new BlockIndex(20_000);
        final int capacity = index.capacity();
        final Random random = new Random(7);
        final Map<Integer, Integer> idByKey = new HashMap<>();
        final int keySpace = capacity * 2;

        for (int op = 0; op < 200_000; op++)
        {
            final int k = random.nextInt(keySpace);
            final int length = 1 + (k % BlockIndex.MAX_HASH_BYTES);
            writeKey(k, length);
            final int found = index.find(k & 3, key, 0, length);
            final Integer expected = idByKey.get(k);
            assertEquals(null == expected ? NOT_FOUND : expected, found, "op " + op);
            if (null == expected)
            {
                final int id = index.insert(k & 3, key, 0, length);
                if (idByKey.size() == capacity)
                {
                    assertEquals(FULL, id);
                }
                else
                {
                    assertTrue(id >= 0);
                    idByKey.put(k, id);
                }
            }
            else if (random.nextBoolean())
            {
                index.remove(expected);
                idByKey.remove(k);
            }
            assertEquals(idByKey.size(), index.size());
        }

        for (final Map.Entry<Integer, Integer> entry : idByKey.entrySet())
        {
            final int k = entry.getKey();
            final int length = 1 + (k % BlockIndex.MAX_HASH_BYTES);
            writeKey(k, length);
            assertEquals(entry.getValue().intValue(), index.find(k & 3, key, 0, length));
        }
    }

    @Test
    void shouldRejectHashLengthsOutsideOneToSixtyFour()
    {
        final BlockIndex index = new BlockIndex(64 * 1024);

        assertThrows(IllegalArgumentException.class, () -> index.find(1, key, 0, 0));
        assertThrows(IllegalArgumentException.class, () -> index.insert(1, key, 0, 65));
    }

    @Test
    void shouldRejectRemovalOfAFreeEntry()
    {
        final BlockIndex index = new BlockIndex(64 * 1024);
        writeKey(1, 16);
        final int id = index.insert(1, key, 0, 16);
        index.remove(id);

        assertThrows(IllegalStateException.class, () -> index.remove(id));
    }

    @Test
    void shouldRejectBudgetTooSmallForOneEntry()
    {
        assertThrows(IllegalArgumentException.class, () -> new BlockIndex(BlockIndex.ENTRY_BYTES));
    }

    private void writeKey(final int seed, final int length)
    {
        long state = seed * 0x9E3779B97F4A7C15L + 1;
        for (int i = 0; i < length; i++)
        {
            state ^= state << 13;
            state ^= state >>> 7;
            state ^= state << 17;
            key.putByte(i, (byte)state);
        }
    }
}
