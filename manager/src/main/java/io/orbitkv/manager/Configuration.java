package io.orbitkv.manager;

import io.orbitkv.codecs.CatalogLimits;
import io.orbitkv.codecs.TransferLimits;
import io.orbitkv.manager.transfer.TransportSupplier;
import io.orbitkv.manager.transfer.Transports;
import io.orbitkv.manager.idle.IdleSleep;
import io.orbitkv.manager.idle.IdleWait;
import io.orbitkv.manager.idle.WaitingBackoffIdleStrategy;
import io.orbitkv.manager.peer.PeerTransport;
import io.orbitkv.manager.transfer.PeerAdmission;
import java.io.File;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.agrona.SystemUtil;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.SystemNanoClock;
import org.agrona.concurrent.YieldingIdleStrategy;

/**
 * Every setting of a Manager, in one place: each has a system property ({@code *_PROP_NAME}), a default
 * ({@code *_DEFAULT}, absent only where "unset" is the default) and a typed static getter that reads the property and
 * falls back to the default. Values are parsed here only: sizes take k/m/g suffixes (powers of 1024), durations a
 * ns/us/ms/s suffix, booleans exactly {@code true} or {@code false}; a value that does not parse fails with an
 * {@link IllegalArgumentException} naming the property and the value, never falls back silently.
 * <p>
 * {@link ManagerContext} starts from these getters and its setters override them; {@code orbitkv manager} shows them
 * as its defaults and sets only the flags given on its command line. So the precedence is: a flag (or a context
 * setter), else the system property, else the default (docs/configuration.md). Range checks of the values are the
 * context's {@link ManagerContext#conclude()}. Design limits that no one sets are plain constants without a property.
 * <p>
 * Longer than our usual file on purpose: it is the one list of the Manager's settings, grouped by part (ring, pool,
 * SSD tier, membership, catalog, idle), and splitting it would give a setting more than one place to be looked up.
 */
public final class Configuration
{
    /** Parent of the default directories: one directory per Manager name (tmpfs, so the CnC never hits disk). */
    public static final String DIR_PARENT_DEFAULT = "/dev/shm/orbitkv";

    public static final String DIR_PROP_NAME = "orbitkv.manager.dir";

    public static final String NAME_PROP_NAME = "orbitkv.manager.name";
    public static final String NAME_DEFAULT = "default";

    public static final String POOL_BYTES_PROP_NAME = "orbitkv.manager.pool.bytes";
    public static final long POOL_BYTES_DEFAULT = 1L << 30;

    public static final String MAX_BLOCK_BYTES_PROP_NAME = "orbitkv.manager.max.block.bytes";
    public static final int MAX_BLOCK_BYTES_DEFAULT = 64 << 20;

    public static final String INDEX_BUDGET_BYTES_PROP_NAME = "orbitkv.manager.index.budget.bytes";
    public static final long INDEX_BUDGET_BYTES_DEFAULT = 64L << 20;

    public static final String MAX_CLIENTS_PROP_NAME = "orbitkv.manager.max.clients";
    public static final int MAX_CLIENTS_DEFAULT = 64;

    /** Hard ceiling on client slots, as the CnC layout allows. */
    public static final int MAX_CLIENTS_LIMIT = 4096;

    public static final String REQUEST_RING_BYTES_PROP_NAME = "orbitkv.manager.request.ring.bytes";
    public static final int REQUEST_RING_BYTES_DEFAULT = 1 << 20;

    public static final String RESPONSE_RING_BYTES_PROP_NAME = "orbitkv.manager.response.ring.bytes";
    /** Fits the largest response (peer candidates included) as one ring message; see MIN_RESPONSE_RING_BYTES. */
    public static final int RESPONSE_RING_BYTES_DEFAULT = 128 << 10;

    public static final String CLIENT_TIMEOUT_PROP_NAME = "orbitkv.manager.client.timeout";
    public static final long CLIENT_TIMEOUT_NS_DEFAULT = TimeUnit.SECONDS.toNanos(5);

    public static final String MAX_DATA_REGION_BYTES_PROP_NAME = "orbitkv.manager.max.data.region.bytes";
    public static final long MAX_DATA_REGION_BYTES_DEFAULT = 16L << 30;

    /**
     * How the pool is faulted in so that publishes do not pay for page faults: {@code background} (default: on a
     * helper thread while the Manager already serves), {@code blocking} (before it is ready) or {@code off} (by first
     * use). {@code true} and {@code false}, the values of the older boolean setting, mean blocking and off.
     */
    public static final String POOL_PRETOUCH_PROP_NAME = "orbitkv.manager.pool.pretouch";
    public static final PoolPretouch POOL_PRETOUCH_DEFAULT = PoolPretouch.BACKGROUND;

    /**
     * Pause after each pre-touched chunk, a duration; 0 (the default) in production. A diagnostic throttle: it makes
     * a touch in progress observable (tests publish into a pool still being touched) and lets an operator see what a
     * slow touch would do to serving.
     */
    public static final String POOL_PRETOUCH_PAUSE_PROP_NAME = "orbitkv.manager.pool.pretouch.pause";
    public static final long POOL_PRETOUCH_PAUSE_NS_DEFAULT = 0;

    /**
     * Bytes faulted in per {@code MADV_POPULATE_WRITE} call: one huge page, so the toucher sees a stop request within
     * one call (tens of ms at worst on the bench VM) and its progress counter moves in small steps.
     */
    public static final long POOL_TOUCH_CHUNK_BYTES = 2L << 20;

    /** Nice value of the background toucher thread: the least favoured, so agents and engines always run first. */
    public static final int POOL_TOUCH_NICE = 19;

    /**
     * How long {@link Manager#close()} waits for the toucher thread to stop. Past it the pool is left mapped (and
     * the failure logged) rather than unmapped under a thread that may still touch it.
     */
    public static final long POOL_TOUCH_STOP_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(10);

    public static final String COPY_CHUNK_BYTES_PROP_NAME = "orbitkv.manager.copy.chunk.bytes";
    public static final int COPY_CHUNK_BYTES_DEFAULT = 8 << 20;

    public static final String IDLE_STRATEGY_PROP_NAME = "orbitkv.manager.idle.strategy";
    /** The name of the Manager's own backoff, the one strategy that lingers, waits on the peer socket and sleeps. */
    public static final String IDLE_STRATEGY_BACKOFF = "backoff";
    public static final String IDLE_STRATEGY_DEFAULT = IDLE_STRATEGY_BACKOFF;

    /**
     * Timer slack of the agent thread, in nanoseconds: how late the kernel may end its parks to batch wake-ups; 0
     * (the default) leaves the kernel's, 50 us for a normal thread. With it a backoff park of 1 us sleeps ~90 us on
     * the 2-vCPU bench VM and with 1 us of slack ~13 us (benches/tools/ParkLatency.java). Shorter sleeps mean more
     * wake-ups: on that VM, with three Managers and two engines sharing two cores, 1 us of slack made the engine-level
     * cold lookup slower in six alternating pairs of runs (benches/RESULTS.md, fifth session). A Manager whose agent
     * has a core of its own is where to try 1000.
     */
    public static final String AGENT_TIMER_SLACK_NS_PROP_NAME = "orbitkv.manager.agent.timer.slack.ns";
    public static final long AGENT_TIMER_SLACK_NS_DEFAULT = 0L;

    /**
     * Whether a clustered Manager's idle agent sleeps in epoll on its peer socket (a peer's datagram ends the sleep)
     * rather than parking on a timer. Only the {@code backoff} idle strategy sleeps this way.
     */
    public static final String IDLE_PEER_WAIT_PROP_NAME = "orbitkv.manager.idle.peer.wait";
    public static final boolean IDLE_PEER_WAIT_DEFAULT = true;

    /**
     * Whether the idle agent, after a spell of parking ({@link #IDLE_SLEEP_AFTER_PROP_NAME}), sleeps until an engine
     * rings the doorbell, a peer's datagram arrives or its longest sleep is up (docs/engine-ring.md, "Waking a sleeping
     * Manager"). Off, it parks at most 100 us at a time for ever: ~10,000 wake-ups a second and a quarter of a core
     * or more on the 2-vCPU bench VM, for the latency of never having to be woken. Only the {@code backoff} idle
     * strategy sleeps.
     */
    public static final String IDLE_SLEEP_PROP_NAME = "orbitkv.manager.idle.sleep";
    public static final boolean IDLE_SLEEP_DEFAULT = true;

