package io.orbitkv.transport;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteOrder;
import java.nio.channels.Channel;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Arrays;

import io.orbitkv.ffm.CallState;
import io.orbitkv.ffm.ChannelDescriptors;
import io.orbitkv.ffm.EpollEvent;
import io.orbitkv.ffm.Errno;
import io.orbitkv.ffm.Iovec;
import io.orbitkv.ffm.KernelTimespec;
import io.orbitkv.ffm.LibC;
import io.orbitkv.ffm.MsgHdr;

/**
 * The I/O thread of a {@link BuiltinTransport}: the listening socket, the connections a source serves and the
 * streams a requester reads over, all driven by one edge-triggered epoll set. It takes commands from the owner's
 * ring and gives completions back on the other; everything after start-up and connection set-up is
 * allocation-free. A connection is serviced until a call answers EAGAIN, so every edge is consumed.
 */
final class BuiltinIoLoop implements Runnable
{
    static final int HELLO_MAGIC = 0x42564B4F;
    static final short HELLO_VERSION = 1;
    static final int HELLO_BYTES = 8;
    static final int REQUEST_TYPE_READ = 1;
    static final int REQUEST_BYTES = 40;
    static final int RESPONSE_BYTES = 16;

    static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private static final int KIND_WAKE = 1;
    private static final int KIND_LISTENER = 2;
    private static final int KIND_SERVER = 3;
    private static final int KIND_STREAM = 4;
    private static final int EPOLL_BATCH = 64;
    private static final int SERVER_INPUT_BYTES = 4096;
    private static final int SCRATCH_BYTES = 64 * 1024;
    private static final int CONNECTION_EVENTS = LibC.EPOLLIN | LibC.EPOLLOUT | LibC.EPOLLRDHUP | LibC.EPOLLET;
    private static final int CLOSING_EVENTS = LibC.EPOLLHUP | LibC.EPOLLRDHUP | LibC.EPOLLERR;

    private static final int STREAM_CLOSED = 0;
    private static final int STREAM_CONNECTING = 1;
    private static final int STREAM_CONNECTED = 2;

    private final BuiltinTransport owner;
    private final BuiltinTransport.Context context;
    private final BuiltinTransportStats stats;
    private final Arena arena = Arena.ofShared();
    private final CallState state = new CallState(arena);
    private final MemorySegment events;
    private final MemorySegment control;
    private final MemorySegment timeout;
    private final MemorySegment wakeBuffer;
    private final long scratchAddress;
    private final int epollFd;
    private final ServerSocketChannel listener;
    private final String localEndpoint;
    private volatile boolean running = true;
    private boolean completionsQueued;

    // Sessions as the I/O thread sees them.
    private final LongIntMap liveSessions;
    private final int[] sessionState;
    private final int[] sessionSends;

    // Reads: a generation per slot makes chunks of an ended read stale; their bytes go to the scratch buffer.
    private final int[] readGeneration;
    private final int[] readBytesDone;
    private final int[] readBytesDispatched;
    private final boolean[] readLive;
    private final int[] pendingNext;
    private final int[] pendingPrev;
    private final boolean[] readPending;
    private final int[] activeNext;
    private final int[] activePrev;
    private int activeHead = -1;
    private int activeTail = -1;

    // Peers and their streams.
    private final int[] peerGeneration;
    private final InetSocketAddress[] peerAddress;
    private final boolean[] peerOpen;
    private final int[] peerPendingHead;
    private final int[] peerPendingTail;
    private final Stream[] streams;
    private final int streamsPerPeer;

    // Connections served.
    private final ServerConnection[] connections;
    private final int[] freeConnections;
    private int freeConnectionCount;
    private final int[] openConnections;
    private int openConnectionCount;
    private int timedConnectionCount;
    private long earliestConnectionDeadlineNs;

