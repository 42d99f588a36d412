package io.orbitkv.manager.idle;

import io.orbitkv.ffm.CallState;
import io.orbitkv.ffm.Errno;
import io.orbitkv.ffm.LibC;
import java.io.File;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * The Manager's end of the doorbell FIFO ({@code <dir>/doorbell}): created with {@code mkfifo} before the CnC layout
 * version is written and opened read-write and non-blocking, so the Manager never waits for a writer, never sees
 * end-of-file when the last engine closes its end, and an engine's open never waits for it either. Engines write a
 * byte to wake a sleeping agent; the agent drains what is there when epoll reports the FIFO readable. A FIFO rather
 * than a futex word: a futex wait cannot be combined with epoll on the peer socket, and a path is reachable from any
 * process (C and Python engines included) without passing a descriptor.
 */
public final class Doorbell implements AutoCloseable
{
    private static final int FIFO_MODE = 0600;

    /** Bytes read per drain call; more only means another read (each sleep leaves about one byte per engine). */
    private static final int DRAIN_BYTES = 64;

    /** Drain reads per wake: a flood of bytes is left for the next wake rather than stalling this one. */
    private static final int MAX_DRAIN_READS = 16;

    private final File file;
    private final CallState state = new CallState();
    private final Arena arena = Arena.ofShared();
    private final MemorySegment drainBuffer = arena.allocate(DRAIN_BYTES);
    private final CallState ringState = new CallState();
    private final MemorySegment ringByte = arena.allocate(1);
    private int fd = -1;
    private boolean closed;

    /**
     * Create (replacing any leftover) and open the FIFO.
     *
     * @param file the FIFO's path.
     */
    public Doorbell(final File file)
    {
        this.file = file;
        try
        {
            if (file.exists() && !file.delete())
            {
                throw new IllegalStateException("cannot delete the leftover doorbell " + file);
            }
            final MemorySegment path = arena.allocateFrom(file.getAbsolutePath());
            if (0 != LibC.mkfifo(state, path, FIFO_MODE))
            {
                throw new IllegalStateException("cannot create the doorbell FIFO " + file + ": " +
                    Errno.describe(state.errno()));
            }
            fd = LibC.open(state, path, LibC.O_RDWR | LibC.O_NONBLOCK | LibC.O_CLOEXEC, 0);
            if (fd < 0)
            {
                throw new IllegalStateException("cannot open the doorbell FIFO " + file + ": " +
                    Errno.describe(state.errno()));
            }
        }
        catch (final RuntimeException ex)
        {
            close();
            throw ex;
        }
    }

    /**
     * @return the descriptor epoll watches.
     */
    int fd()
    {
        return fd;
    }

    /**
     * Read what engines wrote, until the FIFO is empty (or {@link #MAX_DRAIN_READS} reads).
     *
     * @return bytes drained.
     */
    int drain()
    {
        int drained = 0;
        for (int i = 0; i < MAX_DRAIN_READS; i++)
        {
            final long read = LibC.read(state, fd, drainBuffer, DRAIN_BYTES);
            if (read <= 0)
            {
                break;
            }
            drained += (int)read;
        }
        return drained;
    }

    /**
     * Write one byte, as an engine would: wakes the agent from its sleep (e.g. to see that it must stop). Any thread;
     * a full FIFO already wakes it.
     */
    public void ring()
    {
        if (fd >= 0)
        {
            LibC.write(ringState, fd, ringByte, 1);
        }
    }

    /**
     * Close the descriptor and delete the FIFO; engines still holding it write into a pipe nobody reads.
     */
    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        if (fd >= 0)
        {
            LibC.close(state, fd);
            fd = -1;
        }
        if (file.exists() && !file.delete())
        {
            System.err.println("orbitkv: cannot delete the doorbell " + file);
        }
        arena.close();
    }
}
