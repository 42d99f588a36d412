package io.orbitkv.bench;

import java.io.File;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import io.orbitkv.catalog.JournalRecord;
import io.orbitkv.catalog.ShardInventory;
import io.orbitkv.catalog.ShardReceiver;
import io.orbitkv.catalog.SnapshotCut;
import io.orbitkv.codecs.CatalogLimits;
import io.orbitkv.codecs.StateKeyShard;
import io.orbitkv.codecs.catalog.ColdQueryResponseDecoder;
import io.orbitkv.index.CatalogRecordTable;
import io.orbitkv.index.NamespaceTable;
import io.orbitkv.manager.Configuration;
import io.orbitkv.manager.catalog.SnapshotSender;
import io.orbitkv.manager.peer.PeerClient;
import io.orbitkv.manager.peer.PeerCounter;
import io.orbitkv.manager.peer.PeerTransport;
import io.orbitkv.bench.peer.BenchPeer;
import org.HdrHistogram.Histogram;
import org.agrona.DirectBuffer;
import org.agrona.IoUtil;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.YieldingIdleStrategy;

/**
 * The catalog benchmarks of issue 5 against Redis (FlexKV's directory), every figure next to its anchor measured in
 * the same run:
 * <ol>
 *     <li>delta apply throughput at one catalog host (full CatalogDeltaBatch frames from a real ShardInventory and
 *     OwnerJournal, over loopback UDP between two peer transports on two threads) vs {@code redis-benchmark} pipelined
 *     SET;</li>
 *     <li>cold lookup of 128 keys over 3 catalog hosts (one ColdQuery per host, rows re-aligned) vs MGET of the same
 *     128 key bytes through a minimal Java RESP client;</li>
 *     <li>update lag (owner append to applied at the host) at a steady rate vs Redis SET issue-to-reply at the same
 *     rate; metadata bytes per record; index bytes per entry vs Redis used_memory per key; snapshot rebuild of a new
 *     host incarnation vs Redis DEBUG RELOAD of the same number of keys.</li>
 * </ol>
 */
final class CatalogBench
{
    static final byte[] NAMESPACE = "llama-3-70b/bf16/b16".getBytes(StandardCharsets.US_ASCII);
    static final int HASH_LENGTH = 32;
    static final int REDIS_VALUE_BYTES = 43;
    static final long FINGERPRINT = 0x0C47_A10CL;
    static final int QUERY_KEYS = CatalogLimits.MAX_COLD_QUERY_KEYS;
    static final int HOSTS = 3;
    private static final long AWAIT_NS = TimeUnit.SECONDS.toNanos(120);

    /** How long applying or acknowledging may make no progress at all before a wait for it fails. */
    private static final long STALL_NS = TimeUnit.SECONDS.toNanos(30);

    /**
     * Window an owner wants before it encodes a delta batch: a full batch of these keys is ~21 KiB, and a frame that
     * does not fit the rest of the term is preceded by padding that also consumes window.
     */
    private static final long FRAME_WINDOW_BYTES = 32 * 1024;

    /**
     * What the command line chose.
     */
    static final class Settings
    {
        long keys = 1_000_000;
        long records = 2_000_000;
        long warmupRecords = 400_000;
        int lookupKeys = 100_000;
        int queries = 20_000;
        int warmupQueries = 5_000;
        int lagRate = 100_000;
        int lagSeconds = 5;
        int termLength = PeerTransport.TERM_LENGTH;
        String driverIdle = "backoff";
        boolean hostThreads;
        boolean anchor = true;
        int redisPort = -1;
        String redisScript;
        Path dir;
    }

    private final Settings settings;
    private final PrintWriter out;
    private final Map<String, Object> results = new LinkedHashMap<>();
    private final List<String[]> summary = new ArrayList<>();
    private final UnsafeBuffer namespace = new UnsafeBuffer(NAMESPACE);
    private final StateKeyShard shardFunction = new StateKeyShard();
    private final byte[] hashes;
    private final UnsafeBuffer hashBuffer;
    private final byte[] shardOfKey;
    private final int keyPool;
    private RespClient redis;

    CatalogBench(final Settings settings, final PrintWriter out)
    {
        this.settings = settings;
        this.out = out;
        this.keyPool = (int)Math.max(settings.keys, settings.lookupKeys);
        this.hashes = new byte[keyPool * HASH_LENGTH];
        final SplittableRandom random = new SplittableRandom(0x5EED_CA7AL);
        for (int i = 0; i < hashes.length; i += 8)
        {
            final long v = random.nextLong();
            for (int b = 0; b < 8; b++)
            {
                hashes[i + b] = (byte)(v >>> (b * 8));
            }
        }
        this.hashBuffer = new UnsafeBuffer(hashes);
        this.shardOfKey = new byte[keyPool];
        final StateKeyShard shards = new StateKeyShard();
        for (int k = 0; k < keyPool; k++)
        {
            shardOfKey[k] = (byte)shards.shard(namespace, 0, NAMESPACE.length, hashBuffer, k * HASH_LENGTH, HASH_LENGTH);
        }
    }

    Map<String, Object> run() throws Exception
    {
        final long startNs = System.nanoTime();
        Files.createDirectories(settings.dir);
        results.put("driver_idle", settings.driverIdle);
        String redisName = null;
        try
        {
            if (settings.anchor)
            {
                int port = settings.redisPort;
                if (port <= 0)
                {
                    redisName = "bench-catalog-" + ProcessHandle.current().pid();
                    port = RespClient.startServer(settings.redisScript, redisName);
                }
                settings.redisPort = port;
                redis = new RespClient(port);
                redis.command(1).arg("FLUSHALL");
                redis.flush();
                redis.readReply();
                results.put("redis_version", redisVersion());
            }
            out.printf(Locale.ROOT, "bench catalog: %d keys (namespace %d B, hash %d B), %d records after %d warm-up," +
                " %d queries of %d keys over %d hosts, lag at %d records/s for %d s, term %d KiB, driver idle %s," +
                " anchor %s%n",
                settings.keys, NAMESPACE.length, HASH_LENGTH, settings.records, settings.warmupRecords,
                settings.queries, QUERY_KEYS, HOSTS, settings.lagRate, settings.lagSeconds, settings.termLength >> 10,
                settings.driverIdle, settings.anchor ? "redis 127.0.0.1:" + settings.redisPort : "none (--no-anchor)");
            out.flush();

            // Redis anchors run while no peer exists: an invoked Aeron client nobody services for the driver's
            // client liveness timeout (10 s) is closed by its driver.
            final double[] anchorSetRates = settings.anchor ?
                new double[]{ redisBenchmarkSet(false), redisBenchmarkSet(true) } : new double[]{ Double.NaN, Double.NaN };
            final double anchorReloadMs = settings.anchor ? redisLoadAndReload() : Double.NaN;
            try (BenchPeer owner = new BenchPeer(settings.dir, 0, 0xA0, 0xA1, FINGERPRINT, BenchPeer.allShards(),
                journalBudgetFor(settings.keys + settings.warmupRecords + settings.records), settings.termLength,
                driverIdle()))
            {
                final ShardInventory inventory = new ShardInventory(
                    owner.journal(), new NamespaceTable(), inventoryShardBudget(settings.keys));
                deltaThroughput(owner, inventory, anchorSetRates[0], anchorSetRates[1]);
                snapshotRebuild(owner, inventory, anchorReloadMs);
            }
            final int[] lookupKeys = coldLookupAndLag();
            lookupAndLagAnchors(lookupKeys);
        }
        finally
        {
            if (null != redis)
            {
                redis.close();
            }
            if (null != redisName)
            {
                RespClient.stopServer(settings.redisScript, redisName);
            }
            IoUtil.delete(settings.dir.toFile(), true);
        }
        results.put("elapsed_s", (System.nanoTime() - startNs) / 1e9);
        printSummary();
        return results;
    }

    // ---------------------------------------------------------------------------------------------------------------
    // 1. Delta apply throughput

