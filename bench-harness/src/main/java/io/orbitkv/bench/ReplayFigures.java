package io.orbitkv.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The figures of one replayed mode, from what the engines recorded and how far the Managers' counters moved (summed
 * over the processes of a Manager that was killed or restarted) and where their gauges ended.
 */
final class ReplayFigures
{
    /** A failure's dip has reconverged once the windowed hit fraction is back within this share of its baseline. */
    static final double RECONVERGED_SHARE = 0.95;

    private ReplayFigures()
    {
    }

    static double[] ttftMs(final ReplayOutcomes o, final double prefillTokensPerS)
    {
        final double[] ttft = new double[o.chain.length];
        for (int i = 0; i < ttft.length; i++)
        {
            final int hit = o.dram[i] + o.ssd[i] + o.peer[i];
            final long missed = Math.max(0, o.inputTokens[i] - (long)hit * ReplayTrace.TOKENS_PER_BLOCK);
            ttft[i] = o.serviceNs[i] / 1e6 + missed * 1000.0 / prefillTokensPerS;
        }
        return ttft;
    }

    static double percentile(final double[] sorted, final double p)
    {
        if (0 == sorted.length)
        {
            return 0;
        }
        final int i = (int)Math.ceil(p / 100.0 * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, i))];
    }

    static Map<String, Object> percentiles(final double[] values, final double... ps)
    {
        final double[] sorted = values.clone();
        Arrays.sort(sorted);
        final Map<String, Object> map = new LinkedHashMap<>();
        for (final double p : ps)
        {
            map.put("p" + (int)p, percentile(sorted, p));
        }
        map.put("count", sorted.length);
        return map;
    }

    /**
     * The hit fraction over windows of completed requests: {fraction done, seconds, hit} per window.
     */
    static List<Map<String, Object>> timeline(final ReplayOutcomes o, final int buckets)
    {
        final List<Map<String, Object>> line = new ArrayList<>();
        final int n = o.done.get();
        final int per = Math.max(1, n / buckets);
        for (int start = 0; start < n; start += per)
        {
            final int end = Math.min(n, start + per);
            long refs = 0;
            long hits = 0;
            for (int k = start; k < end; k++)
            {
                final int i = o.completed[k];
                refs += o.chain[i];
                hits += o.dram[i] + o.ssd[i] + o.peer[i];
            }
            final Map<String, Object> point = new LinkedHashMap<>();
            point.put("completed", end);
            point.put("fraction", (double)end / n);
            point.put("seconds", o.completedAtNs[end - 1] / 1e9);
            point.put("hit", 0 == refs ? 0.0 : (double)hits / refs);
            line.add(point);
        }
        return line;
    }

    private static long delta(final List<Map<String, Long>> moved, final String labelStart)
    {
        long sum = 0;
        for (final Map<String, Long> m : moved)
        {
            for (final Map.Entry<String, Long> e : m.entrySet())
            {
                if (e.getKey().startsWith(labelStart))
                {
                    sum += e.getValue();
                }
            }
        }
        return sum;
    }

    /**
     * How far a counter of one process moved from {@code before}; a gauge that fell counts its value (as a counter
     * that started again from 0 would).
     */
    static long moved(final long before, final long after)
    {
        return after >= before ? after - before : after;
    }

    /**
     * How far each counter of one Manager moved during the replay, summed over its processes: the first from its value
     * before the replay to the last it showed (when that process was killed or stopped, or at the end), every later one
     * from 0, since a Manager started again counts from 0.
     *
     * @param before  its counters before the replay.
     * @param retired the counters of each process that was killed or stopped during the replay, oldest first.
     * @param last    the running process's counters at the end.
     * @return label to how far it moved.
     */
    static Map<String, Long> movedAcrossProcesses(
        final Map<String, Long> before, final List<Map<String, Long>> retired, final Map<String, Long> last)
    {
        final Map<String, Long> moved = new LinkedHashMap<>();
        final List<Map<String, Long>> processes = new ArrayList<>(retired);
        processes.add(last);
        Map<String, Long> base = before;
        for (final Map<String, Long> counters : processes)
        {
            for (final Map.Entry<String, Long> e : counters.entrySet())
            {
                moved.merge(e.getKey(), moved(base.getOrDefault(e.getKey(), 0L), e.getValue()), Long::sum);
            }
            base = Map.of();
        }
        return moved;
    }

    private static List<Long> each(final List<Map<String, Long>> after, final String label)
    {
        final List<Long> values = new ArrayList<>();
        for (final Map<String, Long> m : after)
        {
            values.add(m.get(label));
        }
        return values;
    }

    private static long maxOf(final List<Map<String, Long>> after, final String label)
    {
        long max = 0;
        for (final Map<String, Long> m : after)
        {
            max = Math.max(max, m.getOrDefault(label, 0L));
        }
        return max;
    }

    static void fill(
        final Map<String, Object> figures,
        final ReplayBench.Mode mode,
        final ReplayOutcomes o,
        final Map<String, Double> reference,
        final List<Map<String, Long>> moved,
        final List<Map<String, Long>> after,
        final ReplaySampler sampler,
        final Map<String, Long> leaks,
        final long replayNs,
        final double prefillTokensPerS,
        final List<Map<String, Object>> events)
    {
        final int n = o.chain.length;
        long refs = 0;
        long dram = 0;
        long ssd = 0;
        long peer = 0;
        int unserved = 0;
        int remoteRequests = 0;
        final List<Double> restore = new ArrayList<>();
        final List<Double> remoteRestore = new ArrayList<>();
        for (int i = 0; i < n; i++)
        {
            refs += o.chain[i];
            dram += o.dram[i];
            ssd += o.ssd[i];
            peer += o.peer[i];
            unserved += o.unserved[i] ? 1 : 0;
            if (o.dram[i] + o.ssd[i] + o.peer[i] > 0)
            {
                restore.add(o.restoreNs[i] / 1e6);
            }
            if (o.peer[i] > 0)
            {
                remoteRequests++;
                remoteRestore.add(o.restoreNs[i] / 1e6);
            }
        }
        final double total = (double)(dram + ssd + peer) / refs;
        final Map<String, Object> hit = new LinkedHashMap<>();
        hit.put("total", total);
        hit.put("localDram", (double)dram / refs);
        hit.put("localSsd", (double)ssd / refs);
        hit.put("peer", (double)peer / refs);
        figures.put("mode", Map.of("peers", mode.peers(), "oneCatalogHost", mode.oneCatalog(),
            "peerAdmission", mode.admission()));
        figures.put("hitFraction", hit);
        figures.put("recomputeFraction", 1.0 - total);
        figures.put("reference", reference);
        figures.put("ratioToGlobalLru", total / Math.max(1e-12, reference.get("globalLru")));
        figures.put("ratioToIsolatedLru", total / Math.max(1e-12, reference.get("isolatedLru")));
        figures.put("wrongBytes", o.wrongBytes.get());
        figures.put("ttftMs", percentiles(ttftMs(o, prefillTokensPerS), 50, 95, 99));
        figures.put("restoreMs", percentiles(restore.stream().mapToDouble(Double::doubleValue).toArray(), 50, 99));
        figures.put("remoteRestoreMs",
            percentiles(remoteRestore.stream().mapToDouble(Double::doubleValue).toArray(), 50, 99));
        figures.put("remoteHitRequestFraction", (double)remoteRequests / n);
        figures.put("recomputeFallbackRequests", unserved);
        final long etcdCalls = etcdCallsOnly(moved);
        figures.put("etcdCalls", etcdCalls);
        figures.put("etcdCallsPerRequest", (double)etcdCalls / n);
        final long keepalives = delta(moved, "etcd calls: lease keepalive");
        figures.put("etcdCallsPerRequestWithoutKeepalives", (double)(etcdCalls - keepalives) / n);
        figures.put("replaySeconds", replayNs / 1e9);
        figures.put("requestsPerS", n / (replayNs / 1e9));

        final Map<String, Object> metadata = new LinkedHashMap<>();
        final double secs = replayNs / 1e9;
        final long metadataBytes = delta(moved, "peer: metadata bytes sent");
        final long recordsSent = delta(moved, "Catalog: delta records sent to catalog hosts");
        metadata.put("bytesPerS", metadataBytes / secs);
        metadata.put("deltaRecordsSent", recordsSent);
        // Every metadata byte (deltas, snapshots, acks, cold queries and answers) per delta record an owner sent.
        metadata.put("bytesPerDeltaRecord", 0 == recordsSent ? 0.0 : (double)metadataBytes / recordsSent);
        metadata.put("updateLagMaxUs", maxOf(after, "Catalog: max update lag, owner append to host ack (us)"));
        final long cold = delta(moved, "Catalog: cold query RPCs sent");
        final long candidateHits = delta(moved, "Catalog: candidate index hits");
        final long peerKeys = delta(moved, "Catalog: lookup keys answered with peer candidates");
        metadata.put("coldQueryRpcs", cold);
        metadata.put("candidateIndexHits", candidateHits);
        metadata.put("coldQueryRpcsPerRequest", mode.peers() ? (double)cold / n : 0.0);
        metadata.put("lookupKeysWithPeerCandidates", peerKeys);
        final long authorizations = delta(moved, "Transfer requester: authorizations sent");
        final long refusals = delta(moved, "Transfer requester: refusals received");
        metadata.put("staleCandidateRate", 0 == authorizations ? 0.0 : (double)refusals / authorizations);
        metadata.put("candidateIndexBytes", each(after, "Catalog: candidate index logical bytes"));
        metadata.put("hostIndexBytes", each(after, "Catalog: host index bytes reserved (views and retry storage)"));
        metadata.put("resyncs", delta(moved, "Catalog: receiving states that needed a new baseline"));
        metadata.put("incompleteCoverageSeconds", sampler.incompleteSeconds());
        figures.put("metadata", metadata);

        final Map<String, Object> transfer = new LinkedHashMap<>();
        final Map<String, Long> max = sampler.max();
        transfer.put("senderPinnedBytesMax", max.get("senderPinnedBytes"));
        transfer.put("receiverStagingBytes", "n/a (no such counter in this build)");
        transfer.put("activeSourceSessionsMax", max.get("sourceSessionsActive"));
        transfer.put("activeFetchesMax", max.get("requesterFetchesActive"));
        transfer.put("budgetWaits", delta(moved, "Transfer source: keys refused, transfer budget full"));
        transfer.put("blocksFetched", delta(moved, "Transfer requester: blocks restored from peers"));
        transfer.put("blocksAdmitted", delta(moved, "Transfer requester: peer blocks admitted"));
        transfer.put("peerReadFailures", delta(moved, "Transfer requester: peer reads failed"));
        transfer.put("checksumMismatches", delta(moved, "Transfer requester: peer blocks whose CRC32C"));
        transfer.put("leakedAfterDrain", leaks);
        figures.put("transfer", transfer);

        final List<Map<String, Long>> deltas = new ArrayList<>();
        for (final Map<String, Long> m : moved)
        {
            final Map<String, Long> changed = new LinkedHashMap<>();
            for (final Map.Entry<String, Long> e : m.entrySet())
            {
                if (0 != e.getValue())
                {
                    changed.put(e.getKey(), e.getValue());
                }
            }
            deltas.add(changed);
        }
        figures.put("counterChanges", deltas);
        final List<Map<String, Object>> line = timeline(o, ReplayBench.TIMELINE_BUCKETS);
        figures.put("timeline", line);
        if (!events.isEmpty())
        {
            figures.put("failures", dips(o, events));
        }
    }

    private static long etcdCallsOnly(final List<Map<String, Long>> moved)
    {
        return delta(moved, "etcd calls: get") + delta(moved, "etcd calls: txn") +
            delta(moved, "etcd calls: lease") + delta(moved, "etcd calls: watch");
    }

    /**
     * Around each failure: the hit fraction of the window before it, the lowest window after it, and the time from the
     * failure until a window is back within {@link #RECONVERGED_SHARE} of the baseline.
     */
    private static List<Map<String, Object>> dips(final ReplayOutcomes o, final List<Map<String, Object>> events)
    {
        final int n = o.done.get();
        final int window = Math.max(20, n / 100);
        final List<Map<String, Object>> result = new ArrayList<>();
        for (final Map<String, Object> event : events)
        {
            final Map<String, Object> r = new LinkedHashMap<>(event);
            final Object firedAt = event.get("firedAtCompleted");
            if (!(firedAt instanceof Integer))
            {
                result.add(r);
                continue;
            }
            final int at = (Integer)firedAt;
            final double baseline = windowHit(o, Math.max(0, at - window * 5), at);
            double lowest = 1;
            int lowestAt = at;
            Double reconvergedAfter = null;
            for (int start = at; start + window <= n; start += window / 2)
            {
                final double h = windowHit(o, start, start + window);
                if (h < lowest)
                {
                    lowest = h;
                    lowestAt = start;
                }
                if (start > lowestAt && h >= RECONVERGED_SHARE * baseline && null == reconvergedAfter && lowest <
                    RECONVERGED_SHARE * baseline)
                {
                    reconvergedAfter = (o.completedAtNs[start + window - 1] - o.completedAtNs[Math.min(n - 1, at)]) / 1e9;
                }
            }
            if (event.get("endedAtCompleted") instanceof Integer ended && ended > at)
            {
                r.put("hitDuring", windowHit(o, at, Math.min(n, ended)));
            }
            r.put("baselineHit", baseline);
            r.put("lowestHit", lowest);
            r.put("dipDepth", baseline - lowest);
            r.put("reconvergeSeconds", null == reconvergedAfter ? (lowest >= RECONVERGED_SHARE * baseline ? 0.0 :
                "not within the run") : reconvergedAfter);
            result.add(r);
        }
        return result;
    }

    /**
     * The hit fraction of the requests completed between two shares of the run, so that two runs of one trace (one
     * with a placement change, one without) compare the same stretch.
     *
     * @return {from, to (shares), requests, hit}.
     */
    static Map<String, Object> hitBetween(final ReplayOutcomes o, final double fromShare, final double toShare)
    {
        final int n = o.done.get();
        final int from = (int)Math.min(n, Math.round(fromShare * n));
        final int to = (int)Math.min(n, Math.round(toShare * n));
        final Map<String, Object> window = new LinkedHashMap<>();
        window.put("fromShare", fromShare);
        window.put("toShare", toShare);
        window.put("requests", Math.max(0, to - from));
        window.put("hit", windowHit(o, from, Math.max(from, to)));
        return window;
    }

    private static double windowHit(final ReplayOutcomes o, final int from, final int to)
    {
        long refs = 0;
        long hits = 0;
        for (int k = from; k < to; k++)
        {
            final int i = o.completed[k];
            refs += o.chain[i];
            hits += o.dram[i] + o.ssd[i] + o.peer[i];
        }
        return 0 == refs ? 0 : (double)hits / refs;
    }
}
