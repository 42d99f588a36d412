package io.orbitkv.manager;

import io.orbitkv.manager.authority.AuthorityLog;
import io.orbitkv.manager.ring.EngineFileAccess;
import io.orbitkv.codecs.EngineRingLimits;
import io.orbitkv.codecs.cnc.CncFileDescriptor;
import io.orbitkv.codecs.ShardPlacement;
import io.orbitkv.manager.membership.MemberRecord;
import io.orbitkv.manager.membership.MembershipConfiguration;
import io.orbitkv.manager.store.SsdBackendSupplier;
import io.orbitkv.manager.transfer.PeerAdmission;
import io.orbitkv.manager.transfer.TransportSupplier;
import java.io.File;
import java.io.PrintStream;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import org.agrona.BitUtil;
import org.agrona.concurrent.EpochClock;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.SystemEpochClock;
import org.agrona.concurrent.SystemNanoClock;
import org.agrona.concurrent.status.CountersReader;

/**
 * Everything a {@link Manager} is launched with. Every field starts from its {@link Configuration} getter (the system
 * property, else the default); setters are fluent and override it; {@link #conclude()} checks ranges, fills derived
 * values and fails with a message naming the offending setting.
 * <p>
 * Longer than our usual file because it holds one fluent setter and getter per setting of {@link Configuration}
 * and the checks that tie settings together; it has no logic of its own beyond those.
 *
 * <pre>{@code
 * try (Manager manager = Manager.launch(new ManagerContext().dir(dir).poolBytes(64 << 20)))
 * {
 *     ...
 * }
 * }</pre>
 */
public final class ManagerContext
{
    private boolean concluded;
    private String name = Configuration.name();
    private File dir;
    private long poolBytes = Configuration.poolBytes();
    private int maxBlockBytes = Configuration.maxBlockBytes();
    private boolean maxBlockBytesSet = Configuration.maxBlockBytesSet();
    private long indexBudgetBytes = Configuration.indexBudgetBytes();
    private int maxClients = Configuration.maxClients();
    private int requestRingBytes = Configuration.requestRingBytes();
    private int responseRingBytes = Configuration.responseRingBytes();
    private long clientTimeoutNs = Configuration.clientTimeoutNs();
    private long maxDataRegionBytes = Configuration.maxDataRegionBytes();
    private int copyChunkBytes = Configuration.copyChunkBytes();
    private Configuration.PoolPretouch poolPretouch = Configuration.poolPretouch();
    private long poolPretouchPauseNs = Configuration.poolPretouchPauseNs();
    private String idleStrategyName = Configuration.idleStrategyName();
    private long agentTimerSlackNs = Configuration.agentTimerSlackNs();
    private boolean idlePeerWait = Configuration.idlePeerWait();
    private boolean idleSleep = Configuration.idleSleep();
    private long idleSleepAfterNs = Configuration.idleSleepAfterNs();
    private long idleLingerNs = Configuration.idleLingerNs();
    private long idleSleepMaxNs = Configuration.idleSleepMaxNs();
    private IdleStrategy idleStrategy;
    private ThreadFactory agentThreadFactory = Thread::new;
    private int metricsPort = Configuration.metricsPort();
    private String kvEventsEndpoint = Configuration.kvEventsEndpoint();
    private String kvEventsReplayEndpoint = Configuration.kvEventsReplayEndpoint();
    private String kvEventsTopic = Configuration.kvEventsTopic();
    private int maxNamespaces = Configuration.maxNamespaces();
    private int countersValuesBytes = Configuration.countersValuesBytes();
    private int errorLogBytes = Configuration.errorLogBytes();
    private EpochClock epochClock;
    private NanoClock nanoClock;
    private File ssdDir = Configuration.ssdDir();
    private long ssdBytes = Configuration.ssdBytes();
    private Configuration.SsdAdmission ssdAdmission = Configuration.ssdAdmission();
    private Configuration.EnginePoolAccess enginePoolAccess = Configuration.enginePoolAccess();
    private boolean ssdPromote = Configuration.ssdPromote();
    private Configuration.SsdDirectReads ssdDirectReads = Configuration.ssdDirectReads();
    private int ssdQueueDepth = Configuration.ssdQueueDepth();
    private Configuration.SsdBackendChoice ssdBackend = Configuration.ssdBackend();
    private SsdBackendSupplier ssdBackendSupplier = SsdBackendSupplier.DEFAULT;
    private long ssdStagingBytes = Configuration.ssdStagingBytes();
    private boolean ssdRecover = Configuration.ssdRecover();
    private boolean ssdVerifyRestored = Configuration.ssdVerifyRestored();
    private Configuration.SsdManifestSync ssdManifestSync = Configuration.ssdManifestSync();
    private long ssdManifestCheckpointBytes = Configuration.ssdManifestCheckpointBytes();
    private String etcdEndpoints = Configuration.etcdEndpoints();
    private String engineGroup = Configuration.engineGroup();
    private EngineFileAccess engineFileAccess;
    private String etcdCa = Configuration.etcdCa();
    private String etcdCert = Configuration.etcdCert();
    private String etcdKey = Configuration.etcdKey();
    private String etcdUser = Configuration.etcdUser();
    private String etcdPasswordFile = Configuration.etcdPasswordFile();
    private String clusterSecretFile = Configuration.clusterSecretFile();
    private String transportTlsCert = Configuration.transportTlsCert();
    private String transportTlsKey = Configuration.transportTlsKey();
    private String transportTlsCa = Configuration.transportTlsCa();
    private io.orbitkv.transport.TransportTls transportTls;
    private io.orbitkv.manager.peer.ClusterSecret clusterSecret;
    private io.orbitkv.manager.membership.EtcdSecurity etcdSecurity = io.orbitkv.manager.membership.EtcdSecurity.NONE;
    private String clusterName = Configuration.clusterName();
    private String nodeId = Configuration.nodeId();
    private int membershipTtlSecs = Configuration.membershipTtlSecs();
    private long catalogJournalBytes = Configuration.catalogJournalBytes();
    private long authorityLogBytes = Configuration.authorityLogBytes();
    private long catalogInventoryBytes = Configuration.catalogInventoryBytes();
    private long catalogCandidateBytes = Configuration.catalogCandidateBytes();
    private long etcdDeadlineMs = Configuration.etcdDeadlineMs();
    private long joinTimeoutMs = Configuration.joinTimeoutMs();
    private String catalogNodes = Configuration.catalogNodes();
    private int catalogReplicas = Configuration.catalogReplicas();
    private String placementSeed = Configuration.placementSeed();
    private int maxShardMoves = Configuration.maxShardMoves();
    private ShardPlacement placement;
    private String peerEndpoint = Configuration.peerEndpoint();
    private int peerMtuLength = Configuration.peerMtuLength();
    private String transferEndpoint = Configuration.transferEndpoint();
    private Configuration.TransportKind transport = Configuration.transport();
    private String teLibrary = Configuration.teLibrary();
    private int transferStreams = Configuration.transferStreams();
    private PeerAdmission.Policy peerAdmission = Configuration.peerAdmission();
    private long peerAdmissionWindowNs = Configuration.peerAdmissionWindowNs();
    private long transferBudgetBytes = Configuration.transferBudgetBytes();
    private int transferMaxSessions = Configuration.transferMaxSessions();
    private int transferSessionsPerPeer = Configuration.transferSessionsPerPeer();
    private long transferSessionTtlNs = Configuration.transferSessionTtlNs();
    private long transferSsdStagingBytes = Configuration.transferSsdStagingBytes();
    private TransportSupplier transferTransportSupplier;
    private PrintStream membershipLog = System.out;

