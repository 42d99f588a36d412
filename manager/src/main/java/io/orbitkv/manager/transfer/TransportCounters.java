package io.orbitkv.manager.transfer;

import io.orbitkv.manager.status.CounterSet;
import io.orbitkv.transport.BuiltinTransport;
import io.orbitkv.transport.BuiltinTransportStats;
import io.orbitkv.transport.Transport;
import org.agrona.concurrent.status.CountersManager;

/**
 * The built-in transport's counters in the Manager's counters file, set from its statistics. Only the built-in
 * transport keeps statistics; another transport has no such counters.
 */
public final class TransportCounters extends CounterSet<TransportCounter>
{
    private static final TransportCounter[] ALL = TransportCounter.values();

    private final BuiltinTransport transport;

    private TransportCounters(final CountersManager countersManager, final BuiltinTransport transport)
    {
        super(countersManager, ALL);
        this.transport = transport;
    }

    /**
     * @param transport       the transport the Manager opened.
     * @param countersManager where the counters go.
     * @return its counters, allocated, or null when the transport keeps no statistics.
     */
    public static TransportCounters of(final Transport transport, final CountersManager countersManager)
    {
        return transport instanceof BuiltinTransport builtin ? new TransportCounters(countersManager, builtin) : null;
    }

    /**
     * Copy every statistic into its counter.
     */
    void update()
    {
        final BuiltinTransportStats stats = transport.stats();
        for (final TransportCounter counter : ALL)
        {
            get(counter).setRelease(stats.get(counter.statistic()));
        }
    }
}
