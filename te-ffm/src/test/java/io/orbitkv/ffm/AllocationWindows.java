package io.orbitkv.ffm;

import java.lang.management.ManagementFactory;
import java.util.concurrent.TimeUnit;

import com.sun.management.ThreadMXBean;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Measures what a warmed-up call path allocates on the calling thread. Until C2 has compiled it the FFM downcall
 * path allocates (a 40-byte segment per capturing call at C1), and on a loaded 2-core box the compile can take
 * seconds: so a window of calls is repeated until one allocates less than the limit or the timeout passes, and the
 * last window's bytes are returned. Allocation that belongs to the compiled path shows in every window and still
 * fails the caller's assertion.
 */
public final class AllocationWindows
{
    /** How long a test waits for the JIT before it judges the path by its last window; under the tests' 30 s timeout. */
    public static final long TIMEOUT_NS = TimeUnit.SECONDS.toNanos(20);

    private AllocationWindows()
    {
    }

    /**
     * @param window     one window of calls; run at least once.
     * @param limitBytes a window allocating fewer bytes than this ends the measurement.
     * @return bytes the last window allocated on this thread.
     */
    public static long lastWindowBytes(final Runnable window, final long limitBytes)
    {
        final ThreadMXBean threads = (ThreadMXBean)ManagementFactory.getThreadMXBean();
        assumeTrue(threads.isThreadAllocatedMemorySupported(), "per-thread allocation counter not supported");

        final long threadId = Thread.currentThread().threadId();
        final long deadlineNs = System.nanoTime() + TIMEOUT_NS;
        long allocated;
        do
        {
            final long before = threads.getThreadAllocatedBytes(threadId);
            window.run();
            allocated = threads.getThreadAllocatedBytes(threadId) - before;
        }
        while (allocated >= limitBytes && System.nanoTime() - deadlineNs < 0);

        return allocated;
    }
}
