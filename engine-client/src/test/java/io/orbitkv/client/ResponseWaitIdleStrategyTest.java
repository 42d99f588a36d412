package io.orbitkv.client;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.CachedNanoClock;
import org.junit.jupiter.api.Test;

class ResponseWaitIdleStrategyTest
{
    @Test
    void shouldYieldForTheWindowBeforeItParksAndStartOverAfterWork()
    {
        final long windowNs = TimeUnit.MICROSECONDS.toNanos(200);
        final CachedNanoClock clock = new CachedNanoClock();
        clock.update(1_000_000L);
        final ResponseWaitIdleStrategy idle = new ResponseWaitIdleStrategy(windowNs, clock);
        for (int round = 0; round < 2; round++)
        {
            idle.idle(1);
            assertFalse(idle.parking(), "work starts the wait over");
            // 100 spins, then the first yield starts the window.
            for (int i = 0; i < 101; i++)
            {
                idle.idle(0);
            }
            clock.advance(windowNs - 1);
            for (int i = 0; i < 1_000; i++)
            {
                assertFalse(idle.parking(), "still yielding within the window, cycle " + i);
                idle.idle(0);
            }
            clock.advance(1);
            assertTrue(idle.parking(), "parks once the window has passed");
        }
    }

    @Test
    void shouldYieldAtLeastOneHundredTimesEvenWhenTheWindowHasPassed()
    {
        final CachedNanoClock clock = new CachedNanoClock();
        final ResponseWaitIdleStrategy idle = new ResponseWaitIdleStrategy(TimeUnit.MICROSECONDS.toNanos(200), clock);
        for (int i = 0; i < 101; i++)
        {
            idle.idle(0);
        }
        clock.advance(TimeUnit.SECONDS.toNanos(1));
        for (int i = 1; i < 100; i++)
        {
            assertFalse(idle.parking(), "yield " + i);
            idle.idle(0);
        }
        assertTrue(idle.parking());
    }

    @Test
    void shouldParkAfterTheSpinsAndYieldsAloneWithoutAWindow()
    {
        final ResponseWaitIdleStrategy idle = new ResponseWaitIdleStrategy(0);
        for (int i = 0; i < 200; i++)
        {
            assertFalse(idle.parking(), "cycle " + i);
            idle.idle();
        }
        assertTrue(idle.parking());
    }

    @Test
    void shouldRefuseANegativeWindow()
    {
        assertThrows(IllegalArgumentException.class, () -> new ResponseWaitIdleStrategy(-1));
    }
}
