package io.orbitkv.manager.ring;

import io.orbitkv.codecs.engine.StatusCode;
import io.orbitkv.manager.status.FixedCounter;
import io.orbitkv.manager.status.SystemCounters;

/**
 * The engine ring's counters: requests by kind and what they moved, rejections by status code, clients, leases
 * and the ring agent's duty cycles.
 * <p>
 * Each has a fixed id, which {@code orbitkv stat}, /metrics and dashboards key on: never renumber or reuse one; a new
 * counter takes an id no family holds ({@link SystemCounters} lays every family out by id).
 */
public enum RingCounter implements FixedCounter
{
    REQUESTS_ATTACH(0, "Requests: attach", false),
    REQUESTS_DETACH(1, "Requests: detach", false),
    REQUESTS_HEARTBEAT(2, "Requests: heartbeat", false),
    REQUESTS_PUBLISH(3, "Requests: publish", false),
    REQUESTS_LOOKUP(4, "Requests: lookup", false),
    REQUESTS_READ(5, "Requests: read", false),
    REQUESTS_RELEASE(6, "Requests: release", false),
    BLOCKS_PUBLISHED(7, "Blocks published", false),
    BYTES_PUBLISHED(8, "Bytes published", false),
    BLOCKS_READ(9, "Blocks read", false),
    BYTES_READ(10, "Bytes read", false),
    LOOKUP_HITS(11, "Lookup hits (keys)", false),
    LOOKUP_MISSES(12, "Lookup misses (keys)", false),
    LEASES_ACTIVE(18, "Leases active", true),
    CLIENTS_ATTACHED(19, "Clients attached", true),
    CLIENT_TIMEOUTS(20, "Client timeouts", false),
    RESPONSES_DROPPED(21, "Responses dropped", false),
    REJECTED_MALFORMED(23, "Rejected: malformed", false),
    REJECTED_UNKNOWN_TEMPLATE(24, "Rejected: unknown template", false),
    REJECTED_SCHEMA_MISMATCH(25, "Rejected: schema mismatch", false),
    REJECTED_UNKNOWN_CLIENT(26, "Rejected: unknown client", false),
    REJECTED_BATCH_TOO_LARGE(27, "Rejected: batch too large", false),
    REJECTED_KEY_TOO_LARGE(28, "Rejected: key too large", false),
    REJECTED_OUT_OF_RANGE(29, "Rejected: out of range", false),
    REJECTED_NO_SPACE(30, "Rejected: no space (publish keys)", false),
    REJECTED_NAME_IN_USE(31, "Rejected: name in use", false),
    REJECTED_BAD_FLAGS(32, "Rejected: bad flags", false),
    REJECTED_TOO_MANY_CLIENTS(33, "Rejected: too many clients", false),
    REJECTED_PIN_LIMIT(34, "Rejected: pin limit", false),
    REJECTED_BAD_DATA_REGION_SIZE(35, "Rejected: bad data region size", false),
    REJECTED_UNKNOWN_LEASE(36, "Rejected: unknown lease", false),
    REJECTED_NAMESPACE_LIMIT(37, "Rejected: namespace limit", false),
    REJECTED_BUSY(38, "Rejected: busy", false),
    REJECTED_INTERNAL_ERROR(39, "Rejected: internal error", false),
    CLAIMED_SLOTS_RECLAIMED(40, "Claimed slots reclaimed", false),
    OPERATIONS_CANCELLED(41, "Operations cancelled", false),
    DUTY_CYCLES(43, "Ring agent duty cycles", false),
    NAMESPACES(44, "Namespaces", true),
    DATA_REGION_FAULTS(45, "Data region faults (client detached)", false),
    REQUESTS_PREPARE(260, "Requests: prepare", false),
    REQUESTS_COMMIT(261, "Requests: commit", false),
    BLOCKS_RESERVED(262, "Blocks reserved (prepare)", false),
    BLOCKS_COMMITTED(263, "Blocks committed", false),
    BYTES_COMMITTED(264, "Bytes committed", false),
    RESERVATIONS_EXPIRED(265, "Reservations expired (not committed in time)", false),
    RESERVATIONS_ABORTED(266, "Reservations aborted (client gone)", false),
    COMMITS_NOT_RESERVED(267, "Commit keys without a reservation of the client", false),
    REJECTED_NOT_ENABLED(268, "Rejected: not enabled", false);

    private static final RingCounter[] REJECTION_BY_STATUS = new RingCounter[32];

    static
    {
        REJECTION_BY_STATUS[StatusCode.ERROR.value()] = REJECTED_INTERNAL_ERROR;
        REJECTION_BY_STATUS[StatusCode.MALFORMED.value()] = REJECTED_MALFORMED;
        REJECTION_BY_STATUS[StatusCode.UNKNOWN_TEMPLATE.value()] = REJECTED_UNKNOWN_TEMPLATE;
        REJECTION_BY_STATUS[StatusCode.SCHEMA_MISMATCH.value()] = REJECTED_SCHEMA_MISMATCH;
        REJECTION_BY_STATUS[StatusCode.UNKNOWN_CLIENT.value()] = REJECTED_UNKNOWN_CLIENT;
        REJECTION_BY_STATUS[StatusCode.BATCH_TOO_LARGE.value()] = REJECTED_BATCH_TOO_LARGE;
        REJECTION_BY_STATUS[StatusCode.KEY_TOO_LARGE.value()] = REJECTED_KEY_TOO_LARGE;
        REJECTION_BY_STATUS[StatusCode.OUT_OF_RANGE.value()] = REJECTED_OUT_OF_RANGE;
        REJECTION_BY_STATUS[StatusCode.NO_SPACE.value()] = REJECTED_NO_SPACE;
        REJECTION_BY_STATUS[StatusCode.NAME_IN_USE.value()] = REJECTED_NAME_IN_USE;
        REJECTION_BY_STATUS[StatusCode.BAD_FLAGS.value()] = REJECTED_BAD_FLAGS;
        REJECTION_BY_STATUS[StatusCode.TOO_MANY_CLIENTS.value()] = REJECTED_TOO_MANY_CLIENTS;
        REJECTION_BY_STATUS[StatusCode.PIN_LIMIT.value()] = REJECTED_PIN_LIMIT;
        REJECTION_BY_STATUS[StatusCode.BAD_DATA_REGION_SIZE.value()] = REJECTED_BAD_DATA_REGION_SIZE;
        REJECTION_BY_STATUS[StatusCode.UNKNOWN_LEASE.value()] = REJECTED_UNKNOWN_LEASE;
        REJECTION_BY_STATUS[StatusCode.NAMESPACE_LIMIT.value()] = REJECTED_NAMESPACE_LIMIT;
        REJECTION_BY_STATUS[StatusCode.BUSY.value()] = REJECTED_BUSY;
        REJECTION_BY_STATUS[StatusCode.NOT_ENABLED.value()] = REJECTED_NOT_ENABLED;
    }

    private final Spec spec;

    RingCounter(final int id, final String label, final boolean gauge)
    {
        this.spec = new Spec(id, label, gauge);
    }

    public Spec spec()
    {
        return spec;
    }

    /**
     * The rejection counter for a non-OK status code.
     *
     * @param code the status code.
     * @return its rejection counter descriptor, {@link #REJECTED_INTERNAL_ERROR} for codes without one.
     */
    public static RingCounter rejection(final StatusCode code)
    {
        final int value = code.value();
        final RingCounter descriptor = value < REJECTION_BY_STATUS.length ? REJECTION_BY_STATUS[value] : null;
        return null == descriptor ? REJECTED_INTERNAL_ERROR : descriptor;
    }
}
