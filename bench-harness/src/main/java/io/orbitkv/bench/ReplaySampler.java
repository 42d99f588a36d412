package io.orbitkv.bench;

import io.orbitkv.manager.catalog.CatalogCounter;
import io.orbitkv.manager.status.CounterDescriptor;
import io.orbitkv.manager.transfer.TransferCounter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;


/**
 * Samples the Managers' transfer and catalog gauges during a replay every {@value #INTERVAL_MS} ms: the largest
 * sender pinned bytes, sessions, fetches and reads in flight, and how long any hosted shard had incomplete coverage.
 */
final class ReplaySampler implements AutoCloseable
{
    static final long INTERVAL_MS = 100;

    /** The gauges sampled, by the name the figures use. */
    static final Map<String, CounterDescriptor> GAUGES = Map.of(
        "senderPinnedBytes", TransferCounter.SOURCE_PINNED_BYTES,
        "sourceSessionsActive", TransferCounter.SOURCE_SESSIONS_ACTIVE,
        "requesterFetchesActive", TransferCounter.FETCHES_ACTIVE,
        "requesterReadsInFlight", TransferCounter.READS_IN_FLIGHT,
        "quarantinedBytes", TransferCounter.SOURCE_QUARANTINED_BYTES);

    private final List<BenchManager> managers;
    private final Map<String, Long> max = new LinkedHashMap<>();
    private volatile boolean running;
    private volatile long incompleteNs;
    private Thread thread;

    ReplaySampler(final List<BenchManager> managers)
    {
        this.managers = managers;
        for (final String name : GAUGES.keySet())
        {
            max.put(name, 0L);
        }
    }

    void start()
    {
        running = true;
        thread = new Thread(this::sample, "replay-sampler");
        thread.setDaemon(true);
        thread.start();
    }

    private void sample()
    {
        long lastNs = System.nanoTime();
        while (running)
        {
            boolean incomplete = false;
            for (final Map.Entry<String, CounterDescriptor> gauge : GAUGES.entrySet())
            {
                long sum = 0;
                for (final BenchManager m : managers)
                {
                    sum += m.counter(gauge.getValue());
                }
                final long total = sum;
                synchronized (max)
                {
                    max.merge(gauge.getKey(), total, Math::max);
                }
            }
            for (final BenchManager m : managers)
            {
                incomplete |= m.counter(CatalogCounter.INCOMPLETE_SHARDS) > 0;
            }
            final long nowNs = System.nanoTime();
            if (incomplete)
            {
                incompleteNs += nowNs - lastNs;
            }
            lastNs = nowNs;
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(INTERVAL_MS));
        }
    }

    Map<String, Long> max()
    {
        synchronized (max)
        {
            return new LinkedHashMap<>(max);
        }
    }

    double incompleteSeconds()
    {
        return incompleteNs / 1e9;
    }

    /**
     * Wait until no Manager holds transfer pins, sessions or fetches, for at most {@code timeoutNs}.
     *
     * @param timeoutNs how long to wait.
     * @return each gauge summed over the Managers at the end of the wait (not zero: leaked).
     */
    Map<String, Long> drain(final long timeoutNs)
    {
        final long deadlineNs = System.nanoTime() + timeoutNs;
        while (true)
        {
            final Map<String, Long> now = new LinkedHashMap<>();
            long total = 0;
            for (final Map.Entry<String, CounterDescriptor> gauge : GAUGES.entrySet())
            {
                long sum = 0;
                for (final BenchManager m : managers)
                {
                    sum += m.counter(gauge.getValue());
                }
                now.put(gauge.getKey(), sum);
                total += sum;
            }
            if (0 == total || System.nanoTime() - deadlineNs > 0)
            {
                return now;
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(INTERVAL_MS));
        }
    }

    public void close()
    {
        running = false;
        if (null != thread)
        {
            try
            {
                thread.join(TimeUnit.SECONDS.toMillis(1));
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
        }
    }
}
