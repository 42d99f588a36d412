package io.orbitkv.manager.idle;

import java.util.concurrent.locks.LockSupport;

import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.SystemNanoClock;

/**
 * The Manager agent's backoff: spin, then yield, then sleep for a period that doubles from a minimum to a maximum,
 * like Agrona's {@code BackoffIdleStrategy}, except that each sleep is an {@link IdleWait} when one is given: a
 * clustered Manager sleeps in epoll on its peer socket, so a peer's datagram ends the sleep rather than the timer.
 * An event resets the backoff (work follows). Without a wait it parks on the timer.
 * <p>
 * With an {@link IdleSleep}, each park is one of its naps: announced like a sleep, so an engine's request during a
 * park rings the doorbell and ends it rather than waiting out a timer that Linux rounds up to its slack (~50 us);
 * the nap also watches whatever the sleep watches (the peer socket of a clustered Manager). An agent that has parked
 * for a spell of idleness ({@code sleepAfterNs}) goes deeper: each idle cycle from then on is one sleep that an
 * engine's doorbell or a peer's datagram ends, or the agent's next deadline; an idle Manager then wakes a few times
 * a second instead of ~10,000 times. A sleep that ends on its timeout leaves the strategy asleep: the duty cycle
 * after it runs the agent's timers (housekeeping, the media driver's heartbeats), and if that one cycle had work the
 * strategy still goes straight back to sleep rather than through another spell of spinning and parking. An event, or
 * work in two cycles in a row, resets it. The wait and the sleep are given at construction; the strategy is used by
 * one agent thread.
 * <p>
 * With a linger, the agent keeps yielding after its spins and yields until the linger has passed since it last had
 * work, and only then parks: a request that follows the last one within the linger (an engine's next call after a
 * few microseconds of its own work) finds the agent awake instead of paying a wake-up. It costs at most the linger
 * of CPU after each burst of work and nothing to an agent that has had none.
 */
public final class WaitingBackoffIdleStrategy implements IdleStrategy
{
    private static final int NOT_IDLE = 0;
    private static final int SPINNING = 1;
    private static final int YIELDING = 2;
    private static final int PARKING = 3;
    private static final int SLEEPING = 4;

    private final long maxSpins;
    private final long maxYields;
    private final long minParkPeriodNs;
    private final long maxParkPeriodNs;
    private final NanoClock clock;
    private final IdleWait wait;
    private final IdleSleep sleep;
    private final long sleepAfterNs;
    private final long lingerNs;
    private long parkingSinceNs;
    private long idleSinceNs;
    private boolean sleepTimedOut;
    private int state = NOT_IDLE;
    private long spins;
    private long yields;
    private long parkPeriodNs;

    /**
     * A plain backoff: no linger, parks on the timer, no deep sleep.
     *
     * @param maxSpins        idle cycles spent spinning before yielding.
     * @param maxYields       idle cycles spent yielding before sleeping.
     * @param minParkPeriodNs first sleep.
     * @param maxParkPeriodNs longest sleep.
     */
    public WaitingBackoffIdleStrategy(
        final long maxSpins, final long maxYields, final long minParkPeriodNs, final long maxParkPeriodNs)
    {
        this(maxSpins, maxYields, minParkPeriodNs, maxParkPeriodNs, SystemNanoClock.INSTANCE, 0, null, null, 0);
    }

