package io.orbitkv.catalog;

import io.orbitkv.codecs.CatalogLimits;
import io.orbitkv.codecs.StateKeyFlyweight;
import io.orbitkv.codecs.StateKeyShard;
import io.orbitkv.index.CatalogRecordTable;
import io.orbitkv.index.NamespaceTable;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The owner's enumerable inventory of discoverable residences, one off-heap {@link CatalogRecordTable} per logical
 * shard, bound to the owner's {@link OwnerJournal}. Each mutation and its journal record are one transition in one
 * call (design: inventory mutation and event sequencing describe the same residency transition; no best-effort
 * notification queue): the caller (the tier that admitted, replaced, evicted, restored or cleaned up a block) calls
 * {@link #add} only after a DRAM block is sealed or an SSD write completed, and {@link #remove} when the residence
 * ends.
 * <p>
 * Every record carries its version, the journal sequence of the transition that produced it, so a snapshot page can
 * be ordered against the delta interval. Generations come from one owner-wide counter: each addition (first
 * admission, replacement, recreation) starts a new residency episode with a new generation.
 * <p>
 * {@link #readPage} enumerates one shard in bounded pages with a stable key cursor (the record id); it touches no
 * payload cache lock and allocates nothing. Single threaded (the owner's agent).
 */
public final class ShardInventory
{
    /**
     * Default bytes of one shard's table (about 100k residences).
     */
    public static final long DEFAULT_SHARD_BUDGET_BYTES = 16L * 1024 * 1024;

    /**
     * {@link #add}/{@link #remove} result: the shard's table is full; the residence is not discoverable.
     */
    public static final long INVENTORY_FULL = -1;

    /**
     * {@link #add}/{@link #remove} result: too many namespaces.
     */
    public static final long NAMESPACE_LIMIT = -2;

    /**
     * {@link #remove} result: the residence was not in the inventory; nothing journaled.
     */
    public static final long NOT_PRESENT = -3;

    /**
     * {@link #readPage} result: the shard is exhausted.
     */
    public static final int END = -1;

    private final OwnerJournal journal;
    private final NamespaceTable namespaces;
    private final CatalogRecordTable[] shards;
    private final StateKeyShard shardFunction = new StateKeyShard();
    private final StateKeyFlyweight argumentKey = new StateKeyFlyweight();
    private final JournalRecord record = new JournalRecord();
    private final UnsafeBuffer pageNamespace = new UnsafeBuffer(new byte[NamespaceTable.MAX_NAMESPACE_BYTES]);
    private final UnsafeBuffer pageHash = new UnsafeBuffer(new byte[CatalogRecordTable.TIER_COUNT * 64]);
    private long nextGeneration = 1;
    private long fullRejections;

    public ShardInventory(final OwnerJournal journal)
    {
        this(journal, new NamespaceTable(), DEFAULT_SHARD_BUDGET_BYTES);
    }

    public ShardInventory(final OwnerJournal journal, final NamespaceTable namespaces, final long shardBudgetBytes)
    {
        if (journal.shardCount() != CatalogLimits.SHARD_COUNT)
        {
            throw new IllegalArgumentException("journal must have " + CatalogLimits.SHARD_COUNT + " shards");
        }
        this.journal = journal;
        this.namespaces = namespaces;
        shards = new CatalogRecordTable[CatalogLimits.SHARD_COUNT];
        for (int s = 0; s < shards.length; s++)
        {
            shards[s] = new CatalogRecordTable(shardBudgetBytes);
        }
    }

    public OwnerJournal journal()
    {
        return journal;
    }

    /**
     * A residence became discoverable (or was replaced): record it with a new generation and journal it.
     *
     * @return the journal sequence, or {@link #INVENTORY_FULL} / {@link #NAMESPACE_LIMIT}.
     */
    public long add(
        final int tier,
        final DirectBuffer namespace,
        final int namespaceOffset,
        final int namespaceLength,
        final DirectBuffer hash,
        final int hashOffset,
        final int hashLength,
        final long insertionSequence,
        final int byteSize)
    {
        return add(tier, argumentKey.wrap(StateKeyFlyweight.NO_NAMESPACE_ID, namespace, namespaceOffset,
            namespaceLength, hash, hashOffset, hashLength), insertionSequence, byteSize);
    }

    /**
     * A residence became discoverable (or was replaced): record it with a new generation and journal it.
     *
     * @param tier              the residence's tier.
     * @param key               the key; its namespace id, when set, is an id of this inventory's namespace table
     *                          (the block stores share it), so a seal needs no lookup by name.
     * @param insertionSequence the owner's insertion sequence of the block.
     * @param byteSize          block length in bytes.
     * @return the journal sequence, or {@link #INVENTORY_FULL} / {@link #NAMESPACE_LIMIT}.
     */
    public long add(final int tier, final StateKeyFlyweight key, final long insertionSequence, final int byteSize)
    {
        final int namespaceId = StateKeyFlyweight.NO_NAMESPACE_ID != key.namespaceId() ? key.namespaceId() :
            namespaces.lookupOrRegister(key.namespaceBuffer(), key.namespaceOffset(), key.namespaceLength());
        if (namespaceId < 0)
        {
            fullRejections++;
            return NAMESPACE_LIMIT;
        }
        final int shard = shardFunction.shard(key);
        final CatalogRecordTable table = shards[shard];
        final DirectBuffer hash = key.hashBuffer();
        final int hashOffset = key.hashOffset();
        final int hashLength = key.hashLength();
        int id = table.find(namespaceId, tier, hash, hashOffset, hashLength);
        if (id < 0)
        {
            id = table.insert(namespaceId, tier, hash, hashOffset, hashLength);
            if (id < 0)
            {
                fullRejections++;
                return INVENTORY_FULL;
            }
        }
        final long generation = nextGeneration++;
        record.key(key.namespaceBuffer(), key.namespaceOffset(), key.namespaceLength(), hash, hashOffset, hashLength)
            .set(0, tier, JournalRecord.OP_ADD, generation, insertionSequence, byteSize);
        final long sequence = journal.append(shard, record);
        table.set(id, sequence, generation, insertionSequence, byteSize, false);
        return sequence;
    }

    /**
     * A residence ended (eviction, cleanup, failed restore): forget it and journal the removal with its generation.
     *
     * @return the journal sequence, or {@link #NOT_PRESENT}.
     */
    public long remove(
        final int tier,
        final DirectBuffer namespace,
        final int namespaceOffset,
        final int namespaceLength,
        final DirectBuffer hash,
        final int hashOffset,
        final int hashLength)
    {
        return remove(tier, argumentKey.wrap(StateKeyFlyweight.NO_NAMESPACE_ID, namespace, namespaceOffset,
            namespaceLength, hash, hashOffset, hashLength));
    }

    /**
     * A residence ended (eviction, cleanup, failed restore): forget it and journal the removal with its generation.
     *
     * @param tier the residence's tier.
     * @param key  the key; its namespace id, when set, is an id of this inventory's namespace table.
     * @return the journal sequence, or {@link #NOT_PRESENT}.
     */
    public long remove(final int tier, final StateKeyFlyweight key)
    {
        final int namespaceId = StateKeyFlyweight.NO_NAMESPACE_ID != key.namespaceId() ? key.namespaceId() :
            namespaces.lookup(key.namespaceBuffer(), key.namespaceOffset(), key.namespaceLength());
        if (namespaceId < 0)
        {
            return NOT_PRESENT;
        }
        final int shard = shardFunction.shard(key);
        final CatalogRecordTable table = shards[shard];
        final DirectBuffer hash = key.hashBuffer();
        final int hashOffset = key.hashOffset();
        final int hashLength = key.hashLength();
        final int id = table.find(namespaceId, tier, hash, hashOffset, hashLength);
        if (id < 0)
        {
            return NOT_PRESENT;
        }
        record.key(key.namespaceBuffer(), key.namespaceOffset(), key.namespaceLength(), hash, hashOffset, hashLength)
            .set(0, tier, JournalRecord.OP_REMOVE, table.generation(id), table.insertionSequence(id), table.byteSize(id));
        table.remove(id);
        return journal.append(shard, record);
    }

    /**
     * Enumerate one bounded page of a shard from a stable cursor.
     *
     * @param shard      shard.
     * @param cursor     0 to start, then the value returned by the previous page.
     * @param maxRecords bound on records delivered.
     * @param maxScan    bound on record ids examined.
     * @param reader     receives each record: sequence = version, op = ADD.
     * @return the cursor of the next page, or {@link #END}.
     */
    public int readPage(
        final int shard, final int cursor, final int maxRecords, final int maxScan, final JournalReader reader)
    {
        final CatalogRecordTable table = shards[shard];
        int next = cursor;
        int delivered = 0;
        int scanned = 0;
        while (delivered < maxRecords && scanned < maxScan)
        {
            final int found = table.nextLive(next, maxScan - scanned);
            if (CatalogRecordTable.END == found)
            {
                return END;
            }
            if (found < CatalogRecordTable.END)
            {
                return CatalogRecordTable.resumeCursor(found);
            }
            scanned += found - next + 1;
            final int namespaceLength = namespaces.copyNamespace(table.namespaceId(found), pageNamespace, 0);
            table.getHash(found, pageHash, 0);
            record.key(pageNamespace, 0, namespaceLength, pageHash, 0, table.hashLength(found))
                .set(table.version(found), table.tier(found), JournalRecord.OP_ADD, table.generation(found),
                    table.insertionSequence(found), table.byteSize(found));
            reader.onRecord(record);
            delivered++;
            next = found + 1;
        }
        return next;
    }

    /**
     * @return residences currently recorded in a shard.
     */
    public int size(final int shard)
    {
        return shards[shard].liveSize();
    }

    /**
     * @return additions refused because a shard table or the namespace table was full.
     */
    public long fullRejections()
    {
        return fullRejections;
    }
}
