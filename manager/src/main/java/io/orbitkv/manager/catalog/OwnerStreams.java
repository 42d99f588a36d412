package io.orbitkv.manager.catalog;

import io.orbitkv.catalog.JournalRecord;
import io.orbitkv.catalog.OwnerJournal;
import io.orbitkv.catalog.ShardInventory;
import io.orbitkv.codecs.CatalogLimits;
import io.orbitkv.index.BlockStore;
import io.orbitkv.index.CatalogRecordTable;
import io.orbitkv.index.NamespaceTable;
import io.orbitkv.manager.peer.PeerPublisher;
import io.orbitkv.manager.peer.PeerClient;
import io.orbitkv.manager.status.SystemCounters;

/**
 * The owner role of this Manager: the {@link ShardInventory} both tiers' stores feed through their
 * {@link InventoryObserver}s, the {@link OwnerJournal} it appends to, and one {@link OwnerStream} per shard to the
 * shard's catalog host. Single threaded (the catalog agent, which shares its thread with the stores).
 */
final class OwnerStreams
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
    private final OwnerStream[] streams = new OwnerStream[CatalogLimits.SHARD_COUNT];

    /**
     * @param namespaces          the Manager's namespace table (the stores' namespace ids are its ids).
     * @param inventoryResidences residences both tiers can hold (sizes the inventory).
     * @param inventoryBytes      ceiling of the inventory's tables over all shards.
     * @param journalBytes        owner journal budget of all shards (design: 16 MiB).
     * @param counters            the system counters the inventory and streams count in.
     * @param publisher           the transport the streams pace their snapshots on.
     * @param proxy               encodes the streams' delta batches and snapshots.
     */
    OwnerStreams(
        final NamespaceTable namespaces,
        final long inventoryResidences,
        final long inventoryBytes,
        final long journalBytes,
        final SystemCounters counters,
        final PeerPublisher publisher,
        final CatalogProxy proxy)
    {
        this.journal = new OwnerJournal(CatalogLimits.SHARD_COUNT, journalBytes, OwnerJournal.DEFAULT_SEGMENT_BYTES,
            OwnerJournal.DEFAULT_MAX_RECEIVERS_PER_SHARD);
        final int perShard = (int)Math.min(Integer.MAX_VALUE / 2, Math.max(MIN_INVENTORY_RECORDS_PER_SHARD,
            inventoryResidences * INVENTORY_SHARD_SLACK / CatalogLimits.SHARD_COUNT));
        this.inventory = new ShardInventory(journal, namespaces,
            Math.min(CatalogRecordTable.budgetFor(perShard), inventoryBytes / CatalogLimits.SHARD_COUNT));
        this.dramObserver = new InventoryObserver(JournalRecord.TIER_DRAM, inventory, namespaces, counters);
        this.ssdObserver = new InventoryObserver(JournalRecord.TIER_SSD, inventory, namespaces, counters);
        for (int s = 0; s < streams.length; s++)
        {
            streams[s] = new OwnerStream(s, inventory, counters, publisher, proxy);
        }
    }

    BlockStore.ResidencyObserver dramObserver()
    {
        return dramObserver;
    }

    BlockStore.ResidencyObserver ssdObserver()
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

    int doWork(final long nowNs, final long nowMs)
    {
        int work = 0;
        for (final OwnerStream stream : streams)
        {
            work += stream.doWork(nowNs, nowMs);
        }
        return work;
    }

    /**
     * Stream shard {@code shard} to another host link (or to none).
     */
    void retarget(final int shard, final HostLink link)
    {
        streams[shard].retarget(link);
    }

    void onAck(final PeerClient client, final int shard, final long contiguousSequence, final long nowNs)
    {
        streams[shard].onAck(client, contiguousSequence, nowNs);
    }

    void onGapRepair(final PeerClient client, final int shard, final long fromSequence, final long nowNs)
    {
        streams[shard].onGapRepair(client, fromSequence, nowNs);
    }

    void onResyncRequired(final PeerClient client, final int shard, final long nowNs)
    {
        streams[shard].onResyncRequired(client, nowNs);
    }

    void close()
    {
        for (final OwnerStream stream : streams)
        {
            stream.close();
        }
    }
}
