package io.orbitkv.manager.cli;

import io.orbitkv.manager.Configuration;
import io.orbitkv.manager.Manager;
import io.orbitkv.manager.ManagerContext;
import io.orbitkv.manager.membership.MembershipConfiguration;
import io.orbitkv.manager.peer.PeerTransport;
import java.io.File;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.agrona.SystemUtil;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code orbitkv manager}: runs a standalone Manager (embedded defaults: no etcd, no network) until SIGINT/SIGTERM,
 * after printing where engines attach and how to read its counters.
 */
@Command(
    name = "manager",
    mixinStandardHelpOptions = true,
    description = "Run an OrbitKV Manager: engines attach over shared memory under --dir; with --etcd-endpoints it " +
        "also registers in a cluster.")
public final class ManagerCommand implements Callable<Integer>
{
    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    @Option(names = "--name", description = "Manager name; the default directory is " + Configuration.DIR_PARENT_DEFAULT +
        "/<name> (default: ${DEFAULT-VALUE}).", defaultValue = Configuration.NAME_DEFAULT)
    String name;

    @Option(names = "--dir", description = "Manager directory (CnC file and client data regions); overrides --name.")
    File dir;

    @Option(names = "--pool-bytes", description = "DRAM pool size, multiple of 2m (default: ${DEFAULT-VALUE}).",
        defaultValue = "1g", converter = SizeConverter.class)
    long poolBytes;

    @Option(names = "--max-block-bytes", description = "Largest block (default: 64m, or the pool size if smaller).",
        converter = SizeConverter.class)
    Long maxBlockBytes;

    @Option(names = "--index-budget-bytes", description = "Byte budget of the block index (default: ${DEFAULT-VALUE}).",
        defaultValue = "64m", converter = SizeConverter.class)
    long indexBudgetBytes;

    @Option(names = "--max-clients", description = "Client slots (default: ${DEFAULT-VALUE}).", defaultValue = "64")
    int maxClients;

    @Option(names = "--request-ring-bytes", description = "Request ring capacity, power of two (default: ${DEFAULT-VALUE}).",
        defaultValue = "1m", converter = SizeConverter.class)
    long requestRingBytes;

    @Option(names = "--response-ring-bytes", description = "Per-client response ring capacity, power of two " +
        "(default: ${DEFAULT-VALUE}).", defaultValue = "128k", converter = SizeConverter.class)
    long responseRingBytes;

    @Option(names = "--client-timeout", description = "Detach a client silent this long, e.g. 5s, 500ms " +
        "(default: ${DEFAULT-VALUE}).", defaultValue = "5s", converter = DurationConverter.class)
    long clientTimeoutNs;

    @Option(names = "--max-data-region-bytes", description = "Largest data region a client may ask for " +
        "(default: ${DEFAULT-VALUE}).", defaultValue = "16g", converter = SizeConverter.class)
    long maxDataRegionBytes;

    @Option(names = "--copy-chunk-bytes", description = "Most bytes copied per duty cycle, so large requests do not " +
        "stall other clients (default: ${DEFAULT-VALUE}).", defaultValue = "8m", converter = SizeConverter.class)
    long copyChunkBytes;

    @Option(names = "--pool-pretouch", arity = "0..1", defaultValue = "background", fallbackValue = "blocking",
        paramLabel = "MODE",
        description = "Fault the pool in ahead of use (MADV_POPULATE_WRITE, 2 MiB per call, low offsets first) so " +
        "publishes do not pay for page faults and huge-page compaction: background (serve at once, touch on a " +
        "low-priority thread; stat shows progress), blocking (ready only once touched) or off. true/false, and " +
        "--no-pool-pretouch, are still accepted as blocking/off (default: ${DEFAULT-VALUE}).")
    String poolPretouch;

    @Option(names = "--no-pool-pretouch", hidden = true, description = "Same as --pool-pretouch=off.")
    boolean noPoolPretouch;

    @Option(names = "--pool-pretouch-pause", hidden = true, defaultValue = "0", converter = DurationConverter.class,
        description = "Diagnostic throttle: pause after each touched 2 MiB, e.g. 250ms (default: none).")
    long poolPretouchPauseNs;

    @Option(names = "--max-namespaces", description = "Distinct namespaces tracked (default: ${DEFAULT-VALUE}).",
        defaultValue = "1024")
    int maxNamespaces;

