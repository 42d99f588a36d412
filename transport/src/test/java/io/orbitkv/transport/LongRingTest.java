package io.orbitkv.transport;

import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class LongRingTest
{
    @Test
    void shouldRefuseOfferWhenFullAndKeepOrder()
    {
        final LongRing ring = new LongRing(4);
        assertEquals(4, ring.capacity());
        for (int i = 0; i < 4; i++)
        {
            assertTrue(ring.offer(i));
        }
        assertFalse(ring.offer(4));
        assertFalse(ring.isEmpty());
        assertEquals(0, ring.take());
        assertTrue(ring.offer(4));
        for (int i = 1; i <= 4; i++)
        {
            assertFalse(ring.isEmpty());
            assertEquals(i, ring.take());
        }
        assertTrue(ring.isEmpty());
    }

    @Test
    void shouldPassEveryValueInOrderBetweenTwoThreads() throws InterruptedException
    {
        final LongRing ring = new LongRing(64);
        final long count = 200_000;
        final Thread producer = new Thread(() ->
        {
            for (long i = 0; i < count; i++)
            {
                while (!ring.offer(i))
                {
                    Thread.onSpinWait();
                }
            }
        });
        producer.start();
        for (long i = 0; i < count; i++)
        {
            while (ring.isEmpty())
            {
                Thread.onSpinWait();
            }
            assertEquals(i, ring.take());
        }
        producer.join();
    }
}
