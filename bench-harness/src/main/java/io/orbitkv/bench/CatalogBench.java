package io.orbitkv.bench;

import static io.orbitkv.bench.CatalogSummary.fmt;
import static io.orbitkv.bench.CatalogSummary.ratio;

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
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import io.orbitkv.catalog.JournalRecord;
import io.orbitkv.catalog.ShardInventory;
import io.orbitkv.catalog.ShardReceiver;
import io.orbitkv.codecs.CatalogLimits;
import io.orbitkv.index.CatalogRecordTable;
import io.orbitkv.index.NamespaceTable;
import io.orbitkv.manager.peer.PeerClient;
import io.orbitkv.manager.peer.PeerCounter;
import io.orbitkv.manager.peer.PeerTransport;
import io.orbitkv.bench.peer.BenchPeer;
import org.HdrHistogram.Histogram;
import org.agrona.IoUtil;
import org.agrona.concurrent.IdleStrategy;

/**
 * The catalog benchmarks against Redis (FlexKV's directory), every figure next to its anchor measured in
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
    static final long AWAIT_NS = TimeUnit.SECONDS.toNanos(120);

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
        /** Frame MAC key of an authenticated peer channel, or null. */
        byte[] frameMacKey;
    }

    private final Settings settings;
    private final PrintWriter out;
    private final Map<String, Object> results = new LinkedHashMap<>();
    private final CatalogSummary summary = new CatalogSummary();
    private final CatalogKeys keys;
    private CatalogRedisAnchor anchor;

    CatalogBench(final Settings settings, final PrintWriter out)
    {
        this.settings = settings;
        this.out = out;
        this.keys = new CatalogKeys((int)Math.max(settings.keys, settings.lookupKeys));
    }

    Map<String, Object> run() throws Exception
    {
        final long startNs = System.nanoTime();
        Files.createDirectories(settings.dir);
        results.put("driver_idle", settings.driverIdle);
        try
        {
            if (settings.anchor)
            {
                anchor = new CatalogRedisAnchor(settings, out, results, keys.hashes);
                results.put("redis_version", anchor.version());
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
                new double[]{ anchor.benchmarkSet(false), anchor.benchmarkSet(true) } : new double[]{ Double.NaN, Double.NaN };
            final double anchorReloadMs = settings.anchor ? anchor.loadAndReload() : Double.NaN;
            try (BenchPeer owner = new BenchPeer(settings.dir, 0, 0xA0, 0xA1, FINGERPRINT, BenchPeer.allShards(),
                CatalogPeers.journalBudgetFor(settings.keys + settings.warmupRecords + settings.records), settings.termLength,
                CatalogPeers.driverIdle(settings.driverIdle), settings.frameMacKey))
            {
                final ShardInventory inventory = new ShardInventory(
                    owner.journal(), new NamespaceTable(), CatalogPeers.inventoryShardBudget(settings.keys));
                deltaThroughput(owner, inventory, anchorSetRates[0], anchorSetRates[1]);
                new CatalogSnapshotRebuild(settings, out, results, summary).run(owner, inventory, anchorReloadMs);
            }
            final int[] lookupKeys = coldLookupAndLag();
            lookupAndLagAnchors(lookupKeys);
        }
        finally
        {
            if (null != anchor)
            {
                anchor.close();
            }
            IoUtil.delete(settings.dir.toFile(), true);
        }
        results.put("elapsed_s", (System.nanoTime() - startNs) / 1e9);
        summary.print(out, results);
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
            if (inventory.add(JournalRecord.TIER_DRAM, keys.namespace, 0, NAMESPACE.length, keys.hashBuffer, key * HASH_LENGTH,
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
            1L << 20, settings.termLength, CatalogPeers.driverIdle(settings.driverIdle), settings.frameMacKey))
        {
            host.admitOwner(0, owner.incarnationMsb(), owner.incarnationLsb());
            final PeerClient client = CatalogPeers.connect(owner, host);
            final int maxBatch = owner.catalogProxy().maxBatchRecords();
            final long ownerBytesBefore = owner.counter(PeerCounter.METADATA_BYTES_SENT);
            final long hostBytesBefore = host.counter(PeerCounter.METADATA_BYTES_SENT);
            final long ackFramesBefore = owner.counter(PeerCounter.FRAMES_ACK);

            final AtomicBoolean running = new AtomicBoolean(true);
            final Thread ownerThread = new Thread(() ->
            {
                final IdleStrategy idle = CatalogPeers.agentIdleStrategy();
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
                            owner.publisher().availableWindow(client) >= CatalogPeers.FRAME_WINDOW_BYTES)
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
                final IdleStrategy idle = CatalogPeers.agentIdleStrategy();
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
                CatalogPeers.awaitApplied(host, settings.warmupRecords);
                final long firstPassStartNs = System.nanoTime();
                final long firstPassStartApplied = host.appliedRecords();
                CatalogPeers.awaitApplied(host, settings.keys);
                final long firstPassApplied = host.appliedRecords() - firstPassStartApplied;
                // A host fast enough to apply the whole first pass before the warm-up was seen leaves an empty window:
                // then the pass is timed from the first send, warm-up included (a lower bound of the rate).
                fillRate = firstPassApplied > 0 ?
                    Math.round(firstPassApplied * 1e9 / (System.nanoTime() - firstPassStartNs)) :
                    Math.round(host.appliedRecords() * 1e9 / (System.nanoTime() - sendStartNs));
                CatalogPeers.awaitApplied(host, steadyStart);
                final long startNs = System.nanoTime();
                final long startApplied = host.appliedRecords();
                final long hostCpuStartNs = threads.getThreadCpuTime(hostThread.threadId());
                final long ownerCpuStartNs = threads.getThreadCpuTime(ownerThread.threadId());
                CatalogPeers.awaitApplied(host, total);
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
                while (System.nanoTime() - ackDeadlineNs < 0 && !CatalogPeers.allAcked(owner, 1))
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
            CatalogPeers.checkErrors(owner, host);

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

    // ---------------------------------------------------------------------------------------------------------------
    // 2. Cold lookups over 3 hosts, and 3a. update lag

    private int[] coldLookupAndLag() throws InterruptedException
    {
        final int lookupKeys = settings.lookupKeys;
        final long lagRecords = (long)settings.lagRate * settings.lagSeconds;
        final BenchPeer[] hosts = new BenchPeer[HOSTS];
        final int[] hostOfShard = new int[CatalogLimits.SHARD_COUNT];
        try (BenchPeer owner = new BenchPeer(settings.dir, 10, 0xD0, 0xD1, FINGERPRINT, BenchPeer.allShards(),
            CatalogPeers.journalBudgetFor(lookupKeys + lagRecords), settings.termLength, CatalogPeers.driverIdle(settings.driverIdle),
            settings.frameMacKey))
        {
            final ShardInventory inventory =
                new ShardInventory(owner.journal(), new NamespaceTable(), CatalogPeers.inventoryShardBudget(lookupKeys));
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
                        settings.termLength, CatalogPeers.driverIdle(settings.driverIdle), settings.frameMacKey);
                    hosts[h].admitOwner(owner.nodeIndex(), owner.incarnationMsb(), owner.incarnationLsb());
                }
                for (int h = 0; h < HOSTS; h++)
                {
                    clients[h] = CatalogPeers.connect(owner, hosts[h]);
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
                    keys.add(inventory, k, k);
                }
                CatalogPeers.streamAll(owner, hosts, clientOfShard, hostOfShard, next);
                final int[] queryKeys = new CatalogColdLookups(settings, out, results, keys)
                    .run(owner, hosts, clients, hostOfShard);
                updateLag(owner, hosts, inventory, clientOfShard, hostOfShard, next);
                CatalogPeers.checkErrors(owner);
                for (final BenchPeer host : hosts)
                {
                    CatalogPeers.checkErrors(host);
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
            final Histogram mget = anchor.mget(keys, keys.length / QUERY_KEYS);
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
            final Histogram set = anchor.pacedSet(records);
            anchorP50 = set.getValueAtPercentile(50) / 1e3;
            anchorP99 = set.getValueAtPercentile(99) / 1e3;
            anchorBytes = anchor.bytesPerSet();
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
        while (appended < records || !CatalogPeers.caughtUp(seen, owner))
        {
            final long nowNs = System.nanoTime();
            final long due = Math.min(records, (nowNs - startNs) / periodNs + 1);
            int work = 0;
            while (appended < due)
            {
                final int key = (int)(appended % settings.lookupKeys);
                final long sequence = keys.add(inventory, key, 5_000_000L + appended);
                appendNs[keys.shardOfKey[key]][(int)(sequence & ringMask)] = System.nanoTime();
                appended++;
                work++;
            }
            work += CatalogPeers.sendPending(owner, clientOfShard, next);
            work += CatalogPeers.dutyAll(owner, hosts);
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

    static Path defaultDir()
    {
        final File shm = new File("/dev/shm");
        final File parent = shm.isDirectory() ? shm : new File(System.getProperty("java.io.tmpdir"));
        return new File(parent, "orbitkv-bench-catalog-" + ProcessHandle.current().pid()).toPath();
    }
}
