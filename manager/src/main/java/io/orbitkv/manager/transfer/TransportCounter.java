package io.orbitkv.manager.transfer;

import io.orbitkv.manager.status.CounterDescriptor;
import io.orbitkv.transport.BuiltinTransportStats;

/**
 * The built-in transport's statistics as Manager counters, one per {@link BuiltinTransportStats} id, copied from the
 * transport on the transfer part's gauge tick. No fixed id: the type id ({@link #TYPE_ID_BASE} + the statistic's
 * id) is each one's own, as for the peer transport's counters.
 */
public enum TransportCounter implements CounterDescriptor
{
    READS_SUBMITTED(BuiltinTransportStats.READS_SUBMITTED),
    READS_OK(BuiltinTransportStats.READS_OK),
    READS_FAILED(BuiltinTransportStats.READS_FAILED),
    READS_REJECTED(BuiltinTransportStats.READS_REJECTED),
    READS_TIMED_OUT(BuiltinTransportStats.READS_TIMED_OUT),
    READS_CLOSED(BuiltinTransportStats.READS_CLOSED),
    READS_BACK_PRESSURED(BuiltinTransportStats.READS_BACK_PRESSURED),
    READS_REFUSED_LOCALLY(BuiltinTransportStats.READS_REFUSED_LOCALLY),
    REQUESTS_SERVED(BuiltinTransportStats.REQUESTS_SERVED),
    REJECTED_UNKNOWN_SESSION(BuiltinTransportStats.REJECTED_UNKNOWN_SESSION),
    REJECTED_REVOKED(BuiltinTransportStats.REJECTED_REVOKED),
    REJECTED_TOKEN(BuiltinTransportStats.REJECTED_TOKEN),
    REJECTED_RANGE(BuiltinTransportStats.REJECTED_RANGE),
    BAD_HELLOS(BuiltinTransportStats.BAD_HELLOS),
    MALFORMED_FRAMES(BuiltinTransportStats.MALFORMED_FRAMES),
    OVERSIZE_REQUESTS(BuiltinTransportStats.OVERSIZE_REQUESTS),
    CONNECTIONS_ACCEPTED(BuiltinTransportStats.CONNECTIONS_ACCEPTED),
    CONNECTIONS_REFUSED(BuiltinTransportStats.CONNECTIONS_REFUSED),
    PROTOCOL_ERRORS(BuiltinTransportStats.PROTOCOL_ERRORS),
    STREAMS_LOST(BuiltinTransportStats.STREAMS_LOST),
    PEERS_EVICTED(BuiltinTransportStats.PEERS_EVICTED),
    PEERS_REFUSED(BuiltinTransportStats.PEERS_REFUSED),
    EXPORTS_REFUSED(BuiltinTransportStats.EXPORTS_REFUSED),
    INVALID_RANGES(BuiltinTransportStats.INVALID_RANGES),
    BYTES_SENT(BuiltinTransportStats.BYTES_SENT),
    BYTES_RECEIVED(BuiltinTransportStats.BYTES_RECEIVED),
    SENDS_IN_PROGRESS(BuiltinTransportStats.SENDS_IN_PROGRESS),
    IO_ERRORS(BuiltinTransportStats.IO_ERRORS),
    HELLO_TIMEOUTS(BuiltinTransportStats.HELLO_TIMEOUTS),
    SENDS_CUT(BuiltinTransportStats.SENDS_CUT);

    /**
     * Type ids of these counters start here.
     */
    public static final int TYPE_ID_BASE = 6000;

    private final int statistic;
    private final String label;

    TransportCounter(final int statistic)
    {
        this.statistic = statistic;
        this.label = "transport: " + BuiltinTransportStats.label(statistic);
    }

    /**
     * @return the {@link BuiltinTransportStats} id this counter mirrors.
     */
    public int statistic()
    {
        return statistic;
    }

    public int typeId()
    {
        return TYPE_ID_BASE + statistic;
    }

    public String label()
    {
        return label;
    }

    public boolean isGauge()
    {
        return true;
    }
}