    private void deltaThroughput(
        final BenchPeer owner, final ShardInventory inventory, final double anchorFillRate, final double anchorSetRate)
        throws InterruptedException
    {
        // The first pass over the keys inserts every one (views grow); the next records re-add them: a warm-up (the
        // JIT recompiles for the all-hits path), then the settings.records measured.
        final long steadyStart = settings.keys + settings.warmupRecords;
        final long total = steadyStart + settings.records;
        final long fillStartNs = System.nanoTime();
        for (int s = 0; s < CatalogLimits.SHARD_COUNT; s++)
        {
            owner.receiverSlot(1, s);
        }
        for (long i = 0; i < total; i++)
        {
            if (0 == (i & 0xFFFF))
            {
                owner.doWork();
            }
            final int key = (int)(i % settings.keys);
            if (inventory.add(JournalRecord.TIER_DRAM, namespace, 0, NAMESPACE.length, hashBuffer, key * HASH_LENGTH,
                HASH_LENGTH, 1_000_000L + i, 2 * 1024 * 1024) < 0)
            {
                throw new IllegalStateException("inventory refused record " + i + ": raise its shard budget");
            }
        }
        final double fillSeconds = (System.nanoTime() - fillStartNs) / 1e9;
        out.printf(Locale.ROOT, "%n[1] delta apply: owner journal holds %d records of %d distinct keys " +
            "(ShardInventory.add %.0f records/s, SHA-256 shard function included)%n", total, settings.keys,
            total / fillSeconds);
        out.flush();

        final long[] sent = new long[1];
        final long[] ownerBytesSent = new long[1];
        final long throughputRate;
        final long fillRate;
        final double hostCpuPerRecordNs;
        try (BenchPeer host = new BenchPeer(settings.dir, 1, 0xB0, 0xB1, FINGERPRINT, BenchPeer.allShards(),
            1L << 20, settings.termLength, driverIdle()))
        {
            host.admitOwner(0, owner.incarnationMsb(), owner.incarnationLsb());
            final PeerClient client = connect(owner, host);
            final int maxBatch = owner.catalogProxy().maxBatchRecords();
            final long ownerBytesBefore = owner.counter(PeerCounter.METADATA_BYTES_SENT);
            final long hostBytesBefore = host.counter(PeerCounter.METADATA_BYTES_SENT);
            final long ackFramesBefore = owner.counter(PeerCounter.FRAMES_ACK);

            final AtomicBoolean running = new AtomicBoolean(true);
            final Thread ownerThread = new Thread(() ->
            {
                final IdleStrategy idle = agentIdleStrategy();
                final long[] next = new long[CatalogLimits.SHARD_COUNT];
                java.util.Arrays.fill(next, 1);
                long count = 0;
                while (running.get())
                {
                    int work = owner.doWork();
                    for (int s = 0; s < CatalogLimits.SHARD_COUNT; s++)
                    {
                        // Pace on the publication window: PeerProxy reads and encodes a batch before it offers it,
                        // so sending into a back-pressured publication would re-encode the same batch in a loop.
                        if (next[s] <= owner.journal().lastSequence(s) &&
                            owner.publisher().availableWindow(client) >= FRAME_WINDOW_BYTES)
                        {
                            final int n = owner.catalogProxy().sendDeltaBatch(client, s, owner.journal(), next[s], maxBatch);
                            if (n > 0)
                            {
                                next[s] += n;
                                count += n;
                                work++;
                            }
                            else if (n < 0)
                            {
                                owner.errors().add(new IllegalStateException("journal lost shard " + s));
                            }
                        }
                    }
                    idle.idle(work);
                }
                sent[0] = count;
            }, "bench-owner");
            final Thread hostThread = new Thread(() ->
            {
                final IdleStrategy idle = agentIdleStrategy();
                while (running.get())
                {
                    idle.idle(host.doWork());
                }
            }, "bench-host");
            final long sendStartNs = System.nanoTime();
            ownerThread.start();
            hostThread.start();
            try
            {
                final java.lang.management.ThreadMXBean threads =
                    java.lang.management.ManagementFactory.getThreadMXBean();
                awaitApplied(host, settings.warmupRecords);
                final long firstPassStartNs = System.nanoTime();
                final long firstPassStartApplied = host.appliedRecords();
                awaitApplied(host, settings.keys);
                final long firstPassApplied = host.appliedRecords() - firstPassStartApplied;
                // A host fast enough to apply the whole first pass before the warm-up was seen leaves an empty window:
                // then the pass is timed from the first send, warm-up included (a lower bound of the rate).
                fillRate = firstPassApplied > 0 ?
                    Math.round(firstPassApplied * 1e9 / (System.nanoTime() - firstPassStartNs)) :
                    Math.round(host.appliedRecords() * 1e9 / (System.nanoTime() - sendStartNs));
                awaitApplied(host, steadyStart);
                final long startNs = System.nanoTime();
                final long startApplied = host.appliedRecords();
                final long hostCpuStartNs = threads.getThreadCpuTime(hostThread.threadId());
                final long ownerCpuStartNs = threads.getThreadCpuTime(ownerThread.threadId());
                awaitApplied(host, total);
                final long endNs = System.nanoTime();
                final long endApplied = host.appliedRecords();
                final long hostCpuNs = threads.getThreadCpuTime(hostThread.threadId()) - hostCpuStartNs;
                final long ownerCpuNs = threads.getThreadCpuTime(ownerThread.threadId()) - ownerCpuStartNs;
                throughputRate = Math.round((endApplied - startApplied) * 1e9 / (endNs - startNs));
                hostCpuPerRecordNs = (double)hostCpuNs / (endApplied - startApplied);
                final double ownerCpuPerRecordNs = (double)ownerCpuNs / (endApplied - startApplied);
                out.printf(Locale.ROOT, "    first pass (records %d..%d insert new keys, views grow by doubling): " +
                    "%d records/s%n", settings.warmupRecords, settings.keys, fillRate);
                out.printf(Locale.ROOT, "    steady state (records %d..%d re-add held keys): %d records/s; CPU per " +
                    "record: host agent thread %.0f ns (%.0f records per host CPU-second), owner thread %.0f ns; wall " +
                    "%.2f s (each thread also runs its embedded driver)%n", steadyStart, total, throughputRate,
                    hostCpuPerRecordNs, 1e9 / hostCpuPerRecordNs, ownerCpuPerRecordNs, (endNs - startNs) / 1e9);
                results.put("delta_apply_host_cpu_ns_per_record", hostCpuPerRecordNs);
                results.put("delta_apply_owner_cpu_ns_per_record", ownerCpuPerRecordNs);
                results.put("delta_apply_records_per_host_cpu_s", 1e9 / hostCpuPerRecordNs);
                // Let the last acks arrive before the threads stop.
                final long ackDeadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
                while (System.nanoTime() - ackDeadlineNs < 0 && !allAcked(owner, 1))
                {
                    Thread.sleep(1);
                }
            }
            finally
            {
                running.set(false);
                ownerThread.join();
                hostThread.join();
            }
            ownerBytesSent[0] = owner.counter(PeerCounter.METADATA_BYTES_SENT) - ownerBytesBefore;
            final long hostBytes = host.counter(PeerCounter.METADATA_BYTES_SENT) - hostBytesBefore;
            final long batches = host.counter(PeerCounter.FRAMES_DELTA_BATCH);
            final long acks = owner.counter(PeerCounter.FRAMES_ACK) - ackFramesBefore;
            final long applied = host.appliedRecords();
            checkErrors(owner, host);

            int entries = 0;
            long reserved = 0;
            for (int s = 0; s < CatalogLimits.SHARD_COUNT; s++)
            {
                final ShardReceiver receiver = host.directory().receiver(0, s);
                entries += receiver.viewSize();
                reserved += receiver.reservedBytes();
            }
            final double batchBytes = (double)ownerBytesSent[0] / Math.max(1, batches);
            final double perRecordFull = (double)(ownerBytesSent[0] + hostBytes) / Math.max(1, applied);
            out.printf(Locale.ROOT, "    host applied %d records in %d full batches (%.0f records, %.0f B per batch" +
                " frame), %d ack frames%n", applied, batches, (double)applied / Math.max(1, batches), batchBytes, acks);
            results.put("delta_apply_records_per_s", throughputRate);
            results.put("delta_apply_first_pass_records_per_s", fillRate);
            results.put("delta_apply_records", applied);
            results.put("delta_batches", batches);
            results.put("delta_records_per_batch", (double)applied / Math.max(1, batches));
            results.put("delta_bytes_per_record_full_batches", perRecordFull);
            results.put("delta_ack_bytes_per_record_full_batches", (double)hostBytes / Math.max(1, applied));
            results.put("host_view_entries", entries);
            results.put("host_index_bytes_per_entry", (double)host.directory().budget().reservedBytes() / entries);
            results.put("host_receiver_reserved_bytes_per_entry", (double)reserved / entries);
            results.put("catalog_record_table_bytes_per_entry_exact_fit",
                (double)CatalogRecordTable.budgetFor(entries / CatalogLimits.SHARD_COUNT) /
                (entries / CatalogLimits.SHARD_COUNT));
            out.printf(Locale.ROOT, "    host view: %d entries, HostBudget reserved %.1f B/entry (views sized by " +
                "doubling), CatalogRecordTable exact fit %.1f B/entry%n", entries,
                (double)host.directory().budget().reservedBytes() / entries,
                (double)CatalogRecordTable.budgetFor(entries / CatalogLimits.SHARD_COUNT) /
                (entries / CatalogLimits.SHARD_COUNT));
            out.flush();
        }
        owner.removeReceivers(1);
        final double anchorSetsPerCpuSecond = results.containsKey("anchor_redis_sets_per_server_cpu_s") ?
            (double)results.get("anchor_redis_sets_per_server_cpu_s") : Double.NaN;
        final double perCpu = 1e9 / hostCpuPerRecordNs;
        results.put("delta_apply_per_cpu_ratio", perCpu / anchorSetsPerCpuSecond);
        summary.add(new String[]{ "delta apply per host CPU-second (agent thread)", String.format(Locale.ROOT, "%,.0f",
            perCpu), "redis-server SETs per server CPU-second: " + fmt(anchorSetsPerCpuSecond, "%,.0f"),
            ratio(perCpu / anchorSetsPerCpuSecond), "diagnostic" });
        results.put("anchor_redis_set_p64_rps", anchorSetRate);
        results.put("anchor_redis_set_p64_empty_db_rps", anchorFillRate);
        final double ratio = throughputRate / anchorSetRate;
        results.put("delta_apply_ratio", ratio);
        final double fillRatio = fillRate / anchorFillRate;
        results.put("delta_apply_first_pass_ratio", fillRatio);
        summary.add(new String[]{ "delta apply at one host, steady state (records/s)", String.format(Locale.ROOT,
            "%,d", throughputRate), "redis-benchmark SET -P 64 -d 96 over existing keys: " +
            fmt(anchorSetRate, "%,.0f"), ratio(ratio), ">= 3x" });
        summary.add(new String[]{ "delta apply at one host, first pass (records/s)", String.format(Locale.ROOT,
            "%,d", fillRate), "redis-benchmark SET -P 64 -d 96 into an empty db: " + fmt(anchorFillRate, "%,.0f"),
            ratio(fillRatio), ">= 3x" });
    }

