package io.orbitkv.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.orbitkv.codecs.cnc.CncFileDescriptor;
import io.orbitkv.manager.status.CncReader;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.agrona.IoUtil;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code orbitkv bench cli}: wall time of whole CLI calls through {@code scripts/orbitkv}, as a user runs them, next
 * to a running Manager, each paired with a {@code java -version} of the same JDK run just before it (the anchor: a JVM
 * that starts and exits doing nothing). Prints min / median / max per command and the ratio of medians.
 */
@Command(
    name = "cli",
    mixinStandardHelpOptions = true,
    description = "CLI start-up: --help, stat --once, members, client lookup through scripts/orbitkv against a " +
        "running Manager, each paired with java -version (min/median/max, ratio).")
public final class BenchCliCommand implements Callable<Integer>
{
    /** What a CLI call should take at most on the 2-core bench VM (median). */
    static final double GOAL_MS = 1_000.0;

    /** The chain the lookup asks for, published once before the runs so that every lookup hits. */
    private static final List<String> CHAIN = List.of("--blocks=32", "--block-bytes=4096", "--namespace=bench-cli");

    /** One call that hangs is a failure, not a figure. */
    private static final long CALL_TIMEOUT_S = 60;

    @Option(names = "--runs", defaultValue = "5", description = "Measured runs per command (${DEFAULT-VALUE}).")
    private int runs;

    @Option(names = "--warmup", defaultValue = "1", description = "Unmeasured runs per command first (${DEFAULT-VALUE}).")
    private int warmup;

    @Option(names = "--etcd-endpoints", description = "Run the Manager clustered against this etcd and measure " +
        "members too (without it, members is skipped).")
    private String etcdEndpoints;

    @picocli.CommandLine.Mixin
    io.orbitkv.manager.cli.EtcdAuthOptions etcdAuth = new io.orbitkv.manager.cli.EtcdAuthOptions();

    @Option(names = "--json", description = "Also write the results as JSON to this file.")
    private File jsonFile;

    public Integer call() throws Exception
    {
        final String root = System.getenv("ORBITKV_ROOT");
        if (null == root || !new File(root, "scripts/orbitkv").canExecute())
        {
            System.err.println("orbitkv bench cli: run it through scripts/orbitkv (ORBITKV_ROOT names the checkout)");
            return 2;
        }
        if (runs < 1 || warmup < 0)
        {
            System.err.println("orbitkv bench cli: --runs must be >= 1 and --warmup >= 0");
            return 2;
        }
        final List<String> etcdAuthArgs = io.orbitkv.manager.cli.EtcdAuthOptions.args(etcdAuth.security());
        final String orbitkv = new File(root, "scripts/orbitkv").getPath();
        final String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        final Path dir = Files.createTempDirectory(Path.of("/dev/shm"), "orbitkv-bench-cli-");
        final String cluster = "bench-cli-" + ProcessHandle.current().pid();
        final List<String> managerArgs = new ArrayList<>(List.of(
            "manager", "--dir", dir.toString(), "--pool-bytes", "64m"));
        if (null != etcdEndpoints)
        {
            managerArgs.addAll(List.of("--etcd-endpoints", etcdEndpoints, "--cluster-name", cluster, "--node-id", "a",
                "--catalog-nodes", "a"));
            managerArgs.addAll(etcdAuthArgs);
        }
        final File log = dir.resolveSibling(dir.getFileName() + ".log").toFile();
        final Process manager = ChildJvm.startOrbitkv(log, List.of(), managerArgs);
        final Map<String, Object> results = new LinkedHashMap<>();
        try
        {
            awaitReady(new File(dir.toFile(), CncFileDescriptor.CNC_FILE_NAME), manager, log);
            run(concat(List.of(orbitkv, "client", "--dir", dir.toString(), "publish"), CHAIN));

            final Map<String, List<String>> commands = new LinkedHashMap<>();
            commands.put("--help", List.of(orbitkv, "--help"));
            commands.put("stat --once", List.of(orbitkv, "stat", "--dir", dir.toString(), "--once"));
            if (null != etcdEndpoints)
            {
                commands.put("members", concat(List.of(orbitkv, "members", "--etcd-endpoints", etcdEndpoints,
                    "--cluster-name", cluster), etcdAuthArgs));
            }
            commands.put("client lookup", concat(List.of(orbitkv, "client", "--dir", dir.toString(), "lookup"), CHAIN));

            System.out.printf(Locale.ROOT, "orbitkv bench cli: %d runs (+%d warm-up) per command, each after a " +
                "java -version; Manager %s%s; lookup chain %s%n", runs, warmup, dir,
                null == etcdEndpoints ? " standalone (members skipped: no --etcd-endpoints)" : " clustered",
                String.join(" ", CHAIN));
            System.out.printf(Locale.ROOT, "  %-16s %9s %9s %9s   %-22s %s%n", "command", "min ms", "median ms",
                "max ms", "median / java -version", "goal <= 1000 ms");
            final List<Double> anchorAll = new ArrayList<>();
            final Map<String, Object> commandResults = new LinkedHashMap<>();
            for (final Map.Entry<String, List<String>> entry : commands.entrySet())
            {
                final double[] anchor = new double[runs];
                final double[] wall = new double[runs];
                for (int i = -warmup; i < runs; i++)
                {
                    final double anchorMs = run(List.of(java, "-version"));
                    final double wallMs = run(entry.getValue());
                    if (i >= 0)
                    {
                        anchor[i] = anchorMs;
                        wall[i] = wallMs;
                        anchorAll.add(anchorMs);
                    }
                }
                final double ratio = median(wall) / median(anchor);
                System.out.printf(Locale.ROOT, "  %-16s %9.0f %9.0f %9.0f   %-22s %s%n", entry.getKey(), min(wall),
                    median(wall), max(wall), String.format(Locale.ROOT, "%.1fx", ratio),
                    median(wall) <= GOAL_MS ? "met" : "MISSED");
                final Map<String, Object> figures = new LinkedHashMap<>();
                figures.put("minMs", min(wall));
                figures.put("medianMs", median(wall));
                figures.put("maxMs", max(wall));
                figures.put("anchorMedianMs", median(anchor));
                figures.put("ratioToJavaVersion", ratio);
                figures.put("goalMet", median(wall) <= GOAL_MS);
                commandResults.put(entry.getKey(), figures);
            }
            final double[] anchors = anchorAll.stream().mapToDouble(Double::doubleValue).toArray();
            System.out.printf(Locale.ROOT, "  %-16s %9.0f %9.0f %9.0f   (anchor, all pairs)%n", "java -version",
                min(anchors), median(anchors), max(anchors));
            results.put("runs", runs);
            results.put("cores", Runtime.getRuntime().availableProcessors());
            results.put("clustered", null != etcdEndpoints);
            results.put("goalMs", GOAL_MS);
            results.put("anchor", Map.of("command", "java -version", "minMs", min(anchors), "medianMs",
                median(anchors), "maxMs", max(anchors)));
            results.put("commands", commandResults);
        }
        finally
        {
            manager.destroy();
            if (!manager.waitFor(15, TimeUnit.SECONDS))
            {
                manager.destroyForcibly().waitFor();
            }
            IoUtil.delete(dir.toFile(), true);
            // A failure above carries the log's contents in its message: the file itself is not kept.
            Files.deleteIfExists(log.toPath());
        }
        if (null != jsonFile)
        {
            new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(jsonFile, results);
            System.out.println("results written to " + jsonFile);
        }
        return 0;
    }

