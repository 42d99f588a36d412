package io.orbitkv.manager.membership;

import io.orbitkv.manager.status.FixedCounter;
import io.orbitkv.manager.status.SystemCounters;

/**
 * Membership's counters: etcd calls by kind and their failures, the registration and its incarnation, the member
 * view and its invalidations, keepalives, and the placement generation with its reconciler's steps.
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
    LEASE_CONNECTIONS_RENEWED(326, "Membership: lease client renewed on fresh connections (keepalive overdue, " +
        "registration round timed out, or registration lapsed)", false),
    SHARDS_DEGRADED(213, "Membership: shards with fewer live copies than asked (reduced failure coverage)", true),
    RECONCILER_ELECTIONS_WON(218, "Placement: reconciler elections won by this node", false),
    TRANSITIONS_PLANNED(219, "Placement: transitions planned (or installed at once when no shard moves)", false),
    TRANSITIONS_COMPLETED(220, "Placement: transitions completed (target installed)", false),
    TRANSITIONS_ABANDONED(221, "Placement: transitions abandoned for a newer desired placement", false),
    SHARD_MOVES_STARTED(222, "Placement: shard moves started (PENDING to PREPARE)", false),
    SHARD_MOVES_COMPLETED(223, "Placement: shard moves retired", false),
    PLACEMENT_RECORDS_REFUSED(224, "Placement: placement or transition records refused (unreadable or older)", false),
    PLACEMENT_GENERATION(225, "Placement: installed placement generation", true),
    SHARD_MOVES_IN_FLIGHT(226, "Placement: shard moves in flight", true),
    RECONCILER(227, "Placement: this node is the placement reconciler (1 = yes, from its first round)", true),
    COVERAGE_REPORTS_WRITTEN(228, "Placement: coverage reports written to etcd", false),
    RECONCILER_STEP_RETRIES(229, "Placement: reconciler steps and coverage writes retried (etcd failed or state moved)",
        false);

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
