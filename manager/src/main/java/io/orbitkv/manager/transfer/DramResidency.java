package io.orbitkv.manager.transfer;

import io.orbitkv.manager.catalog.LocalResidency;
import io.orbitkv.manager.store.Residence;
import io.orbitkv.manager.store.TieredStore;
import org.agrona.DirectBuffer;

/**
 * This Manager's DRAM as discovery asks it for the keys after a Lookup's local prefix: the keys it holds are served
 * by the requester's local spans ({@link PeerFetcher}), so they are neither asked of a catalog host nor a miss. Runs
 * on the agent thread that owns the store.
 */
public final class DramResidency implements LocalResidency
{
    private final TieredStore store;

    public DramResidency(final TieredStore store)
    {
        this.store = store;
    }

    public int dramLength(final int namespaceId, final DirectBuffer hash, final int hashOffset, final int hashLength)
    {
        if (namespaceId < 0)
        {
            return -1;
        }
        final long residence = store.findReady(namespaceId, hash, hashOffset, hashLength);
        return Residence.isDram(residence) ? store.length(residence) : -1;
    }
}
