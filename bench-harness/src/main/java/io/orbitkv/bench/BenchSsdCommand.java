package io.orbitkv.bench;

import io.orbitkv.manager.cli.OptionConverters;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.orbitkv.client.EngineClient;
import io.orbitkv.client.KeyBatch;
import io.orbitkv.client.OperationResult;
import io.orbitkv.codecs.engine.KeyStatus;
import io.orbitkv.manager.Configuration;
import io.orbitkv.manager.Manager;
import io.orbitkv.manager.ManagerContext;
import io.orbitkv.manager.cli.BlockChain;
import io.orbitkv.manager.cli.ClientChainRunner;
import io.orbitkv.manager.store.StoreCounter;
import java.io.File;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
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
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code orbitkv bench ssd --dir PATH}: fio ({@code --ioengine=io_uring --direct=1}) and the Manager's SSD path on
 * the same file, block size and queue depth, interleaved round by round; medians and same-run ratios to fio:
 * <ul>
 *   <li>2 MiB sequential write and read (goal >= 0.9x fio);</li>
 *   <li>4 KiB random read IOPS at queue depth 32 (goal >= 0.9x fio);</li>
 *   <li>end-to-end Read of SSD-resident 2 MiB blocks through the engine ring (a Manager in this process, this
 *       process as the engine), as a ratio to fio's sequential read: once with SSD reads straight into the engine's
 *       data region ({@code --ssd-direct-reads=on}) and once with {@code =off} (through staging and a copy), by two
 *       Managers measured in turn in each round.</li>
 * </ul>
 */
@Command(name = "ssd", mixinStandardHelpOptions = true,
    description = "SSD tier against fio on the same directory, block size and queue depth (same-run ratios).")
public final class BenchSsdCommand implements Callable<Integer>
{
    private static final int BIG_BLOCK = 2 * 1024 * 1024;
    private static final int SMALL_BLOCK = 4096;
    private static final ObjectMapper JSON = new ObjectMapper();

    @Option(names = "--dir", required = true, description = "Directory on the disk to measure (not tmpfs).")
    private File dir;

    @Option(names = "--file-bytes", defaultValue = "2g", converter = OptionConverters.Size.class,
        description = "Bytes written and read sequentially per round (${DEFAULT-VALUE}).")
    private long fileBytes;

    @Option(names = "--queue-depth", defaultValue = "32", description = "I/Os in flight, fio and ours (${DEFAULT-VALUE}).")
    private int queueDepth;

    @Option(names = "--random-seconds", defaultValue = "5", description = "Duration of each random-read run (${DEFAULT-VALUE}).")
    private int randomSeconds;

    @Option(names = "--rounds", defaultValue = "3", description = "Interleaved rounds; medians reported (${DEFAULT-VALUE}).")
    private int rounds;

    @Option(names = "--e2e-blocks", defaultValue = "320", description = "2 MiB blocks published for the end-to-end " +
        "read; all but the last ~30 end up on SSD only (${DEFAULT-VALUE}).")
    private int e2eBlocks;

    @Option(names = "--fio-fixedbufs-anchor", negatable = true, defaultValue = "true", fallbackValue = "true",
        description = "Also run fio with --fixedbufs as a second anchor (${DEFAULT-VALUE}).")
    private boolean fixedBufsAnchor;

    @Option(names = "--e2e-passes", defaultValue = "1", description = "Reads of the whole SSD-resident chain per " +
        "end-to-end measurement; more passes, longer samples on a noisy box (${DEFAULT-VALUE}).")
    private int e2ePasses;

    @Option(names = "--regions-parent", defaultValue = "/dev/shm", description = "Directory under which the " +
        "end-to-end Managers keep their files, so the engine data regions live on its filesystem (${DEFAULT-VALUE}).")
    private File regionsParent;

