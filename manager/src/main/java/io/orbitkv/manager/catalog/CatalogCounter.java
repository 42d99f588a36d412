package io.orbitkv.manager.catalog;

import io.orbitkv.manager.status.FixedCounter;
import io.orbitkv.manager.status.SystemCounters;

/**
 * The catalog's counters: the owner's inventory, journal and streams to catalog hosts, the host's shard views and
 * cold-query answers, and the requester's discovery (candidate index, cold queries).
 * <p>
 * Each has a fixed id, which {@code orbitkv stat}, /metrics and dashboards key on: never renumber or reuse one; a new
 * counter takes an id no family holds ({@link SystemCounters} lays every family out by id).
 */
public enum CatalogCounter implements FixedCounter
{
    INVENTORY_ADDS(90, "Catalog: residences added to the owner inventory (journalled)", false),
    INVENTORY_REMOVES(91, "Catalog: residences removed from the owner inventory (journalled)", false),
    INVENTORY_FULL(92, "Catalog: residences not announced (inventory or namespace table full)", false),
    JOURNAL_BYTES(93, "Catalog: owner journal bytes in use", true),
    JOURNAL_OVERFLOWS(94, "Catalog: journal overflows that forced a host resync", false),
    RECORDS_SENT(95, "Catalog: delta records sent to catalog hosts", false),
    SNAPSHOTS_STARTED(96, "Catalog: snapshot cuts started for catalog hosts (resyncs)", false),
    SNAPSHOTS_COMPLETED(97, "Catalog: snapshot cuts sent completely", false),
    SNAPSHOTS_FAILED(98, "Catalog: snapshot cuts that exhausted their retry budget", false),
    STREAM_REWINDS(99, "Catalog: owner streams resent from the last ack (no progress in time)", false),
    UPDATE_LAG_US(100, "Catalog: last update lag, owner append to host ack (us)", true),
    UPDATE_LAG_MAX_US(101, "Catalog: max update lag, owner append to host ack (us)", true),
    HOSTED_SHARDS(102, "Catalog: shards this Manager hosts", true),
    INCOMPLETE_SHARDS(103, "Catalog: hosted shards with incomplete coverage", true),
    INDEX_BYTES(104, "Catalog: host index bytes reserved (views and retry storage)", true),
    RECORDS_APPLIED(105, "Catalog: owner records applied as catalog host", false),
    HOST_RESYNCS(106, "Catalog: receiving states that needed a new baseline", false),
    CANDIDATE_HITS(107, "Catalog: candidate index hits (no catalog RPC)", false),
    CANDIDATE_BYTES(108, "Catalog: candidate index logical bytes", true),
    COLD_QUERIES(109, "Catalog: cold query RPCs sent (one per catalog host per batch)", false),
    COLD_KEYS(110, "Catalog: keys asked in cold queries", false),
    COLD_COALESCED(111, "Catalog: keys not asked again because a query for them was in flight", false),
    COLD_TIMEOUTS(112, "Catalog: discoveries answered at the 3 s budget with hosts missing", false),
    DISCOVERY_SKIPPED(113, "Catalog: peer lookups answered locally (remote work disabled or no view)", false),
    PEER_KEYS(114, "Catalog: lookup keys answered with peer candidates", false),
    COLD_QUERIES_SERVED(115, "Catalog: cold queries answered as catalog host", false),
    COLD_ROWS_SERVED(116, "Catalog: cold query rows answered as catalog host", false),
    COLD_ROWS_INCOMPLETE(117, "Catalog: rows answered from an incomplete shard view (prove nothing)", false),
    COLD_CLAIMS_CORRECTED(118, "Catalog: cold query keys whose named shard was wrong", false),
    COLD_QUERIES_REFUSED(119, "Catalog: cold queries refused (route or keys; reasons in the peer counters)",
        false),
    COLD_QUERIES_MALFORMED(120, "Catalog: cold query frames malformed, of another schema or template", false),
    LOCAL_HOST_KEYS(121, "Catalog: discovery keys answered from shards this Manager hosts (no RPC)", false),
    INCARNATIONS_RETIRED(143, "Catalog: owner incarnations retired as catalog host (evidence dropped)", false),
    LOCAL_CONTINUATION_KEYS(211, "Catalog: lookup keys after the peer part answered from this Manager's DRAM", false),
    COLD_FAILOVERS(214, "Catalog: cold query keys asked again of another copy of their shard", false),
    COLD_ATTEMPT_TIMEOUTS(215, "Catalog: cold queries a copy left unanswered past its attempt time", false),
    COLD_KEYS_UNAVAILABLE(216, "Catalog: discovery keys no copy of their shard could answer (unavailable, not absent)",
        false),
    REPLICA_LAG_MAX_RECORDS(217, "Catalog: most owner journal records a copy's stream has not had acknowledged", true),
    STALE_GENERATION_ROUTES(230, "Catalog: routes refused for naming an earlier placement generation", false),
    PLACEMENT_STATES_APPLIED(231, "Catalog: placement states applied (a new generation or move phase)", false),
    COVERAGE_REPORTS(232, "Catalog: coverage reports handed to the reconciler (shards moving here complete)", false);

    private final Spec spec;

    CatalogCounter(final int id, final String label, final boolean gauge)
    {
        this.spec = new Spec(id, label, gauge);
    }

    public Spec spec()
    {
        return spec;
    }
}
