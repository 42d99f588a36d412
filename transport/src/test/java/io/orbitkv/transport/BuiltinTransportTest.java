package io.orbitkv.transport;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.zip.CRC32C;

import com.sun.management.ThreadMXBean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class BuiltinTransportTest
{
    private static final long MIB = 1024 * 1024;
    private static final long POOL_BYTES = 40 * MIB;
    private static final long SESSION = 77;
    private static final long TOKEN = 0x5EC12E7L;
    private static final long AWAIT_NS = TimeUnit.SECONDS.toNanos(10);

    private final List<BuiltinTransport> transports = new ArrayList<>();
    private final List<SocketChannel> rawChannels = new ArrayList<>();
    private final Recorder recorder = new Recorder();
    private Arena arena;
    private MemorySegment pool;
    private MemorySegment local;

    @BeforeEach
    void before()
    {
        arena = Arena.ofShared();
        pool = arena.allocate(POOL_BYTES, 4096);
        local = arena.allocate(POOL_BYTES, 4096);
        for (long i = 0; i < POOL_BYTES; i += Long.BYTES)
        {
            pool.set(ValueLayout.JAVA_LONG, i, i * 0x9E3779B97F4A7C15L);
        }
    }

    @AfterEach
    void after() throws IOException
    {
        for (final SocketChannel channel : rawChannels)
        {
            channel.close();
        }
        for (final BuiltinTransport transport : transports)
        {
            transport.close();
        }
        arena.close();
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 4})
    void shouldReadSmallAndMultiChunkRangesByteExact(final int streams)
    {
        final BuiltinTransport source = source(new BuiltinTransport.Context());
        final BuiltinTransport requester = requester(new BuiltinTransport.Context().streamsPerPeer(streams));
        assertTrue(source.export(SESSION, TOKEN, new long[]{pool.address()}, new int[]{(int)(32 * MIB)}, 1));
        final int peer = requester.peer(source.localEndpoint());
        assertTrue(peer >= 0);

        assertRead(requester, peer, 13, 100, 1);
        assertRead(requester, peer, 4099, (int)(3 * MIB) + 123, 2);
        assertRead(requester, peer, 0, (int)(2 * MIB), 3);
        assertRead(requester, peer, 0, (int)(32 * MIB), 4);
        assertEquals(0, requester.readsInFlight());
        assertTrue(source.stats().get(BuiltinTransportStats.REQUESTS_SERVED) >= 4 + 6 + 3);
        assertEquals(0, source.stats().get(BuiltinTransportStats.SENDS_IN_PROGRESS));
    }

    @Test
    void shouldCompleteManyConcurrentReadsByteExactAndSignalCompletions()
    {
        final AtomicInteger signals = new AtomicInteger();
        final BuiltinTransport source = source(new BuiltinTransport.Context());
        final BuiltinTransport requester = requester(new BuiltinTransport.Context()
            .chunkBytes(64 * 1024).maxChunksPerStream(4).completionSignal(signals::incrementAndGet));
        assertTrue(source.export(SESSION, TOKEN, new long[]{pool.address()}, new int[]{(int)(32 * MIB)}, 1));
        final int peer = requester.peer(source.localEndpoint());
        local.fill((byte)0);

        final int reads = 64;
        final long stride = 512 * 1024;
        for (int i = 0; i < reads; i++)
        {
            final long offset = i * stride + i;
            final int length = 1 + (int)((i * 7919L * 64) % (stride - 64));
            assertTrue(requester.submitRead(
                peer, SESSION, TOKEN, pool.address() + offset, local.address() + offset, length, 1000 + i));
        }
        assertEquals(reads, requester.readsInFlight());
        await(() -> reads == recorder.completed.size(), requester);
        for (int i = 0; i < reads; i++)
        {
            final long offset = i * stride + i;
            final int length = 1 + (int)((i * 7919L * 64) % (stride - 64));
            assertEquals(TransportStatus.OK, recorder.status(1000 + i));
            assertEquals(-1, local.asSlice(offset, length).mismatch(pool.asSlice(offset, length)), "read " + i);
            assertEquals(crc32c(local.asSlice(offset, length)), recorder.crcs.get(1000L + i), "sum of read " + i);
        }
        assertEquals(0, requester.readsInFlight());
        assertTrue(signals.get() > 0);
    }

    @Test
    void shouldDeliverOnRevokedForEveryRevokeOfOneSession()
    {
        final BuiltinTransport source = source(new BuiltinTransport.Context());
        assertTrue(source.export(SESSION, TOKEN, new long[]{pool.address()}, new int[]{4096}, 1));
        source.revoke(SESSION);
        source.revoke(SESSION);
        await(() -> 2 == recorder.revoked.size(), source);
        assertEquals(List.of(SESSION, SESSION), recorder.revoked);
        assertEquals(0, source.sessionsHeld());
        assertTrue(source.export(SESSION, TOKEN, new long[]{pool.address()}, new int[]{4096}, 1));
    }

    @Test
    void shouldRejectReadsOutsideTheGrantWithWrongTokenOrOfUnknownAndRevokedSessions()
    {
        final BuiltinTransport source = source(new BuiltinTransport.Context());
        final BuiltinTransport requester = requester(new BuiltinTransport.Context());
        final long granted = pool.address() + 4096;
        assertTrue(source.export(SESSION, TOKEN, new long[]{granted, granted + 65536}, new int[]{8192, 4096}, 2));
        final int peer = requester.peer(source.localEndpoint());

        assertEquals(TransportStatus.OK, read(requester, peer, SESSION, TOKEN, granted + 65536, 4096, 1));
        assertEquals(TransportStatus.REJECTED, read(requester, peer, SESSION, TOKEN, granted + 4096, 8192, 2));
        assertEquals(TransportStatus.REJECTED, read(requester, peer, SESSION, TOKEN, granted - 1, 100, 3));
        // Adjacent ranges are still two ranges: a read may not straddle them.
        assertEquals(TransportStatus.REJECTED, read(requester, peer, SESSION, TOKEN, granted + 8000, 65536, 4));
        assertEquals(3, source.stats().get(BuiltinTransportStats.REJECTED_RANGE));

        assertEquals(TransportStatus.REJECTED, read(requester, peer, SESSION, TOKEN + 1, granted, 100, 5));
        assertEquals(1, source.stats().get(BuiltinTransportStats.REJECTED_TOKEN));

        assertEquals(TransportStatus.REJECTED, read(requester, peer, SESSION + 1, TOKEN, granted, 100, 6));
        assertEquals(1, source.stats().get(BuiltinTransportStats.REJECTED_UNKNOWN_SESSION));

        source.revoke(SESSION);
        await(() -> recorder.revoked.contains(SESSION), source, requester);
        assertEquals(0, source.sessionsHeld());
        assertEquals(TransportStatus.REJECTED, read(requester, peer, SESSION, TOKEN, granted, 100, 7));
        assertEquals(2, source.stats().get(BuiltinTransportStats.REJECTED_UNKNOWN_SESSION));
        assertEquals(7 - 1, requester.stats().get(BuiltinTransportStats.READS_REJECTED));

        source.revoke(12345);
        await(() -> recorder.revoked.contains(12345L), source, requester);
    }

    @Test
    void shouldDeliverOnRevokedOnlyOnceTheSendInProgressHasEnded() throws IOException
    {
        final BuiltinTransport source = source(new BuiltinTransport.Context().socketSendBufferBytes(64 * 1024));
        final int length = (int)(16 * MIB);
        assertTrue(source.export(SESSION, TOKEN, new long[]{pool.address()}, new int[]{length}, 1));

        final SocketChannel slow = raw(source, 64 * 1024);
        write(slow, hello());
        write(slow, request(1, SESSION, TOKEN, pool.address(), length));
        await(() -> 1 == source.stats().get(BuiltinTransportStats.SENDS_IN_PROGRESS), source);

        source.revoke(SESSION);
        final SocketChannel other = raw(source, 0);
        write(other, hello());
        write(other, request(9, SESSION, TOKEN, pool.address(), 100));
        final ByteBuffer refused = readFully(other, 16);
        assertEquals(9, refused.getLong(0));
        assertEquals(TransportStatus.REJECTED, refused.getInt(8));
        assertEquals(1, source.stats().get(BuiltinTransportStats.REJECTED_REVOKED));

        final long stillSendingUntilNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(300);
        while (System.nanoTime() - stillSendingUntilNs < 0)
        {
            source.poll(recorder, 16);
            assertFalse(recorder.revoked.contains(SESSION), "revoked while a send was in progress");
        }

        final ByteBuffer header = readFully(slow, 16);
        assertEquals(1, header.getLong(0));
        assertEquals(TransportStatus.OK, header.getInt(8));
        assertEquals(length, header.getInt(12));
        final ByteBuffer payload = readFully(slow, length);
        assertEquals(-1, MemorySegment.ofBuffer(payload).mismatch(pool.asSlice(0, length)));

        await(() -> recorder.revoked.contains(SESSION), source);
        write(slow, request(2, SESSION, TOKEN, pool.address(), 100));
        final ByteBuffer after = readFully(slow, 16);
        assertEquals(2, after.getLong(0));
        assertEquals(TransportStatus.REJECTED, after.getInt(8));
        assertEquals(0, after.getInt(12));
    }

    @Test
    void shouldCutASendThatMakesNoProgressSoARevokeEnds() throws IOException
    {
        final BuiltinTransport source = source(new BuiltinTransport.Context()
            .socketSendBufferBytes(64 * 1024).sendStallTimeoutNs(TimeUnit.MILLISECONDS.toNanos(300)));
        final int length = (int)(16 * MIB);
        assertTrue(source.export(SESSION, TOKEN, new long[]{pool.address()}, new int[]{length}, 1));
        final SocketChannel stalled = raw(source, 64 * 1024);
        write(stalled, hello());
        write(stalled, request(1, SESSION, TOKEN, pool.address(), length));
        await(() -> 1 == source.stats().get(BuiltinTransportStats.SENDS_IN_PROGRESS), source);

        source.revoke(SESSION);
        await(() -> recorder.revoked.contains(SESSION), source);
        assertEquals(1, source.stats().get(BuiltinTransportStats.SENDS_CUT));
        assertEquals(0, source.stats().get(BuiltinTransportStats.SENDS_IN_PROGRESS));
        assertEquals(0, source.stats().get(BuiltinTransportStats.REQUESTS_SERVED));
    }

    @Test
    void shouldCloseConnectionsThatSendNoHelloInTime() throws IOException
    {
        final BuiltinTransport source = source(new BuiltinTransport.Context()
            .helloTimeoutNs(TimeUnit.MILLISECONDS.toNanos(200)));
        final SocketChannel quiet = raw(source, 0);
        final SocketChannel greeted = raw(source, 0);
        write(greeted, hello());
        assertClosedByPeer(quiet);
        assertEquals(1, source.stats().get(BuiltinTransportStats.HELLO_TIMEOUTS));

        write(greeted, request(5, SESSION, TOKEN, pool.address(), 100));
        final ByteBuffer answer = readFully(greeted, 16);
        assertEquals(5, answer.getLong(0));
        assertEquals(TransportStatus.REJECTED, answer.getInt(8));
        assertEquals(1, source.stats().get(BuiltinTransportStats.HELLO_TIMEOUTS));
    }

    @Test
    void shouldFailReadWhenTheSourceClosesMidRead() throws IOException
    {
        try (ServerSocketChannel fake = ServerSocketChannel.open())
        {
            fake.bind(new InetSocketAddress("127.0.0.1", 0));
            final BuiltinTransport requester = requester(new BuiltinTransport.Context().streamsPerPeer(1));
            final int peer = requester.peer("127.0.0.1:" + ((InetSocketAddress)fake.getLocalAddress()).getPort());
            assertTrue(requester.submitRead(peer, SESSION, TOKEN, 4096, local.address(), (int)MIB, 1));

            try (SocketChannel accepted = fake.accept())
            {
                final ByteBuffer received = readFully(accepted, 8 + 2 * 40);
                assertEquals(0x42564B4F, received.getInt(0));
                final long firstId = received.getLong(8 + 8);
                final ByteBuffer partial = ByteBuffer.allocate(16 + 1000).order(ByteOrder.LITTLE_ENDIAN);
                partial.putLong(firstId).putInt(TransportStatus.OK).putInt(512 * 1024).position(partial.limit()).flip();
                write(accepted, partial);
            }
            await(() -> recorder.completed.containsKey(1L), requester);
            assertEquals(TransportStatus.FAILED, recorder.status(1));
            assertTrue(recorder.bytes.get(1L) < MIB);
            assertEquals(1, requester.stats().get(BuiltinTransportStats.READS_FAILED));
            assertEquals(0, requester.readsInFlight());
        }
    }

    @Test
    void shouldNotWriteBytesOfATimedOutReadIntoLocalMemory() throws IOException
    {
        try (ServerSocketChannel late = ServerSocketChannel.open())
        {
            late.bind(new InetSocketAddress("127.0.0.1", 0));
            final BuiltinTransport requester = requester(new BuiltinTransport.Context()
                .streamsPerPeer(1).readTimeoutNs(TimeUnit.MILLISECONDS.toNanos(200)));
            final int peer = requester.peer("127.0.0.1:" + ((InetSocketAddress)late.getLocalAddress()).getPort());
            local.asSlice(0, 8192).fill((byte)0);
            assertTrue(requester.submitRead(peer, SESSION, TOKEN, 4096, local.address(), 4096, 1));

            try (SocketChannel accepted = late.accept())
            {
                final ByteBuffer first = readFully(accepted, 8 + 40);
                await(() -> recorder.completed.containsKey(1L), requester);
                assertEquals(TransportStatus.TIMEOUT, recorder.status(1));

                assertTrue(requester.submitRead(peer, SESSION, TOKEN, 8192, local.address() + 4096, 4096, 2));
                final ByteBuffer second = readFully(accepted, 40);
                write(accepted, response(first.getLong(8 + 8), 4096, (byte)0x5A));
                write(accepted, response(second.getLong(8), 4096, (byte)0x33));
                await(() -> recorder.completed.containsKey(2L), requester);
            }
            assertEquals(TransportStatus.OK, recorder.status(2));
            for (int i = 0; i < 4096; i++)
            {
                assertEquals(0, local.get(ValueLayout.JAVA_BYTE, i), "byte " + i + " of the timed-out read landed");
                assertEquals(0x33, local.get(ValueLayout.JAVA_BYTE, 4096 + i));
            }
        }
    }

    private static ByteBuffer response(final long requestId, final int length, final byte fill)
    {
        final ByteBuffer buffer = ByteBuffer.allocate(16 + length).order(ByteOrder.LITTLE_ENDIAN);
        buffer.putLong(requestId).putInt(TransportStatus.OK).putInt(length);
        while (buffer.hasRemaining())
        {
            buffer.put(fill);
        }
        return buffer.flip();
    }

    @Test
    void shouldFailReadsOfAClosedSourceTransport()
    {
        final BuiltinTransport source = source(new BuiltinTransport.Context());
        final BuiltinTransport requester = requester(new BuiltinTransport.Context());
        assertTrue(source.export(SESSION, TOKEN, new long[]{pool.address()}, new int[]{(int)(32 * MIB)}, 1));
        final int peer = requester.peer(source.localEndpoint());
        assertEquals(TransportStatus.OK, read(requester, peer, SESSION, TOKEN, pool.address(), 4096, 1));

        source.close();
        assertTrue(requester.submitRead(peer, SESSION, TOKEN, pool.address(), local.address(), (int)(8 * MIB), 2));
        await(() -> recorder.completed.containsKey(2L), requester);
        assertEquals(TransportStatus.FAILED, recorder.status(2));
    }

    @Test
    void shouldTimeOutAReadThatGetsNoAnswerAndCloseReadsOnClosePeerAndClose() throws IOException
    {
        try (ServerSocketChannel silent = ServerSocketChannel.open())
        {
            silent.bind(new InetSocketAddress("127.0.0.1", 0));
            final String endpoint = "127.0.0.1:" + ((InetSocketAddress)silent.getLocalAddress()).getPort();
            final BuiltinTransport requester = requester(new BuiltinTransport.Context()
                .readTimeoutNs(TimeUnit.MILLISECONDS.toNanos(200)));
            final int peer = requester.peer(endpoint);
            assertTrue(requester.submitRead(peer, SESSION, TOKEN, 4096, local.address(), 4096, 1));
            await(() -> recorder.completed.containsKey(1L), requester);
            assertEquals(TransportStatus.TIMEOUT, recorder.status(1));

            assertTrue(requester.submitRead(peer, SESSION, TOKEN, 4096, local.address(), 4096, 2));
            requester.closePeer(peer);
            await(() -> recorder.completed.containsKey(2L), requester);
            assertEquals(TransportStatus.CLOSED, recorder.status(2));
            assertTrue(requester.submitRead(peer, SESSION, TOKEN, 4096, local.address(), 4096, 3));
            await(() -> recorder.completed.containsKey(3L), requester);
            assertEquals(TransportStatus.CLOSED, recorder.status(3));

            final BuiltinTransport other = requester(new BuiltinTransport.Context());
            final int otherPeer = other.peer(endpoint);
            assertTrue(other.submitRead(otherPeer, SESSION, TOKEN, 4096, local.address(), 4096, 4));
            other.close();
            await(() -> recorder.completed.containsKey(4L), other);
            assertEquals(TransportStatus.CLOSED, recorder.status(4));
            assertEquals(0, other.readsInFlight());
        }
    }

    @Test
    void shouldApplyBackPressureAndRefuseUnregisteredLocalMemory()
    {
        final BuiltinTransport source = source(new BuiltinTransport.Context());
        final BuiltinTransport requester = requester(new BuiltinTransport.Context().maxReadsInFlight(2));
        final int peer = requester.peer(source.localEndpoint());
        assertTrue(requester.submitRead(peer, SESSION, TOKEN, pool.address(), local.address(), 100, 1));
        assertTrue(requester.submitRead(peer, SESSION, TOKEN, pool.address(), local.address(), 100, 2));
        assertFalse(requester.submitRead(peer, SESSION, TOKEN, pool.address(), local.address(), 100, 3));
        assertEquals(1, requester.stats().get(BuiltinTransportStats.READS_BACK_PRESSURED));
        await(() -> 2 == recorder.completed.size(), requester);

        assertTrue(requester.submitRead(peer, SESSION, TOKEN, pool.address(), local.address() + POOL_BYTES - 10, 100, 4));
        await(() -> recorder.completed.containsKey(4L), requester);
        assertEquals(TransportStatus.REJECTED, recorder.status(4));
        assertEquals(1, requester.stats().get(BuiltinTransportStats.READS_REFUSED_LOCALLY));

        assertThrows(TransportException.class, () -> source.export(1, 1, new long[]{local.address()}, new int[]{10}, 1));
        assertEquals(1, source.stats().get(BuiltinTransportStats.INVALID_RANGES));
    }

    @Test
    void shouldRefuseExportsPastTheSessionLimit()
    {
        final BuiltinTransport source = source(new BuiltinTransport.Context().maxSessions(2));
        final long[] addresses = {pool.address()};
        final int[] lengths = {4096};
        assertTrue(source.export(1, TOKEN, addresses, lengths, 1));
        assertFalse(source.export(1, TOKEN, addresses, lengths, 1));
        assertTrue(source.export(2, TOKEN, addresses, lengths, 1));
        assertFalse(source.export(3, TOKEN, addresses, lengths, 1));
        assertEquals(2, source.stats().get(BuiltinTransportStats.EXPORTS_REFUSED));
        source.revoke(1);
        await(() -> recorder.revoked.contains(1L), source);
        assertTrue(source.export(3, TOKEN, addresses, lengths, 1));
    }

    @Test
    void shouldEvictTheLeastRecentlyUsedPeerPastTheLimit()
    {
        final BuiltinTransport first = source(new BuiltinTransport.Context());
        final BuiltinTransport second = source(new BuiltinTransport.Context());
        final BuiltinTransport third = source(new BuiltinTransport.Context());
        for (final BuiltinTransport source : List.of(first, second, third))
        {
            assertTrue(source.export(SESSION, TOKEN, new long[]{pool.address()}, new int[]{4096}, 1));
        }
        final BuiltinTransport requester = requester(new BuiltinTransport.Context().maxPeers(2));
        final int a = requester.peer(first.localEndpoint());
        final int b = requester.peer(second.localEndpoint());
        assertEquals(a, requester.peer(first.localEndpoint()));
        final int c = requester.peer(third.localEndpoint());
        assertEquals(2, requester.peerCount());
        assertEquals(1, requester.stats().get(BuiltinTransportStats.PEERS_EVICTED));

        assertEquals(TransportStatus.CLOSED, read(requester, b, SESSION, TOKEN, pool.address(), 100, 1));
        assertEquals(TransportStatus.OK, read(requester, a, SESSION, TOKEN, pool.address(), 100, 2));
        assertEquals(TransportStatus.OK, read(requester, c, SESSION, TOKEN, pool.address(), 100, 3));
        assertNotEquals(b, requester.peer(second.localEndpoint()));
        assertEquals(-1, requester.peer("no-port"));
        assertEquals(-1, requester.peer("127.0.0.1:99999"));
        assertEquals(2, requester.stats().get(BuiltinTransportStats.PEERS_REFUSED));
    }

    @Test
    void shouldKeepAtMostTheDefaultPeerLimit()
    {
        assertEquals(64, BuiltinTransport.MAX_PEERS);
        final BuiltinTransport requester = requester(new BuiltinTransport.Context().streamsPerPeer(1));
        assertEquals(BuiltinTransport.MAX_PEERS, requester.context().maxPeers());
        final int firstPeer = requester.peer("127.0.0.1:1");
        for (int i = 2; i <= BuiltinTransport.MAX_PEERS; i++)
        {
            assertTrue(requester.peer("127.0.0.1:" + i) >= 0);
        }
        assertEquals(BuiltinTransport.MAX_PEERS, requester.peerCount());
        assertEquals(0, requester.stats().get(BuiltinTransportStats.PEERS_EVICTED));
        assertTrue(requester.peer("127.0.0.1:" + (BuiltinTransport.MAX_PEERS + 1)) >= 0);
        assertEquals(BuiltinTransport.MAX_PEERS, requester.peerCount());
        assertEquals(1, requester.stats().get(BuiltinTransportStats.PEERS_EVICTED));
        assertEquals(TransportStatus.CLOSED, read(requester, firstPeer, SESSION, TOKEN, 4096, 100, 1));
        assertThrows(IllegalArgumentException.class, () -> new BuiltinTransport.Context().maxPeers(65).conclude());
    }

    @Test
    void shouldCountAndCloseConnectionsSendingMalformedBytesAndKeepServing() throws IOException
    {
        final BuiltinTransport source = source(new BuiltinTransport.Context());
        assertTrue(source.export(SESSION, TOKEN, new long[]{pool.address()}, new int[]{4096}, 1));

        final SocketChannel garbage = raw(source, 0);
        write(garbage, ByteBuffer.wrap("GET / HTTP/1.1\r\nHost: x\r\n\r\n".getBytes()));
        assertClosedByPeer(garbage);
        assertEquals(1, source.stats().get(BuiltinTransportStats.BAD_HELLOS));

        final SocketChannel badType = raw(source, 0);
        write(badType, hello());
        final ByteBuffer frame = request(1, SESSION, TOKEN, pool.address(), 100);
        frame.putInt(0, 7);
        write(badType, frame);
        assertClosedByPeer(badType);
        assertEquals(1, source.stats().get(BuiltinTransportStats.MALFORMED_FRAMES));

        final SocketChannel oversize = raw(source, 0);
        write(oversize, hello());
        write(oversize, request(1, SESSION, TOKEN, pool.address(), Integer.MAX_VALUE));
        assertClosedByPeer(oversize);
        final SocketChannel negative = raw(source, 0);
        write(negative, hello());
        write(negative, request(1, SESSION, TOKEN, pool.address(), -5));
        assertClosedByPeer(negative);
        assertEquals(2, source.stats().get(BuiltinTransportStats.OVERSIZE_REQUESTS));

        final BuiltinTransport requester = requester(new BuiltinTransport.Context());
        final int peer = requester.peer(source.localEndpoint());
        assertRead(requester, peer, 0, 4096, 1);
    }

    @Test
    void shouldRefuseConnectionsPastTheServerLimit() throws IOException
    {
        final BuiltinTransport source = source(new BuiltinTransport.Context().maxServerConnections(1));
        final SocketChannel kept = raw(source, 0);
        write(kept, hello());
        final SocketChannel refused = raw(source, 0);
        assertClosedByPeer(refused);
        assertEquals(1, source.stats().get(BuiltinTransportStats.CONNECTIONS_REFUSED));
        assertEquals(1, source.stats().get(BuiltinTransportStats.CONNECTIONS_ACCEPTED));
    }

    @Test
    void shouldCostNoCpuWhenIdle()
    {
        final BuiltinTransport source = source(new BuiltinTransport.Context());
        final BuiltinTransport requester = requester(new BuiltinTransport.Context());
        assertTrue(source.export(SESSION, TOKEN, new long[]{pool.address()}, new int[]{(int)MIB}, 1));
        final int peer = requester.peer(source.localEndpoint());
        assertRead(requester, peer, 0, (int)MIB, 1);

        final ThreadMXBean threads = (ThreadMXBean)ManagementFactory.getThreadMXBean();
        assumeTrue(threads.isThreadCpuTimeSupported());
        final long sourceId = source.ioThread().threadId();
        final long requesterId = requester.ioThread().threadId();
        assertEquals(BuiltinTransport.THREAD_NAME, source.ioThread().getName());
        final long sourceBefore = threads.getThreadCpuTime(sourceId);
        final long requesterBefore = threads.getThreadCpuTime(requesterId);
        final long untilNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
        while (System.nanoTime() - untilNs < 0)
        {
            try
            {
                Thread.sleep(100);
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
                fail("interrupted");
            }
        }
        final long sourceCpu = threads.getThreadCpuTime(sourceId) - sourceBefore;
        final long requesterCpu = threads.getThreadCpuTime(requesterId) - requesterBefore;
        assertTrue(sourceCpu < TimeUnit.MILLISECONDS.toNanos(20), "source I/O thread used " + sourceCpu + " ns");
        assertTrue(requesterCpu < TimeUnit.MILLISECONDS.toNanos(20), "requester I/O thread used " + requesterCpu + " ns");
    }

    @Test
    void shouldAllocateNothingPerReadAfterWarmUp()
    {
        final BuiltinTransport source = source(new BuiltinTransport.Context());
        final BuiltinTransport requester = requester(new BuiltinTransport.Context());
        assertTrue(source.export(SESSION, TOKEN, new long[]{pool.address()}, new int[]{(int)(8 * MIB)}, 1));
        final int peer = requester.peer(source.localEndpoint());
        final ThreadMXBean threads = (ThreadMXBean)ManagementFactory.getThreadMXBean();
        assumeTrue(threads.isThreadAllocatedMemorySupported());
        final long[] ids = {Thread.currentThread().threadId(), source.ioThread().threadId(), requester.ioThread().threadId()};
        final long[] before = new long[ids.length];
        final long[] allocated = new long[ids.length];
        final CountingListener listener = new CountingListener();
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(40);
        long total;
        int windows = 0;
        do
        {
            for (int i = 0; i < ids.length; i++)
            {
                before[i] = threads.getThreadAllocatedBytes(ids[i]);
            }
            for (int i = 0; i < 200; i++)
            {
                final int length = 0 == (i & 1) ? 4096 : (int)(2 * MIB);
                while (!requester.submitRead(peer, SESSION, TOKEN, pool.address(), local.address(), length, i))
                {
                    requester.poll(listener, 16);
                }
                final long target = listener.completed + 1;
                while (listener.completed < target)
                {
                    requester.poll(listener, 16);
                }
                if (TransportStatus.OK != listener.lastStatus)
                {
                    fail("read " + i + " ended " + TransportStatus.name(listener.lastStatus));
                }
            }
            total = 0;
            for (int i = 0; i < ids.length; i++)
            {
                allocated[i] = threads.getThreadAllocatedBytes(ids[i]) - before[i];
                total += allocated[i];
            }
            windows++;
        }
        while (total > 0 && System.nanoTime() - deadlineNs < 0);

        assertEquals(0, total, "owner, source I/O, requester I/O allocated " + allocated[0] + ", " + allocated[1] + ", " +
            allocated[2] + " bytes in the last of " + windows + " windows of 200 reads");
    }

    private BuiltinTransport source(final BuiltinTransport.Context context)
    {
        final BuiltinTransport transport = new BuiltinTransport(context);
        transports.add(transport);
        transport.registerMemory(pool.address(), POOL_BYTES);
        return transport;
    }

    private BuiltinTransport requester(final BuiltinTransport.Context context)
    {
        final BuiltinTransport transport = new BuiltinTransport(context);
        transports.add(transport);
        transport.registerMemory(local.address(), POOL_BYTES);
        return transport;
    }

    private void assertRead(
        final BuiltinTransport requester, final int peer, final long offset, final int length, final long requestId)
    {
        local.asSlice(offset, length).fill((byte)0);
        assertEquals(TransportStatus.OK, read(requester, peer, SESSION, TOKEN, pool.address() + offset, length, requestId));
        assertEquals(length, recorder.bytes.get(requestId));
        assertEquals(-1, local.asSlice(offset, length).mismatch(pool.asSlice(offset, length)));
        assertEquals(crc32c(local.asSlice(offset, length)), recorder.crcs.get(requestId), "the sum of the landed bytes");
    }

    private static int crc32c(final MemorySegment bytes)
    {
        final CRC32C crc = new CRC32C();
        crc.update(bytes.asByteBuffer());
        return (int)crc.getValue();
    }

    private int read(
        final BuiltinTransport requester,
        final int peer,
        final long sessionId,
        final long token,
        final long remoteAddress,
        final int length,
        final long requestId)
    {
        final long localOffset = remoteAddress - pool.address() >= 0 && remoteAddress - pool.address() < POOL_BYTES - length ?
            remoteAddress - pool.address() : 0;
        assertTrue(requester.submitRead(peer, sessionId, token, remoteAddress, local.address() + localOffset, length, requestId));
        await(() -> recorder.completed.containsKey(requestId), requester);
        return recorder.status(requestId);
    }

    private void await(final BooleanSupplier condition, final BuiltinTransport... polled)
    {
        final long deadlineNs = System.nanoTime() + AWAIT_NS;
        while (!condition.getAsBoolean())
        {
            for (final BuiltinTransport transport : polled)
            {
                transport.poll(recorder, 16);
            }
            if (System.nanoTime() - deadlineNs > 0)
            {
                fail("condition not met in time; " + polled[0].stats());
            }
            Thread.onSpinWait();
        }
    }

    private SocketChannel raw(final BuiltinTransport source, final int receiveBufferBytes) throws IOException
    {
        final SocketChannel channel = SocketChannel.open();
        rawChannels.add(channel);
        if (receiveBufferBytes > 0)
        {
            channel.setOption(StandardSocketOptions.SO_RCVBUF, receiveBufferBytes);
        }
        channel.connect(BuiltinPeers.parseEndpoint(source.localEndpoint()));
        return channel;
    }

    private static ByteBuffer hello()
    {
        final ByteBuffer buffer = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
        return buffer.putInt(0x42564B4F).putShort((short)1).putShort((short)0).flip();
    }

    private static ByteBuffer request(
        final long requestId, final long sessionId, final long token, final long address, final int length)
    {
        final ByteBuffer buffer = ByteBuffer.allocate(40).order(ByteOrder.LITTLE_ENDIAN);
        return buffer.putInt(1).putInt(length).putLong(requestId).putLong(sessionId).putLong(token).putLong(address).flip();
    }

    private static void write(final SocketChannel channel, final ByteBuffer buffer) throws IOException
    {
        while (buffer.hasRemaining())
        {
            channel.write(buffer);
        }
    }

    private static ByteBuffer readFully(final SocketChannel channel, final int length) throws IOException
    {
        final ByteBuffer buffer = ByteBuffer.allocate(length).order(ByteOrder.LITTLE_ENDIAN);
        while (buffer.hasRemaining())
        {
            if (channel.read(buffer) < 0)
            {
                fail("connection closed after " + buffer.position() + " of " + length + " bytes");
            }
        }
        return buffer.flip();
    }

    private static void assertClosedByPeer(final SocketChannel channel) throws IOException
    {
        final ByteBuffer buffer = ByteBuffer.allocate(64);
        try
        {
            while (channel.read(buffer.clear()) >= 0)
            {
                Thread.onSpinWait();
            }
        }
        catch (final IOException reset)
        {
            // A reset is a close too.
        }
    }

    private static final class Recorder implements TransportListener
    {
        final Map<Long, Integer> completed = new HashMap<>();
        final Map<Long, Long> bytes = new HashMap<>();
        final Map<Long, Integer> crcs = new HashMap<>();
        final List<Long> revoked = new ArrayList<>();

        @Override
        public void onReadComplete(final long requestId, final int status, final long bytes)
        {
            completed.put(requestId, status);
            this.bytes.put(requestId, bytes);
        }

        @Override
        public void onReadComplete(final long requestId, final int status, final long bytes, final int crc32c)
        {
            crcs.put(requestId, crc32c);
            onReadComplete(requestId, status, bytes);
        }

        @Override
        public void onRevoked(final long sessionId)
        {
            revoked.add(sessionId);
        }

        int status(final long requestId)
        {
            return completed.get(requestId);
        }
    }

    private static final class CountingListener implements TransportListener
    {
        long completed;
        int lastStatus;

        @Override
        public void onReadComplete(final long requestId, final int status, final long bytes)
        {
            completed++;
            lastStatus = status;
        }

        @Override
        public void onRevoked(final long sessionId)
        {
        }
    }
}