    @Option(names = "--json", description = "Also write the results as JSON to this file.")
    private File jsonFile;

    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    /** Rows as printed, by anchor ("fio", "fioFixedbufs") then case name, for --json. */
    private final Map<String, Map<String, Object>> results = new LinkedHashMap<>();

    public Integer call() throws Exception
    {
        final PrintWriter out = spec.commandLine().getOut();
        Files.createDirectories(dir.toPath());
        ensureFio(out);
        final Path file = dir.toPath().resolve("orbitkv-bench-ssd.dat").toAbsolutePath();
        out.printf(Locale.ROOT, "bench ssd: dir %s, file %d MiB, queue depth %d, %d rounds, random reads %d s%n",
            dir, fileBytes >> 20, queueDepth, rounds, randomSeconds);
        out.flush();

        final double[][] fio = new double[3][rounds];
        final double[][] fioFixed = new double[3][rounds];
        final double[][] ours = new double[3][rounds];
        final double[] e2e = new double[rounds];
        final double[] e2eStaged = new double[rounds];
        String ourDescription = "";

        final long pid = ProcessHandle.current().pid();
        final File managerDir = new File(regionsParent, "orbitkv-bench-ssd-" + pid);
        final File stagedManagerDir = new File(regionsParent, "orbitkv-bench-ssd-staged-" + pid);
        final File e2eSsdDir = new File(dir, "e2e");
        final File stagedSsdDir = new File(dir, "e2e-staged");
        try (Manager manager = Manager.launch(e2eContext(managerDir, e2eSsdDir)
                .ssdDirectReads(Configuration.SsdDirectReads.ON));
            EngineClient client = e2eClient(managerDir);
            Manager stagedManager = Manager.launch(e2eContext(stagedManagerDir, stagedSsdDir)
                .ssdDirectReads(Configuration.SsdDirectReads.OFF));
            EngineClient stagedClient = e2eClient(stagedManagerDir))
        {
            final E2e endToEnd = new E2e(manager, client, e2eBlocks);
            final E2e stagedEndToEnd = new E2e(stagedManager, stagedClient, e2eBlocks);
            out.printf(Locale.ROOT, "  e2e: %d of %d blocks SSD-resident only; Manager ssd %s; data regions under %s%n",
                endToEnd.ssdOnly, e2eBlocks, manager.ssdDescription(), regionsParent);
            out.flush();

            for (int round = 0; round < rounds; round++)
            {
                fio[0][round] = fio(file, "write", BIG_BLOCK, false, false).path("write").path("bw_bytes").asDouble();
                try (SsdPathDriver path = new SsdPathDriver(file, queueDepth, BIG_BLOCK))
                {
                    ourDescription = path.description();
                    ours[0][round] = path.sequential(true, fileBytes);
                }
                if (fixedBufsAnchor)
                {
                    fioFixed[0][round] =
                        fio(file, "write", BIG_BLOCK, false, true).path("write").path("bw_bytes").asDouble();
                }
                fio[1][round] = fio(file, "read", BIG_BLOCK, false, false).path("read").path("bw_bytes").asDouble();
                try (SsdPathDriver path = new SsdPathDriver(file, queueDepth, BIG_BLOCK))
                {
                    ours[1][round] = path.sequential(false, fileBytes);
                }
                if (fixedBufsAnchor)
                {
                    fioFixed[1][round] =
                        fio(file, "read", BIG_BLOCK, false, true).path("read").path("bw_bytes").asDouble();
                }
                fio[2][round] = fio(file, "randread", SMALL_BLOCK, true, false).path("read").path("iops").asDouble();
                try (SsdPathDriver path = new SsdPathDriver(file, queueDepth, SMALL_BLOCK))
                {
                    ours[2][round] = path.randomReads(fileBytes, TimeUnit.SECONDS.toNanos(randomSeconds));
                }
                if (fixedBufsAnchor)
                {
                    fioFixed[2][round] =
                        fio(file, "randread", SMALL_BLOCK, true, true).path("read").path("iops").asDouble();
                }
                // The two Managers take turns going first.
                if (0 == round % 2)
                {
                    e2e[round] = endToEnd.readSsdResident(e2ePasses);
                    e2eStaged[round] = stagedEndToEnd.readSsdResident(e2ePasses);
                }
                else
                {
                    e2eStaged[round] = stagedEndToEnd.readSsdResident(e2ePasses);
                    e2e[round] = endToEnd.readSsdResident(e2ePasses);
                }
                if (fixedBufsAnchor)
                {
                    out.printf(Locale.ROOT, "  round %d fio --fixedbufs: seq write %.0f MiB/s, seq read %.0f MiB/s, " +
                        "rand read %.0f IOPS%n", round + 1, fioFixed[0][round] / (1 << 20),
                        fioFixed[1][round] / (1 << 20), fioFixed[2][round]);
                }
                out.printf(Locale.ROOT,
                    "  round %d: seq write %.0f / %.0f MiB/s, seq read %.0f / %.0f MiB/s, rand read %.0f / %.0f IOPS, " +
                    "e2e read %.0f MiB/s (fio / ours), e2e read through staging %.0f MiB/s (direct reads %d)%n",
                    round + 1, fio[0][round] / (1 << 20), ours[0][round] / (1 << 20), fio[1][round] / (1 << 20),
                    ours[1][round] / (1 << 20), fio[2][round], ours[2][round], e2e[round] / (1 << 20),
                    e2eStaged[round] / (1 << 20), manager.counter(StoreCounter.SSD_DIRECT_READS));
                out.flush();
            }
            endToEnd.verify();
            stagedEndToEnd.verify();
            if (0 != stagedManager.counter(StoreCounter.SSD_DIRECT_READS))
            {
                throw new IllegalStateException("the Manager with --ssd-direct-reads=off read into the region");
            }
        }
        finally
        {
            Files.deleteIfExists(file);
            org.agrona.IoUtil.delete(managerDir, true);
            org.agrona.IoUtil.delete(e2eSsdDir, true);
            org.agrona.IoUtil.delete(stagedManagerDir, true);
            org.agrona.IoUtil.delete(stagedSsdDir, true);
        }

        out.printf(Locale.ROOT, "%nours: %s; fio: %s%n", ourDescription,
            "fio --ioengine=io_uring --direct=1 --bs=<bs> --iodepth=" + queueDepth);
        out.println("| case | fio (median) | OrbitKV (median) | ratio | goal |");
        out.println("|---|---|---|---|---|");
        row(out, "fio", "2 MiB sequential write", median(fio[0]) / (1 << 20), median(ours[0]) / (1 << 20), "MiB/s",
            ">= 0.9x");
        row(out, "fio", "2 MiB sequential read", median(fio[1]) / (1 << 20), median(ours[1]) / (1 << 20), "MiB/s",
            ">= 0.9x");
        row(out, "fio", "4 KiB random read qd " + queueDepth, median(fio[2]), median(ours[2]), "IOPS", ">= 0.9x");
        row(out, "fio", "e2e Read of SSD-resident 2 MiB blocks (vs fio seq read)", median(fio[1]) / (1 << 20),
            median(e2e) / (1 << 20), "MiB/s", "report");
        row(out, "fio", "e2e Read of SSD-resident 2 MiB blocks through staging (vs fio seq read)",
            median(fio[1]) / (1 << 20), median(e2eStaged) / (1 << 20), "MiB/s", "report");
        if (fixedBufsAnchor)
        {
            out.println();
            out.println("Second anchor: fio with --fixedbufs (registered buffers, as our staging is):");
            out.println("| case | fio --fixedbufs (median) | OrbitKV (median) | ratio |");
            out.println("|---|---|---|---|");
            row(out, "fioFixedbufs", "2 MiB sequential write", median(fioFixed[0]) / (1 << 20),
                median(ours[0]) / (1 << 20), "MiB/s", "");
            row(out, "fioFixedbufs", "2 MiB sequential read", median(fioFixed[1]) / (1 << 20),
                median(ours[1]) / (1 << 20), "MiB/s", "");
            row(out, "fioFixedbufs", "4 KiB random read qd " + queueDepth, median(fioFixed[2]), median(ours[2]),
                "IOPS", "");
            row(out, "fioFixedbufs", "e2e Read of SSD-resident 2 MiB blocks", median(fioFixed[1]) / (1 << 20),
                median(e2e) / (1 << 20), "MiB/s", "");
            row(out, "fioFixedbufs", "e2e Read of SSD-resident 2 MiB blocks through staging",
                median(fioFixed[1]) / (1 << 20), median(e2eStaged) / (1 << 20), "MiB/s", "");
        }
        out.flush();
        if (null != jsonFile)
        {
            final Map<String, Object> document = new LinkedHashMap<>();
            document.put("fileBytes", fileBytes);
            document.put("queueDepth", queueDepth);
            document.put("rounds", rounds);
            document.put("ours", ourDescription);
            document.putAll(results);
            JSON.writerWithDefaultPrettyPrinter().writeValue(jsonFile, document);
            out.println("results written to " + jsonFile);
        }
        return 0;
    }

