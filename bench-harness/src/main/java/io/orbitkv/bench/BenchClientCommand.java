package io.orbitkv.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.orbitkv.client.EngineClient;
import io.orbitkv.client.KeyBatch;
import io.orbitkv.client.OperationResult;
import io.orbitkv.manager.Configuration;
import io.orbitkv.manager.Manager;
import io.orbitkv.manager.ManagerContext;
import java.io.File;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code orbitkv bench client}: the C and Python clients against the Java client on one Manager (in this process):
 * <ul>
 *   <li>1-key and 64-key Lookup round trips (all keys resident) from Java (this process), C ({@code okv-tool bench})
 *       and Python ({@code clients/python/tests/bench_client.py}), medians per round, interleaved; ratios to Java
 *       (goal: C within 1.2x) and Python's cost over C per call (goal: at most 5 us), Python both with a list of
 *       hashes and with the same hashes packed once ({@code orbitkv.PackedHashes});</li>
 *   <li>Python {@code put}/{@code get} of fresh 2 MiB blocks, one block per call and {@code --put-batch} blocks per call
 *       (per block), each against as many plain memoryview copies of the same bytes in the same process (goal: at
 *       least 0.8x the copy's speed, judged on the batch figure: an engine moves a request's blocks together, and a
 *       batch is what lets the Python copy of one block overlap the Manager's copy of another); the batch put is
 *       also set against copies of its blocks into memory that is not in cache (a 256 MiB pre-faulted buffer, each
 *       copy to the next place), since put's bytes end in the Manager's pool, not in the hot slot the first anchor
 *       reuses (reported).</li>
 * </ul>
 */
@Command(name = "client", mixinStandardHelpOptions = true,
    description = "C and Python clients vs the Java client (Lookup RTT) and Python put/get vs a memoryview copy.")
public final class BenchClientCommand implements Callable<Integer>
{
    private static final String NAMESPACE = "bench-client";
    private static final int CHAIN_SEED = 7;
    private static final int MAX_KEYS = 64;
    private static final int BLOCK_BYTES = 4096;
    private static final int HASH_BYTES = 32;
    private static final ObjectMapper JSON = new ObjectMapper();

    @Option(names = "--iterations", defaultValue = "20000", description = "Lookups per client and round (${DEFAULT-VALUE}).")
    private int iterations;

    @Option(names = "--rounds", defaultValue = "5", description = "Interleaved rounds; medians reported (${DEFAULT-VALUE}).")
    private int rounds;

    @Option(names = "--block-bytes", defaultValue = "2097152", description = "Python put/get block size (${DEFAULT-VALUE}).")
    private int putBlockBytes;

    @Option(names = "--put-reps", defaultValue = "20", description = "Python put/get repetitions per round (${DEFAULT-VALUE}).")
    private int putReps;

    @Option(names = "--put-batch", defaultValue = "20", description = "Blocks per Python put/get call in the batch case; " +
        "max(1, put-reps / 4) batches per round (${DEFAULT-VALUE}).")
    private int putBatch;

    @Option(names = "--gap", defaultValue = "0", description = "Busy wait before each Lookup in every client, an " +
        "engine's own work between calls, e.g. 1ms; the Manager's agent may park in between (${DEFAULT-VALUE}).")
    private String gap;

    @Option(names = "--c-tool", description = "okv-tool (default: $ORBITKV_ROOT/clients/c/target/bin/okv-tool).")
    private String cTool;

    @Option(names = "--python-dir", description = "The Python package's directory (default: $ORBITKV_ROOT/clients/python).")
    private String pythonDir;

    @Option(names = "--json", description = "Also write the results as JSON to this file.")
    private File jsonFile;

    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    public Integer call() throws Exception
    {
        final PrintWriter out = spec.commandLine().getOut();
        final String root = null != System.getenv("ORBITKV_ROOT") ? System.getenv("ORBITKV_ROOT") : ".";
        final String tool = null != cTool ? cTool : root + "/clients/c/target/bin/okv-tool";
        final Path python = Paths.get(null != pythonDir ? pythonDir : root + "/clients/python").toAbsolutePath();
        final String lib = Paths.get(tool).toAbsolutePath().getParent().getParent().resolve("lib/liborbitkv.so").toString();
        if (!new File(tool).canExecute())
        {
            System.err.println("orbitkv bench client: no " + tool + " (build clients/c first: mvn install)");
            return 2;
        }
        final long gapNs = Configuration.parseDurationNs("--gap", gap);
        final int[] keyCounts = {1, MAX_KEYS};
        final double[][] javaNs = new double[2][rounds];
        final double[][] cNs = new double[2][rounds];
        final double[][] pythonNs = new double[2][rounds];
        final double[][] pythonPackedNs = new double[2][rounds];
        // put, its copy, get, its copy; then the same per block of a batch
        final double[][] putGet = new double[16][rounds];
        final File managerDir = new File("/dev/shm/orbitkv-bench-client-" + ProcessHandle.current().pid());
        final String loadBefore = loadAverage();
        out.printf(Locale.ROOT, "bench client: %d lookups per client and round, %d rounds, %d ns between lookups; put/get " +
            "%d x %d bytes one per call and %d x %d per call; load average %s%n", iterations, rounds, gapNs, putReps,
            putBlockBytes, Math.max(1, putReps / 4), putBatch, loadBefore);
        out.flush();
        try (Manager manager = Manager.launch(new ManagerContext()
                .dir(managerDir)
                .poolBytes(Math.max(256L << 20, 2L * (putReps + (long)Math.max(1, putReps / 4) * putBatch) * putBlockBytes))
                .maxBlockBytes(Math.max(putBlockBytes, BLOCK_BYTES))
                .enginePoolAccess(Configuration.EnginePoolAccess.WRITE_RESERVED));
            EngineClient client = EngineClient.connect(new EngineClient.Context()
                .dir(managerDir.getPath())
                .clientName("bench-client-java")
                .dataRegionBytes((long)MAX_KEYS * BLOCK_BYTES)))
        {
            final KeyBatch[] batches = {chain(1), chain(MAX_KEYS)};
            final OperationResult result = new OperationResult(MAX_KEYS);
            if (!client.publish(batches[1], result).isOk())
            {
                throw new IllegalStateException("publish failed: " + result.code() + " " + result.message());
            }
            final Map<String, String> env = Map.of("ORBITKV_LIB", lib, "PYTHONPATH", python.toString(),
                "PYTHONDONTWRITEBYTECODE", "1");
            final String pythonBench = python.resolve("tests").resolve("bench_client.py").toString();
            for (int round = 0; round < rounds; round++)
            {
                for (int k = 0; k < keyCounts.length; k++)
                {
                    // the order rotates per round so that no client always runs right after another's load
                    for (int turn = 0; turn < 3; turn++)
                    {
                        switch ((turn + round) % 3)
                        {
                            case 0 -> javaNs[k][round] = javaLookupMedianNs(client, batches[k], result, gapNs);
                            case 1 -> cNs[k][round] = Double.parseDouble(field(run(env, tool, managerDir.getPath(), "bench",
                                NAMESPACE, "" + keyCounts[k], "" + iterations, "" + gapNs), "median_ns"));
                            default ->
                            {
                                final JsonNode py = JSON.readTree(run(env, "python3", pythonBench, managerDir.getPath(),
                                    "lookup", NAMESPACE, "" + keyCounts[k], "" + iterations, "" + gapNs));
                                pythonNs[k][round] = py.get("median_ns").asDouble();
                                pythonPackedNs[k][round] = py.get("packed_median_ns").asDouble();
                            }
                        }
                    }
                }
                final JsonNode pg = JSON.readTree(run(env, "python3", pythonBench, managerDir.getPath(), "putget",
                    "" + putBlockBytes, "" + putReps, "" + putBatch));
                final String[] fields = {"put_median_ns", "copy_in_median_ns", "get_median_ns", "copy_out_median_ns",
                    "batch_put_median_ns", "batch_copy_in_median_ns", "batch_get_median_ns", "batch_copy_out_median_ns",
                    "batch_put_median_ns", "batch_copy_cold_median_ns", "batch_save_median_ns", "batch_copy_in_median_ns",
                    "batch_save_median_ns", "batch_copy_cold_median_ns", "batch_save_populated_median_ns",
                    "batch_copy_in_median_ns"};
                for (int f = 0; f < fields.length; f++)
                {
                    putGet[f][round] = pg.get(fields[f]).asDouble();
                }
                out.printf(Locale.ROOT, "  round %d: lookup 1 key java/c/python/packed %.1f/%.1f/%.1f/%.1f us, 64 keys " +
                    "%.1f/%.1f/%.1f/%.1f us; " +
                    "put %.0f us (copy %.0f), get %.0f us (copy %.0f); per block of %d: put %.0f us (copy %.0f), " +
                    "get %.0f us (copy %.0f); copies into memory not in cache %.0f us; zero-copy save %.0f us, with the pool " +
                    "mapped in %.0f us%n", round + 1,
                    javaNs[0][round] / 1e3, cNs[0][round] / 1e3, pythonNs[0][round] / 1e3, pythonPackedNs[0][round] / 1e3,
                    javaNs[1][round] / 1e3, cNs[1][round] / 1e3, pythonNs[1][round] / 1e3, pythonPackedNs[1][round] / 1e3,
                    putGet[0][round] / 1e3, putGet[1][round] / 1e3, putGet[2][round] / 1e3, putGet[3][round] / 1e3,
                    putBatch, putGet[4][round] / 1e3, putGet[5][round] / 1e3, putGet[6][round] / 1e3,
                    putGet[7][round] / 1e3, putGet[9][round] / 1e3, putGet[10][round] / 1e3, putGet[14][round] / 1e3);
                out.flush();
            }
        }
        finally
        {
            org.agrona.IoUtil.delete(managerDir, true);
        }

        final Map<String, Object> document = new LinkedHashMap<>();
        final String loadAfter = loadAverage();
        document.put("loadAverageBefore", loadBefore);
        document.put("loadAverageAfter", loadAfter);
        out.println("load average after: " + loadAfter);
        out.println();
        out.println("| case | Java (median) | C (median) | Python (median) | C / Java | Python - C | Python, packed " +
            "hashes (median) | packed - C | goal |");
        out.println("|---|---|---|---|---|---|---|---|---|");
        for (int k = 0; k < keyCounts.length; k++)
        {
            final double j = median(javaNs[k]);
            final double c = median(cNs[k]);
            final double p = median(pythonNs[k]);
            final double pp = median(pythonPackedNs[k]);
            out.printf(Locale.ROOT, "| Lookup RTT, %d key%s | %.2f us | %.2f us | %.2f us | %.2fx | %+.2f us | %.2f us | " +
                "%+.2f us | C <= 1.2x, Python - C <= 5 us |%n", keyCounts[k], keyCounts[k] == 1 ? "" : "s", j / 1e3,
                c / 1e3, p / 1e3, c / j, (p - c) / 1e3, pp / 1e3, (pp - c) / 1e3);
            final Map<String, Object> row = new LinkedHashMap<>();
            row.put("javaMedianNs", j);
            row.put("cMedianNs", c);
            row.put("pythonMedianNs", p);
            row.put("cToJava", c / j);
            row.put("pythonToJava", p / j);
            row.put("pythonOverCNs", p - c);
            row.put("pythonPackedMedianNs", pp);
            row.put("pythonPackedOverCNs", pp - c);
            row.put("pythonPackedRoundsNs", pythonPackedNs[k]);
            row.put("javaRoundsNs", javaNs[k]);
            row.put("cRoundsNs", cNs[k]);
            row.put("pythonRoundsNs", pythonNs[k]);
            document.put("lookup" + keyCounts[k], row);
        }
        out.println();
        out.println("| case | Python (median) | memoryview copies (median) | speed ratio (copy time / op time) | goal |");
        out.println("|---|---|---|---|---|");
        final String[] names = {"put", "get", "putBatch", "getBatch", "putBatchColdAnchor", "saveBatch",
            "saveBatchColdAnchor", "saveBatchPopulated"};
        final String[] cases = {
            "put of one block per call", "get of one block per call",
            "put of " + putBatch + " blocks per call, per block", "get of " + putBatch + " blocks per call, per block",
            "put of " + putBatch + " blocks per call, per block, against copies into memory not in cache",
            "zero-copy save (prepare, copy into the pool slots, commit) of " + putBatch + " blocks, per block",
            "zero-copy save of " + putBatch + " blocks, per block, against copies into memory not in cache",
            "zero-copy save of " + putBatch + " blocks, per block, by a client that mapped the pool in (populate_pool)"};
        for (int i = 0; i < names.length; i++)
        {
            final double op = median(putGet[2 * i]);
            final double copy = median(putGet[2 * i + 1]);
            out.printf(Locale.ROOT, "| Python %s (%d bytes) | %.0f us | %.0f us | %.2fx | %s |%n", cases[i],
                putBlockBytes, op / 1e3, copy / 1e3, copy / op,
                i == 2 || i == 3 || i == 5 || i == 7 ? ">= 0.8x (judged here)" : "(reported)");
            final Map<String, Object> row = new LinkedHashMap<>();
            row.put("medianNs", op);
            row.put("copyMedianNs", copy);
            row.put("ratio", copy / op);
            row.put("roundsNs", putGet[2 * i]);
            row.put("copyRoundsNs", putGet[2 * i + 1]);
            document.put(names[i], row);
        }
        if (null != jsonFile)
        {
            document.put("iterations", iterations);
            document.put("gapNs", gapNs);
            document.put("rounds", rounds);
            document.put("blockBytes", putBlockBytes);
            document.put("putReps", putReps);
            document.put("putBatchBlocks", putBatch);
            JSON.writerWithDefaultPrettyPrinter().writeValue(jsonFile, document);
            out.println("results written to " + jsonFile);
        }
        return 0;
    }

    private double javaLookupMedianNs(
        final EngineClient client, final KeyBatch batch, final OperationResult result, final long gapNs)
    {
        final long[] samples = new long[iterations];
        for (int i = 0; i < iterations; i++)
        {
            if (gapNs > 0)
            {
                final long until = System.nanoTime() + gapNs;
                while (System.nanoTime() < until)
                {
                    Thread.onSpinWait();
                }
            }
            final long start = System.nanoTime();
            client.lookup(batch, false, result);
            samples[i] = System.nanoTime() - start;
        }
        if (result.value() != batch.keyCount())
        {
            throw new IllegalStateException("lookup found " + result.value() + " of " + batch.keyCount());
        }
        Arrays.sort(samples);
        return samples[iterations / 2];
    }

    /** Keys 0..count-1 of the chain okv-tool and bench_client.py look up (xorshift64 hashes, seed 7). */
    private static KeyBatch chain(final int count)
    {
        final KeyBatch batch = new KeyBatch(count).namespace(NAMESPACE.getBytes(StandardCharsets.US_ASCII));
        for (int i = 0; i < count; i++)
        {
            long state = CHAIN_SEED * 0x9E3779B97F4A7C15L + i + 1;
            final byte[] hash = new byte[HASH_BYTES];
            for (int w = 0; w < 4; w++)
            {
                state ^= state << 13;
                state ^= state >>> 7;
                state ^= state << 17;
                for (int b = 0; b < 8; b++)
                {
                    hash[w * 8 + b] = (byte)(state >>> (8 * b));
                }
            }
            batch.addKey(hash, 0, HASH_BYTES, (long)i * BLOCK_BYTES, BLOCK_BYTES);
        }
        return batch;
    }

    private static String run(final Map<String, String> env, final String... command) throws IOException, InterruptedException
    {
        final Path log = Files.createTempFile("orbitkv-bench-client", ".out");
        try
        {
            final ProcessBuilder builder = new ProcessBuilder(List.of(command)).redirectErrorStream(true)
                .redirectOutput(log.toFile());
            builder.environment().putAll(env);
            final Process process = builder.start();
            if (!process.waitFor(5, TimeUnit.MINUTES) || process.exitValue() != 0)
            {
                process.destroyForcibly();
                throw new IllegalStateException(String.join(" ", command) + " failed:\n" + Files.readString(log));
            }
            final List<String> lines = new ArrayList<>(Files.readAllLines(log));
            return lines.isEmpty() ? "" : lines.get(lines.size() - 1);
        }
        finally
        {
            Files.deleteIfExists(log);
        }
    }

    private static String loadAverage()
    {
        try
        {
            final String[] parts = Files.readString(Paths.get("/proc/loadavg")).trim().split(" ");
            return parts[0] + " " + parts[1] + " " + parts[2];
        }
        catch (final IOException ex)
        {
            return "unknown";
        }
    }

    private static String field(final String line, final String name)
    {
        for (final String part : line.split(" "))
        {
            if (part.startsWith(name + "="))
            {
                return part.substring(name.length() + 1);
            }
        }
        throw new IllegalStateException("no " + name + " in: " + line);
    }

    private static double median(final double[] values)
    {
        final double[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }
}