    /** How long the idle agent parks (backoff up to 100 us) before it sleeps; work in between starts it again. */
    public static final String IDLE_SLEEP_AFTER_PROP_NAME = "orbitkv.manager.idle.sleep.after";
    public static final long IDLE_SLEEP_AFTER_NS_DEFAULT = TimeUnit.MILLISECONDS.toNanos(1);

    /**
     * How long after its last work the idle agent yields before it parks: an engine's next request within it finds
     * the agent awake rather than paying a wake-up (~15-30 us on the 2-vCPU bench VM). It costs up to this much CPU
     * after each burst of work and nothing to a Manager without requests; 0 parks after the spins and yields alone
     * (~4 us). Only the {@code backoff} idle strategy lingers.
     */
    public static final String IDLE_LINGER_PROP_NAME = "orbitkv.manager.idle.linger";
    public static final long IDLE_LINGER_NS_DEFAULT = TimeUnit.MICROSECONDS.toNanos(50);

    /** Longest accepted {@link #IDLE_LINGER_PROP_NAME}. */
    public static final long MAX_IDLE_LINGER_NS = TimeUnit.MILLISECONDS.toNanos(10);

    /** Longest accepted {@link #IDLE_SLEEP_AFTER_PROP_NAME}. */
    public static final long MAX_IDLE_SLEEP_AFTER_NS = TimeUnit.SECONDS.toNanos(1);

    /**
     * The longest single sleep, and so how late an idle Manager runs its timers: heartbeat, client liveness sweeps,
     * the media driver's heartbeats to peers (every 100 ms) and its client keepalives (every 500 ms). Capped at a
     * quarter of the client liveness timeout so engines never see a stale heartbeat.
     */
    public static final String IDLE_SLEEP_MAX_PROP_NAME = "orbitkv.manager.idle.sleep.max";
    public static final long IDLE_SLEEP_MAX_NS_DEFAULT = TimeUnit.MILLISECONDS.toNanos(100);

    /** A sleep lasts at most the client liveness timeout over this, so engines always find the heartbeat fresh. */
    public static final int IDLE_SLEEP_LIVENESS_FRACTION = 4;

    /** Accepted range of {@link #IDLE_SLEEP_MAX_PROP_NAME}. */
    public static final long MIN_IDLE_SLEEP_MAX_NS = TimeUnit.MILLISECONDS.toNanos(1);
    public static final long MAX_IDLE_SLEEP_MAX_NS = TimeUnit.SECONDS.toNanos(10);

    /**
     * How long a clustered Manager keeps retrying its join (placement check and first registration) while etcd does
     * not answer, before it gives up. Engines are served meanwhile. Value: a duration with a unit (ms, s) or a bare
     * number of seconds.
     */
    public static final String JOIN_TIMEOUT_PROP_NAME = "orbitkv.manager.join.timeout";

    /**
     * Default time a Manager keeps trying to join (placement check and first registration) before it gives up. The
     * first calls of a fresh JVM pay for class loading and connection set-up: measured here ~0.9 s unloaded and
     * 2.4-2.8 s with three JVMs starting on two busy cores, so one call deadline alone is not a fair verdict on
     * etcd's reachability.
     */
    public static final long JOIN_TIMEOUT_MS_DEFAULT = 60_000;

    /** {@link #JOIN_TIMEOUT_MS_DEFAULT} as a flag value. */
    public static final String JOIN_TIMEOUT_DEFAULT_TEXT = "60s";

    /** Shortest accepted join timeout. */
    public static final long MIN_JOIN_TIMEOUT_MS = 100;

    /** etcd client URLs, comma-separated; unset (the default) keeps the Manager standalone, with no jetcd threads. */
    public static final String ETCD_ENDPOINTS_PROP_NAME = "orbitkv.manager.etcd.endpoints";

    /**
     * Group engines of other users run in: the Manager's directory and shared files are widened to it (0750/0660,
     * group set). Unset (the default): owner-only (0700/0600).
     */
    public static final String ENGINE_GROUP_PROP_NAME = "orbitkv.manager.engine.group";

    /** PEM CA certificate that signed etcd's server certificate; set, the etcd connection uses TLS (https://). */
    public static final String ETCD_CA_PROP_NAME = "orbitkv.manager.etcd.ca";

    /** PEM client certificate presented to etcd (needs {@link #ETCD_CA_PROP_NAME} and {@link #ETCD_KEY_PROP_NAME}). */
    public static final String ETCD_CERT_PROP_NAME = "orbitkv.manager.etcd.cert";

    /** Unencrypted PKCS#8 PEM private key of {@link #ETCD_CERT_PROP_NAME}. */
    public static final String ETCD_KEY_PROP_NAME = "orbitkv.manager.etcd.key";

    /** etcd user to authenticate as (needs {@link #ETCD_PASSWORD_FILE_PROP_NAME}). */
    public static final String ETCD_USER_PROP_NAME = "orbitkv.manager.etcd.user";

    /** Owner-only file holding the etcd user's password. */
    public static final String ETCD_PASSWORD_FILE_PROP_NAME = "orbitkv.manager.etcd.password.file";

    /**
     * Owner-only file (0600) holding the cluster secret, at least 32 bytes, that every Manager of the cluster shares:
     * peer frames carry a MAC under a key derived from it and transfer connections prove it. Unset: the peer channel is
     * not authenticated (docs/security.md).
     */
    public static final String CLUSTER_SECRET_FILE_PROP_NAME = "orbitkv.manager.cluster.secret.file";
    public static final String TRANSPORT_TLS_CERT_PROP_NAME = "orbitkv.manager.transport.tls.cert";
    public static final String TRANSPORT_TLS_KEY_PROP_NAME = "orbitkv.manager.transport.tls.key";
    public static final String TRANSPORT_TLS_CA_PROP_NAME = "orbitkv.manager.transport.tls.ca";

    /** Cluster to join (an etcd key segment); required with etcd endpoints, no default. */
    public static final String CLUSTER_NAME_PROP_NAME = "orbitkv.manager.cluster.name";

    /** Stable node id of this Manager in its cluster; required with etcd endpoints, no default. */
    public static final String NODE_ID_PROP_NAME = "orbitkv.manager.node.id";

    /**
     * The cluster's 1-16 catalog node ids; required with etcd endpoints, no default. They seed an empty cluster's
     * placement; a Manager joining a cluster follows the placement installed in etcd.
     */
    public static final String CATALOG_NODES_PROP_NAME = "orbitkv.manager.catalog.nodes";

    /**
     * Agreed seed of the placement's rendezvous scores ("" for none): part of the placement it seeds with the catalog
     * nodes; the same nodes under another seed place shards independently.
     */
    public static final String PLACEMENT_SEED_PROP_NAME = "orbitkv.manager.placement.seed";

    /**
     * Copies of each catalog shard, held by the shard's R highest-ranked catalog nodes (with fewer nodes, every node
     * holds every shard). Part of the placement: with the catalog nodes it seeds an empty cluster's placement; a
     * Manager joining a cluster follows the placement installed in etcd (orbitkv placement set changes it).
     */
    public static final String CATALOG_REPLICAS_PROP_NAME = "orbitkv.manager.catalog.replicas";
    public static final int CATALOG_REPLICAS_DEFAULT = 3;

    /**
     * Shard moves a placement transition runs at once while this Manager is the elected placement reconciler
     * (1-16); more finish a transition sooner, fewer keep the streams and copying of a move bounded.
     */
    public static final String MAX_SHARD_MOVES_PROP_NAME = "orbitkv.manager.max.shard.moves";
    public static final int MAX_SHARD_MOVES_DEFAULT =
        io.orbitkv.manager.membership.MembershipConfiguration.MAX_SHARD_MOVES_DEFAULT;

    /** Lease TTL of the member record, in seconds (design: --membership-ttl-secs, default 10). */
    public static final String MEMBERSHIP_TTL_SECS_PROP_NAME = "orbitkv.manager.membership.ttl.secs";
    public static final int MEMBERSHIP_TTL_SECS_DEFAULT = 10;

    /**
     * Shortest accepted lease TTL. Measured on this stack (notes/etcd.md): with 2 s leases were lost across a
     * 4 s etcd restart and across leader elections; 10 s survived both. jetcd also drops a lease locally once a
     * whole TTL passes without a keepalive reply.
     */
    public static final int MIN_MEMBERSHIP_TTL_SECS = 10;