    private ManagerContext e2eContext(final File managerDir, final File ssdDir)
    {
        return new ManagerContext()
            .dir(managerDir)
            .poolBytes(64L << 20)
            .maxBlockBytes(BIG_BLOCK)
            .ssdDir(ssdDir)
            .ssdBytes(((long)e2eBlocks * BIG_BLOCK) + (64L << 20))
            .ssdStagingBytes(256L << 20)
            .ssdQueueDepth(queueDepth)
            .ssdBackend(Configuration.SsdBackendChoice.IO_URING);
    }

    private static EngineClient e2eClient(final File managerDir)
    {
        return EngineClient.connect(new EngineClient.Context()
            .dir(managerDir.getPath())
            .clientName("bench-ssd")
            .dataRegionBytes(32L * BIG_BLOCK));
    }

    private void row(final PrintWriter out, final String anchor, final String name, final double fio, final double ours,
        final String unit, final String goal)
    {
        final Map<String, Object> figures = new LinkedHashMap<>();
        figures.put("anchor", fio);
        figures.put("ours", ours);
        figures.put("unit", unit);
        figures.put("ratio", ours / fio);
        results.computeIfAbsent(anchor, (ignored) -> new LinkedHashMap<>()).put(name, figures);
        if (goal.isEmpty())
        {
            out.printf(Locale.ROOT, "| %s | %.0f %s | %.0f %s | %.2fx |%n", name, fio, unit, ours, unit, ours / fio);
        }
        else
        {
            out.printf(Locale.ROOT, "| %s | %.0f %s | %.0f %s | %.2fx | %s |%n",
                name, fio, unit, ours, unit, ours / fio, goal);
        }
    }

