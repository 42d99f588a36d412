package io.orbitkv.bench;

import static io.orbitkv.bench.CatalogBench.AWAIT_NS;
import static io.orbitkv.bench.CatalogBench.FINGERPRINT;
import static io.orbitkv.bench.CatalogSummary.fmt;
import static io.orbitkv.bench.CatalogSummary.ratio;

import java.io.PrintWriter;
import java.util.Locale;
import java.util.Map;

import io.orbitkv.catalog.ShardInventory;
import io.orbitkv.catalog.ShardReceiver;
import io.orbitkv.catalog.SnapshotCut;
import io.orbitkv.codecs.CatalogLimits;
import io.orbitkv.manager.peer.PeerClient;
import io.orbitkv.manager.peer.PeerCounter;
import io.orbitkv.manager.catalog.SnapshotSender;
import io.orbitkv.bench.peer.BenchPeer;

/**
 * The snapshot rebuild phase of {@link CatalogBench}: a new host incarnation joins with nothing and is brought to
 * STREAMING on every shard by snapshot cuts of the owner's inventory, timed against Redis DEBUG RELOAD of the same
 * number of keys; also the host's index bytes per entry against Redis used_memory per key.
 */
final class CatalogSnapshotRebuild
{
    private final CatalogBench.Settings settings;
    private final PrintWriter out;
    private final Map<String, Object> results;
    private final CatalogSummary summary;

    CatalogSnapshotRebuild(
        final CatalogBench.Settings settings, final PrintWriter out, final Map<String, Object> results,
        final CatalogSummary summary)
    {
        this.settings = settings;
        this.out = out;
        this.results = results;
        this.summary = summary;
    }

    /**
     * Rebuild a new host from snapshots of every shard of the owner's inventory.
     *
     * @param owner          the owner peer, holding the inventory.
     * @param inventory      the owner's inventory after the delta phase.
     * @param anchorReloadMs Redis DEBUG RELOAD of the same number of keys, NaN without the anchor.
     */
    void run(final BenchPeer owner, final ShardInventory inventory, final double anchorReloadMs)
    {
        long entries = 0;
        for (int s = 0; s < CatalogLimits.SHARD_COUNT; s++)
        {
            entries += inventory.size(s);
        }
        try (BenchPeer host = new BenchPeer(settings.dir, 2, 0xC0, 0xC1, FINGERPRINT, BenchPeer.allShards(),
            1L << 20, settings.termLength, CatalogPeers.driverIdle(settings.driverIdle), settings.frameMacKey))
        {
            host.admitOwner(0, owner.incarnationMsb(), owner.incarnationLsb());
            final PeerClient client = CatalogPeers.connect(owner, host);
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
            while (!CatalogPeers.rebuilt(host, entries))
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
            CatalogPeers.checkErrors(owner, host);
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
}
