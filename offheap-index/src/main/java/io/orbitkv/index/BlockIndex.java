package io.orbitkv.index;

import java.nio.ByteBuffer;

import org.agrona.BufferUtil;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Off-heap open-addressing hash table of block entries inside a fixed byte budget.
 * <p>
 * Two regions are allocated once at construction: an entry region of fixed-size records addressed by a stable int id
 * (records never move, so an id stays valid until the entry is removed), and a slot table of 8-byte slots that hold a
 * 32-bit hash fragment and the id + 1 (0 is empty). Collisions use linear probing and removal uses backward-shift
 * deletion, so there are no tombstones: probe lengths never degrade under churn and nothing needs rehashing. The slot
 * table keeps a load factor of at most 3/4 of the entry capacity. The home slot is picked by multiply-shift range
 * reduction of the fragment, which lets the slot count be any size and the budget be used without power-of-two waste.
 * <p>
 * The key is the namespace id plus 1..{@link #MAX_HASH_BYTES} hash bytes compared on every byte and on the length:
 * design: a block is never identified by a truncated hash. The fragment only filters candidates.
 * <p>
 * The table never grows: {@link #insert} answers {@link #FULL} when {@link #capacity()} entries are live and the
 * caller decides what to evict. Single threaded and allocation free after construction.
 */
public final class BlockIndex
{
    /**
     * Returned by {@link #find} when the key is absent.
     */
    public static final int NOT_FOUND = -1;

    /**
     * Returned by {@link #insert} when every entry is in use.
     */
    public static final int FULL = -2;

    /** {@link #insertIfAbsent} found the key present. */
    public static final int PRESENT = -3;

    /**
     * Longest hash accepted in a key.
     */
    public static final int MAX_HASH_BYTES = 64;

    /**
     * Entry state: not in use.
     */
    public static final byte STATE_FREE = 0;

    /**
     * Entry state: space reserved, data being written; not yet visible to readers.
     */
    public static final byte STATE_PREPARING = 1;

    /**
     * Entry state: sealed, readable.
     */
    public static final byte STATE_READY = 2;

    /**
     * Id used for "no entry" in links.
     */
    public static final int NULL_ID = -1;

    /**
     * Bytes of one entry record.
     */
    public static final int ENTRY_BYTES = 128;

    /**
     * Bytes of one slot in the probing table.
     */
    public static final int SLOT_BYTES = ProbeSlots.SLOT_BYTES;

    /**
     * Largest capacity: the entry region must fit one buffer.
     */
    public static final int MAX_CAPACITY = Integer.MAX_VALUE / ENTRY_BYTES;

    private static final int POOL_OFFSET_OFFSET = 0;
    private static final int INSERTION_SEQUENCE_OFFSET = 8;
    private static final int ACCESS_STAMP_OFFSET = 16;
    private static final int NAMESPACE_ID_OFFSET = 24;
    private static final int LENGTH_OFFSET = 28;
    private static final int PIN_COUNT_OFFSET = 32;
    private static final int LRU_PREV_OFFSET = 36;
    private static final int LRU_NEXT_OFFSET = 40;
    private static final int HASH_CODE_OFFSET = 44;
    private static final int SIZE_CLASS_OFFSET = 48;
    private static final int HASH_LENGTH_OFFSET = 52;
    private static final int STATE_OFFSET = 53;
    private static final int CRC32C_OFFSET = 56;
    private static final int HASH_OFFSET = 64;

    private static final int SLOT_LOAD_NUMERATOR = 4;
    private static final int SLOT_LOAD_DENOMINATOR = 3;
    private static final int ALIGNMENT = ProbeSlots.ALIGNMENT;
    private static final byte[] NO_BYTES = new byte[0];
    private static final long MIX_1 = 0x9E3779B97F4A7C15L;
    private static final long MIX_2 = 0xC2B2AE3D27D4EB4FL;
    private static final long MIX_3 = 0x165667B19E3779F9L;

    private final long budgetBytes;
    private final int capacity;
    private final UnsafeBuffer entries;
    private final ProbeSlots slots;
    private ByteBuffer entriesMemory;

    private int size;
    private int freeListHead = NULL_ID;
    private int neverUsedId;

    /**
     * @param indexBudgetBytes bytes for the entry records and slot table together; capacity is derived from it.
     */
    public BlockIndex(final long indexBudgetBytes)
    {
        final int capacity = capacityFor(indexBudgetBytes);
        if (capacity < 1)
        {
            throw new IllegalArgumentException("index budget too small for one entry: " + indexBudgetBytes);
        }
        this.budgetBytes = indexBudgetBytes;
        this.capacity = capacity;
        entriesMemory = ByteBuffer.allocateDirect(capacity * ENTRY_BYTES + ALIGNMENT);
        entries = new UnsafeBuffer(entriesMemory, ProbeSlots.alignedOffset(entriesMemory), capacity * ENTRY_BYTES);
        slots = new ProbeSlots(slotCountFor(capacity));
    }

    /**
     * Give the table's memory back now instead of when the collector finds it (a replaced catalog view, whose
     * budget is released at the same moment). The table must not be used afterwards: its buffers are emptied, so a
     * stray access fails a bounds check rather than touching freed memory. Idempotent.
     */
    public void free()
    {
        if (null != entriesMemory)
        {
            entries.wrap(NO_BYTES);
            BufferUtil.free(entriesMemory);
            entriesMemory = null;
            slots.free();
        }
    }

    /**
     * Entries that fit a budget: the largest count whose records plus slot table stay within it.
     *
     * @param indexBudgetBytes budget in bytes.
     * @return the capacity, 0 if not even one entry fits.
     */
    public static int capacityFor(final long indexBudgetBytes)
    {
        if (indexBudgetBytes <= 0)
        {
            return 0;
        }
        final long estimate = indexBudgetBytes * SLOT_LOAD_DENOMINATOR /
            ((long)ENTRY_BYTES * SLOT_LOAD_DENOMINATOR + (long)SLOT_BYTES * SLOT_LOAD_NUMERATOR);
        long capacity = Math.min(estimate + 1, MAX_CAPACITY);
        while (capacity > 0 && footprintBytes((int)capacity) > indexBudgetBytes)
        {
            capacity--;
        }
        return (int)capacity;
    }

    private static long footprintBytes(final int capacity)
    {
        return (long)capacity * ENTRY_BYTES + (long)slotCountFor(capacity) * SLOT_BYTES;
    }

    private static int slotCountFor(final int capacity)
    {
        return (int)(((long)capacity * SLOT_LOAD_NUMERATOR + SLOT_LOAD_DENOMINATOR - 1) / SLOT_LOAD_DENOMINATOR) + 1;
    }

    /**
     * @return maximum number of live entries.
     */
    public int capacity()
    {
        return capacity;
    }

    /**
     * @return number of live entries.
     */
    public int size()
    {
        return size;
    }

    /**
     * @return true when {@link #insert} would answer {@link #FULL}.
     */
    public boolean isFull()
    {
        return size == capacity;
    }

    /**
     * @return the budget given at construction.
     */
    public long budgetBytes()
    {
        return budgetBytes;
    }

    /**
     * @return bytes actually used by records and slots, never above {@link #budgetBytes()}.
     */
    public long footprintBytes()
    {
        return footprintBytes(capacity);
    }

    /**
     * @return footprint per entry of capacity: one record plus its share of the slot table.
     */
    public double bytesPerEntry()
    {
        return (double)footprintBytes() / capacity;
    }

    /**
     * @return number of slots in the probing table.
     */
    public int slotCount()
    {
        return slots.slotCount();
    }

    /**
     * @param namespaceId namespace of the key.
     * @param hash        buffer holding the hash bytes.
     * @param hashOffset  offset of the hash in {@code hash}.
     * @param hashLength  1..{@link #MAX_HASH_BYTES}.
     * @return the entry id, or {@link #NOT_FOUND}.
     */
    public int find(final int namespaceId, final DirectBuffer hash, final int hashOffset, final int hashLength)
    {
        checkHashLength(hashLength);
        final int hashCode = hashKey(namespaceId, hash, hashOffset, hashLength);
        final ProbeSlots slots = this.slots;
        int slot = slots.home(hashCode);
        while (true)
        {
            final long value = slots.get(slot);
            if (0 == value)
            {
                return NOT_FOUND;
            }
            if ((int)(value >>> 32) == hashCode)
            {
                final int id = (int)value - 1;
                if (keyEquals(id, namespaceId, hash, hashOffset, hashLength))
                {
                    return id;
                }
            }
            slot = slots.next(slot);
        }
    }

    /**
     * Insert a key known to be absent (callers {@link #find} first). The new entry is {@link #STATE_PREPARING} with
     * every other field zero and its links {@link #NULL_ID}.
     *
     * @param namespaceId namespace of the key.
     * @param hash        buffer holding the hash bytes.
     * @param hashOffset  offset of the hash in {@code hash}.
     * @param hashLength  1..{@link #MAX_HASH_BYTES}.
     * @return the new entry id, or {@link #FULL}.
     */
    public int insert(final int namespaceId, final DirectBuffer hash, final int hashOffset, final int hashLength)
    {
        checkHashLength(hashLength);
        if (size == capacity)
        {
            return FULL;
        }
        return insertHashed(hashKey(namespaceId, hash, hashOffset, hashLength), namespaceId, hash, hashOffset, hashLength);
    }

    /**
     * Insert a key unless it is present, with one walk of its probe sequence (where {@link #find} then
     * {@link #insert} walk it twice).
     *
     * @param namespaceId namespace of the key.
     * @param hash        buffer holding the hash bytes.
     * @param hashOffset  offset of the hash in {@code hash}.
     * @param hashLength  1..{@link #MAX_HASH_BYTES}.
     * @return the new entry id (as {@link #insert} leaves it), {@link #PRESENT} or {@link #FULL}.
     */
    public int insertIfAbsent(final int namespaceId, final DirectBuffer hash, final int hashOffset, final int hashLength)
    {
        checkHashLength(hashLength);
        final int hashCode = hashKey(namespaceId, hash, hashOffset, hashLength);
        final ProbeSlots slots = this.slots;
        int slot = slots.home(hashCode);
        while (true)
        {
            final long value = slots.get(slot);
            if (0 == value)
            {
                break;
            }
            if ((int)(value >>> 32) == hashCode && keyEquals((int)value - 1, namespaceId, hash, hashOffset, hashLength))
            {
                return PRESENT;
            }
            slot = slots.next(slot);
        }
        if (size == capacity)
        {
            return FULL;
        }
        return insertHashed(hashCode, namespaceId, hash, hashOffset, hashLength);
    }

    /**
     * Load the home slot of a key, so that an {@link #insertIfAbsent} or {@link #find} of it soon after finds the
     * slot in the cache: loading the slots of several keys before inserting them lets their cache misses overlap.
     *
     * @param namespaceId namespace of the key.
     * @param hash        buffer holding the hash bytes.
     * @param hashOffset  offset of the hash in {@code hash}.
     * @param hashLength  1..{@link #MAX_HASH_BYTES}.
     * @return the slot's content, for the caller to fold into a value it keeps (so the load is not dropped).
     */
    public long touch(final int namespaceId, final DirectBuffer hash, final int hashOffset, final int hashLength)
    {
        return slots.get(slots.home(hashKey(namespaceId, hash, hashOffset, hashLength)));
    }

    private int insertHashed(
        final int hashCode, final int namespaceId, final DirectBuffer hash, final int hashOffset, final int hashLength)
    {
        final int id;
        if (NULL_ID != freeListHead)
        {
            id = freeListHead;
            freeListHead = entries.getInt(entryBase(id) + LRU_NEXT_OFFSET);
        }
        else
        {
            id = neverUsedId++;
        }

        final int base = entryBase(id);
        final UnsafeBuffer entries = this.entries;
        entries.putLong(base + POOL_OFFSET_OFFSET, 0);
        entries.putLong(base + INSERTION_SEQUENCE_OFFSET, 0);
        entries.putLong(base + ACCESS_STAMP_OFFSET, 0);
        entries.putInt(base + NAMESPACE_ID_OFFSET, namespaceId);
        entries.putInt(base + LENGTH_OFFSET, 0);
        entries.putInt(base + PIN_COUNT_OFFSET, 0);
        entries.putInt(base + LRU_PREV_OFFSET, NULL_ID);
        entries.putInt(base + LRU_NEXT_OFFSET, NULL_ID);
        entries.putInt(base + HASH_CODE_OFFSET, hashCode);
        entries.putInt(base + SIZE_CLASS_OFFSET, 0);
        entries.putByte(base + HASH_LENGTH_OFFSET, (byte)hashLength);
        entries.putByte(base + STATE_OFFSET, STATE_PREPARING);
        entries.putInt(base + CRC32C_OFFSET, 0);
        entries.putBytes(base + HASH_OFFSET, hash, hashOffset, hashLength);

        slots.put(hashCode, id);
        size++;

        return id;
    }

    /**
     * Remove a live entry, closing the probe gap by shifting later entries of the cluster back.
     *
     * @param id a live entry id.
     */
    public void remove(final int id)
    {
        final int base = entryBase(id);
        if (STATE_FREE == entries.getByte(base + STATE_OFFSET))
        {
            throw new IllegalStateException("entry not in use: " + id);
        }
        slots.remove(entries.getInt(base + HASH_CODE_OFFSET), id);

        entries.putByte(base + STATE_OFFSET, STATE_FREE);
        entries.putInt(base + LRU_NEXT_OFFSET, freeListHead);
        freeListHead = id;
        size--;
    }

    /**
     * One past the highest id ever handed out: ids at or above it have never been live. Scans stop here.
     *
     * @return exclusive upper bound of ids in use.
     */
    public int idLimit()
    {
        return neverUsedId;
    }

    /**
     * @param id entry id.
     * @return true if the id names a live entry (PREPARING or READY).
     */
    public boolean isLive(final int id)
    {
        return id >= 0 && id < neverUsedId && STATE_FREE != entries.getByte(entryBase(id) + STATE_OFFSET);
    }

    /**
     * @param id entry id.
     * @return entry state, one of the {@code STATE_} constants.
     */
    public byte state(final int id)
    {
        return entries.getByte(entryBase(id) + STATE_OFFSET);
    }

    /**
     * @param id    entry id.
     * @param state one of the {@code STATE_} constants other than free (use {@link #remove}).
     */
    public void state(final int id, final byte state)
    {
        entries.putByte(entryBase(id) + STATE_OFFSET, state);
    }

    /**
     * @param id entry id.
     * @return namespace id of the key.
     */
    public int namespaceId(final int id)
    {
        return entries.getInt(entryBase(id) + NAMESPACE_ID_OFFSET);
    }

    /**
     * @param id entry id.
     * @return number of hash bytes in the key.
     */
    public int hashLength(final int id)
    {
        return entries.getByte(entryBase(id) + HASH_LENGTH_OFFSET) & 0xFF;
    }

    /**
     * Copy the hash bytes of the key.
     *
     * @param id        entry id.
     * @param dst       destination buffer.
     * @param dstOffset offset in {@code dst}; {@link #hashLength(int)} bytes are written.
     */
    public void getHash(final int id, final MutableDirectBuffer dst, final int dstOffset)
    {
        final int base = entryBase(id);
        dst.putBytes(dstOffset, entries, base + HASH_OFFSET, entries.getByte(base + HASH_LENGTH_OFFSET) & 0xFF);
    }

    /**
     * @param id entry id.
     * @return offset of the block in the pool.
     */
    public long poolOffset(final int id)
    {
        return entries.getLong(entryBase(id) + POOL_OFFSET_OFFSET);
    }

    /**
     * @param id         entry id.
     * @param poolOffset offset of the block in the pool.
     */
    public void poolOffset(final int id, final long poolOffset)
    {
        entries.putLong(entryBase(id) + POOL_OFFSET_OFFSET, poolOffset);
    }

    /**
     * @param id entry id.
     * @return block length in bytes.
     */
    public int length(final int id)
    {
        return entries.getInt(entryBase(id) + LENGTH_OFFSET);
    }

    /**
     * @param id     entry id.
     * @param length block length in bytes.
     */
    public void length(final int id, final int length)
    {
        entries.putInt(entryBase(id) + LENGTH_OFFSET, length);
    }

    /**
     * @param id entry id.
     * @return size class of the block's space.
     */
    public int sizeClass(final int id)
    {
        return entries.getInt(entryBase(id) + SIZE_CLASS_OFFSET);
    }

    /**
     * @param id        entry id.
     * @param sizeClass size class of the block's space.
     */
    public void sizeClass(final int id, final int sizeClass)
    {
        entries.putInt(entryBase(id) + SIZE_CLASS_OFFSET, sizeClass);
    }

    /**
     * @param id entry id.
     * @return number of outstanding pins.
     */
    public int pinCount(final int id)
    {
        return entries.getInt(entryBase(id) + PIN_COUNT_OFFSET);
    }

    /**
     * @param id       entry id.
     * @param pinCount number of outstanding pins.
     */
    public void pinCount(final int id, final int pinCount)
    {
        entries.putInt(entryBase(id) + PIN_COUNT_OFFSET, pinCount);
    }

    /**
     * @param id entry id.
     * @return sequence assigned when the entry was sealed, 0 before.
     */
    public long insertionSequence(final int id)
    {
        return entries.getLong(entryBase(id) + INSERTION_SEQUENCE_OFFSET);
    }

    /**
     * @param id                entry id.
     * @param insertionSequence sequence assigned when the entry was sealed.
     */
    public void insertionSequence(final int id, final long insertionSequence)
    {
        entries.putLong(entryBase(id) + INSERTION_SEQUENCE_OFFSET, insertionSequence);
    }

    /**
     * @param id entry id.
     * @return CRC32C of the block's bytes as recorded for the entry, 0 until one is set.
     */
    public int crc32c(final int id)
    {
        return entries.getInt(entryBase(id) + CRC32C_OFFSET);
    }

    /**
     * @param id     entry id.
     * @param crc32c CRC32C of the block's bytes ({@link java.util.zip.CRC32C} value, low 32 bits).
     */
    public void crc32c(final int id, final int crc32c)
    {
        entries.putInt(entryBase(id) + CRC32C_OFFSET, crc32c);
    }

    /**
     * @param id entry id.
     * @return logical time of the last use, orders entries across LRU lists.
     */
    public long accessStamp(final int id)
    {
        return entries.getLong(entryBase(id) + ACCESS_STAMP_OFFSET);
    }

    /**
     * @param id          entry id.
     * @param accessStamp logical time of the last use.
     */
    public void accessStamp(final int id, final long accessStamp)
    {
        entries.putLong(entryBase(id) + ACCESS_STAMP_OFFSET, accessStamp);
    }

    /**
     * @param id entry id.
     * @return previous (less recently used) entry in the owner's list, or {@link #NULL_ID}.
     */
    public int lruPrev(final int id)
    {
        return entries.getInt(entryBase(id) + LRU_PREV_OFFSET);
    }

    /**
     * @param id   entry id.
     * @param prev previous entry in the owner's list, or {@link #NULL_ID}.
     */
    public void lruPrev(final int id, final int prev)
    {
        entries.putInt(entryBase(id) + LRU_PREV_OFFSET, prev);
    }

    /**
     * @param id entry id.
     * @return next (more recently used) entry in the owner's list, or {@link #NULL_ID}.
     */
    public int lruNext(final int id)
    {
        return entries.getInt(entryBase(id) + LRU_NEXT_OFFSET);
    }

    /**
     * @param id   entry id.
     * @param next next entry in the owner's list, or {@link #NULL_ID}.
     */
    public void lruNext(final int id, final int next)
    {
        entries.putInt(entryBase(id) + LRU_NEXT_OFFSET, next);
    }

    /**
     * @param id          entry id.
     * @param namespaceId namespace of the key.
     * @param hash        buffer holding the hash bytes.
     * @param hashOffset  offset of the hash in {@code hash}.
     * @param hashLength  number of hash bytes.
     * @return true if the entry's key is exactly this key.
     */
    public boolean keyEquals(
        final int id, final int namespaceId, final DirectBuffer hash, final int hashOffset, final int hashLength)
    {
        final int base = entryBase(id);
        final UnsafeBuffer entries = this.entries;
        if (entries.getInt(base + NAMESPACE_ID_OFFSET) != namespaceId ||
            (entries.getByte(base + HASH_LENGTH_OFFSET) & 0xFF) != hashLength)
        {
            return false;
        }
        final int hashBase = base + HASH_OFFSET;
        int i = 0;
        for (; i + Long.BYTES <= hashLength; i += Long.BYTES)
        {
            if (entries.getLong(hashBase + i) != hash.getLong(hashOffset + i))
            {
                return false;
            }
        }
        for (; i < hashLength; i++)
        {
            if (entries.getByte(hashBase + i) != hash.getByte(hashOffset + i))
            {
                return false;
            }
        }
        return true;
    }

    /**
     * Hash of a key, mixing namespace, length and every hash byte.
     *
     * @param namespaceId namespace of the key.
     * @param hash        buffer holding the hash bytes.
     * @param hashOffset  offset of the hash in {@code hash}.
     * @param hashLength  number of hash bytes.
     * @return 32-bit hash code.
     */
    public static int hashKey(final int namespaceId, final DirectBuffer hash, final int hashOffset, final int hashLength)
    {
        long h = (namespaceId * MIX_1) ^ ((long)hashLength << 56);
        int i = 0;
        for (; i + Long.BYTES <= hashLength; i += Long.BYTES)
        {
            h = (h ^ hash.getLong(hashOffset + i)) * MIX_2;
            h ^= h >>> 31;
        }
        for (; i < hashLength; i++)
        {
            h = (h ^ (hash.getByte(hashOffset + i) & 0xFF)) * MIX_3;
        }
        h ^= h >>> 33;
        h *= MIX_2;
        h ^= h >>> 29;
        return (int)(h ^ (h >>> 32));
    }

    /**
     * Load the home slot of each hash code and, where that slot holds the same hash code, both cache lines of its
     * entry: the memory a {@link #find} of each key would read first. The loads of different keys do not depend on
     * each other, so the processor overlaps their cache misses, and a batch of finds that follows runs from cache.
     * Hints only: a key found beyond its home slot or absent costs its find the usual misses.
     *
     * @param hashCodes {@link #hashKey} of each key.
     * @param count     hash codes to use.
     * @return a value derived from the loads, for the caller to keep so the loads are not optimised away.
     */
    public long touch(final int[] hashCodes, final int count)
    {
        final ProbeSlots slots = this.slots;
        final UnsafeBuffer entries = this.entries;
        long sink = 0;
        for (int i = 0; i < count; i++)
        {
            sink += slots.get(slots.home(hashCodes[i]));
        }
        for (int i = 0; i < count; i++)
        {
            final int hashCode = hashCodes[i];
            final long value = slots.get(slots.home(hashCode));
            if (0 != value && (int)(value >>> 32) == hashCode)
            {
                final int base = entryBase((int)value - 1);
                sink += entries.getLong(base) + entries.getLong(base + HASH_OFFSET);
            }
        }
        return sink;
    }

    private static int entryBase(final int id)
    {
        return id * ENTRY_BYTES;
    }

    private static void checkHashLength(final int hashLength)
    {
        if (hashLength < 1 || hashLength > MAX_HASH_BYTES)
        {
            throw new IllegalArgumentException("hash length must be in [1, " + MAX_HASH_BYTES + "]: " + hashLength);
        }
    }
}
