package io.orbitkv.bench;

import io.orbitkv.manager.cli.OptionConverters;
import io.orbitkv.manager.status.CounterDescriptor;
import io.orbitkv.manager.store.StoreCounter;
import java.io.File;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.MappedByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import io.orbitkv.client.EngineClient;
import io.orbitkv.client.KeyBatch;
import io.orbitkv.client.OperationResult;
import io.orbitkv.codecs.cnc.CncFileDescriptor;
import io.orbitkv.codecs.engine.KeyStatus;
import io.orbitkv.ffm.HugePageMemory;
import io.orbitkv.ffm.MappedRegion;
import io.orbitkv.manager.status.CncReader;
import io.orbitkv.manager.Configuration;
import io.orbitkv.manager.status.SystemCounterDescriptor;
import org.HdrHistogram.Histogram;
import org.agrona.CloseHelper;
import org.agrona.IoUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;
import org.agrona.concurrent.status.CountersReader;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code orbitkv bench local}: one Manager process and this process as its engine client. Every figure is
 * printed beside an anchor measured in the same run:
 * <ul>
 *   <li>Lookup RTT (1 and 64 resident keys) against a bare shared-memory ring ping-pong between two processes
 *       that use the same ring types and the same idle strategy as the Manager;</li>
 *   <li>Publish and Read throughput of 2 MiB blocks against {@code MemorySegment.copy} of the same bytes;</li>
 *   <li>GC collections in both processes during the measured phases (goal: none).</li>
 * </ul>
 */
@Command(name = "local", mixinStandardHelpOptions = true,
    description = "Engine ring latency and copy throughput against same-run anchors (Manager in a child process).")
public final class BenchLocalCommand implements Callable<Integer>
{
    private static final int SMALL_BLOCK_BYTES = 4096;
    private static final int LOOKUP_KEYS = 64;
    private static final byte[] LOOKUP_NAMESPACE = "bench;lookup".getBytes(StandardCharsets.US_ASCII);
    private static final int BIG_BLOCK_BYTES = 2 * 1024 * 1024;
    private static final long MAX_RTT_NS = RingPinger.MAX_RTT_NS;
    /**
     * Longest the Manager may go without visible progress (its CnC file, ready, more of the pool touched) before the
     * bench gives up: the wait scales with the work, however large the pool, and a stuck Manager still fails.
     */
    private static final long MANAGER_STALL_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(60);
    private static final long MANAGER_POLL_NS = TimeUnit.MILLISECONDS.toNanos(100);

    /** USER_HZ, the unit of /proc/PID/stat CPU times, on every Linux ABI the project builds for. */
    private static final int CLOCK_TICKS_PER_SECOND = 100;

    @Option(names = "--warmup", defaultValue = "20000", description = "Warm-up round trips per latency case (${DEFAULT-VALUE}).")
    private int warmup;

    @Option(names = "--iterations", defaultValue = "100000", description = "Measured round trips per latency case (${DEFAULT-VALUE}).")
    private int iterations;

    @Option(names = "--blocks", defaultValue = "256", description = "2 MiB blocks per throughput round (${DEFAULT-VALUE}).")
    private int blocks;

    @Option(names = "--rounds", defaultValue = "9", description = "Measured throughput rounds; the median is reported (${DEFAULT-VALUE}).")
    private int rounds;

    @Option(names = "--blocks-per-request", defaultValue = "16", description = "2 MiB blocks per Publish/Read request (${DEFAULT-VALUE}).")
    private int blocksPerRequest;

    @Option(names = "--idle-strategy", defaultValue = Configuration.IDLE_STRATEGY_DEFAULT,
        description = "Idle strategy of the Manager, the anchor responder and this client (${DEFAULT-VALUE}).")
    private String idleStrategyName;

    @Option(names = "--idle-samples", defaultValue = "5",
        description = "1-key lookups timed each after an idle pause, the first request after idle (${DEFAULT-VALUE}; 0 skips).")
    private int idleSamples;

    @Option(names = "--idle-pause", defaultValue = "2s", converter = OptionConverters.Duration.class,
        description = "Idle pause before each of those lookups, e.g. 60s for an idle minute (default: 2s).")
    private long idlePauseNs;