    /**
     * Validate every setting and fill derived ones. Called by {@link Manager#launch(ManagerContext)}.
     *
     * @return this.
     * @throws IllegalArgumentException naming the first invalid setting.
     */
    public ManagerContext conclude()
    {
        if (concluded)
        {
            throw new IllegalStateException("ManagerContext already concluded: use one context per Manager");
        }

        checkTransfer();
        if (null == name || name.isEmpty() || !name.matches("[A-Za-z0-9._-]{1,64}"))
        {
            throw new IllegalArgumentException("--name must be 1..64 characters of [A-Za-z0-9._-]: '" + name + "'");
        }
        if (null == dir)
        {
            dir = Configuration.dir(name);
        }
        dir = dir.getAbsoluteFile();

        if (!maxBlockBytesSet && maxBlockBytes > poolBytes && poolBytes > 0)
        {
            // The default largest block (64m) shrinks to fit a small pool; an explicit setting is validated instead.
            maxBlockBytes = (int)Math.min(Integer.MAX_VALUE, poolBytes);
        }
        check(poolBytes >= Configuration.MIN_POOL_BYTES, "--pool-bytes must be at least 2m: " + poolBytes);
        check(poolBytes % Configuration.POOL_BYTES_ALIGNMENT == 0,
            "--pool-bytes must be a multiple of 2m (the pool is carved in 2 MiB pages): " + poolBytes);
        check(null != poolPretouch, "--pool-pretouch must be background, blocking or off");
        check(poolPretouchPauseNs >= 0, "pool pre-touch pause must not be negative: " + poolPretouchPauseNs);
        check(maxNamespaces >= 1, "max namespaces must be positive: " + maxNamespaces);
        check(maxBlockBytes > 0, "--max-block-bytes must be positive: " + maxBlockBytes);
        check(maxBlockBytes <= poolBytes, "--max-block-bytes (" + maxBlockBytes + ") exceeds --pool-bytes (" + poolBytes + ")");
        check(indexBudgetBytes > 0, "--index-budget-bytes must be positive: " + indexBudgetBytes);
        check(maxClients >= 1 && maxClients <= Configuration.MAX_CLIENTS_LIMIT,
            "--max-clients must be in [1, " + Configuration.MAX_CLIENTS_LIMIT + "]: " + maxClients);
        check(BitUtil.isPowerOfTwo(requestRingBytes), "--request-ring-bytes must be a power of two: " + requestRingBytes);
        check(requestRingBytes / 8 >= EngineRingLimits.MAX_REQUEST_BYTES + 8,
            "--request-ring-bytes too small for the largest request frame (" + EngineRingLimits.MAX_REQUEST_BYTES +
            " bytes needs at least 1m): " + requestRingBytes);
        check(BitUtil.isPowerOfTwo(responseRingBytes), "--response-ring-bytes must be a power of two: " + responseRingBytes);
        check(responseRingBytes >= Configuration.MIN_RESPONSE_RING_BYTES,
            "--response-ring-bytes must be at least " + (Configuration.MIN_RESPONSE_RING_BYTES >> 10) +
            "k to hold the largest response: " + responseRingBytes);
        check(clientTimeoutNs >= TimeUnit.MILLISECONDS.toNanos(10),
            "--client-timeout must be at least 10ms: " + clientTimeoutNs + "ns");
        check(maxDataRegionBytes > 0, "--max-data-region-bytes must be positive: " + maxDataRegionBytes);
        check(copyChunkBytes >= 4096, "--copy-chunk-bytes must be at least 4k: " + copyChunkBytes);
        check(null != agentThreadFactory, "agentThreadFactory is required");
        check(agentTimerSlackNs >= 0 && agentTimerSlackNs <= TimeUnit.SECONDS.toNanos(1),
            "agent timer slack must be in [0, 1s] (0 = the kernel's default): " + agentTimerSlackNs + "ns");
        check(idleLingerNs >= 0 && idleLingerNs <= Configuration.MAX_IDLE_LINGER_NS,
            "--idle-linger must be in [0, 10ms]: " + idleLingerNs + "ns");
        check(idleSleepAfterNs >= 0 && idleSleepAfterNs <= Configuration.MAX_IDLE_SLEEP_AFTER_NS,
            "--idle-sleep-after must be in [0, 1s]: " + idleSleepAfterNs + "ns");
        check(idleSleepMaxNs >= Configuration.MIN_IDLE_SLEEP_MAX_NS && idleSleepMaxNs <= Configuration.MAX_IDLE_SLEEP_MAX_NS,
            "--idle-sleep-max must be in [1ms, 10s]: " + idleSleepMaxNs + "ns");
        check(metricsPort >= 0 && metricsPort <= 65535, "--metrics-port must be in [0, 65535]: " + metricsPort);
        check(null == kvEventsEndpoint || isZmqEndpoint(kvEventsEndpoint),
            "--kv-events-endpoint must be tcp://HOST:PORT, ipc://PATH or inproc://NAME: " + kvEventsEndpoint);
        check(null == kvEventsReplayEndpoint || null != kvEventsEndpoint,
            "--kv-events-replay-endpoint needs --kv-events-endpoint");
        check(null == kvEventsReplayEndpoint || isZmqEndpoint(kvEventsReplayEndpoint),
            "--kv-events-replay-endpoint must be tcp://HOST:PORT, ipc://PATH or inproc://NAME: " + kvEventsReplayEndpoint);
        check(null != kvEventsTopic &&
            kvEventsTopic.getBytes(java.nio.charset.StandardCharsets.UTF_8).length <= Configuration.MAX_KV_EVENTS_TOPIC_BYTES,
            "--kv-events-topic must be at most " + Configuration.MAX_KV_EVENTS_TOPIC_BYTES + " bytes");
        check(countersValuesBytes >= CountersReader.COUNTER_LENGTH * 64 &&
            countersValuesBytes % CountersReader.COUNTER_LENGTH == 0,
            "counters values bytes must be a multiple of " + CountersReader.COUNTER_LENGTH + " and hold 64 counters: " +
            countersValuesBytes);
        check(errorLogBytes >= 4096, "error log bytes must be at least 4k: " + errorLogBytes);
        if (null != ssdDir)
        {
            ssdDir = ssdDir.getAbsoluteFile();
            // design: the SSD file is carved in 2 MiB pages of 4 KiB-multiple extents; round down, never up.
            ssdBytes -= ssdBytes % Configuration.POOL_BYTES_ALIGNMENT;
            check(ssdBytes >= Configuration.POOL_BYTES_ALIGNMENT, "--ssd-bytes must be at least 2m: " + ssdBytes);
            check(ssdBytes >= maxBlockBytes, "--ssd-bytes (" + ssdBytes + ") is below --max-block-bytes (" +
                maxBlockBytes + ")");
            check(ssdQueueDepth >= 1 && ssdQueueDepth <= 4096, "--ssd-queue-depth must be in [1, 4096]: " + ssdQueueDepth);
            check(null != ssdAdmission, "--ssd-admission must be on-evict, on-publish or off");
            check(null != enginePoolAccess, "--engine-pool-access must be none or write-reserved");
            check(null != ssdBackend, "--ssd-backend must be auto, io_uring or filechannel");
            check(null != ssdBackendSupplier, "an SSD backend supplier must be set");
            check(null != ssdManifestSync, "--ssd-manifest-sync must be batch, always, none or off");
            check(ssdManifestCheckpointBytes >= (1L << 20), "--ssd-manifest-checkpoint-bytes must be at least 1m: " +
                ssdManifestCheckpointBytes);
            final long minStaging = BitUtil.align((long)maxBlockBytes, (int)Configuration.POOL_BYTES_ALIGNMENT);
            ssdStagingBytes = BitUtil.align(Math.max(ssdStagingBytes, minStaging), (int)Configuration.POOL_BYTES_ALIGNMENT);
            check(ssdStagingBytes <= (1L << 30), "--ssd-staging-bytes must be at most 1g (one registered buffer): " +
                ssdStagingBytes);
        }

        engineFileAccess = EngineFileAccess.of(engineGroup);

        if (null != etcdEndpoints)
        {
            concludeMembership();
        }

        if (null == transferTransportSupplier)
        {
            transferTransportSupplier = Configuration.transferTransportSupplier();
        }
        if (null == idleStrategy)
        {
            // Fails on an unknown name; the Manager builds the strategy it uses once the parts it waits on exist.
            Configuration.newIdleStrategy(idleStrategyName);
        }
        if (null == epochClock)
        {
            epochClock = SystemEpochClock.INSTANCE;
        }
        // Checked even without peers, so a bad secret file is found when it is given, not when the Manager joins.
        clusterSecret = null == clusterSecretFile ? null :
            io.orbitkv.manager.peer.ClusterSecret.load(java.nio.file.Path.of(clusterSecretFile));
        transportTls = loadTransportTls(transportTlsCert, transportTlsKey, transportTlsCa);
        if (null == nanoClock)
        {
            nanoClock = SystemNanoClock.INSTANCE;
        }

        concluded = true;
        return this;
    }

