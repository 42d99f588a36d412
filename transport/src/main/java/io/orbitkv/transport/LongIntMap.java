package io.orbitkv.transport;

import java.util.Arrays;

/**
 * An open-addressing map from long keys to non-negative int values, sized once for a known number of entries and
 * allocation-free afterwards; removal shifts the following entries back so that no tombstones build up.
 */
final class LongIntMap
{
    static final int MISSING = -1;

    private final long[] keys;
    private final int[] values;
    private final int mask;
    private int size;

    LongIntMap(final int maxEntries)
    {
        final int capacity = Integer.highestOneBit(Math.max(4, maxEntries * 2 - 1)) << 1;
        keys = new long[capacity];
        values = new int[capacity];
        Arrays.fill(values, MISSING);
        mask = capacity - 1;
    }

    int size()
    {
        return size;
    }

    int get(final long key)
    {
        int index = hash(key);
        while (MISSING != values[index])
        {
            if (keys[index] == key)
            {
                return values[index];
            }
            index = (index + 1) & mask;
        }
        return MISSING;
    }

    /**
     * Add or replace; the caller keeps the number of entries within the size the map was built for.
     */
    void put(final long key, final int value)
    {
        int index = hash(key);
        while (MISSING != values[index])
        {
            if (keys[index] == key)
            {
                values[index] = value;
                return;
            }
            index = (index + 1) & mask;
        }
        keys[index] = key;
        values[index] = value;
        size++;
    }

    int remove(final long key)
    {
        int index = hash(key);
        while (MISSING != values[index])
        {
            if (keys[index] == key)
            {
                final int value = values[index];
                values[index] = MISSING;
                size--;
                shiftBack(index);
                return value;
            }
            index = (index + 1) & mask;
        }
        return MISSING;
    }

    private void shiftBack(final int removed)
    {
        int hole = removed;
        int index = (removed + 1) & mask;
        while (MISSING != values[index])
        {
            final int home = hash(keys[index]);
            // The entry may fill the hole when its home does not lie cyclically in (hole, index].
            final boolean homeBetween = hole <= index ? hole < home && home <= index : hole < home || home <= index;
            if (!homeBetween)
            {
                keys[hole] = keys[index];
                values[hole] = values[index];
                values[index] = MISSING;
                hole = index;
            }
            index = (index + 1) & mask;
        }
    }

    private int hash(final long key)
    {
        final long mixed = key * 0x9E3779B97F4A7C15L;
        return (int)(mixed ^ (mixed >>> 32)) & mask;
    }
}
