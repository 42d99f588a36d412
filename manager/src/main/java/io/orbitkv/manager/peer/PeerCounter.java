package io.orbitkv.manager.peer;

import io.orbitkv.manager.status.CounterDescriptor;

/**
 * Counters of the peer transport, one Agrona counter each, allocated by {@link PeerCounters} after the system
 * counters. They have no fixed id: the type id ({@link #TYPE_ID_BASE} + the number here) is stable and each one's own,
 * so an external reader (stat) finds them by it in whatever counters file the owner of the
 * {@link org.agrona.concurrent.status.CountersManager} maps.
 */
public enum PeerCounter implements CounterDescriptor
{
    FRAMES_CONNECT(0, "peer: connect frames received"),
    FRAMES_DELTA_BATCH(1, "peer: delta batch frames received"),
    FRAMES_ACK(2, "peer: ack frames received"),
    FRAMES_GAP_REPAIR(3, "peer: gap repair frames received"),
    FRAMES_SNAPSHOT(4, "peer: snapshot begin/page/end frames received"),
    FRAMES_COLD_QUERY(5, "peer: cold query frames received"),
    FRAMES_COLD_QUERY_RESPONSE(6, "peer: cold query response frames received"),
    FRAMES_RESPONSE(7, "peer: generic response frames received"),

    REJECTED_MALFORMED(10, "peer: rejected malformed"),
    REJECTED_WRONG_SCHEMA(11, "peer: rejected wrong schema"),
    REJECTED_UNKNOWN_TEMPLATE(12, "peer: rejected unknown template"),
    REJECTED_WRONG_FINGERPRINT(13, "peer: rejected wrong placement fingerprint"),
    REJECTED_WRONG_DESTINATION(14, "peer: rejected wrong destination"),
    REJECTED_STALE_INCARNATION(15, "peer: rejected stale incarnation"),
    REJECTED_UNREGISTERED_PUBLISHER(16, "peer: rejected unregistered publisher"),
    REJECTED_CROSS_SHARD_KEY(17, "peer: rejected cross-shard key"),
    REJECTED_BATCH_TOO_LARGE(18, "peer: rejected batch too large"),
    REJECTED_UNKNOWN_SESSION(19, "peer: rejected unknown session"),

    OFFERS_BACK_PRESSURED(30, "peer: offers back-pressured"),
    OFFERS_FAILED(31, "peer: offers failed (not connected, closed or retries exhausted)"),
    RESPONSES_SENT(32, "peer: responses sent"),
    METADATA_BYTES_SENT(33, "peer: metadata bytes sent"),
    METADATA_BYTES_RECEIVED(34, "peer: metadata bytes received"),
    PUBLICATIONS_EVICTED(35, "peer: source-channel LRU publications evicted"),
    SESSIONS_OPENED(36, "peer: sessions opened"),
    SESSIONS_TIMED_OUT(37, "peer: sessions timed out before their response channel connected"),
    IMAGES_AVAILABLE(38, "peer: images available"),
    IMAGES_UNAVAILABLE(39, "peer: images unavailable"),
    SESSIONS_REFUSED(40, "peer: sessions refused (session limit)"),
    IDLE_SOCKET_WAITS(41, "peer: idle sleeps spent waiting on the peer socket"),
    IDLE_SOCKET_WAKEUPS(42, "peer: idle sleeps a datagram ended"),

    FRAMES_TRANSFER_AUTHORIZE(43, "peer: transfer authorize frames received"),
    FRAMES_TRANSFER_GRANT(44, "peer: transfer grant frames received"),
    FRAMES_TRANSFER_RELEASE(45, "peer: transfer release frames received"),
    FRAMES_TRANSFER_RELEASE_ACK(46, "peer: transfer release ack frames received"),
    TRANSFER_REJECTED_MALFORMED(47, "peer: transfer frames rejected malformed (length, block, groups, version)"),
    TRANSFER_REJECTED_UNKNOWN_TEMPLATE(48, "peer: transfer frames rejected with an unknown template"),
    TRANSFER_REJECTED_STALE_INCARNATION(49, "peer: transfer frames addressed to another incarnation of this peer"),
    TRANSFER_REJECTED_WRONG_SENDER(50, "peer: transfer frames whose sender did not open the session"),
    TRANSFER_REJECTED_UNKNOWN_SESSION(51, "peer: transfer frames of an unknown or closed peer session"),
    TRANSFER_REJECTED_NO_HANDLER(52, "peer: transfer frames dropped, no transfer handler on this peer"),
    TRANSFER_MESSAGES_SENT(53, "peer: transfer messages sent");

    /**
     * Counter type ids of the peer transport start here (the Manager's system counters use lower ids).
     */
    public static final int TYPE_ID_BASE = 5000;

    private final int id;
    private final String label;

    PeerCounter(final int id, final String label)
    {
        this.id = id;
        this.label = label;
    }

    /**
     * @return the number of this counter within the peer transport's type ids.
     */
    public int id()
    {
        return id;
    }

    public int typeId()
    {
        return TYPE_ID_BASE + id;
    }

    public String label()
    {
        return label;
    }
}
