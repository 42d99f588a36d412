package io.orbitkv.codecs;

/**
 * The peer transfer path's fixed limits and defaults. Numbers the design states carry a {@code design:} note; the
 * others are choices of this implementation, written down in docs/transfer.md. Components take them through their
 * constructors or contexts so tests can exercise each edge with small values.
 */
public final class TransferLimits
{
    /**
     * design: at most 1024 transfer sessions held by one source.
     */
    public static final int MAX_SESSIONS = 1024;

    /**
     * Keys one authorization may name: the most a Lookup can extend past its local prefix.
     */
    public static final int MAX_KEYS_PER_AUTHORIZE = EngineRingLimits.MAX_PEER_KEYS_PER_LOOKUP;

    /**
     * Sessions one requesting node may hold at one source (the per-peer export limit), a quarter of the total so
     * one busy peer cannot take every session.
     */
    public static final int DEFAULT_MAX_SESSIONS_PER_PEER = MAX_SESSIONS / 4;

    /**
     * How long a granted session lives without a release. Long enough for a 128-key span of the largest blocks
     * over a slow link; a blocking Read that outlives it sees its reads refused.
     */
    public static final long DEFAULT_SESSION_TTL_MS = 30_000;

    /**
     * design: completion release uses bounded retries.
     */
    public static final int RELEASE_ATTEMPTS = 5;

    /**
     * Time between two attempts of one release.
     */
    public static final long RELEASE_RETRY_INTERVAL_MS = 200;

    /**
     * design: planning can try existing alternatives at most twice per fetch.
     */
    public static final int MAX_ALTERNATIVE_ATTEMPTS = 2;

    /**
     * Sources one fetch reads from at once.
     */
    public static final int MAX_CONCURRENT_SOURCES = 4;

    /**
     * Time one authorization may take before the requester gives up on that source.
     */
    public static final long AUTHORIZE_TIMEOUT_MS = 1_000;

    /**
     * How long a requester plans around a source that left an authorization unanswered (its connection down or the
     * Manager gone but still in the member view): two authorization timeouts, then it is asked again.
     */
    public static final long UNANSWERED_SOURCE_BACKOFF_MS = 2 * AUTHORIZE_TIMEOUT_MS;

    /**
     * Time one fetch (authorizations, reads and checks of a prefix) may take in all.
     */
    public static final long FETCH_BUDGET_MS = 5_000;

    /**
     * Time a requester waits before it asks a source again that answered PENDING (SSD residences being read into
     * export staging): about one SSD read of a large block.
     */
    public static final long PREPARE_RETRY_INTERVAL_MS = 2;

    /**
     * Time a requester waits before it asks a source again that answered BACKPRESSURE (no export staging credit):
     * long enough for another transfer of the source to end and free its staging.
     */
    public static final long BACKPRESSURE_RETRY_INTERVAL_MS = 10;

    /**
     * How long a source keeps an SSD block prepared in export staging for the requester to ask again: the requester's
     * whole fetch budget, after which nobody will.
     */
    public static final long STAGED_UNCLAIMED_TTL_MS = FETCH_BUDGET_MS;

    /**
     * Most blocks export staging holds at once, whatever its size (bounds its slot table).
     */
    public static final int MAX_STAGED_BLOCKS = 64 * 1024;

    private TransferLimits()
    {
    }
}
