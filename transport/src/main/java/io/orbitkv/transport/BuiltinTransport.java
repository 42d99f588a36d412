package io.orbitkv.transport;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

import io.orbitkv.ffm.ChannelDescriptors;

/**
 * OrbitKV's own transport for hosts without Mooncake TE: TCP between Managers, the source sending the bytes itself
 * and serving only the ranges of live sessions it exported.
 *
 * <h2>Threads</h2>
 * Every public method is called on the owner's thread. One I/O thread, {@value #THREAD_NAME}, owns the sockets and
 * blocks in {@code epoll_pwait2} when it has nothing to do (an idle transport costs no CPU). The two threads talk
 * through two single-producer single-consumer rings of longs: commands (read, export, revoke, connect, close peer)
 * one way, completions (read ended, session revoked) the other ({@link BuiltinHandOver}). A command names a slot of a
 * table the owner filled before publishing it; the I/O thread reads the slot after taking the command. Tables are
 * sized by the {@link Context}, so the read path allocates nothing. The owner wakes the I/O thread through an
 * eventfd only when the I/O thread said it was about to sleep.
 *
 * <h2>Connections</h2>
 * A requester keeps at most {@link Context#maxPeers} peers ({@link #MAX_PEERS} at most), evicting the least recently
 * used one; each peer has {@link Context#streamsPerPeer} long-lived TCP connections ("streams"). A read longer than
 * {@link Context#chunkBytes} is cut into chunks spread over the streams, the least loaded first. Bytes move between
 * sockets and memory with {@code recv}/{@code sendmsg} on the raw descriptor at absolute addresses: no user-space
 * copy on either side.
 *
 * <h2>Wire protocol</h2>
 * Little-endian, per stream, requester to source:
 * <pre>
 * hello    (8 bytes, once):  int magic 0x42564B4F ("OKVB"), short version 1, short flags 0
 * request  (40 bytes):       int type 1, int length, long requestId, long sessionId, long token, long address
 * </pre>
 * source to requester, one response per request, in request order:
 * <pre>
 * response (16 bytes):       long requestId, int status, int length; then length payload bytes when status is OK
 * </pre>
 * The source answers {@link TransportStatus#REJECTED} with no payload unless {@code [address, address + length)}
 * lies inside one range exported under that live session with that token. A wrong hello, an unknown frame type or
 * a length outside {@code 1..maxRequestBytes} is counted and closes the connection; a requester closes a stream
 * whose response does not match the request it expects next. See docs/transport-builtin.md.
 *
 * <h2>Revocation</h2>
 * {@link #revoke} stops new sends of the session at once; a send already started finishes (or is cut when its
 * connection closes or makes no progress for {@link Context#sendStallTimeoutNs}), and
 * {@link TransportListener#onRevoked} is delivered when none is left.
 *
 * <h2>Parts</h2>
 * This class is the owner's side: the read and session tables the I/O thread reads, {@link RegisteredMemory},
 * {@link BuiltinPeers} and the {@link BuiltinHandOver} to the I/O thread ({@link BuiltinIoLoop}, with its
 * {@link BuiltinSource} and {@link BuiltinRequester} sides and the frames of {@link BuiltinWire}). The file passes
 * 700 lines only by its nested {@link Context}, a settings table nested as callers name it
 * ({@code BuiltinTransport.Context}).
 */
public final class BuiltinTransport implements Transport
{
    /** The name of the I/O thread. */
    public static final String THREAD_NAME = "orbitkv-transport";

    /** The most peers a requester keeps connections to (design: 64 source channels per client). */
    public static final int MAX_PEERS = 64;

    /** The most streams (connections) per peer. */
    public static final int MAX_STREAMS_PER_PEER = 16;

    /** The most memory ranges registered at once. */
    public static final int MAX_REGISTERED_RANGES = 256;

    static final int SESSION_FREE = 0;
    static final int SESSION_EXPORTED = 1;
    static final int SESSION_REVOKING = 2;

    final Context context;
    final BuiltinTransportStats stats = new BuiltinTransportStats();
    final BuiltinHandOver handOver;
    final BuiltinPeers peers;