    @Option(names = "--manager-idle-sleep", negatable = true, defaultValue = "true", fallbackValue = "true",
        description = "Let the Manager's idle agent sleep until the doorbell (--no-manager-idle-sleep: park 100 us at a " +
        "time, the earlier behaviour) (default: ${DEFAULT-VALUE}).")
    private boolean managerIdleSleep;

    @Option(names = "--work-dir", description = "Where the Manager and the anchor put their files (default: a new dir under /dev/shm).")
    private Path workDir;

    @Option(names = "--json", description = "Also write the results as JSON to this file.")
    private File jsonFile;

    @Option(names = "--pool-pretouch", defaultValue = "background",
        description = "Pre-touch mode of the Manager's pool: background, blocking or off (${DEFAULT-VALUE}). The bench " +
        "measures once the touch is done, whatever the mode.")
    private String poolPretouch;

    private final LocalBenchResults results = new LocalBenchResults();

    public Integer call() throws Exception
    {
        final Path dir = null != workDir ? workDir : Files.createTempDirectory(Path.of("/dev/shm"), "orbitkv-bench-");
        Files.createDirectories(dir);
        System.out.printf("orbitkv bench local: work dir %s, idle strategy %s, %d cores%n",
            dir, idleStrategyName, Runtime.getRuntime().availableProcessors());
        results.put("idleStrategy", idleStrategyName);
        results.put("managerIdleSleep", managerIdleSleep);
        results.put("cores", Runtime.getRuntime().availableProcessors());

        final Histogram[] bareRing = measureBareRing(dir);
        measureManager(dir, bareRing);

        if (null != jsonFile)
        {
            results.writeJson(jsonFile);
            System.out.println("results written to " + jsonFile);
        }
        IoUtil.delete(dir.toFile(), true);
        return 0;
    }

    /**
     * @return the bare ring's round trips with the smallest frame, and with frames the size of a 64-key Lookup out
     * and its answer back.
     */
    private Histogram[] measureBareRing(final Path dir) throws Exception
    {
        final File ringFile = dir.resolve("anchor-ring.dat").toFile();
        final File log = dir.resolve("anchor.log").toFile();
        final Process echo = ChildJvm.startOrbitkv(log, List.of(),
            List.of("bench", "ring-echo", "--file", ringFile.getPath(), "--idle-strategy", idleStrategyName));
        try
        {
            final MappedByteBuffer mapped = awaitRingFile(ringFile, echo, log);
            try
            {
                final UnsafeBuffer header = new UnsafeBuffer(mapped, 0, BenchRingEchoCommand.HEADER_LENGTH);
                final ManyToOneRingBuffer toEcho = new ManyToOneRingBuffer(new UnsafeBuffer(
                    mapped, BenchRingEchoCommand.HEADER_LENGTH, BenchRingEchoCommand.RING_LENGTH));
                final OneToOneRingBuffer fromEcho = new OneToOneRingBuffer(new UnsafeBuffer(
                    mapped, BenchRingEchoCommand.HEADER_LENGTH + BenchRingEchoCommand.RING_LENGTH,
                    BenchRingEchoCommand.RING_LENGTH));
                final RingPinger pinger = new RingPinger(toEcho, fromEcho, Configuration.newIdleStrategy(idleStrategyName));
                final Histogram histogram = pingLoop(pinger, echo.pid(), "bareRingRtt");
                final LookupFrames frames = LookupFrames.of(LOOKUP_KEYS, 32, LOOKUP_NAMESPACE);
                System.out.printf("  64-key Lookup frames: %d B out, %d B back%n", frames.requestBytes(),
                    frames.replyBytes());
                final RingPinger sized = new RingPinger(toEcho, fromEcho, Configuration.newIdleStrategy(idleStrategyName),
                    frames.requestBytes(), frames.replyBytes());
                final Histogram lookupSized = pingLoop(sized, echo.pid(), "bareRing64KeyFrameRtt");
                header.putIntRelease(BenchRingEchoCommand.READY_OFFSET, 0);
                return new Histogram[]{histogram, lookupSized};
            }
            finally
            {
                IoUtil.unmap(mapped);
            }
        }
        finally
        {
            stop(echo);
        }
    }

    private Histogram pingLoop(final RingPinger pinger, final long echoPid, final String name)
    {
        for (int i = 0; i < warmup; i++)
        {
            pinger.ping();
        }
        final Histogram histogram = newHistogram();
        final GcSnapshot gc = GcSnapshot.take(echoPid);
        for (int i = 0; i < iterations; i++)
        {
            histogram.recordValue(pinger.ping());
        }
        final GcSnapshot gcAfter = gc.again();
        results.report(name, histogram, null, gc.collectionsUntil(gcAfter));
        System.out.println("  " + gc.describeUntil(gcAfter, "anchor responder"));
        return histogram;
    }

