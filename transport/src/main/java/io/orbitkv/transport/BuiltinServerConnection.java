package io.orbitkv.transport;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.SocketChannel;

import io.orbitkv.ffm.Iovec;
import io.orbitkv.ffm.MsgHdr;

/**
 * One connection a source serves: the requests received and not yet answered, and the response being sent (its
 * header and payload gathered into one {@code sendmsg}). Owned by the I/O thread's {@link BuiltinSource}.
 */
final class BuiltinServerConnection
{
    static final int INPUT_BYTES = 4096;

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
    /** The challenge went out; the requester's proof is awaited. */
    boolean awaitingProof;
    final MemorySegment challenge;
    final byte[] expectedProof = new byte[BuiltinHandshake.PROOF_BYTES];
    boolean responding;
    int responseSession = -1;
    int openPosition;
    long deadlineNs;
    boolean progressed;
    long payloadAddress;
    int payloadLength;
    long sent;
    /** The connection's TLS, or null on a plain transport. */
    final BuiltinTls tls;

    BuiltinServerConnection(final Arena arena, final int index, final BuiltinTls tls)
    {
        this.tls = tls;
        this.index = index;
        in = arena.allocate(INPUT_BYTES, 64);
        inAddress = in.address();
        header = arena.allocate(BuiltinWire.RESPONSE_BYTES, 64);
        challenge = arena.allocate(BuiltinHandshake.CHALLENGE_BYTES, 64);
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
        awaitingProof = false;
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
        vector.set(ValueLayout.JAVA_LONG, Iovec.IOV_LEN$OFFSET, BuiltinWire.RESPONSE_BYTES - sent);
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
