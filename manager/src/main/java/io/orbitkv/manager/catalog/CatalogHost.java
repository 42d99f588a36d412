package io.orbitkv.manager.catalog;

import io.orbitkv.catalog.CatalogDirectory;
import io.orbitkv.catalog.CatalogRequestValidator;
import io.orbitkv.catalog.ColdQueryHandler;
import io.orbitkv.catalog.HostBudget;
import io.orbitkv.codecs.CatalogLimits;
import io.orbitkv.codecs.ShardPlacement;
import io.orbitkv.codecs.StateKeyFlyweight;
import io.orbitkv.index.CandidateSet;

/**
 * The catalog host role of this Manager: the shards placement gives this node, a {@link CatalogDirectory} over them
 * (one receiving state per (owner slot, shard)), and the route validator and cold query handler the transport judges
 * and answers requests with. Which owner slot a publisher is, is the {@link MemberViewSync}'s; applying frames is the
 * {@link CatalogPeerHandler}'s. Single threaded (the catalog agent).
 */
final class CatalogHost implements HostedCatalog
{
    private final boolean[] hosted = new boolean[CatalogLimits.SHARD_COUNT];
    private final int hostedCount;
    private final long placementFingerprint;
    private final CatalogDirectory directory;
    private final CatalogRequestValidator validator;
    private final ColdQueryHandler coldQueryHandler;

    CatalogHost(final String nodeId, final ShardPlacement placement, final long selfMsb, final long selfLsb)
    {
        int count = 0;
        for (int s = 0; s < hosted.length; s++)
        {
            hosted[s] = placement.replicaIndex(s, nodeId) >= 0;
            count += hosted[s] ? 1 : 0;
        }
        this.hostedCount = count;
        this.placementFingerprint = CatalogService.fingerprintOf(placement);
        this.directory = new CatalogDirectory(hosted, new HostBudget());
        this.validator = new CatalogRequestValidator(selfMsb, selfLsb, placementFingerprint, hosted);
        this.coldQueryHandler = new ColdQueryHandler(validator, directory, selfMsb, selfLsb, placementFingerprint);
    }

    public boolean hostsShard(final int shard)
    {
        return hosted[shard];
    }

    int hostedCount()
    {
        return hostedCount;
    }

    long placementFingerprint()
    {
        return placementFingerprint;
    }

    CatalogDirectory directory()
    {
        return directory;
    }

    CatalogRequestValidator validator()
    {
        return validator;
    }

    ColdQueryHandler coldQueryHandler()
    {
        return coldQueryHandler;
    }

    /**
     * One row from this Manager's own catalog view, as a cold query to it would answer (the view also holds this
     * Manager's own residences, which the caller filters out like any self candidate).
     *
     * @return whether the view of the shard covers every owner completely (else an empty row proves nothing and
     * another copy is asked).
     */
    public boolean lookup(final int shard, final StateKeyFlyweight key, final CandidateSet row)
    {
        return directory.lookup(shard, key, row);
    }

    /**
     * Judge routes against, and answer cold queries as, a new incarnation of this runtime.
     */
    void localIncarnation(final long msb, final long lsb)
    {
        validator.localIncarnation(msb, lsb);
        coldQueryHandler.localIncarnation(msb, lsb);
    }

    /**
     * Owners admitting a new incarnation on every hosted shard.
     */
    void admitIncarnation(final int slot, final long msb, final long lsb)
    {
        for (int s = 0; s < hosted.length; s++)
        {
            if (hosted[s])
            {
                directory.receiver(slot, s).admitIncarnation(msb, lsb);
            }
        }
    }

    /**
     * An owner the member view no longer shows: its evidence is dropped on every hosted shard.
     */
    void dropMember(final int slot)
    {
        for (int s = 0; s < hosted.length; s++)
        {
            if (hosted[s])
            {
                directory.receiver(slot, s).dropMember();
            }
        }
    }

    /**
     * @param ownerSlots slots in use.
     * @param viewApplied whether a complete member view was applied yet (before it, no shard is complete).
     * @return hosted shards whose view misses some owner's complete coverage.
     */
    int incompleteShards(final int ownerSlots, final boolean viewApplied)
    {
        int incomplete = 0;
        for (int s = 0; s < hosted.length; s++)
        {
            if (!hosted[s])
            {
                continue;
            }
            boolean complete = viewApplied;
            for (int slot = 0; slot < ownerSlots && complete; slot++)
            {
                complete = directory.receiver(slot, s).coverageComplete();
            }
            incomplete += complete ? 0 : 1;
        }
        return incomplete;
    }
}
