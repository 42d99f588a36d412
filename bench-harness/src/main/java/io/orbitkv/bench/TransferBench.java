package io.orbitkv.bench;

import io.orbitkv.manager.catalog.CatalogCounter;
import io.orbitkv.manager.membership.MembershipCounter;
import java.io.File;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import io.orbitkv.client.EngineClient;
import io.orbitkv.client.KeyBatch;
import io.orbitkv.client.OperationResult;
import io.orbitkv.codecs.engine.KeyStatus;
import org.HdrHistogram.Histogram;
import org.agrona.CloseHelper;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Peer transfers as an engine sees them, each figure next to an anchor measured in the same run:
 * <ol>
 *     <li>iperf3 over loopback with one and with four streams (the line rate);</li>
 *     <li>2 MiB blocks published by an engine on Manager A and read with the peers flag by an engine on Manager B (two
 *     clustered Manager processes, their own etcd), for each {@code --transfer-streams} setting, against iperf3 with
 *     the same stream count;</li>
 *     <li>a remote restore of a short prefix of 256 KiB blocks (one Read with peers on B) against the same bytes
 *     asked for and received over one raw TCP socket;</li>
 *     <li>the Managers' transfer counters (pinned, staging, budget waits), as the build has them;</li>
 *     <li>the Mooncake TE binding over the C stand-in library, reading the same 2 MiB blocks.</li>
 * </ol>
 */
final class TransferBench
{
    static final int BLOCK_BYTES = 2 << 20;
    static final int RESTORE_BLOCK_BYTES = 256 << 10;
    static final long MIN_POOL_BYTES = 512L << 20;
    /** The most keys one Read may fetch past its local prefix (one authorization per source). */
    static final int MAX_PEER_KEYS = io.orbitkv.codecs.EngineRingLimits.MAX_PEER_KEYS_PER_LOOKUP;
    /** A wait for progress (blocks discoverable, reads completing) fails only once nothing moved this long. */
    static final long STALL_NS = TimeUnit.SECONDS.toNanos(30);
    /** The engine clients' wait for one answer: a Read of 128 blocks of 2 MiB over a slow loopback. */
    static final long RESPONSE_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(60);

    private static final String BLOCK_NS = "bench/transfer/2m";
    private static final String RESTORE_NS = "bench/transfer/restore-256k";

    private final Options options;
    private final PrintWriter out;
    private final Map<String, Object> results = new LinkedHashMap<>();
    private final Map<Integer, Double> iperfGbps = new LinkedHashMap<>();
    private Histogram rawTcp;

    /**
     * What a run measures; the command fills it from its flags.
     *
     * @param blocks         2 MiB blocks A publishes and B reads per round.
     * @param rounds         recorded read rounds per stream setting (after {@code warmupRounds}).
     * @param warmupRounds   unrecorded rounds first (the first is checked byte for byte).
     * @param blocksPerRead  keys per Read request on B.
     * @param restoreBlocks  256 KiB blocks of the restore prefix.
     * @param restoreReps    recorded restores.
     * @param streams        {@code --transfer-streams} settings measured.
     * @param iperfSecs      length of each iperf3 run.
     * @param skipIperf      no iperf3 anchor.
     * @param skipTe         no TE stand-in part.
     * @param teLibrary      the TE stand-in library (also the Managers' with the mooncake transport).
     * @param transport      the Managers' {@code --transport}.
     * @param etcdEndpoints  an etcd to use, or null to start one.
     * @param workDir        where the Managers and logs live.
     */
    record Options(
        int blocks,
        int rounds,
        int warmupRounds,
        int blocksPerRead,
        int restoreBlocks,
        int restoreReps,
        List<Integer> streams,
        int iperfSecs,
        boolean skipIperf,
        boolean skipTe,
        Path teLibrary,
        String transport,
        String etcdEndpoints,
        Path workDir,
        Path clusterSecretFile,
        boolean authCompare,
        boolean authFirst,
        Path tlsDir,
        boolean tlsCompare)
    {
    }

