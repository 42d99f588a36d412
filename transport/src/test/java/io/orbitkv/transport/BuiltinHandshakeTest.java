package io.orbitkv.transport;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The connection handshake of transports with a handshake key, over loopback TCP: both ends proving the same key
 * serve reads; a wrong key, a missing key on either end, or a forged proof close the connection, are counted, and no
 * request is served.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class BuiltinHandshakeTest
{
    private static final long POOL_BYTES = 4 * 1024 * 1024;
    private static final long SESSION = 91;
    private static final long TOKEN = 0x70CE;
    private static final long AWAIT_NS = TimeUnit.SECONDS.toNanos(10);
    private static final byte[] KEY = key(1);
    private static final byte[] OTHER_KEY = key(2);

    private final List<BuiltinTransport> transports = new ArrayList<>();
    private final List<SocketChannel> rawChannels = new ArrayList<>();
    private final ConcurrentHashMap<Long, Integer> completed = new ConcurrentHashMap<>();
    private final TransportListener listener = new TransportListener()
    {
        public void onReadComplete(final long requestId, final int status, final long bytes)
        {
            completed.put(requestId, status);
        }

        public void onRevoked(final long sessionId)
        {
        }
    };
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

    @Test
    void shouldServeReadsOnceBothEndsProvedTheSameKey()
    {
        final BuiltinTransport source = transport(KEY, 1, pool);
        final BuiltinTransport requester = transport(KEY, 2, local);
        assertEquals(TransportStatus.OK, read(source, requester, 1));
        assertEquals(-1, local.asSlice(0, 1 << 20).mismatch(pool.asSlice(0, 1 << 20)), "byte exact");
        assertEquals(TransportStatus.OK, read(source, requester, 2), "the streams stay up for the next read");
        await(() -> source.stats().get(BuiltinTransportStats.HANDSHAKES_PROVED) == 4, source, requester);
        assertEquals(4, requester.stats().get(BuiltinTransportStats.HANDSHAKES_PROVED), "one per stream");
        assertEquals(0, source.stats().get(BuiltinTransportStats.HANDSHAKES_FAILED));
        assertEquals(0, requester.stats().get(BuiltinTransportStats.HANDSHAKES_FAILED));
    }

    @Test
    void shouldCloseAndCountConnectionsOfAPeerWithAnotherKeyAndServeNothing()
    {
        assertRefused(transport(KEY, 1, pool), transport(OTHER_KEY, 2, local));
    }

    @Test
    void shouldCloseAndCountConnectionsOfARequesterWithoutAKey()
    {
        // The requester knows no handshake: to it the source just closed its streams.
        assertRefused(transport(KEY, 1, pool), transport(null, 2, local));
    }

    @Test
    void shouldCloseAndCountConnectionsToASourceWithoutAKey()
    {
        assertRefused(transport(null, 1, pool), transport(KEY, 2, local));
    }

    @Test
    void shouldCloseAConnectionWhoseProofIsForgedBeforeServingItsRequest() throws IOException
    {
        final BuiltinTransport source = transport(KEY, 1, pool);
        assertTrue(source.export(SESSION, TOKEN, new long[]{pool.address()}, new int[]{(int)POOL_BYTES}, 1));
        final SocketChannel channel = SocketChannel.open();
        rawChannels.add(channel);
        channel.connect(BuiltinPeers.parseEndpoint(source.localEndpoint()));
        final ByteBuffer hello = ByteBuffer.allocate(BuiltinHandshake.HELLO_BYTES).order(ByteOrder.LITTLE_ENDIAN);
        hello.putInt(BuiltinWire.HELLO_MAGIC).putShort(BuiltinWire.HELLO_VERSION).putShort(BuiltinHandshake.FLAG_AUTH)
            .putLong(5).putLong(6).put(new byte[BuiltinHandshake.NONCE_BYTES]).flip();
        write(channel, hello);
        final ByteBuffer challenge = ByteBuffer.allocate(BuiltinHandshake.CHALLENGE_BYTES);
        while (challenge.hasRemaining())
        {
            assertTrue(channel.read(challenge) >= 0, "the source answers with its challenge");
        }
        // A proof guessed (zeros) and a request right behind it: neither is served.
        final ByteBuffer forged = ByteBuffer.allocate(BuiltinHandshake.PROOF_BYTES + BuiltinWire.REQUEST_BYTES)
            .order(ByteOrder.LITTLE_ENDIAN);
        forged.position(BuiltinHandshake.PROOF_BYTES);
        forged.putInt(BuiltinWire.REQUEST_TYPE_READ).putInt(100).putLong(1).putLong(SESSION).putLong(TOKEN)
            .putLong(pool.address()).flip();
        write(channel, forged);
        final ByteBuffer rest = ByteBuffer.allocate(64);
        int read;
        while ((read = channel.read(rest.clear())) >= 0)
        {
            assertEquals(0, read, "nothing is answered");
        }
        assertEquals(1, source.stats().get(BuiltinTransportStats.HANDSHAKES_FAILED));
        assertEquals(0, source.stats().get(BuiltinTransportStats.REQUESTS_SERVED));
    }

    private void assertRefused(final BuiltinTransport source, final BuiltinTransport requester)
    {
        assertNotEquals(TransportStatus.OK, read(source, requester, 1));
        await(() -> source.stats().get(BuiltinTransportStats.HANDSHAKES_FAILED) >= 1, source, requester);
        await(() -> requester.stats().get(null == requester.context.handshakeKey() ?
            BuiltinTransportStats.STREAMS_LOST : BuiltinTransportStats.HANDSHAKES_FAILED) >= 1, source, requester);
        assertEquals(0, source.stats().get(BuiltinTransportStats.REQUESTS_SERVED));
        assertEquals(0, source.stats().get(BuiltinTransportStats.HANDSHAKES_PROVED));
        assertEquals(0, requester.stats().get(BuiltinTransportStats.HANDSHAKES_PROVED));
    }

    private int read(final BuiltinTransport source, final BuiltinTransport requester, final long requestId)
    {
        source.export(SESSION, TOKEN, new long[]{pool.address()}, new int[]{(int)POOL_BYTES}, 1);
        final int peer = requester.peer(source.localEndpoint());
        assertTrue(requester.submitRead(peer, SESSION, TOKEN, pool.address(), local.address(), 1 << 20, requestId));
        await(() -> completed.containsKey(requestId), source, requester);
        return completed.get(requestId);
    }

    private BuiltinTransport transport(final byte[] key, final long id, final MemorySegment memory)
    {
        final BuiltinTransport transport = new BuiltinTransport(new BuiltinTransport.Context()
            .handshakeKey(key).identity(id, id * 31).readTimeoutNs(TimeUnit.SECONDS.toNanos(2)));
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

    private static void write(final SocketChannel channel, final ByteBuffer buffer) throws IOException
    {
        while (buffer.hasRemaining())
        {
            channel.write(buffer);
        }
    }

    private static byte[] key(final int seed)
    {
        final byte[] key = new byte[32];
        for (int i = 0; i < key.length; i++)
        {
            key[i] = (byte)(seed * 17 + i);
        }
        return key;
    }
}
