package io.orbitkv.manager.peer;

import java.nio.channels.DatagramChannel;
import java.util.concurrent.locks.LockSupport;

import io.aeron.driver.DataPacketDispatcher;
import io.aeron.driver.MediaDriver;
import io.aeron.driver.ReceiveChannelEndpointSupplier;
import io.aeron.driver.media.ReceiveChannelEndpoint;
import io.aeron.driver.media.UdpChannel;
import io.orbitkv.ffm.ChannelDescriptors;
import io.orbitkv.ffm.Errno;
import io.orbitkv.manager.idle.EpollWait;
import io.orbitkv.manager.idle.IdleInput;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * An idle agent's wait that a peer's datagram ends: epoll on the embedded media driver's receive socket (the one the
 * peer endpoint is bound to, where cold queries, their answers, acks and owner streams arrive), with the park time
 * as a nanosecond timeout. A Manager that parked on a timer instead noticed a datagram only when its park ended: up
 * to the longest backoff park (100 us; ~190 us on the bench VM, whose timers end late) per hop of a cold lookup, once
 * at the host and once at the requester. Woken by a datagram, the agent's next duty cycle runs the driver at once
 * ({@link #takeDatagramSignal()}). Waits and the wakeups datagrams caused are counted (peer counters 41 and 42).
 * <p>
 * The socket is the driver's: its receive channel endpoint is captured as the driver creates it (through the driver's
 * supplier hook) and its descriptor read through {@link ChannelDescriptors}; the registration is edge triggered, so a
 * datagram reports once and the driver, not this wait, reads it. Until the socket exists, without the descriptor
 * (JVM flags without the sun.nio.ch export) or without epoll_pwait2 (glibc before 2.35), the wait parks on a timer as
 * before. The wait runs on the agent thread; the endpoint is handed over from the driver conductor's. As an
 * {@link IdleInput} it hands the socket's descriptor to the agent's deeper sleep, which watches it beside the doorbell.
 */
public final class PeerWakeup implements IdleInput, ReceiveChannelEndpointSupplier, AutoCloseable
{
    private static final int MAX_EVENTS = 4;

    private final ReceiveChannelEndpointSupplier driverSupplier;
    private final ErrorHandler errorHandler;
    private final EpollWait epoll = new EpollWait(MAX_EVENTS);
    private boolean disabled;

    private volatile ReceiveChannelEndpoint endpoint;
    private ReceiveChannelEndpoint armedEndpoint;
    private int armedFd = -1;
    private boolean armed;
    private boolean datagramSignal;
    private AtomicCounter socketWaits;
    private AtomicCounter socketWakeups;

    /**
     * @param driverSupplier creates the endpoints this one watches (the peer socket's guarded endpoint).
     * @param errorHandler   told once when the wait cannot be set up and falls back to parking.
     */
    PeerWakeup(final ReceiveChannelEndpointSupplier driverSupplier, final ErrorHandler errorHandler)
    {
        this.driverSupplier = driverSupplier;
        this.errorHandler = errorHandler;
    }

    /**
     * @param counters where waits on the socket and the wakeups datagrams caused are counted (set before the agent
     *                 starts).
     */
    void counters(final PeerCounters counters)
    {
        socketWaits = counters.get(PeerCounter.IDLE_SOCKET_WAITS);
        socketWakeups = counters.get(PeerCounter.IDLE_SOCKET_WAKEUPS);
    }

    /**
     * Driver hook: create the endpoint as the driver would and keep it to watch its socket.
     */
    public ReceiveChannelEndpoint newInstance(
        final UdpChannel udpChannel,
        final DataPacketDispatcher dispatcher,
        final AtomicCounter statusIndicator,
        final MediaDriver.Context context)
    {
        final ReceiveChannelEndpoint created = driverSupplier.newInstance(udpChannel, dispatcher, statusIndicator, context);
        endpoint = created;
        return created;
    }

    /**
     * Wait until a datagram reaches the peer socket or {@code timeoutNs} passes (a timer park when the socket cannot
     * be watched).
     *
     * @return true when a datagram ended the wait.
     */
    public boolean await(final long timeoutNs)
    {
        if (!arm())
        {
            // A park may end early (a permit left on the thread by an earlier unpark): park again for the rest.
            final long deadlineNs = System.nanoTime() + timeoutNs;
            long remainingNs = timeoutNs;
            do
            {
                LockSupport.parkNanos(remainingNs);
                remainingNs = deadlineNs - System.nanoTime();
            }
            while (remainingNs > 0 && !Thread.currentThread().isInterrupted());
            return false;
        }
        final int result = epoll.await(timeoutNs);
        if (null != socketWaits)
        {
            socketWaits.incrementRelease();
        }
        if (result > 0)
        {
            datagramSignal = true;
            if (null != socketWakeups)
            {
                socketWakeups.incrementRelease();
            }
            return true;
        }
        if (result < 0 && Errno.EINTR != epoll.errno())
        {
            disable("epoll_pwait2 failed: " + Errno.describe(epoll.errno()));
        }
        return false;
    }

    /**
     * @return true once after a datagram ended a wait: the driver should run in this duty cycle.
     */
    public boolean takeDatagramSignal()
    {
        final boolean signal = datagramSignal;
        datagramSignal = false;
        return signal;
    }

    /**
     * The peer socket's descriptor, for a longer sleep that also watches other descriptors (the Manager's doorbell).
     *
     * @return the descriptor, or -1 while it cannot be watched (not yet opened by the driver, or a fallback).
     */
    public int descriptor()
    {
        return arm() ? armedFd : -1;
    }

    /**
     * Another wait saw a datagram on the peer socket: the next duty cycle runs the driver.
     */
    public void onReadable()
    {
        datagramSignal = true;
    }

    /**
     * @return whether waits are on the peer socket (false until the driver opened it, or after a fallback).
     */
    public boolean isArmed()
    {
        return armed;
    }

    /**
     * Release the epoll instance; call after the agent stopped (its waits use this memory).
     */
    public void close()
    {
        disabled = true;
        armed = false;
        epoll.close();
    }

    private boolean arm()
    {
        final ReceiveChannelEndpoint current = endpoint;
        if (disabled || null == current)
        {
            return false;
        }
        if (current == armedEndpoint)
        {
            return armed;
        }
        final DatagramChannel channel = current.receiveDatagramChannel();
        final int fd = ChannelDescriptors.fdOf(channel);
        if (fd < 0)
        {
            if (null != channel && !ChannelDescriptors.available())
            {
                disable("the JVM does not export sun.nio.ch (see the project's JVM flags)");
            }
            return false;
        }
        try
        {
            if (!epoll.isOpen() && !epoll.open())
            {
                disable("epoll_create1 failed: " + Errno.describe(epoll.errno()));
                return false;
            }
            if (!epoll.add(fd, EpollWait.EDGE_TRIGGERED, fd))
            {
                disable("epoll_ctl on the peer socket failed: " + Errno.describe(epoll.errno()));
                return false;
            }
            // A first wait without a timeout links epoll_pwait2 now, so a glibc without it is found here.
            datagramSignal |= epoll.poll() > 0;
        }
        catch (final RuntimeException | LinkageError ex)
        {
            // An older glibc without epoll_pwait2 fails when its handle links.
            disable("epoll is not available: " + ex);
            return false;
        }
        armedEndpoint = current;
        armedFd = fd;
        armed = true;
        return true;
    }

    private void disable(final String reason)
    {
        disabled = true;
        armed = false;
        errorHandler.onError(new IllegalStateException(
            "idle agent parks on a timer instead of waiting on the peer socket: " + reason));
    }
}
