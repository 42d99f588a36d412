package io.orbitkv.manager.peer;

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
}
