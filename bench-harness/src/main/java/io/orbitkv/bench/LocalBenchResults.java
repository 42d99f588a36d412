package io.orbitkv.bench;

import java.io.File;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import org.HdrHistogram.Histogram;

/**
 * The reporter of {@code orbitkv bench local}: prints each latency row beside its anchor and each goal with its
 * verdict, and keeps every figure in insertion order for the JSON file.
 */
final class LocalBenchResults
{
    private final Map<String, Object> results = new LinkedHashMap<>();

    void put(final String name, final Object value)
    {
        results.put(name, value);
    }

    /**
     * Print a latency row and keep it under {@code name}: beside its anchor as ratios, or as the anchor itself.
     */
    void report(final String name, final Histogram h, final Histogram anchor, final long gcs)
    {
        final Map<String, Object> row = new LinkedHashMap<>();
        row.put("p50Ns", h.getValueAtPercentile(50));
        row.put("p99Ns", h.getValueAtPercentile(99));
        row.put("p999Ns", h.getValueAtPercentile(99.9));
        row.put("maxNs", h.getMaxValue());
        row.put("count", h.getTotalCount());
        row.put("gcCollections", gcs);
        if (null == anchor)
        {
            System.out.printf("%-12s p50 %7.2f us  p99 %7.2f us  p99.9 %7.2f us   (anchor; GCs %d)%n", name,
                h.getValueAtPercentile(50) / 1e3, h.getValueAtPercentile(99) / 1e3, h.getValueAtPercentile(99.9) / 1e3, gcs);
        }
        else
        {
            final double r50 = (double)h.getValueAtPercentile(50) / anchor.getValueAtPercentile(50);
            final double r99 = (double)h.getValueAtPercentile(99) / anchor.getValueAtPercentile(99);
            final double r999 = (double)h.getValueAtPercentile(99.9) / anchor.getValueAtPercentile(99.9);
            System.out.printf("%-12s p50 %7.2f us  p99 %7.2f us  p99.9 %7.2f us   = %.2fx / %.2fx / %.2fx bare ring" +
                " (GCs %d)%n", name, h.getValueAtPercentile(50) / 1e3, h.getValueAtPercentile(99) / 1e3,
                h.getValueAtPercentile(99.9) / 1e3, r50, r99, r999, gcs);
            row.put("ratioP50", r50);
            row.put("ratioP99", r99);
            row.put("ratioP999", r999);
        }
        results.put(name, row);
    }

    /**
     * Print a goal and whether it is met, and keep it under {@code goals}.
     */
    @SuppressWarnings("unchecked")
    void goal(final String name, final double value, final boolean met, final String target)
    {
        System.out.printf("  goal %-32s %10.3f  target %-8s %s%n", name, value, target, met ? "MET" : "MISSED");
        final Map<String, Object> goals = (Map<String, Object>)results.computeIfAbsent("goals", k -> new LinkedHashMap<>());
        goals.put(name, Map.of("value", value, "target", target, "met", met));
    }

    /**
     * Write every figure as indented JSON.
     *
     * @param file the JSON file.
     * @throws IOException when it cannot be written.
     */
    void writeJson(final File file) throws IOException
    {
        new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(file, results);
    }
}
