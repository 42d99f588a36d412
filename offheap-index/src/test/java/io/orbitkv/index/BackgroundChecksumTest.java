package io.orbitkv.index;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class BackgroundChecksumTest
{
    private static final long REGION_BYTES = 8L << 20;
    private static final long AWAIT_NS = TimeUnit.SECONDS.toNanos(20);

    private Arena arena;
    private MemorySegment region;
    private BackgroundChecksum background;

    @BeforeEach
    void setUp()
    {
        arena = Arena.ofShared();
        region = arena.allocate(REGION_BYTES, 4096);
        final SplittableRandom random = new SplittableRandom(27);
        for (long i = 0; i < REGION_BYTES; i += Long.BYTES)
        {
            region.set(ValueLayout.JAVA_LONG, i, random.nextLong());
        }
        background = new BackgroundChecksum(region);
    }

    @AfterEach
    void tearDown()
    {
        background.close();
        arena.close();
    }

    private int crc32c(final long offset, final long length)
    {
        final CRC32C crc = new CRC32C();
        crc.update(region.asSlice(offset, length).asByteBuffer());
        return (int)crc.getValue();
    }

    @Test
    void shouldSumEveryRangeAndHandTheSumsBackInSubmissionOrder()
    {
        final SplittableRandom random = new SplittableRandom(5);
        final List<long[]> submittedRanges = new ArrayList<>();
        final List<int[]> drainedSums = new ArrayList<>();
        final BackgroundChecksum.Handler handler = (slot, crc32c) -> drainedSums.add(new int[]{slot, crc32c});
        final int jobs = 200;
        final int[] slots = new int[jobs];
        final long deadlineNs = System.nanoTime() + AWAIT_NS;
        for (int i = 0; i < jobs; i++)
        {
            final long length = random.nextInt((int)(2L << 20) + 1);
            final long offset = random.nextLong(REGION_BYTES - length + 1);
            int slot;
            while ((slot = background.submit(offset, length)) < 0)
            {
                background.drain(handler);
                assertTrue(System.nanoTime() - deadlineNs < 0, "the ring never emptied");
            }
            slots[i] = slot;
            submittedRanges.add(new long[]{offset, length});
        }
        while (drainedSums.size() < jobs)
        {
            background.drain(handler);
            if (System.nanoTime() - deadlineNs > 0)
            {
                fail(drainedSums.size() + " of " + jobs + " sums came back");
            }
        }

        assertEquals(0, background.outstanding());
        for (int i = 0; i < jobs; i++)
        {
            final long[] range = submittedRanges.get(i);
            assertEquals(slots[i], drainedSums.get(i)[0], "job " + i + " came back out of order");
            assertEquals(crc32c(range[0], range[1]), drainedSums.get(i)[1], "sum of job " + i);
        }
    }

    @Test
    void shouldRefuseAJobPastTheSlotsUntilOneIsDrained()
    {
        for (int i = 0; i < BackgroundChecksum.SLOTS; i++)
        {
            assertEquals(i, background.submit((long)i << 16, 1 << 16));
        }
        assertEquals(-1, background.submit(0, 4096), "a full ring takes no job");
        assertEquals(BackgroundChecksum.SLOTS, background.outstanding());

        final int[] sums = new int[BackgroundChecksum.SLOTS];
        final int[] drained = {0};
        final long deadlineNs = System.nanoTime() + AWAIT_NS;
        while (0 == drained[0])
        {
            background.drain((slot, crc32c) -> sums[drained[0]++] = crc32c);
            assertTrue(System.nanoTime() - deadlineNs < 0, "no sum came back");
        }
        assertEquals(crc32c(0, 1 << 16), sums[0]);
        assertTrue(background.submit(0, 4096) >= 0, "a drained slot takes the next job");
    }

    @Test
    void shouldParkWhenIdleAndWakeForTheNextJobThenStopOnClose() throws InterruptedException
    {
        final int[] sum = new int[1];
        final int[] count = {0};
        final BackgroundChecksum.Handler handler = (slot, crc32c) ->
        {
            sum[0] = crc32c;
            count[0]++;
        };
        assertEquals(0, background.submit(0, 4096));
        awaitSums(handler, count, 1);
        final Thread summing = summingThread();
        final long deadlineNs = System.nanoTime() + AWAIT_NS;
        while (Thread.State.WAITING != summing.getState())
        {
            assertTrue(System.nanoTime() - deadlineNs < 0, "the idle summing thread did not park: " + summing.getState());
            Thread.sleep(1);
        }

        assertEquals(1, background.submit(4096, 12345));
        awaitSums(handler, count, 2);
        assertEquals(crc32c(4096, 12345), sum[0]);

        background.close();
        assertFalse(summing.isAlive());
        assertEquals(-1, background.submit(0, 4096), "a closed checksum takes no job");
    }

    private void awaitSums(final BackgroundChecksum.Handler handler, final int[] count, final int expected)
    {
        final long deadlineNs = System.nanoTime() + AWAIT_NS;
        while (count[0] < expected)
        {
            background.drain(handler);
            assertTrue(System.nanoTime() - deadlineNs < 0, "sum " + expected + " did not come back");
        }
    }

    private static Thread summingThread()
    {
        for (final Thread thread : Thread.getAllStackTraces().keySet())
        {
            if (BackgroundChecksum.THREAD_NAME.equals(thread.getName()) && thread.isAlive())
            {
                return thread;
            }
        }
        throw new AssertionError("no " + BackgroundChecksum.THREAD_NAME + " thread");
    }
}
