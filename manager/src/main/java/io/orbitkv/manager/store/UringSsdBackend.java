package io.orbitkv.manager.store;

import io.orbitkv.ffm.IoUring;
import io.orbitkv.ffm.IoUringConstants;
import io.orbitkv.ffm.MappedRegion;
import io.orbitkv.ffm.NativeCallException;
import java.io.PrintStream;

/**
 * SSD I/O through an io_uring owned by the storage thread. The ring is created in {@link #start()} on that
 * thread with {@code SINGLE_ISSUER|DEFER_TASKRUN} (completions are run only when we enter the kernel, so they
 * never interrupt the duty cycle), falling back to a plain ring on kernels that refuse the flags. Staging is
 * registered as one fixed buffer; if registration fails (RLIMIT_MEMLOCK without CAP_IPC_LOCK) the reason is printed
 * and plain READ/WRITE opcodes are used instead.
 *
 * <p>Many SQEs are prepared per duty cycle and go to the kernel in one {@code io_uring_enter}; the ring's size is the
 * queue depth, so a full ring is the back-pressure signal.
 */
public final class UringSsdBackend implements SsdBackend, IoUring.CompletionHandler
{
    private static final long DRAIN_STEP_NS = 10_000_000L;

    private final int fd;
    private final int queueDepth;
    private final MappedRegion staging;
    private final long stagingAddress;
    private final PrintStream log;
    private IoUring ring;
    private boolean fixedBuffers;
    private boolean deferTaskrun;
    private boolean timedWait;
    private Completions handler;
    private String description = "io_uring (not started)";

    public UringSsdBackend(final int fd, final int queueDepth, final MappedRegion staging, final PrintStream log)
    {
        this.fd = fd;
        this.queueDepth = queueDepth;
        this.staging = staging;
        this.stagingAddress = staging.address();
        this.log = log;
    }

    public void start()
    {
        try
        {
            ring = new IoUring(
                queueDepth, IoUringConstants.IORING_SETUP_SINGLE_ISSUER | IoUringConstants.IORING_SETUP_DEFER_TASKRUN);
            deferTaskrun = true;
        }
        catch (final NativeCallException ex)
        {
            ring = new IoUring(queueDepth, 0);
            deferTaskrun = false;
        }
        timedWait = (ring.features() & IoUringConstants.IORING_FEAT_EXT_ARG) != 0;
        try
        {
            ring.registerBuffers(staging.segment());
            fixedBuffers = true;
        }
        catch (final NativeCallException ex)
        {
            fixedBuffers = false;
            log.println("orbitkv ssd: cannot register " + staging.length() + " bytes of staging with io_uring (" +
                ex.getMessage() + "); using non-fixed READ/WRITE. Raise RLIMIT_MEMLOCK (ulimit -l) or grant " +
                "CAP_IPC_LOCK for fixed buffers.");
        }
        description = "io_uring (queue depth " + ring.sqEntries() + ", " +
            (fixedBuffers ? "registered staging buffer" : "non-fixed buffers") +
            (deferTaskrun ? ", SINGLE_ISSUER|DEFER_TASKRUN" : "") + ")";
    }

    public boolean read(final int command, final long fileOffset, final long stagingOffset, final int length)
    {
        final int sqe = ring.nextSqe();
        if (IoUring.RING_FULL == sqe)
        {
            return false;
        }
        if (fixedBuffers)
        {
            ring.prepReadFixed(sqe, fd, stagingAddress + stagingOffset, length, fileOffset, command, 0);
        }
        else
        {
            ring.prepRead(sqe, fd, stagingAddress + stagingOffset, length, fileOffset, command);
        }
        return true;
    }

    public boolean readInto(final int command, final long fileOffset, final long address, final int length)
    {
        final int sqe = ring.nextSqe();
        if (IoUring.RING_FULL == sqe)
        {
            return false;
        }
        // Not a registered buffer: the kernel pins the destination's pages for this read only.
        ring.prepRead(sqe, fd, address, length, fileOffset, command);
        return true;
    }

    public boolean readsIntoAnyAddress()
    {
        return true;
    }

    public boolean write(final int command, final long fileOffset, final long stagingOffset, final int length)
    {
        final int sqe = ring.nextSqe();
        if (IoUring.RING_FULL == sqe)
        {
            return false;
        }
        if (fixedBuffers)
        {
            ring.prepWriteFixed(sqe, fd, stagingAddress + stagingOffset, length, fileOffset, command, 0);
        }
        else
        {
            ring.prepWrite(sqe, fd, stagingAddress + stagingOffset, length, fileOffset, command);
        }
        return true;
    }

    public int process(final Completions handler, final long waitNs)
    {
        final int pending = ring.pending();
        if (0 == pending && 0 == ring.inFlight())
        {
            return 0;
        }
        if (waitNs > 0 && timedWait)
        {
            // Submit the batch and wait for a first completion in one io_uring_enter.
            ring.submitAndWait(1, waitNs);
        }
        else if (deferTaskrun)
        {
            // GETEVENTS with a minimum of 0: submit the batch and run deferred completions in one enter.
            ring.submitAndWait(0);
        }
        else
        {
            ring.submit();
        }
        this.handler = handler;
        return pending + ring.pollCompletions(this, Integer.MAX_VALUE);
    }

    public void onCompletion(final long userData, final int res, final int flags)
    {
        handler.onIoComplete((int)userData, res);
    }

    public int inFlight()
    {
        return null == ring ? 0 : ring.inFlight() + ring.pending();
    }

    public void drain(final Completions handler, final long timeoutNs)
    {
        if (null == ring)
        {
            return;
        }
        final long deadlineNs = System.nanoTime() + timeoutNs;
        while (inFlight() > 0 && System.nanoTime() - deadlineNs < 0)
        {
            process(handler, DRAIN_STEP_NS);
        }
    }

    public int kind()
    {
        return fixedBuffers ? KIND_IO_URING_FIXED : KIND_IO_URING;
    }

    public String description()
    {
        return description;
    }

    public void close()
    {
        if (null != ring)
        {
            ring.close();
            ring = null;
        }
    }
}