    private static boolean allAcked(final BenchPeer owner, final int hostNode)
    {
        for (int s = 0; s < CatalogLimits.SHARD_COUNT; s++)
        {
            if (owner.ackedSequence(hostNode, s) < owner.journal().lastSequence(s))
            {
                return false;
            }
        }
        return true;
    }

    /**
     * Idle strategy of the bench's agent threads: the one a Manager's agent uses by default (spin, yield, then park
     * up to 100 us; {@code -Dorbitkv.manager.idle.strategy} changes it).
     */
    private static IdleStrategy agentIdleStrategy()
    {
        return Configuration.newIdleStrategy(Configuration.idleStrategyName());
    }

    private static void awaitApplied(final BenchPeer host, final long records) throws InterruptedException
    {
        final StallDeadline deadline = new StallDeadline(STALL_NS, host.appliedRecords(), System.nanoTime());
        while (host.appliedRecords() < records)
        {
            if (deadline.stalled(host.appliedRecords(), System.nanoTime()))
            {
                throw new IllegalStateException("host applied only " + host.appliedRecords() + " of " + records +
                    " records, none in the last " + TimeUnit.NANOSECONDS.toSeconds(STALL_NS) + " s; errors: " +
                    host.errors());
            }
            if (!host.errors().isEmpty())
            {
                throw new IllegalStateException("host errors: " + host.errors());
            }
            // The observer wakes rarely: each wake takes a core from the two agent threads for a moment.
            Thread.sleep(1);
        }
    }

    // ---------------------------------------------------------------------------------------------------------------
    // 3b. Snapshot rebuild of a new host incarnation

    private void snapshotRebuild(final BenchPeer owner, final ShardInventory inventory, final double anchorReloadMs)
    {
        long entries = 0;
        for (int s = 0; s < CatalogLimits.SHARD_COUNT; s++)
        {
            entries += inventory.size(s);
        }
        try (BenchPeer host = new BenchPeer(settings.dir, 2, 0xC0, 0xC1, FINGERPRINT, BenchPeer.allShards(),
            1L << 20, settings.termLength, driverIdle()))
        {
            host.admitOwner(0, owner.incarnationMsb(), owner.incarnationLsb());
            final PeerClient client = connect(owner, host);
            final SnapshotCut[] cuts = new SnapshotCut[CatalogLimits.SHARD_COUNT];
            final SnapshotSender[] senders = new SnapshotSender[CatalogLimits.SHARD_COUNT];
            for (int s = 0; s < CatalogLimits.SHARD_COUNT; s++)
            {
                senders[s] = owner.catalogProxy().snapshotSender(client, s);
                cuts[s] = new SnapshotCut(s, owner.receiverSlot(2, s), inventory, senders[s]);
            }
            // A cut step sends at most one frame, and an offer succeeds while the publication is below its flow
            // control limit, unless the frame does not fit the rest of the term: then the padding to the term's end
            // (less than one frame) is appended first and may use up the window. Step only with a frame's worth of
            // window (a page of 128 records of the longest keys is ~47 KiB), or the sender counts a failed offer and
            // breaks the attempt.
            final long frameBudget = Math.min(owner.publisher().maxMessageBytes(), 48 * 1024);
            final long[] brokenSeen = new long[CatalogLimits.SHARD_COUNT];
            long restarts = 0;
            final long startNs = System.nanoTime();
            for (final SnapshotCut cut : cuts)
            {
                cut.start();
            }
            final long deadlineNs = startNs + AWAIT_NS / 2;
            while (!rebuilt(host, entries))
            {
                int work = 0;
                for (int s = 0; s < CatalogLimits.SHARD_COUNT; s++)
                {
                    final SnapshotCut cut = cuts[s];
                    if (owner.publisher().availableWindow(client) >= frameBudget)
                    {
                        work += cut.doWork(System.nanoTime());
                    }
                    if (SnapshotCut.FAILED == cut.state())
                    {
                        throw new IllegalStateException("snapshot cut failed");
                    }
                    if (SnapshotCut.COMPLETE == cut.state() && senders[s].brokenSnapshots() > brokenSeen[s])
                    {
                        // The sink gave up on a frame but the cut itself completed: the host can never install
                        // this attempt, so cut again (what the owner does when the host asks for a resync).
                        brokenSeen[s] = senders[s].brokenSnapshots();
                        restarts++;
                        cut.start();
                    }
                }
                work += owner.doWork();
                work += host.doWork();
                if (0 == work)
                {
                    Thread.yield();
                }
                if (System.nanoTime() - deadlineNs > 0)
                {
                    final StringBuilder state = new StringBuilder();
                    for (int s = 0; s < CatalogLimits.SHARD_COUNT; s++)
                    {
                        final ShardReceiver receiver = host.directory().receiver(0, s);
                        state.append(String.format(Locale.ROOT, "%n  shard %d: cut state %d attempts %d broken %d;" +
                            " host mode %d view %d installed %d abandoned %d", s, cuts[s].state(), cuts[s].attempts(),
                            senders[s].brokenSnapshots(), receiver.mode(), receiver.viewSize(),
                            receiver.snapshotsInstalled(), receiver.snapshotsAbandoned()));
                    }
                    throw new IllegalStateException("snapshot rebuild timed out; host rejections " +
                        host.rejections() + ", owner failed offers " + owner.counter(PeerCounter.OFFERS_FAILED) +
                        ", errors " + host.errors() + state);
                }
            }
            final long elapsedNs = System.nanoTime() - startNs;
            long broken = 0;
            for (final SnapshotSender sender : senders)
            {
                broken += sender.brokenSnapshots();
            }
            checkErrors(owner, host);
            final double ms = elapsedNs / 1e6;
            out.printf(Locale.ROOT, "%n[3] snapshot rebuild: new host incarnation STREAMING on 16 shards with %d " +
                "entries after %.0f ms (%.0f entries/s, %d broken attempts, %d cuts restarted); HostBudget %.1f B/entry%n",
                entries, ms, entries * 1e9 / elapsedNs, broken, restarts,
                (double)host.directory().budget().reservedBytes() / entries);
            out.flush();
            results.put("snapshot_entries", entries);
            results.put("snapshot_rebuild_ms", ms);
            results.put("snapshot_broken_attempts", broken);
            results.put("snapshot_cuts_restarted", restarts);
            results.put("snapshot_host_index_bytes_per_entry",
                (double)host.directory().budget().reservedBytes() / entries);
            results.put("anchor_redis_debug_reload_ms", anchorReloadMs);
            final double ratio = ms / anchorReloadMs;
            results.put("snapshot_rebuild_ratio", ratio);
            summary.add(new String[]{ "snapshot rebuild, " + entries + " entries (ms)", fmt(ms, "%.0f"),
                "redis DEBUG RELOAD (RDB save+load): " + fmt(anchorReloadMs, "%.0f"), ratio(ratio), "report" });
        }
        owner.removeReceivers(2);
        final double ours = (double)results.get("host_index_bytes_per_entry");
        final double anchor = results.containsKey("anchor_redis_bytes_per_key") ?
            (double)results.get("anchor_redis_bytes_per_key") : Double.NaN;
        results.put("index_bytes_per_entry_ratio", ours / anchor);
        summary.add(new String[]{ "index bytes per entry at host (HostBudget)", fmt(ours, "%.1f"),
            "redis used_memory per key: " + fmt(anchor, "%.1f"), ratio(ours / anchor), "report" });
    }