    private void concludeMembership()
    {
        check(!etcdEndpoints.isBlank(), "--etcd-endpoints must list at least one http://host:port URL");
        etcdSecurity = io.orbitkv.manager.membership.EtcdSecurity.of(etcdCa, etcdCert, etcdKey, etcdUser, etcdPasswordFile);
        etcdSecurity.checkEndpoints(etcdEndpoints);
        check(null != clusterName, "--cluster-name is required with --etcd-endpoints");
        MembershipConfiguration.checkClusterName(clusterName);
        check(null != nodeId, "--node-id is required with --etcd-endpoints");
        ShardPlacement.checkNodeId(nodeId);
        check(authorityLogBytes >= AuthorityLog.MIN_BYTES && authorityLogBytes <= AuthorityLog.MAX_BYTES,
            "--authority-log-bytes must be between " + AuthorityLog.MIN_BYTES + " and " + AuthorityLog.MAX_BYTES + ": " +
            authorityLogBytes);
        check(catalogJournalBytes >= Configuration.MIN_CATALOG_JOURNAL_BYTES && catalogJournalBytes <= Integer.MAX_VALUE,
            "--catalog-journal-bytes must be between " + Configuration.MIN_CATALOG_JOURNAL_BYTES + " (one 64 KiB segment per shard) " +
            "and 2 GiB: " + catalogJournalBytes);
        check(catalogCandidateBytes >= Configuration.MIN_CATALOG_CANDIDATE_BYTES &&
            catalogCandidateBytes <= Configuration.MAX_CATALOG_CANDIDATE_BYTES,
            "--catalog-candidate-bytes must be between " + Configuration.MIN_CATALOG_CANDIDATE_BYTES + " and " +
            Configuration.MAX_CATALOG_CANDIDATE_BYTES + ": " + catalogCandidateBytes);
        check(catalogInventoryBytes >= Configuration.MIN_CATALOG_INVENTORY_BYTES,
            "--catalog-inventory-bytes must be at least " + Configuration.MIN_CATALOG_INVENTORY_BYTES + ": " + catalogInventoryBytes);
        check(membershipTtlSecs >= Configuration.MIN_MEMBERSHIP_TTL_SECS,
            "--membership-ttl-secs must be at least " + Configuration.MIN_MEMBERSHIP_TTL_SECS + ": " +
            membershipTtlSecs + ". Shorter leases were measured to expire across an etcd restart or leader " +
            "election (a few seconds without keepalive replies), which would fence healthy Managers");
        check(etcdDeadlineMs >= Configuration.MIN_ETCD_DEADLINE_MS,
            "--etcd-deadline-ms must be at least " + Configuration.MIN_ETCD_DEADLINE_MS + ": " + etcdDeadlineMs);
        check(etcdDeadlineMs * 1000L < membershipTtlSecs * 500_000L,
            "--etcd-deadline-ms (" + etcdDeadlineMs + ") must be below half the TTL (" + membershipTtlSecs +
            " s): a keepalive that takes longer can never keep the registration valid");
        check(joinTimeoutMs >= Configuration.MIN_JOIN_TIMEOUT_MS,
            "--join-timeout must be at least " + Configuration.MIN_JOIN_TIMEOUT_MS + " ms: " + joinTimeoutMs +
            " ms");
        check(null != catalogNodes, "--catalog-nodes is required with --etcd-endpoints (1-" +
            ShardPlacement.MAX_CATALOG_NODES + " node ids; they seed an empty cluster's placement, a joining Manager follows etcd)");
        check(catalogReplicas >= ShardPlacement.MIN_REPLICAS && catalogReplicas <= ShardPlacement.MAX_REPLICAS,
            "--catalog-replicas must be in [" + ShardPlacement.MIN_REPLICAS + ", " + ShardPlacement.MAX_REPLICAS +
            "] (copies of each catalog shard): " + catalogReplicas);
        placement = ShardPlacement.parse(catalogNodes, catalogReplicas).withSeed(placementSeed);
        check(maxShardMoves >= io.orbitkv.manager.membership.MembershipConfiguration.MIN_SHARD_MOVES &&
            maxShardMoves <= io.orbitkv.manager.membership.MembershipConfiguration.MAX_SHARD_MOVES,
            "--max-shard-moves must be in [" + io.orbitkv.manager.membership.MembershipConfiguration.MIN_SHARD_MOVES +
            ", " + io.orbitkv.manager.membership.MembershipConfiguration.MAX_SHARD_MOVES + "] (shard moves a " +
            "placement transition runs at once): " + maxShardMoves);
        check(null != peerEndpoint && !peerEndpoint.isBlank(), "--peer-endpoint must not be empty");
        check(io.orbitkv.manager.peer.PeerTransport.AUTO_MTU == peerMtuLength ||
            io.orbitkv.manager.peer.PeerTransport.isValidMtuLength(peerMtuLength),
            "--peer-mtu must be auto or " + io.orbitkv.manager.peer.PeerTransport.MTU_RULE + ": " + peerMtuLength);
        check(null != transferEndpoint && !transferEndpoint.isBlank(), "--transfer-endpoint must not be empty");
        check(null != transport, "--transport must be builtin or mooncake");
        check(Configuration.TransportKind.MOONCAKE != transport || (null != teLibrary && !teLibrary.isBlank()),
            "--transport=mooncake needs --te-library PATH (the Mooncake Transfer Engine library)");
        check(transferStreams >= Configuration.MIN_TRANSFER_STREAMS &&
            transferStreams <= Configuration.MAX_TRANSFER_STREAMS,
            "--transfer-streams must be in [" + Configuration.MIN_TRANSFER_STREAMS + ", " +
            Configuration.MAX_TRANSFER_STREAMS + "]: " + transferStreams);
        check(null != peerAdmission, "--peer-admission must be off, always or second-hit");
        check(peerAdmissionWindowNs > 0, "--peer-admission-window must be positive: " + peerAdmissionWindowNs + "ns");
        // The record must fit 1 KiB with the longest runtime values; encoding a worst case checks it now.
        new MemberRecord(nodeId, Long.MAX_VALUE, new java.util.UUID(-1, -1), Long.MIN_VALUE, peerEndpoint,
            transferEndpoint, MembershipConfiguration.PROTOCOL_VERSION, Long.MAX_VALUE).encode();
    }

