package io.orbitkv.manager.store;

import io.orbitkv.manager.Configuration;
import io.orbitkv.manager.status.SystemCounters;
import io.orbitkv.ffm.CallState;
import io.orbitkv.ffm.Errno;
import io.orbitkv.ffm.HugePageMemory;
import io.orbitkv.ffm.LibC;
import io.orbitkv.ffm.MappedRegion;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * Faults the DRAM pool in ahead of use, from offset 0 upwards, {@link Configuration#POOL_TOUCH_CHUNK_BYTES} per
 * {@code MADV_POPULATE_WRITE} call. The slab allocator hands out fresh pages lowest first, so a toucher that also goes
 * low to high keeps ahead of where new blocks land: a publish usually finds its pages present, and one that outruns
 * the toucher faults its pages in itself, which is slower but just as correct (populating never writes data).
 *
 * <p>It runs once: on its own thread while the Manager already serves ({@link Configuration.PoolPretouch#BACKGROUND}),
 * or on the launching thread before the Manager is ready ({@link Configuration.PoolPretouch#BLOCKING}). The thread is
 * a daemon at nice {@link Configuration#POOL_TOUCH_NICE} and ends when the pool is touched: nothing of it is left
 * running once there is nothing to do. Between two calls it checks a stop flag that {@link #close()} raises, so it
 * stops within one call, and close waits for it to end before the Manager unmaps the pool.
 *
 * <p>Shared with other threads are only the stop flag and the counters it writes (single writer, release stores). It
 * takes no lock, so it can neither block the ring agent nor wait for it; the error handler is called only when the
 * touch fails, once.
 */
public final class PoolToucher
{
    public static final String THREAD_NAME = "orbitkv-pool-toucher";

    private final MappedRegion region;
    private final Configuration.PoolPretouch mode;
    private final long chunkBytes;
    private final long pauseNs;
    private final AtomicCounter bytesTouched;
    private final AtomicCounter touchState;
    private final AtomicCounter touchMs;
    private final ErrorHandler errorHandler;
    private final CallState callState = new CallState();
    private volatile boolean stopRequested;
    private boolean kernelPopulates = true;
    private Thread thread;

    public PoolToucher(
        final MappedRegion region,
        final Configuration.PoolPretouch mode,
        final long chunkBytes,
        final long pauseNs,
        final SystemCounters counters,
        final ErrorHandler errorHandler)
    {
        if (chunkBytes <= 0 || chunkBytes % HugePageMemory.SMALL_PAGE_SIZE != 0)
        {
            throw new IllegalArgumentException("chunk must be a positive multiple of 4 KiB: " + chunkBytes);
        }
        this.region = region;
        this.mode = mode;
        this.chunkBytes = chunkBytes;
        this.pauseNs = pauseNs;
        this.bytesTouched = counters.get(StoreCounter.POOL_BYTES_TOUCHED);
        this.touchState = counters.get(StoreCounter.POOL_TOUCH_STATE);
        this.touchMs = counters.get(StoreCounter.POOL_TOUCH_MS);
        this.errorHandler = errorHandler;
        counters.get(StoreCounter.POOL_TOUCH_MODE).setRelease(mode.code());
    }

    /**
     * Touch the pool as the mode says: start the helper thread (background), touch it all before returning
     * (blocking), or nothing (off).
     *
     * @throws IllegalStateException in blocking mode, if the kernel could not populate the pool.
     */
    public void start()
    {
        switch (mode)
        {
            case BACKGROUND ->
            {
                thread = new Thread(this::runInBackground, THREAD_NAME);
                thread.setDaemon(true);
                thread.start();
            }
            case BLOCKING ->
            {
                final int errno = touchAll();
                if (0 != errno)
                {
                    throw failure(errno, "the Manager does not start with a pool it cannot make resident");
                }
            }
            default ->
            {
                // OFF: the first write to each page faults it in.
            }
        }
    }

    /**
     * Stop a background touch and wait, at most {@link Configuration#POOL_TOUCH_STOP_TIMEOUT_NS}, for its thread to
     * end. Idempotent.
     *
     * @return true when no toucher thread runs any more, so the pool may be unmapped.
     */
    public boolean close()
    {
        stopRequested = true;
        final Thread toucher = thread;
        if (null == toucher)
        {
            return true;
        }
        LockSupport.unpark(toucher);
        final long deadlineNs = System.nanoTime() + Configuration.POOL_TOUCH_STOP_TIMEOUT_NS;
        boolean interrupted = false;
        while (toucher.isAlive())
        {
            final long remainingNs = deadlineNs - System.nanoTime();
            if (remainingNs <= 0)
            {
                break;
            }
            try
            {
                toucher.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(remainingNs)));
            }
            catch (final InterruptedException ex)
            {
                // The pool must not be unmapped under the toucher: keep waiting, then restore the interrupt.
                interrupted = true;
            }
        }
        if (interrupted)
        {
            Thread.currentThread().interrupt();
        }
        return !toucher.isAlive();
    }

    private void runInBackground()
    {
        // design: serving comes first; the pool touch takes what CPU is left. Best effort: without it the touch
        // merely competes at normal priority.
        LibC.setpriority(callState, LibC.PRIO_PROCESS, LibC.gettid(), Configuration.POOL_TOUCH_NICE);
        try
        {
            final int errno = touchAll();
            if (0 != errno)
            {
                errorHandler.onError(failure(errno, "the rest of the pool is faulted in by first use"));
            }
        }
        catch (final Throwable ex)
        {
            touchState.setRelease(StoreCounter.POOL_TOUCH_FAILED);
            errorHandler.onError(ex);
        }
    }

    /**
     * @return 0 once the pool is touched or the touch was stopped, else the errno that ended it.
     */
    private int touchAll()
    {
        final long length = region.length();
        final long startNs = System.nanoTime();
        touchState.setRelease(StoreCounter.POOL_TOUCH_TOUCHING);
        long offset = 0;
        while (offset < length)
        {
            if (stopRequested)
            {
                touchState.setRelease(StoreCounter.POOL_TOUCH_STOPPED);
                return 0;
            }
            final long bytes = Math.min(chunkBytes, length - offset);
            final int errno = touchChunk(offset, bytes);
            if (Errno.EINTR == errno || Errno.EAGAIN == errno)
            {
                continue;
            }
            if (0 != errno)
            {
                touchState.setRelease(StoreCounter.POOL_TOUCH_FAILED);
                return errno;
            }
            offset += bytes;
            bytesTouched.setRelease(offset);
            touchMs.setRelease(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs));
            if (pauseNs > 0 && offset < length)
            {
                LockSupport.parkNanos(this, pauseNs);
            }
        }
        touchState.setRelease(StoreCounter.POOL_TOUCH_DONE);
        return 0;
    }

    private int touchChunk(final long offset, final long bytes)
    {
        if (kernelPopulates)
        {
            final int errno = HugePageMemory.populate(callState, region, offset, bytes);
            if (Errno.EINVAL != errno)
            {
                return errno;
            }
            // Aligned offsets and lengths leave one reason for EINVAL: a kernel before 5.14, without the advice.
            kernelPopulates = false;
        }
        HugePageMemory.touchPreservingContents(region, offset, bytes);
        return 0;
    }

    private IllegalStateException failure(final int errno, final String consequence)
    {
        return new IllegalStateException("pool pre-touch stopped after " + bytesTouched.get() + " of " +
            region.length() + " bytes: madvise(MADV_POPULATE_WRITE) failed with " + Errno.describe(errno) +
            (Errno.ENOMEM == errno ? " (not enough free memory for --pool-bytes)" : "") + "; " + consequence);
    }
}