    private void measureManager(final Path dir, final Histogram[] bareRing) throws Exception
    {
        final long dataRegionBytes = (long)blocks * BIG_BLOCK_BYTES;
        final long poolBytes = (long)blocks * BIG_BLOCK_BYTES * (rounds + 1) + 64L * 1024 * 1024;
        final Path managerDir = dir.resolve("manager");
        final File log = dir.resolve("manager.log").toFile();
        final Process manager = ChildJvm.startOrbitkv(log, List.of(), List.of(
            "manager",
            "--dir", managerDir.toString(),
            "--pool-bytes", Long.toString(poolBytes),
            "--max-data-region-bytes", Long.toString(dataRegionBytes),
            "--pool-pretouch", Configuration.parsePoolPretouch(poolPretouch).flagValue(),
            "--idle-strategy", idleStrategyName,
            managerIdleSleep ? "--idle-sleep" : "--no-idle-sleep"));
        try
        {
            awaitManagerAndPoolTouch(managerDir.resolve(CncFileDescriptor.CNC_FILE_NAME).toFile(), manager, log);
            final EngineClient.Context ctx = new EngineClient.Context()
                .dir(managerDir.toString())
                .clientName("bench-local")
                .dataRegionBytes(dataRegionBytes)
                .idleStrategy(Configuration.newIdleStrategy(idleStrategyName));
            try (EngineClient client = EngineClient.connect(ctx))
            {
                measureLookups(client, manager.pid(), bareRing);
                measureThroughput(client, manager.pid());
            }
        }
        finally
        {
            stop(manager);
        }
    }

    private void measureLookups(final EngineClient client, final long managerPid, final Histogram[] bareRing)
        throws IOException
    {
        final KeyBatch batch = new KeyBatch(LOOKUP_KEYS);
        final OperationResult result = new OperationResult(LOOKUP_KEYS);
        batch.namespace(LOOKUP_NAMESPACE);
        final byte[] hash = new byte[32];
        for (int i = 0; i < LOOKUP_KEYS; i++)
        {
            hash[0] = (byte)i;
            hash[1] = (byte)(i >> 8);
            batch.addKey(hash, 0, hash.length, (long)i * SMALL_BLOCK_BYTES, SMALL_BLOCK_BYTES);
        }
        client.publish(batch, result);
        check(result.isOk() && result.count(KeyStatus.STORED) + result.count(KeyStatus.ALREADY_RESIDENT) == LOOKUP_KEYS,
            "publishing the lookup blocks failed: " + result.code() + " " + result.message());

        final KeyBatch one = new KeyBatch(1);
        one.namespace(LOOKUP_NAMESPACE);
        hash[0] = 0;
        hash[1] = 0;
        one.addKey(hash, 0, hash.length);

        final Histogram oneKey = lookupLoop(client, one, result, 1, managerPid, "lookup1Rtt", bareRing[0]);
        // The 64-key Lookup against a bare round trip of frames as big as its request and its answer.
        final Histogram manyKeys =
            lookupLoop(client, batch, result, LOOKUP_KEYS, managerPid, "lookup64Rtt", bareRing[1]);
        final double ratioP99 = (double)oneKey.getValueAtPercentile(99) / bareRing[0].getValueAtPercentile(99);
        results.goal("lookup1P99VsBareRingP99", ratioP99, ratioP99 <= 3.0, "<= 3.0x");
        final double ratio64P50 = (double)manyKeys.getValueAtPercentile(50) / bareRing[1].getValueAtPercentile(50);
        results.goal("lookup64P50VsBareRing64KeyFrameP50", ratio64P50, ratio64P50 <= 3.0, "<= 3.0x");
        firstLookupAfterIdle(client, one, result, managerPid);
    }

