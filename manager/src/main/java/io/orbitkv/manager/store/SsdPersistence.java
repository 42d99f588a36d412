package io.orbitkv.manager.store;

import io.orbitkv.ffm.MappedRegion;
import io.orbitkv.index.BlockStore;
import io.orbitkv.index.NamespaceTable;
import io.orbitkv.index.SlabAllocator;
import io.orbitkv.manager.Configuration;
import io.orbitkv.manager.ManagerContext;
import io.orbitkv.manager.status.SystemCounters;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.agrona.ErrorHandler;

/**
 * What makes the SSD tier outlive its Manager: the manifest beside the tier's file, read at start to put the
 * recorded residences back ({@code --ssd-recover}), and appended while the Manager runs ({@code --ssd-manifest-sync}).
 *
 * <p>Start-up, on the launching thread before the agent starts: {@link #open} reads and replays the manifest before
 * the SSD file is opened, because only a manifest of this Manager's layout keeps the file's contents (otherwise the
 * file is truncated as before, and a refused manifest is said so with its reason). {@link #newTier} builds the tier,
 * restores the replayed residences into its index (reported to the catalog's inventory and the KV-event stream like
 * any seal, so the new incarnation announces them through its ordinary snapshot), and starts the manifest writer.
 * The blocks' bytes are not read at start: each restored residence is verified against its checksum on its first
 * read.
 */
public final class SsdPersistence implements AutoCloseable
{
    private final ManagerContext ctx;
    private final Path ssdFile;
    private final Path manifest;
    private final SystemCounters counters;
    private final PrintStream log;
    private final SsdManifest.Layout layout;
    private final boolean manifestOn;
    private SsdManifest.Replay replay;
    private SsdManifest.ReadResult read;
    private long startNs;
    private long readNs;
    private SsdManifestWriter writer;

    private SsdPersistence(
        final ManagerContext ctx, final Path ssdFile, final SystemCounters counters, final PrintStream log)
    {
        this.ctx = ctx;
        this.ssdFile = ssdFile;
        this.manifest = SsdManifest.manifestOf(ssdFile);
        this.counters = counters;
        this.log = log;
        this.layout = layoutOf(ctx);
        this.manifestOn = Configuration.SsdManifestSync.OFF != ctx.ssdManifestSync();
    }

    /**
     * @param ctx a concluded context with an SSD tier.
     * @return the layout its SSD file has: what a manifest must have been written for.
     */
    public static SsdManifest.Layout layoutOf(final ManagerContext ctx)
    {
        return new SsdManifest.Layout(
            ctx.ssdBytes(), Configuration.SSD_BLOCK_BYTES, SlabAllocator.PAGE_BYTES, ctx.maxBlockBytes());
    }

    /**
     * Read the manifest, when there is one to read, and decide whether the SSD file keeps its contents.
     *
     * @param ctx      concluded context.
     * @param ssdFile  the tier's file.
     * @param counters recovery counters.
     * @param log      what recovery found, one line.
     * @return the tier's persistence, before the file is opened.
     */
    public static SsdPersistence open(
        final ManagerContext ctx, final Path ssdFile, final SystemCounters counters, final PrintStream log)
    {
        final SsdPersistence persistence = new SsdPersistence(ctx, ssdFile, counters, log);
        persistence.readManifest();
        return persistence;
    }

    private void readManifest()
    {
        final org.agrona.concurrent.status.AtomicCounter stateCounter = counters.get(StoreCounter.SSD_RECOVERY_STATE);
        if (!manifestOn)
        {
            stateCounter.setRelease(StoreCounter.SSD_RECOVERY_OFF);
            deleteQuietly(manifest);
            deleteQuietly(SsdManifest.checkpointOf(manifest));
            return;
        }
        if (!ctx.ssdRecover())
        {
            stateCounter.setRelease(StoreCounter.SSD_RECOVERY_OFF);
            log.println("orbitkv ssd: --ssd-recover off: the SSD tier starts empty");
            return;
        }
        stateCounter.setRelease(StoreCounter.SSD_RECOVERY_READING);
        startNs = System.nanoTime();
        long manifestBytes = 0;
        try
        {
            manifestBytes = Files.exists(manifest) ? Files.size(manifest) : 0;
        }
        catch (final IOException ex)
        {
            // Read below reports it.
        }
        final SsdManifest.Replay candidate = new SsdManifest.Replay(Math.min(
            SsdManifest.Replay.expectedFor(manifestBytes), io.orbitkv.index.BlockIndex.capacityFor(ctx.indexBudgetBytes())),
            ctx.ssdBytes());
        SsdManifest.ReadResult result;
        try
        {
            result = SsdManifest.read(manifest, layout, candidate);
        }
        catch (final IOException ex)
        {
            result = new SsdManifest.ReadResult(SsdManifest.READ_REFUSED, "unreadable: " + ex, 0, 0, 0, 0, 0);
        }
        if (SsdManifest.READ_OK == result.status())
        {
            final String fileProblem = checkSsdFile();
            if (null != fileProblem)
            {
                result = new SsdManifest.ReadResult(SsdManifest.READ_REFUSED, fileProblem, result.records(),
                    result.bytes(), 0, 0, 0);
            }
        }
        counters.get(StoreCounter.SSD_RECOVERY_RECORDS).setRelease(result.records());
        counters.get(StoreCounter.SSD_RECOVERY_BYTES).setRelease(result.bytes());
        counters.get(StoreCounter.SSD_RECOVERY_TORN).setRelease(result.tornRecords());
        readNs = System.nanoTime() - startNs;
        if (SsdManifest.READ_MISSING == result.status())
        {
            stateCounter.setRelease(StoreCounter.SSD_RECOVERY_NO_MANIFEST);
            log.println("orbitkv ssd: no manifest at " + manifest + "; the SSD tier starts empty");
        }
        else if (SsdManifest.READ_REFUSED == result.status())
        {
            stateCounter.setRelease(StoreCounter.SSD_RECOVERY_REFUSED);
            log.println("orbitkv ssd: manifest " + manifest + " refused: " + result.reason() +
                "; the SSD tier starts empty and a new manifest replaces it");
        }
        else
        {
            replay = candidate;
        }
        read = result;
    }

