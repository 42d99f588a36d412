package io.orbitkv.bench;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The closing table of {@link CatalogBench}: one row per figure with our value, its anchor from the same run, their
 * ratio and the goal, printed as markdown and kept in the results.
 */
final class CatalogSummary
{
    private final List<String[]> rows = new ArrayList<>();

    /**
     * @param row metric, OrbitKV value, anchor, ratio, goal.
     */
    void add(final String[] row)
    {
        rows.add(row);
    }

    /**
     * Print the table as markdown and put its rows in the results under {@code summary}.
     *
     * @param out     where the table goes.
     * @param results the bench's results.
     */
    void print(final PrintWriter out, final Map<String, Object> results)
    {
        out.println();
        out.println("| metric | OrbitKV | anchor (same run) | ratio | goal |");
        out.println("|---|---|---|---|---|");
        for (final String[] row : rows)
        {
            out.printf(Locale.ROOT, "| %s | %s | %s | %s | %s |%n", row[0], row[1], row[2], row[3], row[4]);
        }
        out.flush();
        final List<Map<String, String>> table = new ArrayList<>();
        for (final String[] row : rows)
        {
            final Map<String, String> map = new LinkedHashMap<>();
            map.put("metric", row[0]);
            map.put("orbitkv", row[1]);
            map.put("anchor", row[2]);
            map.put("ratio", row[3]);
            map.put("goal", row[4]);
            table.add(map);
        }
        results.put("summary", table);
    }

    static String fmt(final double value, final String format)
    {
        return Double.isNaN(value) ? "n/a" : String.format(Locale.ROOT, format, value);
    }

    static String ratio(final double value)
    {
        return Double.isNaN(value) || Double.isInfinite(value) ? "n/a" : String.format(Locale.ROOT, "%.2fx", value);
    }
}
