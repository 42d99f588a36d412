package io.orbitkv.manager.catalog;

import io.orbitkv.catalog.CatalogDirectory;
import io.orbitkv.catalog.CatalogRequestValidator;
import io.orbitkv.catalog.ColdQueryHandler;
import io.orbitkv.catalog.HostBudget;
import io.orbitkv.catalog.ShardReceiver;
import io.orbitkv.codecs.CatalogLimits;
import io.orbitkv.codecs.StateKeyFlyweight;
import io.orbitkv.index.CandidateSet;
import io.orbitkv.manager.membership.PlacementState;

/**
 * The catalog host role of this Manager: the shards the {@link PlacementState} gives this node now, a
 * {@link CatalogDirectory} over them (one receiving state per (owner slot, shard)), and the route validator and cold
 * query handler the transport judges and answers requests with. A placement transition adds shards (their receivers
 * start empty and wait for each owner's snapshot) and removes them (their views are freed). Which owner slot a
 * publisher is, is the {@link MemberViewSync}'s; applying frames is the {@link CatalogPeerHandler}'s. Single threaded
 * (the catalog agent).
 */
final class CatalogHost implements HostedCatalog
{
    private final String nodeId;
    private final boolean[] hosted = new boolean[CatalogLimits.SHARD_COUNT];
    private int hostedCount;
    private final CatalogDirectory directory;
    private final CatalogRequestValidator validator;
    private final ColdQueryHandler coldQueryHandler;

    CatalogHost(final String nodeId, final PlacementState placement, final long selfMsb, final long selfLsb)
    {
        this.nodeId = nodeId;
        for (int s = 0; s < hosted.length; s++)
        {
            hosted[s] = placement.holds(s, nodeId);
            hostedCount += hosted[s] ? 1 : 0;
        }
        this.directory = new CatalogDirectory(hosted, new HostBudget());
        this.validator = new CatalogRequestValidator(selfMsb, selfLsb, placement.installedFingerprint(), hosted);
        validator.placementFingerprints(placement.installedFingerprint(), placement.sendFingerprint());
        this.coldQueryHandler = new ColdQueryHandler(validator, directory, selfMsb, selfLsb);
    }

    /**
     * Follow a new placement state: host the shards it gives this node, stop hosting the others, and accept the
     * routes of its generations.
     *
     * @return shards whose hosting changed.
     */
    int applyPlacement(final PlacementState placement)
    {
        validator.placementFingerprints(placement.installedFingerprint(), placement.sendFingerprint());
        int changed = 0;
        for (int s = 0; s < hosted.length; s++)
        {
            final boolean holds = placement.holds(s, nodeId);
            if (holds == hosted[s])
            {
                continue;
            }
            hosted[s] = holds;
            hostedCount += holds ? 1 : -1;
            validator.hostShard(s, holds);
            if (holds)
            {
                directory.hostShard(s);
            }
            else
            {
                directory.unhostShard(s);
            }
            changed++;
        }
        return changed;
    }

    public boolean hostsShard(final int shard)
    {
        return hosted[shard];
    }

    int hostedCount()
    {
        return hostedCount;
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
            if (hosted[s])
            {
                incomplete += shardComplete(s, ownerSlots, viewApplied) ? 0 : 1;
            }
        }
        return incomplete;
    }

    /**
     * @return whether this host's view of a hosted shard covers every owner slot completely.
     */
    boolean shardComplete(final int shard, final int ownerSlots, final boolean viewApplied)
    {
        boolean complete = viewApplied && hosted[shard];
        for (int slot = 0; slot < ownerSlots && complete; slot++)
        {
            final ShardReceiver receiver = directory.receiver(slot, shard);
            complete = null == receiver || receiver.coverageComplete();
        }
        return complete;
    }
}