    private static double median(final double[] values)
    {
        final double[] sorted = values.clone();
        Arrays.sort(sorted);
        final int n = sorted.length;
        return 0 == n % 2 ? (sorted[n / 2 - 1] + sorted[n / 2]) / 2 : sorted[n / 2];
    }

    private JsonNode fio(
        final Path file, final String rw, final int blockBytes, final boolean timed, final boolean fixedBufs)
        throws IOException, InterruptedException
    {
        final List<String> command = new ArrayList<>(List.of("fio", "--name=orbitkv", "--filename=" + file,
            "--ioengine=io_uring", "--direct=1", "--rw=" + rw, "--bs=" + blockBytes, "--iodepth=" + queueDepth,
            "--size=" + fileBytes, "--output-format=json"));
        if (fixedBufs)
        {
            command.add("--fixedbufs");
        }
        if (timed)
        {
            command.add("--time_based");
            command.add("--runtime=" + randomSeconds);
        }
        final Process process = new ProcessBuilder(command).redirectErrorStream(false).start();
        final byte[] stdout = process.getInputStream().readAllBytes();
        final String stderr = new String(process.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        if (0 != process.waitFor())
        {
            throw new IllegalStateException("fio failed: " + String.join(" ", command) + "\n" + stderr);
        }
        final String text = new String(stdout, StandardCharsets.UTF_8);
        return JSON.readTree(text.substring(text.indexOf('{'))).path("jobs").get(0);
    }

    private static void ensureFio(final PrintWriter out) throws IOException, InterruptedException
    {
        if (0 == new ProcessBuilder("sh", "-c", "command -v fio").start().waitFor())
        {
            return;
        }
        out.println("bench ssd: fio not found, installing it from Debian (apt-get install -y fio)");
        out.flush();
        final Process install = new ProcessBuilder("sh", "-c",
            "apt-get install -y fio || (apt-get update && apt-get install -y fio)").inheritIO().start();
        if (0 != install.waitFor())
        {
            throw new IllegalStateException("cannot install fio: run apt-get install -y fio as root");
        }
    }

    /**
     * A chain of 2 MiB blocks published through a pool too small for it, so the oldest live on SSD only.
     */
    private static final class E2e
    {
        private static final int WINDOW = 32;

        private final Manager manager;
        private final EngineClient client;
        private final ClientChainRunner runner;
        private final BlockChain chain;
        private final KeyBatch window = new KeyBatch(WINDOW).namespace("bench-ssd".getBytes(StandardCharsets.UTF_8));
        private final OperationResult result = new OperationResult(WINDOW);
        private final int ssdOnly;

        E2e(final Manager manager, final EngineClient client, final int blocks)
        {
            this.manager = manager;
            this.client = client;
            this.chain = new BlockChain(7, blocks, BIG_BLOCK);
            this.runner = new ClientChainRunner(client, chain, "bench-ssd");
            runner.publish();
            final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (manager.counter(StoreCounter.SSD_QUEUE_DEPTH) != 0 && System.nanoTime() < deadlineNs)
            {
                Thread.onSpinWait();
            }
            runner.lookup(false);
            int count = 0;
            while (count < blocks && KeyStatus.SSD == runner.keyStatus(count))
            {
                count++;
            }
            ssdOnly = count;
            if (ssdOnly < WINDOW)
            {
                throw new IllegalStateException("too few SSD-resident blocks (" + ssdOnly + "): raise --e2e-blocks");
            }
        }

        double readSsdResident(final int passes)
        {
            final long startNs = System.nanoTime();
            long bytes = 0;
            for (int pass = 0; pass < passes; pass++)
            {
                bytes += readPass();
            }
            return bytes * 1e9 / (System.nanoTime() - startNs);
        }

        private long readPass()
        {
            long bytes = 0;
            for (int next = 0; next + WINDOW <= ssdOnly; next += WINDOW)
            {
                window.clear();
                for (int i = 0; i < WINDOW; i++)
                {
                    window.addKey(chain.hashes(), chain.hashOffset(next + i), BlockChain.HASH_LENGTH,
                        (long)i * BIG_BLOCK, BIG_BLOCK);
                }
                client.read(window, 0, result);
                if (result.value() != WINDOW || KeyStatus.SSD != result.status(0))
                {
                    throw new IllegalStateException("e2e read restored " + result.value() + " of " + WINDOW +
                        " (" + result.status(0) + ")");
                }
                bytes += (long)WINDOW * BIG_BLOCK;
            }
            return bytes;
        }

        void verify()
        {
            final ClientChainRunner.ReadSummary summary = runner.read();
            if (summary.mismatches() != 0 || summary.restored() != chain.blockCount())
            {
                throw new IllegalStateException("e2e verification failed: " + summary + ", admission skips " +
                    manager.counter(StoreCounter.SSD_ADMISSION_SKIPS));
            }
        }
    }
}
