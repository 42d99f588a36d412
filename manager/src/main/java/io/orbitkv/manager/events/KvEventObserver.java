package io.orbitkv.manager.events;

import io.orbitkv.index.BlockStore;

/**
 * Fans one tier's residency transitions out to the observer it had before (the catalog's inventory, or none) and to
 * the KV-event ring: every seal (publish, a block fetched from a peer, an SSD write completed) becomes a
 * {@code BlockStored}, every eviction or removal a {@code BlockRemoved}, for that tier's medium.
 */
final class KvEventObserver implements BlockStore.ResidencyObserver
{
    private final BlockStore.ResidencyObserver delegate;
    private final KvEventProxy proxy;
    private final int medium;

    KvEventObserver(final BlockStore.ResidencyObserver delegate, final KvEventProxy proxy, final int medium)
    {
        this.delegate = delegate;
        this.proxy = proxy;
        this.medium = medium;
    }

    public void onResident(final BlockStore store, final int entryId)
    {
        delegate.onResident(store, entryId);
        proxy.offer(KvEventRecord.OP_STORED, medium, store, entryId);
    }

    public void onGone(final BlockStore store, final int entryId)
    {
        delegate.onGone(store, entryId);
        proxy.offer(KvEventRecord.OP_REMOVED, medium, store, entryId);
    }
}