    @Option(names = "--threading", description = "dedicated: the ring agent has its own thread; shared: all agents on " +
        "one thread (2-core boxes) (default: ${DEFAULT-VALUE}).", defaultValue = "dedicated")
    String threading;

    @Option(names = "--idle-sleep", negatable = true, fallbackValue = "true",
        description = "After --idle-sleep-after of idleness the agent sleeps until an engine rings the doorbell, a " +
        "peer datagram arrives or --idle-sleep-max passes; --no-idle-sleep keeps it parking 100 us at a time (a core's " +
        "quarter or more, for latency) (default: true, or -D" + Configuration.IDLE_SLEEP_PROP_NAME + ").")
    Boolean idleSleep;

    @Option(names = "--idle-sleep-after", description = "Parking before the idle agent sleeps, e.g. 1ms " +
        "(default: 1ms, or -D" + Configuration.IDLE_SLEEP_AFTER_PROP_NAME + ").", converter = DurationConverter.class)
    Long idleSleepAfterNs;

    @Option(names = "--idle-sleep-max", description = "Longest sleep of the idle agent, at most a quarter of " +
        "--client-timeout, e.g. 100ms (default: 100ms, or -D" + Configuration.IDLE_SLEEP_MAX_PROP_NAME + ").",
        converter = DurationConverter.class)
    Long idleSleepMaxNs;

    @Option(names = "--idle-strategy", description = "backoff, agrona-backoff (parks up to 1 ms, never sleeps; for " +
        "comparison), yielding or busy (busy spins a core; opt-in only) " +
        "(default: ${DEFAULT-VALUE}).", defaultValue = Configuration.IDLE_STRATEGY_DEFAULT)
    String idleStrategy;

    @Option(names = "--metrics-port", description = "Serve Prometheus text at http://<host>:<port>/metrics; 0 = off " +
        "(default: ${DEFAULT-VALUE}).", defaultValue = "0")
    int metricsPort;

    @Option(names = "--ssd-dir", description = "Directory of the SSD tier's file (a real disk, not tmpfs); absent = no " +
        "SSD tier. The file is truncated at start: no persistence promise.")
    File ssdDir;

    @Option(names = "--ssd-bytes", description = "SSD tier capacity, rounded down to 2m (default: ${DEFAULT-VALUE}).",
        defaultValue = "16g", converter = SizeConverter.class)
    long ssdBytes;

    @Option(names = "--ssd-admission", description = "on-evict (a DRAM victim is written before its space is reused), " +
        "on-publish or off (default: ${DEFAULT-VALUE}).", defaultValue = "on-evict")
    String ssdAdmission;

    @Option(names = "--ssd-promote", description = "Copy an SSD hit back into DRAM on Read (default: ${DEFAULT-VALUE}).",
        defaultValue = "false")
    boolean ssdPromote;

    @Option(names = "--ssd-queue-depth", description = "Most SSD I/Os in flight (default: ${DEFAULT-VALUE}).",
        defaultValue = "64")
    int ssdQueueDepth;

    @Option(names = "--ssd-backend", description = "auto, io_uring or filechannel (O_DIRECT FileChannel fallback) " +
        "(default: ${DEFAULT-VALUE}).", defaultValue = "auto")
    String ssdBackend;

    @Option(names = "--ssd-staging-bytes", description = "Staging memory for SSD I/O, at least --max-block-bytes " +
        "(default: ${DEFAULT-VALUE}).", defaultValue = "64m", converter = SizeConverter.class)
    long ssdStagingBytes;
    @Option(names = "--etcd-endpoints", description = "Join a cluster through etcd (comma-separated http:// URLs). " +
        "Without it the Manager is standalone: no etcd, no jetcd threads.")
    String etcdEndpoints;

    @Option(names = "--cluster-name", description = "Cluster to join; keys live under /orbitkv/v1/<cluster>/.")
    String clusterName;

    @Option(names = "--node-id", description = "Stable node id of this Manager in the cluster ([A-Za-z0-9._-], 1-64).")
    String nodeId;

    @Option(names = "--membership-ttl-secs", description = "Lease TTL of the member record, at least " +
        MembershipConfiguration.MIN_MEMBERSHIP_TTL_SECS + " (default: ${DEFAULT-VALUE}).",
        defaultValue = "" + MembershipConfiguration.MEMBERSHIP_TTL_SECS_DEFAULT)
    int membershipTtlSecs;

