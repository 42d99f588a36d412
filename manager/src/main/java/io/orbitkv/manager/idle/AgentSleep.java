package io.orbitkv.manager.idle;

import io.orbitkv.manager.status.SystemCounterDescriptor;
import io.orbitkv.manager.status.SystemCounters;
import io.orbitkv.codecs.cnc.CncFileDescriptor;
import io.orbitkv.ffm.CallState;
import io.orbitkv.ffm.EpollEvent;
import io.orbitkv.ffm.Errno;
import io.orbitkv.ffm.KernelTimespec;
import io.orbitkv.ffm.LibC;
import io.orbitkv.manager.peer.PeerWakeup;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * How the Manager's agent sleeps once it has been idle for a while: it announces {@code SLEEPING} in the CnC header's
 * {@code agentState}, fences, looks at the request ring once more, and only if nothing was written sleeps in one
 * epoll wait over the doorbell FIFO and, when clustered, the media driver's peer socket, for at most its longest
 * sleep. The order is Dekker's, mirrored by the engines ({@code ManagerDoorbell}): a request committed before our
 * announcement is seen by the second look, one committed after it finds {@code SLEEPING} and rings. On waking the
 * state goes back to {@code AWAKE}; a doorbell is drained, a datagram is handed to the peer agent so its next duty
 * cycle runs the driver.
 * <p>
 * The longest sleep bounds everything the agent does on a timer while idle: the Manager heartbeat engines judge its
 * liveness by (so at most a quarter of the client liveness timeout), client liveness sweeps, and the embedded media
 * driver's timers (heartbeats to peers every 100 ms, keepalives every 500 ms). Used by the agent thread only.
 */
public final class AgentSleep implements IdleSleep, AutoCloseable
{
    /** Park used instead of a sleep when epoll is unavailable or the peer socket cannot be watched. */
    static final long FALLBACK_PARK_NS = TimeUnit.MICROSECONDS.toNanos(100);

    private static final int MAX_EVENTS = 4;
    private static final long DOORBELL_TAG = 1;
    private static final long PEER_SOCKET_TAG = 2;

    private final AtomicBuffer header;
    private final ManyToOneRingBuffer requestRing;
    private final Doorbell doorbell;
    private final long maxSleepNs;
    private final ErrorHandler errorHandler;
    private final AtomicCounter sleeps;
    private final AtomicCounter doorbellWakeups;
    private final AtomicCounter peerWakeups;
    private final AtomicCounter sleepsAbandoned;
    private final AtomicCounter doorbellBytes;
    private final CallState state = new CallState();
    private final Arena arena = Arena.ofShared();
    private final MemorySegment registration = EpollEvent.allocateArray(arena, 1);
    private final MemorySegment ready = EpollEvent.allocateArray(arena, MAX_EVENTS);
    private final MemorySegment timeout = KernelTimespec.allocate(arena);
    private PeerWakeup peerWakeup;
    private int epfd = -1;
    private boolean peerSocketWatched;
    private boolean disabled;
    private boolean closed;

    /**
     * @param header      the CnC header holding {@code agentState}.
     * @param requestRing the request ring over the CnC file, looked at after the announcement.
     * @param doorbell    the FIFO engines ring.
     * @param maxSleepNs  the longest sleep.
     * @param counters    the system counters (ids 135-139).
     * @param errorHandler told once when sleeping falls back to parking.
     */
    public AgentSleep(
        final AtomicBuffer header,
        final ManyToOneRingBuffer requestRing,
        final Doorbell doorbell,
        final long maxSleepNs,
        final SystemCounters counters,
        final ErrorHandler errorHandler)
    {
        this.header = header;
        this.requestRing = requestRing;
        this.doorbell = doorbell;
        this.maxSleepNs = maxSleepNs;
        this.errorHandler = errorHandler;
        this.sleeps = counters.get(SystemCounterDescriptor.IDLE_SLEEPS);
        this.doorbellWakeups = counters.get(SystemCounterDescriptor.IDLE_DOORBELL_WAKEUPS);
        this.peerWakeups = counters.get(SystemCounterDescriptor.IDLE_PEER_WAKEUPS);
        this.sleepsAbandoned = counters.get(SystemCounterDescriptor.IDLE_SLEEPS_ABANDONED);
        this.doorbellBytes = counters.get(SystemCounterDescriptor.IDLE_DOORBELL_BYTES);
        KernelTimespec.tv_sec(timeout, maxSleepNs / 1_000_000_000L);
        KernelTimespec.tv_nsec(timeout, maxSleepNs % 1_000_000_000L);
        try
        {
            epfd = LibC.epoll_create1(state, LibC.EPOLL_CLOEXEC);
            if (epfd < 0)
            {
                disable("epoll_create1 failed: " + Errno.describe(state.errno()));
                return;
            }
            // Level triggered: a byte left in the FIFO ends every sleep until it is drained.
            if (!watch(doorbell.fd(), LibC.EPOLLIN, DOORBELL_TAG))
            {
                disable("epoll_ctl on the doorbell failed: " + Errno.describe(state.errno()));
                return;
            }
            // Link epoll_pwait2 now, so a glibc without it (before 2.35) is found at start, not in the first sleep.
            final MemorySegment zero = KernelTimespec.allocate(arena);
            LibC.epoll_pwait2(state, epfd, ready, MAX_EVENTS, zero, MemorySegment.NULL);
        }
        catch (final RuntimeException | LinkageError ex)
        {
            disable("epoll is not available: " + ex);
        }
    }

