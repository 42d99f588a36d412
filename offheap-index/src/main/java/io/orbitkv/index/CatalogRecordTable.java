package io.orbitkv.index;

import java.util.Arrays;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Off-heap table of catalog residence records keyed by (namespace id, residence tier, block hash): one owner's
 * inventory of one shard, on the owner (snapshot source) or on the catalog host (its view of that owner stream).
 * <p>
 * Storage is a {@link BlockIndex} inside a fixed byte budget. The tier is folded into the key as
 * {@code namespaceId * TIER_COUNT + tier} so that the DRAM and SSD residences of one StateKey are independent records
 * (design: evicting one residence leaves the other). The record fields reuse the index's record slots under names of
 * their own: version (owner sequence of the last transition), generation, insertion sequence, byte size and a
 * tombstone flag. Removal with {@link #remove(int)} frees the record; a tombstone keeps deletion evidence with its
 * version where a view is built out of order (snapshot pages against the interval).
 * <p>
 * Ids are stable while a record lives, so an id is a stable key cursor: a scan in id order visits every record that
 * stays present for the whole scan exactly once. Records added or removed during a scan may or may not be seen, which
 * is why a snapshot carries the delta interval. Single threaded; allocation free after construction.
 */
public final class CatalogRecordTable
{
    /**
     * Returned by {@link #find} when the record is absent.
     */
    public static final int NOT_FOUND = BlockIndex.NOT_FOUND;

    /**
     * Returned by {@link #insert} when the table is full.
     */
    public static final int FULL = BlockIndex.FULL;

    /**
     * Returned by {@link #nextLive} when no record is at or after the cursor.
     */
    public static final int END = -1;

    /**
     * Residence tiers that can hold a key (DRAM, SSD).
     */
    public static final int TIER_COUNT = 2;

    private static final int FLAG_TOMBSTONE = 1;

    private final BlockIndex index;
    // Records (tombstones included) per tier: a tier with none is not probed (a host whose owners announce only DRAM
    // residences answers every key with one probe, not two).
    private final int[] tierRecords = new int[TIER_COUNT];
    private int tombstones;

    /**
     * @param budgetBytes bytes for records and slots together; capacity is derived from it.
     */
    public CatalogRecordTable(final long budgetBytes)
    {
        index = new BlockIndex(budgetBytes);
    }

    /**
     * Bytes this table needs to hold a number of records; used to account a view before it is created.
     *
     * @param records records to hold.
     * @return budget bytes for a table with at least that capacity.
     */
    public static long budgetFor(final int records)
    {
        long budget = (long)Math.max(1, records) * (BlockIndex.ENTRY_BYTES + 2L * BlockIndex.SLOT_BYTES);
        while (BlockIndex.capacityFor(budget) < records)
        {
            budget += BlockIndex.ENTRY_BYTES + 2L * BlockIndex.SLOT_BYTES;
        }
        return budget;
    }

    public int capacity()
    {
        return index.capacity();
    }

    /**
     * @return records in use, tombstones included.
     */
    public int size()
    {
        return index.size();
    }

    /**
     * @return live (non-tombstone) records.
     */
    public int liveSize()
    {
        return index.size() - tombstones;
    }

    public int tombstones()
    {
        return tombstones;
    }

    public long footprintBytes()
    {
        return index.footprintBytes();
    }

    public long budgetBytes()
    {
        return index.budgetBytes();
    }

    public int find(
        final int namespaceId, final int tier, final DirectBuffer hash, final int hashOffset, final int hashLength)
    {
        final int tieredId = tieredId(namespaceId, tier); // validates the tier before it indexes the counts
        return 0 == tierRecords[tier] ? NOT_FOUND : index.find(tieredId, hash, hashOffset, hashLength);
    }

    /**
     * Whether any record (a tombstone included) of a tier is held: when none is, {@link #find} answers without a probe
     * and a touch of that tier's keys would load nothing useful.
     *
     * @param tier residence tier.
     * @return true if the tier holds at least one record.
     */
    public boolean holdsTier(final int tier)
    {
        return tierRecords[tier] > 0;
    }

    /**
     * Insert a new record (the caller checked it is absent) with zeroed fields.
     *
     * @return its id, or {@link #FULL}.
     */
    public int insert(
        final int namespaceId, final int tier, final DirectBuffer hash, final int hashOffset, final int hashLength)
    {
        final int id = index.insert(tieredId(namespaceId, tier), hash, hashOffset, hashLength);
        if (id >= 0)
        {
            tierRecords[tier]++;
            index.state(id, BlockIndex.STATE_READY);
        }
        return id;
    }

    /**
     * Write every field of a record.
     */
    public void set(
        final int id,
        final long version,
        final long generation,
        final long insertionSequence,
        final int byteSize,
        final boolean tombstone)
    {
        final boolean wasTombstone = isTombstone(id);
        index.accessStamp(id, version);
        index.poolOffset(id, generation);
        index.insertionSequence(id, insertionSequence);
        index.length(id, byteSize);
        index.sizeClass(id, tombstone ? FLAG_TOMBSTONE : 0);
        if (wasTombstone != tombstone)
        {
            tombstones += tombstone ? 1 : -1;
        }
    }

    /**
     * Free the table's memory now; see {@link BlockIndex#free()}. The table must not be used afterwards.
     */
    public void free()
    {
        index.free();
    }

    public void remove(final int id)
    {
        if (isTombstone(id))
        {
            tombstones--;
        }
        tierRecords[tier(id)]--;
        index.remove(id);
    }

    /**
     * Remove every record.
     */
    public void clear()
    {
        final int limit = index.idLimit();
        for (int id = 0; id < limit; id++)
        {
            if (index.isLive(id))
            {
                index.remove(id);
            }
        }
        tombstones = 0;
        Arrays.fill(tierRecords, 0);
    }

    /**
     * Remove tombstones whose version is at or below a watermark: older events are rejectable by sequence.
     *
     * @param watermark contiguous sequence of a complete baseline.
     * @return tombstones removed.
     */
    public int purgeTombstonesUpTo(final long watermark)
    {
        int purged = 0;
        final int limit = index.idLimit();
        for (int id = 0; id < limit && tombstones > 0; id++)
        {
            if (index.isLive(id) && isTombstone(id) && version(id) <= watermark)
            {
                remove(id);
                purged++;
            }
        }
        return purged;
    }

    /**
     * The first record id at or after a cursor, scanning at most {@code maxScan} ids.
     *
     * @param cursor  first id to look at.
     * @param maxScan bound on ids examined (keeps a page's cost bounded on a sparse table).
     * @return a live id, {@link #END} when the table is exhausted, or {@code -(next cursor) - 2} when the scan bound
     * was hit first (decode with {@link #resumeCursor}).
     */
    public int nextLive(final int cursor, final int maxScan)
    {
        final int limit = index.idLimit();
        final int stop = (int)Math.min(limit, (long)cursor + maxScan);
        for (int id = Math.max(0, cursor); id < stop; id++)
        {
            if (index.isLive(id))
            {
                return id;
            }
        }
        return stop >= limit ? END : -stop - 2;
    }

    /**
     * @param encoded a value below {@link #END} returned by {@link #nextLive}.
     * @return the cursor to resume from.
     */
    public static int resumeCursor(final int encoded)
    {
        return -encoded - 2;
    }

    public boolean isLive(final int id)
    {
        return index.isLive(id);
    }

    public boolean isTombstone(final int id)
    {
        return (index.sizeClass(id) & FLAG_TOMBSTONE) != 0;
    }

    public long version(final int id)
    {
        return index.accessStamp(id);
    }

    public long generation(final int id)
    {
        return index.poolOffset(id);
    }

    public long insertionSequence(final int id)
    {
        return index.insertionSequence(id);
    }

    public int byteSize(final int id)
    {
        return index.length(id);
    }

    public int namespaceId(final int id)
    {
        return index.namespaceId(id) / TIER_COUNT;
    }

    public int tier(final int id)
    {
        return index.namespaceId(id) % TIER_COUNT;
    }

    public int hashLength(final int id)
    {
        return index.hashLength(id);
    }

    public void getHash(final int id, final MutableDirectBuffer dst, final int dstOffset)
    {
        index.getHash(id, dst, dstOffset);
    }

    /**
     * The hash code {@link #touch} takes for a key and tier.
     *
     * @param tier residence tier, 0..{@link #TIER_COUNT} - 1.
     */
    public static int hashCodeOf(
        final int namespaceId, final int tier, final DirectBuffer hash, final int hashOffset, final int hashLength)
    {
        return BlockIndex.hashKey(tieredId(namespaceId, tier), hash, hashOffset, hashLength);
    }

    /**
     * Bring the records of a batch of keys into cache together; see {@link BlockIndex#touch}.
     *
     * @param hashCodes {@link #hashCodeOf} of each key.
     * @param count     hash codes to use.
     * @return a value to keep so the loads are not optimised away.
     */
    public long touch(final int[] hashCodes, final int count)
    {
        return index.touch(hashCodes, count);
    }

    private static int tieredId(final int namespaceId, final int tier)
    {
        if (tier < 0 || tier >= TIER_COUNT)
        {
            throw new IllegalArgumentException("tier must be 0.." + (TIER_COUNT - 1) + ": " + tier);
        }
        return namespaceId * TIER_COUNT + tier;
    }
}
