package io.orbitkv.bench;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.agrona.IoUtil;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code orbitkv bench transfer}: peer transfers between two clustered Manager processes against iperf3 and a raw TCP
 * socket measured in the same run, with the Managers' transfer counters and the TE binding over its C stand-in.
 */
@Command(
    name = "transfer",
    mixinStandardHelpOptions = true,
    description = {
        "Peer transfers between two Manager processes on loopback: a publishes,",
        "b reads with the peers flag; one cluster, with an etcd of the bench's own.",
        "  [1] anchor: iperf3 over loopback, 1 and 4 streams (without iperf3: said,",
        "      and no ratios);",
        "  [2] b reads --blocks 2 MiB blocks from a, --rounds times, for each",
        "      --streams value (the Managers' --transfer-streams): Gb/s and the",
        "      ratio to iperf3 with as many streams (goal >= 0.9x);",
        "  [3] remote restore of --restore-blocks x 256 KiB in one Read with peers,",
        "      p50/p99, against the same bytes asked for and received over one raw",
        "      TCP socket between two threads of the bench;",
        "  [4] the Managers' transfer counters: sender pinned bytes, receiver",
        "      staging bytes, budget waits (n/a where the build has none);",
        "  [5] the Mooncake TE binding over the C stand-in te-ffm's build compiles,",
        "      labelled \"TE stand-in (not Mooncake)\".",
        "The defaults fit a 2-core box and take about a minute. A quick check:",
        "  scripts/orbitkv bench transfer --blocks 32 --rounds 2 --restore-reps 20",
        "A failed phase is printed and recorded in --json, the rest still runs, and",
        "the exit code is 1. Needs etcd (or --etcd-endpoints); scripts/deps",
        "installs etcd and iperf3."
    })
public final class BenchTransferCommand implements Callable<Integer>
{
    /** The most 2 MiB blocks a run publishes: the engine's data region is addressed with int offsets. */
    static final int MAX_BLOCKS = 896;

    @Option(names = "--blocks", defaultValue = "128", description = "2 MiB blocks a publishes and b reads per round, " +
        "1-" + MAX_BLOCKS + " (${DEFAULT-VALUE} = 256 MiB).")
    int blocks;

    @Option(names = "--rounds", defaultValue = "5", description = "Recorded read rounds per stream setting; the " +
        "median is reported (${DEFAULT-VALUE}).")
    int rounds;

    @Option(names = "--warmup-rounds", defaultValue = "1", description = "Unrecorded rounds first; the first is " +
        "checked byte for byte (${DEFAULT-VALUE}).")
    int warmupRounds;

    @Option(names = "--blocks-per-read", defaultValue = "128", description = "Keys per Read request on b, 1-128 " +
        "(${DEFAULT-VALUE}).")
    int blocksPerRead;

    @Option(names = "--restore-blocks", defaultValue = "64", description = "256 KiB blocks of the restore prefix, " +
        "1-128 (${DEFAULT-VALUE} = 16 MiB).")
    int restoreBlocks;

    @Option(names = "--restore-reps", defaultValue = "200", description = "Recorded restores, and raw TCP round " +
        "trips (${DEFAULT-VALUE}).")
    int restoreReps;

    @Option(names = "--streams", split = ",", defaultValue = "1,4", description = "--transfer-streams settings of " +
        "the Managers, 1-16 each (${DEFAULT-VALUE}).")
    List<Integer> streams;

    @Option(names = "--iperf-secs", defaultValue = "5", description = "Length of each iperf3 run (${DEFAULT-VALUE}).")
    int iperfSecs;

    @Option(names = "--skip-iperf", description = "No iperf3 anchor (and no ratios to it).")
    boolean skipIperf;

    @Option(names = "--te-library", description = "The TE library for [5] (default: the stand-in at " +
        "$ORBITKV_ROOT/" + TeStandInBench.STAND_IN_PATH + ").")
    Path teLibrary;

    @Option(names = "--skip-te", description = "No TE stand-in part.")
    boolean skipTe;

    @Option(names = "--transport", defaultValue = "builtin", description = "The Managers' --transport: builtin or " +
        "mooncake (over --te-library) (${DEFAULT-VALUE}).")
    String transport;

    @Option(names = "--etcd-endpoints", description = "Use this etcd instead of starting one.")
    String etcdEndpoints;

