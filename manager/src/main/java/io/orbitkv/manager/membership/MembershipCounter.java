package io.orbitkv.manager.membership;

import io.orbitkv.manager.status.FixedCounter;
import io.orbitkv.manager.status.SystemCounters;

/**
 * Membership's counters: etcd calls by kind and their failures, the registration and its incarnation, the member
 * view and its invalidations, keepalives.
 * <p>
 * Each has a fixed id, which {@code orbitkv stat}, /metrics and dashboards key on: never renumber or reuse one; a new
 * counter takes an id no family holds ({@link SystemCounters} lays every family out by id).
 */
public enum MembershipCounter implements FixedCounter
{
    ETCD_CALLS_GET(62, "etcd calls: get", false),
    ETCD_CALLS_TXN(63, "etcd calls: txn", false),
    ETCD_CALLS_LEASE_GRANT(64, "etcd calls: lease grant", false),
    ETCD_CALLS_LEASE_KEEPALIVE(65, "etcd calls: lease keepalive", false),
    ETCD_CALLS_LEASE_REVOKE(66, "etcd calls: lease revoke", false),
    ETCD_CALLS_WATCH(67, "etcd calls: watch open", false),
    ETCD_CALL_FAILURES(68, "etcd call failures", false),
    ETCD_CALL_TIMEOUTS(69, "etcd call timeouts (deadline passed)", false),
    REGISTRATION_STATE(70, "Membership: registration state (0 standalone, 1 registering, " +
        "2 registered, 3 expired, 4 fenced)", true),
    VIEW_COMPLETE(71, "Membership: member view complete (1 = yes)", true),
    FENCED(72, "Membership: current incarnation fenced (cause code, 0 = not fenced)", true),
    REMOTE_WORK_ENABLED(73, "Membership: remote work enabled (1 = yes)", true),
    MEMBERS(74, "Membership: members in view", true),
    VIEW_REVISION(75, "Membership: view revision", true),
    SNAPSHOTS(76, "Membership: snapshots", false),
    SNAPSHOT_PAGES(77, "Membership: snapshot pages", false),
    WATCH_EVENTS(78, "Membership: watch events applied", false),
    INVALIDATIONS_RECONNECT(79, "Membership: view invalidations: reconnect", false),
    INVALIDATIONS_COMPACTION(80, "Membership: view invalidations: compaction", false),
    INVALIDATIONS_MALFORMED(81, "Membership: view invalidations: malformed record", false),
    INVALIDATIONS_MEMBER_OVERFLOW(82, "Membership: view invalidations: over 4096 members", false),
    INVALIDATIONS_RECORD_TOO_LARGE(83, "Membership: view invalidations: record over 1 KiB", false),
    INVALIDATIONS_QUEUE_OVERFLOW(84, "Membership: view invalidations: watch queue overflow", false),
    RECORDS_REJECTED(85, "Membership: member records rejected by snapshots", false),
    KEEPALIVES_ACKED(86, "Membership: keepalives acknowledged", false),
    KEEPALIVE_FAILURES(87, "Membership: keepalive failures", false),
    SHARDS_UNAVAILABLE(88, "Membership: shards with no copy in the view", true),
    INCARNATION(140, "Membership: incarnation of this process (1 = first registration)", true),
    REREGISTRATIONS(141, "Membership: re-registrations as a new incarnation", false),
    JOIN_RETRIES(142, "Membership: join and registration rounds retried after an etcd failure", false),
    EPOCH(144, "Membership: epoch of the current incarnation", true),
    KEEPALIVE_RTT_MAX_MS(145, "Membership: slowest keepalive round trip (ms)", true),
    VALIDITY_MARGIN_MIN_MS(146, "Membership: least validity left when a keepalive was acknowledged (ms)", true),
    WAKEUPS(147, "Membership: membership thread wake-ups (timer or event)", false),
    SHARDS_DEGRADED(213, "Membership: shards with fewer live copies than asked (reduced failure coverage)", true);

    private final Spec spec;

    MembershipCounter(final int id, final String label, final boolean gauge)
    {
        this.spec = new Spec(id, label, gauge);
    }

    public Spec spec()
    {
        return spec;
    }
}