    TransferBench(final Options options, final PrintWriter out)
    {
        this.options = options;
        this.out = out;
    }

    Map<String, Object> run() throws Exception
    {
        final Options o = options;
        out.printf(Locale.ROOT, "bench transfer: %d blocks of 2 MiB x %d rounds (+%d warm-up), %d per Read; restore %d " +
            "x 256 KiB x %d reps; streams %s; transport %s; %d cores; work dir %s%n", o.blocks(), o.rounds(),
            o.warmupRounds(), o.blocksPerRead(), o.restoreBlocks(), o.restoreReps(), o.streams(), o.transport(),
            Runtime.getRuntime().availableProcessors(), o.workDir());
        out.flush();
        final Map<String, Object> config = new LinkedHashMap<>();
        config.put("blocks", o.blocks());
        config.put("block_bytes", BLOCK_BYTES);
        config.put("rounds", o.rounds());
        config.put("warmup_rounds", o.warmupRounds());
        config.put("blocks_per_read", o.blocksPerRead());
        config.put("restore_blocks", o.restoreBlocks());
        config.put("restore_block_bytes", RESTORE_BLOCK_BYTES);
        config.put("restore_reps", o.restoreReps());
        config.put("streams", o.streams());
        config.put("transport", o.transport());
        config.put("cores", Runtime.getRuntime().availableProcessors());
        results.put("config", config);

        measureIperf();
        measureRawTcp();
        measureTeStandIn();
        measureMooncakeWheel();
        measureManagers();
        TransferSummary.print(out, options, results, iperfGbps, rawTcp);
        return results;
    }

    private void measureIperf() throws Exception
    {
        final Map<String, Object> iperf = new LinkedHashMap<>();
        results.put("iperf3", iperf);
        final String binary = IperfAnchor.binary();
        if (options.skipIperf() || null == binary)
        {
            final String why = options.skipIperf() ? "skipped (--skip-iperf)" :
                "iperf3 not found on PATH (scripts/deps installs it): no line-rate anchor, ratios skipped";
            iperf.put("available", false);
            iperf.put("reason", why);
            out.println("[1] iperf3 anchor: " + why);
            out.flush();
            return;
        }
        iperf.put("available", true);
        try (IperfAnchor anchor = IperfAnchor.start(binary, options.workDir().toFile()))
        {
            for (final int streams : List.of(1, 4))
            {
                final double gbps = anchor.run(streams, options.iperfSecs()) / 1e9;
                iperfGbps.put(streams, gbps);
                iperf.put("gbps_P" + streams, gbps);
                out.printf(Locale.ROOT, "[1] iperf3 loopback, %d stream%s, %d s: %.2f Gb/s%n", streams,
                    1 == streams ? "" : "s", options.iperfSecs(), gbps);
                out.flush();
            }
        }
    }

    private void measureRawTcp() throws Exception
    {
        final int bytes = options.restoreBlocks() * RESTORE_BLOCK_BYTES;
        try (RawTcpAnchor anchor = new RawTcpAnchor(bytes))
        {
            rawTcp = anchor.measure(bytes, warmupReps(), options.restoreReps());
        }
        final Map<String, Object> raw = new LinkedHashMap<>();
        raw.put("bytes", bytes);
        raw.put("p50_us", rawTcp.getValueAtPercentile(50) / 1e3);
        raw.put("p99_us", rawTcp.getValueAtPercentile(99) / 1e3);
        raw.put("max_us", rawTcp.getMaxValue() / 1e3);
        results.put("raw_tcp", raw);
        out.printf(Locale.ROOT, "[3] anchor: %d MiB over one raw TCP socket between two threads (request + bytes, %d reps): " +
            "p50 %.1f us, p99 %.1f us (%.2f Gb/s at p50)%n", bytes >> 20, options.restoreReps(),
            rawTcp.getValueAtPercentile(50) / 1e3, rawTcp.getValueAtPercentile(99) / 1e3,
            BenchTools.gbps(bytes, rawTcp.getValueAtPercentile(50)));
        out.flush();
    }