    private void checkTransfer()
    {
        check(transferBudgetBytes >= 0 && transferBudgetBytes <= poolBytes,
            "--transfer-budget must be 0 (half the pool) or at most the pool (" + poolBytes + "): " + transferBudgetBytes);
        check(transferMaxSessions >= 1 && transferMaxSessions <= io.orbitkv.codecs.TransferLimits.MAX_SESSIONS,
            "--transfer-max-sessions must be 1.." + io.orbitkv.codecs.TransferLimits.MAX_SESSIONS + ": " +
            transferMaxSessions);
        check(transferSessionsPerPeer >= 1 && transferSessionsPerPeer <= io.orbitkv.codecs.TransferLimits.MAX_SESSIONS,
            "--transfer-sessions-per-peer must be 1.." + io.orbitkv.codecs.TransferLimits.MAX_SESSIONS + " (at most " +
            "--transfer-max-sessions takes effect): " + transferSessionsPerPeer);
        check(transferSessionTtlNs >= 1_000_000L && transferSessionTtlNs / 1_000_000L <= Integer.MAX_VALUE,
            "--transfer-session-ttl must be at least 1ms and below 2^31 ms: " + transferSessionTtlNs + " ns");
        check(transferSsdStagingBytes >= 0 && transferSsdStagingBytes <= (1L << 30),
            "--transfer-ssd-staging-bytes must be 0 (DRAM only) or at most 1g: " + transferSsdStagingBytes);
        if (transferSsdStagingBytes > 0)
        {
            // Whole 2 MiB pages, and room for at least one block of the largest size.
            final long minStaging = BitUtil.align((long)maxBlockBytes, (int)Configuration.POOL_BYTES_ALIGNMENT);
            transferSsdStagingBytes = BitUtil.align(
                Math.max(transferSsdStagingBytes, minStaging), (int)Configuration.POOL_BYTES_ALIGNMENT);
        }
    }

    private static void check(final boolean condition, final String message)
    {
        if (!condition)
        {
            throw new IllegalArgumentException(message);
        }
    }

    CncFileDescriptor.Lengths cncLengths()
    {
        return new CncFileDescriptor.Lengths(
            requestRingBytes, maxClients, responseRingBytes, countersValuesBytes, errorLogBytes);
    }

    public File cncFile()
    {
        return new File(dir, CncFileDescriptor.CNC_FILE_NAME);
    }

    public File clientsDir()
    {
        return new File(dir, CncFileDescriptor.CLIENTS_DIR_NAME);
    }

    public String name()
    {
        return name;
    }

    public ManagerContext name(final String name)
    {
        this.name = name;
        return this;
    }

    public File dir()
    {
        return dir;
    }

    /**
     * The Manager directory; unset means {@code /dev/shm/orbitkv/<name>}.
     *
     * @param dir the directory, created if missing.
     * @return this.
     */
    public ManagerContext dir(final File dir)
    {
        this.dir = dir;
        return this;
    }

    public long poolBytes()
    {
        return poolBytes;
    }

    public ManagerContext poolBytes(final long poolBytes)
    {
        this.poolBytes = poolBytes;
        return this;
    }

    public int maxBlockBytes()
    {
        return maxBlockBytes;
    }

    /**
     * Largest block accepted. Unset, it is {@link Configuration#MAX_BLOCK_BYTES_DEFAULT} or the pool size if smaller.
     *
     * @param maxBlockBytes the limit.
     * @return this.
     */
    public ManagerContext maxBlockBytes(final int maxBlockBytes)
    {
        this.maxBlockBytes = maxBlockBytes;
        this.maxBlockBytesSet = true;
        return this;
    }

    public long indexBudgetBytes()
    {
        return indexBudgetBytes;
    }

    public ManagerContext indexBudgetBytes(final long indexBudgetBytes)
    {
        this.indexBudgetBytes = indexBudgetBytes;
        return this;
    }

    public int maxClients()
    {
        return maxClients;
    }

    public ManagerContext maxClients(final int maxClients)
    {
        this.maxClients = maxClients;
        return this;
    }

    public int requestRingBytes()
    {
        return requestRingBytes;
    }

    public ManagerContext requestRingBytes(final int requestRingBytes)
    {
        this.requestRingBytes = requestRingBytes;
        return this;
    }

    public int responseRingBytes()
    {
        return responseRingBytes;
    }

    public ManagerContext responseRingBytes(final int responseRingBytes)
    {
        this.responseRingBytes = responseRingBytes;
        return this;
    }

    public long clientTimeoutNs()
    {
        return clientTimeoutNs;
    }

    public ManagerContext clientTimeoutNs(final long clientTimeoutNs)
    {
        this.clientTimeoutNs = clientTimeoutNs;
        return this;
    }

    public long maxDataRegionBytes()
    {
        return maxDataRegionBytes;
    }

    public ManagerContext maxDataRegionBytes(final long maxDataRegionBytes)
    {
        this.maxDataRegionBytes = maxDataRegionBytes;
        return this;
    }

    public Configuration.PoolPretouch poolPretouch()
    {
        return poolPretouch;
    }

    /**
     * When the pool's pages are faulted in: see {@link Configuration#POOL_PRETOUCH_PROP_NAME}.
     *
     * @param poolPretouch the mode.
     * @return this.
     */
    public ManagerContext poolPretouch(final Configuration.PoolPretouch poolPretouch)
    {
        this.poolPretouch = poolPretouch;
        return this;
    }

    /**
     * The older boolean form: true is {@link Configuration.PoolPretouch#BLOCKING}, false
     * {@link Configuration.PoolPretouch#OFF}.
     *
     * @param poolPretouch whether to touch the pool before the Manager is ready.
     * @return this.
     */
    public ManagerContext poolPretouch(final boolean poolPretouch)
    {
        return poolPretouch(poolPretouch ? Configuration.PoolPretouch.BLOCKING : Configuration.PoolPretouch.OFF);
    }

    public long poolPretouchPauseNs()
    {
        return poolPretouchPauseNs;
    }

    /**
     * Diagnostic throttle of the pre-touch: see {@link Configuration#POOL_PRETOUCH_PAUSE_PROP_NAME}.
     *
     * @param poolPretouchPauseNs pause after each touched chunk, 0 for none.
     * @return this.
     */
    public ManagerContext poolPretouchPauseNs(final long poolPretouchPauseNs)
    {
        this.poolPretouchPauseNs = poolPretouchPauseNs;
        return this;
    }

    public File ssdDir()
    {
        return ssdDir;
    }

    /**
     * @param ssdDir directory for the SSD tier's file, or null for no SSD tier.
     * @return this.
     */
    public ManagerContext ssdDir(final File ssdDir)
    {
        this.ssdDir = ssdDir;
        return this;
    }

    public long ssdBytes()
    {
        return ssdBytes;
    }

    public ManagerContext ssdBytes(final long ssdBytes)
    {
        this.ssdBytes = ssdBytes;
        return this;
    }

    public Configuration.EnginePoolAccess enginePoolAccess()
    {
        return enginePoolAccess;
    }