    // Read table: filled by the owner before CMD_READ, read by the I/O thread after it.
    final long[] readRemoteAddress;
    final long[] readLocalAddress;
    final long[] readSessionId;
    final long[] readToken;
    final long[] readDeadlineNs;
    final int[] readLength;
    final int[] readPeer;
    final RegisteredMemory.ReadWindows[] readWindows;
    // Written by the I/O thread before a read's completion, read by the owner after taking it.
    final int[] readCrc32c;
    private final long[] readRequestId;
    private final SlotPool freeReads;
    private final LongRing localCompletions;

    // Session table: filled by the owner before CMD_EXPORT, read by the I/O thread after it.
    final long[] sessionId;
    final long[] sessionToken;
    final long[][] sessionAddresses;
    final int[][] sessionLengths;
    final int[] sessionRangeCount;
    private final int[] sessionState;
    private final int[] sessionRevokesOwed;
    private final SlotPool freeSessions;
    private final LongIntMap sessionsById;
    private long[] unknownRevokes = new long[16];
    private int unknownRevokeHead;
    private int unknownRevokeCount;

    private final RegisteredMemory registered = new RegisteredMemory(stats);
    private final BuiltinIoLoop ioLoop;
    private final Thread ioThread;
    private final String localEndpoint;
    private boolean closed;

    /**
     * Bind the listening socket and start the I/O thread.
     *
     * @param context settings, concluded here.
     * @throws TransportException when the socket cannot be bound or descriptors are unavailable.
     */
    public BuiltinTransport(final Context context)
    {
        this.context = context.conclude();
        if (!ChannelDescriptors.available())
        {
            throw new TransportException(
                "the built-in transport needs --add-exports java.base/sun.nio.ch=ALL-UNNAMED to reach socket descriptors");
        }

        final int maxReads = context.maxReadsInFlight();
        final int maxSessions = context.maxSessions();
        final int maxPeers = context.maxPeers();
        readRemoteAddress = new long[maxReads];
        readLocalAddress = new long[maxReads];
        readSessionId = new long[maxReads];
        readToken = new long[maxReads];
        readDeadlineNs = new long[maxReads];
        readLength = new int[maxReads];
        readPeer = new int[maxReads];
        readWindows = new RegisteredMemory.ReadWindows[maxReads];
        readCrc32c = new int[maxReads];
        readRequestId = new long[maxReads];
        freeReads = new SlotPool(maxReads);
        localCompletions = new LongRing(maxReads);

        sessionId = new long[maxSessions];
        sessionToken = new long[maxSessions];
        sessionAddresses = new long[maxSessions][];
        sessionLengths = new int[maxSessions][];
        sessionRangeCount = new int[maxSessions];
        sessionState = new int[maxSessions];
        sessionRevokesOwed = new int[maxSessions];
        freeSessions = new SlotPool(maxSessions);
        for (int i = 0; i < maxSessions; i++)
        {
            sessionAddresses[i] = new long[4];
            sessionLengths[i] = new int[4];
        }
        sessionsById = new LongIntMap(maxSessions);

        // Every read and session slot has at most one command and one completion outstanding; peers add a few.
        handOver = new BuiltinHandOver(maxReads + 2 * maxSessions + 4 * maxPeers + 64, maxReads + maxSessions + 64);
        peers = new BuiltinPeers(maxPeers, Math.min(handOver.commands.capacity() + 1, 1 << 24));

        try
        {
            ioLoop = new BuiltinIoLoop(this);
        }
        catch (final IOException | RuntimeException ex)
        {
            handOver.close();
            throw new TransportException("cannot start the built-in transport on " + context.bindHost() + ":" +
                context.port() + ": " + ex.getMessage(), ex);
        }
        localEndpoint = ioLoop.localEndpoint();
        ioThread = new Thread(ioLoop, THREAD_NAME);
        ioThread.setDaemon(true);
        ioThread.start();
    }

    /**
     * @return the transport's counters.
     */
    public BuiltinTransportStats stats()
    {
        return stats;
    }

    /**
     * @return the settings in use.
     */
    public Context context()
    {
        return context;
    }

    @Override
    public String name()
    {
        return "builtin";
    }

    @Override
    public String localEndpoint()
    {
        return localEndpoint;
    }

