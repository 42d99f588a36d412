package io.orbitkv.bench;

import java.io.PrintWriter;
import java.util.Locale;
import java.util.Map;

import org.HdrHistogram.Histogram;

/**
 * The closing table of {@link TransferBench}: per stream count, peer Read throughput against iperf3 with as many
 * streams and the remote restore latency against one raw TCP socket; a phase that failed prints as FAILED.
 */
final class TransferSummary
{
    private TransferSummary()
    {
    }

    /**
     * Print the table for every stream count measured and the TE stand-in.
     *
     * @param out        where the table goes.
     * @param options    the bench's options (stream counts, restore blocks).
     * @param results    the bench's results, holding each pair's figures.
     * @param iperfGbps  the iperf3 anchor per stream count.
     * @param rawTcp     the raw TCP restore anchor.
     */
    static void print(
        final PrintWriter out,
        final TransferBench.Options options,
        final Map<String, Object> results,
        final Map<Integer, Double> iperfGbps,
        final Histogram rawTcp)
    {
        out.println();
        out.println("| metric | OrbitKV | anchor (same run) | ratio | goal |");
        out.println("|---|---|---|---|---|");
        @SuppressWarnings("unchecked")
        final Map<String, Object> managers = (Map<String, Object>)results.get("managers");
        for (final int streams : options.streams())
        {
            @SuppressWarnings("unchecked")
            final Map<String, Object> pair = (Map<String, Object>)managers.get("streams_" + streams);
            if (null == pair)
            {
                continue;
            }
            final String plural = 1 == streams ? "" : "s";
            final Double anchor = iperfGbps.get(streams);
            final String anchorText = null == anchor ? "iperf3: n/a" :
                String.format(Locale.ROOT, "iperf3 -P %d: %.2f", streams, anchor);
            if (pair.containsKey("gbps_median"))
            {
                final double gbps = (double)pair.get("gbps_median");
                out.printf(Locale.ROOT, "| peer Read 2 MiB blocks, %d stream%s (Gb/s) | %.2f | %s | %s | >= 0.9x |%n",
                    streams, plural, gbps, anchorText,
                    null == anchor ? "-" : String.format(Locale.ROOT, "%.2fx", gbps / anchor));
            }
            else
            {
                out.printf(Locale.ROOT, "| peer Read 2 MiB blocks, %d stream%s (Gb/s) | FAILED | %s | - | >= 0.9x |%n",
                    streams, plural, anchorText);
            }
            @SuppressWarnings("unchecked")
            final Map<String, Object> wheel = (Map<String, Object>)results.get("mooncake_te_wheel");
            final Object teGbps = null == wheel ? null : wheel.get("gbps_batch" + streams);
            if (teGbps instanceof Double te && pair.containsKey("gbps_median"))
            {
                final double gbps = (double)pair.get("gbps_median");
                out.printf(Locale.ROOT, "| peer Read 2 MiB blocks, %d stream%s (Gb/s) | %.2f | Mooncake TE wheel, TCP, " +
                    "%d per batch: %.2f | %.2fx | report |%n", streams, plural, gbps, streams, te, gbps / te);
            }
            final double rawP50 = rawTcp.getValueAtPercentile(50) / 1e3;
            final double rawP99 = rawTcp.getValueAtPercentile(99) / 1e3;
            if (pair.containsKey("restore_p50_us"))
            {
                final double p50 = (double)pair.get("restore_p50_us");
                final double p99 = (double)pair.get("restore_p99_us");
                out.printf(Locale.ROOT, "| remote restore %d x 256 KiB, %d stream%s, p50 / p99 (us) | %.1f / %.1f | " +
                    "raw TCP: %.1f / %.1f | %.2fx / %.2fx | report |%n", options.restoreBlocks(), streams, plural, p50, p99,
                    rawP50, rawP99, p50 / rawP50, p99 / rawP99);
            }
            else
            {
                out.printf(Locale.ROOT, "| remote restore %d x 256 KiB, %d stream%s, p50 / p99 (us) | FAILED | " +
                    "raw TCP: %.1f / %.1f | - | report |%n", options.restoreBlocks(), streams, plural, rawP50, rawP99);
            }
        }
        @SuppressWarnings("unchecked")
        final Map<String, Object> te = (Map<String, Object>)results.get("te_standin");
        if (Boolean.TRUE.equals(te.get("available")))
        {
            final double gbps = (double)te.get("gbps_median");
            final Double anchor = iperfGbps.get(1);
            out.printf(Locale.ROOT, "| TE stand-in (not Mooncake), 2 MiB reads (Gb/s) | %.2f | %s | %s | report |%n", gbps,
                null == anchor ? "iperf3: n/a" : String.format(Locale.ROOT, "iperf3 -P 1: %.2f", anchor),
                null == anchor ? "-" : String.format(Locale.ROOT, "%.2fx", gbps / anchor));
        }
        out.flush();
    }
}
