package io.orbitkv.index;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.zip.CRC32C;

/**
 * Sums ranges of a region with CRC32C on a thread of its own, so that the thread that hands them over (the ring
 * agent, which has just copied a block into the pool) goes on copying the next block meanwhile.
 *
 * <p>One submitter thread and one summing thread: a ring of {@link #SLOTS} jobs, taken and finished in the order they
 * were submitted. {@link #submit} fills the next slot and publishes it; the summing thread sums it through its own
 * {@link BlockChecksum} views and publishes the sum; {@link #drain} hands finished sums back on the submitter's thread,
 * in order, by slot. Nothing is allocated per job. The summing thread is started by the first submit and parks
 * whenever the ring is empty (an idle store costs no CPU); a submit wakes it only when it said it was about to park.
 */
public final class BackgroundChecksum implements AutoCloseable
{
    /** Jobs submitted and not yet drained, at most. */
    public static final int SLOTS = 16;

    /** The name of the summing thread. */
    public static final String THREAD_NAME = "orbitkv-checksum";

    /**
     * Told about each finished sum by {@link #drain}, on the submitter's thread.
     */
    @FunctionalInterface
    public interface Handler
    {
        /**
         * @param slot   the slot {@link #submit} returned for the job.
         * @param crc32c CRC32C of the range, as {@code (int)CRC32C.getValue()}.
         */
        void onSum(int slot, int crc32c);
    }

    private final MemorySegment region;
    private final long[] offsets = new long[SLOTS];
    private final long[] lengths = new long[SLOTS];
    private final int[] sums = new int[SLOTS];
    private final AtomicLong submitted = new AtomicLong();
    private final AtomicLong completed = new AtomicLong();
    private volatile boolean parking;
    private volatile boolean running = true;
    private long drained;
    private Thread thread;

    /**
     * @param region the memory whose ranges are summed; must stay mapped until {@link #close} returns.
     */
    public BackgroundChecksum(final MemorySegment region)
    {
        this.region = region;
    }

    /**
     * Hand a range over to be summed. Submitter's thread only.
     *
     * @param offset first byte of the range in the region.
     * @param length bytes, {@code >= 0}.
     * @return the job's slot, or -1 when {@link #SLOTS} jobs are outstanding (sum it yourself then).
     */
    public int submit(final long offset, final long length)
    {
        final long next = submitted.get();
        if (next - drained == SLOTS || !running)
        {
            return -1;
        }
        final int slot = (int)(next % SLOTS);
        offsets[slot] = offset;
        lengths[slot] = length;
        submitted.set(next + 1);
        if (null == thread)
        {
            thread = new Thread(this::run, THREAD_NAME);
            thread.setDaemon(true);
            thread.start();
        }
        else if (parking)
        {
            LockSupport.unpark(thread);
        }
        return slot;
    }

    /**
     * Hand finished sums to the handler, in the order they were submitted. Submitter's thread only.
     *
     * @return sums handed over.
     */
    public int drain(final Handler handler)
    {
        final long done = completed.get();
        int count = 0;
        while (drained < done)
        {
            final int slot = (int)(drained % SLOTS);
            drained++;
            count++;
            handler.onSum(slot, sums[slot]);
        }
        return count;
    }

    /**
     * @return jobs submitted and not yet drained.
     */
    public int outstanding()
    {
        return (int)(submitted.get() - drained);
    }

    /**
     * Stop the summing thread and wait for it: the job it is summing ends first; the rest are never summed.
     */
    public void close()
    {
        running = false;
        final Thread summing = thread;
        if (null == summing)
        {
            return;
        }
        LockSupport.unpark(summing);
        boolean interrupted = false;
        while (summing.isAlive())
        {
            try
            {
                summing.join();
            }
            catch (final InterruptedException ex)
            {
                interrupted = true;
            }
        }
        if (interrupted)
        {
            Thread.currentThread().interrupt();
        }
    }

    private void run()
    {
        final BlockChecksum checksum = new BlockChecksum(region);
        final CRC32C crc = new CRC32C();
        long next = completed.get();
        while (running)
        {
            if (next < submitted.get())
            {
                final int slot = (int)(next % SLOTS);
                crc.reset();
                checksum.update(crc, offsets[slot], lengths[slot]);
                sums[slot] = (int)crc.getValue();
                next++;
                completed.set(next);
                continue;
            }
            parking = true;
            if (next == submitted.get() && running)
            {
                LockSupport.park(this);
            }
            parking = false;
        }
    }
}