    @picocli.CommandLine.Mixin
    io.orbitkv.manager.cli.EtcdAuthOptions etcdAuth = new io.orbitkv.manager.cli.EtcdAuthOptions();

    @Option(names = "--work-dir", description = "Where the Managers, logs and iperf3 outputs go (default: a new " +
        "directory under /dev/shm, deleted after a run that succeeded).")
    Path workDir;

    @Option(names = "--cluster-secret-file", description = "The Managers' --cluster-secret-file: their peer frames " +
        "carry MACs and their transfer connections prove the secret (default: unauthenticated).")
    Path clusterSecretFile;

    @Option(names = "--auth-compare", description = "Measure each Manager pair twice in this run, unauthenticated and " +
        "then with --cluster-secret-file, and print each figure's ratio (authenticated / not).")
    boolean authCompare;

    @Option(names = "--auth-first", description = "With --auth-compare: measure the authenticated pair first.")
    boolean authFirst;

    @Option(names = "--json", description = "Also write the results as JSON to this file.")
    File jsonFile;

    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    public Integer call() throws Exception
    {
        if (null != etcdEndpoints)
        {
            // Managers this bench starts connect to the given etcd with these TLS and auth options.
            etcdAuth.exportAsProperties();
        }
        if (blocks < 1 || blocks > MAX_BLOCKS || rounds < 1 || warmupRounds < 0 || blocksPerRead < 1 ||
            blocksPerRead > TransferBench.MAX_PEER_KEYS || restoreBlocks < 1 || restoreBlocks > TransferBench.MAX_PEER_KEYS ||
            restoreReps < 1 || iperfSecs < 1 || streams.isEmpty() || streams.stream().anyMatch((s) -> s < 1 || s > 16) ||
            (!"builtin".equals(transport) && !"mooncake".equals(transport)))
        {
            throw new CommandLine.ParameterException(spec.commandLine(), "--blocks in [1, " + MAX_BLOCKS + "], " +
                "--blocks-per-read and --restore-blocks in [1, 128], --streams values in [1, 16], --transport builtin " +
                "or mooncake, counts positive");
        }
        final Path library = null != teLibrary ? teLibrary : BenchTools.repoRoot().resolve(TeStandInBench.STAND_IN_PATH);
        if ("mooncake".equals(transport) && !Files.isRegularFile(library))
        {
            throw new CommandLine.ParameterException(spec.commandLine(), "--transport mooncake needs a TE library: " +
                library + " does not exist");
        }
        final boolean ownDir = null == workDir;
        final Path dir = ownDir ?
            Files.createTempDirectory(TransferBench.defaultWorkParent().toPath(), "orbitkv-bench-transfer-") : workDir;
        Files.createDirectories(dir);
        final TransferBench.Options options = new TransferBench.Options(blocks, rounds, warmupRounds, blocksPerRead,
            restoreBlocks, restoreReps, List.copyOf(streams), iperfSecs, skipIperf, skipTe, library.toAbsolutePath(),
            transport, etcdEndpoints, dir, null == clusterSecretFile ? null : clusterSecretFile.toAbsolutePath(), authCompare,
            authFirst);
        if (authCompare && null == clusterSecretFile)
        {
            throw new CommandLine.ParameterException(spec.commandLine(), "--auth-compare needs --cluster-secret-file");
        }
        if (null != clusterSecretFile)
        {
            // Refused here as the Managers would refuse it, before anything starts.
            io.orbitkv.manager.peer.ClusterSecret.load(clusterSecretFile);
        }
        final TransferBench bench = new TransferBench(options, spec.commandLine().getOut());
        final Map<String, Object> results;
        try
        {
            results = bench.run();
        }
        catch (final Exception ex)
        {
            spec.commandLine().getOut().println("bench transfer failed; logs kept in " + dir);
            spec.commandLine().getOut().flush();
            throw ex;
        }
        if (null != jsonFile)
        {
            new ObjectMapper().writerWithDefaultPrettyPrinter().writeValue(jsonFile, results);
            spec.commandLine().getOut().println("results written to " + jsonFile);
        }
        if (bench.failed())
        {
            spec.commandLine().getOut().println("bench transfer: a phase FAILED (see above); logs kept in " + dir);
            return 1;
        }
        if (ownDir)
        {
            IoUtil.delete(dir.toFile(), true);
        }
        return 0;
    }
}