    private static boolean rebuilt(final BenchPeer host, final long entries)
    {
        long total = 0;
        for (int s = 0; s < CatalogLimits.SHARD_COUNT; s++)
        {
            final ShardReceiver receiver = host.directory().receiver(0, s);
            if (ShardReceiver.STREAMING != receiver.mode() || 0 == receiver.snapshotsInstalled())
            {
                return false;
            }
            total += receiver.viewSize();
        }
        return total == entries;
    }

    // ---------------------------------------------------------------------------------------------------------------
    // 2. Cold lookups over 3 hosts, and 3a. update lag

    private int[] coldLookupAndLag() throws InterruptedException
    {
        final int lookupKeys = settings.lookupKeys;
        final long lagRecords = (long)settings.lagRate * settings.lagSeconds;
        final BenchPeer[] hosts = new BenchPeer[HOSTS];
        final int[] hostOfShard = new int[CatalogLimits.SHARD_COUNT];
        try (BenchPeer owner = new BenchPeer(settings.dir, 10, 0xD0, 0xD1, FINGERPRINT, BenchPeer.allShards(),
            journalBudgetFor(lookupKeys + lagRecords), settings.termLength, driverIdle()))
        {
            final ShardInventory inventory =
                new ShardInventory(owner.journal(), new NamespaceTable(), inventoryShardBudget(lookupKeys));
            final PeerClient[] clients = new PeerClient[HOSTS];
            final PeerClient[] clientOfShard = new PeerClient[CatalogLimits.SHARD_COUNT];
            try
            {
                for (int h = 0; h < HOSTS; h++)
                {
                    final boolean[] hosted = new boolean[CatalogLimits.SHARD_COUNT];
                    for (int s = h; s < CatalogLimits.SHARD_COUNT; s += HOSTS)
                    {
                        hosted[s] = true;
                        hostOfShard[s] = h;
                    }
                    hosts[h] = new BenchPeer(settings.dir, 11 + h, 0xE0 + h, 0xF0 + h, FINGERPRINT, hosted, 1L << 20,
                        settings.termLength, driverIdle());
                    hosts[h].admitOwner(owner.nodeIndex(), owner.incarnationMsb(), owner.incarnationLsb());
                }
                for (int h = 0; h < HOSTS; h++)
                {
                    clients[h] = connect(owner, hosts[h]);
                }
                for (int s = 0; s < CatalogLimits.SHARD_COUNT; s++)
                {
                    clientOfShard[s] = clients[hostOfShard[s]];
                    owner.receiverSlot(hosts[hostOfShard[s]].nodeIndex(), s);
                }

                // Evidence for the lookup keys: published by the owner, streamed to the hosts, acked.
                final long[] next = new long[CatalogLimits.SHARD_COUNT];
                java.util.Arrays.fill(next, 1);
                for (int k = 0; k < lookupKeys; k++)
                {
                    add(inventory, k, k);
                }
                streamAll(owner, hosts, clientOfShard, hostOfShard, next);
                final int[] queryKeys;
                if (settings.hostThreads)
                {
                    queryKeys = coldLookupsWithHostThreads(owner, hosts, clients, hostOfShard);
                }
                else
                {
                    queryKeys = coldLookups(owner, hosts, clients, hostOfShard, hosts);
                }
                updateLag(owner, hosts, inventory, clientOfShard, hostOfShard, next);
                checkErrors(owner);
                for (final BenchPeer host : hosts)
                {
                    checkErrors(host);
                }
                return queryKeys;
            }
            finally
            {
                for (final BenchPeer host : hosts)
                {
                    if (null != host)
                    {
                        host.close();
                    }
                }
            }
        }
    }

    private long add(final ShardInventory inventory, final int key, final long insertionSequence)
    {
        final long sequence = inventory.add(JournalRecord.TIER_DRAM, namespace, 0, NAMESPACE.length, hashBuffer,
            key * HASH_LENGTH, HASH_LENGTH, insertionSequence, 2 * 1024 * 1024);
        if (sequence < 0)
        {
            throw new IllegalStateException("inventory refused key " + key + ": " + sequence);
        }
        return sequence;
    }

    private static int sendPending(
        final BenchPeer owner, final PeerClient[] clientOfShard, final long[] next)
    {
        int work = 0;
        final int maxBatch = owner.catalogProxy().maxBatchRecords();
        for (int s = 0; s < CatalogLimits.SHARD_COUNT; s++)
        {
            if (next[s] <= owner.journal().lastSequence(s) &&
                owner.publisher().availableWindow(clientOfShard[s]) >= FRAME_WINDOW_BYTES)
            {
                final int n = owner.catalogProxy().sendDeltaBatch(clientOfShard[s], s, owner.journal(), next[s], maxBatch);
                if (n > 0)
                {
                    next[s] += n;
                    work++;
                }
                else if (n < 0)
                {
                    throw new IllegalStateException("owner journal no longer holds shard " + s + " from " + next[s]);
                }
            }
        }
        return work;
    }

    private static int dutyAll(final BenchPeer owner, final BenchPeer[] hosts)
    {
        int work = owner.doWork();
        for (final BenchPeer host : hosts)
        {
            work += host.doWork();
        }
        return work;
    }

    private static void streamAll(
        final BenchPeer owner, final BenchPeer[] hosts, final PeerClient[] clientOfShard, final int[] hostOfShard,
        final long[] next)
    {
        final StallDeadline deadline = new StallDeadline(STALL_NS, 0, System.nanoTime());
        while (true)
        {
            boolean done = true;
            long acked = 0;
            for (int s = 0; s < CatalogLimits.SHARD_COUNT; s++)
            {
                final long shardAcked = owner.ackedSequence(hosts[hostOfShard[s]].nodeIndex(), s);
                acked += shardAcked;
                done &= shardAcked == owner.journal().lastSequence(s);
            }
            if (done)
            {
                return;
            }
            if (0 == sendPending(owner, clientOfShard, next) + dutyAll(owner, hosts))
            {
                Thread.yield();
            }
            if (deadline.stalled(acked, System.nanoTime()))
            {
                throw new IllegalStateException("streaming to the hosts made no progress for " +
                    TimeUnit.NANOSECONDS.toSeconds(STALL_NS) + " s; errors " + owner.errors());
            }
        }
    }

