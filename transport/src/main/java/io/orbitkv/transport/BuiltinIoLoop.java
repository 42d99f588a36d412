package io.orbitkv.transport;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.ServerSocketChannel;

import io.orbitkv.ffm.CallState;
import io.orbitkv.ffm.ChannelDescriptors;
import io.orbitkv.ffm.EpollEvent;
import io.orbitkv.ffm.Errno;
import io.orbitkv.ffm.KernelTimespec;
import io.orbitkv.ffm.LibC;

/**
 * The I/O thread of a {@link BuiltinTransport}: one edge-triggered epoll set over the listening socket, the
 * connections a source serves ({@link BuiltinSource}) and the streams a requester reads over
 * ({@link BuiltinRequester}). It takes commands from the owner's ring, hands each event to the side it belongs to,
 * and gives completions back on the other ring; everything after start-up and connection set-up is
 * allocation-free. A connection is serviced until a call answers EAGAIN, so every edge is consumed.
 */
final class BuiltinIoLoop implements Runnable
{
    private static final int EPOLL_BATCH = 64;

    private final BuiltinTransport owner;
    private final BuiltinTransport.Context context;
    private final BuiltinTransportStats stats;
    private final Arena arena = Arena.ofShared();
    private final CallState state;
    private final BuiltinSockets sockets;
    private final MemorySegment events;
    private final MemorySegment timeout;
    private final MemorySegment wakeBuffer;
    private final BuiltinSource source;
    private final BuiltinRequester requester;
    private final String localEndpoint;
    private volatile boolean running = true;
    private boolean completionsQueued;