    /**
     * @param maxSpins        idle cycles spent spinning before yielding.
     * @param maxYields       idle cycles spent yielding before sleeping.
     * @param minParkPeriodNs first sleep.
     * @param maxParkPeriodNs longest sleep.
     * @param clock           what the linger and the spell before the deep sleep are measured with.
     * @param lingerNs        how long after its last work the agent yields before it parks (0: after its yields only).
     * @param wait            how sleeps wait (null: timer parks).
     * @param sleep           the deep sleep after a spell of idleness (null: park for ever at the longest park).
     * @param sleepAfterNs    how long the agent parks before it sleeps.
     */
    public WaitingBackoffIdleStrategy(
        final long maxSpins,
        final long maxYields,
        final long minParkPeriodNs,
        final long maxParkPeriodNs,
        final NanoClock clock,
        final long lingerNs,
        final IdleWait wait,
        final IdleSleep sleep,
        final long sleepAfterNs)
    {
        if (minParkPeriodNs < 1 || maxParkPeriodNs < minParkPeriodNs)
        {
            throw new IllegalArgumentException("park periods must satisfy 1 <= min <= max: " + minParkPeriodNs +
                ", " + maxParkPeriodNs);
        }
        if (lingerNs < 0)
        {
            throw new IllegalArgumentException("lingerNs must be >= 0: " + lingerNs);
        }
        if (sleepAfterNs < 0)
        {
            throw new IllegalArgumentException("sleepAfterNs must be >= 0: " + sleepAfterNs);
        }
        this.maxSpins = maxSpins;
        this.maxYields = maxYields;
        this.minParkPeriodNs = minParkPeriodNs;
        this.maxParkPeriodNs = maxParkPeriodNs;
        this.clock = clock;
        this.lingerNs = lingerNs;
        this.wait = wait;
        this.sleep = sleep;
        this.sleepAfterNs = sleepAfterNs;
    }

    public void idle(final int workCount)
    {
        if (workCount > 0)
        {
            if (sleepTimedOut)
            {
                // The work of the cycle after a timed-out sleep is the agent's own timers: sleep again at once.
                sleepTimedOut = false;
                state = SLEEPING;
            }
            else
            {
                reset();
            }
        }
        else
        {
            idle();
        }
    }

    public void idle()
    {
        switch (state)
        {
            case NOT_IDLE:
                state = SPINNING;
                spins++;
                if (lingerNs > 0)
                {
                    idleSinceNs = clock.nanoTime();
                }
                break;

            case SPINNING:
                Thread.onSpinWait();
                if (++spins > maxSpins)
                {
                    state = YIELDING;
                    yields = 0;
                }
                break;

            case YIELDING:
                if (++yields > maxYields && (0 == lingerNs || clock.nanoTime() - idleSinceNs >= lingerNs))
                {
                    state = PARKING;
                    parkPeriodNs = minParkPeriodNs;
                    if (null != sleep)
                    {
                        parkingSinceNs = clock.nanoTime();
                    }
                }
                else
                {
                    Thread.yield();
                }
                break;

            case SLEEPING:
                sleepTimedOut = false;
                if (sleep.sleep())
                {
                    reset();
                }
                else
                {
                    sleepTimedOut = true;
                }
                break;

            default:
                final IdleWait current = wait;
                if (null != sleep ? sleep.nap(parkPeriodNs) : null != current && current.await(parkPeriodNs))
                {
                    reset();
                }
                else
                {
                    if (null == sleep && null == current)
                    {
                        LockSupport.parkNanos(parkPeriodNs);
                    }
                    parkPeriodNs = Math.min(parkPeriodNs << 1, maxParkPeriodNs);
                    if (null != sleep && clock.nanoTime() - parkingSinceNs >= sleepAfterNs)
                    {
                        state = SLEEPING;
                    }
                }
                break;
        }
    }

    public void reset()
    {
        sleepTimedOut = false;
        spins = 0;
        yields = 0;
        parkPeriodNs = minParkPeriodNs;
        state = NOT_IDLE;
    }

    public String alias()
    {
        return "backoff";
    }

    public String toString()
    {
        return "WaitingBackoffIdleStrategy{maxSpins=" + maxSpins + ", maxYields=" + maxYields +
            ", minParkPeriodNs=" + minParkPeriodNs + ", maxParkPeriodNs=" + maxParkPeriodNs +
            ", lingerNs=" + lingerNs + ", wait=" + (null == wait ? "timer" : wait.getClass().getSimpleName()) +
            ", sleep=" + (null == sleep ? "none" : sleep.getClass().getSimpleName() + " after " + sleepAfterNs + "ns") +
            '}';
    }
}