    @Override
    public boolean canRevoke()
    {
        return true;
    }

    @Override
    public void registerMemory(final long address, final long length)
    {
        registered.register(address, length);
    }

    @Override
    public void unregisterMemory(final long address)
    {
        registered.unregister(address);
    }

    @Override
    public boolean export(final long sessionId, final long token, final long[] addresses, final int[] lengths, final int count)
    {
        if (count <= 0 || count > context.maxRangesPerSession() || addresses.length < count || lengths.length < count)
        {
            stats.increment(BuiltinTransportStats.INVALID_RANGES);
            throw new TransportException("export of " + count + " ranges, 1.." + context.maxRangesPerSession() + " allowed");
        }
        for (int i = 0; i < count; i++)
        {
            if (lengths[i] <= 0 || !registered.contains(addresses[i], lengths[i]))
            {
                stats.increment(BuiltinTransportStats.INVALID_RANGES);
                throw new TransportException("exported range " + addresses[i] + "+" + lengths[i] +
                    " is not inside registered memory");
            }
        }
        if (closed || 0 == freeSessions.available() || LongIntMap.MISSING != sessionsById.get(sessionId))
        {
            stats.increment(BuiltinTransportStats.EXPORTS_REFUSED);
            return false;
        }

        final int slot = freeSessions.take();
        this.sessionId[slot] = sessionId;
        sessionToken[slot] = token;
        if (sessionAddresses[slot].length < count)
        {
            final int capacity = Integer.highestOneBit(count - 1) << 1;
            sessionAddresses[slot] = new long[capacity];
            sessionLengths[slot] = new int[capacity];
        }
        System.arraycopy(addresses, 0, sessionAddresses[slot], 0, count);
        System.arraycopy(lengths, 0, sessionLengths[slot], 0, count);
        sessionRangeCount[slot] = count;
        sessionState[slot] = SESSION_EXPORTED;
        sessionRevokesOwed[slot] = 0;
        sessionsById.put(sessionId, slot);
        offerCommand(BuiltinHandOver.command(BuiltinHandOver.CMD_EXPORT, 0, slot));
        return true;
    }

    @Override
    public void revoke(final long sessionId)
    {
        final int slot = sessionsById.get(sessionId);
        if (LongIntMap.MISSING == slot || closed)
        {
            queueUnknownRevoke(sessionId);
        }
        else if (SESSION_REVOKING == sessionState[slot])
        {
            sessionRevokesOwed[slot]++;
        }
        else
        {
            sessionState[slot] = SESSION_REVOKING;
            offerCommand(BuiltinHandOver.command(BuiltinHandOver.CMD_REVOKE, 0, slot));
        }
    }

    @Override
    public int peer(final CharSequence endpoint)
    {
        final int known = peers.find(endpoint);
        if (-1 != known || closed)
        {
            return known;
        }

        final InetSocketAddress address = BuiltinPeers.parseEndpoint(endpoint);
        if (null == address)
        {
            stats.increment(BuiltinTransportStats.PEERS_REFUSED);
            return -1;
        }

        int slot = peers.freeSlot();
        if (-1 == slot)
        {
            stats.increment(BuiltinTransportStats.PEERS_EVICTED);
            slot = peers.leastRecentlyUsed();
            closePeer(peers.handle(slot));
        }
        final int connectIndex = peers.open(slot, endpoint, address);
        offerCommand(BuiltinHandOver.command(BuiltinHandOver.CMD_CONNECT, connectIndex, slot));
        return peers.handle(slot);
    }

    /**
     * @return the number of peers with live handles, at most {@link Context#maxPeers}.
     */
    public int peerCount()
    {
        return peers.count();
    }

    @Override
    public void closePeer(final int peer)
    {
        final int slot = peers.liveSlotOf(peer);
        if (slot < 0)
        {
            return;
        }
        peers.close(slot);
        offerCommand(BuiltinHandOver.command(BuiltinHandOver.CMD_CLOSE_PEER, peers.generation(slot), slot));
    }

