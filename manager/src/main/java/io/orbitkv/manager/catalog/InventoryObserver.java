package io.orbitkv.manager.catalog;

import io.orbitkv.catalog.ShardInventory;
import io.orbitkv.index.BlockStore;
import io.orbitkv.index.NamespaceTable;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Turns every READY transition of one tier's {@link BlockStore} into an inventory transition (which appends the
 * journal record in the same call): a seal is an addition, an eviction or removal a removal. Hooked into the store
 * itself, so no admission, promotion, eviction or cleanup path can skip it; DRAM entries are sealed only when their
 * copy finished, SSD entries only when their write completed.
 */
final class InventoryObserver implements BlockStore.ResidencyObserver
{
    private final int tier;
    private final ShardInventory inventory;
    private final NamespaceTable namespaces;
    private final CatalogMetrics metrics;
    private final UnsafeBuffer namespace = new UnsafeBuffer(new byte[NamespaceTable.MAX_NAMESPACE_BYTES]);
    private final UnsafeBuffer hash = new UnsafeBuffer(new byte[64]);

    InventoryObserver(
        final int tier, final ShardInventory inventory, final NamespaceTable namespaces, final CatalogMetrics metrics)
    {
        this.tier = tier;
        this.inventory = inventory;
        this.namespaces = namespaces;
        this.metrics = metrics;
    }

    public void onResident(final BlockStore store, final int entryId)
    {
        final int namespaceLength = namespaces.copyNamespace(store.namespaceId(entryId), namespace, 0);
        store.getHash(entryId, hash, 0);
        final long sequence = inventory.add(tier, namespace, 0, namespaceLength, hash, 0, store.hashLength(entryId),
            store.insertionSequence(entryId), store.length(entryId));
        if (sequence > 0)
        {
            metrics.inventoryAdds.incrementRelease();
        }
        else
        {
            metrics.inventoryFull.incrementRelease();
        }
    }

    public void onGone(final BlockStore store, final int entryId)
    {
        final int namespaceLength = namespaces.copyNamespace(store.namespaceId(entryId), namespace, 0);
        store.getHash(entryId, hash, 0);
        if (inventory.remove(tier, namespace, 0, namespaceLength, hash, 0, store.hashLength(entryId)) > 0)
        {
            metrics.inventoryRemoves.incrementRelease();
        }
    }
}
