package io.orbitkv.bench;

import io.orbitkv.client.EngineClient;
import io.orbitkv.index.BlockIndex;
import io.orbitkv.manager.Configuration;
import io.orbitkv.manager.Manager;
import io.orbitkv.manager.ManagerContext;
import io.orbitkv.manager.cli.BlockChain;
import io.orbitkv.manager.cli.ClientChainRunner;
import io.orbitkv.manager.cli.OptionConverters;
import io.orbitkv.manager.store.SsdManifest;
import io.orbitkv.manager.store.StoreCounter;
import java.io.File;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.agrona.concurrent.UnsafeBuffer;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code orbitkv bench ssd-persist --dir PATH}: what the SSD manifest costs and how fast a restart reads it.
 * <ol>
 *   <li>SSD write throughput with on-publish admission, per {@code --ssd-manifest-sync} policy, against the same
 *   Manager without a manifest ({@code off}) in the same round (goal >= 0.9x). Policies take turns going first;
 *   odd rounds run them in reverse order.</li>
 *   <li>Recovery: a manifest of N residences is written, then a Manager starts on it; the time it spends reading the
 *   manifest and rebuilding the index (counter 345) against a raw sequential read of the same file just before
 *   (goal >= 0.5x of that read's speed), and its time to ready against a start with {@code --ssd-recover off}.</li>
 * </ol>
 */
@Command(name = "ssd-persist", mixinStandardHelpOptions = true,
    description = "SSD manifest cost per sync policy and recovery time vs manifest size, with same-run anchors.")
public final class BenchSsdPersistCommand implements Callable<Integer>
{
    private static final int MAX_BLOCK = 4 << 20;
    private static final int RECOVERY_BLOCK = 4096;

    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    @Option(names = "--dir", required = true, description = "Directory on the disk to measure (not tmpfs).")
    File dir;

    @Option(names = "--rounds", defaultValue = "3",
        description = "Interleaved rounds (odd ones in reverse order); medians (${DEFAULT-VALUE}).")
    int rounds;

    @Option(names = "--blocks", defaultValue = "4000", description = "Blocks published per write run (${DEFAULT-VALUE}).")
    int blocks;

    @Option(names = "--block-bytes", defaultValue = "64k", converter = OptionConverters.Size.class,
        description = "Block size of the write runs (${DEFAULT-VALUE}).")
    long blockBytes;

    @Option(names = "--policies", defaultValue = "none,batch,always", split = ",",
        description = "Sync policies measured against off (${DEFAULT-VALUE}).")
    List<String> policies;

    @Option(names = "--recovery-sizes", defaultValue = "10000,100000,1000000", split = ",",
        description = "Residences in the recovery manifests (${DEFAULT-VALUE}).")
    List<Integer> recoverySizes;

    @Option(names = "--regions-parent", defaultValue = "/dev/shm", description = "Parent of the Managers' directories.")
    File regionsParent;

    @Option(names = "--skip-write", description = "Only the recovery part.")
    boolean skipWrite;

    @Option(names = "--skip-recovery", description = "Only the write part.")
    boolean skipRecovery;

    public Integer call() throws Exception
    {
        final PrintWriter out = spec.commandLine().getOut();
        out.printf(Locale.ROOT, "bench ssd-persist: dir %s, %d rounds, %d blocks of %d bytes, policies %s, recovery %s%n",
            dir, rounds, blocks, blockBytes, policies, recoverySizes);
        out.flush();
        if (!skipWrite)
        {
            writeThroughput(out);
        }
        if (!skipRecovery)
        {
            recovery(out);
        }
        return 0;
    }

    private void writeThroughput(final PrintWriter out) throws Exception
    {
        final String[] all = new String[policies.size() + 1];
        all[0] = "off";
        for (int i = 0; i < policies.size(); i++)
        {
            all[i + 1] = policies.get(i);
        }
        final double[][] figures = new double[all.length][rounds];
        final long[][] syncs = new long[all.length][rounds];
        // Warm-up, discarded: the first Manager of the process runs its code cold.
        for (final String policy : all)
        {
            writeRun(policy, -1, new long[1]);
        }
        for (int round = 0; round < rounds; round++)
        {
            // Even rounds run the policies in a rotated order, odd rounds in the reverse of it: every policy goes
            // early and late, and each pair of rounds runs every policy once before and once after each other one.
            final StringBuilder order = new StringBuilder();
            for (int k = 0; k < all.length; k++)
            {
                final int p = 0 == round % 2 ? (k + round / 2) % all.length : (all.length - 1 - k + round / 2) % all.length;
                order.append(0 == k ? "" : ",").append(all[p]);
                final long[] syncCount = new long[1];
                figures[p][round] = writeRun(all[p], round, syncCount);
                syncs[p][round] = syncCount[0];
            }
            final StringBuilder line = new StringBuilder("  round " + (round + 1) + " (order " + order + "):");
            for (int p = 0; p < all.length; p++)
            {
                line.append(String.format(Locale.ROOT, " %s %.0f MiB/s (%d syncs)", all[p], figures[p][round] / (1 << 20),
                    syncs[p][round]));
            }
            out.println(line);
            out.flush();
        }
        out.println();
        out.printf(Locale.ROOT, "SSD write throughput, on-publish admission, %d x %d-byte blocks, medians of %d rounds:%n",
            blocks, blockBytes, rounds);
        out.println("| --ssd-manifest-sync | throughput | ratio to off (same-run medians) | goal |");
        out.println("|---|---|---|---|");
        final double off = median(figures[0]);
        for (int p = 0; p < all.length; p++)
        {
            out.printf(Locale.ROOT, "| %s | %.0f MiB/s | %.2fx | %s |%n", all[p], median(figures[p]) / (1 << 20),
                median(figures[p]) / off, 0 == p ? "anchor" : ">= 0.9x");
        }
        out.flush();
    }

    private double writeRun(final String policy, final int round, final long[] syncCount) throws Exception
    {
        final long pid = ProcessHandle.current().pid();
        final File managerDir = new File(regionsParent, "orbitkv-bench-persist-" + pid + "-" + policy);
        final File ssdDir = new File(dir, "write-" + policy);
        final long ssdBytes = align((long)blocks * blockBytes + (64L << 20), 2L << 20);
        try (Manager manager = Manager.launch(new ManagerContext()
                .dir(managerDir)
                .poolBytes(256L << 20)
                .maxBlockBytes(MAX_BLOCK)
                .ssdDir(ssdDir)
                .ssdBytes(ssdBytes)
                .ssdStagingBytes(256L << 20)
                .ssdAdmission(Configuration.SsdAdmission.ON_PUBLISH)
                .ssdRecover(false)
                .ssdManifestSync(Configuration.parseSsdManifestSync("--ssd-manifest-sync", policy)));
            EngineClient client = EngineClient.connect(new EngineClient.Context()
                .dir(managerDir.getPath())
                .clientName("bench-ssd-persist")
                .dataRegionBytes(64L << 20)))
        {
            final BlockChain chain = new BlockChain(1000 + round, blocks, (int)blockBytes);
            final ClientChainRunner runner = new ClientChainRunner(client, chain, "bench-ssd-persist");
            final long startNs = System.nanoTime();
            runner.publish();
            final long deadlineNs = startNs + TimeUnit.SECONDS.toNanos(120);
            while (manager.counter(StoreCounter.SSD_QUEUE_DEPTH) != 0 && System.nanoTime() - deadlineNs < 0)
            {
                LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(100));
            }
            final long elapsedNs = System.nanoTime() - startNs;
            final long written = manager.counter(StoreCounter.SSD_WRITE_BYTES);
            syncCount[0] = manager.counter(StoreCounter.SSD_MANIFEST_SYNCS);
            return written * 1e9 / elapsedNs;
        }
        finally
        {
            org.agrona.IoUtil.delete(managerDir, true);
            org.agrona.IoUtil.delete(ssdDir, true);
        }
    }

    private void recovery(final PrintWriter out) throws Exception
    {
        out.println();
        out.println("Recovery (warm page cache; medians of " + rounds + " starts per size):");
        out.println("| residences | manifest | raw sequential read | recovery (read + index) | ratio (speed) | goal | " +
            "time to ready, recover on / off | replay / order / index |");
        out.println("|---|---|---|---|---|---|---|---|");
        for (final int size : recoverySizes)
        {
            final long pid = ProcessHandle.current().pid();
            final File managerDir = new File(regionsParent, "orbitkv-bench-recover-" + pid);
            final File ssdDir = new File(dir, "recover-" + size);
            final long ssdBytes = align((long)size * RECOVERY_BLOCK + (2L << 20), 2L << 20);
            long indexBudget = 64L << 20;
            while (BlockIndex.capacityFor(indexBudget) < size + size / 8)
            {
                indexBudget *= 2;
            }
            final long budget = indexBudget;
            final java.util.function.Supplier<ManagerContext> context = () -> new ManagerContext()
                .dir(managerDir)
                .poolBytes(64L << 20)
                .maxBlockBytes(MAX_BLOCK)
                .indexBudgetBytes(budget)
                .ssdDir(ssdDir)
                .ssdBytes(ssdBytes)
                // The manifest's blocks are never written (a sparse file): a verification scan would drop them.
                .ssdVerifyRestored(false);
            try
            {
                final Path manifest = writeManifest(ssdDir, ssdBytes, size);
                final double[] raw = new double[rounds];
                final double[] recover = new double[rounds];
                final double[] readyOn = new double[rounds];
                final double[] replayMs = new double[rounds];
                final double[] orderMs = new double[rounds];
                final double[] indexMs = new double[rounds];
                long manifestBytes = 0;
                long restored = 0;
                rawRead(manifest);
                for (int round = 0; round < rounds; round++)
                {
                    final long rawStartNs = System.nanoTime();
                    manifestBytes = rawRead(manifest);
                    raw[round] = (System.nanoTime() - rawStartNs) / 1e6;
                    final long launchNs = System.nanoTime();
                    try (Manager manager = Manager.launch(context.get()))
                    {
                        readyOn[round] = (System.nanoTime() - launchNs) / 1e6;
                        recover[round] = manager.counter(StoreCounter.SSD_RECOVERY_US) / 1e3;
                        replayMs[round] = manager.counter(StoreCounter.SSD_RECOVERY_REPLAY_US) / 1e3;
                        orderMs[round] = manager.counter(StoreCounter.SSD_RECOVERY_ORDER_US) / 1e3;
                        indexMs[round] = manager.counter(StoreCounter.SSD_RECOVERY_INDEX_US) / 1e3;
                        restored = manager.counter(StoreCounter.SSD_RECOVERY_RESIDENCES);
                    }
                    org.agrona.IoUtil.delete(managerDir, true);
                }
                if (restored != size)
                {
                    throw new IllegalStateException("restored " + restored + " of " + size);
                }
                final long offNs = System.nanoTime();
                try (Manager ignored = Manager.launch(context.get().ssdRecover(false)))
                {
                    final double readyOff = (System.nanoTime() - offNs) / 1e6;
                    final double rawMs = median(raw);
                    final double recoverMs = median(recover);
                    out.printf(Locale.ROOT, "| %d | %.1f MB | %.1f ms (%.0f MB/s) | %.1f ms (%.0f MB/s) | %.2fx |" +
                        " >= 0.5x | %.0f / %.0f ms | %.1f / %.1f / %.1f ms |%n", size, manifestBytes / 1e6, rawMs,
                        manifestBytes / 1e3 / rawMs, recoverMs,
                        manifestBytes / 1e3 / recoverMs, rawMs / recoverMs, median(readyOn),
                        readyOff, median(replayMs), median(orderMs), median(indexMs));
                    out.flush();
                }
            }
            finally
            {
                org.agrona.IoUtil.delete(managerDir, true);
                org.agrona.IoUtil.delete(ssdDir, true);
            }
        }
    }

    private static Path writeManifest(final File ssdDir, final long ssdBytes, final int size) throws IOException
    {
        ssdDir.mkdirs();
        final Path ssdFile = ssdDir.toPath().resolve("orbitkv-default.ssd");
        try (RandomAccessFile file = new RandomAccessFile(ssdFile.toFile(), "rw"))
        {
            file.setLength(ssdBytes);
        }
        final Path manifest = SsdManifest.manifestOf(ssdFile);
        final SsdManifest.Layout layout = new SsdManifest.Layout(
            ssdBytes, Configuration.SSD_BLOCK_BYTES, io.orbitkv.index.SlabAllocator.PAGE_BYTES, MAX_BLOCK);
        final UnsafeBuffer hash = new UnsafeBuffer(new byte[32]);
        try (SsdManifest.Appender appender = new SsdManifest.Appender(manifest, layout))
        {
            appender.namespace(0, "bench-ssd-persist".getBytes(StandardCharsets.UTF_8));
            for (int i = 0; i < size; i++)
            {
                hash.putLong(0, 0x9E3779B97F4A7C15L * (i + 1));
                hash.putLong(8, i);
                appender.resident(0, hash, 0, 32, (long)i * RECOVERY_BLOCK, RECOVERY_BLOCK, i, i + 1);
            }
        }
        return manifest;
    }

    private static long rawRead(final Path file) throws IOException
    {
        final ByteBuffer buffer = ByteBuffer.allocateDirect(4 << 20);
        long total = 0;
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ))
        {
            int read;
            while ((read = channel.read(buffer, total)) > 0)
            {
                total += read;
                buffer.clear();
            }
        }
        return total;
    }

    private static long align(final long value, final long alignment)
    {
        return (value + alignment - 1) / alignment * alignment;
    }

    private static double median(final double[] values)
    {
        final double[] sorted = values.clone();
        Arrays.sort(sorted);
        final int n = sorted.length;
        return 0 == n % 2 ? (sorted[n / 2 - 1] + sorted[n / 2]) / 2 : sorted[n / 2];
    }
}