    private void measureMooncakeWheel() throws InterruptedException
    {
        if (options.skipTe())
        {
            results.put("mooncake_te_wheel", Map.of("available", false, "reason", "--skip-te"));
            return;
        }
        final Map<String, Object> wheel = MooncakeWheelAnchor.measure(BLOCK_BYTES, options.iperfSecs());
        results.put("mooncake_te_wheel", wheel);
        if (Boolean.TRUE.equals(wheel.get("available")))
        {
            out.printf(Locale.ROOT, "[6] anchor: Mooncake TE wheel (Python, TCP, two processes), 2 MiB reads: %.2f Gb/s " +
                "one at a time, %.2f Gb/s four per batch%n", (double)wheel.get("gbps_batch1"),
                (double)wheel.get("gbps_batch4"));
        }
        else
        {
            out.println("[6] anchor: Mooncake TE wheel: skipped, " + wheel.get("reason"));
        }
        out.flush();
    }

    private void measureTeStandIn()
    {
        final Map<String, Object> te = new LinkedHashMap<>();
        results.put("te_standin", te);
        te.put("label", "TE stand-in (not Mooncake)");
        final Path library = options.teLibrary();
        if (options.skipTe() || !Files.isRegularFile(library))
        {
            final String why = options.skipTe() ? "--skip-te" :
                "library not found at " + library + " (te-ffm's build compiles it; or --te-library)";
            te.put("available", false);
            te.put("reason", why);
            out.println("[5] TE stand-in (not Mooncake): skipped, " + why);
            out.flush();
            return;
        }
        final double[] gbps = new TeStandInBench(library, BLOCK_BYTES, options.blocks(), STALL_NS).run(options.rounds());
        te.put("available", true);
        te.put("library", library.toString());
        te.put("gbps_rounds", gbps);
        te.put("gbps_median", BenchTools.median(gbps));
        out.printf(Locale.ROOT, "[5] TE stand-in (not Mooncake), two MooncakeTransports in this JVM, %d x 2 MiB reads per " +
            "round: median %.2f Gb/s over %d rounds%n", options.blocks(), BenchTools.median(gbps), gbps.length);
        out.flush();
    }

    private void measureManagers() throws Exception
    {
        final Map<String, Object> builtin = new LinkedHashMap<>();
        results.put("managers", builtin);
        BenchEtcd etcd = null;
        try
        {
            String endpoints = options.etcdEndpoints();
            if (null == endpoints)
            {
                etcd = BenchEtcd.start(options.workDir());
                endpoints = etcd.endpoint();
            }
            for (final int streams : options.streams())
            {
                if (options.tlsCompare())
                {
                    // The same pair twice in this run, plain TCP then TLS: same-run ratios.
                    final Map<String, Object> off = measurePair(endpoints, streams, options.clusterSecretFile(), null);
                    final Map<String, Object> on =
                        measurePair(endpoints, streams, options.clusterSecretFile(), options.tlsDir());
                    builtin.put("streams_" + streams, off);
                    builtin.put("streams_" + streams + "_tls", on);
                    final Map<String, Object> ratios = new LinkedHashMap<>();
                    BenchCatalogCommand.ratios(off, on, "", ratios);
                    builtin.put("streams_" + streams + "_ratio_tls_over_plain", ratios);
                    out.printf(Locale.ROOT, "%n--transfer-streams %d, TLS / plain TCP, same run:%n", streams);
                    for (final Map.Entry<String, Object> entry : ratios.entrySet())
                    {
                        out.printf(Locale.ROOT, "  %-50s %.3f%n", entry.getKey(), (Double)entry.getValue());
                    }
                    out.flush();
                }
                else if (options.authCompare())
                {
                    // The same pair twice in this run, unauthenticated then with the secret: same-run ratios.
                    final Map<String, Object> off;
                    final Map<String, Object> on;
                    if (options.authFirst())
                    {
                        on = measurePair(endpoints, streams, options.clusterSecretFile(), options.tlsDir());
                        off = measurePair(endpoints, streams, null, options.tlsDir());
                    }
                    else
                    {
                        off = measurePair(endpoints, streams, null, options.tlsDir());
                        on = measurePair(endpoints, streams, options.clusterSecretFile(), options.tlsDir());
                    }
                    builtin.put("streams_" + streams, off);
                    builtin.put("streams_" + streams + "_auth", on);
                    final Map<String, Object> ratios = new LinkedHashMap<>();
                    BenchCatalogCommand.ratios(off, on, "", ratios);
                    builtin.put("streams_" + streams + "_ratio_auth_over_plain", ratios);
                    out.printf(Locale.ROOT, "%n--transfer-streams %d, authenticated / unauthenticated, same run:%n", streams);
                    for (final Map.Entry<String, Object> entry : ratios.entrySet())
                    {
                        out.printf(Locale.ROOT, "  %-50s %.3f%n", entry.getKey(), (Double)entry.getValue());
                    }
                    out.flush();
                }
                else
                {
                    builtin.put("streams_" + streams,
                        measurePair(endpoints, streams, options.clusterSecretFile(), options.tlsDir()));
                }
            }
        }
        finally
        {
            CloseHelper.quietClose(etcd);
        }
    }