    /** Deadline of every etcd call, in milliseconds: an unreachable etcd must never hang a thread. */
    public static final String ETCD_DEADLINE_MS_PROP_NAME = "orbitkv.manager.etcd.deadline.ms";
    public static final long ETCD_DEADLINE_MS_DEFAULT = 2_000;

    /** Shortest etcd call deadline accepted. */
    public static final long MIN_ETCD_DEADLINE_MS = 100;

    /**
     * HOST:PORT of the catalog's Aeron UDP endpoint. The default binds loopback with a port the OS picks (the bound
     * port is what the member record advertises); set a routable HOST:PORT for Managers on several hosts.
     */
    public static final String PEER_ENDPOINT_PROP_NAME = "orbitkv.manager.peer.endpoint";
    public static final String PEER_ENDPOINT_DEFAULT = "127.0.0.1:0";

    /** Payload bytes per peer datagram: {@code auto} (the interface's MTU) or a number; see {@link #parsePeerMtu}. */
    public static final String PEER_MTU_PROP_NAME = "orbitkv.manager.peer.mtu";
    public static final int PEER_MTU_DEFAULT = PeerTransport.AUTO_MTU;

    /**
     * Where the built-in transport listens for peers' reads (HOST:PORT; port 0 picks a free port, and grants carry
     * the bound address); set a routable HOST:PORT for Managers on several hosts.
     */
    public static final String TRANSFER_ENDPOINT_PROP_NAME = "orbitkv.manager.transfer.endpoint";
    public static final String TRANSFER_ENDPOINT_DEFAULT = "127.0.0.1:0";

    /** How block bytes move between Managers: the built-in transport or Mooncake TE (with {@link #TE_LIBRARY_PROP_NAME}). */
    public static final String TRANSPORT_PROP_NAME = "orbitkv.manager.transport";
    public static final TransportKind TRANSPORT_DEFAULT = TransportKind.BUILTIN;

    /** Path of a Mooncake Transfer Engine library (libtransfer_engine.so) for {@code --transport=mooncake}. */
    public static final String TE_LIBRARY_PROP_NAME = "orbitkv.manager.te.library";

    /** Connections the built-in transport opens to each peer; a large read is split across them. */
    public static final String TRANSFER_STREAMS_PROP_NAME = "orbitkv.manager.transfer.streams";
    public static final int TRANSFER_STREAMS_DEFAULT = 4;
    public static final int MIN_TRANSFER_STREAMS = 1;
    public static final int MAX_TRANSFER_STREAMS = 16;

    /**
     * Whether a block restored from a peer is also kept in local DRAM: off, always or second-hit. Off by default: on
     * the conversation trace through four Managers (benches/RESULTS.md) a replica costs a slot another block would
     * hold, and off gives the highest hit fraction and the lowest TTFT of the three.
     */
    public static final String PEER_ADMISSION_PROP_NAME = "orbitkv.manager.peer.admission";
    public static final PeerAdmission.Policy PEER_ADMISSION_DEFAULT = PeerAdmission.Policy.OFF;

    /** The window in which a second fetch of a block from a peer admits it (second-hit). */
    public static final String PEER_ADMISSION_WINDOW_PROP_NAME = "orbitkv.manager.peer.admission.window";
    public static final long PEER_ADMISSION_WINDOW_NS_DEFAULT = TimeUnit.SECONDS.toNanos(60);

    /**
     * Bytes a transfer source may hold pinned for peers, counted in whole allocations (the slab size class of each
     * pinned entry); 0 means half the pool (design: default half the pool).
     */
    public static final String TRANSFER_BUDGET_PROP_NAME = "orbitkv.manager.transfer.budget";
    public static final long TRANSFER_BUDGET_DEFAULT = 0;

    /** Transfer sessions a source holds at once (design: at most 1024). */
    public static final String TRANSFER_MAX_SESSIONS_PROP_NAME = "orbitkv.manager.transfer.max.sessions";
    public static final int TRANSFER_MAX_SESSIONS_DEFAULT = TransferLimits.MAX_SESSIONS;

    /** Transfer sessions one requesting peer may hold at this source (the per-peer export limit). */
    public static final String TRANSFER_SESSIONS_PER_PEER_PROP_NAME = "orbitkv.manager.transfer.sessions.per.peer";
    public static final int TRANSFER_SESSIONS_PER_PEER_DEFAULT = TransferLimits.DEFAULT_MAX_SESSIONS_PER_PEER;

    /** How long a granted transfer session lives without a release. */
    public static final String TRANSFER_SESSION_TTL_PROP_NAME = "orbitkv.manager.transfer.session.ttl";
    public static final long TRANSFER_SESSION_TTL_NS_DEFAULT =
        TimeUnit.MILLISECONDS.toNanos(TransferLimits.DEFAULT_SESSION_TTL_MS);

    /**
     * Export staging of a transfer source: DRAM, registered with the transfer transport, in which SSD-only residences
     * are prepared for peers (separate from --transfer-budget and from --ssd-staging-bytes); 0 serves DRAM only.
     */
    public static final String TRANSFER_SSD_STAGING_BYTES_PROP_NAME = "orbitkv.manager.transfer.ssd.staging.bytes";
    public static final long TRANSFER_SSD_STAGING_BYTES_DEFAULT = 32L << 20;

    /**
     * The class (a {@link TransportSupplier} with a public no-argument constructor) that opens the transfer transport,
     * as Aeron's driver names its channel endpoint suppliers: the default opens what {@code --transport} names; a
     * test or a diagnostic build may name one that wraps it (a transport that injects faults, or records).
     */
    public static final String TRANSFER_TRANSPORT_SUPPLIER_PROP_NAME = "orbitkv.manager.transfer.transport.supplier";
    public static final String TRANSFER_TRANSPORT_SUPPLIER_DEFAULT = Transports.class.getName();

    /** Bytes of the owner journals of all 16 shards together (design: 16 MiB). */
    public static final String CATALOG_JOURNAL_BYTES_PROP_NAME = "orbitkv.manager.catalog.journal.bytes";
    public static final long CATALOG_JOURNAL_BYTES_DEFAULT = CatalogLimits.JOURNAL_BUDGET_BYTES;

    /** Ceiling of the owner inventory's off-heap tables (all 16 shards; about 144 bytes per residence). */
    public static final String CATALOG_INVENTORY_BYTES_PROP_NAME = "orbitkv.manager.catalog.inventory.bytes";
    public static final long CATALOG_INVENTORY_BYTES_DEFAULT = 32L << 20;

    /**
     * Logical byte budget of the requester's candidate index, the remote evidence cached from catalog answers
     * (design: 16 MiB). A larger one keeps more of the cluster's blocks as warm hints (fewer cold queries).
     */
    public static final String CATALOG_CANDIDATE_BYTES_PROP_NAME = "orbitkv.manager.catalog.candidate.bytes";
    public static final long CATALOG_CANDIDATE_BYTES_DEFAULT = CatalogLimits.CANDIDATE_INDEX_BUDGET_BYTES;

    /** Smallest candidate index accepted: a few thousand entries. */
    public static final long MIN_CATALOG_CANDIDATE_BYTES = 1L << 20;

    /** Largest candidate index accepted (its entry count is bounded by the block index's capacity too). */
    public static final long MAX_CATALOG_CANDIDATE_BYTES = 4L << 30;

    /** Smallest inventory: a few thousand residences. */
    public static final long MIN_CATALOG_INVENTORY_BYTES = 1L << 20;

    /**
     * Bytes of the authority log ({@code authority.log} in the Manager's directory, clustered Managers only): its
     * registrations, validity deadlines, fences, grants and accepted sessions, in rings that wrap.
     */
    public static final String AUTHORITY_LOG_BYTES_PROP_NAME = "orbitkv.manager.authority.log.bytes";
    public static final long AUTHORITY_LOG_BYTES_DEFAULT = 4L << 20;

    /** Smallest catalog journal: one segment per shard. */
    public static final long MIN_CATALOG_JOURNAL_BYTES = 16L * io.orbitkv.catalog.OwnerJournal.DEFAULT_SEGMENT_BYTES;

    public static final String METRICS_PORT_PROP_NAME = "orbitkv.manager.metrics.port";
    public static final int METRICS_PORT_DEFAULT = 0;

    public static final String MAX_NAMESPACES_PROP_NAME = "orbitkv.manager.max.namespaces";
    public static final int MAX_NAMESPACES_DEFAULT = 1024;

