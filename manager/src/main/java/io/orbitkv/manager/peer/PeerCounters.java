package io.orbitkv.manager.peer;

import io.orbitkv.codecs.catalog.CatalogStatus;
import io.orbitkv.manager.status.CounterSet;
import org.agrona.concurrent.status.CountersManager;

/**
 * The peer transport's counters, allocated from a {@link CountersManager} the caller owns (the Manager passes the one
 * behind its CnC file), indexed by {@link PeerCounter}.
 */
public final class PeerCounters extends CounterSet<PeerCounter>
{
    public PeerCounters(final CountersManager countersManager)
    {
        super(countersManager, PeerCounter.values());
    }

    /**
     * Count a refused catalog or session frame by its reason. Statuses the catalog's logic counts itself
     * (RESYNC_REQUIRED, BUDGET_EXCEEDED, ERROR) are not counted here.
     */
    public void countRejection(final CatalogStatus status)
    {
        switch (status)
        {
            case MALFORMED -> increment(PeerCounter.REJECTED_MALFORMED);
            case SCHEMA_MISMATCH -> increment(PeerCounter.REJECTED_WRONG_SCHEMA);
            case UNKNOWN_TEMPLATE -> increment(PeerCounter.REJECTED_UNKNOWN_TEMPLATE);
            case WRONG_FINGERPRINT -> increment(PeerCounter.REJECTED_WRONG_FINGERPRINT);
            case WRONG_DESTINATION -> increment(PeerCounter.REJECTED_WRONG_DESTINATION);
            case STALE_INCARNATION -> increment(PeerCounter.REJECTED_STALE_INCARNATION);
            case UNREGISTERED_PUBLISHER -> increment(PeerCounter.REJECTED_UNREGISTERED_PUBLISHER);
            case CROSS_SHARD_KEY -> increment(PeerCounter.REJECTED_CROSS_SHARD_KEY);
            case BATCH_TOO_LARGE -> increment(PeerCounter.REJECTED_BATCH_TOO_LARGE);
            default ->
            {
                // Other statuses (RESYNC_REQUIRED, BUDGET_EXCEEDED, ERROR) are counted by the catalog logic itself.
            }
        }
    }
}
