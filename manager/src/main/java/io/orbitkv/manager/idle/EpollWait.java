package io.orbitkv.manager.idle;

import io.orbitkv.ffm.CallState;
import io.orbitkv.ffm.EpollEvent;
import io.orbitkv.ffm.KernelTimespec;
import io.orbitkv.ffm.LibC;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * One epoll instance and the descriptors registered with it: how an idle agent waits on its inputs (the doorbell
 * FIFO, a peer socket the peer transport hands over) with a nanosecond timeout ({@code epoll_pwait2}). Each
 * registration carries a tag the wait reports back, so the owner tells its inputs apart without knowing where a
 * descriptor came from. The event array and the timeout live in this wait's own memory: a wait allocates nothing.
 * <p>
 * Failures are answered, not thrown: a call that fails returns false or a negative count and leaves the reason in
 * {@link #errno()}, for the owner to decide whether to fall back to parking. An FFM handle that cannot link (a glibc
 * without {@code epoll_pwait2}, before 2.35) throws on the first {@link #poll()} or {@link #await(long)}. Used by one
 * thread; closed after that thread stopped waiting.
 */
public final class EpollWait implements AutoCloseable
{
    /** Readiness reported for as long as it lasts: a FIFO with bytes left in it ends every wait until drained. */
    public static final int LEVEL_TRIGGERED = LibC.EPOLLIN;

    /** Readiness reported once per arrival, for a descriptor someone else reads (the media driver its socket). */
    public static final int EDGE_TRIGGERED = LibC.EPOLLIN | LibC.EPOLLET;

    private final int maxEvents;
    private final CallState state = new CallState();
    private final Arena arena = Arena.ofShared();
    private final MemorySegment registration = EpollEvent.allocateArray(arena, 1);
    private final MemorySegment ready;
    private final MemorySegment timeout = KernelTimespec.allocate(arena);
    private int epfd = -1;
    private boolean closed;

    /**
     * @param maxEvents the most events one wait reports.
     */
    public EpollWait(final int maxEvents)
    {
        this.maxEvents = maxEvents;
        this.ready = EpollEvent.allocateArray(arena, maxEvents);
    }

    /**
     * Create the epoll instance.
     *
     * @return false if the kernel refused ({@link #errno()}) or the wait is closed.
     */
    public boolean open()
    {
        if (closed)
        {
            return false;
        }
        epfd = LibC.epoll_create1(state, LibC.EPOLL_CLOEXEC);
        return epfd >= 0;
    }

    /**
     * @return whether {@link #open()} succeeded and the wait is not closed.
     */
    public boolean isOpen()
    {
        return epfd >= 0;
    }

    /**
     * Register a descriptor; the wait reports it with {@code tag} when it is readable.
     *
     * @param fd     the descriptor, owned by the caller (this wait never closes it).
     * @param events {@link #LEVEL_TRIGGERED} or {@link #EDGE_TRIGGERED}.
     * @param tag    what the wait reports for it ({@link #tag(int)}).
     * @return false if the kernel refused ({@link #errno()}).
     */
    public boolean add(final int fd, final int events, final long tag)
    {
        EpollEvent.events(registration, events);
        EpollEvent.data(registration, tag);
        return 0 == LibC.epoll_ctl(state, epfd, LibC.EPOLL_CTL_ADD, fd, registration);
    }

    /**
     * What is ready now, without waiting. The first call also links {@code epoll_pwait2}, so an owner calling it at
     * set-up finds a glibc without it there rather than in its first wait.
     *
     * @return descriptors ready (their tags by {@link #tag(int)}), or a negative value on failure ({@link #errno()}).
     */
    public int poll()
    {
        return await(0);
    }

    /**
     * Wait until a registered descriptor is ready or {@code timeoutNs} passes.
     *
     * @param timeoutNs the longest the wait may last.
     * @return descriptors ready (their tags by {@link #tag(int)}), 0 after the timeout, or a negative value on failure
     *         ({@link #errno()}; {@code EINTR} when a signal interrupted it).
     */
    public int await(final long timeoutNs)
    {
        KernelTimespec.tv_sec(timeout, timeoutNs / 1_000_000_000L);
        KernelTimespec.tv_nsec(timeout, timeoutNs % 1_000_000_000L);
        return LibC.epoll_pwait2(state, epfd, ready, maxEvents, timeout, MemorySegment.NULL);
    }

    /**
     * @param index of an event the last wait reported, below its count.
     * @return the tag its descriptor was registered with.
     */
    public long tag(final int index)
    {
        return ready.get(ValueLayout.JAVA_LONG_UNALIGNED, index * EpollEvent.sizeof() + EpollEvent.DATA$OFFSET);
    }

    /**
     * @return the errno of the last call that failed.
     */
    public int errno()
    {
        return state.errno();
    }

    /**
     * Close the epoll instance (not the registered descriptors) and free the wait's memory.
     */
    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        if (epfd >= 0)
        {
            LibC.close(state, epfd);
            epfd = -1;
        }
        arena.close();
    }
}