    /**
     * One 128-key lookup fanned out as one ColdQuery per host, rows re-aligned to the request order.
     */
    private final class LookupFanOut implements BenchPeer.ColdResponseListener
    {
        final UnsafeBuffer[][] hashViews = new UnsafeBuffer[HOSTS][QUERY_KEYS];
        final DirectBuffer[][] namespaces = new DirectBuffer[HOSTS][QUERY_KEYS];
        final int[][] namespaceLengths = new int[HOSTS][QUERY_KEYS];
        final int[][] hashLengths = new int[HOSTS][QUERY_KEYS];
        final int[][] keyShards = new int[HOSTS][QUERY_KEYS];
        final int[][] requestIndex = new int[HOSTS][QUERY_KEYS];
        final int[] count = new int[HOSTS];
        final int[] shardOfQuery = new int[HOSTS];
        final long[] correlation = new long[HOSTS];
        final int[] candidates = new int[QUERY_KEYS];
        final int firstHostNode;
        int responses;
        long mismatches;

        LookupFanOut(final int firstHostNode)
        {
            this.firstHostNode = firstHostNode;
            for (int h = 0; h < HOSTS; h++)
            {
                for (int i = 0; i < QUERY_KEYS; i++)
                {
                    hashViews[h][i] = new UnsafeBuffer(hashes, 0, HASH_LENGTH);
                    namespaces[h][i] = namespace;
                    namespaceLengths[h][i] = NAMESPACE.length;
                    hashLengths[h][i] = HASH_LENGTH;
                }
            }
        }

        public void onColdQueryResponse(final PeerClient client, final ColdQueryResponseDecoder response)
        {
            final int h = client.remoteNodeIndex() - firstHostNode;
            if (h < 0 || h >= HOSTS || response.correlationId() != correlation[h])
            {
                return;
            }
            final ColdQueryResponseDecoder.RowsDecoder rows = response.rows();
            while (rows.hasNext())
            {
                rows.next();
                final int row = rows.rowIndex();
                final ColdQueryResponseDecoder.RowsDecoder.CandidatesDecoder found = rows.candidates();
                if (row < count[h])
                {
                    candidates[requestIndex[h][row]] = found.count();
                }
                while (found.hasNext())
                {
                    found.next();
                }
            }
            responses++;
        }
    }

    /**
     * The lookup phase with each host's agent on its own thread (the deployment shape: hosts answer in parallel); the
     * bench thread runs only the requester. The threads are joined before the hosts are touched again.
     */
    private int[] coldLookupsWithHostThreads(
        final BenchPeer owner, final BenchPeer[] hosts, final PeerClient[] clients, final int[] hostOfShard)
        throws InterruptedException
    {
        final AtomicBoolean running = new AtomicBoolean(true);
        final Thread[] threads = new Thread[hosts.length];
        for (int h = 0; h < hosts.length; h++)
        {
            final BenchPeer host = hosts[h];
            threads[h] = new Thread(() ->
            {
                final IdleStrategy idle = agentIdleStrategy();
                while (running.get())
                {
                    idle.idle(host.doWork());
                }
            }, "bench-host-" + h);
            threads[h].start();
        }
        try
        {
            return coldLookups(owner, hosts, clients, hostOfShard, new BenchPeer[0]);
        }
        finally
        {
            running.set(false);
            for (final Thread thread : threads)
            {
                thread.join();
            }
        }
    }

    private int[] coldLookups(
        final BenchPeer owner,
        final BenchPeer[] hosts,
        final PeerClient[] clients,
        final int[] hostOfShard,
        final BenchPeer[] invokedHosts)
    {
        final LookupFanOut fanOut = new LookupFanOut(hosts[0].nodeIndex());
        owner.coldResponseListener(fanOut);
        final int total = settings.warmupQueries + settings.queries;
        final int[] keys = new int[total * QUERY_KEYS];
        final SplittableRandom random = new SplittableRandom(0xC01D);
        for (int i = 0; i < keys.length; i++)
        {
            keys[i] = random.nextInt(settings.lookupKeys);
        }
        final Histogram ours = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
        final byte[] request = new byte[QUERY_KEYS * HASH_LENGTH];
        final UnsafeBuffer requestBuffer = new UnsafeBuffer(request);
        final long deadlineNs = System.nanoTime() + AWAIT_NS;
        for (int q = 0; q < total; q++)
        {
            requestKeys(keys, q, request);
            final long startNs = System.nanoTime();
            java.util.Arrays.fill(fanOut.count, 0);
            for (int i = 0; i < QUERY_KEYS; i++)
            {
                // The requester hashes every key to find its shard, as a Manager's discovery does.
                final int shard = shardFunction.shard(namespace, 0, NAMESPACE.length, requestBuffer, i * HASH_LENGTH,
                    HASH_LENGTH);
                final int h = hostOfShard[shard];
                final int at = fanOut.count[h]++;
                fanOut.hashViews[h][at].wrap(request, i * HASH_LENGTH, HASH_LENGTH);
                fanOut.requestIndex[h][at] = i;
                fanOut.keyShards[h][at] = shard;
                if (0 == at)
                {
                    fanOut.shardOfQuery[h] = shard;
                }
                fanOut.candidates[i] = -1;
            }
            fanOut.responses = 0;
            int expected = 0;
            for (int h = 0; h < HOSTS; h++)
            {
                if (fanOut.count[h] > 0)
                {
                    expected++;
                    fanOut.correlation[h] = owner.publisher().nextCorrelationId();
                    while (!owner.catalogProxy().sendColdQuery(clients[h], fanOut.correlation[h], fanOut.shardOfQuery[h],
                        fanOut.count[h], fanOut.keyShards[h], fanOut.namespaces[h], fanOut.namespaceLengths[h], fanOut.hashViews[h],
                        fanOut.hashLengths[h]))
                    {
                        dutyAll(owner, invokedHosts);
                    }
                }
            }
            while (fanOut.responses < expected)
            {
                // The lookup ends when the requester holds every answer: hosts run elsewhere in a cluster, so their
                // idle polls after answering are not run on this lookup's clock.
                int work = owner.doWork();
                for (int h = 0; h < invokedHosts.length && fanOut.responses < expected; h++)
                {
                    work += invokedHosts[h].doWork();
                }
                if (0 == work)
                {
                    Thread.yield();
                }
                if (System.nanoTime() - deadlineNs > 0)
                {
                    throw new IllegalStateException("cold query " + q + " timed out; errors " + owner.errors());
                }
            }
            final long elapsedNs = System.nanoTime() - startNs;
            for (int i = 0; i < QUERY_KEYS; i++)
            {
                if (fanOut.candidates[i] < 1)
                {
                    fanOut.mismatches++;
                }
            }
            if (q >= settings.warmupQueries)
            {
                ours.recordValue(elapsedNs);
            }
        }
        owner.coldResponseListener(null);
        if (fanOut.mismatches > 0)
        {
            throw new IllegalStateException(fanOut.mismatches + " looked-up keys came back without a candidate");
        }
        out.printf(Locale.ROOT, "%n[2] cold lookup, 128 keys over 3 hosts" + (settings.hostThreads ?
            " (hosts on their own threads)" : " (requester and hosts on one thread)") + " (%d queries after %d warm-up): " +
            "p50 %.1f us, p99 %.1f us, p99.9 %.1f us, max %.1f us%n", settings.queries, settings.warmupQueries,
            ours.getValueAtPercentile(50) / 1e3, ours.getValueAtPercentile(99) / 1e3,
            ours.getValueAtPercentile(99.9) / 1e3, ours.getMaxValue() / 1e3);
        out.flush();
        results.put("cold_lookup_host_threads", settings.hostThreads);
        results.put("cold_lookup_p50_us", ours.getValueAtPercentile(50) / 1e3);
        results.put("cold_lookup_p99_us", ours.getValueAtPercentile(99) / 1e3);
        results.put("cold_lookup_p999_us", ours.getValueAtPercentile(99.9) / 1e3);
        return keys;
    }

