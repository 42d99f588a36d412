package io.orbitkv.manager.catalog;

import io.orbitkv.catalog.JournalRecord;
import io.orbitkv.catalog.OwnerJournal;
import io.orbitkv.catalog.ShardInventory;
import io.orbitkv.codecs.CatalogLimits;
import io.orbitkv.index.BlockStore;
import io.orbitkv.index.CatalogRecordTable;
import io.orbitkv.index.NamespaceTable;
import io.orbitkv.manager.membership.PlacementState;
import io.orbitkv.manager.status.SystemCounters;

/**
 * What this Manager owns, as the catalog sees it: the {@link ShardInventory} of both tiers, the {@link OwnerJournal}
 * every inventory transition appends to, and the two {@link InventoryObserver}s that feed it. Built before the block
 * stores, which take their observer in their constructors, and handed to the catalog's context, whose owner streams
 * send the journal to the shards' hosts. Single threaded (the agent that owns the stores).
 */
public final class OwnerInventory
{
    /**
     * Residences per shard the inventory is sized for, as a multiple of an even share of both tiers' index
     * capacity: keys do not spread perfectly over 16 shards.
     */
    static final int INVENTORY_SHARD_SLACK = 2;

    /**
     * Least inventory capacity per shard.
     */
    static final int MIN_INVENTORY_RECORDS_PER_SHARD = 1024;

    private final OwnerJournal journal;
    private final ShardInventory inventory;
    private final InventoryObserver dramObserver;
    private final InventoryObserver ssdObserver;

    /**
     * @param namespaces   the Manager's namespace table (the stores' namespace ids are its ids).
     * @param residences   residences both tiers can hold (sizes the inventory).
     * @param bytes        ceiling of the inventory's tables over all shards.
     * @param journalBytes owner journal budget of all shards (design: 16 MiB).
     * @param counters     the system counters the inventory counts in.
     */
    public OwnerInventory(
        final NamespaceTable namespaces,
        final long residences,
        final long bytes,
        final long journalBytes,
        final SystemCounters counters)
    {
        if (residences < 0)
        {
            throw new IllegalArgumentException("inventory residences must not be negative: " + residences);
        }
        if (bytes <= 0)
        {
            throw new IllegalArgumentException("inventory bytes must be positive: " + bytes);
        }
        if (journalBytes <= 0)
        {
            throw new IllegalArgumentException("journal bytes must be positive: " + journalBytes);
        }
        // A receiver per node holding a shard (old and new copies during a placement transition), and one spare.
        this.journal = new OwnerJournal(CatalogLimits.SHARD_COUNT, journalBytes, OwnerJournal.DEFAULT_SEGMENT_BYTES,
            Math.max(OwnerJournal.DEFAULT_MAX_RECEIVERS_PER_SHARD, PlacementState.MAX_HOLDERS + 1));
        final int perShard = (int)Math.min(Integer.MAX_VALUE / 2, Math.max(MIN_INVENTORY_RECORDS_PER_SHARD,
            residences * INVENTORY_SHARD_SLACK / CatalogLimits.SHARD_COUNT));
        this.inventory = new ShardInventory(journal, namespaces,
            Math.min(CatalogRecordTable.budgetFor(perShard), bytes / CatalogLimits.SHARD_COUNT));
        this.dramObserver = new InventoryObserver(JournalRecord.TIER_DRAM, inventory, namespaces, counters);
        this.ssdObserver = new InventoryObserver(JournalRecord.TIER_SSD, inventory, namespaces, counters);
    }

    /**
     * @return what the DRAM store reports its READY transitions to.
     */
    public BlockStore.ResidencyObserver dramObserver()
    {
        return dramObserver;
    }

    /**
     * @return what the SSD tier reports its READY transitions to.
     */
    public BlockStore.ResidencyObserver ssdObserver()
    {
        return ssdObserver;
    }

    OwnerJournal journal()
    {
        return journal;
    }

    ShardInventory inventory()
    {
        return inventory;
    }
}