    public ManagerContext enginePoolAccess(final Configuration.EnginePoolAccess enginePoolAccess)
    {
        this.enginePoolAccess = enginePoolAccess;
        return this;
    }

    /**
     * @return the pool's shared file when engines may map it, else null.
     */
    public File poolFile()
    {
        return Configuration.EnginePoolAccess.WRITE_RESERVED == enginePoolAccess ?
            new File(dir, io.orbitkv.codecs.cnc.CncFileDescriptor.POOL_FILE_NAME) : null;
    }

    public Configuration.SsdAdmission ssdAdmission()
    {
        return ssdAdmission;
    }

    public ManagerContext ssdAdmission(final Configuration.SsdAdmission ssdAdmission)
    {
        this.ssdAdmission = ssdAdmission;
        return this;
    }

    public boolean ssdPromote()
    {
        return ssdPromote;
    }

    public ManagerContext ssdPromote(final boolean ssdPromote)
    {
        this.ssdPromote = ssdPromote;
        return this;
    }

    public Configuration.SsdDirectReads ssdDirectReads()
    {
        return ssdDirectReads;
    }

    public ManagerContext ssdDirectReads(final Configuration.SsdDirectReads ssdDirectReads)
    {
        this.ssdDirectReads = ssdDirectReads;
        return this;
    }

    public int ssdQueueDepth()
    {
        return ssdQueueDepth;
    }

    public ManagerContext ssdQueueDepth(final int ssdQueueDepth)
    {
        this.ssdQueueDepth = ssdQueueDepth;
        return this;
    }

    /**
     * @return whether a start reads the SSD manifest and keeps the residences it records.
     */
    public boolean ssdRecover()
    {
        return ssdRecover;
    }

    /**
     * @return whether a background scan verifies recovered SSD residences before they are read.
     */
    public boolean ssdVerifyRestored()
    {
        return ssdVerifyRestored;
    }

    /**
     * @param ssdVerifyRestored whether a background scan verifies recovered SSD residences before they are read.
     * @return this.
     */
    public ManagerContext ssdVerifyRestored(final boolean ssdVerifyRestored)
    {
        this.ssdVerifyRestored = ssdVerifyRestored;
        return this;
    }

    public ManagerContext ssdRecover(final boolean ssdRecover)
    {
        this.ssdRecover = ssdRecover;
        return this;
    }

    /**
     * @return when the SSD manifest is made durable, or {@link Configuration.SsdManifestSync#OFF} for no manifest.
     */
    public Configuration.SsdManifestSync ssdManifestSync()
    {
        return ssdManifestSync;
    }

    public ManagerContext ssdManifestSync(final Configuration.SsdManifestSync ssdManifestSync)
    {
        this.ssdManifestSync = ssdManifestSync;
        return this;
    }

    /**
     * @return size past which the SSD manifest is rewritten from the live residences.
     */
    public long ssdManifestCheckpointBytes()
    {
        return ssdManifestCheckpointBytes;
    }

    public ManagerContext ssdManifestCheckpointBytes(final long ssdManifestCheckpointBytes)
    {
        this.ssdManifestCheckpointBytes = ssdManifestCheckpointBytes;
        return this;
    }

    public Configuration.SsdBackendChoice ssdBackend()
    {
        return ssdBackend;
    }

    public ManagerContext ssdBackend(final Configuration.SsdBackendChoice ssdBackend)
    {
        this.ssdBackend = ssdBackend;
        return this;
    }

    public SsdBackendSupplier ssdBackendSupplier()
    {
        return ssdBackendSupplier;
    }

    /**
     * @param ssdBackendSupplier makes the SSD tier's backends (a test passes one whose backends fail on demand).
     * @return this.
     */
    public ManagerContext ssdBackendSupplier(final SsdBackendSupplier ssdBackendSupplier)
    {
        this.ssdBackendSupplier = ssdBackendSupplier;
        return this;
    }

    public long ssdStagingBytes()
    {
        return ssdStagingBytes;
    }

    public ManagerContext ssdStagingBytes(final long ssdStagingBytes)
    {
        this.ssdStagingBytes = ssdStagingBytes;
        return this;
    }

    public int copyChunkBytes()
    {
        return copyChunkBytes;
    }

    public ManagerContext copyChunkBytes(final int copyChunkBytes)
    {
        this.copyChunkBytes = copyChunkBytes;
        return this;
    }

    public String idleStrategyName()
    {
        return idleStrategyName;
    }

    /**
     * Idle strategy by name ({@code backoff}, {@code yielding}, {@code busy}), used unless an instance is set.
     *
     * @param idleStrategyName the name.
     * @return this.
     */
    public ManagerContext idleStrategyName(final String idleStrategyName)
    {
        this.idleStrategyName = idleStrategyName;
        return this;
    }

    public boolean idlePeerWait()
    {
        return idlePeerWait;
    }

    /**
     * Whether the idle agent of a clustered Manager sleeps in epoll on its peer socket
     * ({@link Configuration#IDLE_PEER_WAIT_PROP_NAME}); with the {@code backoff} idle strategy only.
     *
     * @param idlePeerWait false to park on a timer.
     * @return this.
     */
    public ManagerContext idlePeerWait(final boolean idlePeerWait)
    {
        this.idlePeerWait = idlePeerWait;
        return this;
    }

    public boolean idleSleep()
    {
        return idleSleep;
    }

    /**
     * Whether the idle agent sleeps until the doorbell, a peer datagram or its longest sleep
     * ({@link Configuration#IDLE_SLEEP_PROP_NAME}); with the {@code backoff} idle strategy only.
     *
     * @param idleSleep false to keep parking at most 100 us at a time.
     * @return this.
     */
    public ManagerContext idleSleep(final boolean idleSleep)
    {
        this.idleSleep = idleSleep;
        return this;
    }

    public long idleLingerNs()
    {
        return idleLingerNs;
    }

    /**
     * How long after its last work the idle agent yields before it parks ({@link Configuration#IDLE_LINGER_PROP_NAME}).
     *
     * @param idleLingerNs nanoseconds in [0, 10 ms].
     * @return this.
     */
    public ManagerContext idleLingerNs(final long idleLingerNs)
    {
        this.idleLingerNs = idleLingerNs;
        return this;
    }

    public long idleSleepAfterNs()
    {
        return idleSleepAfterNs;
    }

    /**
     * How long the idle agent parks before it sleeps ({@link Configuration#IDLE_SLEEP_AFTER_PROP_NAME}).
     *
     * @param idleSleepAfterNs nanoseconds in [0, 1 s].
     * @return this.
     */
    public ManagerContext idleSleepAfterNs(final long idleSleepAfterNs)
    {
        this.idleSleepAfterNs = idleSleepAfterNs;
        return this;
    }

    /**
     * @return the configured longest sleep; the agent also keeps to a quarter of the client liveness timeout.
     */
    public long idleSleepMaxNs()
    {
        return idleSleepMaxNs;
    }

    /**
     * @return the longest sleep the agent takes: the configured one, at most a quarter of the client timeout.
     */
    public long effectiveIdleSleepMaxNs()
    {
        return Math.min(idleSleepMaxNs, clientTimeoutNs / Configuration.IDLE_SLEEP_LIVENESS_FRACTION);
    }

    /**
     * The longest single sleep of the idle agent ({@link Configuration#IDLE_SLEEP_MAX_PROP_NAME}).
     *
     * @param idleSleepMaxNs nanoseconds in [1 ms, 10 s].
     * @return this.
     */
    public ManagerContext idleSleepMaxNs(final long idleSleepMaxNs)
    {
        this.idleSleepMaxNs = idleSleepMaxNs;
        return this;
    }

