package io.orbitkv.bench;

import java.io.File;
import java.io.IOException;
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

    @Option(names = "--transport-tls-dir", description = "Directory of " + TLS_CA + ", " + TLS_CERT + " and " + TLS_KEY +
        " (PKCS#8): the Managers' transfer connections use mutual TLS 1.3 with them. openssl makes them there (EC " +
        "P-256, one CA) when the directory holds no " + TLS_CA + " (default: plain TCP).")
    Path tlsDir;

    @Option(names = "--tls-compare", description = "Measure each Manager pair twice in this run, plain TCP and then " +
        "with --transport-tls-dir, and print each figure's ratio (TLS / plain).")
    boolean tlsCompare;

    @Option(names = "--json", description = "Also write the results as JSON to this file.")
    File jsonFile;

    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    /** Files of {@code --transport-tls-dir}. */
    static final String TLS_CA = "ca.pem";
    static final String TLS_CERT = "node.pem";
    static final String TLS_KEY = "node.key";

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
            authFirst, null == tlsDir ? null : tlsDir.toAbsolutePath(), tlsCompare);
        if (tlsCompare && null == tlsDir)
        {
            throw new CommandLine.ParameterException(spec.commandLine(), "--tls-compare needs --transport-tls-dir");
        }
        if (tlsCompare && authCompare)
        {
            throw new CommandLine.ParameterException(spec.commandLine(), "--tls-compare and --auth-compare: one at a time");
        }
        if (null != tlsDir)
        {
            makeCertificates(tlsDir);
            // Refused here as the Managers would refuse them, before anything starts.
            io.orbitkv.transport.TransportTls.fromPem(tlsDir.resolve(TLS_CERT), tlsDir.resolve(TLS_KEY),
                tlsDir.resolve(TLS_CA));
        }
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

    /**
     * A CA and one node certificate it issued, both EC P-256, made with openssl unless the directory holds a CA already.
     */
    static void makeCertificates(final Path dir) throws IOException, InterruptedException
    {
        Files.createDirectories(dir);
        if (Files.exists(dir.resolve(TLS_CA)))
        {
            return;
        }
        final String ca = dir.resolve(TLS_CA).toString();
        final String caKey = dir.resolve("ca.key").toString();
        final String request = dir.resolve("node.csr").toString();
        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", caKey,
            "-out", ca, "-days", "30", "-subj", "/CN=orbitkv-bench-ca");
        openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
            dir.resolve(TLS_KEY).toString(), "-out", request, "-subj", "/CN=orbitkv-bench-node");
        openssl("x509", "-req", "-in", request, "-CA", ca, "-CAkey", caKey, "-CAcreateserial", "-out",
            dir.resolve(TLS_CERT).toString(), "-days", "30");
    }

    private static void openssl(final String... arguments) throws IOException, InterruptedException
    {
        final List<String> command = new java.util.ArrayList<>();
        command.add("openssl");
        command.addAll(List.of(arguments));
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        final String output = new String(process.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        if (0 != process.waitFor())
        {
            throw new IOException(String.join(" ", command) + " failed: " + output);
        }
    }
}
