package io.orbitkv.client;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.SystemNanoClock;

/**
 * How an {@link EngineClient} waits for the Manager, its default: spin 100 times, then yield at least 100 times and
 * for a window counted from the first yield, then park doubling from 1 us to 100 us. A park ends late by the
 * kernel's timer slack (~50 us on Linux), so a waiter that parks early leaves an answer lying in the ring; the
 * window covers the usual answer, including one from a Manager the request had to wake (tens of microseconds on a
 * VM), and only longer waits (large copies, a Manager busy with others) park. The C client waits the same way
 * ({@code okv_options.wait_yield_us}). Used by one thread at a time.
 */
public final class ResponseWaitIdleStrategy implements IdleStrategy
{
    /** The default yield window, the C client's too. */
    public static final long DEFAULT_YIELD_WINDOW_NS = TimeUnit.MICROSECONDS.toNanos(200);

    private static final int MAX_SPINS = 100;
    private static final int MIN_YIELDS = 100;
    private static final long MIN_PARK_NS = TimeUnit.MICROSECONDS.toNanos(1);
    private static final long MAX_PARK_NS = TimeUnit.MICROSECONDS.toNanos(100);

    private final long yieldWindowNs;
    private final NanoClock clock;
    private int spins;
    private int yields;
    private long yieldUntilNs;
    private long parkNs = MIN_PARK_NS;

    /**
     * @param yieldWindowNs how long to keep yielding, from the first yield, before parking (0: 100 yields only).
     */
    public ResponseWaitIdleStrategy(final long yieldWindowNs)
    {
        this(yieldWindowNs, SystemNanoClock.INSTANCE);
    }

    ResponseWaitIdleStrategy(final long yieldWindowNs, final NanoClock clock)
    {
        if (yieldWindowNs < 0)
        {
            throw new IllegalArgumentException("yieldWindowNs must be >= 0: " + yieldWindowNs);
        }
        this.yieldWindowNs = yieldWindowNs;
        this.clock = clock;
    }

    public void idle(final int workCount)
    {
        if (workCount > 0)
        {
            reset();
        }
        else
        {
            idle();
        }
    }

    public void idle()
    {
        if (spins < MAX_SPINS)
        {
            spins++;
            Thread.onSpinWait();
            return;
        }
        if (0 == yields)
        {
            yieldUntilNs = clock.nanoTime() + yieldWindowNs;
        }
        if (yields < MIN_YIELDS || (yieldWindowNs > 0 && clock.nanoTime() < yieldUntilNs))
        {
            yields++;
            Thread.yield();
            return;
        }
        LockSupport.parkNanos(parkNs);
        parkNs = Math.min(parkNs << 1, MAX_PARK_NS);
    }

    public void reset()
    {
        spins = 0;
        yields = 0;
        parkNs = MIN_PARK_NS;
    }

    /**
     * @return whether the next idle cycle parks (the spins and the yield window are over).
     */
    boolean parking()
    {
        return spins >= MAX_SPINS && yields >= MIN_YIELDS && (0 == yieldWindowNs || clock.nanoTime() >= yieldUntilNs);
    }

    public String alias()
    {
        return "response-wait";
    }

    public String toString()
    {
        return "ResponseWaitIdleStrategy{yieldWindowNs=" + yieldWindowNs + "}";
    }
}
