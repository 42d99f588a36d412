package io.orbitkv.bench;

import java.io.IOException;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * GC collections and time of this JVM (MXBeans) and of one child JVM ({@code jstat -gc}), taken before and
 * after a measured phase. Counts include young, full and concurrent cycles.
 */
final class GcSnapshot
{
    private final long pid;
    private final long clientCount;
    private final long clientTimeMs;
    private final long peerCount;
    private final double peerTimeMs;

    private GcSnapshot(final long pid, final long clientCount, final long clientTimeMs, final long peerCount,
        final double peerTimeMs)
    {
        this.pid = pid;
        this.clientCount = clientCount;
        this.clientTimeMs = clientTimeMs;
        this.peerCount = peerCount;
        this.peerTimeMs = peerTimeMs;
    }

    static GcSnapshot take(final long pid)
    {
        long count = 0;
        long timeMs = 0;
        for (final GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans())
        {
            count += Math.max(0, gc.getCollectionCount());
            timeMs += Math.max(0, gc.getCollectionTime());
        }
        final double[] peer = jstat(pid);
        return new GcSnapshot(pid, count, timeMs, (long)peer[0], peer[1]);
    }

    /**
     * Collections since this snapshot in both processes, -1 if the peer could not be read.
     *
     * @param later snapshot after the phase.
     * @return total collections.
     */
    long collectionsUntil(final GcSnapshot later)
    {
        if (peerCount < 0 || later.peerCount < 0)
        {
            return -1;
        }
        return (later.clientCount - clientCount) + (later.peerCount - peerCount);
    }

    String describeUntil(final GcSnapshot later, final String peerName)
    {
        return String.format("GC during phase: this client %d (%d ms), %s %d (%.1f ms)",
            later.clientCount - clientCount, later.clientTimeMs - clientTimeMs, peerName,
            later.peerCount - peerCount, later.peerTimeMs - peerTimeMs);
    }

    GcSnapshot again()
    {
        return take(pid);
    }

    /** {collections, time ms} of a child JVM from {@code jstat -gc}, or {-1, -1} when jstat cannot tell. */
    private static double[] jstat(final long pid)
    {
        try
        {
            final Process jstat = new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "jstat").toString(), "-gc", Long.toString(pid))
                .redirectErrorStream(true).start();
            final String text = new String(jstat.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
            jstat.waitFor(10, TimeUnit.SECONDS);
            final String[] lines = text.trim().split("\n");
            if (lines.length < 2)
            {
                return new double[]{-1, -1};
            }
            final List<String> names = new ArrayList<>(List.of(lines[0].trim().split("\\s+")));
            final String[] values = lines[1].trim().split("\\s+");
            long count = 0;
            for (final String column : new String[]{"YGC", "FGC", "CGC"})
            {
                final int i = names.indexOf(column);
                if (i >= 0 && i < values.length && !"-".equals(values[i]))
                {
                    count += Long.parseLong(values[i]);
                }
            }
            final int t = names.indexOf("GCT");
            final double timeMs = t >= 0 && t < values.length && !"-".equals(values[t]) ?
                Double.parseDouble(values[t]) * 1000.0 : 0.0;
            return new double[]{count, timeMs};
        }
        catch (final IOException | InterruptedException | NumberFormatException ex)
        {
            return new double[]{-1, -1};
        }
    }
}
