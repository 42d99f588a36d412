package io.orbitkv.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import org.agrona.concurrent.status.CountersReader;

/**
 * The transfer counters of a Manager read from its CnC file by label: every allocated counter whose label starts with
 * {@value #LABEL_PREFIX} or {@value #TRANSPORT_LABEL_PREFIX}, found once and then sampled by id, so the figures a bench
 * prints follow whatever transfer counters the running build has. A background sampler keeps the largest value each
 * one showed, for gauges such as pinned or staging bytes that fall back to zero when the work is done.
 */
final class TransferCounters implements AutoCloseable
{
    /** The label prefix of the transfer counters ("Transfer source: ...", "Transfer requester: ...", ids 150-199). */
    static final String LABEL_PREFIX = "Transfer";

    /** The label prefix of the built-in transport's statistics (type ids 6000+, copied every 100 ms). */
    static final String TRANSPORT_LABEL_PREFIX = "transport:";

    /** Time between two samples of the sampler. */
    static final long SAMPLE_INTERVAL_NS = TimeUnit.MILLISECONDS.toNanos(1);

    private final String name;
    private final CountersReader counters;
    private final int[] ids;
    private final String[] labels;
    private final long[] max;
    private final long[] base;
    private volatile boolean running = true;
    private final Thread sampler;

    /**
     * Find the transfer counters and start sampling them.
     *
     * @param name     the Manager's name in printed lines.
     * @param counters the Manager's counters (its CnC file stays mapped while this runs).
     */
    TransferCounters(final String name, final CountersReader counters)
    {
        this.name = name;
        this.counters = counters;
        final List<Integer> foundIds = new ArrayList<>();
        final List<String> foundLabels = new ArrayList<>();
        counters.forEach((counterId, typeId, keyBuffer, label) ->
        {
            if (label.startsWith(LABEL_PREFIX) || label.startsWith(TRANSPORT_LABEL_PREFIX))
            {
                foundIds.add(counterId);
                foundLabels.add(label);
            }
        });
        ids = foundIds.stream().mapToInt(Integer::intValue).toArray();
        labels = foundLabels.toArray(new String[0]);
        max = new long[ids.length];
        base = new long[ids.length];
        for (int i = 0; i < ids.length; i++)
        {
            base[i] = counters.getCounterValue(ids[i]);
            max[i] = base[i];
        }
        sampler = new Thread(this::sample, "transfer-counters-" + name);
        sampler.setDaemon(true);
        sampler.start();
    }

    private void sample()
    {
        while (running)
        {
            for (int i = 0; i < ids.length; i++)
            {
                final long value = counters.getCounterValue(ids[i]);
                if (value > max[i])
                {
                    max[i] = value;
                }
            }
            LockSupport.parkNanos(SAMPLE_INTERVAL_NS);
        }
    }

    /**
     * @return how many transfer counters this build has.
     */
    int count()
    {
        return ids.length;
    }

    /**
     * The largest value seen of the first counter whose label contains every word, or null when the build has none.
     *
     * @param words lower-case words the label must contain.
     * @return the value or null.
     */
    Long maxOf(final String... words)
    {
        final int i = find(words);
        return i < 0 ? null : Math.max(max[i], counters.getCounterValue(ids[i]));
    }

    /**
     * How much the first counter whose label contains every word grew since sampling began, or null.
     *
     * @param words lower-case words the label must contain.
     * @return the growth or null.
     */
    Long deltaOf(final String... words)
    {
        final int i = find(words);
        return i < 0 ? null : counters.getCounterValue(ids[i]) - base[i];
    }

    private int find(final String... words)
    {
        for (int i = 0; i < ids.length; i++)
        {
            final String label = labels[i].toLowerCase(Locale.ROOT);
            boolean all = true;
            for (final String word : words)
            {
                all &= label.contains(word);
            }
            if (all)
            {
                return i;
            }
        }
        return -1;
    }

    /**
     * Every transfer counter that moved or is not zero: its value now, its growth since sampling began and its largest
     * value seen.
     *
     * @return label to {now, delta, max}.
     */
    Map<String, Object> snapshot()
    {
        final Map<String, Object> all = new LinkedHashMap<>();
        for (int i = 0; i < ids.length; i++)
        {
            final long now = counters.getCounterValue(ids[i]);
            if (0 != now || 0 != max[i])
            {
                all.put(labels[i], Map.of("now", now, "delta", now - base[i], "max", Math.max(max[i], now)));
            }
        }
        return all;
    }

    /**
     * One compact line: {@code name: label=now (max M); ...} for every counter that is not zero.
     *
     * @return the line.
     */
    String describe()
    {
        final StringBuilder line = new StringBuilder(name).append(" (").append(ids.length)
            .append(" transfer and transport counters):");
        int shown = 0;
        for (int i = 0; i < ids.length; i++)
        {
            final long now = counters.getCounterValue(ids[i]);
            if (0 != now || 0 != max[i])
            {
                // "Transfer source: sessions granted" -> "source: sessions granted"
                final String label = labels[i].startsWith(LABEL_PREFIX) ?
                    labels[i].substring(LABEL_PREFIX.length()).trim() : labels[i];
                line.append(0 == shown++ ? " " : "; ").append(label).append('=').append(now);
                if (max[i] > now)
                {
                    line.append(" (max ").append(max[i]).append(')');
                }
            }
        }
        if (0 == shown)
        {
            line.append(" all zero");
        }
        return line.toString();
    }

    public void close()
    {
        running = false;
        try
        {
            sampler.join(TimeUnit.SECONDS.toMillis(1));
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }
}
