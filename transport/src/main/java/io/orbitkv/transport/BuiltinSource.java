package io.orbitkv.transport;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

import io.orbitkv.ffm.CallState;
import io.orbitkv.ffm.Errno;
import io.orbitkv.ffm.LibC;

/**
 * The source side of the I/O thread: the listening socket, the connections it serves, and the sessions as the I/O
 * thread sees them. A request is answered from memory only when it lies inside a range of a live session exported
 * with its token; a session being revoked is answered REJECTED and is reported revoked once its last send ended.
 * Connections without a hello, and sends that make no progress, are cut by their deadline.
 */
final class BuiltinSource
{
    private final BuiltinIoLoop loop;
    private final BuiltinTransport owner;
    private final BuiltinTransport.Context context;
    private final BuiltinHandshake handshake;
    private final BuiltinTransportStats stats;
    private final Arena arena;
    private final BuiltinSockets sockets;
    private final CallState state;
    private final ServerSocketChannel listener;

    private final LongIntMap liveSessions;
    private final int[] sessionState;
    private final int[] sessionSends;

    private final BuiltinServerConnection[] connections;
    private final SlotPool freeConnections;
    private final int[] openConnections;
    private int openConnectionCount;
    private int timedConnectionCount;
    private long earliestConnectionDeadlineNs;

    BuiltinSource(
        final BuiltinIoLoop loop,
        final BuiltinTransport owner,
        final Arena arena,
        final BuiltinSockets sockets,
        final ServerSocketChannel listener)
    {
        this.arena = arena;
        this.loop = loop;
        this.owner = owner;
        this.context = owner.context;
        this.handshake = null == context.handshakeKey() ? null :
            new BuiltinHandshake(context.handshakeKey(), context.identityMsb(), context.identityLsb());
        this.stats = owner.stats;
        this.sockets = sockets;
        this.state = sockets.state;
        this.listener = listener;

        final int maxSessions = context.maxSessions();
        liveSessions = new LongIntMap(maxSessions);
        sessionState = new int[maxSessions];
        sessionSends = new int[maxSessions];

        connections = new BuiltinServerConnection[context.maxServerConnections()];
        freeConnections = new SlotPool(connections.length);
        openConnections = new int[connections.length];
    }

    void exportSession(final int slot)
    {
        liveSessions.put(owner.sessionId[slot], slot);
        sessionState[slot] = BuiltinTransport.SESSION_EXPORTED;
        sessionSends[slot] = 0;
    }