    /**
     * The first request after an idle spell: the Manager has gone to sleep (with the doorbell) or parks 100 us at a
     * time (without), and the Manager's CPU over the pauses shows what idling costs.
     */
    private void firstLookupAfterIdle(
        final EngineClient client, final KeyBatch one, final OperationResult result, final long managerPid)
        throws IOException
    {
        if (idleSamples <= 0)
        {
            return;
        }
        final long[] samplesNs = new long[idleSamples];
        final long ringsBefore = client.doorbellRings();
        final long ticksBefore = cpuTicks(managerPid);
        final long startNs = System.nanoTime();
        for (int i = 0; i < idleSamples; i++)
        {
            java.util.concurrent.locks.LockSupport.parkNanos(idlePauseNs);
            final long lookupStartNs = System.nanoTime();
            client.lookup(one, false, result);
            samplesNs[i] = System.nanoTime() - lookupStartNs;
            check(result.isOk() && result.value() == 1, "first lookup after idle failed: " + result.code());
        }
        final double cpuPercent = 100.0 * (cpuTicks(managerPid) - ticksBefore) / CLOCK_TICKS_PER_SECOND /
            ((System.nanoTime() - startNs) / 1e9);
        final long rings = client.doorbellRings() - ringsBefore;
        final long[] sorted = samplesNs.clone();
        java.util.Arrays.sort(sorted);
        final long maxNs = sorted[sorted.length - 1];
        System.out.printf("firstAfterIdle %d lookups after %.1f s idle each: median %.1f us, max %.1f us; doorbell rung " +
            "%d times; Manager CPU over the pauses %.2f%% of a core%n", idleSamples, idlePauseNs / 1e9,
            sorted[sorted.length / 2] / 1e3, maxNs / 1e3, rings, cpuPercent);
        final Map<String, Object> row = new LinkedHashMap<>();
        row.put("pauseNs", idlePauseNs);
        row.put("samplesNs", samplesNs);
        row.put("medianNs", sorted[sorted.length / 2]);
        row.put("maxNs", maxNs);
        row.put("doorbellRings", rings);
        row.put("managerIdleCpuPercent", cpuPercent);
        results.put("firstLookupAfterIdle", row);
        results.goal("firstLookupAfterIdleMaxUs", maxNs / 1e3, maxNs <= TimeUnit.MILLISECONDS.toNanos(1), "<= 1000 us");
        results.goal("managerIdleCpuPercent", cpuPercent, cpuPercent <= 1.0, "<= 1%");
    }

    /**
     * utime + stime of a process in clock ticks ({@code /proc/PID/stat} fields 14 and 15, after the command name).
     */
    private static long cpuTicks(final long pid) throws IOException
    {
        final String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
        final String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
    }

    private Histogram lookupLoop(
        final EngineClient client,
        final KeyBatch batch,
        final OperationResult result,
        final int expectedPrefix,
        final long managerPid,
        final String name,
        final Histogram bareRing)
    {
        for (int i = 0; i < warmup; i++)
        {
            client.lookup(batch, false, result);
        }
        check(result.isOk() && result.value() == expectedPrefix, name + ": expected a prefix of " + expectedPrefix +
            ", got " + result.value() + " (" + result.code() + ")");
        final Histogram histogram = newHistogram();
        final GcSnapshot gc = GcSnapshot.take(managerPid);
        for (int i = 0; i < iterations; i++)
        {
            final long start = System.nanoTime();
            client.lookup(batch, false, result);
            histogram.recordValue(Math.min(System.nanoTime() - start, MAX_RTT_NS));
        }
        final GcSnapshot gcAfter = gc.again();
        results.report(name, histogram, bareRing, gc.collectionsUntil(gcAfter));
        System.out.println("  " + gc.describeUntil(gcAfter, "Manager"));
        results.goal(name + "GcCollections", gc.collectionsUntil(gcAfter), gc.collectionsUntil(gcAfter) == 0, "0");
        if (expectedPrefix == LOOKUP_KEYS)
        {
            final double p50Us = histogram.getValueAtPercentile(50) / 1000.0;
            results.goal("lookup64P50Us", p50Us, p50Us <= 10.0, "<= 10 us");
        }
        return histogram;
    }

