package io.orbitkv.manager.membership;

import java.util.concurrent.locks.LockSupport;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * Idles a membership agent until the next time it has something due or until another thread signals an event
 * (a watch callback, a keepalive reply, a fence), whichever comes first. Membership work is a handful of etcd round
 * trips per TTL, so a fixed sleep period only burns wake-ups: an idle clustered Manager's membership threads wake
 * for their keepalives and for etcd's events, never to poll.
 *
 * <p>The agent names its next due time through {@link #dueAt(long)} on its own thread; {@link #signal()} is for any
 * thread. A signal that comes before the park is not lost: it leaves an unpark permit and a flag.
 */
final class DueTimeIdleStrategy implements IdleStrategy
{
    /**
     * Longest single park, so that a lost signal (a bug, never expected) costs at most this much delay rather than
     * a stall; at one wake-up a minute it costs nothing measurable.
     */
    static final long MAX_PARK_NS = 60_000_000_000L;

    private final NanoClock clock;
    private final AtomicCounter wakeups;
    private volatile Thread thread;
    private volatile boolean signalled;
    private volatile boolean shutdown;
    private long dueNs = Long.MAX_VALUE;

    DueTimeIdleStrategy(final NanoClock clock, final AtomicCounter wakeups)
    {
        this.clock = clock;
        this.wakeups = wakeups;
    }

    /**
     * The agent's next due time (agent thread only); replaces the previous one. Call in every duty cycle that
     * changes it; {@link Long#MAX_VALUE} means "only an event".
     *
     * @param nextDueNs absolute nano clock time.
     */
    void dueAt(final long nextDueNs)
    {
        dueNs = nextDueNs;
    }

    /**
     * End the current or the next park (any thread).
     */
    void signal()
    {
        signalled = true;
        final Thread t = thread;
        if (null != t)
        {
            LockSupport.unpark(t);
        }
    }

    /**
     * Stop parking for good (any thread), so that the agent's runner sees it is closing at once rather than at the
     * end of a park that may last until the next keepalive.
     */
    void shutdown()
    {
        shutdown = true;
        signal();
    }

    public void idle(final int workCount)
    {
        if (workCount > 0)
        {
            return;
        }
        idle();
    }

    public void idle()
    {
        if (null == thread)
        {
            thread = Thread.currentThread();
        }
        if (shutdown)
        {
            Thread.yield();
            return;
        }
        if (signalled)
        {
            signalled = false;
            return;
        }
        final long waitNs = dueNs - clock.nanoTime();
        if (waitNs > 0)
        {
            LockSupport.parkNanos(this, Math.min(waitNs, MAX_PARK_NS));
            wakeups.increment();
        }
        signalled = false;
    }

    public void reset()
    {
    }

    public String alias()
    {
        return "due-time";
    }
}