    @Option(names = "--etcd-deadline-ms", description = "Deadline of every etcd call (default: ${DEFAULT-VALUE}).",
        defaultValue = "" + MembershipConfiguration.ETCD_DEADLINE_MS_DEFAULT)
    long etcdDeadlineMs;

    @Option(names = "--join-timeout", description = "How long joining (placement check and first registration) keeps " +
        "retrying an etcd that does not answer before the Manager gives up, e.g. 60s or 500ms; a bare number is " +
        "seconds. Engines are served meanwhile (default: ${DEFAULT-VALUE}).",
        defaultValue = Configuration.JOIN_TIMEOUT_DEFAULT_TEXT)
    String joinTimeout;

    @Option(names = "--catalog-nodes", description = "The cluster's 1-16 catalog node ids, e.g. a,b,c; identical on " +
        "every Manager (the first installs it in etcd, a mismatch fails the join).")
    String catalogNodes;

    @Option(names = "--peer-endpoint", description = "HOST:PORT of the catalog's Aeron UDP endpoint, bound and " +
        "advertised in the member record; port 0 binds a free port (default: ${DEFAULT-VALUE}).",
        defaultValue = MembershipConfiguration.PEER_ENDPOINT_DEFAULT)
    String peerEndpoint;

    @Option(names = "--peer-mtu", description = "Payload bytes per peer UDP datagram: auto (the peer endpoint " +
        "interface's MTU less IP/UDP headers, at most 8960; 1408 if unknown) or a multiple of 32 in 512..65504 when " +
        "the path between Managers carries less than their interfaces (default: ${DEFAULT-VALUE}).",
        defaultValue = "auto")
    String peerMtu;

    @Option(names = "--transfer-endpoint", description = "Transfer endpoint advertised in the member record " +
        "(placeholder until the transfer transport lands) (default: ${DEFAULT-VALUE}).",
        defaultValue = MembershipConfiguration.TRANSFER_ENDPOINT_DEFAULT)
    String transferEndpoint;

    @Option(names = "--catalog-journal-bytes", description = "Owner journal budget of all 16 shards together; a catalog " +
        "host lagging past it is rebuilt by snapshot (default: ${DEFAULT-VALUE}).", defaultValue = "16m",
        converter = SizeConverter.class)
    long catalogJournalBytes;

    @Option(names = "--catalog-inventory-bytes", description = "Ceiling of the owner inventory (all shards, about 144 " +
        "bytes per announced residence); sized from the index capacity up to it (default: ${DEFAULT-VALUE}).",
        defaultValue = "32m", converter = SizeConverter.class)
    long catalogInventoryBytes;