    private static double run(final List<String> command) throws Exception
    {
        final long startNs = System.nanoTime();
        final Process process = new ProcessBuilder(command)
            .redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .redirectError(ProcessBuilder.Redirect.DISCARD)
            .start();
        if (!process.waitFor(CALL_TIMEOUT_S, TimeUnit.SECONDS))
        {
            process.destroyForcibly();
            throw new IllegalStateException(String.join(" ", command) + " did not exit within " + CALL_TIMEOUT_S + " s");
        }
        final double ms = (System.nanoTime() - startNs) / 1e6;
        if (0 != process.exitValue())
        {
            throw new IllegalStateException(String.join(" ", command) + " exited " + process.exitValue());
        }
        return ms;
    }

    private static void awaitReady(final File cnc, final Process manager, final File log) throws Exception
    {
        // The Manager signals ready in its CnC file; its start-up (JVM, AOT cache or not) bounds the wait.
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(CALL_TIMEOUT_S);
        while (System.nanoTime() < deadlineNs)
        {
            if (!manager.isAlive())
            {
                throw new IllegalStateException("Manager exited: " + Files.readString(log.toPath()));
            }
            final CncReader ready = CncReader.mapIfReady(cnc);
            if (null != ready)
            {
                ready.close();
                return;
            }
            TimeUnit.MILLISECONDS.sleep(5);
        }
        throw new IllegalStateException("Manager not ready within " + CALL_TIMEOUT_S + " s: " +
            Files.readString(log.toPath()));
    }

    private static List<String> concat(final List<String> head, final List<String> tail)
    {
        final List<String> all = new ArrayList<>(head);
        all.addAll(tail);
        return all;
    }

    private static double median(final double[] values)
    {
        final double[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted.length % 2 == 1 ? sorted[sorted.length / 2] :
            (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
    }

    private static double min(final double[] values)
    {
        return Arrays.stream(values).min().orElse(Double.NaN);
    }

    private static double max(final double[] values)
    {
        return Arrays.stream(values).max().orElse(Double.NaN);
    }
}