    /**
     * @return the doorbell FIFO engines ring to wake a sleeping agent.
     */
    public File doorbellFile()
    {
        return new File(dir, CncFileDescriptor.DOORBELL_FILE_NAME);
    }

    public long agentTimerSlackNs()
    {
        return agentTimerSlackNs;
    }

    /**
     * Timer slack the agent thread sets for itself when it starts ({@link Configuration#AGENT_TIMER_SLACK_NS_PROP_NAME}).
     *
     * @param agentTimerSlackNs nanoseconds, 0 to leave the kernel's default.
     * @return this.
     */
    public ManagerContext agentTimerSlackNs(final long agentTimerSlackNs)
    {
        this.agentTimerSlackNs = agentTimerSlackNs;
        return this;
    }

    public IdleStrategy idleStrategy()
    {
        return idleStrategy;
    }

    /**
     * An idle strategy the agent uses as it is: no linger, peer-socket wait or deep sleep is added to it.
     *
     * @param idleStrategy the strategy, or null (the default) for the one {@link #idleStrategyName} names, built by
     *                     the Manager with those waits.
     * @return this.
     */
    public ManagerContext idleStrategy(final IdleStrategy idleStrategy)
    {
        this.idleStrategy = idleStrategy;
        return this;
    }

    public ThreadFactory agentThreadFactory()
    {
        return agentThreadFactory;
    }

    /**
     * Where the thread that runs the Manager's agents comes from, as Aeron's driver takes a factory per agent thread:
     * a deployment may name or pin it, a test may keep it to measure what that thread allocates.
     *
     * @param agentThreadFactory makes the agent thread; {@link Thread#Thread(Runnable)} by default.
     * @return this.
     */
    public ManagerContext agentThreadFactory(final ThreadFactory agentThreadFactory)
    {
        this.agentThreadFactory = agentThreadFactory;
        return this;
    }

    public int metricsPort()
    {
        return metricsPort;
    }

    private static boolean isZmqEndpoint(final String endpoint)
    {
        final int colon = endpoint.lastIndexOf(':');
        return endpoint.startsWith("tcp://") && colon > "tcp://".length() && colon < endpoint.length() - 1 ||
            endpoint.startsWith("ipc://") && endpoint.length() > "ipc://".length() ||
            endpoint.startsWith("inproc://") && endpoint.length() > "inproc://".length();
    }

    /**
     * @return the KV events' PUB endpoint, or null when the Manager publishes none.
     */
    public String kvEventsEndpoint()
    {
        return kvEventsEndpoint;
    }

    /**
     * Publish what the Manager holds as vLLM KV events (docs/engines.md, "KV events for routers"): a wildcard host
     * ({@code tcp://*:5557}) binds, any other host connects (to a router that binds).
     *
     * @param kvEventsEndpoint ZMQ endpoint, or null for no events.
     * @return this.
     */
    public ManagerContext kvEventsEndpoint(final String kvEventsEndpoint)
    {
        this.kvEventsEndpoint = kvEventsEndpoint;
        return this;
    }

    public String kvEventsReplayEndpoint()
    {
        return kvEventsReplayEndpoint;
    }

    /**
     * @param kvEventsReplayEndpoint ROUTER endpoint to bind for replay requests, or null.
     * @return this.
     */
    public ManagerContext kvEventsReplayEndpoint(final String kvEventsReplayEndpoint)
    {
        this.kvEventsReplayEndpoint = kvEventsReplayEndpoint;
        return this;
    }

    public String kvEventsTopic()
    {
        return kvEventsTopic;
    }

    /**
     * @param kvEventsTopic topic frame of every KV-event message ("" by default, as vLLM's).
     * @return this.
     */
    public ManagerContext kvEventsTopic(final String kvEventsTopic)
    {
        this.kvEventsTopic = kvEventsTopic;
        return this;
    }

    /**
     * Port of the Prometheus {@code /metrics} endpoint; 0 disables it.
     *
     * @param metricsPort the port.
     * @return this.
     */
    public ManagerContext metricsPort(final int metricsPort)
    {
        this.metricsPort = metricsPort;
        return this;
    }

    public int maxNamespaces()
    {
        return maxNamespaces;
    }

    /**
     * Distinct namespaces the Manager tracks; a Publish under one more is answered {@code NAMESPACE_LIMIT}.
     *
     * @param maxNamespaces the bound.
     * @return this.
     */
    public ManagerContext maxNamespaces(final int maxNamespaces)
    {
        this.maxNamespaces = maxNamespaces;
        return this;
    }

    public int countersValuesBytes()
    {
        return countersValuesBytes;
    }

    public ManagerContext countersValuesBytes(final int countersValuesBytes)
    {
        this.countersValuesBytes = countersValuesBytes;
        return this;
    }

    public int errorLogBytes()
    {
        return errorLogBytes;
    }

    public ManagerContext errorLogBytes(final int errorLogBytes)
    {
        this.errorLogBytes = errorLogBytes;
        return this;
    }

    public EpochClock epochClock()
    {
        return epochClock;
    }

    public ManagerContext epochClock(final EpochClock epochClock)
    {
        this.epochClock = epochClock;
        return this;
    }

    public NanoClock nanoClock()
    {
        return nanoClock;
    }

    public ManagerContext nanoClock(final NanoClock nanoClock)
    {
        this.nanoClock = nanoClock;
        return this;
    }

    /**
     * Whether this Manager joins a cluster (etcd endpoints given) rather than running standalone.
     *
     * @return true with membership.
     */
    public boolean hasMembership()
    {
        return null != etcdEndpoints;
    }

    public String etcdEndpoints()
    {
        return etcdEndpoints;
    }

    /**
     * Group engines of other users run in; null (the default) keeps the Manager's directory and shared files
     * owner-only.
     *
     * @param engineGroup group name, or null.
     * @return this for a fluent API.
     */
    public ManagerContext engineGroup(final String engineGroup)
    {
        this.engineGroup = engineGroup;
        return this;
    }

    public String engineGroup()
    {
        return engineGroup;
    }

    /**
     * @return modes (and group) of the directory and shared files, built by {@link #conclude()}.
     */
    public EngineFileAccess engineFileAccess()
    {
        return engineFileAccess;
    }

    /**
     * @return TLS and auth of the etcd connection, built and checked by {@link #conclude()}.
     */
    public io.orbitkv.manager.membership.EtcdSecurity etcdSecurity()
    {
        return etcdSecurity;
    }

    /**
     * PEM CA certificate of etcd's server certificate; set, the etcd connection uses TLS.
     *
     * @param etcdCa file, or null.
     * @return this for a fluent API.
     */
    public ManagerContext etcdCa(final String etcdCa)
    {
        this.etcdCa = etcdCa;
        return this;
    }

    /**
     * PEM client certificate presented to etcd.
     *
     * @param etcdCert file, or null.
     * @return this for a fluent API.
     */
    public ManagerContext etcdCert(final String etcdCert)
    {
        this.etcdCert = etcdCert;
        return this;
    }

    /**
     * Unencrypted PKCS#8 PEM key of the client certificate.
     *
     * @param etcdKey file, or null.
     * @return this for a fluent API.
     */
    public ManagerContext etcdKey(final String etcdKey)
    {
        this.etcdKey = etcdKey;
        return this;
    }

