package io.orbitkv.codecs;

/**
 * The distributed catalog's fixed limits and defaults, each a number from the design ("Implemented discovery
 * behavior", "Implemented placement behavior", "Inventory, replication and recovery"). Components take the default
 * through their constructors so tests can exercise the edge with small values.
 */
public final class CatalogLimits
{
    /**
     * Logical shards of the StateKey space.
     */
    public static final int SHARD_COUNT = StateKeyShard.SHARD_COUNT;

    /**
     * design: cold lookups use batches of at most 128 keys.
     */
    public static final int MAX_COLD_QUERY_KEYS = 128;

    /**
     * design: cold lookups use batches of at most 64 KiB of namespace/hash bytes.
     */
    public static final int MAX_COLD_QUERY_KEY_BYTES = 64 * 1024;

    /**
     * design: each row carries up to four candidates.
     */
    public static final int MAX_CANDIDATES_PER_ROW = 4;

    /**
     * design: each cold query has a three-second total RPC budget after coalescing.
     */
    public static final long COLD_QUERY_BUDGET_MS = 3_000;

    /**
     * Time one copy of a shard has to answer a cold query before the keys are asked of the next copy, within the
     * budget above: a third of it, so three copies can each be tried.
     */
    public static final long COLD_QUERY_ATTEMPT_MS = COLD_QUERY_BUDGET_MS / 3;

    /**
     * design: the source-channel LRU retains at most 64 clients.
     */
    public static final int SOURCE_CHANNEL_CLIENTS = 64;

    /**
     * design: journals total 16 MiB per owner.
     */
    public static final long JOURNAL_BUDGET_BYTES = 16L * 1024 * 1024;

    /**
     * design: each catalog host defaults to 256 MiB of accounted index and retry storage across its shards.
     */
    public static final long HOST_BUDGET_BYTES = 256L * 1024 * 1024;

    /**
     * design: the candidate index has a 16 MiB logical byte budget.
     */
    public static final long CANDIDATE_INDEX_BUDGET_BYTES = 16L * 1024 * 1024;

    /**
     * design: candidate hints live five seconds; reads do not extend it.
     */
    public static final long CANDIDATE_TTL_MS = 5_000;

    private CatalogLimits()
    {
    }
}