    BuiltinIoLoop(final BuiltinTransport owner) throws IOException
    {
        this.owner = owner;
        this.context = owner.context;
        this.stats = owner.stats;
        final int maxReads = context.maxReadsInFlight();
        final int maxSessions = context.maxSessions();
        final int maxPeers = context.maxPeers();
        streamsPerPeer = context.streamsPerPeer();

        liveSessions = new LongIntMap(maxSessions);
        sessionState = new int[maxSessions];
        sessionSends = new int[maxSessions];

        readGeneration = new int[maxReads];
        readBytesDone = new int[maxReads];
        readBytesDispatched = new int[maxReads];
        readLive = new boolean[maxReads];
        pendingNext = new int[maxReads];
        pendingPrev = new int[maxReads];
        readPending = new boolean[maxReads];
        activeNext = new int[maxReads];
        activePrev = new int[maxReads];

        peerGeneration = new int[maxPeers];
        peerAddress = new InetSocketAddress[maxPeers];
        peerOpen = new boolean[maxPeers];
        peerPendingHead = new int[maxPeers];
        peerPendingTail = new int[maxPeers];
        Arrays.fill(peerPendingHead, -1);
        Arrays.fill(peerPendingTail, -1);
        streams = new Stream[maxPeers * streamsPerPeer];
        for (int i = 0; i < streams.length; i++)
        {
            streams[i] = new Stream(arena, i, i / streamsPerPeer, context.maxChunksPerStream());
        }

        connections = new ServerConnection[context.maxServerConnections()];
        freeConnections = new int[connections.length];
        for (int i = 0; i < connections.length; i++)
        {
            freeConnections[i] = connections.length - 1 - i;
        }
        freeConnectionCount = connections.length;
        openConnections = new int[connections.length];

        events = EpollEvent.allocateArray(arena, EPOLL_BATCH);
        control = EpollEvent.allocateArray(arena, 1);
        timeout = KernelTimespec.allocate(arena);
        wakeBuffer = arena.allocate(ValueLayout.JAVA_LONG);
        scratchAddress = arena.allocate(SCRATCH_BYTES, 64).address();

        epollFd = LibC.epoll_create1(state, LibC.EPOLL_CLOEXEC);
        if (epollFd < 0)
        {
            arena.close();
            throw new IOException("epoll_create1 failed: " + Errno.describe(state.errno()));
        }

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
            if (listenerFd < 0 || !add(listenerFd, LibC.EPOLLIN, KIND_LISTENER, 0) ||
                !add(owner.wakeFd, LibC.EPOLLIN, KIND_WAKE, 0))
            {
                throw new IOException("cannot watch the listening socket: " + Errno.describe(state.errno()));
            }
        }
        catch (final IOException | RuntimeException ex)
        {
            if (null != channel)
            {
                channel.close();
            }
            LibC.close(state, epollFd);
            arena.close();
            throw ex;
        }
        listener = channel;
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
                    expireReads(nowNs);
                    expireConnections(nowNs);
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
        owner.ioSleeping.set(1);
        if (!owner.commands.isEmpty() || !running)
        {
            setTimeout(0);
            waitLimit = timeout;
        }
        else if (-1 != activeHead || timedConnectionCount > 0)
        {
            long untilNs = Long.MAX_VALUE;
            if (-1 != activeHead)
            {
                untilNs = owner.readDeadlineNs[activeHead] - nowNs;
            }
            if (timedConnectionCount > 0)
            {
                untilNs = Math.min(untilNs, earliestConnectionDeadlineNs - nowNs);
            }
            setTimeout(Math.max(0, untilNs));
            waitLimit = timeout;
        }
        final int ready = LibC.epoll_pwait2(state, epollFd, events, EPOLL_BATCH, waitLimit, MemorySegment.NULL);
        owner.ioSleeping.set(0);
        // Commands first: a revoke published before a peer's request arrived must be seen before that request.
        drainCommands();
        final long eventBytes = EpollEvent.sizeof();
        for (int i = 0; i < ready; i++)
        {
            final long at = i * eventBytes;
            final long data = events.get(ValueLayout.JAVA_LONG_UNALIGNED, at + EpollEvent.DATA$OFFSET);
            final int flags = events.get(ValueLayout.JAVA_INT_UNALIGNED, at + EpollEvent.EVENTS$OFFSET);
            final int kind = (int)(data >>> 56);
            final int incarnation = (int)(data >>> 32) & 0xFFFFFF;
            final int index = (int)data;
            try
            {
                switch (kind)
                {
                    case KIND_WAKE -> LibC.read(state, owner.wakeFd, wakeBuffer, Long.BYTES);
                    case KIND_LISTENER -> accept();
                    case KIND_SERVER -> serviceServer(connections[index]);
                    case KIND_STREAM ->
                    {
                        // An event of a connection closed earlier in this batch must not act on its successor.
                        if (streams[index].incarnation == incarnation)
                        {
                            serviceStream(streams[index], flags);
                        }
                    }
                    default ->
                    {
                    }
                }
            }
            catch (final RuntimeException ex)
            {
                // A fault while handling one connection must not stop the transport: that connection goes.
                stats.increment(BuiltinTransportStats.PROTOCOL_ERRORS);
                if (KIND_SERVER == kind)
                {
                    closeServer(connections[index]);
                }
                else if (KIND_STREAM == kind)
                {
                    failStream(streams[index], TransportStatus.FAILED);
                }
            }
        }
    }

    private void setTimeout(final long ns)
    {
        timeout.set(ValueLayout.JAVA_LONG, KernelTimespec.TV_SEC$OFFSET, ns / 1_000_000_000L);
        timeout.set(ValueLayout.JAVA_LONG, KernelTimespec.TV_NSEC$OFFSET, ns % 1_000_000_000L);
    }

    private void drainCommands()
    {
        final LongRing commands = owner.commands;
        while (!commands.isEmpty())
        {
            final long command = commands.take();
            final int index = BuiltinTransport.commandIndex(command);
            switch (BuiltinTransport.commandType(command))
            {
                case BuiltinTransport.CMD_READ -> startRead(index);
                case BuiltinTransport.CMD_EXPORT -> exportSession(index);
                case BuiltinTransport.CMD_REVOKE -> revokeSession(index);
                case BuiltinTransport.CMD_CONNECT -> openPeer(index, BuiltinTransport.commandAux(command));
                case BuiltinTransport.CMD_CLOSE_PEER -> closePeer(index);
                default ->
                {
                }
            }
        }
    }

    // ---------------------------------------------------------------- source side

    private void exportSession(final int slot)
    {
        liveSessions.put(owner.sessionId[slot], slot);
        sessionState[slot] = BuiltinTransport.SESSION_EXPORTED;
        sessionSends[slot] = 0;
    }

    private void revokeSession(final int slot)
    {
        sessionState[slot] = BuiltinTransport.SESSION_REVOKING;
        if (0 == sessionSends[slot])
        {
            finishRevoke(slot);
        }
    }

    private void finishRevoke(final int slot)
    {
        liveSessions.remove(owner.sessionId[slot]);
        sessionState[slot] = BuiltinTransport.SESSION_FREE;
        owner.completions.offer(BuiltinTransport.completion(BuiltinTransport.EVENT_REVOKED, 0, slot, 0));
        completionsQueued = true;
    }

    private void accept()
    {
        while (true)
        {
            final SocketChannel channel;
            try
            {
                channel = listener.accept();
            }
            catch (final IOException ex)
            {
                stats.increment(BuiltinTransportStats.CONNECTIONS_REFUSED);
                return;
            }
            if (null == channel)
            {
                return;
            }
            if (0 == freeConnectionCount)
            {
                stats.increment(BuiltinTransportStats.CONNECTIONS_REFUSED);
                closeQuietly(channel);
                continue;
            }
            final int index = freeConnections[freeConnectionCount - 1];
            ServerConnection connection = connections[index];
            if (null == connection)
            {
                connection = new ServerConnection(arena, index);
                connections[index] = connection;
            }
            final int fd = configure(channel);
            if (fd < 0 || !add(fd, CONNECTION_EVENTS, KIND_SERVER, index))
            {
                stats.increment(BuiltinTransportStats.CONNECTIONS_REFUSED);
                closeQuietly(channel);
                continue;
            }
            freeConnectionCount--;
            connection.open(channel, fd);
            connection.openPosition = openConnectionCount;
            openConnections[openConnectionCount++] = index;
            arm(connection, System.nanoTime() + context.helloTimeoutNs());
            stats.increment(BuiltinTransportStats.CONNECTIONS_ACCEPTED);
            serviceServer(connection);
        }
    }

    private void serviceServer(final ServerConnection connection)
    {
        while (connection.isOpen)
        {
            if (connection.responding)
            {
                if (!sendResponse(connection))
                {
                    return;
                }
                continue;
            }

            final int available = connection.inEnd - connection.inStart;
            if (!connection.helloDone && available >= HELLO_BYTES)
            {
                final long at = connection.inStart;
                final MemorySegment in = connection.in;
                if (HELLO_MAGIC != in.get(INT, at) || HELLO_VERSION != in.get(SHORT, at + 4))
                {
                    stats.increment(BuiltinTransportStats.BAD_HELLOS);
                    closeServer(connection);
                    return;
                }
                connection.inStart += HELLO_BYTES;
                connection.helloDone = true;
                disarm(connection);
                continue;
            }
            if (connection.helloDone && available >= REQUEST_BYTES)
            {
                if (!startResponse(connection))
                {
                    return;
                }
                continue;
            }

            if (connection.inStart > 0)
            {
                MemorySegment.copy(connection.in, connection.inStart, connection.in, 0, available);
                connection.inStart = 0;
                connection.inEnd = available;
            }
            final long received = LibC.recv(
                state, connection.fd, connection.inAddress + connection.inEnd, SERVER_INPUT_BYTES - connection.inEnd, 0);
            if (received > 0)
            {
                connection.inEnd += (int)received;
            }
            else if (0 == received)
            {
                closeServer(connection);
                return;
            }
            else
            {
                final int errno = state.errno();
                if (Errno.EAGAIN == errno)
                {
                    return;
                }
                if (Errno.EINTR != errno)
                {
                    closeServer(connection);
                    return;
                }
            }
        }
    }

    /**
     * Decide the request at the head of the connection's input and prepare its response.
     *
     * @return false when the request broke the protocol and the connection was closed.
     */
    private boolean startResponse(final ServerConnection connection)
    {
        final MemorySegment in = connection.in;
        final long at = connection.inStart;
        final int type = in.get(INT, at);
        final int length = in.get(INT, at + 4);
        final long requestId = in.get(LONG, at + 8);
        final long sessionId = in.get(LONG, at + 16);
        final long token = in.get(LONG, at + 24);
        final long address = in.get(LONG, at + 32);
        if (REQUEST_TYPE_READ != type)
        {
            stats.increment(BuiltinTransportStats.MALFORMED_FRAMES);
            closeServer(connection);
            return false;
        }
        if (length <= 0 || length > context.maxRequestBytes())
        {
            stats.increment(BuiltinTransportStats.OVERSIZE_REQUESTS);
            closeServer(connection);
            return false;
        }
        connection.inStart += REQUEST_BYTES;

        // An export or revoke the owner published while this pass served earlier events must judge this request:
        // the commands taken after the wait are not all there is.
        if (!owner.commands.isEmpty())
        {
            drainCommands();
        }
        final int slot = liveSessions.get(sessionId);
        int refusal = -1;
        if (LongIntMap.MISSING == slot)
        {
            refusal = BuiltinTransportStats.REJECTED_UNKNOWN_SESSION;
        }
        else if (BuiltinTransport.SESSION_EXPORTED != sessionState[slot])
        {
            refusal = BuiltinTransportStats.REJECTED_REVOKED;
        }
        else if (owner.sessionToken[slot] != token)
        {
            refusal = BuiltinTransportStats.REJECTED_TOKEN;
        }
        else if (!insideExport(slot, address, length))
        {
            refusal = BuiltinTransportStats.REJECTED_RANGE;
        }

        final MemorySegment header = connection.header;
        header.set(LONG, 0, requestId);
        if (-1 != refusal)
        {
            stats.increment(refusal);
            header.set(INT, 8, TransportStatus.REJECTED);
            header.set(INT, 12, 0);
            connection.respond(-1, 0, 0);
        }
        else
        {
            header.set(INT, 8, TransportStatus.OK);
            header.set(INT, 12, length);
            sessionSends[slot]++;
            stats.increment(BuiltinTransportStats.SENDS_IN_PROGRESS);
            connection.respond(slot, address, length);
        }
        return true;
    }

    private boolean insideExport(final int slot, final long address, final int length)
    {
        final long[] addresses = owner.sessionAddresses[slot];
        final int[] lengths = owner.sessionLengths[slot];
        for (int i = 0, count = owner.sessionRangeCount[slot]; i < count; i++)
        {
            final long start = addresses[i];
            if (address >= start && address <= start + lengths[i] - length)
            {
                return true;
            }
        }
        return false;
    }

    /**
     * @return true when the response was sent completely, false when the socket is full or the connection closed.
     */
    private boolean sendResponse(final ServerConnection connection)
    {
        final long total = RESPONSE_BYTES + (long)connection.payloadLength;
        while (connection.sent < total)
        {
            final long sent;
            if (connection.sent < RESPONSE_BYTES)
            {
                connection.gather();
                sent = LibC.sendmsg(state, connection.fd, connection.message, LibC.MSG_NOSIGNAL);
            }
            else
            {
                final long offset = connection.sent - RESPONSE_BYTES;
                sent = LibC.send(state, connection.fd, connection.payloadAddress + offset,
                    connection.payloadLength - offset, LibC.MSG_NOSIGNAL);
            }
            if (sent > 0)
            {
                connection.sent += sent;
                connection.progressed = true;
                continue;
            }
            final int errno = state.errno();
            if (sent < 0 && Errno.EAGAIN == errno)
            {
                // The requester is not reading: the send is cut if it makes no progress for a stall timeout.
                if (0 == connection.deadlineNs || connection.progressed)
                {
                    connection.progressed = false;
                    arm(connection, System.nanoTime() + context.sendStallTimeoutNs());
                }
                return false;
            }
            if (sent < 0 && Errno.EINTR == errno)
            {
                continue;
            }
            closeServer(connection);
            return false;
        }

        disarm(connection);
        connection.responding = false;
        final int slot = connection.responseSession;
        if (slot >= 0)
        {
            connection.responseSession = -1;
            stats.increment(BuiltinTransportStats.REQUESTS_SERVED);
            stats.add(BuiltinTransportStats.BYTES_SENT, connection.payloadLength);
            releaseSend(slot);
        }
        return true;
    }

    private void releaseSend(final int slot)
    {
        stats.add(BuiltinTransportStats.SENDS_IN_PROGRESS, -1);
        if (0 == --sessionSends[slot] && BuiltinTransport.SESSION_REVOKING == sessionState[slot])
        {
            finishRevoke(slot);
        }
    }

    private void closeServer(final ServerConnection connection)
    {
        if (!connection.isOpen)
        {
            return;
        }
        if (connection.responding && connection.responseSession >= 0)
        {
            // The send is cut: no byte of it goes out any more.
            final int slot = connection.responseSession;
            connection.responseSession = -1;
            releaseSend(slot);
        }
        connection.responding = false;
        disarm(connection);
        remove(connection.fd);
        closeQuietly(connection.channel);
        connection.close();
        final int last = openConnections[--openConnectionCount];
        openConnections[connection.openPosition] = last;
        connections[last].openPosition = connection.openPosition;
        freeConnections[freeConnectionCount++] = connection.index;
    }

    // ---------------------------------------------------------------- requester side

    private void openPeer(final int peerSlot, final int connectIndex)
    {
        peerGeneration[peerSlot] = owner.connectGeneration[connectIndex];
        peerAddress[peerSlot] = owner.connectAddress[connectIndex];
        peerOpen[peerSlot] = running;
        for (int i = 0; i < streamsPerPeer; i++)
        {
            connect(streams[peerSlot * streamsPerPeer + i]);
        }
    }

    private void closePeer(final int peerSlot)
    {
        peerOpen[peerSlot] = false;
        for (int i = 0; i < streamsPerPeer; i++)
        {
            failStream(streams[peerSlot * streamsPerPeer + i], TransportStatus.CLOSED);
        }
        while (-1 != peerPendingHead[peerSlot])
        {
            complete(peerPendingHead[peerSlot], TransportStatus.CLOSED);
        }
    }

    private void startRead(final int slot)
    {
        final int handle = owner.readPeer[slot];
        final int peerSlot = BuiltinTransport.peerSlotOf(handle);
        readLive[slot] = true;
        readBytesDone[slot] = 0;
        readBytesDispatched[slot] = 0;
        readPending[slot] = false;
        activePrev[slot] = activeTail;
        activeNext[slot] = -1;
        if (-1 == activeTail)
        {
            activeHead = slot;
        }
        else
        {
            activeNext[activeTail] = slot;
        }
        activeTail = slot;

        if (!running || !peerOpen[peerSlot] || peerGeneration[peerSlot] != BuiltinTransport.peerGenerationOf(handle))
        {
            complete(slot, TransportStatus.CLOSED);
            return;
        }

        readPending[slot] = true;
        pendingNext[slot] = -1;
        pendingPrev[slot] = peerPendingTail[peerSlot];
        if (-1 == peerPendingTail[peerSlot])
        {
            peerPendingHead[peerSlot] = slot;
        }
        else
        {
            pendingNext[peerPendingTail[peerSlot]] = slot;
        }
        peerPendingTail[peerSlot] = slot;
        dispatch(peerSlot);
    }

    /**
     * Hand the chunks of the peer's waiting reads to its streams, the least loaded stream with room first.
     */
    private void dispatch(final int peerSlot)
    {
        final int first = peerSlot * streamsPerPeer;
        final int chunkBytes = context.chunkBytes();
        final int maxChunks = context.maxChunksPerStream();
        while (-1 != peerPendingHead[peerSlot])
        {
            final int read = peerPendingHead[peerSlot];
            Stream best = null;
            boolean anyOpen = false;
            for (int i = first; i < first + streamsPerPeer; i++)
            {
                final Stream stream = streams[i];
                if (STREAM_CLOSED == stream.state)
                {
                    connect(stream);
                }
                if (STREAM_CLOSED != stream.state)
                {
                    anyOpen = true;
                    if (stream.count < maxChunks && (null == best || stream.outstandingBytes < best.outstandingBytes))
                    {
                        best = stream;
                    }
                }
            }
            if (null == best)
            {
                if (!anyOpen)
                {
                    complete(read, TransportStatus.FAILED);
                    continue;
                }
                break;
            }

            final int offset = readBytesDispatched[read];
            final int length = Math.min(chunkBytes, owner.readLength[read] - offset);
            best.enqueue(read, readGeneration[read], offset, length, owner.readSessionId[read], owner.readToken[read],
                owner.readRemoteAddress[read] + offset);
            best.dirty = true;
            readBytesDispatched[read] = offset + length;
            if (readBytesDispatched[read] == owner.readLength[read])
            {
                unlinkPending(read);
            }
        }

        for (int i = first; i < first + streamsPerPeer; i++)
        {
            final Stream stream = streams[i];
            if (stream.dirty)
            {
                stream.dirty = false;
                if (STREAM_CONNECTED == stream.state)
                {
                    flush(stream);
                }
            }
        }
    }

    private void connect(final Stream stream)
    {
        final int peerSlot = stream.peerSlot;
        final InetSocketAddress address = peerAddress[peerSlot];
        if (!peerOpen[peerSlot] || null == address)
        {
            return;
        }
        SocketChannel channel = null;
        try
        {
            channel = SocketChannel.open();
            final int fd = configure(channel);
            if (fd < 0)
            {
                throw new IOException("no descriptor");
            }
            final boolean connected = channel.connect(address);
            if (!add(fd, CONNECTION_EVENTS, KIND_STREAM, stream.incarnation + 1, stream.index))
            {
                throw new IOException("epoll_ctl failed: " + Errno.describe(state.errno()));
            }
            stream.open(channel, fd, connected ? STREAM_CONNECTED : STREAM_CONNECTING);
            if (connected)
            {
                flush(stream);
            }
        }
        catch (final IOException | RuntimeException ex)
        {
            stats.increment(BuiltinTransportStats.STREAMS_LOST);
            closeQuietly(channel);
        }
    }

    private void serviceStream(final Stream stream, final int flags)
    {
        if (STREAM_CONNECTING == stream.state)
        {
            try
            {
                if (!stream.channel.finishConnect())
                {
                    return;
                }
            }
            catch (final IOException ex)
            {
                failStream(stream, TransportStatus.FAILED);
                dispatchAfterLoss(stream.peerSlot);
                return;
            }
            stream.state = STREAM_CONNECTED;
        }
        if (STREAM_CONNECTED != stream.state)
        {
            return;
        }

        if (!flush(stream))
        {
            dispatchAfterLoss(stream.peerSlot);
            return;
        }
        if (0 == stream.count)
        {
            if (0 != (flags & CLOSING_EVENTS))
            {
                failStream(stream, TransportStatus.FAILED);
            }
            return;
        }
        final int before = stream.completedChunks;
        final boolean open = receive(stream);
        if (!open)
        {
            dispatchAfterLoss(stream.peerSlot);
        }
        else if (stream.completedChunks != before && -1 != peerPendingHead[stream.peerSlot])
        {
            dispatch(stream.peerSlot);
        }
    }

    private void dispatchAfterLoss(final int peerSlot)
    {
        if (peerOpen[peerSlot] && -1 != peerPendingHead[peerSlot])
        {
            dispatch(peerSlot);
        }
    }

    /**
     * @return false when the stream failed and was closed.
     */
    private boolean flush(final Stream stream)
    {
        while (stream.sendStart < stream.sendEnd)
        {
            final long sent = LibC.send(state, stream.fd, stream.sendAddress + stream.sendStart,
                stream.sendEnd - stream.sendStart, LibC.MSG_NOSIGNAL);
            if (sent > 0)
            {
                stream.sendStart += (int)sent;
                continue;
            }
            final int errno = state.errno();
            if (sent < 0 && Errno.EAGAIN == errno)
            {
                return true;
            }
            if (sent < 0 && Errno.EINTR == errno)
            {
                continue;
            }
            failStream(stream, TransportStatus.FAILED);
            return false;
        }
        stream.sendStart = 0;
        stream.sendEnd = 0;
        return true;
    }

    /**
     * Receive responses until the socket is empty or no request is outstanding.
     *
     * @return false when the stream failed and was closed.
     */
    private boolean receive(final Stream stream)
    {
        while (stream.count > 0)
        {
            final int head = stream.head;
            final long received;
            if (!stream.inPayload)
            {
                received = LibC.recv(state, stream.fd, stream.headerAddress + stream.headerFilled,
                    RESPONSE_BYTES - stream.headerFilled, 0);
                if (received > 0)
                {
                    stream.headerFilled += (int)received;
                    if (stream.headerFilled == RESPONSE_BYTES && !acceptHeader(stream, head))
                    {
                        return false;
                    }
                    continue;
                }
            }
            else
            {
                final int read = stream.chunkRead[head];
                final boolean live = readGeneration[read] == stream.chunkGeneration[head];
                final int remaining = stream.chunkLength[head] - stream.payloadReceived;
                final long target = live ?
                    owner.readLocalAddress[read] + stream.chunkOffset[head] + stream.payloadReceived : scratchAddress;
                received = LibC.recv(state, stream.fd, target, live ? remaining : Math.min(remaining, SCRATCH_BYTES), 0);
                if (received > 0)
                {
                    stream.payloadReceived += (int)received;
                    if (stream.payloadReceived == stream.chunkLength[head])
                    {
                        final int length = stream.chunkLength[head];
                        stream.inPayload = false;
                        stream.pop();
                        if (live)
                        {
                            stats.add(BuiltinTransportStats.BYTES_RECEIVED, length);
                            readBytesDone[read] += length;
                            if (readBytesDone[read] == owner.readLength[read])
                            {
                                complete(read, TransportStatus.OK);
                            }
                        }
                    }
                    continue;
                }
            }

            if (0 == received)
            {
                failStream(stream, TransportStatus.FAILED);
                return false;
            }
            final int errno = state.errno();
            if (Errno.EAGAIN == errno)
            {
                return true;
            }
            if (Errno.EINTR != errno)
            {
                failStream(stream, TransportStatus.FAILED);
                return false;
            }
        }
        return true;
    }

    private boolean acceptHeader(final Stream stream, final int head)
    {
        stream.headerFilled = 0;
        final long requestId = stream.header.get(LONG, 0);
        final int status = stream.header.get(INT, 8);
        final int length = stream.header.get(INT, 12);
        final boolean ok = TransportStatus.OK == status && length == stream.chunkLength[head];
        final boolean rejected = TransportStatus.REJECTED == status && 0 == length;
        if (requestId != stream.chunkSequence[head] || (!ok && !rejected))
        {
            stats.increment(BuiltinTransportStats.PROTOCOL_ERRORS);
            failStream(stream, TransportStatus.FAILED);
            return false;
        }
        if (ok)
        {
            stream.inPayload = true;
            stream.payloadReceived = 0;
            return true;
        }
        final int read = stream.chunkRead[head];
        final boolean live = readGeneration[read] == stream.chunkGeneration[head];
        stream.pop();
        if (live)
        {
            complete(read, TransportStatus.REJECTED);
        }
        return true;
    }

    private void failStream(final Stream stream, final int status)
    {
        if (STREAM_CLOSED == stream.state)
        {
            return;
        }
        if (TransportStatus.FAILED == status)
        {
            stats.increment(BuiltinTransportStats.STREAMS_LOST);
        }
        while (stream.count > 0)
        {
            final int head = stream.head;
            final int read = stream.chunkRead[head];
            final boolean live = readGeneration[read] == stream.chunkGeneration[head];
            stream.pop();
            if (live)
            {
                complete(read, status);
            }
        }
        remove(stream.fd);
        closeQuietly(stream.channel);
        stream.close();
    }

    /**
     * End a read: its outstanding chunks become stale, and the owner hears of it.
     */
    private void complete(final int read, final int status)
    {
        if (!readLive[read])
        {
            return;
        }
        readLive[read] = false;
        readGeneration[read]++;
        if (readPending[read])
        {
            unlinkPending(read);
        }
        final int prev = activePrev[read];
        final int next = activeNext[read];
        if (-1 == prev)
        {
            activeHead = next;
        }
        else
        {
            activeNext[prev] = next;
        }
        if (-1 == next)
        {
            activeTail = prev;
        }
        else
        {
            activePrev[next] = prev;
        }
        final long bytes = TransportStatus.OK == status ? owner.readLength[read] : readBytesDone[read];
        owner.completions.offer(BuiltinTransport.completion(BuiltinTransport.EVENT_READ, status, read, bytes));
        completionsQueued = true;
    }

    private void unlinkPending(final int read)
    {
        final int peerSlot = BuiltinTransport.peerSlotOf(owner.readPeer[read]);
        readPending[read] = false;
        final int prev = pendingPrev[read];
        final int next = pendingNext[read];
        if (-1 == prev)
        {
            peerPendingHead[peerSlot] = next;
        }
        else
        {
            pendingNext[prev] = next;
        }
        if (-1 == next)
        {
            peerPendingTail[peerSlot] = prev;
        }
        else
        {
            pendingPrev[next] = prev;
        }
    }

    private void arm(final ServerConnection connection, final long deadlineNs)
    {
        if (0 == connection.deadlineNs)
        {
            timedConnectionCount++;
        }
        connection.deadlineNs = deadlineNs;
        if (1 == timedConnectionCount || deadlineNs - earliestConnectionDeadlineNs < 0)
        {
            earliestConnectionDeadlineNs = deadlineNs;
        }
    }

    private void disarm(final ServerConnection connection)
    {
        if (0 != connection.deadlineNs)
        {
            connection.deadlineNs = 0;
            connection.progressed = false;
            timedConnectionCount--;
        }
    }

    /**
     * Close connections that sent no hello in time, and cut sends that made no progress for the stall timeout (a
     * requester that stops reading must not hold a revoked session). Runs only while some connection has a
     * deadline, so idle connections cost nothing.
     */
    private void expireConnections(final long nowNs)
    {
        if (0 == timedConnectionCount || earliestConnectionDeadlineNs - nowNs > 0)
        {
            return;
        }
        long earliest = Long.MAX_VALUE;
        boolean any = false;
        for (int i = openConnectionCount - 1; i >= 0; i--)
        {
            final ServerConnection connection = connections[openConnections[i]];
            final long deadlineNs = connection.deadlineNs;
            if (0 == deadlineNs)
            {
                continue;
            }
            if (deadlineNs - nowNs <= 0)
            {
                stats.increment(connection.helloDone ?
                    BuiltinTransportStats.SENDS_CUT : BuiltinTransportStats.HELLO_TIMEOUTS);
                closeServer(connection);
            }
            else if (!any || deadlineNs - earliest < 0)
            {
                any = true;
                earliest = deadlineNs;
            }
        }
        earliestConnectionDeadlineNs = earliest;
    }

    private void expireReads(final long nowNs)
    {
        while (-1 != activeHead && owner.readDeadlineNs[activeHead] - nowNs <= 0)
        {
            complete(activeHead, TransportStatus.TIMEOUT);
        }
    }

    // ---------------------------------------------------------------- shared helpers

    private int configure(final SocketChannel channel)
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

    private boolean add(final int fd, final int flags, final int kind, final int index)
    {
        return add(fd, flags, kind, 0, index);
    }

    private boolean add(final int fd, final int flags, final int kind, final int incarnation, final int index)
    {
        EpollEvent.events(control, flags);
        EpollEvent.data(control, ((long)kind << 56) | ((long)(incarnation & 0xFFFFFF) << 32) | (index & 0xFFFFFFFFL));
        return 0 == LibC.epoll_ctl(state, epollFd, LibC.EPOLL_CTL_ADD, fd, control);
    }

    private void remove(final int fd)
    {
        if (fd >= 0)
        {
            LibC.epoll_ctl(state, epollFd, LibC.EPOLL_CTL_DEL, fd, control);
        }
    }

    private static void closeQuietly(final Channel channel)
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

    private void shutdown()
    {
        // Commands the owner published before close: their reads end CLOSED, their revokes are answered.
        drainCommands();
        while (-1 != activeHead)
        {
            complete(activeHead, TransportStatus.CLOSED);
        }
        for (final Stream stream : streams)
        {
            failStream(stream, TransportStatus.CLOSED);
        }
        for (final ServerConnection connection : connections)
        {
            if (null != connection)
            {
                closeServer(connection);
            }
        }
        for (int slot = 0; slot < sessionState.length; slot++)
        {
            if (BuiltinTransport.SESSION_REVOKING == sessionState[slot])
            {
                finishRevoke(slot);
            }
        }
        closeQuietly(listener);
        LibC.close(state, epollFd);
        arena.close();
    }

    /**
     * One connection of a requester to a peer: its requests not yet sent, and the chunks whose responses it awaits in
     * request order.
     */
    static final class Stream
    {
        final int index;
        final int peerSlot;
        final MemorySegment send;
        final long sendAddress;
        final MemorySegment header;
        final long headerAddress;
        final int[] chunkRead;
        final int[] chunkGeneration;
        final int[] chunkOffset;
        final int[] chunkLength;
        final long[] chunkSequence;
        final int capacity;
        int state = STREAM_CLOSED;
        int incarnation;
        SocketChannel channel;
        int fd = -1;
        int sendStart;
        int sendEnd;
        int headerFilled;
        boolean inPayload;
        int payloadReceived;
        int head;
        int count;
        long outstandingBytes;
        long nextSequence;
        int completedChunks;
        boolean dirty;

        Stream(final Arena arena, final int index, final int peerSlot, final int capacity)
        {
            this.index = index;
            this.peerSlot = peerSlot;
            this.capacity = capacity;
            send = arena.allocate(HELLO_BYTES + (long)capacity * REQUEST_BYTES, 64);
            sendAddress = send.address();
            header = arena.allocate(RESPONSE_BYTES, 64);
            headerAddress = header.address();
            chunkRead = new int[capacity];
            chunkGeneration = new int[capacity];
            chunkOffset = new int[capacity];
            chunkLength = new int[capacity];
            chunkSequence = new long[capacity];
        }

        void open(final SocketChannel channel, final int fd, final int state)
        {
            incarnation = (incarnation + 1) & 0xFFFFFF;
            this.channel = channel;
            this.fd = fd;
            this.state = state;
            sendStart = 0;
            send.set(INT, 0, HELLO_MAGIC);
            send.set(SHORT, 4, HELLO_VERSION);
            send.set(SHORT, 6, (short)0);
            sendEnd = HELLO_BYTES;
            headerFilled = 0;
            inPayload = false;
            head = 0;
            count = 0;
            outstandingBytes = 0;
        }

        void enqueue(
            final int read,
            final int generation,
            final int offset,
            final int length,
            final long sessionId,
            final long token,
            final long address)
        {
            final int tail = (head + count) % capacity;
            chunkRead[tail] = read;
            chunkGeneration[tail] = generation;
            chunkOffset[tail] = offset;
            chunkLength[tail] = length;
            final long sequence = nextSequence++;
            chunkSequence[tail] = sequence;
            count++;
            outstandingBytes += length;

            if (sendEnd + REQUEST_BYTES > send.byteSize())
            {
                final int unsent = sendEnd - sendStart;
                MemorySegment.copy(send, sendStart, send, 0, unsent);
                sendStart = 0;
                sendEnd = unsent;
            }
            final long at = sendEnd;
            send.set(INT, at, REQUEST_TYPE_READ);
            send.set(INT, at + 4, length);
            send.set(LONG, at + 8, sequence);
            send.set(LONG, at + 16, sessionId);
            send.set(LONG, at + 24, token);
            send.set(LONG, at + 32, address);
            sendEnd += REQUEST_BYTES;
        }

        void pop()
        {
            outstandingBytes -= chunkLength[head];
            head = (head + 1) % capacity;
            count--;
            completedChunks++;
        }

        void close()
        {
            state = STREAM_CLOSED;
            channel = null;
            fd = -1;
            count = 0;
            head = 0;
            outstandingBytes = 0;
            sendStart = 0;
            sendEnd = 0;
            inPayload = false;
            headerFilled = 0;
        }
    }

    /**
     * One connection a source serves: the requests received and not yet answered, and the response being sent.
     */
    static final class ServerConnection
    {
        final int index;
        final MemorySegment in;
        final long inAddress;
        final MemorySegment header;
        final long headerAddress;
        final MemorySegment vector;
        final MemorySegment message;
        boolean isOpen;
        SocketChannel channel;
        int fd = -1;
        int inStart;
        int inEnd;
        boolean helloDone;
        boolean responding;
        int responseSession = -1;
        int openPosition;
        long deadlineNs;
        boolean progressed;
        long payloadAddress;
        int payloadLength;
        long sent;

        ServerConnection(final Arena arena, final int index)
        {
            this.index = index;
            in = arena.allocate(SERVER_INPUT_BYTES, 64);
            inAddress = in.address();
            header = arena.allocate(RESPONSE_BYTES, 64);
            headerAddress = header.address();
            vector = arena.allocate(Iovec.layout(), 2);
            message = MsgHdr.allocate(arena);
            MsgHdr.msg_iov(message, vector);
        }

        void open(final SocketChannel channel, final int fd)
        {
            this.channel = channel;
            this.fd = fd;
            isOpen = true;
            inStart = 0;
            inEnd = 0;
            helloDone = false;
            responding = false;
            responseSession = -1;
        }

        void respond(final int session, final long address, final int length)
        {
            responding = true;
            responseSession = session;
            payloadAddress = address;
            payloadLength = length;
            sent = 0;
        }

        void gather()
        {
            final long iovBytes = Iovec.sizeof();
            vector.set(ValueLayout.JAVA_LONG, Iovec.IOV_BASE$OFFSET, headerAddress + sent);
            vector.set(ValueLayout.JAVA_LONG, Iovec.IOV_LEN$OFFSET, RESPONSE_BYTES - sent);
            vector.set(ValueLayout.JAVA_LONG, iovBytes + Iovec.IOV_BASE$OFFSET, payloadAddress);
            vector.set(ValueLayout.JAVA_LONG, iovBytes + Iovec.IOV_LEN$OFFSET, payloadLength);
            MsgHdr.msg_iovlen(message, payloadLength > 0 ? 2 : 1);
        }

        void close()
        {
            isOpen = false;
            channel = null;
            fd = -1;
        }
    }
}