    /**
     * etcd user to authenticate as.
     *
     * @param etcdUser user, or null.
     * @return this for a fluent API.
     */
    public ManagerContext etcdUser(final String etcdUser)
    {
        this.etcdUser = etcdUser;
        return this;
    }

    /**
     * Mutual TLS 1.3 for the built-in transport's connections, from PEM files; all three or none. Loaded when the
     * context is concluded, so bad files stop the start.
     *
     * @param cert this node's certificate chain.
     * @param key  its PKCS#8 private key.
     * @param ca   the CA a peer's certificate must lead to.
     * @return this for a fluent API.
     */
    public ManagerContext transportTls(final String cert, final String key, final String ca)
    {
        this.transportTlsCert = cert;
        this.transportTlsKey = key;
        this.transportTlsCa = ca;
        return this;
    }

    public ManagerContext transportTlsCert(final String cert)
    {
        this.transportTlsCert = cert;
        return this;
    }

    public ManagerContext transportTlsKey(final String key)
    {
        this.transportTlsKey = key;
        return this;
    }

    public ManagerContext transportTlsCa(final String ca)
    {
        this.transportTlsCa = ca;
        return this;
    }

    public String transportTlsCert()
    {
        return transportTlsCert;
    }

    public String transportTlsKey()
    {
        return transportTlsKey;
    }

    public String transportTlsCa()
    {
        return transportTlsCa;
    }

    /**
     * @return the built-in transport's TLS once concluded ({@code --transport-tls-cert}, {@code --transport-tls-key},
     *     {@code --transport-tls-ca}), or null when its connections are plain TCP.
     */
    public io.orbitkv.transport.TransportTls transportTls()
    {
        return transportTls;
    }

    private static io.orbitkv.transport.TransportTls loadTransportTls(
        final String cert, final String key, final String ca)
    {
        if (null == cert && null == key && null == ca)
        {
            return null;
        }
        if (null == cert || null == key || null == ca)
        {
            throw new IllegalArgumentException("transport TLS needs all three of --transport-tls-cert, " +
                "--transport-tls-key and --transport-tls-ca (given: cert " + cert + ", key " + key + ", ca " + ca + ")");
        }
        return io.orbitkv.transport.TransportTls.fromPem(
            java.nio.file.Path.of(cert), java.nio.file.Path.of(key), java.nio.file.Path.of(ca));
    }

    /**
     * Owner-only file holding the cluster secret ({@code --cluster-secret-file}); read and checked when the context is
     * concluded (a standalone Manager has no peer channel to authenticate, but a bad file is still refused).
     *
     * @param clusterSecretFile file, or null for an unauthenticated peer channel.
     * @return this for a fluent API.
     */
    public ManagerContext clusterSecretFile(final String clusterSecretFile)
    {
        this.clusterSecretFile = clusterSecretFile;
        return this;
    }

    public String clusterSecretFile()
    {
        return clusterSecretFile;
    }

    /**
     * @return the cluster secret's keys once concluded, or null when the peer channel is not authenticated.
     */
    public io.orbitkv.manager.peer.ClusterSecret clusterSecret()
    {
        return clusterSecret;
    }

    /**
     * Owner-only file holding the etcd user's password.
     *
     * @param etcdPasswordFile file, or null.
     * @return this for a fluent API.
     */
    public ManagerContext etcdPasswordFile(final String etcdPasswordFile)
    {
        this.etcdPasswordFile = etcdPasswordFile;
        return this;
    }

    /**
     * etcd client URLs, comma-separated; null (the default) keeps the Manager standalone with no jetcd threads.
     *
     * @param etcdEndpoints e.g. {@code http://127.0.0.1:23790}.
     * @return this.
     */
    public ManagerContext etcdEndpoints(final String etcdEndpoints)
    {
        this.etcdEndpoints = etcdEndpoints;
        return this;
    }

    public String clusterName()
    {
        return clusterName;
    }

    public ManagerContext clusterName(final String clusterName)
    {
        this.clusterName = clusterName;
        return this;
    }

    public String nodeId()
    {
        return nodeId;
    }

    public ManagerContext nodeId(final String nodeId)
    {
        this.nodeId = nodeId;
        return this;
    }

    /**
     * @return ceiling of the owner inventory's tables; the inventory is sized from the tiers' index capacity up to it.
     */
    public long catalogInventoryBytes()
    {
        return catalogInventoryBytes;
    }

    /**
     * @return logical byte budget of the candidate index (design: 16 MiB).
     */
    public long catalogCandidateBytes()
    {
        return catalogCandidateBytes;
    }

    public ManagerContext catalogCandidateBytes(final long catalogCandidateBytes)
    {
        this.catalogCandidateBytes = catalogCandidateBytes;
        return this;
    }

    public ManagerContext catalogInventoryBytes(final long catalogInventoryBytes)
    {
        this.catalogInventoryBytes = catalogInventoryBytes;
        return this;
    }

    /**
     * @return bytes of the owner journals of all 16 shards together (design: 16 MiB).
     */
    public long catalogJournalBytes()
    {
        return catalogJournalBytes;
    }

    public ManagerContext catalogJournalBytes(final long catalogJournalBytes)
    {
        this.catalogJournalBytes = catalogJournalBytes;
        return this;
    }

    /**
     * @return bytes of the authority log (clustered Managers only).
     */
    public long authorityLogBytes()
    {
        return authorityLogBytes;
    }

    public ManagerContext authorityLogBytes(final long authorityLogBytes)
    {
        this.authorityLogBytes = authorityLogBytes;
        return this;
    }

    public int membershipTtlSecs()
    {
        return membershipTtlSecs;
    }

    public ManagerContext membershipTtlSecs(final int membershipTtlSecs)
    {
        this.membershipTtlSecs = membershipTtlSecs;
        return this;
    }

    public long etcdDeadlineMs()
    {
        return etcdDeadlineMs;
    }

    /**
     * @return how long joining keeps retrying an etcd that does not answer, in milliseconds.
     */
    public long joinTimeoutMs()
    {
        return joinTimeoutMs;
    }

    /**
     * How long joining (placement check and first registration) keeps retrying, with backoff, while etcd does not
     * answer; then the launch fails with the last error. Engines are served meanwhile.
     *
     * @param joinTimeoutMs at least {@link Configuration#MIN_JOIN_TIMEOUT_MS}.
     * @return this.
     */
    public ManagerContext joinTimeoutMs(final long joinTimeoutMs)
    {
        this.joinTimeoutMs = joinTimeoutMs;
        return this;
    }

    public ManagerContext etcdDeadlineMs(final long etcdDeadlineMs)
    {
        this.etcdDeadlineMs = etcdDeadlineMs;
        return this;
    }

    public String catalogNodes()
    {
        return catalogNodes;
    }

    public ManagerContext catalogNodes(final String catalogNodes)
    {
        this.catalogNodes = catalogNodes;
        return this;
    }

    public int catalogReplicas()
    {
        return catalogReplicas;
    }

    /**
     * Copies of each catalog shard; part of the placement it seeds (a joining Manager follows etcd). With fewer
     * catalog nodes than this, every node holds every shard.
     *
     * @param catalogReplicas in [{@link ShardPlacement#MIN_REPLICAS}, {@link ShardPlacement#MAX_REPLICAS}].
     * @return this.
     */
    public ManagerContext catalogReplicas(final int catalogReplicas)
    {
        this.catalogReplicas = catalogReplicas;
        return this;
    }

    public String placementSeed()
    {
        return placementSeed;
    }