    /**
     * Copy query {@code q}'s key hashes into one contiguous request, outside the timed region of both the lookup and
     * its MGET anchor: an engine hands a lookup's keys over in one request message (a prefix chain), not scattered
     * over the bench's whole key pool, whose cache misses would otherwise be timed (serialised behind each key's
     * SHA-256 on our side).
     */
    private void requestKeys(final int[] keys, final int q, final byte[] request)
    {
        for (int i = 0; i < QUERY_KEYS; i++)
        {
            System.arraycopy(hashes, keys[q * QUERY_KEYS + i] * HASH_LENGTH, request, i * HASH_LENGTH, HASH_LENGTH);
        }
    }

    /**
     * Redis anchors of the lookup and lag phases, run after the peers closed (see {@link #run()}).
     */
    private void lookupAndLagAnchors(final int[] keys) throws IOException
    {
        final long records = (long)settings.lagRate * settings.lagSeconds;
        final double bytesPerRecord = (double)results.get("metadata_bytes_per_record_steady");
        double anchorP50 = Double.NaN;
        double anchorP99 = Double.NaN;
        if (settings.anchor)
        {
            final Histogram mget = redisMget(keys, keys.length / QUERY_KEYS);
            anchorP50 = mget.getValueAtPercentile(50) / 1e3;
            anchorP99 = mget.getValueAtPercentile(99) / 1e3;
            out.printf(Locale.ROOT, "%n[2] anchor: redis MGET of the same 128 key bytes (Java RESP client, same loop): " +
                "p50 %.1f us, p99 %.1f us, p99.9 %.1f us, max %.1f us%n", anchorP50, anchorP99,
                mget.getValueAtPercentile(99.9) / 1e3, mget.getMaxValue() / 1e3);
            out.flush();
        }
        results.put("anchor_redis_mget_p50_us", anchorP50);
        results.put("anchor_redis_mget_p99_us", anchorP99);
        results.put("cold_lookup_p50_ratio", (double)results.get("cold_lookup_p50_us") / anchorP50);
        results.put("cold_lookup_p99_ratio", (double)results.get("cold_lookup_p99_us") / anchorP99);
        summary.add(new String[]{ "cold lookup 128 keys / 3 hosts, p50 (us)",
            fmt((double)results.get("cold_lookup_p50_us"), "%.1f"), "redis MGET 128: " + fmt(anchorP50, "%.1f"),
            ratio((double)results.get("cold_lookup_p50_ratio")), "report" });
        summary.add(new String[]{ "cold lookup 128 keys / 3 hosts, p99 (us)",
            fmt((double)results.get("cold_lookup_p99_us"), "%.1f"), "redis MGET 128: " + fmt(anchorP99, "%.1f"),
            ratio((double)results.get("cold_lookup_p99_ratio")), "<= 1x" });

        anchorP50 = Double.NaN;
        anchorP99 = Double.NaN;
        double anchorBytes = Double.NaN;
        if (settings.anchor)
        {
            final Histogram set = redisPacedSet(records);
            anchorP50 = set.getValueAtPercentile(50) / 1e3;
            anchorP99 = set.getValueAtPercentile(99) / 1e3;
            // One SET of the same key and value bytes on the wire, plus its +OK reply.
            redis.command(3).arg("SET").arg(NAMESPACE, NAMESPACE.length, hashes, 0, HASH_LENGTH)
                .arg(new byte[REDIS_VALUE_BYTES], 0, REDIS_VALUE_BYTES);
            anchorBytes = redis.pendingBytes() + "+OK\r\n".length();
            redis.flush();
            redis.readReply();
            out.printf(Locale.ROOT, "[3] anchor: redis SET of the same keys at the same rate, issue -> reply p50 %.1f " +
                "us, p99 %.1f us, p99.9 %.1f us; %.0f B on the wire per SET + reply%n", anchorP50, anchorP99,
                set.getValueAtPercentile(99.9) / 1e3, anchorBytes);
            out.flush();
        }
        results.put("anchor_redis_set_lag_p50_us", anchorP50);
        results.put("anchor_redis_set_lag_p99_us", anchorP99);
        results.put("anchor_redis_bytes_per_set", anchorBytes);
        results.put("update_lag_p50_ratio", (double)results.get("update_lag_p50_us") / anchorP50);
        results.put("update_lag_p99_ratio", (double)results.get("update_lag_p99_us") / anchorP99);
        results.put("metadata_bytes_ratio", bytesPerRecord / anchorBytes);
        summary.add(new String[]{ "update lag p50 at " + settings.lagRate + "/s (us)",
            fmt((double)results.get("update_lag_p50_us"), "%.1f"), "redis SET issue->reply: " + fmt(anchorP50, "%.1f"),
            ratio((double)results.get("update_lag_p50_ratio")), "report" });
        summary.add(new String[]{ "update lag p99 at " + settings.lagRate + "/s (us)",
            fmt((double)results.get("update_lag_p99_us"), "%.1f"), "redis SET issue->reply: " + fmt(anchorP99, "%.1f"),
            ratio((double)results.get("update_lag_p99_ratio")), "report" });
        summary.add(new String[]{ "metadata bytes per record, steady (delta+ack)", fmt(bytesPerRecord, "%.1f"),
            "redis SET + reply: " + fmt(anchorBytes, "%.0f"), ratio(bytesPerRecord / anchorBytes), "report" });
        final double full = (double)results.get("delta_bytes_per_record_full_batches");
        summary.add(new String[]{ "metadata bytes per record, full batches", fmt(full, "%.1f"),
            "redis SET + reply: " + fmt(anchorBytes, "%.0f"), ratio(full / anchorBytes), "report" });
    }

    private Histogram redisMget(final int[] keys, final int total) throws IOException
    {
        // The same evidence in Redis: key = namespace + hash bytes, value = one candidate (owner, incarnation,
        // insertion sequence, generation, tier, size).
        final byte[] value = new byte[REDIS_VALUE_BYTES];
        for (int k = 0; k < settings.lookupKeys; k += 1000)
        {
            final int end = Math.min(settings.lookupKeys, k + 1000);
            for (int i = k; i < end; i++)
            {
                redis.command(3).arg("SET").arg(NAMESPACE, NAMESPACE.length, hashes, i * HASH_LENGTH, HASH_LENGTH)
                    .arg(value, 0, value.length);
            }
            redis.flush();
            for (int i = k; i < end; i++)
            {
                redis.readReply();
            }
        }
        final Histogram histogram = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
        final byte[] request = new byte[QUERY_KEYS * HASH_LENGTH];
        for (int q = 0; q < total; q++)
        {
            requestKeys(keys, q, request);
            final long startNs = System.nanoTime();
            redis.command(QUERY_KEYS + 1).arg("MGET");
            for (int i = 0; i < QUERY_KEYS; i++)
            {
                redis.arg(NAMESPACE, NAMESPACE.length, request, i * HASH_LENGTH, HASH_LENGTH);
            }
            redis.flush();
            final long present = redis.readReply();
            final long elapsedNs = System.nanoTime() - startNs;
            if (present != QUERY_KEYS)
            {
                throw new IllegalStateException("MGET found " + present + " of " + QUERY_KEYS);
            }
            if (q >= settings.warmupQueries)
            {
                histogram.recordValue(elapsedNs);
            }
        }
        return histogram;
    }

