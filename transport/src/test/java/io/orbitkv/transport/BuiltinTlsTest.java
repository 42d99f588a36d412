package io.orbitkv.transport;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.zip.CRC32C;

import com.sun.management.ThreadMXBean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Transports over mutual TLS 1.3, with certificates openssl makes for the test: blocks move byte-exact with the sum of
 * the plaintext that landed; a peer without TLS, or with a certificate of another CA, fails its handshake on both
 * ends, counted, and nothing is served.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class BuiltinTlsTest
{
    private static final long MIB = 1024 * 1024;
    private static final long POOL_BYTES = 8 * MIB;
    private static final long SESSION = 77;
    private static final long TOKEN = 0x715;
    private static final byte TLS_ALERT = 21;
    private static final long AWAIT_NS = TimeUnit.SECONDS.toNanos(40);

    @TempDir
    static Path certificates;
    private static TransportTls tls;
    private static TransportTls otherTls;

    private final List<BuiltinTransport> transports = new ArrayList<>();
    private final ConcurrentHashMap<Long, Integer> completed = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<Long, Integer> crcs = new ConcurrentHashMap<>();
    private final TransportListener listener = new TransportListener()
    {
        public void onReadComplete(final long requestId, final int status, final long bytes)
        {
            completed.put(requestId, status);
        }

        public void onReadComplete(final long requestId, final int status, final long bytes, final int crc32c)
        {
            crcs.put(requestId, crc32c);
            completed.put(requestId, status);
        }

        public void onRevoked(final long sessionId)
        {
        }
    };
    private Arena arena;
    private MemorySegment pool;
    private MemorySegment local;

    @BeforeAll
    static void makeCertificates() throws Exception
    {
        TestCertificates.make(certificates, "ca", "node");
        TestCertificates.make(certificates, "otherca", "other");
        tls = TransportTls.fromPem(certificates.resolve("node.pem"), certificates.resolve("node.key"),
            certificates.resolve("ca.pem"));
        otherTls = TransportTls.fromPem(certificates.resolve("other.pem"), certificates.resolve("other.key"),
            certificates.resolve("ca.pem"));
    }

    @BeforeEach
    void before()
    {
        arena = Arena.ofShared();
        pool = arena.allocate(POOL_BYTES, 4096);
        local = arena.allocate(POOL_BYTES, 4096);
        for (long i = 0; i < POOL_BYTES; i += Long.BYTES)
        {
            pool.set(ValueLayout.JAVA_LONG, i, i * 0x9E3779B97F4A7C15L + 13);
        }
    }

    @AfterEach
    void after()
    {
        for (final BuiltinTransport transport : transports)
        {
            transport.close();
        }
        arena.close();
    }

    @Test
    void shouldMoveBlocksByteExactOverOneStream()
    {
        assertMovesBlocks(1, null);
    }

    @Test
    void shouldMoveBlocksByteExactOverFourStreams()
    {
        assertMovesBlocks(4, null);
    }

    @Test
    void shouldMoveManyReadsInFlightOverFourStreams()
    {
        // Small chunks: every stream holds its full 64 requests and more wait in the peer's queue.
        final BuiltinTransport source = transport(tls, 4, pool);
        final BuiltinTransport requester = new BuiltinTransport(new BuiltinTransport.Context()
            .tls(tls).streamsPerPeer(4).chunkBytes(16 * 1024).readTimeoutNs(TimeUnit.SECONDS.toNanos(30)));
        transports.add(requester);
        requester.registerMemory(local.address(), POOL_BYTES);
        assertTrue(source.export(SESSION, TOKEN, new long[]{pool.address()}, new int[]{(int)POOL_BYTES}, 1));
        final int peer = requester.peer(source.localEndpoint());
        final int length = (int)(2 * MIB);
        final int inFlight = (int)(POOL_BYTES / length);
        long requestId = 1;
        for (int round = 0; round < 8; round++)
        {
            local.fill((byte)0);
            final long first = requestId;
            for (int i = 0; i < inFlight; i++)
            {
                assertTrue(requester.submitRead(peer, SESSION, TOKEN, pool.address() + (long)i * length,
                    local.address() + (long)i * length, length, requestId++));
            }
            final long last = requestId - 1;
            await(() -> completed.containsKey(last) && completed.size() >= last, source, requester);
            for (long id = first; id <= last; id++)
            {
                assertEquals(TransportStatus.OK, completed.get(id), "read " + id);
            }
            assertEquals(-1, local.mismatch(pool), "byte exact, round " + round);
        }
    }

    @Test
    void shouldRunTheSecretsHandshakeInsideTls()
    {
        final byte[] key = new byte[32];
        key[0] = 7;
        final BuiltinTransport requester = assertMovesBlocks(4, key);
        assertEquals(4, requester.stats().get(BuiltinTransportStats.HANDSHAKES_PROVED));
    }

    @Test
    void shouldCloseAndCountConnectionsOfARequesterWithoutTls()
    {
        final BuiltinTransport source = transport(tls, 4, pool);
        final BuiltinTransport requester = transport(null, 4, local);
        assertNotEquals(TransportStatus.OK, read(source, requester, 1, 0, 1 << 20));
        await(() -> source.stats().get(BuiltinTransportStats.TLS_HANDSHAKES_FAILED) >= 1, source, requester);
        assertNothingServed(source, requester);
    }

    @Test
    void shouldCloseAndCountConnectionsToASourceWithoutTls()
    {
        final BuiltinTransport source = transport(null, 4, pool);
        final BuiltinTransport requester = transport(tls, 4, local);
        assertNotEquals(TransportStatus.OK, read(source, requester, 1, 0, 1 << 20));
        await(() -> requester.stats().get(BuiltinTransportStats.TLS_HANDSHAKES_FAILED) >= 1, source, requester);
        await(() -> source.stats().get(BuiltinTransportStats.BAD_HELLOS) >= 1, source, requester);
        assertNothingServed(source, requester);
    }

    @Test
    void shouldCloseAndCountConnectionsOfARequesterWhoseCertificateAnotherCaIssued()
    {
        final BuiltinTransport source = transport(tls, 4, pool);
        final BuiltinTransport requester = transport(otherTls, 4, local);
        assertNotEquals(TransportStatus.OK, read(source, requester, 1, 0, 1 << 20));
        await(() -> source.stats().get(BuiltinTransportStats.TLS_HANDSHAKES_FAILED) >= 1, source, requester);
        await(() -> requester.stats().get(BuiltinTransportStats.TLS_HANDSHAKES_FAILED) >= 1, source, requester);
        assertNothingServed(source, requester);
    }

    @Test
    void shouldCloseAndCountConnectionsToASourceWhoseCertificateAnotherCaIssued()
    {
        final BuiltinTransport source = transport(otherTls, 4, pool);
        final BuiltinTransport requester = transport(tls, 4, local);
        assertNotEquals(TransportStatus.OK, read(source, requester, 1, 0, 1 << 20));
        await(() -> requester.stats().get(BuiltinTransportStats.TLS_HANDSHAKES_FAILED) >= 1, source, requester);
        assertNothingServed(source, requester);
    }

    @Test
    void shouldCloseARawPlainConnectionThatSendsAHelloAndARequest() throws IOException
    {
        final BuiltinTransport source = transport(tls, 1, pool);
        assertTrue(source.export(SESSION, TOKEN, new long[]{pool.address()}, new int[]{(int)POOL_BYTES}, 1));
        try (SocketChannel channel = SocketChannel.open(BuiltinPeers.parseEndpoint(source.localEndpoint())))
        {
            final ByteBuffer frames = ByteBuffer.allocate(BuiltinWire.HELLO_BYTES + BuiltinWire.REQUEST_BYTES)
                .order(ByteOrder.LITTLE_ENDIAN);
            frames.putInt(BuiltinWire.HELLO_MAGIC).putShort(BuiltinWire.HELLO_VERSION).putShort((short)0)
                .putInt(BuiltinWire.REQUEST_TYPE_READ).putInt(100).putLong(1).putLong(SESSION).putLong(TOKEN)
                .putLong(pool.address()).flip();
            while (frames.hasRemaining())
            {
                channel.write(frames);
            }
            // The only answer is the TLS alert that says why (content type 21), then the close.
            final ByteBuffer answer = ByteBuffer.allocate(256);
            while (channel.read(answer) >= 0)
            {
                assertTrue(answer.hasRemaining(), "more than an alert came back");
            }
            assertTrue(0 == answer.position() || TLS_ALERT == answer.get(0), "no plain answer: " + answer);
        }
        await(() -> source.stats().get(BuiltinTransportStats.TLS_HANDSHAKES_FAILED) == 1, source);
        assertEquals(0, source.stats().get(BuiltinTransportStats.REQUESTS_SERVED));
    }

    @Test
    void shouldRefuseAKeyThatIsNotPkcs8AndNameTheFile() throws Exception
    {
        final Path traditional = certificates.resolve("node-traditional.key");
        TestCertificates.run("openssl", "ec", "-in", certificates.resolve("node.key").toString(), "-out",
            traditional.toString());
        final IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
            () -> TransportTls.fromPem(certificates.resolve("node.pem"), traditional, certificates.resolve("ca.pem")));
        assertTrue(refused.getMessage().contains(traditional.toString()), refused.getMessage());
        assertTrue(refused.getMessage().contains("PKCS#8"), refused.getMessage());
        final IllegalArgumentException missing = assertThrows(IllegalArgumentException.class,
            () -> TransportTls.fromPem(certificates.resolve("none.pem"), traditional, certificates.resolve("ca.pem")));
        assertTrue(missing.getMessage().contains("none.pem"), missing.getMessage());
    }

    /**
     * SSLEngine allocates per record (its results, and more): this measures the steady TLS path and reports the figure
     * rather than asserting zero (the owner's figure is this test's polling loop, which boxes).
     */
    @Test
    void shouldReportWhatTheSteadyTlsPathAllocates()
    {
        final BuiltinTransport source = transport(tls, 4, pool);
        final BuiltinTransport requester = transport(tls, 4, local);
        assertTrue(source.export(SESSION, TOKEN, new long[]{pool.address()}, new int[]{(int)POOL_BYTES}, 1));
        final int peer = requester.peer(source.localEndpoint());
        final ThreadMXBean threads = (ThreadMXBean)ManagementFactory.getThreadMXBean();
        assumeTrue(threads.isThreadAllocatedMemorySupported());
        final long[] ids = {Thread.currentThread().threadId(), source.ioThread().threadId(), requester.ioThread().threadId()};
        final long[] allocated = new long[ids.length];
        long requestId = 1;
        final int reads = 100;
        final int length = (int)(2 * MIB);
        for (int window = 0; window < 3; window++)
        {
            for (int i = 0; i < ids.length; i++)
            {
                allocated[i] = -threads.getThreadAllocatedBytes(ids[i]);
            }
            for (int i = 0; i < reads; i++)
            {
                assertTrue(requester.submitRead(peer, SESSION, TOKEN, pool.address(), local.address(), length, requestId));
                final long id = requestId++;
                await(() -> completed.containsKey(id), requester);
                assertEquals(TransportStatus.OK, completed.get(id));
            }
            for (int i = 0; i < ids.length; i++)
            {
                allocated[i] += threads.getThreadAllocatedBytes(ids[i]);
            }
        }
        final double bytesPerMib = (double)(allocated[1] + allocated[2]) / ((double)reads * length / MIB);
        System.out.printf("TLS steady path, last window of %d reads of 2 MiB: owner %d B, source I/O %d B, requester I/O %d B"
            + " (%.0f B per MiB moved)%n", reads, allocated[0], allocated[1], allocated[2], bytesPerMib);
        assertEquals(3 * reads, requester.stats().get(BuiltinTransportStats.READS_OK));
    }

    private BuiltinTransport assertMovesBlocks(final int streams, final byte[] key)
    {
        final BuiltinTransport source = transport(tls, streams, pool, key);
        final BuiltinTransport requester = transport(tls, streams, local, key);
        final int[] lengths = {1, 16, 4096 + 3, 16 * 1024 + 1, 512 * 1024, (int)(3 * MIB) + 17, (int)(7 * MIB) + 5};
        long requestId = 1;
        for (final int length : lengths)
        {
            final long offset = (requestId * 4097) % 8192;
            local.asSlice(offset, length).fill((byte)0);
            assertEquals(TransportStatus.OK, read(source, requester, requestId, offset, length),
                () -> "length " + length + ": " + source.stats() + " / " + requester.stats());
            assertEquals(-1, local.asSlice(offset, length).mismatch(pool.asSlice(offset, length)), "byte exact: " + length);
            assertEquals(crc32c(pool.asSlice(offset, length)), crcs.get(requestId), "the sum of the plaintext: " + length);
            requestId++;
        }
        await(() -> source.stats().get(BuiltinTransportStats.TLS_HANDSHAKES_DONE) == streams, source, requester);
        assertEquals(streams, requester.stats().get(BuiltinTransportStats.TLS_HANDSHAKES_DONE), "one per stream");
        assertEquals(0, source.stats().get(BuiltinTransportStats.TLS_HANDSHAKES_FAILED));
        assertEquals(0, requester.stats().get(BuiltinTransportStats.TLS_HANDSHAKES_FAILED));
        assertTrue(source.stats().get(BuiltinTransportStats.REQUESTS_SERVED) >= lengths.length);
        return requester;
    }

    private static void assertNothingServed(final BuiltinTransport source, final BuiltinTransport requester)
    {
        assertEquals(0, source.stats().get(BuiltinTransportStats.REQUESTS_SERVED));
        assertEquals(0, requester.stats().get(BuiltinTransportStats.READS_OK));
        assertEquals(0, source.stats().get(BuiltinTransportStats.TLS_HANDSHAKES_DONE) *
            requester.stats().get(BuiltinTransportStats.TLS_HANDSHAKES_DONE), "no connection has TLS on both ends");
    }

    private int read(
        final BuiltinTransport source, final BuiltinTransport requester, final long requestId, final long offset,
        final int length)
    {
        source.export(SESSION, TOKEN, new long[]{pool.address()}, new int[]{(int)POOL_BYTES}, 1);
        final int peer = requester.peer(source.localEndpoint());
        assertTrue(requester.submitRead(peer, SESSION, TOKEN, pool.address() + offset, local.address() + offset, length,
            requestId));
        await(() -> completed.containsKey(requestId), source, requester);
        return completed.get(requestId);
    }

    private BuiltinTransport transport(final TransportTls config, final int streams, final MemorySegment memory)
    {
        return transport(config, streams, memory, null);
    }

    private BuiltinTransport transport(
        final TransportTls config, final int streams, final MemorySegment memory, final byte[] key)
    {
        final BuiltinTransport transport = new BuiltinTransport(new BuiltinTransport.Context()
            .tls(config).handshakeKey(key).identity(streams, 31).streamsPerPeer(streams)
            .readTimeoutNs(TimeUnit.SECONDS.toNanos(30)));
        transports.add(transport);
        transport.registerMemory(memory.address(), POOL_BYTES);
        return transport;
    }

    private void await(final BooleanSupplier condition, final BuiltinTransport... polled)
    {
        final long deadlineNs = System.nanoTime() + AWAIT_NS;
        while (!condition.getAsBoolean())
        {
            for (final BuiltinTransport transport : polled)
            {
                transport.poll(listener, 16);
            }
            if (System.nanoTime() - deadlineNs > 0)
            {
                fail("condition not met in time; " + polled[0].stats() + " / " + polled[polled.length - 1].stats());
            }
            Thread.onSpinWait();
        }
    }

    private static int crc32c(final MemorySegment bytes)
    {
        final CRC32C crc = new CRC32C();
        crc.update(bytes.asByteBuffer());
        return (int)crc.getValue();
    }
}