    /**
     * Agreed seed of the rendezvous scores of the placement it seeds ("" for none); a joining Manager follows etcd.
     *
     * @param placementSeed 1-64 characters of [A-Za-z0-9._-], or "".
     * @return this.
     */
    public ManagerContext placementSeed(final String placementSeed)
    {
        this.placementSeed = null == placementSeed ? "" : placementSeed;
        return this;
    }

    public int maxShardMoves()
    {
        return maxShardMoves;
    }

    /**
     * Shard moves a placement transition runs at once while this Manager is the elected reconciler.
     *
     * @param maxShardMoves in [1, 16].
     * @return this.
     */
    public ManagerContext maxShardMoves(final int maxShardMoves)
    {
        this.maxShardMoves = maxShardMoves;
        return this;
    }

    /**
     * The canonical placement of {@link #catalogNodes()} with {@link #catalogReplicas()} copies, after conclude.
     *
     * @return placement or null when standalone.
     */
    public ShardPlacement placement()
    {
        return placement;
    }

    public String peerEndpoint()
    {
        return peerEndpoint;
    }

    public ManagerContext peerEndpoint(final String peerEndpoint)
    {
        this.peerEndpoint = peerEndpoint;
        return this;
    }

    /**
     * @return payload bytes per peer datagram, {@code PeerTransport.AUTO_MTU} for the interface's MTU.
     */
    public int peerMtuLength()
    {
        return peerMtuLength;
    }

    public ManagerContext peerMtuLength(final int peerMtuLength)
    {
        this.peerMtuLength = peerMtuLength;
        return this;
    }

    public String transferEndpoint()
    {
        return transferEndpoint;
    }

    public Configuration.TransportKind transport()
    {
        return transport;
    }

    public ManagerContext transport(final Configuration.TransportKind transport)
    {
        this.transport = transport;
        return this;
    }

    public String teLibrary()
    {
        return teLibrary;
    }

    public ManagerContext teLibrary(final String teLibrary)
    {
        this.teLibrary = teLibrary;
        return this;
    }

    public int transferStreams()
    {
        return transferStreams;
    }

    public ManagerContext transferStreams(final int transferStreams)
    {
        this.transferStreams = transferStreams;
        return this;
    }

    public PeerAdmission.Policy peerAdmission()
    {
        return peerAdmission;
    }

    public ManagerContext peerAdmission(final PeerAdmission.Policy peerAdmission)
    {
        this.peerAdmission = peerAdmission;
        return this;
    }

    public long peerAdmissionWindowNs()
    {
        return peerAdmissionWindowNs;
    }

    public ManagerContext peerAdmissionWindowNs(final long peerAdmissionWindowNs)
    {
        this.peerAdmissionWindowNs = peerAdmissionWindowNs;
        return this;
    }

    public ManagerContext transferEndpoint(final String transferEndpoint)
    {
        this.transferEndpoint = transferEndpoint;
        return this;
    }

    /**
     * @return the transfer budget as configured; 0 means half the pool (see {@link #effectiveTransferBudgetBytes()}).
     */
    public long transferBudgetBytes()
    {
        return transferBudgetBytes;
    }

    public ManagerContext transferBudgetBytes(final long transferBudgetBytes)
    {
        this.transferBudgetBytes = transferBudgetBytes;
        return this;
    }

    /**
     * @return bytes of whole allocations a transfer source may hold pinned: the flag, or half the pool for 0.
     */
    public long effectiveTransferBudgetBytes()
    {
        return 0 == transferBudgetBytes ? poolBytes / 2 : transferBudgetBytes;
    }

    public int transferMaxSessions()
    {
        return transferMaxSessions;
    }

    public ManagerContext transferMaxSessions(final int transferMaxSessions)
    {
        this.transferMaxSessions = transferMaxSessions;
        return this;
    }

    /**
     * @return sessions one requesting peer may hold as configured (no more than {@link #transferMaxSessions()} take
     * effect, see {@link #effectiveTransferSessionsPerPeer()}).
     */
    public int transferSessionsPerPeer()
    {
        return transferSessionsPerPeer;
    }

    /**
     * @return the per-peer session limit in force: the flag, at most the session limit.
     */
    public int effectiveTransferSessionsPerPeer()
    {
        return Math.min(transferSessionsPerPeer, transferMaxSessions);
    }

    public ManagerContext transferSessionsPerPeer(final int transferSessionsPerPeer)
    {
        this.transferSessionsPerPeer = transferSessionsPerPeer;
        return this;
    }

    public long transferSessionTtlNs()
    {
        return transferSessionTtlNs;
    }

    public ManagerContext transferSessionTtlNs(final long transferSessionTtlNs)
    {
        this.transferSessionTtlNs = transferSessionTtlNs;
        return this;
    }

    /**
     * @return bytes of export staging for SSD-only residences (rounded up to whole 2 MiB pages when concluded), 0 for
     * none.
     */
    public long transferSsdStagingBytes()
    {
        return transferSsdStagingBytes;
    }

    public ManagerContext transferSsdStagingBytes(final long transferSsdStagingBytes)
    {
        this.transferSsdStagingBytes = transferSsdStagingBytes;
        return this;
    }

    /**
     * @return what opens the transfer transport (concluded: the one {@link Configuration#transferTransportSupplier()}
     * names unless one was given).
     */
    public TransportSupplier transferTransportSupplier()
    {
        return transferTransportSupplier;
    }

    /**
     * @param transferTransportSupplier opens the transfer transport: the default opens what {@code --transport}
     *                                  names; one that wraps it injects faults from outside the product's path.
     * @return this.
     */
    public ManagerContext transferTransportSupplier(final TransportSupplier transferTransportSupplier)
    {
        this.transferTransportSupplier = transferTransportSupplier;
        return this;
    }

    public PrintStream membershipLog()
    {
        return membershipLog;
    }

    public ManagerContext membershipLog(final PrintStream membershipLog)
    {
        this.membershipLog = membershipLog;
        return this;
    }

    public String toString()
    {
        return "ManagerContext{name=" + name +
            ", dir=" + dir +
            ", poolBytes=" + poolBytes +
            ", maxBlockBytes=" + maxBlockBytes +
            ", indexBudgetBytes=" + indexBudgetBytes +
            ", maxClients=" + maxClients +
            ", requestRingBytes=" + requestRingBytes +
            ", responseRingBytes=" + responseRingBytes +
            ", clientTimeoutNs=" + clientTimeoutNs +
            ", maxDataRegionBytes=" + maxDataRegionBytes +
            ", copyChunkBytes=" + copyChunkBytes +
            ", poolPretouch=" + poolPretouch +
            ", poolPretouchPauseNs=" + poolPretouchPauseNs +
            ", idleStrategy=" + idleStrategyName +
            ", agentTimerSlackNs=" + agentTimerSlackNs +
            ", idlePeerWait=" + idlePeerWait +
            ", idleSleep=" + idleSleep +
            ", idleLingerNs=" + idleLingerNs +
            ", idleSleepAfterNs=" + idleSleepAfterNs +
            ", idleSleepMaxNs=" + idleSleepMaxNs +
            ", transport=" + transport +
            ", teLibrary=" + teLibrary +
            ", transferStreams=" + transferStreams +
            ", peerAdmission=" + peerAdmission +
            ", peerAdmissionWindowNs=" + peerAdmissionWindowNs +
            ", metricsPort=" + metricsPort +
            ", kvEventsEndpoint=" + kvEventsEndpoint +
            ", kvEventsReplayEndpoint=" + kvEventsReplayEndpoint +
            ", kvEventsTopic=" + kvEventsTopic +
            '}';
    }
}