    private void measureThroughput(final EngineClient client, final long managerPid)
    {
        final MemorySegment region = client.dataRegion();
        final long bytes = (long)blocks * BIG_BLOCK_BYTES;
        for (long off = 0; off < bytes; off += Long.BYTES)
        {
            region.set(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED, off, off * 0x9E3779B97F4A7C15L);
        }

        final double[] memcpy = new double[rounds];
        final double[] publish = new double[rounds];
        final double[] read = new double[rounds];
        // The anchor copies into memory of the same kind as the Manager's pool (2 MiB aligned, THP, faulted in at
        // start), so the ratio isolates what the Manager adds, not a difference in page size.
        try (MappedRegion anchorRegion = HugePageMemory.mapAnonymous(bytes, true))
        {
            HugePageMemory.prefault(anchorRegion);
            final MemorySegment target = anchorRegion.segment();
            copyRound(region, target, bytes);
            final KeyBatch batch = new KeyBatch(blocks);
            final OperationResult result = new OperationResult(blocks);
            final byte[] namespace = "bench;throughput;2MiB".getBytes(StandardCharsets.US_ASCII);
            final byte[] hash = new byte[32];
            final GcSnapshot gc = GcSnapshot.take(managerPid);
            for (int round = -1; round < rounds; round++)
            {
                fillBatch(batch, namespace, hash, round + 1);
                final long copyNs = copyRound(region, target, bytes);
                final long publishNs = publishRound(client, batch, result);
                final long readNs = readRound(client, batch, result);
                if (round >= 0)
                {
                    memcpy[round] = gbPerSec(bytes, copyNs);

                    publish[round] = gbPerSec(bytes, publishNs);
                    read[round] = gbPerSec(bytes, readNs);
                    // This VM's memory bandwidth swings several-fold between rounds: show every round, report medians.
                    System.out.printf("  round %d: memcpy %.2f  publish %.2f  read %.2f GB/s%n",
                        round, memcpy[round], publish[round], read[round]);
                }
            }
            final GcSnapshot gcAfter = gc.again();
            verifyReadBack(region, target, bytes);

            final double memcpyGb = median(memcpy);
            final double publishGb = median(publish);
            final double readGb = median(read);
            System.out.printf("%nthroughput, 2 MiB blocks, %d blocks/round, %d blocks/request, median of %d rounds:%n",
                blocks, blocksPerRequest, rounds);
            System.out.printf("  anchor MemorySegment.copy  %7.2f GB/s%n", memcpyGb);
            System.out.printf("  Publish                    %7.2f GB/s  = %.2fx memcpy%n", publishGb, publishGb / memcpyGb);
            System.out.printf("  Read                       %7.2f GB/s  = %.2fx memcpy%n", readGb, readGb / memcpyGb);
            results.put("memcpyGBps", memcpyGb);
            results.put("publishGBps", publishGb);
            results.put("readGBps", readGb);
            results.goal("publishVsMemcpy", publishGb / memcpyGb, publishGb / memcpyGb >= 0.8, ">= 0.8x");
            results.goal("readVsMemcpy", readGb / memcpyGb, readGb / memcpyGb >= 0.8, ">= 0.8x");
            System.out.println("  " + gc.describeUntil(gcAfter, "Manager"));
            results.goal("throughputGcCollections", gc.collectionsUntil(gcAfter), gc.collectionsUntil(gcAfter) == 0, "0");
        }
    }

    private void fillBatch(final KeyBatch batch, final byte[] namespace, final byte[] hash, final int round)
    {
        batch.clear();
        batch.namespace(namespace);
        for (int i = 0; i < blocks; i++)
        {
            hash[0] = (byte)i;
            hash[1] = (byte)(i >> 8);
            hash[2] = (byte)round;
            hash[3] = (byte)(round >> 8);
            batch.addKey(hash, 0, hash.length, (long)i * BIG_BLOCK_BYTES, BIG_BLOCK_BYTES);
        }
    }

    private static long copyRound(final MemorySegment src, final MemorySegment dst, final long bytes)
    {
        final long start = System.nanoTime();
        for (long off = 0; off < bytes; off += BIG_BLOCK_BYTES)
        {
            MemorySegment.copy(src, off, dst, off, BIG_BLOCK_BYTES);
        }
        return System.nanoTime() - start;
    }

    private long publishRound(final EngineClient client, final KeyBatch all, final OperationResult result)
    {
        final long start = System.nanoTime();
        sendInSlices(client, all, result, true);
        return System.nanoTime() - start;
    }

    private long readRound(final EngineClient client, final KeyBatch all, final OperationResult result)
    {
        final long start = System.nanoTime();
        sendInSlices(client, all, result, false);
        return System.nanoTime() - start;
    }

    private KeyBatch slice;
    private OperationResult sliceResult;
    private final UnsafeBuffer hashScratch = new UnsafeBuffer(new byte[64]);

