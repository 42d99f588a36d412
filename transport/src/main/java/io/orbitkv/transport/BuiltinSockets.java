package io.orbitkv.transport;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.StandardSocketOptions;
import java.nio.channels.Channel;
import java.nio.channels.SocketChannel;

import io.orbitkv.ffm.CallState;
import io.orbitkv.ffm.ChannelDescriptors;
import io.orbitkv.ffm.EpollEvent;
import io.orbitkv.ffm.Errno;
import io.orbitkv.ffm.LibC;

/**
 * The I/O thread's edge-triggered epoll set and the socket set-up both sides share. An event's data word names what
 * became ready: a kind in the top byte, a 24-bit incarnation (so that an event of a closed connection does not act on
 * its successor) and a slot index.
 */
final class BuiltinSockets
{
    static final int KIND_WAKE = 1;
    static final int KIND_LISTENER = 2;
    static final int KIND_SERVER = 3;
    static final int KIND_STREAM = 4;
    static final int CONNECTION_EVENTS = LibC.EPOLLIN | LibC.EPOLLOUT | LibC.EPOLLRDHUP | LibC.EPOLLET;
    static final int CLOSING_EVENTS = LibC.EPOLLHUP | LibC.EPOLLRDHUP | LibC.EPOLLERR;

    final CallState state;
    final int epollFd;
    private final MemorySegment control;
    private final BuiltinTransport.Context context;

    BuiltinSockets(final Arena arena, final BuiltinTransport.Context context) throws IOException
    {
        this.context = context;
        state = new CallState(arena);
        control = EpollEvent.allocateArray(arena, 1);
        epollFd = LibC.epoll_create1(state, LibC.EPOLL_CLOEXEC);
        if (epollFd < 0)
        {
            throw new IOException("epoll_create1 failed: " + Errno.describe(state.errno()));
        }
    }

    static int kindOf(final long data)
    {
        return (int)(data >>> 56);
    }

    static int incarnationOf(final long data)
    {
        return (int)(data >>> 32) & 0xFFFFFF;
    }

    static int indexOf(final long data)
    {
        return (int)data;
    }

    /**
     * Non-blocking, no Nagle, the configured buffer sizes.
     *
     * @return the socket's descriptor, or -1 when it could not be set up.
     */
    int configure(final SocketChannel channel)
    {
        try
        {
            channel.configureBlocking(false);
            channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
            if (context.socketSendBufferBytes() > 0)
            {
                channel.setOption(StandardSocketOptions.SO_SNDBUF, context.socketSendBufferBytes());
            }
            if (context.socketReceiveBufferBytes() > 0)
            {
                channel.setOption(StandardSocketOptions.SO_RCVBUF, context.socketReceiveBufferBytes());
            }
        }
        catch (final IOException ex)
        {
            return -1;
        }
        return ChannelDescriptors.fdOf(channel);
    }

    boolean add(final int fd, final int flags, final int kind, final int index)
    {
        return add(fd, flags, kind, 0, index);
    }

    boolean add(final int fd, final int flags, final int kind, final int incarnation, final int index)
    {
        EpollEvent.events(control, flags);
        EpollEvent.data(control, ((long)kind << 56) | ((long)(incarnation & 0xFFFFFF) << 32) | (index & 0xFFFFFFFFL));
        return 0 == LibC.epoll_ctl(state, epollFd, LibC.EPOLL_CTL_ADD, fd, control);
    }

    void remove(final int fd)
    {
        if (fd >= 0)
        {
            LibC.epoll_ctl(state, epollFd, LibC.EPOLL_CTL_DEL, fd, control);
        }
    }

    void close()
    {
        LibC.close(state, epollFd);
    }

    static void closeQuietly(final Channel channel)
    {
        if (null != channel)
        {
            try
            {
                channel.close();
            }
            catch (final IOException ignore)
            {
                // Closing a socket that already failed: nothing more to do.
            }
        }
    }
}
