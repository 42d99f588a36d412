package io.orbitkv.manager.idle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.CachedNanoClock;
import org.agrona.concurrent.SystemNanoClock;
import org.junit.jupiter.api.Test;

class WaitingBackoffIdleStrategyTest
{
    private final List<Long> waits = new ArrayList<>();
    private boolean eventNext;

    private final IdleWait recording = (timeoutNs) ->
    {
        waits.add(timeoutNs);
        final boolean event = eventNext;
        eventNext = false;
        return event;
    };

    private final IdleWait waitNotUsed = (timeoutNs) ->
    {
        throw new AssertionError("with a sleep, a park is one of its naps");
    };

    @Test
    void shouldSpinYieldThenWaitWithDoublingPeriodsUpToTheMaximum()
    {
        final WaitingBackoffIdleStrategy idle =
            new WaitingBackoffIdleStrategy(3, 2, 1_000, 5_000, SystemNanoClock.INSTANCE, 0, recording, null, 0);
        // One cycle to enter, three spins, two yields and the switch: no wait yet.
        for (int i = 0; i < 7; i++)
        {
            idle.idle(0);
        }
        assertEquals(List.of(), waits);
        for (int i = 0; i < 5; i++)
        {
            idle.idle(0);
        }
        assertEquals(List.of(1_000L, 2_000L, 4_000L, 5_000L, 5_000L), waits);
    }

    @Test
    void shouldYieldUntilTheLingerHasPassedSinceTheLastWorkBeforeItWaits()
    {
        final long lingerNs = TimeUnit.MICROSECONDS.toNanos(50);
        final CachedNanoClock clock = new CachedNanoClock();
        clock.update(1_000_000L);
        final WaitingBackoffIdleStrategy idle = new WaitingBackoffIdleStrategy(
            3, 2, 1_000, 5_000, clock, lingerNs, recording, null, 0);
        for (int round = 0; round < 2; round++)
        {
            idle.idle(1);
            // The cycle that enters idleness notes the time; three spins and two yields follow.
            for (int i = 0; i < 6; i++)
            {
                idle.idle(0);
            }
            // Past its yields, the agent goes on yielding for as long as the linger has not passed.
            clock.advance(lingerNs - 1);
            for (int i = 0; i < 1_000; i++)
            {
                idle.idle(0);
            }
            assertEquals(round, waits.size(), "no wait within the linger");

            clock.advance(1);
            idle.idle(0);
            idle.idle(0);
            assertEquals(round + 1, waits.size(), "a wait once the linger has passed");
            assertEquals(1_000L, waits.get(round));
        }
    }

    @Test
    void shouldRefuseANegativeLinger()
    {
        assertThrows(IllegalArgumentException.class, () -> new WaitingBackoffIdleStrategy(
            1, 1, 1, 10, SystemNanoClock.INSTANCE, -1, null, null, 0));
    }

    @Test
    void shouldStartOverAfterAnEventOrWork()
    {
        final WaitingBackoffIdleStrategy idle =
            new WaitingBackoffIdleStrategy(3, 2, 1_000, 5_000, SystemNanoClock.INSTANCE, 0, recording, null, 0);
        for (int i = 0; i < 9; i++)
        {
            idle.idle(0);
        }
        assertEquals(List.of(1_000L, 2_000L), waits);

        // An event ends a wait: the backoff starts over from spinning.
        eventNext = true;
        idle.idle(0);
        assertEquals(List.of(1_000L, 2_000L, 4_000L), waits);
        for (int i = 0; i < 7; i++)
        {
            idle.idle(0);
        }
        idle.idle(0);
        assertEquals(List.of(1_000L, 2_000L, 4_000L, 1_000L), waits);

        // Work resets it too.
        idle.idle(1);
        for (int i = 0; i < 8; i++)
        {
            idle.idle(0);
        }
        assertEquals(List.of(1_000L, 2_000L, 4_000L, 1_000L, 1_000L), waits);
    }

    @Test
    void shouldRejectParkPeriodsOutOfOrder()
    {
        assertThrows(IllegalArgumentException.class, () -> new WaitingBackoffIdleStrategy(1, 1, 0, 10));
        assertThrows(IllegalArgumentException.class, () -> new WaitingBackoffIdleStrategy(1, 1, 10, 5));
    }

    @Test
    void shouldSleepAfterTheSpellOfParkingUntilAnEventThenBackOffAgain()
    {
        final List<Boolean> sleepResults = new ArrayList<>();
        final int[] sleeps = {0};
        final IdleSleep sleep = new IdleSleep()
        {
            public boolean sleep()
            {
                sleeps[0]++;
                return !sleepResults.isEmpty() && sleepResults.remove(0);
            }

            public boolean nap(final long timeoutNs)
            {
                return recording.await(timeoutNs);
            }
        };
        final WaitingBackoffIdleStrategy idle = new WaitingBackoffIdleStrategy(
            3, 2, 1_000, 5_000, SystemNanoClock.INSTANCE, 0, waitNotUsed, sleep, 0);
        // Spins and yields, then one park (a nap of the sleep, not the wait): with no spell to wait out, every idle
        // cycle after it is a sleep.
        for (int i = 0; i < 8; i++)
        {
            idle.idle(0);
        }
        assertEquals(List.of(1_000L), waits);
        assertEquals(0, sleeps[0]);
        idle.idle(0);
        idle.idle(0);
        assertEquals(2, sleeps[0], "a sleep that timed out leaves the strategy asleep");
        assertEquals(List.of(1_000L), waits);

        // A doorbell ends a sleep: work follows, so the next idle cycles back off from the start.
        sleepResults.add(true);
        idle.idle(0);
        assertEquals(3, sleeps[0]);
        for (int i = 0; i < 8; i++)
        {
            idle.idle(0);
        }
        assertEquals(3, sleeps[0]);
        assertEquals(List.of(1_000L, 1_000L), waits);

        // One cycle of work after a sleep that timed out (the agent's timers) goes straight back to sleep...
        idle.idle(0);
        assertEquals(4, sleeps[0]);
        idle.idle(1);
        idle.idle(0);
        assertEquals(5, sleeps[0]);
        assertEquals(List.of(1_000L, 1_000L), waits);

        // ...work in two cycles in a row backs off from the start.
        idle.idle(1);
        idle.idle(1);
        idle.idle(0);
        assertEquals(5, sleeps[0]);
        for (int i = 0; i < 7; i++)
        {
            idle.idle(0);
        }
        assertEquals(5, sleeps[0]);
        assertEquals(List.of(1_000L, 1_000L, 1_000L), waits);
    }
}
