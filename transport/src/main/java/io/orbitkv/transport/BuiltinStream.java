package io.orbitkv.transport;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.SocketChannel;
import java.util.zip.CRC32C;

/**
 * One connection of a requester to a peer: its requests not yet sent, and the chunks whose responses it awaits in
 * request order. Owned by the I/O thread's {@link BuiltinRequester}.
 */
final class BuiltinStream
{
    static final int CLOSED = 0;
    static final int CONNECTING = 1;
    static final int CONNECTED = 2;

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
    int state = CLOSED;
    int incarnation;
    SocketChannel channel;
    int fd = -1;
    int sendStart;
    int sendEnd;
    int headerFilled;
    boolean inPayload;
    int payloadReceived;
    /** The running sum of the payload of the chunk at the head, of the bytes received so far. */
    final CRC32C payloadCrc = new CRC32C();
    int head;
    int count;
    long outstandingBytes;
    long nextSequence;
    int completedChunks;
    boolean dirty;
    /** Bytes of {@link #send} that may go out: the hello only, until the source's challenge verified. */
    int sendLimit = Integer.MAX_VALUE;
    /** Where the proof goes in {@link #send} once the challenge verified, or -1. */
    int proofAt = -1;
    /** The challenge is awaited (requests wait behind the proof). */
    boolean awaitingChallenge;
    int challengeFilled;
    final MemorySegment challenge;
    final byte[] nonce = new byte[BuiltinHandshake.NONCE_BYTES];
    /** The connection's TLS (made at the first connect, then kept), or null on a plain transport. */
    BuiltinTls tls;

    BuiltinStream(final Arena arena, final int index, final int peerSlot, final int capacity)
    {
        this.index = index;
        this.peerSlot = peerSlot;
        this.capacity = capacity;
        send = arena.allocate(
            BuiltinHandshake.HELLO_BYTES + BuiltinHandshake.PROOF_BYTES + (long)capacity * BuiltinWire.REQUEST_BYTES, 64);
        challenge = arena.allocate(BuiltinHandshake.CHALLENGE_BYTES, 64);
        sendAddress = send.address();
        header = arena.allocate(BuiltinWire.RESPONSE_BYTES, 64);
        headerAddress = header.address();
        chunkRead = new int[capacity];
        chunkGeneration = new int[capacity];
        chunkOffset = new int[capacity];
        chunkLength = new int[capacity];
        chunkSequence = new long[capacity];
    }

    void open(final SocketChannel channel, final int fd, final int state, final BuiltinHandshake handshake)
    {
        incarnation = (incarnation + 1) & 0xFFFFFF;
        this.channel = channel;
        this.fd = fd;
        this.state = state;
        sendStart = 0;
        if (null == handshake)
        {
            BuiltinWire.writeHello(send, 0);
            sendEnd = BuiltinWire.HELLO_BYTES;
            sendLimit = Integer.MAX_VALUE;
            proofAt = -1;
            awaitingChallenge = false;
        }
        else
        {
            // The hello goes now; the proof's place is kept after it, and requests queue behind it.
            handshake.writeHello(send, 0, nonce);
            sendLimit = BuiltinHandshake.HELLO_BYTES;
            proofAt = BuiltinHandshake.HELLO_BYTES;
            sendEnd = proofAt + BuiltinHandshake.PROOF_BYTES;
            awaitingChallenge = true;
            challengeFilled = 0;
        }
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

        if (sendEnd + BuiltinWire.REQUEST_BYTES > send.byteSize())
        {
            final int unsent = sendEnd - sendStart;
            MemorySegment.copy(send, sendStart, send, 0, unsent);
            if (proofAt >= 0)
            {
                proofAt -= sendStart;
                sendLimit -= sendStart;
            }
            sendStart = 0;
            sendEnd = unsent;
        }
        BuiltinWire.writeReadRequest(send, sendEnd, length, sequence, sessionId, token, address);
        sendEnd += BuiltinWire.REQUEST_BYTES;
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
        state = CLOSED;
        channel = null;
        fd = -1;
        count = 0;
        head = 0;
        outstandingBytes = 0;
        sendStart = 0;
        sendEnd = 0;
        inPayload = false;
        headerFilled = 0;
        sendLimit = Integer.MAX_VALUE;
        proofAt = -1;
        awaitingChallenge = false;
        challengeFilled = 0;
    }
}
