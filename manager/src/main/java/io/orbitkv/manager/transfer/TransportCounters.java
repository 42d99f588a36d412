package io.orbitkv.manager.transfer;

import io.orbitkv.manager.status.CounterSet;
import io.orbitkv.transport.BuiltinTransportStats;
import org.agrona.concurrent.status.CountersManager;

/**
 * The built-in transport's counters in the Manager's counters file, set from its statistics.
 */
public final class TransportCounters extends CounterSet<TransportCounter>
{
    private static final TransportCounter[] ALL = TransportCounter.values();

    public TransportCounters(final CountersManager countersManager)
    {
        super(countersManager, ALL);
    }

    /**
     * Copy every statistic into its counter.
     */
    public void update(final BuiltinTransportStats stats)
    {
        for (final TransportCounter counter : ALL)
        {
            get(counter).setRelease(stats.get(counter.statistic()));
        }
    }
}
