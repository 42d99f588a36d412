package io.orbitkv.transport;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.net.InetSocketAddress;
import java.nio.channels.SocketChannel;
import java.util.Arrays;

import io.orbitkv.ffm.CallState;
import io.orbitkv.ffm.Errno;
import io.orbitkv.ffm.LibC;

/**
 * The requester side of the I/O thread: the peers' streams and the reads in flight over them. A read is cut into
 * chunks that wait on their peer's pending list until a stream has room, the least loaded stream first; responses
 * come back in request order per stream and land at the read's local address. A generation per read slot makes the
 * chunks of an ended read stale: their bytes go to a scratch buffer and their responses change nothing.
 *
 * <p>Every piece of payload a {@code recv} lands is added to its chunk's CRC32C right away, while the bytes are still
 * in this core's cache; a finished chunk's sum is shifted into its read's sum by the bytes that follow the chunk
 * ({@link Crc32cCombine#shift}), so chunks may finish in any order over the streams. A read that completes OK carries
 * the CRC32C of its bytes as they landed, and its owner need not read them again.
 */
final class BuiltinRequester
{
    private static final int SCRATCH_BYTES = 64 * 1024;

    private final BuiltinIoLoop loop;
    private final BuiltinTransport owner;
    private final BuiltinTransport.Context context;
    private final BuiltinHandshake handshake;
    private final BuiltinTransportStats stats;
    private final BuiltinSockets sockets;
    private final CallState state;
    private final long scratchAddress;
    private final Arena arena;

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

    private final int[] peerGeneration;
    private final InetSocketAddress[] peerAddress;
    private final boolean[] peerOpen;
    private final int[] peerPendingHead;
    private final int[] peerPendingTail;
    private final BuiltinStream[] streams;
    private final int streamsPerPeer;

    BuiltinRequester(
        final BuiltinIoLoop loop,
        final BuiltinTransport owner,
        final Arena arena,
        final BuiltinSockets sockets)
    {
        this.loop = loop;
        this.arena = arena;
        this.owner = owner;
        this.context = owner.context;
        this.handshake = null == context.handshakeKey() ? null :
            new BuiltinHandshake(context.handshakeKey(), context.identityMsb(), context.identityLsb());
        this.stats = owner.stats;
        this.sockets = sockets;
        this.state = sockets.state;
        scratchAddress = arena.allocate(SCRATCH_BYTES, 64).address();

        final int maxReads = context.maxReadsInFlight();
        final int maxPeers = context.maxPeers();
        streamsPerPeer = context.streamsPerPeer();

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
        streams = new BuiltinStream[maxPeers * streamsPerPeer];
        for (int i = 0; i < streams.length; i++)
        {
            streams[i] = new BuiltinStream(arena, i, i / streamsPerPeer, context.maxChunksPerStream());
        }
    }

    void openPeer(final int peerSlot, final int connectIndex)
    {
        peerGeneration[peerSlot] = owner.peers.connectGeneration[connectIndex];
        peerAddress[peerSlot] = owner.peers.connectAddress[connectIndex];
        peerOpen[peerSlot] = loop.isRunning();
        for (int i = 0; i < streamsPerPeer; i++)
        {
            connect(streams[peerSlot * streamsPerPeer + i]);
        }
    }

    void closePeer(final int peerSlot)
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

    void startRead(final int slot)
    {
        final int handle = owner.readPeer[slot];
        final int peerSlot = BuiltinPeers.slotOf(handle);
        readLive[slot] = true;
        readBytesDone[slot] = 0;
        readBytesDispatched[slot] = 0;
        owner.readCrc32c[slot] = 0;
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

        if (!loop.isRunning() || !peerOpen[peerSlot] ||
            peerGeneration[peerSlot] != BuiltinPeers.generationOf(handle))
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
            BuiltinStream best = null;
            boolean anyOpen = false;
            for (int i = first; i < first + streamsPerPeer; i++)
            {
                final BuiltinStream stream = streams[i];
                if (BuiltinStream.CLOSED == stream.state)
                {
                    connect(stream);
                }
                if (BuiltinStream.CLOSED != stream.state)
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
            final BuiltinStream stream = streams[i];
            if (stream.dirty)
            {
                stream.dirty = false;
                if (BuiltinStream.CONNECTED == stream.state)
                {
                    flush(stream);
                }
            }
        }
    }

