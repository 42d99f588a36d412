package io.orbitkv.transport;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLException;

import io.orbitkv.ffm.CallState;
import io.orbitkv.ffm.Errno;
import io.orbitkv.ffm.LibC;

/**
 * One TLS connection of the built-in transport: {@link #send}, {@link #sendTwo} and {@link #recv} behave like libc's
 * on a non-blocking socket (bytes moved, 0 at end of stream, or -1 with {@code errno} in the call state; EAGAIN when
 * the socket has no room or no data), so the requester and the source run the same exchange over either.
 * <p>
 * It copies: {@code send} copies the plaintext into a per-connection buffer, the engine encrypts it into the net
 * buffer, and that goes out in one {@code send}; {@code recv} reads the socket into the net buffer, the engine decrypts
 * into the plaintext buffer, and the plaintext is copied to the caller's address (where the requester sums it, as on
 * the plain path). The handshake runs inside the first calls: until it is done both return EAGAIN, and each call moves
 * it on with what the socket has.
 * <p>
 * A send is all or nothing for its plaintext: bytes the engine encrypted but the socket did not take are counted as
 * sent only once they all left, in the next call (which retries with the same plaintext, as callers of a failed
 * {@code send} do). So a caller that saw EAGAIN calls again on the next writable event, and nothing is left behind in
 * this buffer unseen. A {@code recv} returns EAGAIN only when the socket is empty and no whole record is buffered, so an
 * edge-triggered caller that reads until EAGAIN misses nothing.
 * <p>
 * Owned by the I/O thread; one per stream or served connection slot, with its buffers kept across reconnects.
 */