    private Map<String, Object> measurePair(
        final String etcdEndpoints, final int streams, final Path clusterSecretFile, final Path tlsDir) throws Exception
    {
        final Map<String, Object> pair = new LinkedHashMap<>();
        final long bigBytes = (long)options.blocks() * BLOCK_BYTES;
        final long restoreBytes = (long)options.restoreBlocks() * RESTORE_BLOCK_BYTES;
        final long regionBytes = bigBytes + restoreBytes;
        final long poolBytes = Math.max(MIN_POOL_BYTES, (regionBytes + (64L << 20) + BLOCK_BYTES - 1) & -(long)BLOCK_BYTES);
        final TransferManager.Settings settings = new TransferManager.Settings(etcdEndpoints,
            "bench-transfer-" + UUID.randomUUID().toString().substring(0, 8), "a", poolBytes, BLOCK_BYTES, regionBytes,
            streams, options.transport(), "mooncake".equals(options.transport()) ? options.teLibrary() : null,
            clusterSecretFile, tlsDir);
        final List<BenchManager> managers = new ArrayList<>();
        TransferCounters countersA = null;
        TransferCounters countersB = null;
        try
        {
            final long startNs = System.nanoTime();
            managers.add(TransferManager.start("a", options.workDir(), settings));
            managers.add(TransferManager.start("b", options.workDir(), settings));
            for (final BenchManager m : managers)
            {
                m.awaitReady();
            }
            for (final BenchManager m : managers)
            {
                m.awaitCounter(MembershipCounter.VIEW_COMPLETE, (v) -> 1 == v, BenchManager.START_TIMEOUT_NS);
                m.awaitCounter(MembershipCounter.MEMBERS, (v) -> 2 == v, BenchManager.START_TIMEOUT_NS);
            }
            managers.get(0).awaitCounter(CatalogCounter.INCOMPLETE_SHARDS, (v) -> 0 == v,
                BenchManager.START_TIMEOUT_NS);
            out.printf(Locale.ROOT, "%n--transfer-streams %d%s: Managers a (pid %d) and b (pid %d) in one cluster after %.1f s, " +
                "pools and transfer budgets of %d MiB%n", streams,
                (null == clusterSecretFile ? "" : " (authenticated)") + (null == tlsDir ? "" : " (TLS)"),
                managers.get(0).pid(), managers.get(1).pid(),
                (System.nanoTime() - startNs) / 1e9, poolBytes >> 20);
            out.flush();
            try (EngineClient engineA = engine(managers.get(0), "bench-transfer-a", regionBytes);
                EngineClient engineB = engine(managers.get(1), "bench-transfer-b", regionBytes))
            {
                final List<KeyBatch> big = TransferBlocks.batches(BLOCK_NS, options.blocks(), BLOCK_BYTES, 0, options.blocksPerRead());
                final List<KeyBatch> restore = TransferBlocks.batches(RESTORE_NS, options.restoreBlocks(), RESTORE_BLOCK_BYTES, bigBytes,
                    MAX_PEER_KEYS);
                TransferBlocks.fill(engineA.dataBuffer(), regionBytes);
                publish(engineA, big, managers.get(0));
                publish(engineA, restore, managers.get(0));
                awaitPeers(engineB, big, managers);
                awaitPeers(engineB, restore, managers);
                out.printf(Locale.ROOT, "b's lookups offer all %d + %d blocks published on a%n", options.blocks(),
                    options.restoreBlocks());
                countersA = new TransferCounters("a (source)", managers.get(0).countersReader());
                countersB = new TransferCounters("b (requester)", managers.get(1).countersReader());
                // A phase that fails is recorded and the run goes on, so the other figures of the run survive it.
                try
                {
                    measureThroughput(engineB, big, streams, managers, pair);
                }
                catch (final IllegalStateException ex)
                {
                    phaseFailed("[2]", "throughput_error", ex, pair);
                }
                try
                {
                    measureRestore(engineB, restore.get(0), bigBytes, streams, managers, pair);
                }
                catch (final IllegalStateException ex)
                {
                    phaseFailed("[3]", "restore_error", ex, pair);
                }
            }
            countersA.close();
            countersB.close();
            reportCounters(countersA, countersB, pair);
        }
        finally
        {
            CloseHelper.quietCloseAll(countersA, countersB);
            CloseHelper.quietCloseAll(managers);
        }
        return pair;
    }