    private String checkSsdFile()
    {
        try
        {
            if (!Files.exists(ssdFile))
            {
                return "its SSD file " + ssdFile + " is missing";
            }
            final long size = Files.size(ssdFile);
            return size == ctx.ssdBytes() ? null :
                "its SSD file " + ssdFile + " has " + size + " bytes, not " + ctx.ssdBytes();
        }
        catch (final IOException ex)
        {
            return "its SSD file " + ssdFile + " cannot be examined: " + ex;
        }
    }

    /**
     * @return whether the SSD file is opened without truncation: a manifest of this layout describes it.
     */
    public boolean keepsFile()
    {
        return null != replay;
    }

    /**
     * @return whether the SSD file stays at a stop (a manifest describes it).
     */
    public boolean keepsFileAtStop()
    {
        return manifestOn;
    }

    /**
     * Build the tier, restore what the manifest recorded and start appending the manifest.
     *
     * @return the tier.
     */
    public SsdTier newTier(
        final SsdBackend backend,
        final MappedRegion stagingRegion,
        final MemorySegment pool,
        final BlockStore.ResidencyObserver residencyObserver,
        final NamespaceTable namespaces,
        final ErrorHandler errorHandler)
    {
        if (!manifestOn)
        {
            return new SsdTier(ctx, ssdFile, backend, stagingRegion, pool, counters, residencyObserver, errorHandler, log);
        }
        writer = new SsdManifestWriter(
            manifest, ssdFile, layout, ctx.ssdManifestSync(), namespaces.maxNamespaces(), counters, log);
        final SsdManifestLog manifestLog = new SsdManifestLog(
            writer, namespaces, residencyObserver, ctx.ssdManifestCheckpointBytes(), counters);
        final SsdTier tier = new SsdTier(ctx, ssdFile, backend, stagingRegion, pool, counters, residencyObserver,
            manifestLog, errorHandler, log);
        try
        {
            if (null != replay)
            {
                final int[] fileNamespaceOf = new int[namespaces.maxNamespaces()];
                Arrays.fill(fileNamespaceOf, -1);
                final long restoreStartNs = System.nanoTime();
                final long outcome = tier.restore(replay, namespaces, fileNamespaceOf);
                final long restored = outcome & 0xFFFF_FFFFL;
                final long dropped = (outcome >>> 32) + replay.invalidOffsets();
                // Reading plus restoring; building the tier in between (staging, the ring) is start-up as before.
                final long elapsedUs = (readNs + System.nanoTime() - restoreStartNs) / 1_000;
                final long elapsedMs = elapsedUs / 1_000;
                counters.get(StoreCounter.SSD_RECOVERY_RESIDENCES).setRelease(restored);
                counters.get(StoreCounter.SSD_RECOVERY_BLOCK_BYTES).setRelease(tier.payloadBytes());
                counters.get(StoreCounter.SSD_RECOVERY_DROPPED).setRelease(dropped);
                counters.get(StoreCounter.SSD_RECOVERY_US).setRelease(elapsedUs);
                counters.get(StoreCounter.SSD_RECOVERY_REPLAY_US).setRelease(readNs / 1_000);
                counters.get(StoreCounter.SSD_RECOVERY_ORDER_US).setRelease(tier.restoreOrderNs() / 1_000);
                counters.get(StoreCounter.SSD_RECOVERY_INDEX_US).setRelease(tier.restoreIndexNs() / 1_000);
                counters.get(StoreCounter.SSD_RECOVERY_STATE).setRelease(StoreCounter.SSD_RECOVERY_DONE);
                log.println("orbitkv ssd: recovered " + restored + " residences (" + tier.payloadBytes() +
                    " bytes, verified on first read) from " + manifest + " (" + read.records() + " records, " +
                    read.bytes() + " bytes) in " + elapsedMs + " ms (replay " + readNs / 1_000_000 + ", order " +
                    tier.restoreOrderNs() / 1_000_000 + ", index " + tier.restoreIndexNs() / 1_000_000 + " ms); dropped " +
                    dropped +
                    (read.tornBytes() > 0 ? "; torn tail of " + read.tornBytes() + " bytes ignored" : ""));
                writer.openAppend(read.validEnd(), fileNamespaceOf, replay.namespaceCount());
                replay = null;
            }
            else
            {
                writer.openFresh();
            }
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot open the SSD manifest " + manifest, ex);
        }
        writer.start();
        manifestLog.startRecording();
        return tier;
    }

    /**
     * Write and sync what the agent queued, then stop the writer. After the agent stopped.
     */
    public void close()
    {
        if (null != writer)
        {
            writer.close();
            writer = null;
        }
    }

    private static void deleteQuietly(final Path path)
    {
        try
        {
            Files.deleteIfExists(path);
        }
        catch (final IOException ex)
        {
            // A stale manifest of a truncated file is refused by its checksums anyway.
        }
    }
}