    private void sendInSlices(final EngineClient client, final KeyBatch all, final OperationResult ignored, final boolean publish)
    {
        if (null == slice)
        {
            slice = new KeyBatch(blocksPerRequest);
            sliceResult = new OperationResult(blocksPerRequest);
        }
        for (int first = 0; first < all.keyCount(); first += blocksPerRequest)
        {
            slice.clear();
            slice.namespace(all.namespaceBuffer(), 0, all.namespaceLength());
            final int last = Math.min(all.keyCount(), first + blocksPerRequest);
            for (int i = first; i < last; i++)
            {
                final int length = all.getHash(i, hashScratch, 0);
                slice.addKey(hashScratch, 0, length, all.offset(i), all.size(i));
            }
            if (publish)
            {
                client.publish(slice, sliceResult);
                check(sliceResult.isOk() && sliceResult.count(KeyStatus.STORED) == last - first,
                    "publish stored " + sliceResult.count(KeyStatus.STORED) + " of " + (last - first) + ": " +
                    sliceResult.code() + " " + sliceResult.message());
            }
            else
            {
                client.read(slice, 0, sliceResult);
                check(sliceResult.isOk() && sliceResult.value() == last - first,
                    "read restored " + sliceResult.value() + " of " + (last - first) + ": " + sliceResult.code());
            }
        }
    }

    private static void verifyReadBack(final MemorySegment region, final MemorySegment copy, final long bytes)
    {
        final long mismatch = region.asSlice(0, bytes).mismatch(copy.asSlice(0, bytes));
        check(mismatch == -1, "bytes read back differ from those published, first at offset " + mismatch);
    }

    private static Histogram newHistogram()
    {
        return new Histogram(MAX_RTT_NS, 3);
    }

    private static double gbPerSec(final long bytes, final long ns)
    {
        return bytes / (double)ns;
    }

    private static double median(final double[] values)
    {
        final double[] sorted = values.clone();
        java.util.Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }

    private static void check(final boolean condition, final String message)
    {
        if (!condition)
        {
            throw new IllegalStateException(message);
        }
    }

