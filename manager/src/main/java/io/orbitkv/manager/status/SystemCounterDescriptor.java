package io.orbitkv.manager.status;

import io.orbitkv.codecs.engine.StatusCode;
import org.agrona.collections.Int2ObjectHashMap;

/**
 * The Manager's system counters, registered in the CnC file at start in this order by {@link SystemCounters}. Ids are
 * stable: append new ones, never renumber, as external readers ({@code orbitkv stat}, dashboards) key on them. Ids
 * ascend in declaration order; ids skipped between two descriptors are held by reserved counters, so every id stays
 * put (see {@link CounterSet}). Gauges are set on the housekeeping tick; the rest only ever grow.
 */
public enum SystemCounterDescriptor implements CounterDescriptor
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
    EVICTIONS(13, "Evictions", false),
    POOL_BYTES_USED(14, "Pool bytes used", true),
    POOL_BYTES_FREE(15, "Pool bytes free", true),
    BLOCKS_RESIDENT(16, "Blocks resident", true),
    PINS_ACTIVE(17, "Pins active", true),
    LEASES_ACTIVE(18, "Leases active", true),
    CLIENTS_ATTACHED(19, "Clients attached", true),
    CLIENT_TIMEOUTS(20, "Client timeouts", false),
    RESPONSES_DROPPED(21, "Responses dropped", false),
    ERRORS(22, "Errors", false),
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
    POOL_PAYLOAD_BYTES(42, "Pool payload bytes", true),
    DUTY_CYCLES(43, "Ring agent duty cycles", false),
    NAMESPACES(44, "Namespaces", true),
    DATA_REGION_FAULTS(45, "Data region faults (client detached)", false),
    SSD_BYTES_USED(46, "SSD bytes used", true),
    SSD_BYTES_FREE(47, "SSD bytes free", true),
    SSD_BLOCKS_RESIDENT(48, "SSD blocks resident", true),
    SSD_READS(49, "SSD reads", false),
    SSD_READ_BYTES(50, "SSD read bytes", false),
    SSD_WRITES(51, "SSD writes", false),
    SSD_WRITE_BYTES(52, "SSD write bytes", false),
    SSD_QUEUE_DEPTH(53, "SSD I/O in flight", true),
    SSD_IO_ERRORS(54, "SSD I/O errors (residence dropped)", false),
    SSD_BACKEND(55, "SSD backend: 0 none, 1 io_uring fixed buffers, 2 io_uring, 3 FileChannel", true),
    SSD_FALLBACK(56, "SSD fallback backend in use", true),
    SSD_ADMISSIONS(57, "SSD admissions (write completed)", false),
    SSD_ADMISSION_SKIPS(58, "SSD admissions skipped (staging, queue or space)", false),
    SSD_EVICTIONS(59, "SSD evictions", false),
    SSD_PROMOTIONS(60, "SSD promotions to DRAM", false),
    SSD_LOOKUP_HITS(61, "SSD lookup hits (keys)", false),
    ETCD_CALLS_GET(62, "etcd calls: get", false),
    ETCD_CALLS_TXN(63, "etcd calls: txn", false),
    ETCD_CALLS_LEASE_GRANT(64, "etcd calls: lease grant", false),
    ETCD_CALLS_LEASE_KEEPALIVE(65, "etcd calls: lease keepalive", false),
    ETCD_CALLS_LEASE_REVOKE(66, "etcd calls: lease revoke", false),
    ETCD_CALLS_WATCH(67, "etcd calls: watch open", false),
    ETCD_CALL_FAILURES(68, "etcd call failures", false),
    ETCD_CALL_TIMEOUTS(69, "etcd call timeouts (deadline passed)", false),
    MEMBERSHIP_REGISTRATION_STATE(70, "Membership: registration state (0 standalone, 1 registering, " +
        "2 registered, 3 expired, 4 fenced)", true),
    MEMBERSHIP_VIEW_COMPLETE(71, "Membership: member view complete (1 = yes)", true),
    MEMBERSHIP_FENCED(72, "Membership: current incarnation fenced (cause code, 0 = not fenced)", true),
    MEMBERSHIP_REMOTE_WORK_ENABLED(73, "Membership: remote work enabled (1 = yes)", true),
    MEMBERSHIP_MEMBERS(74, "Membership: members in view", true),
    MEMBERSHIP_VIEW_REVISION(75, "Membership: view revision", true),
    MEMBERSHIP_SNAPSHOTS(76, "Membership: snapshots", false),
    MEMBERSHIP_SNAPSHOT_PAGES(77, "Membership: snapshot pages", false),
    MEMBERSHIP_WATCH_EVENTS(78, "Membership: watch events applied", false),
    MEMBERSHIP_INVALIDATIONS_RECONNECT(79, "Membership: view invalidations: reconnect", false),
    MEMBERSHIP_INVALIDATIONS_COMPACTION(80, "Membership: view invalidations: compaction", false),
    MEMBERSHIP_INVALIDATIONS_MALFORMED(81, "Membership: view invalidations: malformed record", false),
    MEMBERSHIP_INVALIDATIONS_MEMBER_OVERFLOW(82, "Membership: view invalidations: over 4096 members", false),
    MEMBERSHIP_INVALIDATIONS_RECORD_TOO_LARGE(83, "Membership: view invalidations: record over 1 KiB", false),
    MEMBERSHIP_INVALIDATIONS_QUEUE_OVERFLOW(84, "Membership: view invalidations: watch queue overflow", false),
    MEMBERSHIP_RECORDS_REJECTED(85, "Membership: member records rejected by snapshots", false),
    MEMBERSHIP_KEEPALIVES_ACKED(86, "Membership: keepalives acknowledged", false),
    MEMBERSHIP_KEEPALIVE_FAILURES(87, "Membership: keepalive failures", false),
    MEMBERSHIP_SHARDS_UNAVAILABLE(88, "Membership: shards whose host is not in the view", true),
    SSD_ADMISSION_WAITS(89, "SSD admissions that waited for in-flight writes (back-pressure)", false),
    CATALOG_INVENTORY_ADDS(90, "Catalog: residences added to the owner inventory (journalled)", false),
    CATALOG_INVENTORY_REMOVES(91, "Catalog: residences removed from the owner inventory (journalled)", false),
    CATALOG_INVENTORY_FULL(92, "Catalog: residences not announced (inventory or namespace table full)", false),
    CATALOG_JOURNAL_BYTES(93, "Catalog: owner journal bytes in use", true),
    CATALOG_JOURNAL_OVERFLOWS(94, "Catalog: journal overflows that forced a host resync", false),
    CATALOG_RECORDS_SENT(95, "Catalog: delta records sent to catalog hosts", false),
    CATALOG_SNAPSHOTS_STARTED(96, "Catalog: snapshot cuts started for catalog hosts (resyncs)", false),
    CATALOG_SNAPSHOTS_COMPLETED(97, "Catalog: snapshot cuts sent completely", false),
    CATALOG_SNAPSHOTS_FAILED(98, "Catalog: snapshot cuts that exhausted their retry budget", false),
    CATALOG_STREAM_REWINDS(99, "Catalog: owner streams resent from the last ack (no progress in time)", false),
    CATALOG_UPDATE_LAG_US(100, "Catalog: last update lag, owner append to host ack (us)", true),
    CATALOG_UPDATE_LAG_MAX_US(101, "Catalog: max update lag, owner append to host ack (us)", true),
    CATALOG_HOSTED_SHARDS(102, "Catalog: shards this Manager hosts", true),
    CATALOG_INCOMPLETE_SHARDS(103, "Catalog: hosted shards with incomplete coverage", true),
    CATALOG_INDEX_BYTES(104, "Catalog: host index bytes reserved (views and retry storage)", true),
    CATALOG_RECORDS_APPLIED(105, "Catalog: owner records applied as catalog host", false),
    CATALOG_HOST_RESYNCS(106, "Catalog: receiving states that needed a new baseline", false),
    CATALOG_CANDIDATE_HITS(107, "Catalog: candidate index hits (no catalog RPC)", false),
    CATALOG_CANDIDATE_BYTES(108, "Catalog: candidate index logical bytes", true),
    CATALOG_COLD_QUERIES(109, "Catalog: cold query RPCs sent (one per catalog host per batch)", false),
    CATALOG_COLD_KEYS(110, "Catalog: keys asked in cold queries", false),
    CATALOG_COLD_COALESCED(111, "Catalog: keys not asked again because a query for them was in flight", false),
    CATALOG_COLD_TIMEOUTS(112, "Catalog: discoveries answered at the 3 s budget with hosts missing", false),
    CATALOG_DISCOVERY_SKIPPED(113, "Catalog: peer lookups answered locally (remote work disabled or no view)", false),
    CATALOG_PEER_KEYS(114, "Catalog: lookup keys answered with peer candidates", false),
    CATALOG_COLD_QUERIES_SERVED(115, "Catalog: cold queries answered as catalog host", false),
    CATALOG_COLD_ROWS_SERVED(116, "Catalog: cold query rows answered as catalog host", false),
    CATALOG_COLD_ROWS_INCOMPLETE(117, "Catalog: rows answered from an incomplete shard view (prove nothing)", false),
    CATALOG_COLD_CLAIMS_CORRECTED(118, "Catalog: cold query keys whose named shard was wrong", false),
    CATALOG_COLD_QUERIES_REFUSED(119, "Catalog: cold queries refused (route or keys; reasons in the peer counters)",
        false),
    CATALOG_COLD_QUERIES_MALFORMED(120, "Catalog: cold query frames malformed, of another schema or template", false),
    CATALOG_LOCAL_HOST_KEYS(121, "Catalog: discovery keys answered from shards this Manager hosts (no RPC)", false),
    POOL_BYTES_TOUCHED(130, "Pool bytes touched (pre-touch progress, low offsets first)", true),
    POOL_TOUCH_MODE(131, "Pool touch mode: 0 off, 1 background, 2 blocking", true),
    POOL_TOUCH_STATE(132, "Pool touch state: 0 not started, 1 touching, 2 done, 3 stopped at close, 4 failed", true),
    POOL_TOUCH_MS(133, "Pool touch time so far (ms; final once done)", true),
    READY_MS(134, "Start: ms from process start to ready", true),
    IDLE_SLEEPS(135, "Idle: agent sleeps (until a doorbell, a peer datagram or the longest sleep)", false),
    IDLE_DOORBELL_WAKEUPS(136, "Idle: sleeps ended by an engine's doorbell", false),
    IDLE_PEER_WAKEUPS(137, "Idle: sleeps ended by a peer datagram", false),
    IDLE_SLEEPS_ABANDONED(138, "Idle: sleeps abandoned, a request came in while announcing", false),
    IDLE_DOORBELL_BYTES(139, "Idle: doorbell rings drained (bytes engines wrote)", false),
    MEMBERSHIP_INCARNATION(140, "Membership: incarnation of this process (1 = first registration)", true),
    MEMBERSHIP_REREGISTRATIONS(141, "Membership: re-registrations as a new incarnation", false),
    MEMBERSHIP_JOIN_RETRIES(142, "Membership: join and registration rounds retried after an etcd failure", false),
    CATALOG_INCARNATIONS_RETIRED(143, "Catalog: owner incarnations retired as catalog host (evidence dropped)", false),
    MEMBERSHIP_EPOCH(144, "Membership: epoch of the current incarnation", true),
    MEMBERSHIP_KEEPALIVE_RTT_MAX_MS(145, "Membership: slowest keepalive round trip (ms)", true),
    MEMBERSHIP_VALIDITY_MARGIN_MIN_MS(146, "Membership: least validity left when a keepalive was acknowledged (ms)", true),
    MEMBERSHIP_WAKEUPS(147, "Membership: membership thread wake-ups (timer or event)", false),
    TRANSFER_SOURCE_REJECTED_STALE_INCARNATION(150,
        "Transfer source: requests addressed to another incarnation of this Manager", false),
    TRANSFER_SOURCE_REJECTED_FENCED(151, "Transfer source: authorizations refused, registration expired or fenced", false),
    TRANSFER_SOURCE_REJECTED_UNKNOWN_REQUESTER(152,
        "Transfer source: authorizations refused, requester not in the member view", false),
    TRANSFER_SOURCE_REJECTED_MISSING(153, "Transfer source: keys refused, not resident in the asked tier", false),
    TRANSFER_SOURCE_REJECTED_STALE_SEQUENCE(154, "Transfer source: keys refused, another insertion sequence", false),
    TRANSFER_SOURCE_REJECTED_LENGTH_MISMATCH(155, "Transfer source: keys refused, another length", false),
    TRANSFER_SOURCE_REJECTED_OVER_BUDGET(156, "Transfer source: keys refused, transfer budget full", false),
    TRANSFER_SOURCE_REJECTED_TOO_MANY_SESSIONS(157, "Transfer source: authorizations refused, session limit", false),
    TRANSFER_SOURCE_REJECTED_PEER_LIMIT(158, "Transfer source: authorizations refused, per-peer session limit", false),
    TRANSFER_SOURCE_REJECTED_MALFORMED(159, "Transfer source: authorizations refused, malformed", false),
    TRANSFER_SOURCE_REJECTED_EXPORT(160, "Transfer source: authorizations refused, the transport would not export", false),
    TRANSFER_SOURCE_GRANTS(161, "Transfer source: sessions granted", false),
    TRANSFER_SOURCE_GRANTED_KEYS(162, "Transfer source: keys granted", false),
    TRANSFER_SOURCE_SESSIONS_ACTIVE(163, "Transfer source: sessions holding pins (granted, revoking, quarantined)", true),
    TRANSFER_SOURCE_PINNED_BYTES(164, "Transfer source: bytes charged to the transfer budget (whole allocations)", true),
    TRANSFER_SOURCE_RELEASES(165, "Transfer source: sessions released by their requester", false),
    TRANSFER_SOURCE_DUPLICATE_AUTHORIZES(166, "Transfer source: duplicate authorizations answered again", false),
    TRANSFER_SOURCE_DUPLICATE_RELEASES(167, "Transfer source: duplicate releases of a released session", false),
    TRANSFER_SOURCE_UNKNOWN_SESSION_RELEASES(168, "Transfer source: releases of a session never held", false),
    TRANSFER_SOURCE_EXPIRIES(169, "Transfer source: sessions expired unreleased (session ttl)", false),
    TRANSFER_SOURCE_REVOCATIONS_COMPLETED(170, "Transfer source: revocations the transport completed (then unpinned)",
        false),
    TRANSFER_SOURCE_QUARANTINED_SESSIONS(171, "Transfer source: sessions quarantined (no revocation proof)", true),
    TRANSFER_SOURCE_QUARANTINED_BYTES(172, "Transfer source: bytes of quarantined sessions still charged", true),
    TRANSFER_SOURCE_REQUESTERS_LOST(173, "Transfer source: sessions whose requester left the member view", false),
    TRANSFER_SOURCE_ANSWERS_FAILED(174, "Transfer source: grants and release acks not sent (offer failed)", false),
    TRANSFER_SOURCE_PARTIAL_GRANTS(175, "Transfer source: grants covering only a leading run of the keys", false),
    TRANSFER_SOURCE_PENDING(176, "Transfer source: authorizations answered PENDING (SSD residences being prepared)", false),
    TRANSFER_SOURCE_BACKPRESSURE(177, "Transfer source: authorizations answered BACKPRESSURE (no export staging credit)", false),
    TRANSFER_SOURCE_SSD_PREPARES(178, "Transfer source: SSD residences read into export staging for peers", false),
    TRANSFER_SOURCE_SSD_STAGED_BYTES(179, "Transfer source: export staging bytes in use (SSD blocks prepared or being read)", true),
    TRANSFER_FETCHES_STARTED(180, "Transfer requester: peer fetches started (requester)", false),
    TRANSFER_FETCHES_SKIPPED(181, "Transfer requester: peer fetches not started (no free fetch or remote work disabled)", false),
    TRANSFER_AUTHORIZE_SENT(182, "Transfer requester: authorizations sent to sources", false),
    TRANSFER_GRANTS_RECEIVED(183, "Transfer requester: grants received", false),
    TRANSFER_REFUSALS_RECEIVED(184, "Transfer requester: refusals received", false),
    TRANSFER_AUTHORIZE_TIMEOUTS(185, "Transfer requester: authorizations unanswered in time", false),
    TRANSFER_ALTERNATIVES_TRIED(186, "Transfer requester: alternative sources tried after a refusal", false),
    TRANSFER_CANDIDATES_REMOVED(187, "Transfer requester: refused candidate versions removed from the candidate index", false),
    TRANSFER_BLOCKS_FETCHED(188, "Transfer requester: blocks restored from peers (verified)", false),
    TRANSFER_BYTES_FETCHED(189, "Transfer requester: bytes restored from peers (verified)", false),
    TRANSFER_READ_FAILURES(190, "Transfer requester: peer reads failed (prefix stopped)", false),
    TRANSFER_CHECKSUM_MISMATCHES(191, "Transfer requester: peer blocks whose CRC32C did not match (prefix stopped)", false),
    TRANSFER_BLOCKS_ADMITTED(192, "Transfer requester: peer blocks admitted into local DRAM", false),
    TRANSFER_RELEASES_SENT(193, "Transfer requester: releases sent to sources", false),
    TRANSFER_RELEASE_RETRIES(194, "Transfer requester: releases sent again (unacknowledged)", false),
    TRANSFER_RELEASES_ABANDONED(195, "Transfer requester: releases given up after the bounded attempts", false),
    TRANSFER_STALE_GRANTS(196, "Transfer requester: grants for no waiting fetch (released at once)", false),
    TRANSFER_FETCH_BUDGET_EXPIRED(197, "Transfer requester: fetches stopped by their time budget", false),
    TRANSFER_FETCHES_ACTIVE(198, "Transfer requester: peer fetches in progress (requester)", true),
    TRANSFER_READS_IN_FLIGHT(199, "Transfer requester: peer reads in flight (requester)", true),
    CHECKSUM_SSD_MISMATCHES(200, "Checksums: SSD reads whose bytes did not match the block's CRC32C (residence dropped)", false),
    CHECKSUM_BLOCKS_PUBLISHED(201, "Checksums: blocks checksummed at publish", false),
    CHECKSUM_BYTES_PUBLISHED(202, "Checksums: bytes checksummed at publish", false),
    CHECKSUM_BLOCKS_VERIFIED(203, "Checksums: blocks read back from SSD and verified", false),
    CHECKSUM_BYTES_VERIFIED(204, "Checksums: bytes read back from SSD and verified", false),
    TRANSFER_SOURCE_SSD_PREPARE_FAILURES(205, "Transfer source: failed SSD reads for peers (I/O or checksum; residence dropped)", false),
    TRANSFER_SOURCE_SSD_GRANTED_KEYS(206, "Transfer source: keys granted from export staging (SSD residences)", false),
    TRANSFER_SOURCE_SSD_UNCLAIMED_EXPIRED(207, "Transfer source: prepared SSD blocks freed unclaimed by any grant in time", false),
    TRANSFER_PREPARE_WAITS(208, "Transfer requester: authorizations asked again after a PENDING answer", false),
    TRANSFER_BUDGET_WAITS(209, "Transfer requester: budget waits (asked again after a BACKPRESSURE answer)", false),
    TRANSFER_UNANSWERED_SOURCE_SKIPS(210, "Transfer requester: candidates passed over (source left an authorization unanswered)", false),
    CATALOG_LOCAL_CONTINUATION_KEYS(211, "Catalog: lookup keys after the peer part answered from this Manager's DRAM", false),
    TRANSFER_LOCAL_SPAN_KEYS(212, "Transfer requester: keys of a fetch served from this Manager's DRAM (between peer spans)", false);

    /** {@link #POOL_TOUCH_STATE}: no touch has begun (also the state of mode off). */
    public static final int POOL_TOUCH_NOT_STARTED = 0;
    /** {@link #POOL_TOUCH_STATE}: the toucher is working through the pool. */
    public static final int POOL_TOUCH_TOUCHING = 1;
    /** {@link #POOL_TOUCH_STATE}: every byte of the pool is populated. */
    public static final int POOL_TOUCH_DONE = 2;
    /** {@link #POOL_TOUCH_STATE}: the Manager closed before the touch ended. */
    public static final int POOL_TOUCH_STOPPED = 3;
    /** {@link #POOL_TOUCH_STATE}: the kernel refused to populate (reason in the error log). */
    public static final int POOL_TOUCH_FAILED = 4;

    /** Type id of every system counter in the CnC counters section. */
    public static final int SYSTEM_COUNTER_TYPE_ID = 0;

    private static final Int2ObjectHashMap<SystemCounterDescriptor> BY_ID = new Int2ObjectHashMap<>();
    private static final SystemCounterDescriptor[] REJECTION_BY_STATUS = new SystemCounterDescriptor[32];

    static
    {
        for (final SystemCounterDescriptor descriptor : values())
        {
            if (null != BY_ID.put(descriptor.id, descriptor))
            {
                throw new IllegalStateException("duplicate counter id: " + descriptor.id);
            }
        }
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
    }

    private final int id;
    private final String label;
    private final boolean gauge;

    SystemCounterDescriptor(final int id, final String label, final boolean gauge)
    {
        this.id = id;
        this.label = label;
        this.gauge = gauge;
    }

    public boolean isGauge()
    {
        return gauge;
    }

    /**
     * @return the counter id, fixed.
     */
    public int id()
    {
        return id;
    }

    public int fixedId()
    {
        return id;
    }

    public int typeId()
    {
        return SYSTEM_COUNTER_TYPE_ID;
    }

    public String label()
    {
        return label;
    }

    /**
     * Descriptor for an id, or null.
     *
     * @param id counter id.
     * @return descriptor or null.
     */
    public static SystemCounterDescriptor get(final int id)
    {
        return BY_ID.get(id);
    }

    /**
     * The rejection counter for a non-OK status code.
     *
     * @param code the status code.
     * @return its rejection counter descriptor, {@link #REJECTED_INTERNAL_ERROR} for codes without one.
     */
    public static SystemCounterDescriptor rejection(final StatusCode code)
    {
        final int value = code.value();
        final SystemCounterDescriptor descriptor = value < REJECTION_BY_STATUS.length ? REJECTION_BY_STATUS[value] : null;
        return null == descriptor ? REJECTED_INTERNAL_ERROR : descriptor;
    }
}
