package io.orbitkv.client;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

class ResponseWaitIdleStrategyTest
{
    @Test
    void shouldYieldForTheWindowBeforeItParksAndStartOverAfterWork()
    {
        final long windowNs = TimeUnit.MILLISECONDS.toNanos(20);
        final ResponseWaitIdleStrategy idle = new ResponseWaitIdleStrategy(windowNs);
        for (int round = 0; round < 2; round++)
        {
            idle.idle(1);
            assertFalse(idle.parking(), "work starts the wait over");
            final long startNs = System.nanoTime();
            final long deadlineNs = startNs + TimeUnit.SECONDS.toNanos(10);
            long cycles = 0;
            while (!idle.parking() && System.nanoTime() < deadlineNs)
            {
                idle.idle(0);
                cycles++;
            }
            final long elapsedNs = System.nanoTime() - startNs;
            assertTrue(idle.parking(), "parks once the window has passed");
            assertTrue(elapsedNs >= windowNs, "parked " + elapsedNs + " ns after the wait began");
            assertTrue(cycles > 200, "kept yielding past 100 spins and 100 yields: " + cycles + " cycles");
        }
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