    @Override
    public boolean submitRead(
        final int peer,
        final long sessionId,
        final long token,
        final long remoteAddress,
        final long localAddress,
        final int length,
        final long requestId)
    {
        final int slot = freeReads.take();
        if (SlotPool.NONE == slot)
        {
            stats.increment(BuiltinTransportStats.READS_BACK_PRESSURED);
            return false;
        }

        readRequestId[slot] = requestId;
        stats.increment(BuiltinTransportStats.READS_SUBMITTED);

        final int peerSlot = peers.liveSlotOf(peer);
        if (closed || peerSlot < 0)
        {
            stats.increment(BuiltinTransportStats.READS_REFUSED_LOCALLY);
            localCompletions.offer(BuiltinHandOver.completion(BuiltinHandOver.EVENT_READ, TransportStatus.CLOSED, slot, 0));
            return true;
        }
        final RegisteredMemory.ReadWindows windows = length > 0 ? registered.windowsOf(localAddress, length) : null;
        if (null == windows)
        {
            stats.increment(BuiltinTransportStats.READS_REFUSED_LOCALLY);
            localCompletions.offer(
                BuiltinHandOver.completion(BuiltinHandOver.EVENT_READ, TransportStatus.REJECTED, slot, 0));
            return true;
        }

        peers.touch(peerSlot);
        readPeer[slot] = peer;
        readSessionId[slot] = sessionId;
        readToken[slot] = token;
        readRemoteAddress[slot] = remoteAddress;
        readLocalAddress[slot] = localAddress;
        readWindows[slot] = windows;
        readLength[slot] = length;
        readDeadlineNs[slot] = System.nanoTime() + context.readTimeoutNs();
        if (!handOver.offerRead(BuiltinHandOver.command(BuiltinHandOver.CMD_READ, 0, slot)))
        {
            freeReads.release(slot);
            stats.increment(BuiltinTransportStats.READS_BACK_PRESSURED);
            return false;
        }
        return true;
    }

    @Override
    public int poll(final TransportListener listener, final int limit)
    {
        int delivered = 0;
        while (delivered < limit && !localCompletions.isEmpty())
        {
            deliver(listener, localCompletions.take());
            delivered++;
        }
        final LongRing completions = handOver.completions;
        while (delivered < limit && !completions.isEmpty())
        {
            deliver(listener, completions.take());
            delivered++;
        }
        while (delivered < limit && unknownRevokeCount > 0)
        {
            final long id = unknownRevokes[unknownRevokeHead];
            unknownRevokeHead = (unknownRevokeHead + 1) & (unknownRevokes.length - 1);
            unknownRevokeCount--;
            listener.onRevoked(id);
            delivered++;
        }
        return delivered;
    }

    @Override
    public int readsInFlight()
    {
        return freeReads.inUse();
    }