    private void updateLag(
        final BenchPeer owner, final BenchPeer[] hosts, final ShardInventory inventory,
        final PeerClient[] clientOfShard, final int[] hostOfShard, final long[] next)
    {
        final int ringMask = (1 << 17) - 1;
        final long[][] appendNs = new long[CatalogLimits.SHARD_COUNT][ringMask + 1];
        final long[] seen = new long[CatalogLimits.SHARD_COUNT];
        for (int s = 0; s < CatalogLimits.SHARD_COUNT; s++)
        {
            seen[s] = owner.journal().lastSequence(s);
        }
        final Histogram lag = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
        // Worst lag per 250 ms of append time: tells a one-off stall from a steady tail.
        final long windowNs = 250_000_000L;
        final long[] windowMaxNs = new long[settings.lagSeconds * 4 + 64];
        final long[] lagStartNs = new long[1];
        final BenchPeer.ProgressListener listener = (hostNode, ownerNode, shard, contiguous) ->
        {
            if (contiguous > seen[shard])
            {
                final long nowNs = System.nanoTime();
                for (long seq = seen[shard] + 1; seq <= contiguous; seq++)
                {
                    final long appendedNs = appendNs[shard][(int)(seq & ringMask)];
                    final long lagNs = Math.max(0, nowNs - appendedNs);
                    lag.recordValue(lagNs);
                    final int window = (int)Math.min(windowMaxNs.length - 1,
                        Math.max(0, (appendedNs - lagStartNs[0]) / windowNs));
                    windowMaxNs[window] = Math.max(windowMaxNs[window], lagNs);
                }
                seen[shard] = contiguous;
            }
        };
        for (final BenchPeer host : hosts)
        {
            host.progressListener(listener);
        }
        long ownerBytesBefore = owner.counter(PeerCounter.METADATA_BYTES_SENT);
        long hostBytesBefore = 0;
        for (final BenchPeer host : hosts)
        {
            hostBytesBefore += host.counter(PeerCounter.METADATA_BYTES_SENT);
        }

        final long records = (long)settings.lagRate * settings.lagSeconds;
        final long periodNs = 1_000_000_000L / settings.lagRate;
        final long startNs = System.nanoTime();
        lagStartNs[0] = startNs;
        final long deadlineNs = startNs + TimeUnit.SECONDS.toNanos(settings.lagSeconds) + AWAIT_NS;
        long appended = 0;
        while (appended < records || !caughtUp(seen, owner))
        {
            final long nowNs = System.nanoTime();
            final long due = Math.min(records, (nowNs - startNs) / periodNs + 1);
            int work = 0;
            while (appended < due)
            {
                final int key = (int)(appended % settings.lookupKeys);
                final long sequence = add(inventory, key, 5_000_000L + appended);
                appendNs[shardOfKey[key]][(int)(sequence & ringMask)] = System.nanoTime();
                appended++;
                work++;
            }
            work += sendPending(owner, clientOfShard, next);
            work += dutyAll(owner, hosts);
            if (0 == work)
            {
                Thread.yield();
            }
            if (nowNs - deadlineNs > 0)
            {
                throw new IllegalStateException("update lag phase timed out; errors " + owner.errors());
            }
        }
        final double elapsedS = (System.nanoTime() - startNs) / 1e9;
        for (final BenchPeer host : hosts)
        {
            host.progressListener(null);
        }
        final long ownerBytes = owner.counter(PeerCounter.METADATA_BYTES_SENT) - ownerBytesBefore;
        long hostBytes = -hostBytesBefore;
        for (final BenchPeer host : hosts)
        {
            hostBytes += host.counter(PeerCounter.METADATA_BYTES_SENT);
        }
        out.printf(Locale.ROOT, "%n[3] update lag at %d records/s for %d s (%d records, %.1f s): append -> applied " +
            "at the host p50 %.1f us, p99 %.1f us, p99.9 %.1f us, max %.1f us; wire %.1f B/record deltas + %.1f " +
            "B/record acks%n", settings.lagRate, settings.lagSeconds, lag.getTotalCount(), elapsedS,
            lag.getValueAtPercentile(50) / 1e3, lag.getValueAtPercentile(99) / 1e3,
            lag.getValueAtPercentile(99.9) / 1e3, lag.getMaxValue() / 1e3, (double)ownerBytes / records,
            (double)hostBytes / records);
        out.flush();
        final StringBuilder windows = new StringBuilder();
        final List<Double> windowList = new ArrayList<>();
        for (int w = 0; w < settings.lagSeconds * 4; w++)
        {
            windows.append(String.format(Locale.ROOT, " %.1f", windowMaxNs[w] / 1e6));
            windowList.add(windowMaxNs[w] / 1e6);
        }
        out.printf(Locale.ROOT, "    worst lag per 250 ms of append time (ms):%s%n", windows);
        out.flush();
        results.put("update_lag_max_per_250ms_ms", windowList);
        results.put("update_lag_rate", settings.lagRate);
        results.put("update_lag_records", lag.getTotalCount());
        results.put("update_lag_p50_us", lag.getValueAtPercentile(50) / 1e3);
        results.put("update_lag_p99_us", lag.getValueAtPercentile(99) / 1e3);
        results.put("update_lag_p999_us", lag.getValueAtPercentile(99.9) / 1e3);
        final double bytesPerRecord = (double)(ownerBytes + hostBytes) / records;
        results.put("metadata_delta_bytes_per_record_steady", (double)ownerBytes / records);
        results.put("metadata_ack_bytes_per_record_steady", (double)hostBytes / records);
        results.put("metadata_bytes_per_record_steady", bytesPerRecord);
    }

    private static boolean caughtUp(final long[] seen, final BenchPeer owner)
    {
        for (int s = 0; s < CatalogLimits.SHARD_COUNT; s++)
        {
            if (seen[s] < owner.journal().lastSequence(s))
            {
                return false;
            }
        }
        return true;
    }

