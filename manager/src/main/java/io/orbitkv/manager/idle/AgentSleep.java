package io.orbitkv.manager.idle;

import io.orbitkv.manager.status.SystemCounterDescriptor;
import io.orbitkv.manager.status.SystemCounters;
import io.orbitkv.codecs.cnc.CncFileDescriptor;
import io.orbitkv.ffm.Errno;
import java.lang.invoke.VarHandle;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntSupplier;
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
 * cycle runs the driver. The peer socket comes as an {@link IdleInput}: this sleep knows its descriptor, not its owner.
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
    private final IntSupplier workInFlight;
    private final ErrorHandler errorHandler;
    private final AtomicCounter sleeps;
    private final AtomicCounter doorbellWakeups;
    private final AtomicCounter peerWakeups;
    private final AtomicCounter sleepsAbandoned;
    private final AtomicCounter doorbellBytes;
    private final EpollWait epoll = new EpollWait(MAX_EVENTS);
    private final IdleInput peerWakeup;
    private boolean peerSocketWatched;
    private boolean disabled;
    private boolean closed;

    /**
     * @param header      the CnC header holding {@code agentState}.
     * @param requestRing the request ring over the CnC file, looked at after the announcement.
     * @param doorbell    the FIFO engines ring.
     * @param maxSleepNs  the longest sleep.
     * @param peerWakeup  the peer transport's wait, which knows the media driver's socket (a clustered Manager), or
     *                    null. Sleeps end on a datagram too; until the socket can be watched the agent does not sleep,
     *                    it parks briefly: a peer's datagram must not wait for the sleep's timeout.
     * @param workInFlight work whose completion no watched descriptor announces (peer transfers: a transport's
     *                    completions are polled), or null; while it reports any the agent parks briefly instead.
     * @param counters    the system counters (ids 135-139).
     * @param errorHandler told once when sleeping falls back to parking.
     */
    public AgentSleep(
        final AtomicBuffer header,
        final ManyToOneRingBuffer requestRing,
        final Doorbell doorbell,
        final long maxSleepNs,
        final IdleInput peerWakeup,
        final IntSupplier workInFlight,
        final SystemCounters counters,
        final ErrorHandler errorHandler)
    {
        this.header = header;
        this.requestRing = requestRing;
        this.doorbell = doorbell;
        this.maxSleepNs = maxSleepNs;
        this.peerWakeup = peerWakeup;
        this.workInFlight = workInFlight;
        this.errorHandler = errorHandler;
        this.sleeps = counters.get(SystemCounterDescriptor.IDLE_SLEEPS);
        this.doorbellWakeups = counters.get(SystemCounterDescriptor.IDLE_DOORBELL_WAKEUPS);
        this.peerWakeups = counters.get(SystemCounterDescriptor.IDLE_PEER_WAKEUPS);
        this.sleepsAbandoned = counters.get(SystemCounterDescriptor.IDLE_SLEEPS_ABANDONED);
        this.doorbellBytes = counters.get(SystemCounterDescriptor.IDLE_DOORBELL_BYTES);
        try
        {
            if (!epoll.open())
            {
                disable("epoll_create1 failed: " + Errno.describe(epoll.errno()));
                return;
            }
            // Level triggered: a byte left in the FIFO ends every sleep until it is drained.
            if (!epoll.add(doorbell.fd(), EpollWait.LEVEL_TRIGGERED, DOORBELL_TAG))
            {
                disable("epoll_ctl on the doorbell failed: " + Errno.describe(epoll.errno()));
                return;
            }
            // Link epoll_pwait2 now, so a glibc without it (before 2.35) is found at start, not in the first sleep.
            epoll.poll();
        }
        catch (final RuntimeException | LinkageError ex)
        {
            disable("epoll is not available: " + ex);
        }
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
        return sleep(maxSleepNs, true);
    }

    /**
     * A park of the backoff's parking phase, announced and ended like a sleep: an engine that commits a request
     * while the agent parks rings the doorbell (one write) instead of waiting out the park's timer, which on Linux
     * lasts at least the timer slack (~50 us) however short the park asked for. Not counted as a sleep.
     */
    public boolean nap(final long timeoutNs)
    {
        return sleep(Math.min(timeoutNs, maxSleepNs), false);
    }

    private boolean sleep(final long timeoutNs, final boolean counted)
    {
        final long fallbackNs = Math.min(timeoutNs, FALLBACK_PARK_NS);
        if (null != workInFlight && workInFlight.getAsInt() > 0)
        {
            if (null != peerWakeup && peerSocketWatched)
            {
                return peerWakeup.await(fallbackNs);
            }
            LockSupport.parkNanos(fallbackNs);
            return false;
        }
        if (disabled || (null != peerWakeup && !peerSocketWatched && !watchPeerSocket()))
        {
            if (null != peerWakeup)
            {
                return peerWakeup.await(fallbackNs);
            }
            LockSupport.parkNanos(fallbackNs);
            return false;
        }

        header.putIntVolatile(CncFileDescriptor.AGENT_STATE_OFFSET, CncFileDescriptor.AGENT_SLEEPING);
        VarHandle.fullFence();
        if (requestRing.producerPosition() != requestRing.consumerPosition())
        {
            // Written before the announcement was visible: its engine did not ring. Serve it.
            header.putIntVolatile(CncFileDescriptor.AGENT_STATE_OFFSET, CncFileDescriptor.AGENT_AWAKE);
            if (counted)
            {
                sleepsAbandoned.incrementRelease();
            }
            return true;
        }

        if (counted)
        {
            sleeps.incrementRelease();
        }
        final int result = epoll.await(timeoutNs);
        header.putIntVolatile(CncFileDescriptor.AGENT_STATE_OFFSET, CncFileDescriptor.AGENT_AWAKE);
        if (result < 0)
        {
            if (Errno.EINTR != epoll.errno())
            {
                disable("epoll_pwait2 failed: " + Errno.describe(epoll.errno()));
            }
            return false;
        }
        for (int i = 0; i < result; i++)
        {
            final long tag = epoll.tag(i);
            if (DOORBELL_TAG == tag)
            {
                doorbellWakeups.incrementRelease();
                doorbellBytes.getAndAddRelease(doorbell.drain());
            }
            else if (PEER_SOCKET_TAG == tag)
            {
                peerWakeups.incrementRelease();
                peerWakeup.onReadable();
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
        epoll.close();
    }

    private boolean watchPeerSocket()
    {
        final int fd = peerWakeup.descriptor();
        if (fd < 0)
        {
            return false;
        }
        // Edge triggered, as in the peer wait: the driver, not this wait, reads the datagram. A datagram that came
        // before the registration is reported by it, so none is missed in between.
        if (!epoll.add(fd, EpollWait.EDGE_TRIGGERED, PEER_SOCKET_TAG))
        {
            disable("epoll_ctl on the peer socket failed: " + Errno.describe(epoll.errno()));
            return false;
        }
        peerSocketWatched = true;
        return true;
    }

    private void disable(final String reason)
    {
        disabled = true;
        errorHandler.onError(new IllegalStateException(
            "idle agent parks instead of sleeping until the doorbell: " + reason));
    }
}
