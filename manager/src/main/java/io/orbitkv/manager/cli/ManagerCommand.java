package io.orbitkv.manager.cli;

import io.orbitkv.codecs.ShardPlacement;
import io.orbitkv.manager.Configuration;
import io.orbitkv.manager.Manager;
import io.orbitkv.manager.ManagerContext;
import java.io.File;
import java.io.PrintWriter;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.function.Supplier;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code orbitkv manager}: runs a standalone Manager (embedded defaults: no etcd, no network) until SIGINT/SIGTERM,
 * after printing where engines attach and how to read its counters.
 * <p>
 * Every flag is a {@link Configuration} property ({@link #SETTINGS}). The defaults picocli shows and fills in come
 * from {@link Configuration} ({@link ConfigurationDefaults}: the property's value when set, else the default), and
 * only the flags given on the command line are applied to the {@link ManagerContext}, which takes everything else
 * from the same getters. So a flag wins, else the system property, else the default; the two never disagree silently.
 * Values are parsed by Configuration's parsers, named after the flag or the property they came from.
 */
@Command(
    name = "manager",
    mixinStandardHelpOptions = true,
    defaultValueProvider = ManagerCommand.ConfigurationDefaults.class,
    description = "Run an OrbitKV Manager: engines attach over shared memory under --dir; with --etcd-endpoints it " +
        "also registers in a cluster. Every flag has a system property (-Dorbitkv.manager.*, docs/configuration.md); " +
        "a flag overrides it and the defaults shown are the properties' values where set.")
public final class ManagerCommand implements Callable<Integer>
{
    /**
     * Applies one flag's value, as given on the command line, to the context.
     */
    @FunctionalInterface
    interface Apply
    {
        void apply(ManagerCommand command, ManagerContext ctx, String flag);
    }

    /**
     * One flag and the property behind it.
     *
     * @param flag        the option's name.
     * @param property    the {@link Configuration} property of the same setting.
     * @param defaultText the default as the flag spells it; null where unset is the default.
     * @param getter      the property's typed getter, run to validate a set property before it is shown as the
     *                    default; null for a switch that only sets another flag's property ({@code --no-pool-pretouch}).
     * @param apply       sets the context from the option's field.
     */
    record Setting(String flag, String property, String defaultText, Supplier<?> getter, Apply apply)
    {
    }

    /**
     * Every flag of the command with its property, in the order they are applied ({@code --no-pool-pretouch} after
     * {@code --pool-pretouch}, so it wins as it always did). A flag without a row, or a property that is neither here
     * nor in {@link #PROPERTIES_WITHOUT_FLAG}, fails ManagerCommandConfigurationTest.
     */
    static final List<Setting> SETTINGS = List.of(
        new Setting("--name", Configuration.NAME_PROP_NAME, Configuration.NAME_DEFAULT, Configuration::name,
            (c, ctx, flag) -> ctx.name(c.name)),
        new Setting("--dir", Configuration.DIR_PROP_NAME, null, () -> System.getProperty(Configuration.DIR_PROP_NAME),
            (c, ctx, flag) -> ctx.dir(c.dir)),
        new Setting("--pool-bytes", Configuration.POOL_BYTES_PROP_NAME,
            Configuration.sizeText(Configuration.POOL_BYTES_DEFAULT), Configuration::poolBytes,
            (c, ctx, flag) -> ctx.poolBytes(Configuration.parseSize(flag, c.poolBytes))),
        new Setting("--max-block-bytes", Configuration.MAX_BLOCK_BYTES_PROP_NAME,
            Configuration.sizeText(Configuration.MAX_BLOCK_BYTES_DEFAULT), Configuration::maxBlockBytes,
            (c, ctx, flag) -> ctx.maxBlockBytes(Configuration.parseIntSize(flag, c.maxBlockBytes))),
        new Setting("--index-budget-bytes", Configuration.INDEX_BUDGET_BYTES_PROP_NAME,
            Configuration.sizeText(Configuration.INDEX_BUDGET_BYTES_DEFAULT), Configuration::indexBudgetBytes,
            (c, ctx, flag) -> ctx.indexBudgetBytes(Configuration.parseSize(flag, c.indexBudgetBytes))),
        new Setting("--max-clients", Configuration.MAX_CLIENTS_PROP_NAME,
            Integer.toString(Configuration.MAX_CLIENTS_DEFAULT), Configuration::maxClients,
            (c, ctx, flag) -> ctx.maxClients(Configuration.parseInt(flag, c.maxClients))),
        new Setting("--request-ring-bytes", Configuration.REQUEST_RING_BYTES_PROP_NAME,
            Configuration.sizeText(Configuration.REQUEST_RING_BYTES_DEFAULT), Configuration::requestRingBytes,
            (c, ctx, flag) -> ctx.requestRingBytes(Configuration.parseIntSize(flag, c.requestRingBytes))),
        new Setting("--response-ring-bytes", Configuration.RESPONSE_RING_BYTES_PROP_NAME,
            Configuration.sizeText(Configuration.RESPONSE_RING_BYTES_DEFAULT), Configuration::responseRingBytes,
            (c, ctx, flag) -> ctx.responseRingBytes(Configuration.parseIntSize(flag, c.responseRingBytes))),
        new Setting("--client-timeout", Configuration.CLIENT_TIMEOUT_PROP_NAME,
            Configuration.durationText(Configuration.CLIENT_TIMEOUT_NS_DEFAULT), Configuration::clientTimeoutNs,
            (c, ctx, flag) -> ctx.clientTimeoutNs(Configuration.parseDurationNs(flag, c.clientTimeout))),
        new Setting("--max-data-region-bytes", Configuration.MAX_DATA_REGION_BYTES_PROP_NAME,
            Configuration.sizeText(Configuration.MAX_DATA_REGION_BYTES_DEFAULT), Configuration::maxDataRegionBytes,
            (c, ctx, flag) -> ctx.maxDataRegionBytes(Configuration.parseSize(flag, c.maxDataRegionBytes))),
        new Setting("--copy-chunk-bytes", Configuration.COPY_CHUNK_BYTES_PROP_NAME,
            Configuration.sizeText(Configuration.COPY_CHUNK_BYTES_DEFAULT), Configuration::copyChunkBytes,
            (c, ctx, flag) -> ctx.copyChunkBytes(Configuration.parseIntSize(flag, c.copyChunkBytes))),
        new Setting("--pool-pretouch", Configuration.POOL_PRETOUCH_PROP_NAME,
            Configuration.POOL_PRETOUCH_DEFAULT.flagValue(), Configuration::poolPretouch,
            (c, ctx, flag) -> ctx.poolPretouch(Configuration.parsePoolPretouch(flag, c.poolPretouch))),
        new Setting("--no-pool-pretouch", Configuration.POOL_PRETOUCH_PROP_NAME, null, null,
            (c, ctx, flag) -> ctx.poolPretouch(c.noPoolPretouch ? Configuration.PoolPretouch.OFF : ctx.poolPretouch())),
        new Setting("--pool-pretouch-pause", Configuration.POOL_PRETOUCH_PAUSE_PROP_NAME,
            Configuration.durationText(Configuration.POOL_PRETOUCH_PAUSE_NS_DEFAULT), Configuration::poolPretouchPauseNs,
            (c, ctx, flag) -> ctx.poolPretouchPauseNs(Configuration.parseDurationNs(flag, c.poolPretouchPause))),
        new Setting("--max-namespaces", Configuration.MAX_NAMESPACES_PROP_NAME,
            Integer.toString(Configuration.MAX_NAMESPACES_DEFAULT), Configuration::maxNamespaces,
            (c, ctx, flag) -> ctx.maxNamespaces(Configuration.parseInt(flag, c.maxNamespaces))),
        new Setting("--idle-sleep", Configuration.IDLE_SLEEP_PROP_NAME,
            Boolean.toString(Configuration.IDLE_SLEEP_DEFAULT), Configuration::idleSleep,
            (c, ctx, flag) -> ctx.idleSleep(c.idleSleep)),
        new Setting("--idle-linger", Configuration.IDLE_LINGER_PROP_NAME,
            Configuration.durationText(Configuration.IDLE_LINGER_NS_DEFAULT), Configuration::idleLingerNs,
            (c, ctx, flag) -> ctx.idleLingerNs(Configuration.parseDurationNs(flag, c.idleLinger))),
        new Setting("--idle-sleep-after", Configuration.IDLE_SLEEP_AFTER_PROP_NAME,
            Configuration.durationText(Configuration.IDLE_SLEEP_AFTER_NS_DEFAULT), Configuration::idleSleepAfterNs,
            (c, ctx, flag) -> ctx.idleSleepAfterNs(Configuration.parseDurationNs(flag, c.idleSleepAfter))),
        new Setting("--idle-sleep-max", Configuration.IDLE_SLEEP_MAX_PROP_NAME,
            Configuration.durationText(Configuration.IDLE_SLEEP_MAX_NS_DEFAULT), Configuration::idleSleepMaxNs,
            (c, ctx, flag) -> ctx.idleSleepMaxNs(Configuration.parseDurationNs(flag, c.idleSleepMax))),
        new Setting("--idle-strategy", Configuration.IDLE_STRATEGY_PROP_NAME, Configuration.IDLE_STRATEGY_DEFAULT,
            Configuration::idleStrategyName, (c, ctx, flag) -> ctx.idleStrategyName(c.idleStrategy)),
        new Setting("--metrics-port", Configuration.METRICS_PORT_PROP_NAME,
            Integer.toString(Configuration.METRICS_PORT_DEFAULT), Configuration::metricsPort,
            (c, ctx, flag) -> ctx.metricsPort(Configuration.parseInt(flag, c.metricsPort))),
        new Setting("--kv-events-endpoint", Configuration.KV_EVENTS_ENDPOINT_PROP_NAME, null,
            Configuration::kvEventsEndpoint, (c, ctx, flag) -> ctx.kvEventsEndpoint(c.kvEventsEndpoint)),
        new Setting("--kv-events-replay-endpoint", Configuration.KV_EVENTS_REPLAY_ENDPOINT_PROP_NAME, null,
            Configuration::kvEventsReplayEndpoint,
            (c, ctx, flag) -> ctx.kvEventsReplayEndpoint(c.kvEventsReplayEndpoint)),
        new Setting("--kv-events-topic", Configuration.KV_EVENTS_TOPIC_PROP_NAME, Configuration.KV_EVENTS_TOPIC_DEFAULT,
            Configuration::kvEventsTopic, (c, ctx, flag) -> ctx.kvEventsTopic(c.kvEventsTopic)),
        new Setting("--ssd-dir", Configuration.SSD_DIR_PROP_NAME, null, Configuration::ssdDir,
            (c, ctx, flag) -> ctx.ssdDir(c.ssdDir)),
        new Setting("--ssd-bytes", Configuration.SSD_BYTES_PROP_NAME,
            Configuration.sizeText(Configuration.SSD_BYTES_DEFAULT), Configuration::ssdBytes,
            (c, ctx, flag) -> ctx.ssdBytes(Configuration.parseSize(flag, c.ssdBytes))),
        new Setting("--engine-pool-access", Configuration.ENGINE_POOL_ACCESS_PROP_NAME,
            Configuration.ENGINE_POOL_ACCESS_DEFAULT.name().toLowerCase(Locale.ROOT).replace('_', '-'),
            Configuration::enginePoolAccess,
            (c, ctx, flag) -> ctx.enginePoolAccess(Configuration.parseEnginePoolAccess(flag, c.enginePoolAccess))),
        new Setting("--ssd-admission", Configuration.SSD_ADMISSION_PROP_NAME,
            Configuration.SSD_ADMISSION_DEFAULT.name().toLowerCase(Locale.ROOT).replace('_', '-'),
            Configuration::ssdAdmission,
            (c, ctx, flag) -> ctx.ssdAdmission(Configuration.parseSsdAdmission(flag, c.ssdAdmission))),
        new Setting("--ssd-promote", Configuration.SSD_PROMOTE_PROP_NAME,
            Boolean.toString(Configuration.SSD_PROMOTE_DEFAULT), Configuration::ssdPromote,
            (c, ctx, flag) -> ctx.ssdPromote(c.ssdPromote)),
        new Setting("--ssd-direct-reads", Configuration.SSD_DIRECT_READS_PROP_NAME,
            Configuration.SSD_DIRECT_READS_DEFAULT.name().toLowerCase(Locale.ROOT), Configuration::ssdDirectReads,
            (c, ctx, flag) -> ctx.ssdDirectReads(Configuration.parseSsdDirectReads(flag, c.ssdDirectReads))),
        new Setting("--ssd-queue-depth", Configuration.SSD_QUEUE_DEPTH_PROP_NAME,
            Integer.toString(Configuration.SSD_QUEUE_DEPTH_DEFAULT), Configuration::ssdQueueDepth,
            (c, ctx, flag) -> ctx.ssdQueueDepth(Configuration.parseInt(flag, c.ssdQueueDepth))),
        new Setting("--ssd-backend", Configuration.SSD_BACKEND_PROP_NAME,
            Configuration.SSD_BACKEND_DEFAULT.name().toLowerCase(Locale.ROOT), Configuration::ssdBackend,
            (c, ctx, flag) -> ctx.ssdBackend(Configuration.parseSsdBackend(flag, c.ssdBackend))),
        new Setting("--ssd-staging-bytes", Configuration.SSD_STAGING_BYTES_PROP_NAME,
            Configuration.sizeText(Configuration.SSD_STAGING_BYTES_DEFAULT), Configuration::ssdStagingBytes,
            (c, ctx, flag) -> ctx.ssdStagingBytes(Configuration.parseSize(flag, c.ssdStagingBytes))),
        new Setting("--ssd-recover", Configuration.SSD_RECOVER_PROP_NAME, Configuration.SSD_RECOVER_DEFAULT ? "on" : "off",
            Configuration::ssdRecover, (c, ctx, flag) -> ctx.ssdRecover(Configuration.parseOnOff(flag, c.ssdRecover))),
        new Setting("--ssd-verify-restored", Configuration.SSD_VERIFY_RESTORED_PROP_NAME,
            Configuration.SSD_VERIFY_RESTORED_DEFAULT ? "on" : "off", Configuration::ssdVerifyRestored,
            (c, ctx, flag) -> ctx.ssdVerifyRestored(Configuration.parseOnOff(flag, c.ssdVerifyRestored))),
        new Setting("--ssd-manifest-sync", Configuration.SSD_MANIFEST_SYNC_PROP_NAME,
            Configuration.SSD_MANIFEST_SYNC_DEFAULT.name().toLowerCase(Locale.ROOT), Configuration::ssdManifestSync,
            (c, ctx, flag) -> ctx.ssdManifestSync(Configuration.parseSsdManifestSync(flag, c.ssdManifestSync))),
        new Setting("--ssd-manifest-checkpoint-bytes", Configuration.SSD_MANIFEST_CHECKPOINT_BYTES_PROP_NAME,
            Configuration.sizeText(Configuration.SSD_MANIFEST_CHECKPOINT_BYTES_DEFAULT),
            Configuration::ssdManifestCheckpointBytes,
            (c, ctx, flag) -> ctx.ssdManifestCheckpointBytes(Configuration.parseSize(flag, c.ssdManifestCheckpointBytes))),
        new Setting("--etcd-endpoints", Configuration.ETCD_ENDPOINTS_PROP_NAME, null, Configuration::etcdEndpoints,
            (c, ctx, flag) -> ctx.etcdEndpoints(c.etcdEndpoints)),
        new Setting("--engine-group", Configuration.ENGINE_GROUP_PROP_NAME, null, Configuration::engineGroup,
            (c, ctx, flag) -> ctx.engineGroup(c.engineGroup)),
        new Setting("--etcd-ca", Configuration.ETCD_CA_PROP_NAME, null, Configuration::etcdCa,
            (c, ctx, flag) -> ctx.etcdCa(c.etcdTls.ca)),
        new Setting("--etcd-cert", Configuration.ETCD_CERT_PROP_NAME, null, Configuration::etcdCert,
            (c, ctx, flag) -> ctx.etcdCert(c.etcdTls.cert)),
        new Setting("--etcd-key", Configuration.ETCD_KEY_PROP_NAME, null, Configuration::etcdKey,
            (c, ctx, flag) -> ctx.etcdKey(c.etcdTls.key)),
        new Setting("--etcd-user", Configuration.ETCD_USER_PROP_NAME, null, Configuration::etcdUser,
            (c, ctx, flag) -> ctx.etcdUser(c.etcdTls.user)),
        new Setting("--etcd-password-file", Configuration.ETCD_PASSWORD_FILE_PROP_NAME, null,
            Configuration::etcdPasswordFile, (c, ctx, flag) -> ctx.etcdPasswordFile(c.etcdTls.passwordFile)),
        new Setting("--cluster-secret-file", Configuration.CLUSTER_SECRET_FILE_PROP_NAME, null,
            Configuration::clusterSecretFile, (c, ctx, flag) -> ctx.clusterSecretFile(c.clusterSecretFile)),
        new Setting("--transport-tls-cert", Configuration.TRANSPORT_TLS_CERT_PROP_NAME, null,
            Configuration::transportTlsCert, (c, ctx, flag) -> ctx.transportTlsCert(c.transportTlsCert)),
        new Setting("--transport-tls-key", Configuration.TRANSPORT_TLS_KEY_PROP_NAME, null,
            Configuration::transportTlsKey, (c, ctx, flag) -> ctx.transportTlsKey(c.transportTlsKey)),
        new Setting("--transport-tls-ca", Configuration.TRANSPORT_TLS_CA_PROP_NAME, null,
            Configuration::transportTlsCa, (c, ctx, flag) -> ctx.transportTlsCa(c.transportTlsCa)),
        new Setting("--cluster-name", Configuration.CLUSTER_NAME_PROP_NAME, null, Configuration::clusterName,
            (c, ctx, flag) -> ctx.clusterName(c.clusterName)),
        new Setting("--node-id", Configuration.NODE_ID_PROP_NAME, null, Configuration::nodeId,
            (c, ctx, flag) -> ctx.nodeId(c.nodeId)),
        new Setting("--membership-ttl-secs", Configuration.MEMBERSHIP_TTL_SECS_PROP_NAME,
            Integer.toString(Configuration.MEMBERSHIP_TTL_SECS_DEFAULT), Configuration::membershipTtlSecs,
            (c, ctx, flag) -> ctx.membershipTtlSecs(Configuration.parseInt(flag, c.membershipTtlSecs))),
        new Setting("--etcd-deadline-ms", Configuration.ETCD_DEADLINE_MS_PROP_NAME,
            Long.toString(Configuration.ETCD_DEADLINE_MS_DEFAULT), Configuration::etcdDeadlineMs,
            (c, ctx, flag) -> ctx.etcdDeadlineMs(Configuration.parseLong(flag, c.etcdDeadlineMs))),
        new Setting("--join-timeout", Configuration.JOIN_TIMEOUT_PROP_NAME, Configuration.JOIN_TIMEOUT_DEFAULT_TEXT,
            Configuration::joinTimeoutMs,
            (c, ctx, flag) -> ctx.joinTimeoutMs(Configuration.parseJoinTimeoutMs(flag, c.joinTimeout))),
        new Setting("--catalog-nodes", Configuration.CATALOG_NODES_PROP_NAME, null, Configuration::catalogNodes,
            (c, ctx, flag) -> ctx.catalogNodes(c.catalogNodes)),
        new Setting("--catalog-replicas", Configuration.CATALOG_REPLICAS_PROP_NAME,
            Integer.toString(Configuration.CATALOG_REPLICAS_DEFAULT), Configuration::catalogReplicas,
            (c, ctx, flag) -> ctx.catalogReplicas(Configuration.parseInt(flag, c.catalogReplicas))),
        new Setting("--placement-seed", Configuration.PLACEMENT_SEED_PROP_NAME, "", Configuration::placementSeed,
            (c, ctx, flag) -> ctx.placementSeed(c.placementSeed)),
        new Setting("--max-shard-moves", Configuration.MAX_SHARD_MOVES_PROP_NAME,
            Integer.toString(Configuration.MAX_SHARD_MOVES_DEFAULT), Configuration::maxShardMoves,
            (c, ctx, flag) -> ctx.maxShardMoves(Configuration.parseInt(flag, c.maxShardMoves))),
        new Setting("--peer-endpoint", Configuration.PEER_ENDPOINT_PROP_NAME, Configuration.PEER_ENDPOINT_DEFAULT,
            Configuration::peerEndpoint, (c, ctx, flag) -> ctx.peerEndpoint(c.peerEndpoint)),
        new Setting("--peer-mtu", Configuration.PEER_MTU_PROP_NAME, "auto", Configuration::peerMtuLength,
            (c, ctx, flag) -> ctx.peerMtuLength(Configuration.parsePeerMtu(flag, c.peerMtu))),
        new Setting("--transfer-endpoint", Configuration.TRANSFER_ENDPOINT_PROP_NAME,
            Configuration.TRANSFER_ENDPOINT_DEFAULT, Configuration::transferEndpoint,
            (c, ctx, flag) -> ctx.transferEndpoint(c.transferEndpoint)),
        new Setting("--transport", Configuration.TRANSPORT_PROP_NAME,
            Configuration.TRANSPORT_DEFAULT.name().toLowerCase(Locale.ROOT), Configuration::transport,
            (c, ctx, flag) -> ctx.transport(Configuration.parseTransport(flag, c.transport))),
        new Setting("--te-library", Configuration.TE_LIBRARY_PROP_NAME, null, Configuration::teLibrary,
            (c, ctx, flag) -> ctx.teLibrary(c.teLibrary)),
        new Setting("--transfer-streams", Configuration.TRANSFER_STREAMS_PROP_NAME,
            Integer.toString(Configuration.TRANSFER_STREAMS_DEFAULT), Configuration::transferStreams,
            (c, ctx, flag) -> ctx.transferStreams(Configuration.parseInt(flag, c.transferStreams))),
        new Setting("--peer-admission", Configuration.PEER_ADMISSION_PROP_NAME,
            Configuration.PEER_ADMISSION_DEFAULT.flagValue(), Configuration::peerAdmission,
            (c, ctx, flag) -> ctx.peerAdmission(Configuration.parsePeerAdmission(flag, c.peerAdmission))),
        new Setting("--peer-admission-window", Configuration.PEER_ADMISSION_WINDOW_PROP_NAME,
            Configuration.durationText(Configuration.PEER_ADMISSION_WINDOW_NS_DEFAULT),
            Configuration::peerAdmissionWindowNs,
            (c, ctx, flag) -> ctx.peerAdmissionWindowNs(Configuration.parseDurationNs(flag, c.peerAdmissionWindow))),
        new Setting("--catalog-journal-bytes", Configuration.CATALOG_JOURNAL_BYTES_PROP_NAME,
            Configuration.sizeText(Configuration.CATALOG_JOURNAL_BYTES_DEFAULT), Configuration::catalogJournalBytes,
            (c, ctx, flag) -> ctx.catalogJournalBytes(Configuration.parseSize(flag, c.catalogJournalBytes))),
        new Setting("--authority-log-bytes", Configuration.AUTHORITY_LOG_BYTES_PROP_NAME,
            Configuration.sizeText(Configuration.AUTHORITY_LOG_BYTES_DEFAULT), Configuration::authorityLogBytes,
            (c, ctx, flag) -> ctx.authorityLogBytes(Configuration.parseSize(flag, c.authorityLogBytes))),
        new Setting("--catalog-inventory-bytes", Configuration.CATALOG_INVENTORY_BYTES_PROP_NAME,
            Configuration.sizeText(Configuration.CATALOG_INVENTORY_BYTES_DEFAULT), Configuration::catalogInventoryBytes,
            (c, ctx, flag) -> ctx.catalogInventoryBytes(Configuration.parseSize(flag, c.catalogInventoryBytes))),
        new Setting("--catalog-candidate-bytes", Configuration.CATALOG_CANDIDATE_BYTES_PROP_NAME,
            Configuration.sizeText(Configuration.CATALOG_CANDIDATE_BYTES_DEFAULT), Configuration::catalogCandidateBytes,
            (c, ctx, flag) -> ctx.catalogCandidateBytes(Configuration.parseSize(flag, c.catalogCandidateBytes))),
        new Setting("--transfer-budget", Configuration.TRANSFER_BUDGET_PROP_NAME,
            Configuration.sizeText(Configuration.TRANSFER_BUDGET_DEFAULT), Configuration::transferBudgetBytes,
            (c, ctx, flag) -> ctx.transferBudgetBytes(Configuration.parseSize(flag, c.transferBudget))),
        new Setting("--transfer-max-sessions", Configuration.TRANSFER_MAX_SESSIONS_PROP_NAME,
            Integer.toString(Configuration.TRANSFER_MAX_SESSIONS_DEFAULT), Configuration::transferMaxSessions,
            (c, ctx, flag) -> ctx.transferMaxSessions(Configuration.parseInt(flag, c.transferMaxSessions))),
        new Setting("--transfer-sessions-per-peer", Configuration.TRANSFER_SESSIONS_PER_PEER_PROP_NAME,
            Integer.toString(Configuration.TRANSFER_SESSIONS_PER_PEER_DEFAULT), Configuration::transferSessionsPerPeer,
            (c, ctx, flag) -> ctx.transferSessionsPerPeer(Configuration.parseInt(flag, c.transferSessionsPerPeer))),
        new Setting("--transfer-session-ttl", Configuration.TRANSFER_SESSION_TTL_PROP_NAME,
            Configuration.durationText(Configuration.TRANSFER_SESSION_TTL_NS_DEFAULT), Configuration::transferSessionTtlNs,
            (c, ctx, flag) -> ctx.transferSessionTtlNs(Configuration.parseDurationNs(flag, c.transferSessionTtl))),
        new Setting("--transfer-ssd-staging-bytes", Configuration.TRANSFER_SSD_STAGING_BYTES_PROP_NAME,
            Configuration.sizeText(Configuration.TRANSFER_SSD_STAGING_BYTES_DEFAULT), Configuration::transferSsdStagingBytes,
            (c, ctx, flag) -> ctx.transferSsdStagingBytes(Configuration.parseSize(flag, c.transferSsdStagingBytes))));

    /**
     * Properties with no flag: tuning and diagnostics a deployment sets with {@code -D} (their getters' javadoc
     * says why they exist); adding a flag for one moves it to {@link #SETTINGS}.
     */
    static final List<String> PROPERTIES_WITHOUT_FLAG = List.of(
        Configuration.AGENT_TIMER_SLACK_NS_PROP_NAME,
        Configuration.IDLE_PEER_WAIT_PROP_NAME,
        Configuration.COUNTERS_VALUES_BYTES_PROP_NAME,
        Configuration.ERROR_LOG_BYTES_PROP_NAME,
        Configuration.TRANSFER_TRANSPORT_SUPPLIER_PROP_NAME);

    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    @Option(names = "--name", description = "Manager name; the default directory is " + Configuration.DIR_PARENT_DEFAULT +
        "/<name> (default: ${DEFAULT-VALUE}).")
    String name;

    @Option(names = "--dir", description = "Manager directory (CnC file and client data regions); overrides --name " +
        "(default: ${sys:" + Configuration.DIR_PROP_NAME + ":-" + Configuration.DIR_PARENT_DEFAULT + "/<name>}).")
    File dir;

    @Option(names = "--pool-bytes", description = "DRAM pool size, multiple of 2m (default: ${DEFAULT-VALUE}).")
    String poolBytes;

    @Option(names = "--max-block-bytes", description = "Largest block (default: ${DEFAULT-VALUE}; the default " +
        "shrinks to the pool size if that is smaller).")
    String maxBlockBytes;

    @Option(names = "--index-budget-bytes", description = "Byte budget of the block index (default: ${DEFAULT-VALUE}).")
    String indexBudgetBytes;

    @Option(names = "--max-clients", description = "Client slots (default: ${DEFAULT-VALUE}).")
    String maxClients;

    @Option(names = "--request-ring-bytes", description = "Request ring capacity, power of two (default: ${DEFAULT-VALUE}).")
    String requestRingBytes;

    @Option(names = "--response-ring-bytes", description = "Per-client response ring capacity, power of two " +
        "(default: ${DEFAULT-VALUE}).")
    String responseRingBytes;

    @Option(names = "--client-timeout", description = "Detach a client silent this long, e.g. 5s, 500ms " +
        "(default: ${DEFAULT-VALUE}).")
    String clientTimeout;

    @Option(names = "--max-data-region-bytes", description = "Largest data region a client may ask for " +
        "(default: ${DEFAULT-VALUE}).")
    String maxDataRegionBytes;

    @Option(names = "--copy-chunk-bytes", description = "Most bytes copied per duty cycle, so large requests do not " +
        "stall other clients (default: ${DEFAULT-VALUE}).")
    String copyChunkBytes;

    @Option(names = "--pool-pretouch", arity = "0..1", fallbackValue = "blocking", paramLabel = "MODE",
        description = "Fault the pool in ahead of use (MADV_POPULATE_WRITE, 2 MiB per call, low offsets first) so " +
        "publishes do not pay for page faults and huge-page compaction: background (serve at once, touch on a " +
        "low-priority thread; stat shows progress), blocking (ready only once touched) or off. true/false, and " +
        "--no-pool-pretouch, are still accepted as blocking/off (default: ${DEFAULT-VALUE}).")
    String poolPretouch;

    @Option(names = "--no-pool-pretouch", hidden = true, description = "Same as --pool-pretouch=off.")
    boolean noPoolPretouch;

    @Option(names = "--pool-pretouch-pause", hidden = true,
        description = "Diagnostic throttle: pause after each touched 2 MiB, e.g. 250ms (default: ${DEFAULT-VALUE}).")
    String poolPretouchPause;

    @Option(names = "--max-namespaces", description = "Distinct namespaces tracked (default: ${DEFAULT-VALUE}).")
    String maxNamespaces;

    @Option(names = "--idle-sleep", negatable = true, fallbackValue = "true",
        description = "After --idle-sleep-after of idleness the agent sleeps until an engine rings the doorbell, a " +
        "peer datagram arrives or --idle-sleep-max passes; --no-idle-sleep keeps it parking 100 us at a time (a core's " +
        "quarter or more, for latency) (default: ${DEFAULT-VALUE}).")
    Boolean idleSleep;

    @Option(names = "--idle-linger", description = "How long after its last work the idle agent yields before it " +
        "parks, so an engine's next request finds it awake; 0 parks after ~4 us (default: ${DEFAULT-VALUE}).")
    String idleLinger;

    @Option(names = "--idle-sleep-after", description = "Parking before the idle agent sleeps, e.g. 1ms " +
        "(default: ${DEFAULT-VALUE}).")
    String idleSleepAfter;

    @Option(names = "--idle-sleep-max", description = "Longest sleep of the idle agent, at most a quarter of " +
        "--client-timeout, e.g. 100ms (default: ${DEFAULT-VALUE}).")
    String idleSleepMax;

    @Option(names = "--idle-strategy", description = "backoff, agrona-backoff (parks up to 1 ms, never sleeps; for " +
        "comparison), yielding or busy (busy spins a core; opt-in only) (default: ${DEFAULT-VALUE}).")
    String idleStrategy;

    @Option(names = "--metrics-port", description = "Serve Prometheus text at http://<host>:<port>/metrics; 0 = off " +
        "(default: ${DEFAULT-VALUE}).")
    String metricsPort;

    @Option(names = "--kv-events-endpoint", description = "Publish what this Manager holds as vLLM KV events for " +
        "routers (ZMQ PUB, vLLM's wire format): tcp://*:PORT binds, tcp://HOST:PORT connects to a router that binds; " +
        "absent = off (default: ${sys:" + Configuration.KV_EVENTS_ENDPOINT_PROP_NAME + ":-none}).")
    String kvEventsEndpoint;

    @Option(names = "--kv-events-replay-endpoint", description = "ROUTER endpoint to bind for replay requests of " +
        "recent KV-event batches; absent = no replay (default: ${sys:" +
        Configuration.KV_EVENTS_REPLAY_ENDPOINT_PROP_NAME + ":-none}).")
    String kvEventsReplayEndpoint;

    @Option(names = "--kv-events-topic", description = "Topic frame of every KV-event message (default: '${DEFAULT-VALUE}').")
    String kvEventsTopic;

    @Option(names = "--ssd-dir", description = "Directory of the SSD tier's file (a real disk, not tmpfs); absent = no " +
        "SSD tier. Its manifest beside it lets a restart keep the tier (see --ssd-recover) (default: ${sys:" +
        Configuration.SSD_DIR_PROP_NAME + ":-none}).")
    File ssdDir;

    @Option(names = "--ssd-bytes", description = "SSD tier capacity, rounded down to 2m (default: ${DEFAULT-VALUE}).")
    String ssdBytes;

    @Option(names = "--engine-pool-access", description = "none, or write-reserved: the pool is a shared file that " +
        "engines map read-write and save into through Prepare/Commit, without a copy; an engine can then write anywhere " +
        "in the pool, so only for trusted engines (default: ${DEFAULT-VALUE}).")
    String enginePoolAccess;

    @Option(names = "--ssd-admission", description = "on-evict (a DRAM victim is written before its space is reused), " +
        "on-publish or off (default: ${DEFAULT-VALUE}).")
    String ssdAdmission;

    @Option(names = "--ssd-promote", description = "Copy an SSD hit back into DRAM on Read (default: ${DEFAULT-VALUE}).")
    boolean ssdPromote;

    @Option(names = "--ssd-direct-reads", paramLabel = "MODE", description = "Read SSD blocks straight into the " +
        "engine's data region when the destination is 4 KiB aligned and the block a 4 KiB multiple: auto (when the " +
        "data regions are on 2 MiB pages: --dir on a tmpfs mounted huge=within_size or huge=always), on, or off " +
        "(every block through staging and a copy) (default: ${DEFAULT-VALUE}).")
    String ssdDirectReads;

    @Option(names = "--ssd-queue-depth", description = "Most SSD I/Os in flight (default: ${DEFAULT-VALUE}).")
    String ssdQueueDepth;

    @Option(names = "--ssd-backend", description = "auto, io_uring or filechannel (O_DIRECT FileChannel fallback) " +
        "(default: ${DEFAULT-VALUE}).")
    String ssdBackend;

    @Option(names = "--ssd-staging-bytes", description = "Staging memory for SSD I/O, at least --max-block-bytes " +
        "(default: ${DEFAULT-VALUE}).")
    String ssdStagingBytes;

    @Option(names = "--ssd-recover", paramLabel = "on|off", description = "At start, read the SSD tier's manifest " +
        "and keep the residences it records (verified on first read); off: the tier starts empty " +
        "(default: ${DEFAULT-VALUE}).")
    String ssdRecover;

    @Option(names = "--ssd-verify-restored", paramLabel = "on|off", description = "Verify recovered SSD residences " +
        "against their checksums in the background (low priority, rate-limited) and drop corrupt ones before they are " +
        "read; off: each is verified on its first read only (default: ${DEFAULT-VALUE}).")
    String ssdVerifyRestored;

    @Option(names = "--ssd-manifest-sync", paramLabel = "POLICY", description = "When the SSD manifest is made " +
        "durable: batch (every 1024 records or 10 ms), always (after every write), none (by the kernel), or off " +
        "(no manifest: the tier is lost at every stop) (default: ${DEFAULT-VALUE}).")
    String ssdManifestSync;

    @Option(names = "--ssd-manifest-checkpoint-bytes", paramLabel = "SIZE", description = "Rewrite the SSD manifest " +
        "from the live residences once it is larger than this and 4x a fresh checkpoint (default: ${DEFAULT-VALUE}).")
    String ssdManifestCheckpointBytes;

    @Option(names = "--etcd-endpoints", description = "Join a cluster through etcd (comma-separated http:// URLs). " +
        "Without it the Manager is standalone: no etcd, no jetcd threads (default: ${sys:" +
        Configuration.ETCD_ENDPOINTS_PROP_NAME + ":-none}).")
    String etcdEndpoints;

    @Option(names = "--engine-group", description = "Group whose members' engines may attach: the Manager's directory " +
        "and shared files become 0750/0660 with this group instead of owner-only 0700/0600 (default: ${sys:" +
        Configuration.ENGINE_GROUP_PROP_NAME + ":-none}).")
    String engineGroup;

    @picocli.CommandLine.Mixin
    EtcdAuthOptions etcdTls = new EtcdAuthOptions();

    @Option(names = "--cluster-secret-file", description = "Owner-only (0600) file of at least 32 bytes shared by " +
        "every Manager of the cluster: peer frames carry a MAC and transfer connections prove it; unset, the peer " +
        "channel is not authenticated (default: ${sys:" + Configuration.CLUSTER_SECRET_FILE_PROP_NAME + ":-none}).")
    String clusterSecretFile;

    @Option(names = "--transport-tls-cert", description = "PEM certificate (chain) of this node for mutual TLS 1.3 " +
        "on the built-in transfer transport; with --transport-tls-key and --transport-tls-ca, all three or none " +
        "(default: ${sys:" + Configuration.TRANSPORT_TLS_CERT_PROP_NAME + ":-none}: plain TCP, zero copy).")
    String transportTlsCert;

    @Option(names = "--transport-tls-key", description = "PKCS#8 PEM private key (BEGIN PRIVATE KEY) of " +
        "--transport-tls-cert (default: ${sys:" + Configuration.TRANSPORT_TLS_KEY_PROP_NAME + ":-none}).")
    String transportTlsKey;

    @Option(names = "--transport-tls-ca", description = "PEM CA certificate(s) a peer's transport certificate must " +
        "lead to, both ways (default: ${sys:" + Configuration.TRANSPORT_TLS_CA_PROP_NAME + ":-none}).")
    String transportTlsCa;

    @Option(names = "--cluster-name", description = "Cluster to join; keys live under /orbitkv/v1/<cluster>/ " +
        "(default: ${sys:" + Configuration.CLUSTER_NAME_PROP_NAME + ":-none}).")
    String clusterName;

    @Option(names = "--node-id", description = "Stable node id of this Manager in the cluster ([A-Za-z0-9._-], 1-64) " +
        "(default: ${sys:" + Configuration.NODE_ID_PROP_NAME + ":-none}).")
    String nodeId;

    @Option(names = "--membership-ttl-secs", description = "Lease TTL of the member record, at least " +
        Configuration.MIN_MEMBERSHIP_TTL_SECS + " (default: ${DEFAULT-VALUE}).")
    String membershipTtlSecs;

    @Option(names = "--etcd-deadline-ms", description = "Deadline of every etcd call (default: ${DEFAULT-VALUE}).")
    String etcdDeadlineMs;

    @Option(names = "--join-timeout", description = "How long joining (placement check and first registration) keeps " +
        "retrying an etcd that does not answer before the Manager gives up, e.g. 60s or 500ms; a bare number is " +
        "seconds. Engines are served meanwhile (default: ${DEFAULT-VALUE}).")
    String joinTimeout;

    @Option(names = "--catalog-nodes", description = "The cluster's 1-16 catalog node ids, e.g. a,b,c, each optionally " +
        "with its failure domain (a@rack1,b@rack1,c@rack2: a shard's copies go to distinct domains first) and its " +
        "capacity weight (a=2 or a@rack1=2, 1-1000: a node of weight 2 holds about twice the shards); the " +
        "first Manager installs them in etcd as generation 1, later ones follow the placement in etcd, which " +
        "'orbitkv placement set' changes (default: ${sys:" +
        Configuration.CATALOG_NODES_PROP_NAME + ":-none}).")
    String catalogNodes;

    @Option(names = "--catalog-replicas", description = "Copies of each catalog shard, " +
        ShardPlacement.MIN_REPLICAS + "-" + ShardPlacement.MAX_REPLICAS +
        ", held by its highest-ranked catalog nodes (every node when there are fewer); part of the placement, " +
        "seeding an empty cluster like --catalog-nodes (default: ${DEFAULT-VALUE}).")
    String catalogReplicas;

    @Option(names = "--placement-seed", description = "Agreed seed of the placement's rendezvous scores, seeding an " +
        "empty cluster like --catalog-nodes (default: none).")
    String placementSeed;

    @Option(names = "--max-shard-moves", description = "Shard moves a placement transition runs at once while this " +
        "Manager is the elected placement reconciler, 1-16 (default: ${DEFAULT-VALUE}).")
    String maxShardMoves;

    @Option(names = "--peer-endpoint", description = "HOST:PORT of the catalog's Aeron UDP endpoint, bound and " +
        "advertised in the member record; port 0 binds a free port (default: ${DEFAULT-VALUE}).")
    String peerEndpoint;

    @Option(names = "--peer-mtu", description = "Payload bytes per peer UDP datagram: auto (the peer endpoint " +
        "interface's MTU less IP/UDP headers, at most 8960; 1408 if unknown) or a multiple of 32 in 512..65504 when " +
        "the path between Managers carries less than their interfaces (default: ${DEFAULT-VALUE}).")
    String peerMtu;

    @Option(names = "--transfer-endpoint", description = "Where the built-in transport listens for peers' reads, " +
        "HOST:PORT; port 0 picks a free port (default: ${DEFAULT-VALUE}).")
    String transferEndpoint;

    @Option(names = "--transport", description = "How block bytes move between Managers: builtin or mooncake " +
        "(Mooncake TE, needs --te-library) (default: ${DEFAULT-VALUE}).")
    String transport;

    @Option(names = "--te-library", description = "Path of libtransfer_engine.so for --transport=mooncake.")
    String teLibrary;

    @Option(names = "--transfer-streams", description = "Connections per peer of the built-in transport, 1-16; " +
        "large reads are split across them (default: ${DEFAULT-VALUE}).")
    String transferStreams;

    @Option(names = "--peer-admission", description = "Keep blocks fetched from peers in local DRAM: off, always, " +
        "or second-hit (fetched twice within --peer-admission-window) (default: ${DEFAULT-VALUE}).")
    String peerAdmission;

    @Option(names = "--peer-admission-window", description = "Window of the second-hit admission, e.g. 60s " +
        "(default: ${DEFAULT-VALUE}).")
    String peerAdmissionWindow;

    @Option(names = "--catalog-journal-bytes", description = "Owner journal budget of all 16 shards together; a catalog " +
        "host lagging past it is rebuilt by snapshot (default: ${DEFAULT-VALUE}).")
    String catalogJournalBytes;

    @Option(names = "--authority-log-bytes", description = "Size of authority.log in the Manager's directory " +
        "(registrations, validity, fences, grants, accepted sessions; wraps) (default: ${DEFAULT-VALUE}).")
    String authorityLogBytes;

    @Option(names = "--catalog-inventory-bytes", description = "Ceiling of the owner inventory (all shards, about 144 " +
        "bytes per announced residence); sized from the index capacity up to it (default: ${DEFAULT-VALUE}).")
    String catalogInventoryBytes;

    @Option(names = "--catalog-candidate-bytes", description = "Logical byte budget of the candidate index, the " +
        "remote evidence this Manager keeps from catalog answers (default: ${DEFAULT-VALUE}).")
    String catalogCandidateBytes;

    @Option(names = "--transfer-budget", description = "Bytes a transfer source may hold pinned for peers, in whole " +
        "allocations; 0 means half the pool (default: ${DEFAULT-VALUE}).")
    String transferBudget;

    @Option(names = "--transfer-max-sessions", description = "Transfer sessions a source holds at once, 1-1024 " +
        "(default: ${DEFAULT-VALUE}).")
    String transferMaxSessions;

    @Option(names = "--transfer-sessions-per-peer", description = "Transfer sessions one requesting peer may hold at " +
        "this source (default: ${DEFAULT-VALUE}).")
    String transferSessionsPerPeer;

    @Option(names = "--transfer-session-ttl", description = "How long a granted transfer session lives without a " +
        "release, e.g. 30s (default: ${DEFAULT-VALUE}).")
    String transferSessionTtl;

    @Option(names = "--transfer-ssd-staging-bytes", description = "DRAM in which a transfer source prepares SSD-only " +
        "blocks for peers, separate from --transfer-budget; 0 serves peers from DRAM only (default: ${DEFAULT-VALUE}).")
    String transferSsdStagingBytes;

    /**
     * The context this invocation launches: the properties' values and defaults, with the flags given on the command
     * line applied over them.
     *
     * @return a new context, not concluded.
     * @throws IllegalArgumentException naming the flag or property whose value does not parse.
     */
    ManagerContext context()
    {
        final ManagerContext ctx = new ManagerContext();
        final CommandLine.ParseResult parsed = spec.commandLine().getParseResult();
        for (final Setting setting : SETTINGS)
        {
            if (parsed.hasMatchedOption(setting.flag()))
            {
                setting.apply().apply(this, ctx, setting.flag());
            }
        }
        return ctx;
    }

    public Integer call() throws Exception
    {
        final PrintWriter out = spec.commandLine().getOut();
        final PrintWriter err = spec.commandLine().getErr();
        final ManagerContext ctx;
        try
        {
            ctx = context();
        }
        catch (final IllegalArgumentException ex)
        {
            err.println("orbitkv manager: " + ex.getMessage());
            return 2;
        }

        final Manager manager;
        try
        {
            manager = Manager.launch(ctx);
        }
        catch (final IllegalArgumentException | IllegalStateException ex)
        {
            err.println("orbitkv manager: " + ex.getMessage());
            return 1;
        }

        final CountDownLatch stopped = new CountDownLatch(1);
        final Thread hook = new Thread(() ->
        {
            manager.close();
            stopped.countDown();
        }, "orbitkv-manager-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);

        out.println("OrbitKV Manager running (pid " + ProcessHandle.current().pid() + ", runtime " +
            manager.runtimeUuid() + ")");
        out.println("  engines attach at: " + ctx.dir() + "  (CnC file " + manager.cncFile() + "; access: " +
            ctx.engineFileAccess() + ")");
        out.println("  pool: " + ctx.poolBytes() + " bytes, max block " + ctx.maxBlockBytes() + " bytes, " +
            ctx.maxClients() + " client slots, client timeout " + ctx.clientTimeoutNs() / 1_000_000 + " ms, idle " +
            ctx.idleStrategyName() +
            (0 == ctx.agentTimerSlackNs() ? "" : " (timer slack " + ctx.agentTimerSlackNs() + " ns)") +
            (ctx.idleSleep() ? ", sleeps after " + ctx.idleSleepAfterNs() / 1000 + " us idle for up to " +
            ctx.effectiveIdleSleepMaxNs() / 1_000_000 + " ms (doorbell " +
            ctx.doorbellFile() + ")" : ", never sleeps"));
        out.println("  ready " + manager.readyMs() + " ms after process start; pool pre-touch " +
            ctx.poolPretouch().flagValue() + poolTouchNote(ctx.poolPretouch()));
        out.println("  ssd: " + manager.ssdDescription());
        if (null != manager.kvEvents())
        {
            out.println("  kv events: " + manager.kvEvents().endpoint() + (null == manager.kvEvents().replayEndpoint() ?
                "" : ", replay " + manager.kvEvents().replayEndpoint()) + ", topic '" + ctx.kvEventsTopic() + "'");
        }
        out.println("  counters: scripts/orbitkv stat --dir " + ctx.dir() + "   (--once for one snapshot)");
        if (manager.metricsPort() > 0)
        {
            out.println("  metrics: http://localhost:" + manager.metricsPort() + "/metrics");
        }
        if (null != manager.membership())
        {
            final io.orbitkv.manager.membership.PlacementState state = manager.membership().placementState();
            final ShardPlacement placement = null == state ? ctx.placement() : state.placement();
            out.println("  cluster '" + ctx.clusterName() + "' node '" + ctx.nodeId() + "' epoch " +
                manager.membership().ownRecord().epoch() + ", catalog " + placement.nodes() + " with " +
                placement.replicaCount() + " of " + placement.replicas() + " copies per shard (placement " +
                (null == state ? "" : "generation " + state.generation() + ", ") + placement.fingerprint() +
                "), peer endpoint " + manager.catalog().transport().endpoint() + " (" +
                manager.catalog().transport().mtuLength() + "-byte datagrams)");
            out.println("  placement: scripts/orbitkv placement status --etcd-endpoints " + ctx.etcdEndpoints() +
                " --cluster-name " + ctx.clusterName());
            out.println("  members: scripts/orbitkv members --etcd-endpoints " + ctx.etcdEndpoints() +
                " --cluster-name " + ctx.clusterName());
        }
        out.println("  stop with Ctrl-C (SIGINT) or SIGTERM");
        out.flush();

        stopped.await();
        return 0;
    }

    private static String poolTouchNote(final Configuration.PoolPretouch mode)
    {
        return switch (mode)
        {
            case BACKGROUND -> " (continues on a helper thread; stat shows its progress)";
            case BLOCKING -> " (done before ready)";
            case OFF -> " (first use faults pages in)";
        };
    }

    /**
     * picocli's defaults for this command, from {@link Configuration}: a set property's value (checked by its getter
     * first, so a bad one fails naming the property rather than the flag), else the default as the flag spells it.
     */
    public static final class ConfigurationDefaults implements CommandLine.IDefaultValueProvider
    {
        public String defaultValue(final CommandLine.Model.ArgSpec arg)
        {
            if (!(arg instanceof CommandLine.Model.OptionSpec option))
            {
                return null;
            }
            final Setting setting = setting(option.longestName());
            if (null == setting || null == setting.getter())
            {
                return null;
            }
            final String value = System.getProperty(setting.property());
            if (null == value)
            {
                return setting.defaultText();
            }
            try
            {
                setting.getter().get();
            }
            catch (final IllegalArgumentException ex)
            {
                throw new CommandLine.ParameterException(arg.command().commandLine(), ex.getMessage());
            }
            return value;
        }
    }

    static Setting setting(final String flag)
    {
        for (final Setting setting : SETTINGS)
        {
            if (setting.flag().equals(flag))
            {
                return setting;
            }
        }
        return null;
    }
}