    private void measureThroughput(
        final EngineClient engineB,
        final List<KeyBatch> big,
        final int streams,
        final List<BenchManager> managers,
        final Map<String, Object> pair)
    {
        final long bytes = (long)options.blocks() * BLOCK_BYTES;
        final OperationResult result = new OperationResult(MAX_PEER_KEYS);
        final double[] gbps = new double[options.rounds()];
        final UnsafeBuffer region = engineB.dataBuffer();
        for (int r = -options.warmupRounds(); r < options.rounds(); r++)
        {
            final boolean check = r == -options.warmupRounds();
            if (check)
            {
                region.setMemory(0, (int)Math.min(Integer.MAX_VALUE, bytes), (byte)0);
            }
            final long t0 = System.nanoTime();
            for (final KeyBatch batch : big)
            {
                readWithPeers(engineB, batch, result, managers);
            }
            final long elapsedNs = System.nanoTime() - t0;
            if (check)
            {
                TransferBlocks.verify(region, 0, bytes, "2 MiB blocks read by b");
            }
            if (r >= 0)
            {
                gbps[r] = BenchTools.gbps(bytes, elapsedNs);
            }
        }
        final double median = BenchTools.median(gbps);
        pair.put("gbps_rounds", gbps);
        pair.put("gbps_median", median);
        final Double anchor = iperfGbps.get(streams);
        final String ratio;
        if (null != anchor)
        {
            pair.put("iperf3_gbps", anchor);
            pair.put("ratio_to_iperf3", median / anchor);
            ratio = String.format(Locale.ROOT, "%.2fx iperf3 -P %d (%.2f Gb/s); goal >= 0.9x", median / anchor, streams, anchor);
        }
        else
        {
            ratio = "no iperf3 anchor with " + streams + " stream" + (1 == streams ? "" : "s") + ", no ratio";
        }
        out.printf(Locale.ROOT, "[2] b reads %d x 2 MiB from a with peers (%d per Read): median %.2f Gb/s over %d rounds " +
            "(min %.2f, max %.2f); %s%n", options.blocks(), options.blocksPerRead(), median, gbps.length, min(gbps),
            max(gbps), ratio);
        out.flush();
    }

