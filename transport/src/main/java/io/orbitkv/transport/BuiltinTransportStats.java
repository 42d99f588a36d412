package io.orbitkv.transport;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Counters of one {@link BuiltinTransport}, readable from any thread. The owner's thread and the I/O thread
 * increment them without locks or allocation; a Manager maps them onto its own counters by {@link #label}.
 */
public final class BuiltinTransportStats
{
    /** Reads accepted by submitRead. */
    public static final int READS_SUBMITTED = 0;
    /** Reads delivered OK. */
    public static final int READS_OK = 1;
    /** Reads delivered FAILED (connection lost, bad response). */
    public static final int READS_FAILED = 2;
    /** Reads delivered REJECTED, by the source or locally. */
    public static final int READS_REJECTED = 3;
    /** Reads delivered TIMEOUT. */
    public static final int READS_TIMED_OUT = 4;
    /** Reads delivered CLOSED (peer handle closed or evicted, transport closed). */
    public static final int READS_CLOSED = 5;
    /** submitRead refused for lack of room (back-pressure). */
    public static final int READS_BACK_PRESSURED = 6;
    /** Reads refused before sending: local memory not registered, bad length, stale peer handle. */
    public static final int READS_REFUSED_LOCALLY = 7;
    /** Source: read requests answered with bytes. */
    public static final int REQUESTS_SERVED = 8;
    /** Source: requests naming a session never exported or already gone. */
    public static final int REJECTED_UNKNOWN_SESSION = 9;
    /** Source: requests of a session being revoked. */
    public static final int REJECTED_REVOKED = 10;
    /** Source: requests with the wrong token. */
    public static final int REJECTED_TOKEN = 11;
    /** Source: requests for a range not inside one exported range. */
    public static final int REJECTED_RANGE = 12;
    /** Source: connections whose hello had the wrong magic or version (closed). */
    public static final int BAD_HELLOS = 13;
    /** Source: frames of an unknown type (connection closed). */
    public static final int MALFORMED_FRAMES = 14;
    /** Source: requests longer than the largest request served, or not positive (connection closed). */
    public static final int OVERSIZE_REQUESTS = 15;
    /** Source: connections accepted. */
    public static final int CONNECTIONS_ACCEPTED = 16;
    /** Source: connections refused because the connection limit was reached. */
    public static final int CONNECTIONS_REFUSED = 17;
    /** Requester: responses that broke the protocol (unexpected id, status or length; stream closed). */
    public static final int PROTOCOL_ERRORS = 18;
    /** Requester: streams lost (peer closed, reset, connect failed). */
    public static final int STREAMS_LOST = 19;
    /** Requester: peers evicted because the peer limit was reached (least recently used first). */
    public static final int PEERS_EVICTED = 20;
    /** Requester: peer endpoints that could not be parsed or resolved. */
    public static final int PEERS_REFUSED = 21;
    /** Source: exports refused (session limit, duplicate session id). */
    public static final int EXPORTS_REFUSED = 22;
    /** Source: exports or registrations refused as invalid (range outside registered memory, bad arguments). */
    public static final int INVALID_RANGES = 23;
    /** Source: payload bytes sent. */
    public static final int BYTES_SENT = 24;
    /** Requester: payload bytes received into local memory. */
    public static final int BYTES_RECEIVED = 25;
    /** Source: responses whose payload is being sent now (a gauge, not a counter). */
    public static final int SENDS_IN_PROGRESS = 26;
    /** Unexpected faults the I/O thread survived. */
    public static final int IO_ERRORS = 27;
    /** Source: connections closed because no hello came within the hello timeout. */
    public static final int HELLO_TIMEOUTS = 28;
    /** Source: sends cut (connection closed) because the requester read nothing for the stall timeout. */
    public static final int SENDS_CUT = 29;

    /** Connections whose handshake proved the handshake key both ways (either end counts its own). */
    public static final int HANDSHAKES_PROVED = 30;

    /** Connections closed because the handshake failed (wrong key, or one end without a key). */
    public static final int HANDSHAKES_FAILED = 31;

    /** Connections whose TLS handshake completed (either end counts its own). */
    public static final int TLS_HANDSHAKES_DONE = 32;

    /**
     * Connections closed because the TLS handshake failed: a peer without TLS, a certificate the CA did not issue, a
     * peer that closed during the handshake.
     */
    public static final int TLS_HANDSHAKES_FAILED = 33;

    private static final String[] LABELS =
    {
        "reads submitted", "reads ok", "reads failed", "reads rejected", "reads timed out", "reads closed",
        "reads back-pressured", "reads refused locally", "requests served", "rejected unknown session",
        "rejected revoked session", "rejected token", "rejected range", "bad hellos", "malformed frames",
        "oversize requests", "connections accepted", "connections refused", "protocol errors", "streams lost",
        "peers evicted", "peers refused", "exports refused", "invalid ranges", "bytes sent", "bytes received",
        "sends in progress", "io errors", "hello timeouts", "sends cut", "handshakes proved", "handshakes failed",
        "tls handshakes done", "tls handshakes failed",
    };

    /** Number of counters. */
    public static final int COUNT = LABELS.length;

    private final AtomicLongArray values = new AtomicLongArray(COUNT);

    BuiltinTransportStats()
    {
    }

    /**
     * @param id one of this class's counter ids.
     * @return the counter's current value.
     */
    public long get(final int id)
    {
        return values.get(id);
    }

    /**
     * @param id one of this class's counter ids.
     * @return what the counter counts.
     */
    public static String label(final int id)
    {
        return LABELS[id];
    }

    void increment(final int id)
    {
        values.getAndIncrement(id);
    }

    void add(final int id, final long delta)
    {
        values.getAndAdd(id, delta);
    }

    @Override
    public String toString()
    {
        final StringBuilder builder = new StringBuilder("BuiltinTransportStats{");
        for (int i = 0; i < COUNT; i++)
        {
            builder.append(i == 0 ? "" : ", ").append(LABELS[i]).append('=').append(values.get(i));
        }
        return builder.append('}').toString();
    }
}
