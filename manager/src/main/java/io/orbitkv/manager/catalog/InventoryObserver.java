package io.orbitkv.manager.catalog;

import io.orbitkv.catalog.ShardInventory;
import io.orbitkv.codecs.StateKeyFlyweight;
import io.orbitkv.index.BlockStore;
import io.orbitkv.index.NamespaceTable;
import io.orbitkv.manager.status.SystemCounters;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * Turns every READY transition of one tier's {@link BlockStore} into an inventory transition (which appends the
 * journal record in the same call): a seal is an addition, an eviction or removal a removal. Hooked into the store
 * itself, so no admission, promotion, eviction or cleanup path can skip it; DRAM entries are sealed only when their
 * copy finished, SSD entries only when their write completed.
 * <p>
 * The store's namespace id is an id of the Manager's namespace table, which the inventory shares: the key goes to the
 * inventory with that id and a view of the table's name bytes, so a seal resolves no name back to an id.
 */
final class InventoryObserver implements BlockStore.ResidencyObserver
{
    private final int tier;
    private final ShardInventory inventory;
    private final NamespaceTable namespaces;
    private final AtomicCounter adds;
    private final AtomicCounter removes;
    private final AtomicCounter full;
    private final UnsafeBuffer namespace = new UnsafeBuffer(0, 0);
    private final UnsafeBuffer hash = new UnsafeBuffer(new byte[64]);
    private final StateKeyFlyweight key = new StateKeyFlyweight();

    InventoryObserver(
        final int tier, final ShardInventory inventory, final NamespaceTable namespaces, final SystemCounters counters)
    {
        this.tier = tier;
        this.inventory = inventory;
        this.namespaces = namespaces;
        this.adds = counters.get(CatalogCounter.INVENTORY_ADDS);
        this.removes = counters.get(CatalogCounter.INVENTORY_REMOVES);
        this.full = counters.get(CatalogCounter.INVENTORY_FULL);
    }

    public void onResident(final BlockStore store, final int entryId)
    {
        if (inventory.add(tier, wrap(store, entryId), store.insertionSequence(entryId), store.length(entryId)) > 0)
        {
            adds.incrementRelease();
        }
        else
        {
            full.incrementRelease();
        }
    }

    public void onGone(final BlockStore store, final int entryId)
    {
        if (inventory.remove(tier, wrap(store, entryId)) > 0)
        {
            removes.incrementRelease();
        }
    }

    private StateKeyFlyweight wrap(final BlockStore store, final int entryId)
    {
        final int namespaceId = store.namespaceId(entryId);
        final int namespaceLength = namespaces.wrapNamespace(namespaceId, namespace);
        store.getHash(entryId, hash, 0);
        return key.wrap(namespaceId, namespace, 0, namespaceLength, hash, 0, store.hashLength(entryId));
    }
}