    public static final String COUNTERS_VALUES_BYTES_PROP_NAME = "orbitkv.manager.counters.values.bytes";
    public static final int COUNTERS_VALUES_BYTES_DEFAULT = 64 << 10;

    public static final String ERROR_LOG_BYTES_PROP_NAME = "orbitkv.manager.error.log.bytes";
    public static final int ERROR_LOG_BYTES_DEFAULT = 1 << 20;

    /** ZMQ endpoint the KV events for routers go to (vLLM's wire format); unset = no events. */
    public static final String KV_EVENTS_ENDPOINT_PROP_NAME = "orbitkv.manager.kv.events.endpoint";

    /** ROUTER endpoint answering replay requests for recent KV-event batches; unset = no replay. */
    public static final String KV_EVENTS_REPLAY_ENDPOINT_PROP_NAME = "orbitkv.manager.kv.events.replay.endpoint";

    /** Topic frame of every KV-event message. */
    public static final String KV_EVENTS_TOPIC_PROP_NAME = "orbitkv.manager.kv.events.topic";
    public static final String KV_EVENTS_TOPIC_DEFAULT = "";

    /** Longest topic accepted. */
    public static final int MAX_KV_EVENTS_TOPIC_BYTES = 256;

    /** Directory of the SSD tier's files; unset = no SSD tier. */
    public static final String SSD_DIR_PROP_NAME = "orbitkv.manager.ssd.dir";

    public static final String SSD_BYTES_PROP_NAME = "orbitkv.manager.ssd.bytes";
    public static final long SSD_BYTES_DEFAULT = 16L << 30;

    /** Whether engines may map the pool and write the blocks of their saves into slots they reserved. */
    public static final String ENGINE_POOL_ACCESS_PROP_NAME = "orbitkv.manager.engine.pool.access";
    public static final EnginePoolAccess ENGINE_POOL_ACCESS_DEFAULT = EnginePoolAccess.NONE;

    /** Pool slots one client may hold reserved (Prepared, not yet Committed) at a time. */
    public static final int MAX_RESERVED_BLOCKS_PER_CLIENT = 1024;

    public static final String SSD_ADMISSION_PROP_NAME = "orbitkv.manager.ssd.admission";
    public static final SsdAdmission SSD_ADMISSION_DEFAULT = SsdAdmission.ON_EVICT;

    public static final String SSD_PROMOTE_PROP_NAME = "orbitkv.manager.ssd.promote";
    public static final boolean SSD_PROMOTE_DEFAULT = false;

    /**
     * Whether a Read of an SSD residence goes straight into the client's data region when the destination allows
     * O_DIRECT ({@link #SSD_DIRECT_READ_ALIGNMENT}); off, every SSD read goes through staging and a copy.
     */
    public static final String SSD_DIRECT_READS_PROP_NAME = "orbitkv.manager.ssd.direct.reads";
    public static final SsdDirectReads SSD_DIRECT_READS_DEFAULT = SsdDirectReads.AUTO;

    /**
     * A Read's destination address and the block's length must both be multiples of this for the SSD read to land
     * in the client's data region directly (O_DIRECT's granule); any other destination is read through staging.
     */
    public static final int SSD_DIRECT_READ_ALIGNMENT = 4096;

    public static final String SSD_QUEUE_DEPTH_PROP_NAME = "orbitkv.manager.ssd.queue.depth";
    public static final int SSD_QUEUE_DEPTH_DEFAULT = 64;

    /** Longest an eviction waits for in-flight SSD writes to free staging before it skips the admission. */
    public static final long SSD_ADMISSION_WAIT_NS = TimeUnit.MILLISECONDS.toNanos(100);

    /** Slice of that wait spent in the kernel per completion poll. */
    public static final long SSD_ADMISSION_WAIT_SLICE_NS = TimeUnit.MICROSECONDS.toNanos(50);

    public static final String SSD_BACKEND_PROP_NAME = "orbitkv.manager.ssd.backend";
    public static final SsdBackendChoice SSD_BACKEND_DEFAULT = SsdBackendChoice.AUTO;

    /** Staging memory for SSD I/O (2 MiB-aligned THP mapping registered with the ring); 0 = derived. */
    public static final String SSD_STAGING_BYTES_PROP_NAME = "orbitkv.manager.ssd.staging.bytes";
    public static final long SSD_STAGING_BYTES_DEFAULT = 64L << 20;

    /** Longest wait in the kernel for SSD completions when a duty cycle found nothing else to do. */
    public static final long SSD_IDLE_WAIT_NS = TimeUnit.MICROSECONDS.toNanos(50);

    /** O_DIRECT granule: extents, I/O lengths and staging offsets are multiples of it. */
    public static final int SSD_BLOCK_BYTES = 4096;

    /** Whether a start reads the SSD tier's manifest and keeps the residences it records (else the tier starts empty). */
    public static final String SSD_RECOVER_PROP_NAME = "orbitkv.manager.ssd.recover";
    public static final boolean SSD_RECOVER_DEFAULT = true;

    /**
     * Whether recovered SSD residences not yet read are verified against their checksums by a background scan (low
     * priority, at most {@link #SSD_VERIFY_BYTES_PER_SECOND}), which drops the corrupt ones before a reader asks.
     */
    public static final String SSD_VERIFY_RESTORED_PROP_NAME = "orbitkv.manager.ssd.verify.restored";
    public static final boolean SSD_VERIFY_RESTORED_DEFAULT = true;
    /** The verification scan of recovered residences reads at most this many bytes per second. */
    public static final long SSD_VERIFY_BYTES_PER_SECOND = 64L << 20;
    /** The verification scan keeps at most this many reads in flight. */
    public static final int SSD_VERIFY_MAX_IN_FLIGHT = 4;

    /** When the SSD tier's manifest is made durable; {@code off} keeps no manifest (the tier is lost at every stop). */
    public static final String SSD_MANIFEST_SYNC_PROP_NAME = "orbitkv.manager.ssd.manifest.sync";
    public static final SsdManifestSync SSD_MANIFEST_SYNC_DEFAULT = SsdManifestSync.BATCH;

    /** {@code batch}: the manifest is synced once this many records are unsynced ... */
    public static final int SSD_MANIFEST_SYNC_BATCH_RECORDS = 1024;

    /** ... or once its oldest unsynced record is this old, whichever comes first. */
    public static final long SSD_MANIFEST_SYNC_BATCH_NS = TimeUnit.MILLISECONDS.toNanos(10);

    /**
     * The manifest is rewritten from the live residences (a checkpoint) once it is larger than this and than
     * {@link #SSD_MANIFEST_CHECKPOINT_GROWTH} times the size of a checkpoint of the live residences.
     */
    public static final String SSD_MANIFEST_CHECKPOINT_BYTES_PROP_NAME = "orbitkv.manager.ssd.manifest.checkpoint.bytes";
    public static final long SSD_MANIFEST_CHECKPOINT_BYTES_DEFAULT = 64L << 20;

    /** How much larger than a fresh checkpoint the manifest may grow before the next checkpoint. */
    public static final int SSD_MANIFEST_CHECKPOINT_GROWTH = 4;

    /** Bytes of the queue from the storage duty cycle to the manifest writer thread (a power of two). */
    public static final int SSD_MANIFEST_QUEUE_BYTES = 16 << 20;

    /**
     * The transport that moves block bytes between Managers.
     */
    public enum TransportKind
    {
        /** OrbitKV's own TCP transport: the source sends only ranges of sessions it granted (default). */
        BUILTIN,
        /** Mooncake Transfer Engine through its C API, loaded from {@code --te-library}. */
        MOONCAKE
    }

    /**
     * What engines may do with the Manager's pool memory.
     */
    public enum EnginePoolAccess
    {
        /** Nothing: blocks reach the pool only through Publish's copy (default). */
        NONE,
        /**
         * The pool is a shared file the engines map read-write; Prepare reserves slots they write into, Commit seals
         * them. An engine can then write anywhere in the pool: only for engines the operator trusts.
         */
        WRITE_RESERVED
    }

    /**
     * When a block gets an SSD copy.
     */
    public enum SsdAdmission
    {
        /** A DRAM victim not yet on SSD is written before its DRAM space is reused (default). */
        ON_EVICT,
        /** Every sealed publish is also written to SSD. */
        ON_PUBLISH,
        /** Nothing is written: the SSD tier only serves what is already there (i.e. nothing, after a restart). */
        OFF
    }