    BuiltinIoLoop(final BuiltinTransport owner) throws IOException
    {
        this.owner = owner;
        this.context = owner.context;
        this.stats = owner.stats;
        events = EpollEvent.allocateArray(arena, EPOLL_BATCH);
        timeout = KernelTimespec.allocate(arena);
        wakeBuffer = arena.allocate(ValueLayout.JAVA_LONG);

        try
        {
            sockets = new BuiltinSockets(arena, context);
        }
        catch (final IOException | RuntimeException ex)
        {
            arena.close();
            throw ex;
        }
        state = sockets.state;

        ServerSocketChannel channel = null;
        try
        {
            channel = ServerSocketChannel.open();
            channel.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            if (context.socketReceiveBufferBytes() > 0)
            {
                channel.setOption(StandardSocketOptions.SO_RCVBUF, context.socketReceiveBufferBytes());
            }
            channel.bind(new InetSocketAddress(context.bindHost(), context.port()), 1024);
            channel.configureBlocking(false);
            final int listenerFd = ChannelDescriptors.fdOf(channel);
            if (listenerFd < 0 || !sockets.add(listenerFd, LibC.EPOLLIN, BuiltinSockets.KIND_LISTENER, 0) ||
                !sockets.add(owner.handOver.wakeFd, LibC.EPOLLIN, BuiltinSockets.KIND_WAKE, 0))
            {
                throw new IOException("cannot watch the listening socket: " + Errno.describe(state.errno()));
            }
        }
        catch (final IOException | RuntimeException ex)
        {
            BuiltinSockets.closeQuietly(channel);
            sockets.close();
            arena.close();
            throw ex;
        }
        source = new BuiltinSource(this, owner, arena, sockets, channel);
        requester = new BuiltinRequester(this, owner, arena, sockets);
        final int port = ((InetSocketAddress)channel.getLocalAddress()).getPort();
        final String host = context.bindHost();
        localEndpoint = (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
    }

    String localEndpoint()
    {
        return localEndpoint;
    }

    void stop()
    {
        running = false;
    }

    /**
     * @return false once the owner closed the transport: no peer opens and no read starts any more.
     */
    boolean isRunning()
    {
        return running;
    }

    /**
     * Hand a completion to the owner; the owner's signal runs once per pass, after every completion of the pass.
     */
    void queueCompletion(final long completion)
    {
        owner.handOver.completions.offer(completion);
        completionsQueued = true;
    }

    @Override
    public void run()
    {
        try
        {
            while (running)
            {
                try
                {
                    drainCommands();
                    final long nowNs = System.nanoTime();
                    requester.expireReads(nowNs);
                    source.expireConnections(nowNs);
                    signalCompletions();
                    waitAndService(nowNs);
                }
                catch (final RuntimeException ex)
                {
                    // The I/O thread outlives a fault: reads still end, by their deadline at the latest.
                    stats.increment(BuiltinTransportStats.IO_ERRORS);
                }
            }
        }
        finally
        {
            shutdown();
            signalCompletions();
        }
    }

    private void signalCompletions()
    {
        if (completionsQueued)
        {
            completionsQueued = false;
            final Runnable signal = context.completionSignal();
            if (null != signal)
            {
                signal.run();
            }
        }
    }

    private void waitAndService(final long nowNs)
    {
        MemorySegment waitLimit = MemorySegment.NULL;
        owner.handOver.ioSleeping.set(1);
        if (!owner.handOver.commands.isEmpty() || !running)
        {
            setTimeout(0);
            waitLimit = timeout;
        }
        else if (requester.hasActiveReads() || source.hasDeadline())
        {
            long untilNs = Long.MAX_VALUE;
            if (requester.hasActiveReads())
            {
                untilNs = requester.earliestReadDeadlineNs() - nowNs;
            }
            if (source.hasDeadline())
            {
                untilNs = Math.min(untilNs, source.earliestDeadlineNs() - nowNs);
            }
            setTimeout(Math.max(0, untilNs));
            waitLimit = timeout;
        }
        final int ready =
            LibC.epoll_pwait2(state, sockets.epollFd, events, EPOLL_BATCH, waitLimit, MemorySegment.NULL);
        owner.handOver.ioSleeping.set(0);
        // Commands first: a revoke published before a peer's request arrived must be seen before that request.
        drainCommands();
        final long eventBytes = EpollEvent.sizeof();
        for (int i = 0; i < ready; i++)
        {
            final long at = i * eventBytes;
            final long data = events.get(ValueLayout.JAVA_LONG_UNALIGNED, at + EpollEvent.DATA$OFFSET);
            final int flags = events.get(ValueLayout.JAVA_INT_UNALIGNED, at + EpollEvent.EVENTS$OFFSET);
            final int kind = BuiltinSockets.kindOf(data);
            final int index = BuiltinSockets.indexOf(data);
            try
            {
                switch (kind)
                {
                    case BuiltinSockets.KIND_WAKE -> LibC.read(state, owner.handOver.wakeFd, wakeBuffer, Long.BYTES);
                    case BuiltinSockets.KIND_LISTENER -> source.accept();
                    case BuiltinSockets.KIND_SERVER -> source.service(index);
                    case BuiltinSockets.KIND_STREAM -> requester.service(index, BuiltinSockets.incarnationOf(data), flags);
                    default ->
                    {
                    }
                }
            }
            catch (final RuntimeException ex)
            {
                // A fault while handling one connection must not stop the transport: that connection goes.
                stats.increment(BuiltinTransportStats.PROTOCOL_ERRORS);
                if (BuiltinSockets.KIND_SERVER == kind)
                {
                    source.close(index);
                }
                else if (BuiltinSockets.KIND_STREAM == kind)
                {
                    requester.fail(index);
                }
            }
        }
    }

    private void setTimeout(final long ns)
    {
        timeout.set(ValueLayout.JAVA_LONG, KernelTimespec.TV_SEC$OFFSET, ns / 1_000_000_000L);
        timeout.set(ValueLayout.JAVA_LONG, KernelTimespec.TV_NSEC$OFFSET, ns % 1_000_000_000L);
    }

    /**
     * Take every command the owner published; the source side also calls this before it judges a request.
     */
    void drainCommands()
    {
        final LongRing commands = owner.handOver.commands;
        while (!commands.isEmpty())
        {
            final long command = commands.take();
            final int index = BuiltinHandOver.commandIndex(command);
            switch (BuiltinHandOver.commandType(command))
            {
                case BuiltinHandOver.CMD_READ -> requester.startRead(index);
                case BuiltinHandOver.CMD_EXPORT -> source.exportSession(index);
                case BuiltinHandOver.CMD_REVOKE -> source.revokeSession(index);
                case BuiltinHandOver.CMD_CONNECT -> requester.openPeer(index, BuiltinHandOver.commandAux(command));
                case BuiltinHandOver.CMD_CLOSE_PEER -> requester.closePeer(index);
                default ->
                {
                }
            }
        }
    }

    private void shutdown()
    {
        // Commands the owner published before close: their reads end CLOSED, their revokes are answered.
        drainCommands();
        requester.shutdown();
        source.shutdown();
        sockets.close();
        arena.close();
    }
}