    /**
     * @return sessions exported and not yet delivered as revoked.
     */
    public int sessionsHeld()
    {
        return freeSessions.inUse();
    }

    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        ioLoop.stop();
        handOver.wakeToStop();
        boolean interrupted = false;
        while (ioThread.isAlive())
        {
            try
            {
                ioThread.join();
            }
            catch (final InterruptedException ex)
            {
                interrupted = true;
            }
        }
        handOver.close();
        registered.clear();
        // Exported sessions are dropped: the I/O thread delivered onRevoked for those it knew of.
        if (interrupted)
        {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * @return the I/O thread, for tests that watch it idle.
     */
    Thread ioThread()
    {
        return ioThread;
    }

    private void deliver(final TransportListener listener, final long event)
    {
        final int slot = BuiltinHandOver.completionSlot(event);
        if (BuiltinHandOver.EVENT_READ == BuiltinHandOver.completionKind(event))
        {
            final int status = BuiltinHandOver.completionStatus(event);
            final long bytes = BuiltinHandOver.completionBytes(event);
            final long requestId = readRequestId[slot];
            final int crc32c = readCrc32c[slot];
            readWindows[slot] = null;
            freeReads.release(slot);
            stats.increment(statusCounter(status));
            if (TransportStatus.OK == status)
            {
                // Summed by the I/O thread as the bytes landed.
                listener.onReadComplete(requestId, status, bytes, crc32c);
            }
            else
            {
                listener.onReadComplete(requestId, status, bytes);
            }
        }
        else
        {
            final long id = sessionId[slot];
            final int owed = sessionRevokesOwed[slot];
            sessionsById.remove(id);
            sessionState[slot] = SESSION_FREE;
            freeSessions.release(slot);
            for (int i = 0; i <= owed; i++)
            {
                listener.onRevoked(id);
            }
        }
    }

    private static int statusCounter(final int status)
    {
        return switch (status)
        {
            case TransportStatus.OK -> BuiltinTransportStats.READS_OK;
            case TransportStatus.REJECTED -> BuiltinTransportStats.READS_REJECTED;
            case TransportStatus.TIMEOUT -> BuiltinTransportStats.READS_TIMED_OUT;
            case TransportStatus.CLOSED -> BuiltinTransportStats.READS_CLOSED;
            default -> BuiltinTransportStats.READS_FAILED;
        };
    }

    private void queueUnknownRevoke(final long id)
    {
        if (unknownRevokeCount == unknownRevokes.length)
        {
            // Control path: revocations of unknown sessions pile up only while nobody polls.
            final long[] grown = new long[unknownRevokes.length * 2];
            for (int i = 0; i < unknownRevokeCount; i++)
            {
                grown[i] = unknownRevokes[(unknownRevokeHead + i) & (unknownRevokes.length - 1)];
            }
            unknownRevokes = grown;
            unknownRevokeHead = 0;
        }
        unknownRevokes[(unknownRevokeHead + unknownRevokeCount) & (unknownRevokes.length - 1)] = id;
        unknownRevokeCount++;
    }

    private void offerCommand(final long command)
    {
        if (!closed)
        {
            handOver.offerControl(command);
        }
    }

    /**
     * Settings of a {@link BuiltinTransport}; every limit has a default and is checked by {@link #conclude}.
     */
    public static final class Context
    {
        /** Default bind host. */
        public static final String BIND_HOST_DEFAULT = "127.0.0.1";
        /** Default streams per peer. */
        public static final int STREAMS_PER_PEER_DEFAULT = 4;
        /** Default chunk a read is cut into across streams. */
        public static final int CHUNK_BYTES_DEFAULT = 512 * 1024;
        /** Smallest chunk allowed. */
        public static final int CHUNK_BYTES_MIN = 4096;
        /** Default largest request a source serves (a requester's chunk must not exceed the source's limit). */
        public static final int MAX_REQUEST_BYTES_DEFAULT = 16 * 1024 * 1024;
        /** Default reads in flight. */
        public static final int MAX_READS_IN_FLIGHT_DEFAULT = 1024;
        /** Default sessions exported at once (design: 1024 sessions per source). */
        public static final int MAX_SESSIONS_DEFAULT = 1024;
        /** Default ranges in one exported session. */
        public static final int MAX_RANGES_PER_SESSION_DEFAULT = 4096;
        /** Default chunk requests outstanding on one stream. */
        public static final int MAX_CHUNKS_PER_STREAM_DEFAULT = 64;
        /** Default connections a source accepts at once. */
        public static final int MAX_SERVER_CONNECTIONS_DEFAULT = MAX_PEERS * MAX_STREAMS_PER_PEER;
        /** Default read deadline. */
        public static final long READ_TIMEOUT_NS_DEFAULT = TimeUnit.SECONDS.toNanos(5);
        /** Default time a source waits for a new connection's hello. */
        public static final long HELLO_TIMEOUT_NS_DEFAULT = TimeUnit.SECONDS.toNanos(5);
        /** Default time a source's send may make no progress before the connection is cut. */
        public static final long SEND_STALL_TIMEOUT_NS_DEFAULT = TimeUnit.SECONDS.toNanos(5);
        /** Default socket buffer size: 0 leaves the kernel's automatic sizing on. */
        public static final int SOCKET_BUFFER_BYTES_DEFAULT = 0;

        private String bindHost = BIND_HOST_DEFAULT;
        private int port;
        private int streamsPerPeer = STREAMS_PER_PEER_DEFAULT;
        private int chunkBytes = CHUNK_BYTES_DEFAULT;
        private int maxRequestBytes = MAX_REQUEST_BYTES_DEFAULT;
        private int maxPeers = MAX_PEERS;
        private int maxReadsInFlight = MAX_READS_IN_FLIGHT_DEFAULT;
        private int maxSessions = MAX_SESSIONS_DEFAULT;
        private int maxRangesPerSession = MAX_RANGES_PER_SESSION_DEFAULT;
        private int maxChunksPerStream = MAX_CHUNKS_PER_STREAM_DEFAULT;
        private int maxServerConnections = MAX_SERVER_CONNECTIONS_DEFAULT;
        private long readTimeoutNs = READ_TIMEOUT_NS_DEFAULT;
        private long helloTimeoutNs = HELLO_TIMEOUT_NS_DEFAULT;
        private long sendStallTimeoutNs = SEND_STALL_TIMEOUT_NS_DEFAULT;
        private int socketSendBufferBytes = SOCKET_BUFFER_BYTES_DEFAULT;
        private int socketReceiveBufferBytes = SOCKET_BUFFER_BYTES_DEFAULT;
        private Runnable completionSignal;
        private byte[] handshakeKey;
        private TransportTls tls;
        private long identityMsb;
        private long identityLsb;

        /**
         * Require every connection, both ways, to prove this key in its handshake ({@link BuiltinHandshake}); default
         * null: connections prove nothing. Both ends of a connection must agree.
         *
         * @param handshakeKey 32 bytes derived from the cluster secret, or null.
         * @return this.
         */
        public Context handshakeKey(final byte[] handshakeKey)
        {
            this.handshakeKey = null == handshakeKey ? null : handshakeKey.clone();
            return this;
        }

        /**
         * @return the handshake key, or null.
         */
        public byte[] handshakeKey()
        {
            return handshakeKey;
        }

        /**
         * Carry every connection over mutual TLS 1.3 ({@link TransportTls}); default null: plain TCP with zero-copy
         * sends and receives. With TLS the bytes are copied through per-connection buffers and encrypted; a peer
         * without TLS, or with a certificate the CA did not issue, fails its handshake (counted as
         * {@code tls handshakes failed}). Both ends of a connection must agree. The handshake key's exchange, when
         * set, runs inside the TLS connection.
         *
         * @param tls the certificates, or null.
         * @return this.
         */
        public Context tls(final TransportTls tls)
        {
            this.tls = tls;
            return this;
        }

        /**
         * @return the TLS configuration, or null.
         */
        public TransportTls tls()
        {
            return tls;
        }

        /**
         * The id this end names in its handshakes (the Manager's runtime incarnation); bound into every proof.
         *
         * @param msb most significant half.
         * @param lsb least significant half.
         * @return this.
         */
        public Context identity(final long msb, final long lsb)
        {
            this.identityMsb = msb;
            this.identityLsb = lsb;
            return this;
        }

        public long identityMsb()
        {
            return identityMsb;
        }

        public long identityLsb()
        {
            return identityLsb;
        }

        /**
         * Check every setting.
         *
         * @return this.
         * @throws IllegalArgumentException naming the first setting out of range.
         */
        public Context conclude()
        {
            check(null != bindHost && !bindHost.isEmpty(), "bindHost must be set");
            check(port >= 0 && port <= 65535, "port must be 0..65535: " + port);
            check(streamsPerPeer >= 1 && streamsPerPeer <= MAX_STREAMS_PER_PEER,
                "streamsPerPeer must be 1.." + MAX_STREAMS_PER_PEER + ": " + streamsPerPeer);
            check(maxRequestBytes >= CHUNK_BYTES_MIN, "maxRequestBytes must be >= " + CHUNK_BYTES_MIN);
            check(chunkBytes >= CHUNK_BYTES_MIN && chunkBytes <= maxRequestBytes,
                "chunkBytes must be " + CHUNK_BYTES_MIN + "..maxRequestBytes(" + maxRequestBytes + "): " + chunkBytes);
            check(maxPeers >= 1 && maxPeers <= MAX_PEERS, "maxPeers must be 1.." + MAX_PEERS + ": " + maxPeers);
            check(maxReadsInFlight >= 1 && maxReadsInFlight <= (1 << 24),
                "maxReadsInFlight must be 1..2^24: " + maxReadsInFlight);
            check(maxSessions >= 1 && maxSessions <= (1 << 24), "maxSessions must be 1..2^24: " + maxSessions);
            check(maxRangesPerSession >= 1, "maxRangesPerSession must be >= 1: " + maxRangesPerSession);
            check(maxChunksPerStream >= 1 && maxChunksPerStream <= 4096,
                "maxChunksPerStream must be 1..4096: " + maxChunksPerStream);
            check(maxServerConnections >= 1, "maxServerConnections must be >= 1: " + maxServerConnections);
            check(readTimeoutNs > 0, "readTimeoutNs must be > 0: " + readTimeoutNs);
            check(helloTimeoutNs > 0, "helloTimeoutNs must be > 0: " + helloTimeoutNs);
            check(sendStallTimeoutNs > 0, "sendStallTimeoutNs must be > 0: " + sendStallTimeoutNs);
            check(socketSendBufferBytes >= 0 && socketReceiveBufferBytes >= 0, "socket buffer sizes must be >= 0");
            check(null == handshakeKey || handshakeKey.length >= 16, "handshakeKey must be at least 16 bytes");
            return this;
        }

        private static void check(final boolean condition, final String message)
        {
            if (!condition)
            {
                throw new IllegalArgumentException(message);
            }
        }

        /**
         * @param bindHost host or address the listening socket binds.
         * @return this.
         */
        public Context bindHost(final String bindHost)
        {
            this.bindHost = bindHost;
            return this;
        }

        /**
         * @return host or address the listening socket binds.
         */
        public String bindHost()
        {
            return bindHost;
        }

        /**
         * @param port listening port, 0 for a free one.
         * @return this.
         */
        public Context port(final int port)
        {
            this.port = port;
            return this;
        }

        /**
         * @return listening port, 0 for a free one.
         */
        public int port()
        {
            return port;
        }

        /**
         * @param streamsPerPeer connections per peer, 1..{@link #MAX_STREAMS_PER_PEER}.
         * @return this.
         */
        public Context streamsPerPeer(final int streamsPerPeer)
        {
            this.streamsPerPeer = streamsPerPeer;
            return this;
        }

        /**
         * @return connections per peer.
         */
        public int streamsPerPeer()
        {
            return streamsPerPeer;
        }

        /**
         * @param chunkBytes the most bytes one request asks for; longer reads are cut and spread over the streams.
         * @return this.
         */
        public Context chunkBytes(final int chunkBytes)
        {
            this.chunkBytes = chunkBytes;
            return this;
        }

        /**
         * @return the most bytes one request asks for.
         */
        public int chunkBytes()
        {
            return chunkBytes;
        }

        /**
         * @param maxRequestBytes the longest request a source serves; longer ones close the connection.
         * @return this.
         */
        public Context maxRequestBytes(final int maxRequestBytes)
        {
            this.maxRequestBytes = maxRequestBytes;
            return this;
        }

        /**
         * @return the longest request a source serves.
         */
        public int maxRequestBytes()
        {
            return maxRequestBytes;
        }

        /**
         * @param maxPeers peers kept at once, 1..{@link #MAX_PEERS}; the least recently used is evicted past it.
         * @return this.
         */
        public Context maxPeers(final int maxPeers)
        {
            this.maxPeers = maxPeers;
            return this;
        }

        /**
         * @return peers kept at once.
         */
        public int maxPeers()
        {
            return maxPeers;
        }

        /**
         * @param maxReadsInFlight reads submitted and not yet polled; submitRead answers false past it.
         * @return this.
         */
        public Context maxReadsInFlight(final int maxReadsInFlight)
        {
            this.maxReadsInFlight = maxReadsInFlight;
            return this;
        }

        /**
         * @return reads submitted and not yet polled.
         */
        public int maxReadsInFlight()
        {
            return maxReadsInFlight;
        }

        /**
         * @param maxSessions sessions exported and not yet revoked; export answers false past it.
         * @return this.
         */
        public Context maxSessions(final int maxSessions)
        {
            this.maxSessions = maxSessions;
            return this;
        }

        /**
         * @return sessions exported and not yet revoked.
         */
        public int maxSessions()
        {
            return maxSessions;
        }

        /**
         * @param maxRangesPerSession ranges one export may name.
         * @return this.
         */
        public Context maxRangesPerSession(final int maxRangesPerSession)
        {
            this.maxRangesPerSession = maxRangesPerSession;
            return this;
        }

        /**
         * @return ranges one export may name.
         */
        public int maxRangesPerSession()
        {
            return maxRangesPerSession;
        }

        /**
         * @param maxChunksPerStream requests outstanding on one stream; further chunks wait for room.
         * @return this.
         */
        public Context maxChunksPerStream(final int maxChunksPerStream)
        {
            this.maxChunksPerStream = maxChunksPerStream;
            return this;
        }

        /**
         * @return requests outstanding on one stream.
         */
        public int maxChunksPerStream()
        {
            return maxChunksPerStream;
        }

        /**
         * @param maxServerConnections connections a source accepts at once; further ones are closed and counted.
         * @return this.
         */
        public Context maxServerConnections(final int maxServerConnections)
        {
            this.maxServerConnections = maxServerConnections;
            return this;
        }

        /**
         * @return connections a source accepts at once.
         */
        public int maxServerConnections()
        {
            return maxServerConnections;
        }

        /**
         * @param readTimeoutNs time a read may take before it completes TIMEOUT.
         * @return this.
         */
        public Context readTimeoutNs(final long readTimeoutNs)
        {
            this.readTimeoutNs = readTimeoutNs;
            return this;
        }

        /**
         * @return time a read may take before it completes TIMEOUT.
         */
        public long readTimeoutNs()
        {
            return readTimeoutNs;
        }

        /**
         * @param helloTimeoutNs time a source waits for a new connection's hello before closing it.
         * @return this.
         */
        public Context helloTimeoutNs(final long helloTimeoutNs)
        {
            this.helloTimeoutNs = helloTimeoutNs;
            return this;
        }

        /**
         * @return time a source waits for a new connection's hello before closing it.
         */
        public long helloTimeoutNs()
        {
            return helloTimeoutNs;
        }

        /**
         * @param sendStallTimeoutNs time a source's send may make no progress (the requester reads nothing) before
         *                           the connection is cut, so that a stalled requester cannot hold a revoke.
         * @return this.
         */
        public Context sendStallTimeoutNs(final long sendStallTimeoutNs)
        {
            this.sendStallTimeoutNs = sendStallTimeoutNs;
            return this;
        }

        /**
         * @return time a source's send may make no progress before the connection is cut.
         */
        public long sendStallTimeoutNs()
        {
            return sendStallTimeoutNs;
        }

        /**
         * @param socketSendBufferBytes SO_SNDBUF of every connection, 0 for the kernel's automatic sizing.
         * @return this.
         */
        public Context socketSendBufferBytes(final int socketSendBufferBytes)
        {
            this.socketSendBufferBytes = socketSendBufferBytes;
            return this;
        }

        /**
         * @return SO_SNDBUF of every connection, 0 for the kernel's automatic sizing.
         */
        public int socketSendBufferBytes()
        {
            return socketSendBufferBytes;
        }

        /**
         * @param socketReceiveBufferBytes SO_RCVBUF of every connection, 0 for the kernel's automatic sizing.
         * @return this.
         */
        public Context socketReceiveBufferBytes(final int socketReceiveBufferBytes)
        {
            this.socketReceiveBufferBytes = socketReceiveBufferBytes;
            return this;
        }

        /**
         * @return SO_RCVBUF of every connection, 0 for the kernel's automatic sizing.
         */
        public int socketReceiveBufferBytes()
        {
            return socketReceiveBufferBytes;
        }

        /**
         * @param completionSignal run on the I/O thread after it queued completions for {@link #poll}, e.g. to wake
         *                         a sleeping owner agent; must be quick, thread-safe and allocation-free. Null for none.
         * @return this.
         */
        public Context completionSignal(final Runnable completionSignal)
        {
            this.completionSignal = completionSignal;
            return this;
        }

        /**
         * @return run on the I/O thread after it queued completions, or null.
         */
        public Runnable completionSignal()
        {
            return completionSignal;
        }
    }
}
