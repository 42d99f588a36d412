package io.orbitkv.manager.transfer;

import io.orbitkv.manager.peer.PeerAuthCounter;
import io.orbitkv.manager.status.CounterSet;
import io.orbitkv.manager.status.SystemCounters;
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
    private final SystemCounters systemCounters;

    private TransportCounters(
        final CountersManager countersManager, final BuiltinTransport transport, final SystemCounters systemCounters)
    {
        super(countersManager, ALL);
        this.transport = transport;
        this.systemCounters = systemCounters;
    }

    /**
     * @param transport       the transport the Manager opened.
     * @param countersManager where the counters go.
     * @param systemCounters  where the handshake outcomes go ({@link PeerAuthCounter}).
     * @return its counters, allocated, or null when the transport keeps no statistics.
     */
    public static TransportCounters of(
        final Transport transport, final CountersManager countersManager, final SystemCounters systemCounters)
    {
        return transport instanceof BuiltinTransport builtin ?
            new TransportCounters(countersManager, builtin, systemCounters) : null;
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
        systemCounters.get(PeerAuthCounter.HANDSHAKES_PROVED).setRelease(stats.get(BuiltinTransportStats.HANDSHAKES_PROVED));
        systemCounters.get(PeerAuthCounter.HANDSHAKES_FAILED).setRelease(stats.get(BuiltinTransportStats.HANDSHAKES_FAILED));
        systemCounters.get(PeerAuthCounter.TLS_ENABLED).setRelease(null == transport.context().tls() ? 0 : 1);
        systemCounters.get(PeerAuthCounter.TLS_HANDSHAKES_DONE)
            .setRelease(stats.get(BuiltinTransportStats.TLS_HANDSHAKES_DONE));
        systemCounters.get(PeerAuthCounter.TLS_HANDSHAKES_FAILED)
            .setRelease(stats.get(BuiltinTransportStats.TLS_HANDSHAKES_FAILED));
    }
}