    /**
     * SETs of the lookup keys at the lag phase's rate from one connection: each loop iteration writes the SETs that
     * fell due as one pipeline and reads their replies; a SET's lag is issue to its reply (then any reader sees it).
     */
    private Histogram redisPacedSet(final long records) throws IOException
    {
        final Histogram histogram = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
        final byte[] value = new byte[REDIS_VALUE_BYTES];
        final long periodNs = 1_000_000_000L / settings.lagRate;
        final long[] issuedNs = new long[(int)Math.min(records, 1 << 20)];
        final long startNs = System.nanoTime();
        long issued = 0;
        while (issued < records)
        {
            final long due = Math.min(records, (System.nanoTime() - startNs) / periodNs + 1);
            final long first = issued;
            while (issued < due && issued - first < issuedNs.length)
            {
                final int key = (int)(issued % settings.lookupKeys);
                value[0] = (byte)issued;
                redis.command(3).arg("SET").arg(NAMESPACE, NAMESPACE.length, hashes, key * HASH_LENGTH, HASH_LENGTH)
                    .arg(value, 0, value.length);
                issuedNs[(int)(issued - first)] = System.nanoTime();
                issued++;
            }
            if (issued == first)
            {
                Thread.onSpinWait();
                continue;
            }
            redis.flush();
            for (long i = first; i < issued; i++)
            {
                redis.readReply();
                histogram.recordValue(Math.max(0, System.nanoTime() - issuedNs[(int)(i - first)]));
            }
        }
        return histogram;
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Redis anchors and plumbing

    /**
     * redis-benchmark pipelined SETs of random keys among settings.keys: into an empty db (the first SET of a key
     * creates it, as the host's first pass inserts), or after every key was SET once (overwrites only, as the host's
     * steady state updates held records).
     */
    private double redisBenchmarkSet(final boolean overExistingKeys) throws IOException, InterruptedException
    {
        if (overExistingKeys)
        {
            prefillRedisBenchmarkKeys();
        }
        final long requests = overExistingKeys ? settings.records : settings.keys;
        final List<String> command = List.of("redis-benchmark", "-h", "127.0.0.1", "-p",
            Integer.toString(settings.redisPort), "-t", "set", "-P", "64", "-n", Long.toString(requests),
            "-d", "96", "-r", Long.toString(settings.keys), "-q", "--csv");
        final double cpuBefore = redisCpuSeconds();
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        final String text = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (0 != process.waitFor())
        {
            throw new IllegalStateException("redis-benchmark failed: " + text);
        }
        out.printf(Locale.ROOT, "%n[1] anchor (%s): %s%n", overExistingKeys ? "every key SET once before, " +
            "overwrites" : "empty db", String.join(" ", command));
        double rps = Double.NaN;
        for (final String line : text.split("\n"))
        {
            out.println("    " + line.trim());
            final String[] fields = line.trim().replace("\"", "").split(",");
            if (fields.length > 1 && "SET".equals(fields[0]))
            {
                rps = Double.parseDouble(fields[1]);
            }
        }
        out.flush();
        if (Double.isNaN(rps))
        {
            throw new IllegalStateException("no SET row in redis-benchmark output: " + text);
        }
        final double cpuSeconds = redisCpuSeconds() - cpuBefore;
        out.printf(Locale.ROOT, "    redis-server used %.2f CPU-seconds (INFO cpu, user + sys): %.0f SETs per server " +
            "CPU-second%n", cpuSeconds, requests / cpuSeconds);
        if (overExistingKeys)
        {
            results.put("anchor_redis_sets_per_server_cpu_s", requests / cpuSeconds);
        }
        redis.command(1).arg("FLUSHALL");
        redis.flush();
        redis.readReply();
        return rps;
    }

    /**
     * Load the owner's keys (same key bytes, one candidate as value) into an empty Redis: used_memory per key is the
     * index anchor; DEBUG RELOAD (save an RDB, empty, load it back) of them is the snapshot rebuild anchor.
     */
    /**
     * SET every key redis-benchmark's {@code -r} draws from ({@code key:} and the number in 12 digits) with a 96-byte
     * value, pipelined, untimed.
     */
    private void prefillRedisBenchmarkKeys() throws IOException
    {
        final String value = "x".repeat(96);
        final int window = 1_000;
        for (long k = 0; k < settings.keys; k += window)
        {
            final long end = Math.min(settings.keys, k + window);
            for (long i = k; i < end; i++)
            {
                redis.command(3).arg("SET").arg(String.format(Locale.ROOT, "key:%012d", i)).arg(value);
            }
            redis.flush();
            for (long i = k; i < end; i++)
            {
                redis.readReply();
            }
        }
    }

    private double redisLoadAndReload() throws IOException
    {
        redis.command(1).arg("FLUSHALL");
        redis.flush();
        redis.readReply();
        final long before = redis.infoField("memory", "used_memory");
        final byte[] value = new byte[REDIS_VALUE_BYTES];
        for (long k = 0; k < settings.keys; k += 1000)
        {
            final long end = Math.min(settings.keys, k + 1000);
            for (long i = k; i < end; i++)
            {
                redis.command(3).arg("SET")
                    .arg(NAMESPACE, NAMESPACE.length, hashes, (int)i * HASH_LENGTH, HASH_LENGTH)
                    .arg(value, 0, value.length);
            }
            redis.flush();
            for (long i = k; i < end; i++)
            {
                redis.readReply();
            }
        }
        final long after = redis.infoField("memory", "used_memory");
        final double perKey = (double)(after - before) / settings.keys;
        results.put("anchor_redis_bytes_per_key", perKey);
        final long startNs = System.nanoTime();
        redis.command(2).arg("DEBUG").arg("RELOAD");
        redis.flush();
        redis.readReply();
        final double ms = (System.nanoTime() - startNs) / 1e6;
        redis.command(1).arg("DBSIZE");
        redis.flush();
        final long size = redis.readReply();
        out.printf(Locale.ROOT, "    anchor: redis with the same %d keys (%d B key, %d B value): used_memory %.1f " +
            "B/key; DEBUG RELOAD (RDB save + load, %d keys back) %.0f ms%n", settings.keys,
            NAMESPACE.length + HASH_LENGTH, REDIS_VALUE_BYTES, perKey, size, ms);
        out.flush();
        redis.command(1).arg("FLUSHALL");
        redis.flush();
        redis.readReply();
        return ms;
    }

    private double redisCpuSeconds() throws IOException
    {
        redis.command(2).arg("INFO").arg("cpu");
        redis.flush();
        double seconds = 0;
        for (final String line : redis.readBulkString().split("\r\n"))
        {
            if (line.startsWith("used_cpu_sys:") || line.startsWith("used_cpu_user:"))
            {
                seconds += Double.parseDouble(line.substring(line.indexOf(':') + 1).trim());
            }
        }
        return seconds;
    }

    private String redisVersion() throws IOException
    {
        redis.command(2).arg("INFO").arg("server");
        redis.flush();
        for (final String line : redis.readBulkString().split("\r\n"))
        {
            if (line.startsWith("redis_version:"))
            {
                return line.substring("redis_version:".length());
            }
        }
        return "unknown";
    }

    private static PeerClient connect(final BenchPeer from, final BenchPeer to)
    {
        final PeerClient client = from.publisher().connect(
            to.transport().endpoint(), to.nodeIndex(), to.incarnationMsb(), to.incarnationLsb());
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!client.isActive())
        {
            if (client.isFailed() || System.nanoTime() - deadlineNs > 0)
            {
                throw new IllegalStateException("no session from node " + from.nodeIndex() + " to " + to.nodeIndex());
            }
            if (0 == from.doWork() + to.doWork())
            {
                Thread.yield();
            }
        }
        return client;
    }

    private static void checkErrors(final BenchPeer... peers)
    {
        for (final BenchPeer peer : peers)
        {
            if (!peer.errors().isEmpty() || peer.rejections() > 0)
            {
                throw new IllegalStateException("node " + peer.nodeIndex() + ": " + peer.rejections() +
                    " rejections, errors " + peer.errors());
            }
        }
    }

    private static long journalBudgetFor(final long records)
    {
        // 96-byte journal records for these keys, segments partly filled at the tail, and room to spare.
        final long bytes = records * 96 * 5 / 4 + (32L << 20);
        return Math.min(bytes, (Integer.MAX_VALUE / OWNER_SEGMENT) * (long)OWNER_SEGMENT);
    }

    private static final int OWNER_SEGMENT = 64 * 1024;

    private static long inventoryShardBudget(final long keys)
    {
        return CatalogRecordTable.budgetFor((int)(keys / CatalogLimits.SHARD_COUNT * 5 / 4) + 4096);
    }

    private void printSummary()
    {
        out.println();
        out.println("| metric | OrbitKV | anchor (same run) | ratio | goal |");
        out.println("|---|---|---|---|---|");
        for (final String[] row : summary)
        {
            out.printf(Locale.ROOT, "| %s | %s | %s | %s | %s |%n", row[0], row[1], row[2], row[3], row[4]);
        }
        out.flush();
        final List<Map<String, String>> rows = new ArrayList<>();
        for (final String[] row : summary)
        {
            final Map<String, String> map = new LinkedHashMap<>();
            map.put("metric", row[0]);
            map.put("orbitkv", row[1]);
            map.put("anchor", row[2]);
            map.put("ratio", row[3]);
            map.put("goal", row[4]);
            rows.add(map);
        }
        results.put("summary", rows);
    }

    private static String fmt(final double value, final String format)
    {
        return Double.isNaN(value) ? "n/a" : String.format(Locale.ROOT, format, value);
    }

    private static String ratio(final double value)
    {
        return Double.isNaN(value) || Double.isInfinite(value) ? "n/a" : String.format(Locale.ROOT, "%.2fx", value);
    }

    /**
     * The peers' embedded driver: invoked from each peer's duty cycle (the transport's default, null here), or on a
     * thread of its own with a backoff or yielding idle strategy (diagnostics).
     */
    private IdleStrategy driverIdle()
    {
        return switch (settings.driverIdle)
        {
            case "invoked" -> null;
            case "backoff" -> PeerTransport.Context.backoffDriverIdleStrategy();
            case "backoff-short" -> new BackoffIdleStrategy(10, 20, 1_000, 20_000);
            case "yielding" -> new YieldingIdleStrategy();
            default -> throw new IllegalArgumentException("driver idle must be invoked, backoff, backoff-short or yielding: " +
                settings.driverIdle);
        };
    }

    static Path defaultDir()
    {
        final File shm = new File("/dev/shm");
        final File parent = shm.isDirectory() ? shm : new File(System.getProperty("java.io.tmpdir"));
        return new File(parent, "orbitkv-bench-catalog-" + ProcessHandle.current().pid()).toPath();
    }
}