    void revokeSession(final int slot)
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
        loop.queueCompletion(BuiltinHandOver.completion(BuiltinHandOver.EVENT_REVOKED, 0, slot, 0));
    }

    void accept()
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
            final int index = freeConnections.peek();
            if (SlotPool.NONE == index)
            {
                stats.increment(BuiltinTransportStats.CONNECTIONS_REFUSED);
                BuiltinSockets.closeQuietly(channel);
                continue;
            }
            BuiltinServerConnection connection = connections[index];
            if (null == connection)
            {
                connection = new BuiltinServerConnection(arena, index,
                    null == context.tls() ? null : new BuiltinTls(arena, context.tls(), stats));
                connections[index] = connection;
            }
            final int fd = sockets.configure(channel);
            if (fd < 0 || !sockets.add(fd, BuiltinSockets.CONNECTION_EVENTS, BuiltinSockets.KIND_SERVER, index))
            {
                stats.increment(BuiltinTransportStats.CONNECTIONS_REFUSED);
                BuiltinSockets.closeQuietly(channel);
                continue;
            }
            freeConnections.take();
            if (null != connection.tls)
            {
                connection.tls.open(context.tls().engine(false));
            }
            connection.open(channel, fd);
            connection.openPosition = openConnectionCount;
            openConnections[openConnectionCount++] = index;
            arm(connection, System.nanoTime() + context.helloTimeoutNs());
            stats.increment(BuiltinTransportStats.CONNECTIONS_ACCEPTED);
            service(connection);
        }
    }

    void service(final int index)
    {
        service(connections[index]);
    }

    private void service(final BuiltinServerConnection connection)
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
            if (!connection.helloDone && available >= BuiltinWire.HELLO_BYTES && !connection.awaitingProof)
            {
                if (!BuiltinWire.isHello(connection.in, connection.inStart))
                {
                    stats.increment(BuiltinTransportStats.BAD_HELLOS);
                    close(connection);
                    return;
                }
                final boolean asksAuth = 0 != (BuiltinWire.helloFlags(connection.in, connection.inStart) &
                    BuiltinHandshake.FLAG_AUTH);
                if (asksAuth != (null != handshake))
                {
                    // One end holds a key and the other none: nothing either could prove.
                    stats.increment(BuiltinTransportStats.HANDSHAKES_FAILED);
                    close(connection);
                    return;
                }
                if (null == handshake)
                {
                    connection.inStart += BuiltinWire.HELLO_BYTES;
                    connection.helloDone = true;
                    disarm(connection);
                    continue;
                }
                if (available < BuiltinHandshake.HELLO_BYTES)
                {
                    // The rest of the hello is still to come.
                    if (!receiveMore(connection))
                    {
                        return;
                    }
                    continue;
                }
                if (!sendChallenge(connection))
                {
                    stats.increment(BuiltinTransportStats.HANDSHAKES_FAILED);
                    close(connection);
                    return;
                }
                connection.inStart += BuiltinHandshake.HELLO_BYTES;
                connection.awaitingProof = true;
                continue;
            }
            if (connection.awaitingProof && available >= BuiltinHandshake.PROOF_BYTES)
            {
                if (!BuiltinHandshake.proves(connection.in, connection.inStart, connection.expectedProof))
                {
                    stats.increment(BuiltinTransportStats.HANDSHAKES_FAILED);
                    close(connection);
                    return;
                }
                connection.inStart += BuiltinHandshake.PROOF_BYTES;
                connection.awaitingProof = false;
                connection.helloDone = true;
                stats.increment(BuiltinTransportStats.HANDSHAKES_PROVED);
                disarm(connection);
                continue;
            }
            if (connection.helloDone && available >= BuiltinWire.REQUEST_BYTES)
            {
                if (!startResponse(connection))
                {
                    return;
                }
                continue;
            }

            if (!receiveMore(connection))
            {
                return;
            }
        }
    }

    /**
     * Receive what the socket holds after the unread input.
     *
     * @return false when nothing more can be read now (the socket is empty, or the connection closed).
     */
    private boolean receiveMore(final BuiltinServerConnection connection)
    {
        final int available = connection.inEnd - connection.inStart;
        if (connection.inStart > 0)
        {
            MemorySegment.copy(connection.in, connection.inStart, connection.in, 0, available);
            connection.inStart = 0;
            connection.inEnd = available;
        }
        final long received = null == connection.tls ?
            LibC.recv(state, connection.fd, connection.inAddress + connection.inEnd,
                BuiltinServerConnection.INPUT_BYTES - connection.inEnd, 0) :
            connection.tls.recv(state, connection.fd, connection.inAddress + connection.inEnd,
                BuiltinServerConnection.INPUT_BYTES - connection.inEnd);
        if (received > 0)
        {
            connection.inEnd += (int)received;
            return true;
        }
        if (0 == received)
        {
            if (connection.awaitingProof || (null != handshake && !connection.helloDone && available > 0))
            {
                stats.increment(BuiltinTransportStats.HANDSHAKES_FAILED);
            }
            close(connection);
            return false;
        }
        final int errno = state.errno();
        if (Errno.EAGAIN == errno)
        {
            return false;
        }
        if (Errno.EINTR != errno)
        {
            close(connection);
            return false;
        }
        return true;
    }

    /**
     * Answer an authenticated hello with the challenge, in one send: a new connection's socket buffer takes 64 bytes.
     *
     * @return false when the challenge could not be sent whole.
     */
    private boolean sendChallenge(final BuiltinServerConnection connection)
    {
        handshake.challenge(connection.in, connection.inStart, connection.challenge, connection.expectedProof);
        while (true)
        {
            final long sent = null == connection.tls ?
                LibC.send(state, connection.fd, connection.challenge.address(), BuiltinHandshake.CHALLENGE_BYTES,
                    LibC.MSG_NOSIGNAL) :
                connection.tls.send(state, connection.fd, connection.challenge.address(), BuiltinHandshake.CHALLENGE_BYTES);
            if (BuiltinHandshake.CHALLENGE_BYTES == sent)
            {
                return true;
            }
            if (sent < 0 && Errno.EINTR == state.errno())
            {
                continue;
            }
            return false;
        }
    }

    /**
     * Decide the request at the head of the connection's input and prepare its response.
     *
     * @return false when the request broke the protocol and the connection was closed.
     */
    private boolean startResponse(final BuiltinServerConnection connection)
    {
        final MemorySegment in = connection.in;
        final long at = connection.inStart;
        final int type = BuiltinWire.requestType(in, at);
        final int length = BuiltinWire.requestLength(in, at);
        final long requestId = BuiltinWire.requestId(in, at);
        final long sessionId = BuiltinWire.requestSessionId(in, at);
        final long token = BuiltinWire.requestToken(in, at);
        final long address = BuiltinWire.requestAddress(in, at);
        if (BuiltinWire.REQUEST_TYPE_READ != type)
        {
            stats.increment(BuiltinTransportStats.MALFORMED_FRAMES);
            close(connection);
            return false;
        }
        if (length <= 0 || length > context.maxRequestBytes())
        {
            stats.increment(BuiltinTransportStats.OVERSIZE_REQUESTS);
            close(connection);
            return false;
        }
        connection.inStart += BuiltinWire.REQUEST_BYTES;

        // An export or revoke the owner published while this pass served earlier events must judge this request:
        // the commands taken after the wait are not all there is.
        if (!owner.handOver.commands.isEmpty())
        {
            loop.drainCommands();
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

        if (-1 != refusal)
        {
            stats.increment(refusal);
            BuiltinWire.writeResponse(connection.header, requestId, TransportStatus.REJECTED, 0);
            connection.respond(-1, 0, 0);
        }
        else
        {
            BuiltinWire.writeResponse(connection.header, requestId, TransportStatus.OK, length);
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
    private boolean sendResponse(final BuiltinServerConnection connection)
    {
        final long total = BuiltinWire.RESPONSE_BYTES + (long)connection.payloadLength;
        while (connection.sent < total)
        {
            final long sent;
            if (null != connection.tls)
            {
                final long offset = connection.sent - BuiltinWire.RESPONSE_BYTES;
                sent = offset < 0 ?
                    connection.tls.sendTwo(state, connection.fd, connection.headerAddress + connection.sent, -offset,
                        connection.payloadAddress, connection.payloadLength) :
                    connection.tls.send(state, connection.fd, connection.payloadAddress + offset,
                        connection.payloadLength - offset);
            }
            else if (connection.sent < BuiltinWire.RESPONSE_BYTES)
            {
                connection.gather();
                sent = LibC.sendmsg(state, connection.fd, connection.message, LibC.MSG_NOSIGNAL);
            }
            else
            {
                final long offset = connection.sent - BuiltinWire.RESPONSE_BYTES;
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
            close(connection);
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

    void close(final int index)
    {
        close(connections[index]);
    }

    private void close(final BuiltinServerConnection connection)
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
        sockets.remove(connection.fd);
        BuiltinSockets.closeQuietly(connection.channel);
        connection.close();
        final int last = openConnections[--openConnectionCount];
        openConnections[connection.openPosition] = last;
        connections[last].openPosition = connection.openPosition;
        freeConnections.release(connection.index);
    }

    private void arm(final BuiltinServerConnection connection, final long deadlineNs)
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

    private void disarm(final BuiltinServerConnection connection)
    {
        if (0 != connection.deadlineNs)
        {
            connection.deadlineNs = 0;
            connection.progressed = false;
            timedConnectionCount--;
        }
    }

    /**
     * @return true while some connection has a hello or send-stall deadline.
     */
    boolean hasDeadline()
    {
        return timedConnectionCount > 0;
    }

    /**
     * @return the earliest connection deadline; meaningful only while {@link #hasDeadline()}.
     */
    long earliestDeadlineNs()
    {
        return earliestConnectionDeadlineNs;
    }

    /**
     * Close connections that sent no hello in time, and cut sends that made no progress for the stall timeout (a
     * requester that stops reading must not hold a revoked session). Runs only while some connection has a
     * deadline, so idle connections cost nothing.
     */
    void expireConnections(final long nowNs)
    {
        if (0 == timedConnectionCount || earliestConnectionDeadlineNs - nowNs > 0)
        {
            return;
        }
        long earliest = Long.MAX_VALUE;
        boolean any = false;
        for (int i = openConnectionCount - 1; i >= 0; i--)
        {
            final BuiltinServerConnection connection = connections[openConnections[i]];
            final long deadlineNs = connection.deadlineNs;
            if (0 == deadlineNs)
            {
                continue;
            }
            if (deadlineNs - nowNs <= 0)
            {
                stats.increment(connection.helloDone ?
                    BuiltinTransportStats.SENDS_CUT : BuiltinTransportStats.HELLO_TIMEOUTS);
                close(connection);
            }
            else if (!any || deadlineNs - earliest < 0)
            {
                any = true;
                earliest = deadlineNs;
            }
        }
        earliestConnectionDeadlineNs = earliest;
    }

    /**
     * Close every connection, answer the revokes that waited for a send, and close the listening socket.
     */
    void shutdown()
    {
        for (final BuiltinServerConnection connection : connections)
        {
            if (null != connection)
            {
                close(connection);
            }
        }
        for (int slot = 0; slot < sessionState.length; slot++)
        {
            if (BuiltinTransport.SESSION_REVOKING == sessionState[slot])
            {
                finishRevoke(slot);
            }
        }
        BuiltinSockets.closeQuietly(listener);
    }
}
