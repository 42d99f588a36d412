package io.orbitkv.bench;

import java.io.PrintStream;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * The replay's progress line on stderr, rewritten in place at most every {@value #INTERVAL_MS} ms: requests done,
 * rate, hit fraction so far and the time left at the current rate.
 */
final class ReplayProgress
{
    static final long INTERVAL_MS = 500;

    private final PrintStream err;
    private final String mode;
    private final ReplayOutcomes outcomes;
    private final int total;
    private final long startNs = System.nanoTime();
    private long lastNs;

    ReplayProgress(final PrintStream err, final String mode, final ReplayOutcomes outcomes, final int total)
    {
        this.err = err;
        this.mode = mode;
        this.outcomes = outcomes;
        this.total = total;
    }

    void maybePrint()
    {
        final long nowNs = System.nanoTime();
        if (nowNs - lastNs >= TimeUnit.MILLISECONDS.toNanos(INTERVAL_MS))
        {
            lastNs = nowNs;
            print(nowNs, false);
        }
    }

    void finish()
    {
        print(System.nanoTime(), true);
    }

    private void print(final long nowNs, final boolean last)
    {
        final int done = outcomes.done.get();
        final double secs = Math.max(1e-9, (nowNs - startNs) / 1e9);
        final double rate = done / secs;
        final long blocks = outcomes.blocks.get();
        final double hit = 0 == blocks ? 0 : (double)outcomes.hits.get() / blocks;
        final int width = 30;
        final int filled = (int)((long)width * done / Math.max(1, total));
        final String bar = "#".repeat(filled) + "-".repeat(width - filled);
        err.printf(Locale.ROOT, "\r%s [%s] %d/%d %5.1f%% %6.0f req/s hit %.3f ETA %4.0f s%s", mode, bar, done, total,
            100.0 * done / Math.max(1, total), rate, hit, rate > 0 ? (total - done) / rate : 0, last ? "\n" : "");
        err.flush();
    }
}
