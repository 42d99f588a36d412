package io.orbitkv.bench;

import io.orbitkv.manager.Configuration;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.orbitkv.manager.cli.OptionConverters;
import org.agrona.IoUtil;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code orbitkv bench replay}: a request trace replayed through N clustered Manager processes against in-process LRU
 * references on the same trace and routing.
 */
@Command(
    name = "replay",
    mixinStandardHelpOptions = true,
    description = {
        "Replays a Mooncake-format trace (JSON lines: timestamp, input_length,",
        "output_length, hash_ids; 512 tokens per hash id) through --managers",
        "Manager processes with an etcd of the bench's own, one engine per Manager:",
        "each request is routed to a Manager, its engine looks the chain up (pin,",
        "peers unless isolated), reads what was found, verifies every restored",
        "byte (contents follow from the hash id) and publishes the rest.",
        "Prints per mode: hit fraction by source (local DRAM, local SSD, peer) and",
        "recompute, the same trace through an isolated LRU of C blocks per host,",
        "one global LRU of N x C and an infinite cache, the ratio to the global LRU",
        "(goal >= 0.97x), TTFT proxy p50/p95/p99, restore latency, wrong bytes,",
        "etcd calls per request and the Managers' catalog and transfer figures.",
        "Modes: " + "isolated, embedded, one-catalog, large-index (a candidate index",
        "that holds every block of the trace), admission-off, admission-always,",
        "admission-second-hit.",
        "Default: scripts/orbitkv bench replay --managers 4 --pool-blocks 5000",
        "--block-bytes 64k (the conversation trace in benches/workloads)."
    })
public final class BenchReplayCommand implements Callable<Integer>
{
    /** The default trace, relative to the repository root. */
    static final String DEFAULT_TRACE = "benches/workloads/conversation_trace.jsonl";

    /**
     * Prefill rate of the TTFT proxy: tokens one GPU prefills per second (an 8B-class model on one data-centre GPU
     * prefills on the order of ten thousand tokens a second; this is a round figure of that order).
     */
    static final double DEFAULT_PREFILL_TOKENS_PER_S = 10_000;

    static final int MAX_MANAGERS = 16;

    @Option(names = "--trace", description = "Trace file (default: $ORBITKV_ROOT/" + DEFAULT_TRACE + ").")
    Path trace;

    @Option(names = "--requests", defaultValue = "0", description = "Replay only the first N requests (0: all).")
    int requests;

    @Option(names = "--managers", defaultValue = "4", description = "Manager processes, 1-" + MAX_MANAGERS +
        " (${DEFAULT-VALUE}).")
    int managers;

    @Option(names = "--pool-blocks", defaultValue = "5000", description = "DRAM capacity per Manager in blocks (C); " +
        "the pool is rounded up to 2 MiB and the references use the blocks it really holds (${DEFAULT-VALUE}).")
    int poolBlocks;

    @Option(names = "--block-bytes", defaultValue = "64k", converter = OptionConverters.Size.class,
        description = "Bytes per block (one hash id), 4k-2m, a multiple of 4k (${DEFAULT-VALUE}).")
    long blockBytes;

    @Option(names = "--route", defaultValue = "round-robin", description = "round-robin, random or prefix-affinity " +
        "(${DEFAULT-VALUE}).")
    String route;

    @Option(names = "--speed", defaultValue = "0", description = "Replay at the trace's timestamps divided by this " +
        "(2 = twice as fast); 0 = as fast as the Managers answer (${DEFAULT-VALUE}).")
    double speed;

    @Option(names = "--modes", split = ",", defaultValue = "embedded", description = "Modes, comma-separated " +
        "(${DEFAULT-VALUE}).")
    List<String> modes;

    @Option(names = "--prefill-tokens-per-s", defaultValue = "10000", description = "Prefill rate of the TTFT proxy " +
        "for one GPU (${DEFAULT-VALUE}).")
    double prefillTokensPerS;

    @Option(names = "--capacity-sweep", split = ",", description = "Blocks per host to replay the first mode at, e.g. " +
        "1000,2000,5000,10000, with the references at each.")
    List<Integer> capacitySweep = new ArrayList<>();

    @Option(names = "--fail", description = "kill:b@40%% (SIGKILL, restart 10 s later), kill-stay:b@40%% (SIGKILL, " +
        "no restart), restart-catalog:a@50%% (SIGTERM, restart), etcd-stop:20s@60%% (etcd stopped, started again 20 s " +
        "later on its data and ports), place:a,b,c,d@30%% (orbitkv placement set to these catalog nodes, followed " +
        "until stable); repeatable.")
    List<String> fail = new ArrayList<>();

    @Option(names = "--plots", description = "Write PNG and SVG plots to this directory.")
    Path plots;

    @Option(names = "--seed", defaultValue = "1", description = "Seed of the random route (${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--no-progress", description = "No progress line on stderr.")
    boolean noProgress;

    @Option(names = "--etcd-endpoints", description = "Use this etcd instead of starting one.")
    String etcdEndpoints;

    @Option(names = "--cluster-secret-file", description = "The Managers' --cluster-secret-file (default: their peer " +
        "channel is unauthenticated).")
    Path clusterSecretFile;

    @picocli.CommandLine.Mixin
    io.orbitkv.manager.cli.EtcdAuthOptions etcdAuth = new io.orbitkv.manager.cli.EtcdAuthOptions();

    @Option(names = "--work-dir", description = "Where the Managers and logs go (default: a new directory under " +
        "/dev/shm, deleted after a run that succeeded).")
    Path workDir;