    private void connect(final BuiltinStream stream)
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
            final int fd = sockets.configure(channel);
            if (fd < 0)
            {
                throw new IOException("no descriptor");
            }
            final boolean connected = channel.connect(address);
            if (!sockets.add(fd, BuiltinSockets.CONNECTION_EVENTS, BuiltinSockets.KIND_STREAM,
                stream.incarnation + 1, stream.index))
            {
                throw new IOException("epoll_ctl failed: " + Errno.describe(state.errno()));
            }
            if (null != context.tls())
            {
                if (null == stream.tls)
                {
                    // About 250 KiB of buffers, made when the stream first connects and kept for its reconnects.
                    stream.tls = new BuiltinTls(arena, context.tls(), stats);
                }
                stream.tls.open(context.tls().engine(true));
            }
            stream.open(channel, fd, connected ? BuiltinStream.CONNECTED : BuiltinStream.CONNECTING, handshake);
            if (connected)
            {
                flush(stream);
            }
        }
        catch (final IOException | RuntimeException ex)
        {
            stats.increment(BuiltinTransportStats.STREAMS_LOST);
            BuiltinSockets.closeQuietly(channel);
        }
    }

    private void service(final BuiltinStream stream, final int flags)
    {
        if (BuiltinStream.CONNECTING == stream.state)
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
            stream.state = BuiltinStream.CONNECTED;
        }
        if (BuiltinStream.CONNECTED != stream.state)
        {
            return;
        }
        if (null != stream.tls && !stream.tls.handshakeDone())
        {
            // The TLS handshake first, on its own: the hello and requests go once it is done.
            final int outcome = stream.tls.handshake(state, stream.fd);
            if (outcome < 0)
            {
                failStream(stream, TransportStatus.FAILED);
                dispatchAfterLoss(stream.peerSlot);
                return;
            }
            if (0 == outcome)
            {
                return;
            }
        }

        if (!flush(stream))
        {
            dispatchAfterLoss(stream.peerSlot);
            return;
        }
        if (stream.awaitingChallenge)
        {
            final int outcome = receiveChallenge(stream);
            if (outcome < 0)
            {
                stats.increment(BuiltinTransportStats.HANDSHAKES_FAILED);
                failStream(stream, TransportStatus.FAILED);
                dispatchAfterLoss(stream.peerSlot);
                return;
            }
            if (0 == outcome)
            {
                return;
            }
            stats.increment(BuiltinTransportStats.HANDSHAKES_PROVED);
            if (!flush(stream))
            {
                dispatchAfterLoss(stream.peerSlot);
                return;
            }
        }
        if (0 == stream.count)
        {
            if (0 != (flags & BuiltinSockets.CLOSING_EVENTS))
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
    private boolean flush(final BuiltinStream stream)
    {
        while (stream.sendStart < stream.sendEnd)
        {
            final int end = Math.min(stream.sendEnd, stream.sendLimit);
            if (stream.sendStart >= end)
            {
                // The hello went; the proof and the requests behind it wait for the source's challenge.
                return true;
            }
            final long sent = null == stream.tls ?
                LibC.send(state, stream.fd, stream.sendAddress + stream.sendStart, end - stream.sendStart,
                    LibC.MSG_NOSIGNAL) :
                stream.tls.send(state, stream.fd, stream.sendAddress + stream.sendStart, end - stream.sendStart);
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
     * Read the source's challenge and, when its MAC verifies, write the proof in front of the queued requests.
     *
     * @return 1 when the handshake is done, 0 when the challenge is not whole yet, -1 when it failed.
     */
    private int receiveChallenge(final BuiltinStream stream)
    {
        while (stream.challengeFilled < BuiltinHandshake.CHALLENGE_BYTES)
        {
            final long received = recv(stream, stream.challenge.address() + stream.challengeFilled,
                BuiltinHandshake.CHALLENGE_BYTES - stream.challengeFilled);
            if (received > 0)
            {
                stream.challengeFilled += (int)received;
                continue;
            }
            if (0 == received)
            {
                return -1;
            }
            final int errno = state.errno();
            if (Errno.EAGAIN == errno)
            {
                return 0;
            }
            if (Errno.EINTR != errno)
            {
                return -1;
            }
        }
        if (!handshake.answer(stream.challenge, stream.nonce, stream.send, stream.proofAt))
        {
            return -1;
        }
        stream.awaitingChallenge = false;
        stream.sendLimit = Integer.MAX_VALUE;
        stream.proofAt = -1;
        return 1;
    }

    /**
     * Receive responses until the socket is empty or no request is outstanding.
     *
     * @return false when the stream failed and was closed.
     */
    private boolean receive(final BuiltinStream stream)
    {
        while (stream.count > 0)
        {
            final int head = stream.head;
            final long received;
            if (!stream.inPayload)
            {
                received = recv(stream, stream.headerAddress + stream.headerFilled,
                    BuiltinWire.RESPONSE_BYTES - stream.headerFilled);
                if (received > 0)
                {
                    stream.headerFilled += (int)received;
                    if (stream.headerFilled == BuiltinWire.RESPONSE_BYTES && !acceptHeader(stream, head))
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
                received = recv(stream, target, live ? remaining : Math.min(remaining, SCRATCH_BYTES));
                if (received > 0)
                {
                    if (live)
                    {
                        owner.readWindows[read].update(stream.payloadCrc, target, received);
                    }
                    stream.payloadReceived += (int)received;
                    if (stream.payloadReceived == stream.chunkLength[head])
                    {
                        final int length = stream.chunkLength[head];
                        final int chunkEnd = stream.chunkOffset[head] + length;
                        stream.inPayload = false;
                        stream.pop();
                        if (live)
                        {
                            owner.readCrc32c[read] ^= Crc32cCombine.shift(
                                (int)stream.payloadCrc.getValue(), owner.readLength[read] - chunkEnd);
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

    private long recv(final BuiltinStream stream, final long address, final long length)
    {
        return null == stream.tls ?
            LibC.recv(state, stream.fd, address, length, 0) : stream.tls.recv(state, stream.fd, address, length);
    }

    private boolean acceptHeader(final BuiltinStream stream, final int head)
    {
        stream.headerFilled = 0;
        final long requestId = BuiltinWire.responseRequestId(stream.header);
        final int status = BuiltinWire.responseStatus(stream.header);
        final int length = BuiltinWire.responseLength(stream.header);
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
            stream.payloadCrc.reset();
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

    private void failStream(final BuiltinStream stream, final int status)
    {
        if (BuiltinStream.CLOSED == stream.state)
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
        sockets.remove(stream.fd);
        BuiltinSockets.closeQuietly(stream.channel);
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
        loop.queueCompletion(BuiltinHandOver.completion(BuiltinHandOver.EVENT_READ, status, read, bytes));
    }

    private void unlinkPending(final int read)
    {
        final int peerSlot = BuiltinPeers.slotOf(owner.readPeer[read]);
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

    void expireReads(final long nowNs)
    {
        while (-1 != activeHead && owner.readDeadlineNs[activeHead] - nowNs <= 0)
        {
            complete(activeHead, TransportStatus.TIMEOUT);
        }
    }

    /**
     * Called for an event of the stream at {@code index}; ignored when the stream was closed and reopened since the
     * event's incarnation (an event of a connection closed earlier in the same batch).
     */
    void service(final int index, final int incarnation, final int flags)
    {
        final BuiltinStream stream = streams[index];
        if (stream.incarnation == incarnation)
        {
            service(stream, flags);
        }
    }

    void fail(final int index)
    {
        failStream(streams[index], TransportStatus.FAILED);
    }

    /**
     * @return true while some read is in flight (it has a deadline).
     */
    boolean hasActiveReads()
    {
        return -1 != activeHead;
    }

    /**
     * @return the deadline of the oldest read in flight; meaningful only while {@link #hasActiveReads()}.
     */
    long earliestReadDeadlineNs()
    {
        return owner.readDeadlineNs[activeHead];
    }

    /**
     * End every read CLOSED and close every stream.
     */
    void shutdown()
    {
        while (-1 != activeHead)
        {
            complete(activeHead, TransportStatus.CLOSED);
        }
        for (final BuiltinStream stream : streams)
        {
            failStream(stream, TransportStatus.CLOSED);
        }
    }
}