    /**
     * When records of the SSD tier's manifest are made durable (fdatasync of the SSD file, then of the manifest).
     */
    public enum SsdManifestSync
    {
        /** Every {@link #SSD_MANIFEST_SYNC_BATCH_RECORDS} records or {@link #SSD_MANIFEST_SYNC_BATCH_NS}, first wins. */
        BATCH,
        /** After every write of the records the writer found queued (group commit). */
        ALWAYS,
        /** Never by the Manager (the kernel writes back; a clean stop still syncs). */
        NONE,
        /** No manifest: the SSD file is truncated at start and deleted at stop. */
        OFF
    }

    /**
     * Whether SSD reads go straight into engines' data regions (where the destination allows O_DIRECT).
     */
    public enum SsdDirectReads
    {
        /**
         * Direct when the data regions live on 2 MiB pages (their directory is on a tmpfs mounted
         * {@code huge=always} or {@code huge=within_size}, or shmem THP is forced); through staging otherwise, where
         * a direct read into 4 KiB pages is no faster than staging and a copy (default).
         */
        AUTO,
        /** Always direct where the destination allows it. */
        ON,
        /** Always through staging and a copy. */
        OFF
    }

    /**
     * When the DRAM pool's pages are faulted in. The code is what the pool touch mode counter shows.
     */
    public enum PoolPretouch
    {
        /** Not ahead of use: the first write to each page faults it in. */
        OFF(0),
        /** On a low-priority helper thread from start, low offsets first, while the Manager already serves. */
        BACKGROUND(1),
        /** Before the Manager is ready: start-up takes as long as the kernel needs to populate the pool. */
        BLOCKING(2);

        private final int code;

        PoolPretouch(final int code)
        {
            this.code = code;
        }

        public int code()
        {
            return code;
        }