    private void measureRestore(
        final EngineClient engineB,
        final KeyBatch restore,
        final long offset,
        final int streams,
        final List<BenchManager> managers,
        final Map<String, Object> pair)
    {
        final long bytes = (long)options.restoreBlocks() * RESTORE_BLOCK_BYTES;
        final OperationResult result = new OperationResult(MAX_PEER_KEYS);
        final Histogram histogram = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
        final UnsafeBuffer region = engineB.dataBuffer();
        region.setMemory((int)offset, (int)bytes, (byte)0);
        final int warmup = warmupReps();
        for (int i = 0; i < warmup + options.restoreReps(); i++)
        {
            final long t0 = System.nanoTime();
            readWithPeers(engineB, restore, result, managers);
            final long t1 = System.nanoTime();
            if (0 == i)
            {
                TransferBlocks.verify(region, offset, bytes, "256 KiB restore prefix read by b");
            }
            if (i >= warmup)
            {
                histogram.recordValue(t1 - t0);
            }
        }
        final double p50 = histogram.getValueAtPercentile(50) / 1e3;
        final double p99 = histogram.getValueAtPercentile(99) / 1e3;
        final double rawP50 = rawTcp.getValueAtPercentile(50) / 1e3;
        final double rawP99 = rawTcp.getValueAtPercentile(99) / 1e3;
        pair.put("restore_p50_us", p50);
        pair.put("restore_p99_us", p99);
        pair.put("restore_max_us", histogram.getMaxValue() / 1e3);
        pair.put("restore_ratio_p50", p50 / rawP50);
        pair.put("restore_ratio_p99", p99 / rawP99);
        out.printf(Locale.ROOT, "[3] remote restore, %d x 256 KiB (%d MiB) in one Read with peers on b, %d reps: p50 %.1f us, " +
            "p99 %.1f us; raw TCP p50 %.1f us, p99 %.1f us; ratio p50 %.2fx, p99 %.2fx%s%n", options.restoreBlocks(),
            bytes >> 20, options.restoreReps(), p50, p99, rawP50, rawP99, p50 / rawP50, p99 / rawP99,
            1 == streams ? "" : " (raw TCP is one socket)");
        out.flush();
    }

    private void reportCounters(final TransferCounters a, final TransferCounters b, final Map<String, Object> pair)
    {
        // Found by the words of their labels, so the figures follow the counters the build has.
        final Long pinned = firstOf(a.maxOf("source", "bytes charged"), a.maxOf("pinned", "bytes"));
        final Long staging = firstOf(b.maxOf("requester", "staging", "bytes"), b.maxOf("staging", "bytes"));
        final Long waits = sum(a.deltaOf("budget", "wait"), b.deltaOf("budget", "wait"));
        final Long refusals = a.deltaOf("refused", "budget");
        pair.put("sender_pinned_bytes_max", pinned);
        pair.put("receiver_staging_bytes_max", staging);
        pair.put("budget_waits", waits);
        pair.put("source_budget_refusals", refusals);
        final Map<String, Object> all = new LinkedHashMap<>();
        all.put("a", a.snapshot());
        all.put("b", b.snapshot());
        pair.put("transfer_counters", all);
        out.printf(Locale.ROOT, "[4] counters: sender pinned bytes (max seen) %s; receiver staging bytes (max seen) %s; " +
            "budget waits %s; source refusals at a full budget %s%n", text(pinned), text(staging), text(waits),
            text(refusals));
        out.println("    " + a.describe());
        out.println("    " + b.describe());
        out.flush();
    }

    private void phaseFailed(final String part, final String key, final IllegalStateException ex,
        final Map<String, Object> pair)
    {
        pair.put(key, ex.getMessage());
        results.put("failed", true);
        out.println(part + " FAILED: " + ex.getMessage());
        out.flush();
    }

    /**
     * @return whether a measured phase failed (its error is in the results).
     */
    boolean failed()
    {
        return Boolean.TRUE.equals(results.get("failed"));
    }

    private void readWithPeers(
        final EngineClient engine, final KeyBatch batch, final OperationResult result, final List<BenchManager> managers)
    {
        final OperationResult answered = engine.read(batch, 0L, true, result);
        if (!answered.isOk() || answered.count(KeyStatus.PEER) != batch.keyCount())
        {
            for (final BenchManager m : managers)
            {
                m.checkAlive();
            }
            final int peer = answered.count(KeyStatus.PEER);
            throw new IllegalStateException("Read with peers on b: " + answered.code() + " " + answered.message() +
                ", " + peer + " of " + batch.keyCount() + " keys PEER" + (peer < batch.keyCount() ?
                ", key " + peer + " " + answered.status(peer) + " (reason " + answered.reason(peer) + ")" : "") +
                "; " + dumpCounters(managers));
        }
    }