    public Integer call() throws Exception
    {
        final PrintWriter out = spec.commandLine().getOut();
        final PrintWriter err = spec.commandLine().getErr();
        final ManagerContext ctx;
        try
        {
            ctx = new ManagerContext()
                .name(name)
                .dir(dir)
                .poolBytes(poolBytes)
                .indexBudgetBytes(indexBudgetBytes)
                .maxClients(maxClients)
                .requestRingBytes(toInt("--request-ring-bytes", requestRingBytes))
                .responseRingBytes(toInt("--response-ring-bytes", responseRingBytes))
                .clientTimeoutNs(clientTimeoutNs)
                .maxDataRegionBytes(maxDataRegionBytes)
                .copyChunkBytes(toInt("--copy-chunk-bytes", copyChunkBytes))
                .poolPretouch(noPoolPretouch ? Configuration.PoolPretouch.OFF : Configuration.parsePoolPretouch(poolPretouch))
                .poolPretouchPauseNs(poolPretouchPauseNs)
                .maxNamespaces(maxNamespaces)
                .threadingMode(Configuration.parseThreadingMode(threading))
                .idleStrategyName(idleStrategy)
                .metricsPort(metricsPort)
                .ssdDir(ssdDir)
                .ssdBytes(ssdBytes)
                .ssdAdmission(Configuration.parseSsdAdmission(ssdAdmission))
                .ssdPromote(ssdPromote)
                .ssdQueueDepth(ssdQueueDepth)
                .ssdBackend(Configuration.parseSsdBackend(ssdBackend))
                .ssdStagingBytes(ssdStagingBytes)
                .etcdEndpoints(etcdEndpoints)
                .clusterName(clusterName)
                .nodeId(nodeId)
                .membershipTtlSecs(membershipTtlSecs)
                .etcdDeadlineMs(etcdDeadlineMs)
                .joinTimeoutMs(Configuration.parseJoinTimeoutMs(joinTimeout))
                .catalogNodes(catalogNodes)
                .peerEndpoint(peerEndpoint)
                .peerMtuLength(parseMtu(peerMtu))
                .transferEndpoint(transferEndpoint)
                .catalogJournalBytes(catalogJournalBytes)
                .catalogInventoryBytes(catalogInventoryBytes);
            if (null != maxBlockBytes)
            {
                ctx.maxBlockBytes(toInt("--max-block-bytes", maxBlockBytes));
            }
            if (null != idleSleep)
            {
                ctx.idleSleep(idleSleep);
            }
            if (null != idleSleepAfterNs)
            {
                ctx.idleSleepAfterNs(idleSleepAfterNs);
            }
            if (null != idleSleepMaxNs)
            {
                ctx.idleSleepMaxNs(idleSleepMaxNs);
            }
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
        out.println("  engines attach at: " + ctx.dir() + "  (CnC file " + manager.cncFile() + ")");
        out.println("  pool: " + ctx.poolBytes() + " bytes, max block " + ctx.maxBlockBytes() + " bytes, " +
            ctx.maxClients() + " client slots, client timeout " + ctx.clientTimeoutNs() / 1_000_000 + " ms, threading " +
            ctx.threadingMode().name().toLowerCase(java.util.Locale.ROOT) + ", idle " + ctx.idleStrategyName() +
            (0 == ctx.agentTimerSlackNs() ? "" : " (timer slack " + ctx.agentTimerSlackNs() + " ns)") +
            (ctx.idleSleep() ? ", sleeps after " + ctx.idleSleepAfterNs() / 1000 + " us idle for up to " +
            ctx.effectiveIdleSleepMaxNs() / 1_000_000 + " ms (doorbell " +
            ctx.doorbellFile() + ")" : ", never sleeps"));
        out.println("  ready " + manager.readyMs() + " ms after process start; pool pre-touch " +
            ctx.poolPretouch().flagValue() + poolTouchNote(ctx.poolPretouch()));
        out.println("  ssd: " + manager.ssdDescription());
        out.println("  counters: scripts/orbitkv stat --dir " + ctx.dir() + "   (--once for one snapshot)");
        if (manager.metricsPort() > 0)
        {
            out.println("  metrics: http://localhost:" + manager.metricsPort() + "/metrics");
        }
        if (null != manager.membership())
        {
            out.println("  cluster '" + ctx.clusterName() + "' node '" + ctx.nodeId() + "' epoch " +
                manager.membership().ownRecord().epoch() + ", catalog " + ctx.placement().nodes() + " (placement " +
                ctx.placement().fingerprint() + "), peer endpoint " + manager.catalog().transport().endpoint() + " (" +
                manager.catalog().transport().mtuLength() + "-byte datagrams)");
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

    private static int parseMtu(final String value)
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
            throw new IllegalArgumentException("--peer-mtu must be auto or " + PeerTransport.MTU_RULE + ": '" + value +
                "'");
        }
    }

    private static int toInt(final String flag, final long value)
    {
        if (value > Integer.MAX_VALUE)
        {
            throw new IllegalArgumentException(flag + " must be below 2g: " + value);
        }
        return (int)value;
    }

    /**
     * Sizes with an optional k/m/g suffix (powers of 1024).
     */
    static final class SizeConverter implements CommandLine.ITypeConverter<Long>
    {
        public Long convert(final String value)
        {
            try
            {
                return SystemUtil.parseSize("size", value.trim());
            }
            catch (final NumberFormatException ex)
            {
                throw new CommandLine.TypeConversionException("not a size (e.g. 4096, 64k, 1m, 2g): '" + value + "'");
            }
        }
    }

    /**
     * Durations with a unit suffix: ns, us, ms, s (no suffix = ns).
     */
    static final class DurationConverter implements CommandLine.ITypeConverter<Long>
    {
        public Long convert(final String value)
        {
            try
            {
                return SystemUtil.parseDuration("duration", value.trim());
            }
            catch (final NumberFormatException ex)
            {
                throw new CommandLine.TypeConversionException("not a duration (e.g. 500ms, 5s): '" + value + "'");
            }
        }
    }
}