    /**
     * Also end sleeps on the media driver's peer socket (a clustered Manager); set before the agent thread starts.
     * Until the socket can be watched the agent does not sleep, it parks briefly: a peer's datagram must not wait
     * for the sleep's timeout.
     *
     * @param peerWakeup the peer transport's wait, which knows the socket.
     */
    public void peerWakeup(final PeerWakeup peerWakeup)
    {
        this.peerWakeup = peerWakeup;
    }

    /**
     * @return the longest sleep.
     */
    long maxSleepNs()
    {
        return maxSleepNs;
    }

    public boolean sleep()
    {
        if (disabled || (null != peerWakeup && !peerSocketWatched && !watchPeerSocket()))
        {
            if (null != peerWakeup)
            {
                return peerWakeup.await(FALLBACK_PARK_NS);
            }
            LockSupport.parkNanos(FALLBACK_PARK_NS);
            return false;
        }

        header.putIntVolatile(CncFileDescriptor.AGENT_STATE_OFFSET, CncFileDescriptor.AGENT_SLEEPING);
        VarHandle.fullFence();
        if (requestRing.producerPosition() != requestRing.consumerPosition())
        {
            // Written before the announcement was visible: its engine did not ring. Serve it.
            header.putIntVolatile(CncFileDescriptor.AGENT_STATE_OFFSET, CncFileDescriptor.AGENT_AWAKE);
            sleepsAbandoned.incrementRelease();
            return true;
        }

        sleeps.incrementRelease();
        final int result = LibC.epoll_pwait2(state, epfd, ready, MAX_EVENTS, timeout, MemorySegment.NULL);
        header.putIntVolatile(CncFileDescriptor.AGENT_STATE_OFFSET, CncFileDescriptor.AGENT_AWAKE);
        if (result < 0)
        {
            if (Errno.EINTR != state.errno())
            {
                disable("epoll_pwait2 failed: " + Errno.describe(state.errno()));
            }
            return false;
        }
        for (int i = 0; i < result; i++)
        {
            final long tag = ready.get(ValueLayout.JAVA_LONG_UNALIGNED, i * EpollEvent.sizeof() + EpollEvent.DATA$OFFSET);
            if (DOORBELL_TAG == tag)
            {
                doorbellWakeups.incrementRelease();
                doorbellBytes.getAndAddRelease(doorbell.drain());
            }
            else if (PEER_SOCKET_TAG == tag)
            {
                peerWakeups.incrementRelease();
                peerWakeup.signalDatagram();
            }
        }
        return result > 0;
    }

    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        disabled = true;
        if (epfd >= 0)
        {
            LibC.close(state, epfd);
            epfd = -1;
        }
        arena.close();
    }

    private boolean watchPeerSocket()
    {
        final int fd = peerWakeup.watchedDescriptor();
        if (fd < 0)
        {
            return false;
        }
        // Edge triggered, as in the peer wait: the driver, not this wait, reads the datagram. A datagram that came
        // before the registration is reported by it, so none is missed in between.
        if (!watch(fd, LibC.EPOLLIN | LibC.EPOLLET, PEER_SOCKET_TAG))
        {
            disable("epoll_ctl on the peer socket failed: " + Errno.describe(state.errno()));
            return false;
        }
        peerSocketWatched = true;
        return true;
    }

    private boolean watch(final int fd, final int events, final long tag)
    {
        EpollEvent.events(registration, events);
        EpollEvent.data(registration, tag);
        return 0 == LibC.epoll_ctl(state, epfd, LibC.EPOLL_CTL_ADD, fd, registration);
    }

    private void disable(final String reason)
    {
        disabled = true;
        errorHandler.onError(new IllegalStateException(
            "idle agent parks instead of sleeping until the doorbell: " + reason));
    }
}
