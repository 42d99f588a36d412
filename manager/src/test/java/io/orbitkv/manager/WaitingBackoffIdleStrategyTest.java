package io.orbitkv.manager;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;

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

    @Test
    void shouldSpinYieldThenWaitWithDoublingPeriodsUpToTheMaximum()
    {
        final WaitingBackoffIdleStrategy idle = new WaitingBackoffIdleStrategy(3, 2, 1_000, 5_000).idleWait(recording);
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
    void shouldStartOverAfterAnEventOrWork()
    {
        final WaitingBackoffIdleStrategy idle = new WaitingBackoffIdleStrategy(3, 2, 1_000, 5_000).idleWait(recording);
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
}
