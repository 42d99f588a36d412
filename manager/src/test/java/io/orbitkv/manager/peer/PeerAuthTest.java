package io.orbitkv.manager.peer;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import io.aeron.ExclusivePublication;
import io.orbitkv.codecs.catalog.ColdQueryEncoder;
import io.orbitkv.codecs.catalog.MessageHeaderEncoder;
import io.orbitkv.manager.status.SystemCounters;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The authenticated peer channel over real Aeron: two peer transports on loopback with a frame MAC key, driven by this
 * thread. Frames of another key, replays and garbage are dropped and counted before any handler sees them.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PeerAuthTest
{
    private static final long AWAIT_NS = TimeUnit.SECONDS.toNanos(10);
    private static final int SHARD = 3;
    private static final long HOST_MSB = 0x1111;
    private static final long HOST_LSB = 0x2222;
    private static final long OWNER_MSB = 0x3333;
    private static final long OWNER_LSB = 0x4444;
    private static final byte[] KEY = key(1);
    private static final byte[] OTHER_KEY = key(2);

    @TempDir
    Path dir;

    private PeerNode host;
    private PeerNode owner;
    private final UnsafeBuffer raw = new UnsafeBuffer(new byte[64 * 1024]);
    private final UnsafeBuffer captured = new UnsafeBuffer(new byte[64 * 1024]);
    private final MessageHeaderEncoder headerEncoder = new MessageHeaderEncoder();

    @AfterEach
    void tearDown()
    {
        for (final PeerNode node : new PeerNode[]{ owner, host })
        {
            if (null != node)
            {
                node.close();
            }
        }
        for (final PeerNode node : new PeerNode[]{ owner, host })
        {
            if (null != node && !node.errors.isEmpty())
            {
                fail("errors logged by node " + node.nodeIndex + ": " + node.errors, node.errors.get(0));
            }
        }
    }

    @Test
    void shouldOpenASessionAndAnswerAColdQueryWhenBothPeersHoldTheSameSecret()
    {
        host = node(1, HOST_MSB, HOST_LSB, KEY);
        owner = node(2, OWNER_MSB, OWNER_LSB, KEY);
        final PeerClient client = connect();
        final int key = PeerKeys.keysOfShard(SHARD, 1)[0];
        assertTrue(owner.catalogProxy().sendColdQuery(client, 77, SHARD, 1, new int[]{SHARD},
            new DirectBuffer[]{PeerKeys.NAMESPACE}, new int[]{PeerKeys.NAMESPACE_BYTES.length},
            new DirectBuffer[]{PeerKeys.hash(key)}, new int[]{PeerKeys.HASH_LENGTH}));
        await(() -> owner.coldResponses > 0, "the cold query's answer");
        assertEquals(1, host.counter(PeerCounter.FRAMES_COLD_QUERY));
        for (final PeerNode node : new PeerNode[]{ host, owner })
        {
            assertEquals(1, node.counter(PeerAuthCounter.ENABLED));
            assertTrue(node.counter(PeerAuthCounter.FRAMES_SIGNED) >= 2, "connect/response and query/answer signed");
            assertTrue(node.counter(PeerAuthCounter.FRAMES_VERIFIED) >= 2);
            assertEquals(0, dropped(node), "nothing dropped");
            assertEquals(1, node.counter(PeerAuthCounter.SENDER_WINDOWS));
            assertEquals(PeerTransport.TERM_LENGTH / 8 - FrameAuth.TRAILER_BYTES, node.publisher().maxMessageBytes(),
                "room left for the trailer");
        }
    }

    @Test
    void shouldDropAndCountEveryFrameOfAPeerWithAnotherSecretBeforeAnyHandler()
    {
        host = node(1, HOST_MSB, HOST_LSB, KEY);
        owner = node(2, OWNER_MSB, OWNER_LSB, OTHER_KEY);
        final PeerClient client =
            owner.publisher().connect(host.transport.endpoint(), host.nodeIndex, HOST_MSB, HOST_LSB);
        await(() -> host.counter(PeerAuthCounter.DROPPED_BAD_MAC) >= 1, "the foreign connect dropped");
        for (int i = 0; i < 200; i++)
        {
            duty();
        }
        assertFalse(client.isActive(), "no session with a peer of another secret");
        assertEquals(0, host.counter(PeerCounter.FRAMES_CONNECT), "the connect reached no handler");
        assertEquals(0, host.agent().sessionCount());
        assertEquals(0, host.counter(PeerAuthCounter.FRAMES_VERIFIED));
        assertEquals(0, host.counter(PeerAuthCounter.SENDER_WINDOWS), "a forged frame opens no replay window");
        assertEquals(0, host.counter(PeerCounter.REJECTED_MALFORMED));
    }

    @Test
    void shouldDropAReplayedFrameAsADuplicateAndAFrameOlderThanTheWindowAsTooOld()
    {
        host = node(1, HOST_MSB, HOST_LSB, KEY);
        owner = node(2, OWNER_MSB, OWNER_LSB, KEY);
        final PeerClient client = connect();
        // A sender of the same cluster whose frames are captured on the wire: signed once, then sent again as is.
        final FrameAuth signer = new FrameAuth(KEY, SystemCounters.inMemory(PeerAuthCounter.values()), null);
        final int queryLength = coldQuery(client, 901);
        final int first = capture(signer, queryLength, 0);
        for (int i = 0; i < SenderWindows.WINDOW_BITS; i++)
        {
            signer.sign(raw, 0, queryLength, OWNER_MSB + 100, OWNER_LSB);
        }
        final int later = capture(signer, queryLength, first);
        final ExclusivePublication publication = owner.publisher().publicationTo(host.transport.endpoint());

        offer(publication, captured, first, later);
        await(() -> host.counter(PeerCounter.FRAMES_COLD_QUERY) == 1, "the later frame handled");
        offer(publication, captured, first, later);
        await(() -> host.counter(PeerAuthCounter.DROPPED_DUPLICATE) == 1, "the replay dropped");
        offer(publication, captured, 0, first);
        await(() -> host.counter(PeerAuthCounter.DROPPED_TOO_OLD) == 1, "the frame a window older dropped");
        assertEquals(1, host.counter(PeerCounter.FRAMES_COLD_QUERY), "neither reached the catalog handler");
        assertEquals(2, host.counter(PeerAuthCounter.SENDER_WINDOWS), "the owner's and the captured sender's");
    }

    @Test
    void shouldDropAndCountTruncatedUnsignedAndGarbageFramesWithoutReachingAHandler()
    {
        host = node(1, HOST_MSB, HOST_LSB, KEY);
        owner = node(2, OWNER_MSB, OWNER_LSB, KEY);
        final PeerClient client = connect();
        final ExclusivePublication publication = owner.publisher().publicationTo(host.transport.endpoint());
        final long connects = host.counter(PeerCounter.FRAMES_CONNECT);

        offer(publication, raw, 0, FrameAuth.TRAILER_BYTES);
        await(() -> host.counter(PeerAuthCounter.DROPPED_SHORT) == 1, "the short frame dropped");

        final int queryLength = coldQuery(client, 902);
        offer(publication, raw, 0, queryLength);
        await(() -> host.counter(PeerAuthCounter.DROPPED_BAD_MAC) == 1, "the unsigned frame dropped");

        final java.util.Random random = new java.util.Random(28);
        for (int i = 0; i < 50; i++)
        {
            final byte[] garbage = new byte[FrameAuth.TRAILER_BYTES + 1 + random.nextInt(300)];
            random.nextBytes(garbage);
            raw.putBytes(0, garbage);
            offer(publication, raw, 0, garbage.length);
        }
        await(() -> host.counter(PeerAuthCounter.DROPPED_BAD_MAC) == 51, "the garbage dropped");

        // A signed frame cut short: its MAC no longer covers what arrives.
        final FrameAuth signer = new FrameAuth(KEY, SystemCounters.inMemory(PeerAuthCounter.values()), null);
        final int signed = capture(signer, coldQuery(client, 903), 0);
        offer(publication, captured, 0, signed - 1);
        await(() -> host.counter(PeerAuthCounter.DROPPED_BAD_MAC) == 52, "the truncated frame dropped");

        assertEquals(0, host.counter(PeerCounter.FRAMES_COLD_QUERY));
        assertEquals(connects, host.counter(PeerCounter.FRAMES_CONNECT));
        assertEquals(0, host.counter(PeerCounter.REJECTED_MALFORMED), "no handler judged any of them");
        assertEquals(0, host.counter(PeerCounter.REJECTED_WRONG_SCHEMA));
        assertEquals(1, host.counter(PeerAuthCounter.SENDER_WINDOWS));
    }

    @Test
    void shouldAnswerAQueryOfAnUnauthenticatedPairAsBefore()
    {
        host = node(1, HOST_MSB, HOST_LSB, null);
        owner = node(2, OWNER_MSB, OWNER_LSB, null);
        connect();
        assertEquals(0, host.counter(PeerAuthCounter.ENABLED));
        assertEquals(0, owner.counter(PeerAuthCounter.FRAMES_SIGNED));
        assertEquals(PeerTransport.TERM_LENGTH / 8, owner.publisher().maxMessageBytes());
    }

    private static long dropped(final PeerNode node)
    {
        return node.counter(PeerAuthCounter.DROPPED_BAD_MAC) + node.counter(PeerAuthCounter.DROPPED_DUPLICATE) +
            node.counter(PeerAuthCounter.DROPPED_TOO_OLD) + node.counter(PeerAuthCounter.DROPPED_SHORT) +
            node.counter(PeerAuthCounter.DROPPED_UNKNOWN_INCARNATION);
    }

    private PeerNode node(final int index, final long msb, final long lsb, final byte[] key)
    {
        return new PeerNode(dir, index, msb, lsb, PeerNode.FINGERPRINT, PeerTransport.AUTO_MTU, false,
            org.agrona.concurrent.SystemNanoClock.INSTANCE, null, key);
    }

    private static byte[] key(final int seed)
    {
        final byte[] key = new byte[ClusterSecret.KEY_BYTES];
        for (int i = 0; i < key.length; i++)
        {
            key[i] = (byte)(seed * 31 + i);
        }
        return key;
    }

    /**
     * Sign the message in {@code raw} and copy message and trailer into {@code captured} at {@code at}.
     *
     * @return where the captured frame ends.
     */
    private int capture(final FrameAuth signer, final int length, final int at)
    {
        final DirectBuffer trailer = signer.sign(raw, 0, length, OWNER_MSB + 100, OWNER_LSB);
        captured.putBytes(at, raw, 0, length);
        captured.putBytes(at + length, trailer, 0, FrameAuth.TRAILER_BYTES);
        return at + length + FrameAuth.TRAILER_BYTES;
    }

    private int coldQuery(final PeerClient client, final long correlationId)
    {
        final int key = PeerKeys.keysOfShard(SHARD, 1)[0];
        final ColdQueryEncoder encoder = new ColdQueryEncoder().wrapAndApplyHeader(raw, 0, headerEncoder);
        encoder.route().shard((short)SHARD).placementFingerprint(PeerNode.FINGERPRINT);
        encoder.route().destinationIncarnation().msb(HOST_MSB).lsb(HOST_LSB);
        encoder.route().senderIncarnation().msb(OWNER_MSB).lsb(OWNER_LSB);
        encoder.sessionId(client.sessionId()).correlationId(correlationId);
        encoder.keysCount(1).next()
            .putKeyNamespace(PeerKeys.NAMESPACE, 0, PeerKeys.NAMESPACE_BYTES.length)
            .putKeyHash(PeerKeys.hash(key), 0, PeerKeys.HASH_LENGTH);
        return MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength();
    }

    private PeerClient connect()
    {
        final PeerClient client =
            owner.publisher().connect(host.transport.endpoint(), host.nodeIndex, host.incarnationMsb, host.incarnationLsb);
        await(client::isActive, "session on " + host.transport.endpoint());
        return client;
    }

    private void offer(final ExclusivePublication publication, final DirectBuffer buffer, final int from, final int to)
    {
        final long deadlineNs = System.nanoTime() + AWAIT_NS;
        while (publication.offer(buffer, from, to - from) < 0)
        {
            duty();
            if (System.nanoTime() - deadlineNs > 0)
            {
                fail("offer timed out on " + publication.channel());
            }
        }
    }

    private void await(final BooleanSupplier condition, final String what)
    {
        final long deadlineNs = System.nanoTime() + AWAIT_NS;
        while (!condition.getAsBoolean())
        {
            duty();
            if (System.nanoTime() - deadlineNs > 0)
            {
                fail("timed out awaiting " + what);
            }
        }
    }

    private void duty()
    {
        int work = 0;
        if (null != host)
        {
            work += host.transport.doWork();
        }
        if (null != owner)
        {
            work += owner.transport.doWork();
        }
        if (0 == work)
        {
            Thread.yield();
        }
    }
}