        /**
         * @return the name as the flag spells it.
         */
        public String flagValue()
        {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /**
     * Which I/O path the SSD tier uses.
     */
    public enum SsdBackendChoice
    {
        /** io_uring when the probe succeeds, else FileChannel. */
        AUTO,
        /** io_uring or fail at start. */
        IO_URING,
        /** FileChannel with ExtendedOpenOption.DIRECT, even when io_uring works. */
        FILECHANNEL
    }

    /** Leases (pinned Lookup prefixes) one client may hold at once (design: pins are bounded per client). */
    public static final int MAX_LEASES_PER_CLIENT = 64;

    /** Blocks one client may hold pinned under leases at once. */
    public static final int MAX_PINNED_BLOCKS_PER_CLIENT = 4096;

    /** Queued Publish/Read operations per client; more are answered {@code BUSY}. */
    public static final int MAX_IN_FLIGHT_PER_CLIENT = 4;

    /** Requests taken off the request ring per duty cycle, so housekeeping and copies keep running. */
    public static final int REQUESTS_PER_CYCLE = 64;

    /** Attempts to write one response into a full client ring before it is dropped and counted. */
    public static final int RESPONSE_WRITE_ATTEMPTS = 3;

    /** Housekeeping period: liveness scans, heartbeat and gauges. */
    public static final long HOUSEKEEPING_INTERVAL_NS = TimeUnit.MILLISECONDS.toNanos(1);

    /** The pool is carved in 2 MiB pages (one huge page each). */
    public static final long POOL_BYTES_ALIGNMENT = 2L << 20;

    /** Smallest pool that makes sense: one 2 MiB huge page. */
    public static final long MIN_POOL_BYTES = 2L << 20;

    /**
     * Smallest response ring the protocol fits in: the largest response, {@code EngineRingLimits.MAX_RESPONSE_BYTES}
     * (about 15 KiB with a full set of peer candidates), must fit one message, and Agrona allows capacity / 8.
     */
    public static final int MIN_RESPONSE_RING_BYTES = 128 << 10;

    private Configuration()
    {
    }

    public static String name()
    {
        return System.getProperty(NAME_PROP_NAME, NAME_DEFAULT);
    }

    /**
     * The Manager directory: the property if set, else {@code /dev/shm/orbitkv/<name>}.
     *
     * @param name the Manager name.
     * @return the directory.
     */
    public static File dir(final String name)
    {
        final String dir = System.getProperty(DIR_PROP_NAME);
        return null != dir ? new File(dir) : defaultDir(name);
    }

    public static File defaultDir(final String name)
    {
        return new File(DIR_PARENT_DEFAULT, name);
    }

    public static long poolBytes()
    {
        return sizeProperty(POOL_BYTES_PROP_NAME, POOL_BYTES_DEFAULT);
    }

    /**
     * @return whether {@link #MAX_BLOCK_BYTES_PROP_NAME} is set: an explicit largest block is validated against a small
     * pool, the default one shrinks to fit it.
     */
    public static boolean maxBlockBytesSet()
    {
        return null != System.getProperty(MAX_BLOCK_BYTES_PROP_NAME);
    }

    public static int maxBlockBytes()
    {
        return intSizeProperty(MAX_BLOCK_BYTES_PROP_NAME, MAX_BLOCK_BYTES_DEFAULT);
    }

    public static long indexBudgetBytes()
    {
        return sizeProperty(INDEX_BUDGET_BYTES_PROP_NAME, INDEX_BUDGET_BYTES_DEFAULT);
    }

    public static int maxClients()
    {
        return intProperty(MAX_CLIENTS_PROP_NAME, MAX_CLIENTS_DEFAULT);
    }

    public static int requestRingBytes()
    {
        return intSizeProperty(REQUEST_RING_BYTES_PROP_NAME, REQUEST_RING_BYTES_DEFAULT);
    }

    public static int responseRingBytes()
    {
        return intSizeProperty(RESPONSE_RING_BYTES_PROP_NAME, RESPONSE_RING_BYTES_DEFAULT);
    }

    public static long clientTimeoutNs()
    {
        return durationProperty(CLIENT_TIMEOUT_PROP_NAME, CLIENT_TIMEOUT_NS_DEFAULT);
    }

    public static long maxDataRegionBytes()
    {
        return sizeProperty(MAX_DATA_REGION_BYTES_PROP_NAME, MAX_DATA_REGION_BYTES_DEFAULT);
    }

    public static PoolPretouch poolPretouch()
    {
        final String value = System.getProperty(POOL_PRETOUCH_PROP_NAME);
        return null == value ? POOL_PRETOUCH_DEFAULT : parsePoolPretouch(POOL_PRETOUCH_PROP_NAME, value);
    }

    public static long poolPretouchPauseNs()
    {
        return durationProperty(POOL_PRETOUCH_PAUSE_PROP_NAME, POOL_PRETOUCH_PAUSE_NS_DEFAULT);
    }

    public static int copyChunkBytes()
    {
        return intSizeProperty(COPY_CHUNK_BYTES_PROP_NAME, COPY_CHUNK_BYTES_DEFAULT);
    }

    public static String idleStrategyName()
    {
        return System.getProperty(IDLE_STRATEGY_PROP_NAME, IDLE_STRATEGY_DEFAULT);
    }

    public static boolean idlePeerWait()
    {
        return booleanProperty(IDLE_PEER_WAIT_PROP_NAME, IDLE_PEER_WAIT_DEFAULT);
    }

    public static boolean idleSleep()
    {
        return booleanProperty(IDLE_SLEEP_PROP_NAME, IDLE_SLEEP_DEFAULT);
    }

    public static long idleSleepAfterNs()
    {
        return durationProperty(IDLE_SLEEP_AFTER_PROP_NAME, IDLE_SLEEP_AFTER_NS_DEFAULT);
    }

    public static long idleLingerNs()
    {
        return durationProperty(IDLE_LINGER_PROP_NAME, IDLE_LINGER_NS_DEFAULT);
    }

    public static long idleSleepMaxNs()
    {
        return durationProperty(IDLE_SLEEP_MAX_PROP_NAME, IDLE_SLEEP_MAX_NS_DEFAULT);
    }

    public static long agentTimerSlackNs()
    {
        return longProperty(AGENT_TIMER_SLACK_NS_PROP_NAME, AGENT_TIMER_SLACK_NS_DEFAULT);
    }

    public static int metricsPort()
    {
        return intProperty(METRICS_PORT_PROP_NAME, METRICS_PORT_DEFAULT);
    }

    public static int maxNamespaces()
    {
        return intProperty(MAX_NAMESPACES_PROP_NAME, MAX_NAMESPACES_DEFAULT);
    }

    public static int countersValuesBytes()
    {
        return intSizeProperty(COUNTERS_VALUES_BYTES_PROP_NAME, COUNTERS_VALUES_BYTES_DEFAULT);
    }

    public static int errorLogBytes()
    {
        return intSizeProperty(ERROR_LOG_BYTES_PROP_NAME, ERROR_LOG_BYTES_DEFAULT);
    }

    /**
     * @return the KV events' PUB endpoint, or null (the default) for none.
     */
    public static String kvEventsEndpoint()
    {
        return System.getProperty(KV_EVENTS_ENDPOINT_PROP_NAME);
    }

    /**
     * @return the KV events' replay ROUTER endpoint, or null (the default) for none.
     */
    public static String kvEventsReplayEndpoint()
    {
        return System.getProperty(KV_EVENTS_REPLAY_ENDPOINT_PROP_NAME);
    }

    public static String kvEventsTopic()
    {
        return System.getProperty(KV_EVENTS_TOPIC_PROP_NAME, KV_EVENTS_TOPIC_DEFAULT);
    }

    /**
     * @return the SSD tier's directory, or null (the default) for no SSD tier.
     */
    public static File ssdDir()
    {
        final String value = System.getProperty(SSD_DIR_PROP_NAME);
        return null == value ? null : new File(value);
    }

    public static long ssdBytes()
    {
        return sizeProperty(SSD_BYTES_PROP_NAME, SSD_BYTES_DEFAULT);
    }

    public static SsdAdmission ssdAdmission()
    {
        final String value = System.getProperty(SSD_ADMISSION_PROP_NAME);
        return null == value ? SSD_ADMISSION_DEFAULT : parseSsdAdmission(SSD_ADMISSION_PROP_NAME, value);
    }

    public static boolean ssdRecover()
    {
        return booleanProperty(SSD_RECOVER_PROP_NAME, SSD_RECOVER_DEFAULT);
    }

    public static boolean ssdVerifyRestored()
    {
        return booleanProperty(SSD_VERIFY_RESTORED_PROP_NAME, SSD_VERIFY_RESTORED_DEFAULT);
    }

    public static SsdManifestSync ssdManifestSync()
    {
        final String value = System.getProperty(SSD_MANIFEST_SYNC_PROP_NAME);
        return null == value ? SSD_MANIFEST_SYNC_DEFAULT : parseSsdManifestSync(SSD_MANIFEST_SYNC_PROP_NAME, value);
    }

    public static long ssdManifestCheckpointBytes()
    {
        return sizeProperty(SSD_MANIFEST_CHECKPOINT_BYTES_PROP_NAME, SSD_MANIFEST_CHECKPOINT_BYTES_DEFAULT);
    }

    public static boolean ssdPromote()
    {
        return booleanProperty(SSD_PROMOTE_PROP_NAME, SSD_PROMOTE_DEFAULT);
    }

    public static SsdDirectReads ssdDirectReads()
    {
        final String value = System.getProperty(SSD_DIRECT_READS_PROP_NAME);
        return null == value ? SSD_DIRECT_READS_DEFAULT : parseSsdDirectReads(SSD_DIRECT_READS_PROP_NAME, value);
    }

    public static int ssdQueueDepth()
    {
        return intProperty(SSD_QUEUE_DEPTH_PROP_NAME, SSD_QUEUE_DEPTH_DEFAULT);
    }

    public static SsdBackendChoice ssdBackend()
    {
        final String value = System.getProperty(SSD_BACKEND_PROP_NAME);
        return null == value ? SSD_BACKEND_DEFAULT : parseSsdBackend(SSD_BACKEND_PROP_NAME, value);
    }

    public static long ssdStagingBytes()
    {
        return sizeProperty(SSD_STAGING_BYTES_PROP_NAME, SSD_STAGING_BYTES_DEFAULT);
    }

    /**
     * @return the etcd endpoints, or null (the default) for a standalone Manager.
     */
    public static String etcdEndpoints()
    {
        return System.getProperty(ETCD_ENDPOINTS_PROP_NAME);
    }

    public static String engineGroup()
    {
        return System.getProperty(ENGINE_GROUP_PROP_NAME);
    }

    public static String etcdCa()
    {
        return System.getProperty(ETCD_CA_PROP_NAME);
    }

    public static String etcdCert()
    {
        return System.getProperty(ETCD_CERT_PROP_NAME);
    }

    public static String etcdKey()
    {
        return System.getProperty(ETCD_KEY_PROP_NAME);
    }

    public static String etcdUser()
    {
        return System.getProperty(ETCD_USER_PROP_NAME);
    }

    public static String etcdPasswordFile()
    {
        return System.getProperty(ETCD_PASSWORD_FILE_PROP_NAME);
    }

    public static String clusterSecretFile()
    {
        return System.getProperty(CLUSTER_SECRET_FILE_PROP_NAME);
    }

    public static String transportTlsCert()
    {
        return System.getProperty(TRANSPORT_TLS_CERT_PROP_NAME);
    }

    public static String transportTlsKey()
    {
        return System.getProperty(TRANSPORT_TLS_KEY_PROP_NAME);
    }

    public static String transportTlsCa()
    {
        return System.getProperty(TRANSPORT_TLS_CA_PROP_NAME);
    }

    public static String clusterName()
    {
        return System.getProperty(CLUSTER_NAME_PROP_NAME);
    }

    public static String nodeId()
    {
        return System.getProperty(NODE_ID_PROP_NAME);
    }

    public static String catalogNodes()
    {
        return System.getProperty(CATALOG_NODES_PROP_NAME);
    }

    public static String placementSeed()
    {
        return System.getProperty(PLACEMENT_SEED_PROP_NAME, "");
    }

    public static int catalogReplicas()
    {
        return intProperty(CATALOG_REPLICAS_PROP_NAME, CATALOG_REPLICAS_DEFAULT);
    }

    public static int maxShardMoves()
    {
        return intProperty(MAX_SHARD_MOVES_PROP_NAME, MAX_SHARD_MOVES_DEFAULT);
    }

    public static int membershipTtlSecs()
    {
        return intProperty(MEMBERSHIP_TTL_SECS_PROP_NAME, MEMBERSHIP_TTL_SECS_DEFAULT);
    }

    public static long etcdDeadlineMs()
    {
        return longProperty(ETCD_DEADLINE_MS_PROP_NAME, ETCD_DEADLINE_MS_DEFAULT);
    }

    /**
     * @return the join timeout in milliseconds from {@link #JOIN_TIMEOUT_PROP_NAME}, or its default.
     */
    public static long joinTimeoutMs()
    {
        final String value = System.getProperty(JOIN_TIMEOUT_PROP_NAME);
        return null == value ? JOIN_TIMEOUT_MS_DEFAULT : parseJoinTimeoutMs(JOIN_TIMEOUT_PROP_NAME, value);
    }

    public static String peerEndpoint()
    {
        return System.getProperty(PEER_ENDPOINT_PROP_NAME, PEER_ENDPOINT_DEFAULT);
    }

    public static int peerMtuLength()
    {
        final String value = System.getProperty(PEER_MTU_PROP_NAME);
        return null == value ? PEER_MTU_DEFAULT : parsePeerMtu(PEER_MTU_PROP_NAME, value);
    }

    public static String transferEndpoint()
    {
        return System.getProperty(TRANSFER_ENDPOINT_PROP_NAME, TRANSFER_ENDPOINT_DEFAULT);
    }

    public static TransportKind transport()
    {
        final String value = System.getProperty(TRANSPORT_PROP_NAME);
        return null == value ? TRANSPORT_DEFAULT : parseTransport(TRANSPORT_PROP_NAME, value);
    }

    public static String teLibrary()
    {
        return System.getProperty(TE_LIBRARY_PROP_NAME);
    }

    public static int transferStreams()
    {
        return intProperty(TRANSFER_STREAMS_PROP_NAME, TRANSFER_STREAMS_DEFAULT);
    }

    public static PeerAdmission.Policy peerAdmission()
    {
        final String value = System.getProperty(PEER_ADMISSION_PROP_NAME);
        return null == value ? PEER_ADMISSION_DEFAULT : parsePeerAdmission(PEER_ADMISSION_PROP_NAME, value);
    }

    public static long peerAdmissionWindowNs()
    {
        return durationProperty(PEER_ADMISSION_WINDOW_PROP_NAME, PEER_ADMISSION_WINDOW_NS_DEFAULT);
    }

    public static TransportKind parseTransport(final String name, final String value)
    {
        return switch (value.trim().toLowerCase(Locale.ROOT))
        {
            case "builtin" -> TransportKind.BUILTIN;
            case "mooncake" -> TransportKind.MOONCAKE;
            default -> throw invalid(name, "builtin or mooncake", value);
        };
    }

    public static PeerAdmission.Policy parsePeerAdmission(final String name, final String value)
    {
        return switch (value.trim().toLowerCase(Locale.ROOT))
        {
            case "off" -> PeerAdmission.Policy.OFF;
            case "always" -> PeerAdmission.Policy.ALWAYS;
            case "second-hit", "second_hit" -> PeerAdmission.Policy.SECOND_HIT;
            default -> throw invalid(name, "off, always or second-hit", value);
        };
    }

    public static long transferBudgetBytes()
    {
        return sizeProperty(TRANSFER_BUDGET_PROP_NAME, TRANSFER_BUDGET_DEFAULT);
    }

    public static int transferMaxSessions()
    {
        return intProperty(TRANSFER_MAX_SESSIONS_PROP_NAME, TRANSFER_MAX_SESSIONS_DEFAULT);
    }

    public static int transferSessionsPerPeer()
    {
        return intProperty(TRANSFER_SESSIONS_PER_PEER_PROP_NAME, TRANSFER_SESSIONS_PER_PEER_DEFAULT);
    }

    public static long transferSessionTtlNs()
    {
        return durationProperty(TRANSFER_SESSION_TTL_PROP_NAME, TRANSFER_SESSION_TTL_NS_DEFAULT);
    }

    public static long transferSsdStagingBytes()
    {
        return sizeProperty(TRANSFER_SSD_STAGING_BYTES_PROP_NAME, TRANSFER_SSD_STAGING_BYTES_DEFAULT);
    }

    /**
     * @return a new instance of the class {@link #TRANSFER_TRANSPORT_SUPPLIER_PROP_NAME} names.
     * @throws IllegalArgumentException when the class cannot be loaded, is no supplier or cannot be made.
     */
    public static TransportSupplier transferTransportSupplier()
    {
        final String className = System.getProperty(
            TRANSFER_TRANSPORT_SUPPLIER_PROP_NAME, TRANSFER_TRANSPORT_SUPPLIER_DEFAULT).trim();
        try
        {
            return (TransportSupplier)Class.forName(className).getConstructor().newInstance();
        }
        catch (final ReflectiveOperationException | ClassCastException ex)
        {
            throw new IllegalArgumentException(
                TRANSFER_TRANSPORT_SUPPLIER_PROP_NAME + ": no TransportSupplier with a public constructor: " + className,
                ex);
        }
    }

    public static long authorityLogBytes()
    {
        return sizeProperty(AUTHORITY_LOG_BYTES_PROP_NAME, AUTHORITY_LOG_BYTES_DEFAULT);
    }

    public static long catalogJournalBytes()
    {
        return sizeProperty(CATALOG_JOURNAL_BYTES_PROP_NAME, CATALOG_JOURNAL_BYTES_DEFAULT);
    }

    public static long catalogCandidateBytes()
    {
        return sizeProperty(CATALOG_CANDIDATE_BYTES_PROP_NAME, CATALOG_CANDIDATE_BYTES_DEFAULT);
    }

    public static long catalogInventoryBytes()
    {
        return sizeProperty(CATALOG_INVENTORY_BYTES_PROP_NAME, CATALOG_INVENTORY_BYTES_DEFAULT);
    }

    /**
     * Parse a size: a number of bytes with an optional k, m or g suffix (powers of 1024).
     *
     * @param name  the flag or property the value is for, named in the error.
     * @param value the text.
     * @return bytes.
     * @throws IllegalArgumentException naming {@code name} and the value if it is not a size.
     */
    public static long parseSize(final String name, final String value)
    {
        try
        {
            return SystemUtil.parseSize(name, value.trim());
        }
        catch (final NumberFormatException ex)
        {
            throw invalid(name, "a size such as 4096, 64k, 1m or 2g", value);
        }
    }

    /**
     * Parse a size that must fit an int (below 2g).
     *
     * @param name  the flag or property the value is for, named in the error.
     * @param value the text.
     * @return bytes.
     * @throws IllegalArgumentException naming {@code name} and the value.
     */
    public static int parseIntSize(final String name, final String value)
    {
        final long bytes = parseSize(name, value);
        if (bytes > Integer.MAX_VALUE)
        {
            throw invalid(name, "below 2g", value);
        }
        return (int)bytes;
    }

    /**
     * Parse a duration: a number with a ns, us, ms or s suffix (none means ns).
     *
     * @param name  the flag or property the value is for, named in the error.
     * @param value the text.
     * @return nanoseconds.
     * @throws IllegalArgumentException naming {@code name} and the value.
     */
    public static long parseDurationNs(final String name, final String value)
    {
        try
        {
            return SystemUtil.parseDuration(name, value.trim());
        }
        catch (final NumberFormatException ex)
        {
            throw invalid(name, "a duration such as 500ms or 5s", value);
        }
    }

    /**
     * Parse a boolean strictly: {@code true} or {@code false}, case-insensitive. Anything else is an error rather
     * than false, so a mistyped setting is never taken for "off".
     *
     * @param name  the flag or property the value is for, named in the error.
     * @param value the text.
     * @return the value.
     * @throws IllegalArgumentException naming {@code name} and the value.
     */
    public static boolean parseBoolean(final String name, final String value)
    {
        return switch (value.trim().toLowerCase(Locale.ROOT))
        {
            case "true" -> true;
            case "false" -> false;
            default -> throw invalid(name, "true or false", value);
        };
    }

    /**
     * Parse a decimal int.
     *
     * @param name  the flag or property the value is for, named in the error.
     * @param value the text.
     * @return the value.
     * @throws IllegalArgumentException naming {@code name} and the value.
     */
    public static int parseInt(final String name, final String value)
    {
        try
        {
            return Integer.parseInt(value.trim());
        }
        catch (final NumberFormatException ex)
        {
            throw invalid(name, "an integer", value);
        }
    }

    /**
     * Parse a decimal long.
     *
     * @param name  the flag or property the value is for, named in the error.
     * @param value the text.
     * @return the value.
     * @throws IllegalArgumentException naming {@code name} and the value.
     */
    public static long parseLong(final String name, final String value)
    {
        try
        {
            return Long.parseLong(value.trim());
        }
        catch (final NumberFormatException ex)
        {
            throw invalid(name, "an integer", value);
        }
    }

    public static EnginePoolAccess enginePoolAccess()
    {
        final String value = System.getProperty(ENGINE_POOL_ACCESS_PROP_NAME);
        return null == value ? ENGINE_POOL_ACCESS_DEFAULT : parseEnginePoolAccess(ENGINE_POOL_ACCESS_PROP_NAME, value);
    }

    public static EnginePoolAccess parseEnginePoolAccess(final String name, final String value)
    {
        return switch (value.trim().toLowerCase(Locale.ROOT))
        {
            case "none" -> EnginePoolAccess.NONE;
            case "write-reserved", "write_reserved" -> EnginePoolAccess.WRITE_RESERVED;
            default -> throw invalid(name, "none or write-reserved", value);
        };
    }

    public static SsdAdmission parseSsdAdmission(final String value)
    {
        return parseSsdAdmission("--ssd-admission", value);
    }

    public static SsdAdmission parseSsdAdmission(final String name, final String value)
    {
        return switch (value.trim().toLowerCase(Locale.ROOT))
        {
            case "on-evict", "on_evict" -> SsdAdmission.ON_EVICT;
            case "on-publish", "on_publish" -> SsdAdmission.ON_PUBLISH;
            case "off" -> SsdAdmission.OFF;
            default -> throw invalid(name, "on-evict, on-publish or off", value);
        };
    }

    public static SsdManifestSync parseSsdManifestSync(final String name, final String value)
    {
        return switch (value.trim().toLowerCase(Locale.ROOT))
        {
            case "batch" -> SsdManifestSync.BATCH;
            case "always" -> SsdManifestSync.ALWAYS;
            case "none" -> SsdManifestSync.NONE;
            case "off" -> SsdManifestSync.OFF;
            default -> throw invalid(name, "batch, always, none or off", value);
        };
    }

    public static boolean parseOnOff(final String name, final String value)
    {
        return switch (value.trim().toLowerCase(Locale.ROOT))
        {
            case "on", "true" -> true;
            case "off", "false" -> false;
            default -> throw invalid(name, "on or off", value);
        };
    }

    public static SsdDirectReads parseSsdDirectReads(final String name, final String value)
    {
        return switch (value.trim().toLowerCase(Locale.ROOT))
        {
            case "auto" -> SsdDirectReads.AUTO;
            case "on", "true" -> SsdDirectReads.ON;
            case "off", "false" -> SsdDirectReads.OFF;
            default -> throw invalid(name, "auto, on or off", value);
        };
    }

    public static SsdBackendChoice parseSsdBackend(final String value)
    {
        return parseSsdBackend("--ssd-backend", value);
    }

    public static SsdBackendChoice parseSsdBackend(final String name, final String value)
    {
        return switch (value.trim().toLowerCase(Locale.ROOT))
        {
            case "auto" -> SsdBackendChoice.AUTO;
            case "io_uring", "io-uring", "iouring" -> SsdBackendChoice.IO_URING;
            case "filechannel", "file-channel" -> SsdBackendChoice.FILECHANNEL;
            default -> throw invalid(name, "auto, io_uring or filechannel", value);
        };
    }

    /**
     * Parse a pre-touch mode, case-insensitive.
     *
     * @param value {@code background}, {@code blocking} or {@code off}; {@code true}/{@code false} for blocking/off.
     * @return the mode.
     */
    public static PoolPretouch parsePoolPretouch(final String value)
    {
        return parsePoolPretouch("--pool-pretouch", value);
    }

    public static PoolPretouch parsePoolPretouch(final String name, final String value)
    {
        return switch (value.trim().toLowerCase(Locale.ROOT))
        {
            case "background" -> PoolPretouch.BACKGROUND;
            case "blocking", "true" -> PoolPretouch.BLOCKING;
            case "off", "false" -> PoolPretouch.OFF;
            default -> throw invalid(name, "background, blocking or off (true/false: blocking/off)", value);
        };
    }

    /**
     * Parse a join timeout: {@code 500ms}, {@code 60s} or a bare number of seconds.
     *
     * @param value the text.
     * @return milliseconds.
     * @throws IllegalArgumentException if it is not of that form.
     */
    public static long parseJoinTimeoutMs(final String value)
    {
        return parseJoinTimeoutMs("--join-timeout", value);
    }

    public static long parseJoinTimeoutMs(final String name, final String value)
    {
        final String text = value.trim().toLowerCase(Locale.ROOT);
        try
        {
            if (text.endsWith("ms"))
            {
                return Long.parseLong(text.substring(0, text.length() - 2).trim());
            }
            if (text.endsWith("s"))
            {
                return TimeUnit.SECONDS.toMillis(Long.parseLong(text.substring(0, text.length() - 1).trim()));
            }
            return TimeUnit.SECONDS.toMillis(Long.parseLong(text));
        }
        catch (final NumberFormatException ex)
        {
            throw invalid(name, "a duration such as 60s or 500ms", value);
        }
    }

    /**
     * Parse a peer datagram payload length. Its range ({@code PeerTransport.MTU_RULE}) is checked by the context.
     *
     * @param name  the flag or property the value is for, named in the error.
     * @param value {@code auto} or a number of bytes.
     * @return bytes, or {@code PeerTransport.AUTO_MTU} for auto.
     */
    public static int parsePeerMtu(final String name, final String value)
    {
        if ("auto".equalsIgnoreCase(value.trim()))
        {
            return PeerTransport.AUTO_MTU;
        }
        try
        {
            return Integer.parseInt(value.trim());
        }
        catch (final NumberFormatException ex)
        {
            throw invalid(name, "auto or " + PeerTransport.MTU_RULE, value);
        }
    }

    /**
     * A size as a flag spells it: the largest of g, m, k that divides it, else bytes.
     *
     * @param bytes the size.
     * @return e.g. {@code 1g}, {@code 128k}, {@code 4000}.
     */
    public static String sizeText(final long bytes)
    {
        if (0 == bytes)
        {
            return "0";
        }
        if (0 == bytes % (1L << 30))
        {
            return (bytes >> 30) + "g";
        }
        if (0 == bytes % (1L << 20))
        {
            return (bytes >> 20) + "m";
        }
        if (0 == bytes % (1L << 10))
        {
            return (bytes >> 10) + "k";
        }
        return Long.toString(bytes);
    }

    /**
     * A duration as a flag spells it: the largest of s, ms, us that divides it, else ns.
     *
     * @param ns the duration.
     * @return e.g. {@code 5s}, {@code 100ms}, {@code 0}.
     */
    public static String durationText(final long ns)
    {
        if (0 == ns)
        {
            return "0";
        }
        if (0 == ns % 1_000_000_000L)
        {
            return (ns / 1_000_000_000L) + "s";
        }
        if (0 == ns % 1_000_000L)
        {
            return (ns / 1_000_000L) + "ms";
        }
        if (0 == ns % 1_000L)
        {
            return (ns / 1_000L) + "us";
        }
        return ns + "ns";
    }

    private static long sizeProperty(final String propName, final long defaultValue)
    {
        final String value = System.getProperty(propName);
        return null == value ? defaultValue : parseSize(propName, value);
    }

    private static int intSizeProperty(final String propName, final int defaultValue)
    {
        final String value = System.getProperty(propName);
        return null == value ? defaultValue : parseIntSize(propName, value);
    }

    private static long durationProperty(final String propName, final long defaultValue)
    {
        final String value = System.getProperty(propName);
        return null == value ? defaultValue : parseDurationNs(propName, value);
    }

    private static boolean booleanProperty(final String propName, final boolean defaultValue)
    {
        final String value = System.getProperty(propName);
        return null == value ? defaultValue : parseBoolean(propName, value);
    }

    private static int intProperty(final String propName, final int defaultValue)
    {
        final String value = System.getProperty(propName);
        return null == value ? defaultValue : parseInt(propName, value);
    }

    private static long longProperty(final String propName, final long defaultValue)
    {
        final String value = System.getProperty(propName);
        return null == value ? defaultValue : parseLong(propName, value);
    }

    private static IllegalArgumentException invalid(final String name, final String expected, final String value)
    {
        return new IllegalArgumentException(name + " must be " + expected + ": '" + value + "'");
    }

    /**
     * A new idle strategy by name. Busy spinning is opt-in only: on a 2-core host it starves everything else.
     *
     * @param name {@code backoff}, {@code agrona-backoff} (Agrona's defaults: parks up to 1 ms, never sleeps;
     *             for comparison), {@code yielding} or {@code busy}.
     * @return a new idle strategy.
     */
    public static IdleStrategy newIdleStrategy(final String name)
    {
        switch (name.trim().toLowerCase(Locale.ROOT))
        {
            case IDLE_STRATEGY_BACKOFF:
                return newBackoffIdleStrategy(0, null, null, 0);
            case "agrona-backoff":
                return new BackoffIdleStrategy();
            case "yielding":
                return new YieldingIdleStrategy();
            case "busy":
                return new BusySpinIdleStrategy();
            default:
                throw new IllegalArgumentException(
                    "unknown idle strategy '" + name + "': expected backoff, agrona-backoff, yielding or busy");
        }
    }

    /**
     * @param name an idle strategy's name.
     * @return whether it names {@code backoff}, the one strategy that lingers, waits on the peer socket and sleeps.
     */
    public static boolean isBackoffIdleStrategy(final String name)
    {
        return IDLE_STRATEGY_BACKOFF.equals(name.trim().toLowerCase(Locale.ROOT));
    }

    /**
     * The {@code backoff} strategy: 100 spins, 10 yields, parks from 1 us doubling to 100 us.
     *
     * @param lingerNs     yield this long after the last work before parking.
     * @param wait         how parks wait (null: on the timer).
     * @param sleep        the deep sleep after {@code sleepAfterNs} of parking (null: none).
     * @param sleepAfterNs how long the agent parks before it sleeps.
     * @return a new strategy for one agent thread.
     */
    public static IdleStrategy newBackoffIdleStrategy(
        final long lingerNs, final IdleWait wait, final IdleSleep sleep, final long sleepAfterNs)
    {
        return new WaitingBackoffIdleStrategy(
            100,
            10,
            TimeUnit.MICROSECONDS.toNanos(1),
            TimeUnit.MICROSECONDS.toNanos(100),
            SystemNanoClock.INSTANCE,
            lingerNs,
            wait,
            sleep,
            sleepAfterNs);
    }
}