    /**
     * Write every non-zero counter of the Managers next to their logs.
     *
     * @return where, for the failure's message.
     */
    private String dumpCounters(final List<BenchManager> managers)
    {
        final Path file = options.workDir().resolve("counters-at-failure.txt");
        final StringBuilder text = new StringBuilder();
        for (final BenchManager m : managers)
        {
            text.append("Manager ").append(m.nodeId()).append(" (pid ").append(m.pid()).append("):")
                .append(System.lineSeparator()).append(m.nonZeroCounters());
        }
        try
        {
            Files.writeString(file, text);
            return "the Managers' counters are in " + file;
        }
        catch (final java.io.IOException ex)
        {
            return "counters not written (" + ex.getMessage() + ")";
        }
    }

    private void publish(final EngineClient engine, final List<KeyBatch> batches, final BenchManager a)
    {
        final OperationResult result = new OperationResult(MAX_PEER_KEYS);
        for (final KeyBatch batch : batches)
        {
            engine.publish(batch, result);
            if (!result.isOk() || result.count(KeyStatus.STORED) != batch.keyCount())
            {
                a.checkAlive();
                throw new IllegalStateException("a stored " + result.count(KeyStatus.STORED) + " of " +
                    batch.keyCount() + " blocks: " + result.code() + " " + result.message());
            }
        }
    }

    private static void awaitPeers(final EngineClient engine, final List<KeyBatch> batches,
        final List<BenchManager> managers)
    {
        final OperationResult result = new OperationResult(MAX_PEER_KEYS);
        for (final KeyBatch batch : batches)
        {
            final StallDeadline stall = new StallDeadline(STALL_NS, 0, System.nanoTime());
            while (true)
            {
                engine.lookup(batch, false, true, result);
                final int peer = result.count(KeyStatus.PEER);
                if (peer == batch.keyCount())
                {
                    break;
                }
                for (final BenchManager m : managers)
                {
                    m.checkAlive();
                }
                if (stall.stalled(peer, System.nanoTime()))
                {
                    throw new IllegalStateException("b's lookups offered " + peer + " of " + batch.keyCount() +
                        " blocks published on a for " + TimeUnit.NANOSECONDS.toSeconds(STALL_NS) + " s");
                }
                Thread.yield();
            }
        }
    }

    private static EngineClient engine(final BenchManager manager, final String name, final long regionBytes)
    {
        return EngineClient.connect(new EngineClient.Context()
            .dir(manager.dir().toString())
            .clientName(name)
            .dataRegionBytes(regionBytes)
            .responseTimeoutNs(RESPONSE_TIMEOUT_NS));
    }

    private int warmupReps()
    {
        return Math.max(5, options.restoreReps() / 10);
    }

    private static Long firstOf(final Long first, final Long second)
    {
        return null != first ? first : second;
    }

    private static Long sum(final Long first, final Long second)
    {
        return null == first && null == second ? null : (null == first ? 0 : first) + (null == second ? 0 : second);
    }

    private static String text(final Long value)
    {
        return null == value ? "n/a" : Long.toString(value);
    }

    private static double min(final double[] values)
    {
        double min = Double.MAX_VALUE;
        for (final double v : values)
        {
            min = Math.min(min, v);
        }
        return min;
    }

    private static double max(final double[] values)
    {
        double max = 0;
        for (final double v : values)
        {
            max = Math.max(max, v);
        }
        return max;
    }

    static File defaultWorkParent()
    {
        final Path shm = Path.of("/dev/shm");
        return (Files.isDirectory(shm) ? shm : Path.of(System.getProperty("java.io.tmpdir"))).toFile();
    }
}