    @Option(names = "--json", description = "Also write the results as JSON to this file.")
    File jsonFile;

    @Option(names = "--catalog-replicas", description = "Copies of each catalog shard, as the Managers' flag " +
        "(default: ${DEFAULT-VALUE}).")
    int catalogReplicas = Configuration.CATALOG_REPLICAS_DEFAULT;

    @Option(names = "--catalog-hosts", defaultValue = "0", description = "Catalog nodes at start: the first K " +
        "Managers (0: all).")
    int catalogHosts;

    @Option(names = "--max-shard-moves", description = "Shard moves a placement change runs at once, as the " +
        "Managers' flag (default: ${DEFAULT-VALUE}).")
    int maxShardMoves = Configuration.MAX_SHARD_MOVES_DEFAULT;

    @Option(names = "--hit-window", description = "Also report the hit fraction of the requests completed between " +
        "two shares of the run, e.g. 30%%-60%% (to compare runs with and without a placement change).")
    String hitWindow;

    @Option(names = "--manager-jvm-arg", description = "An extra JVM option for every Manager process, repeatable " +
        "(e.g. -XX:StartFlightRecording=filename=DIR/%%p.jfr to profile the Managers).")
    List<String> managerJvmArgs = new ArrayList<>();

    @Option(names = "--manager-flag", description = "An extra flag (or flag value) for every Manager, repeatable, in " +
        "order; {dir} stands for the Manager's own directory (e.g. --manager-flag=--ssd-dir " +
        "--manager-flag={dir}/ssd for an SSD tier that survives a restart of the Manager).")
    List<String> managerFlags = new ArrayList<>();

    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    private static double[] parseWindow(final String text)
    {
        final String[] parts = text.replace("%", "").split("-");
        if (2 != parts.length)
        {
            throw new IllegalArgumentException("--hit-window takes FROM%-TO%, e.g. 30%-60%: '" + text + "'");
        }
        final double from = Double.parseDouble(parts[0].trim()) / 100.0;
        final double to = Double.parseDouble(parts[1].trim()) / 100.0;
        if (from < 0 || to > 1 || from >= to)
        {
            throw new IllegalArgumentException("--hit-window: 0% <= FROM < TO <= 100%: '" + text + "'");
        }
        return new double[]{from, to};
    }

    public Integer call() throws Exception
    {
        if (null != etcdEndpoints)
        {
            // Managers this bench starts connect to the given etcd with these TLS and auth options.
            etcdAuth.exportAsProperties();
        }
        final List<ReplayBench.Failure> failures = new ArrayList<>();
        final ReplayRoute parsedRoute;
        final double[] window;
        try
        {
            parsedRoute = ReplayRoute.of(route);
            for (final String f : fail)
            {
                failures.add(ReplayBench.Failure.parse(f, managers));
            }
            for (final String m : modes)
            {
                ReplayBench.mode(m);
            }
            window = null == hitWindow ? null : parseWindow(hitWindow);
        }
        catch (final IllegalArgumentException ex)
        {
            throw new CommandLine.ParameterException(spec.commandLine(), ex.getMessage());
        }
        if (managers < 1 || managers > MAX_MANAGERS || poolBlocks < 1 || blockBytes < 4096 || blockBytes > (2 << 20) ||
            0 != blockBytes % 4096 || speed < 0 || prefillTokensPerS <= 0 || requests < 0 || modes.isEmpty() ||
            capacitySweep.stream().anyMatch((c) -> c < 1) || catalogHosts < 0 || catalogHosts > managers)
        {
            throw new CommandLine.ParameterException(spec.commandLine(), "--managers in [1, " + MAX_MANAGERS + "], " +
                "--block-bytes a multiple of 4k in [4k, 2m], --pool-blocks and sweep values positive, --speed >= 0, " +
                "--prefill-tokens-per-s > 0, --catalog-hosts in [0, --managers]");
        }
        final Path traceFile = null != trace ? trace : BenchTools.repoRoot().resolve(DEFAULT_TRACE);
        if (!Files.isRegularFile(traceFile))
        {
            throw new CommandLine.ParameterException(spec.commandLine(), "no trace file " + traceFile);
        }
        final boolean ownDir = null == workDir;
        final Path dir = ownDir ?
            Files.createTempDirectory(TransferBench.defaultWorkParent().toPath(), "orbitkv-bench-replay-") : workDir;
        Files.createDirectories(dir);
        final ReplayBench.Options options = new ReplayBench.Options(traceFile, requests, managers, poolBlocks,
            (int)blockBytes, parsedRoute, speed, List.copyOf(modes), prefillTokensPerS, List.copyOf(capacitySweep),
            failures, plots, etcdEndpoints, dir, seed, !noProgress, List.copyOf(managerJvmArgs), catalogReplicas,
            catalogHosts, maxShardMoves, window, null == clusterSecretFile ? null : clusterSecretFile.toAbsolutePath(),
            List.copyOf(managerFlags));
        final Map<String, Object> results;
        try
        {
            results = new ReplayBench(options, spec.commandLine().getOut(), System.err).run();
        }
        catch (final Exception ex)
        {
            spec.commandLine().getOut().println("bench replay failed; logs kept in " + dir);
            spec.commandLine().getOut().flush();
            throw ex;
        }
        if (null != jsonFile)
        {
            new ObjectMapper().writerWithDefaultPrettyPrinter().writeValue(jsonFile, results);
            spec.commandLine().getOut().println("results written to " + jsonFile);
        }
        spec.commandLine().getOut().flush();
        if (ownDir)
        {
            IoUtil.delete(dir.toFile(), true);
        }
        return 0;
    }
}
