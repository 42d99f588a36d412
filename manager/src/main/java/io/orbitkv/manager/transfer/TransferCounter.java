package io.orbitkv.manager.transfer;

import io.orbitkv.manager.status.FixedCounter;
import io.orbitkv.manager.status.SystemCounters;

/**
 * The transfer part's counters: as a source (authorizations refused by reason, grants, sessions, pins, SSD export
 * staging) and as a requester (fetches, grants and refusals, verified blocks, releases).
 * <p>
 * Each has a fixed id, which {@code orbitkv stat}, /metrics and dashboards key on: never renumber or reuse one; a new
 * counter takes an id no family holds ({@link SystemCounters} lays every family out by id).
 */
public enum TransferCounter implements FixedCounter
{
    SOURCE_REJECTED_STALE_INCARNATION(150,
        "Transfer source: requests addressed to another incarnation of this Manager", false),
    SOURCE_REJECTED_FENCED(151, "Transfer source: authorizations refused, registration expired or fenced", false),
    SOURCE_REJECTED_UNKNOWN_REQUESTER(152,
        "Transfer source: authorizations refused, requester not in the member view", false),
    SOURCE_REJECTED_MISSING(153, "Transfer source: keys refused, not resident in the asked tier", false),
    SOURCE_REJECTED_STALE_SEQUENCE(154, "Transfer source: keys refused, another insertion sequence", false),
    SOURCE_REJECTED_LENGTH_MISMATCH(155, "Transfer source: keys refused, another length", false),
    SOURCE_REJECTED_OVER_BUDGET(156, "Transfer source: keys refused, transfer budget full", false),
    SOURCE_REJECTED_TOO_MANY_SESSIONS(157, "Transfer source: authorizations refused, session limit", false),
    SOURCE_REJECTED_PEER_LIMIT(158, "Transfer source: authorizations refused, per-peer session limit", false),
    SOURCE_REJECTED_MALFORMED(159, "Transfer source: authorizations refused, malformed", false),
    SOURCE_REJECTED_EXPORT(160, "Transfer source: authorizations refused, the transport would not export", false),
    SOURCE_GRANTS(161, "Transfer source: sessions granted", false),
    SOURCE_GRANTED_KEYS(162, "Transfer source: keys granted", false),
    SOURCE_SESSIONS_ACTIVE(163, "Transfer source: sessions holding pins (granted, revoking, quarantined)", true),
    SOURCE_PINNED_BYTES(164, "Transfer source: bytes charged to the transfer budget (whole allocations)", true),
    SOURCE_RELEASES(165, "Transfer source: sessions released by their requester", false),
    SOURCE_DUPLICATE_AUTHORIZES(166, "Transfer source: duplicate authorizations answered again", false),
    SOURCE_DUPLICATE_RELEASES(167, "Transfer source: duplicate releases of a released session", false),
    SOURCE_UNKNOWN_SESSION_RELEASES(168, "Transfer source: releases of a session never held", false),
    SOURCE_EXPIRIES(169, "Transfer source: sessions expired unreleased (session ttl)", false),
    SOURCE_REVOCATIONS_COMPLETED(170, "Transfer source: revocations the transport completed (then unpinned)",
        false),
    SOURCE_QUARANTINED_SESSIONS(171, "Transfer source: sessions quarantined (no revocation proof)", true),
    SOURCE_QUARANTINED_BYTES(172, "Transfer source: bytes of quarantined sessions still charged", true),
    SOURCE_REQUESTERS_LOST(173, "Transfer source: sessions whose requester left the member view", false),
    SOURCE_ANSWERS_FAILED(174, "Transfer source: grants and release acks not sent (offer failed)", false),
    SOURCE_PARTIAL_GRANTS(175, "Transfer source: grants covering only a leading run of the keys", false),
    SOURCE_PENDING(176, "Transfer source: authorizations answered PENDING (SSD residences being prepared)", false),
    SOURCE_BACKPRESSURE(177, "Transfer source: authorizations answered BACKPRESSURE (no export staging credit)", false),
    SOURCE_SSD_PREPARES(178, "Transfer source: SSD residences read into export staging for peers", false),
    SOURCE_SSD_STAGED_BYTES(179, "Transfer source: export staging bytes in use (SSD blocks prepared or being read)", true),
    FETCHES_STARTED(180, "Transfer requester: peer fetches started (requester)", false),
    FETCHES_SKIPPED(181, "Transfer requester: peer fetches not started (no free fetch or remote work disabled)", false),
    AUTHORIZE_SENT(182, "Transfer requester: authorizations sent to sources", false),
    GRANTS_RECEIVED(183, "Transfer requester: grants received", false),
    REFUSALS_RECEIVED(184, "Transfer requester: refusals received", false),
    AUTHORIZE_TIMEOUTS(185, "Transfer requester: authorizations unanswered in time", false),
    ALTERNATIVES_TRIED(186, "Transfer requester: alternative sources tried after a refusal", false),
    CANDIDATES_REMOVED(187, "Transfer requester: refused candidate versions removed from the candidate index", false),
    BLOCKS_FETCHED(188, "Transfer requester: blocks restored from peers (verified)", false),
    BYTES_FETCHED(189, "Transfer requester: bytes restored from peers (verified)", false),
    READ_FAILURES(190, "Transfer requester: peer reads failed (prefix stopped)", false),
    CHECKSUM_MISMATCHES(191, "Transfer requester: peer blocks whose CRC32C did not match (prefix stopped)", false),
    BLOCKS_ADMITTED(192, "Transfer requester: peer blocks admitted into local DRAM", false),
    RELEASES_SENT(193, "Transfer requester: releases sent to sources", false),
    RELEASE_RETRIES(194, "Transfer requester: releases sent again (unacknowledged)", false),
    RELEASES_ABANDONED(195, "Transfer requester: releases given up after the bounded attempts", false),
    STALE_GRANTS(196, "Transfer requester: grants for no waiting fetch (released at once)", false),
    FETCH_BUDGET_EXPIRED(197, "Transfer requester: fetches stopped by their time budget", false),
    FETCHES_ACTIVE(198, "Transfer requester: peer fetches in progress (requester)", true),
    READS_IN_FLIGHT(199, "Transfer requester: peer reads in flight (requester)", true),
    SOURCE_SSD_PREPARE_FAILURES(205, "Transfer source: failed SSD reads for peers (I/O or checksum; residence dropped)", false),
    SOURCE_SSD_GRANTED_KEYS(206, "Transfer source: keys granted from export staging (SSD residences)", false),
    SOURCE_SSD_UNCLAIMED_EXPIRED(207, "Transfer source: prepared SSD blocks freed unclaimed by any grant in time", false),
    PREPARE_WAITS(208, "Transfer requester: authorizations asked again after a PENDING answer", false),
    BUDGET_WAITS(209, "Transfer requester: budget waits (asked again after a BACKPRESSURE answer)", false),
    UNANSWERED_SOURCE_SKIPS(210, "Transfer requester: candidates passed over (source left an authorization unanswered)", false),
    LOCAL_SPAN_KEYS(212, "Transfer requester: keys of a fetch served from this Manager's DRAM (between peer spans)", false),
    CHECKSUMS_FROM_TRANSPORT(252, "Transfer requester: peer blocks checked against the sum the transport took as they landed",
        false),
    READ_TIMEOUTS(325, "Transfer requester: peer reads timed out (counted in the failed reads too; not an error)", false),
    READS_LOST(327, "Transfer requester: peer reads lost with their connection or peer handle (in the failed reads too)",
        false),
    READS_REFUSED(328, "Transfer requester: peer reads the source refused, e.g. a revoked session (in the failed reads too)",
        false);

    private final Spec spec;

    TransferCounter(final int id, final String label, final boolean gauge)
    {
        this.spec = new Spec(id, label, gauge);
    }

    public Spec spec()
    {
        return spec;
    }
}