final class BuiltinTls
{
    /** Plaintext taken into one send: four full records. */
    static final int SEND_PLAIN_BYTES = 64 * 1024;
    /** All memory, to copy from and to the absolute addresses callers pass. */
    private static final MemorySegment ALL = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);
    private static final ByteBuffer EMPTY = ByteBuffer.allocateDirect(0);

    private final BuiltinTransportStats stats;
    private final ByteBuffer plainOut;
    private final MemorySegment plainOutSegment;
    private final ByteBuffer netOut;
    private final long netOutAddress;
    private final ByteBuffer netIn;
    private final long netInAddress;
    private final ByteBuffer plainIn;
    private final MemorySegment plainInSegment;
    private SSLEngine engine;
    private boolean handshakeDone;
    private boolean failed;
    /** Plaintext encrypted into {@link #netOut} and not yet reported sent. */
    private int pendingPlain;
    /** Application bytes arrived on this connection (a TLS failure before any is the peer refusing the handshake). */
    private boolean receivedPlain;
    /** Where the unread plaintext in {@link #plainIn} starts (it ends at the buffer's position). */
    private int plainInStart;

    BuiltinTls(final Arena arena, final TransportTls tls, final BuiltinTransportStats stats)
    {
        this.stats = stats;
        final int packet = tls.packetBytes();
        final int records = (SEND_PLAIN_BYTES + tls.applicationBytes() - 1) / tls.applicationBytes() + 1;
        plainOutSegment = arena.allocate(SEND_PLAIN_BYTES, 64);
        plainOut = plainOutSegment.asByteBuffer();
        final MemorySegment netOutSegment = arena.allocate((long)records * packet, 64);
        netOut = netOutSegment.asByteBuffer();
        netOutAddress = netOutSegment.address();
        final MemorySegment netInSegment = arena.allocate((long)records * packet, 64);
        netIn = netInSegment.asByteBuffer();
        netInAddress = netInSegment.address();
        plainInSegment = arena.allocate(tls.applicationBytes(), 64);
        plainIn = plainInSegment.asByteBuffer();
    }

    /**
     * Start over on a new connection with a new engine.
     */
    void open(final SSLEngine engine)
    {
        this.engine = engine;
        handshakeDone = false;
        failed = false;
        receivedPlain = false;
        pendingPlain = 0;
        plainInStart = 0;
        plainOut.clear();
        netOut.clear().flip();
        netIn.clear().flip();
        plainIn.clear();
        try
        {
            engine.beginHandshake();
        }
        catch (final SSLException ex)
        {
            failed = true;
            stats.increment(BuiltinTransportStats.TLS_HANDSHAKES_FAILED);
        }
    }

    boolean handshakeDone()
    {
        return handshakeDone;
    }

    /**
     * Move the handshake on with what the socket has.
     *
     * @return 1 when it is done, 0 when it waits for the socket, -1 when it failed (counted).
     */
    int handshake(final CallState state, final int fd)
    {
        if (ready(state, fd))
        {
            return 1;
        }
        return failed ? -1 : 0;
    }

    /**
     * Like {@code send(fd, address, length, MSG_NOSIGNAL)}.
     */
    long send(final CallState state, final int fd, final long address, final long length)
    {
        return sendTwo(state, fd, address, length, 0, 0);
    }

    /**
     * Like a {@code sendmsg} of two pieces, {@code [first, +firstLength)} then {@code [second, +secondLength)}.
     */
    long sendTwo(
        final CallState state,
        final int fd,
        final long first,
        final long firstLength,
        final long second,
        final long secondLength)
    {
        if (!ready(state, fd))
        {
            return -1;
        }
        if (pendingPlain > 0)
        {
            final int flushed = flush(state, fd);
            if (flushed <= 0)
            {
                return flushed < 0 ? -1 : again(state);
            }
            final int done = pendingPlain;
            pendingPlain = 0;
            return done;
        }
        final int head = (int)Math.min(firstLength, SEND_PLAIN_BYTES);
        final int tail = (int)Math.min(secondLength, SEND_PLAIN_BYTES - head);
        if (0 == head + tail)
        {
            return 0;
        }
        plainOut.clear();
        MemorySegment.copy(ALL, first, plainOutSegment, 0, head);
        if (tail > 0)
        {
            MemorySegment.copy(ALL, second, plainOutSegment, head, tail);
        }
        plainOut.limit(head + tail);
        netOut.clear();
        try
        {
            while (plainOut.hasRemaining())
            {
                final SSLEngineResult result = engine.wrap(plainOut, netOut);
                if (SSLEngineResult.Status.OK != result.getStatus())
                {
                    return broken(state);
                }
            }
        }
        catch (final SSLException ex)
        {
            return broken(state);
        }
        netOut.flip();
        pendingPlain = head + tail;
        final int flushed = flush(state, fd);
        if (flushed <= 0)
        {
            return flushed < 0 ? -1 : again(state);
        }
        pendingPlain = 0;
        return head + tail;
    }

    /**
     * Like {@code recv(fd, address, length, 0)}.
     */
    long recv(final CallState state, final int fd, final long address, final long length)
    {
        if (!ready(state, fd))
        {
            return -1;
        }
        while (true)
        {
            final int buffered = plainIn.position() - plainInStart;
            if (buffered > 0)
            {
                receivedPlain = true;
                final int n = (int)Math.min(buffered, length);
                MemorySegment.copy(plainInSegment, plainInStart, ALL, address, n);
                plainInStart += n;
                if (plainInStart == plainIn.position())
                {
                    plainInStart = 0;
                    plainIn.clear();
                }
                return n;
            }
            final int outcome = unwrapOnce(state, fd);
            if (outcome <= 0)
            {
                return outcome;
            }
        }
    }

    /**
     * Decrypt one record into {@link #plainIn} ({@link #netIn} stays ready to read from between calls), reading the
     * socket when no whole record is buffered.
     *
     * @return 1 when a record was taken (it may have held no application bytes), 0 at end of stream, -1 with errno.
     */
    private int unwrapOnce(final CallState state, final int fd)
    {
        try
        {
            while (true)
            {
                final SSLEngineResult result = engine.unwrap(netIn, plainIn);
                switch (result.getStatus())
                {
                    case OK:
                        if (!afterRecord(state, fd, result))
                        {
                            return -1;
                        }
                        return 1;
                    case BUFFER_UNDERFLOW:
                        netIn.compact();
                        final long received = LibC.recv(state, fd, netInAddress + netIn.position(), netIn.remaining(), 0);
                        if (received > 0)
                        {
                            netIn.position(netIn.position() + (int)received);
                        }
                        netIn.flip();
                        if (received > 0)
                        {
                            continue;
                        }
                        if (0 == received)
                        {
                            return 0;
                        }
                        if (Errno.EINTR == state.errno())
                        {
                            continue;
                        }
                        return -1;
                    case CLOSED:
                        return 0;
                    default:
                        return broken(state);
                }
            }
        }
        catch (final SSLException ex)
        {
            if (handshakeDone && !receivedPlain)
            {
                // In TLS 1.3 a client's handshake is done before the server judged its certificate: the server's
                // refusal arrives as the first record.
                fail(state, fd);
            }
            return broken(state);
        }
    }

    /**
     * After the handshake, a record may still ask for an answer (a key update): send it at once.
     */
    private boolean afterRecord(final CallState state, final int fd, final SSLEngineResult result) throws SSLException
    {
        SSLEngineResult.HandshakeStatus status = result.getHandshakeStatus();
        while (SSLEngineResult.HandshakeStatus.NEED_TASK == status ||
            SSLEngineResult.HandshakeStatus.NEED_WRAP == status)
        {
            if (SSLEngineResult.HandshakeStatus.NEED_TASK == status)
            {
                runTasks();
                status = engine.getHandshakeStatus();
                continue;
            }
            if (0 == pendingPlain && !netOut.hasRemaining())
            {
                netOut.clear();
                status = engine.wrap(EMPTY, netOut).getHandshakeStatus();
                netOut.flip();
                if (flush(state, fd) < 0)
                {
                    return false;
                }
            }
            else
            {
                // Our own records are still leaving; the answer goes with the next send.
                return true;
            }
        }
        return true;
    }

    /**
     * Move the handshake on; true once it is done (errno EAGAIN when it waits for the socket).
     */
    private boolean ready(final CallState state, final int fd)
    {
        if (handshakeDone)
        {
            return true;
        }
        if (failed)
        {
            broken(state);
            return false;
        }
        try
        {
            while (true)
            {
                if (netOut.hasRemaining())
                {
                    final int flushed = flush(state, fd);
                    if (flushed < 0)
                    {
                        return fail(state, fd);
                    }
                    if (0 == flushed)
                    {
                        again(state);
                        return false;
                    }
                }
                switch (engine.getHandshakeStatus())
                {
                    case NEED_WRAP:
                        netOut.clear();
                        final SSLEngineResult wrapped = engine.wrap(EMPTY, netOut);
                        netOut.flip();
                        if (SSLEngineResult.Status.CLOSED == wrapped.getStatus() && !netOut.hasRemaining())
                        {
                            return fail(state, fd);
                        }
                        continue;
                    case NEED_UNWRAP:
                    case NEED_UNWRAP_AGAIN:
                        final int outcome = unwrapOnce(state, fd);
                        if (outcome < 0 && Errno.EAGAIN == state.errno() && !failed)
                        {
                            return false;
                        }
                        if (outcome <= 0)
                        {
                            return fail(state, fd);
                        }
                        continue;
                    case NEED_TASK:
                        runTasks();
                        continue;
                    default:
                        handshakeDone = true;
                        stats.increment(BuiltinTransportStats.TLS_HANDSHAKES_DONE);
                        return true;
                }
            }
        }
        catch (final SSLException ex)
        {
            return fail(state, fd);
        }
    }

    private boolean fail(final CallState state, final int fd)
    {
        if (!failed)
        {
            failed = true;
            stats.increment(BuiltinTransportStats.TLS_HANDSHAKES_FAILED);
            // Tell the peer why (the engine holds the alert after a failed unwrap), so it counts the failure too.
            try
            {
                netOut.clear();
                engine.wrap(EMPTY, netOut);
                netOut.flip();
                flush(state, fd);
            }
            catch (final SSLException ex)
            {
                // Nothing to tell: the connection closes anyway.
            }
        }
        broken(state);
        return false;
    }

    private void runTasks()
    {
        Runnable task;
        while (null != (task = engine.getDelegatedTask()))
        {
            task.run();
        }
    }

    /**
     * Write what {@link #netOut} holds.
     *
     * @return 1 when it all left, 0 when the socket is full (errno EAGAIN), -1 on a failure (errno set).
     */
    private int flush(final CallState state, final int fd)
    {
        while (netOut.hasRemaining())
        {
            final long sent = LibC.send(state, fd, netOutAddress + netOut.position(), netOut.remaining(),
                LibC.MSG_NOSIGNAL);
            if (sent > 0)
            {
                netOut.position(netOut.position() + (int)sent);
                continue;
            }
            final int errno = state.errno();
            if (sent < 0 && Errno.EINTR == errno)
            {
                continue;
            }
            if (sent < 0 && Errno.EAGAIN == errno)
            {
                return 0;
            }
            return -1;
        }
        return 1;
    }

    private static long again(final CallState state)
    {
        state.errno(Errno.EAGAIN);
        return -1;
    }

    private static int broken(final CallState state)
    {
        state.errno(Errno.EPROTO);
        return -1;
    }
}