    private static MappedByteBuffer awaitRingFile(final File file, final Process echo, final File log) throws Exception
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline)
        {
            if (!echo.isAlive())
            {
                throw new IllegalStateException("anchor responder exited: " + Files.readString(log.toPath()));
            }
            if (file.length() == BenchRingEchoCommand.FILE_LENGTH)
            {
                final MappedByteBuffer mapped = IoUtil.mapExistingFile(file, "anchor ring");
                if (new UnsafeBuffer(mapped, 0, 8).getIntVolatile(BenchRingEchoCommand.READY_OFFSET) == 1)
                {
                    return mapped;
                }
                IoUtil.unmap(mapped);
            }
            Thread.onSpinWait();
            Thread.yield();
        }
        throw new IllegalStateException("anchor responder not ready within 30 s: " + Files.readString(log.toPath()));
    }

    /**
     * Wait until the Manager is ready and its pool is touched (the figures are for a touched pool), failing only when
     * it exits or makes no progress for {@link #MANAGER_STALL_TIMEOUT_NS}: a 5 GiB pool on a slow host may take
     * minutes, and that is not a reason to give up while the touched bytes keep growing.
     */
    private void awaitManagerAndPoolTouch(final File cnc, final Process manager, final File log) throws Exception
    {
        final long startNs = System.nanoTime();
        long lastProgressNs = startNs;
        long touched = -1;
        CncReader ready = null;
        try
        {
            while (true)
            {
                if (!manager.isAlive())
                {
                    throw new IllegalStateException("Manager exited: " + Files.readString(log.toPath()));
                }
                if (null == ready)
                {
                    ready = CncReader.mapIfReady(cnc);
                }
                final long nowTouched = null != ready ?
                    counter(ready.countersReader(), StoreCounter.POOL_BYTES_TOUCHED) : touchedWhileStarting(cnc);
                final long nowNs = System.nanoTime();
                if (nowTouched > touched)
                {
                    touched = nowTouched;
                    lastProgressNs = nowNs;
                }
                if (null != ready)
                {
                    final CountersReader counters = ready.countersReader();
                    final long mode = counter(counters, StoreCounter.POOL_TOUCH_MODE);
                    final long state = counter(counters, StoreCounter.POOL_TOUCH_STATE);
                    if (StoreCounter.POOL_TOUCH_FAILED == state)
                    {
                        throw new IllegalStateException("the Manager's pool pre-touch failed: " + Files.readString(log.toPath()));
                    }
                    if (Configuration.PoolPretouch.OFF.code() == mode || StoreCounter.POOL_TOUCH_DONE == state)
                    {
                        reportStart(counters, nowNs - startNs);
                        return;
                    }
                }
                if (nowNs - lastProgressNs > MANAGER_STALL_TIMEOUT_NS)
                {
                    throw new IllegalStateException("Manager made no progress for " +
                        TimeUnit.NANOSECONDS.toSeconds(MANAGER_STALL_TIMEOUT_NS) + " s (" + (null == ready ? "not ready" :
                        "ready") + ", pool bytes touched " + touched + "): " + Files.readString(log.toPath()));
                }
                LockSupport.parkNanos(MANAGER_POLL_NS);
            }
        }
        finally
        {
            CloseHelper.quietClose(ready);
        }
    }

    private void reportStart(final CountersReader counters, final long waitedNs)
    {
        final long readyMs = counter(counters, SystemCounterDescriptor.READY_MS);
        final long touchMs = counter(counters, StoreCounter.POOL_TOUCH_MS);
        final long touched = counter(counters, StoreCounter.POOL_BYTES_TOUCHED);
        System.out.printf("Manager ready %d ms after its process start; pool pre-touch %s: %s touched in %.1f s " +
            "(bench waited %.1f s)%n", readyMs, poolPretouch, bytesText(touched), touchMs / 1000.0,
            waitedNs / 1e9);
        results.put("poolPretouch", poolPretouch);
        results.put("managerReadyMs", readyMs);
        results.put("poolBytesTouched", touched);
        results.put("poolTouchMs", touchMs);
    }

    private static long counter(final CountersReader counters, final CounterDescriptor descriptor)
    {
        return counters.getCounterValue(descriptor.fixedId());
    }

    /**
     * Pool bytes touched by a Manager that has not signalled ready yet (a blocking pre-touch), or -1 while its header
     * or counter is not written. The counters exist before the pool is mapped, and the header's pool size is the last
     * field written before them.
     */
    private static long touchedWhileStarting(final File cnc)
    {
        if (!cnc.isFile() || cnc.length() < CncFileDescriptor.HEADER_LENGTH)
        {
            return -1;
        }
        final MappedByteBuffer mapped = IoUtil.mapExistingFile(cnc, java.nio.channels.FileChannel.MapMode.READ_ONLY, "cnc");
        try
        {
            final UnsafeBuffer header = new UnsafeBuffer(mapped, 0, CncFileDescriptor.HEADER_LENGTH);
            if (0 == header.getLongVolatile(CncFileDescriptor.POOL_BYTES_OFFSET))
            {
                return -1;
            }
            final CncFileDescriptor.Sections sections =
                new CncFileDescriptor.Sections(org.agrona.BufferUtil.address(mapped), mapped.capacity());
            final CountersReader counters = new CountersReader(sections.countersMetadata(), sections.countersValues());
            final int id = StoreCounter.POOL_BYTES_TOUCHED.fixedId();
            return id < counters.maxCounterId() && CountersReader.RECORD_ALLOCATED == counters.getCounterState(id) ?
                counters.getCounterValue(id) : -1;
        }
        catch (final IllegalStateException ex)
        {
            return -1;
        }
        finally
        {
            IoUtil.unmap(mapped);
        }
    }

    private static void stop(final Process process) throws InterruptedException
    {
        process.destroy();
        if (!process.waitFor(10, TimeUnit.SECONDS))
        {
            process.destroyForcibly().waitFor();
        }
    }

    /**
     * Whole MiB below 1 GiB, GiB with up to two decimals above, as {@code orbitkv stat} prints a pool size.
     */
    private static String bytesText(final long bytes)
    {
        final long mib = 1L << 20;
        final long gib = 1L << 30;
        if (bytes < gib)
        {
            return bytes % mib == 0 || bytes > mib ? (bytes / mib) + " MiB" : bytes + " bytes";
        }
        final long hundredths = bytes * 100 / gib;
        return hundredths % 100 == 0 ? (hundredths / 100) + " GiB" :
            String.format("%d.%02d GiB", hundredths / 100, hundredths % 100);
    }
}
