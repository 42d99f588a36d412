package io.orbitkv.manager.peer;

import io.orbitkv.manager.SystemCounterFamilies;
import io.orbitkv.manager.transfer.TransferCounter;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import io.orbitkv.codecs.transfer.MessageHeaderEncoder;
import io.orbitkv.codecs.transfer.ReleaseReason;
import io.orbitkv.codecs.transfer.TransferAuthorizeDecoder;
import io.orbitkv.codecs.transfer.TransferAuthorizeEncoder;
import io.orbitkv.codecs.transfer.TransferGrantDecoder;
import io.orbitkv.codecs.transfer.TransferReleaseAckDecoder;
import io.orbitkv.codecs.transfer.TransferReleaseDecoder;
import io.orbitkv.codecs.transfer.TransferReleaseEncoder;
import io.orbitkv.codecs.transfer.TransferStatus;
import io.orbitkv.codecs.transfer.TransferTier;
import io.orbitkv.index.BlockStore;
import io.orbitkv.index.NamespaceTable;
import io.orbitkv.manager.ManagerContext;
import io.orbitkv.manager.status.SystemCounters;
import io.orbitkv.manager.store.TieredStore;
import io.orbitkv.manager.transfer.SourceMembers;
import io.orbitkv.manager.transfer.TransferService;
import io.orbitkv.manager.transfer.TransferSettings;
import io.orbitkv.transport.BuiltinTransport;
import io.orbitkv.transport.BuiltinTransportStats;
import io.orbitkv.transport.TransportListener;
import io.orbitkv.transport.TransportStatus;
import org.agrona.concurrent.SystemNanoClock;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import io.orbitkv.manager.transfer.TransferHandler;

/**
 * The transfer service as the source's transfer handler on a real peer transport: a requester peer's authorization
 * crosses loopback UDP, is granted from a real DRAM store and answered on the peer session; its release is
 * acknowledged and the pins go once the transport revoked the session. The source's transport is the built-in one;
 * a second built-in transport plays the requester's and reads the granted range over loopback before and after the
 * release. Polls with deadlines, no sleeps.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class TransferServiceOverPeersTest
{
    private static final long AWAIT_NS = TimeUnit.SECONDS.toNanos(10);
    private static final long SOURCE_MSB = 0x5151;
    private static final long SOURCE_LSB = 0x5252;
    private static final long REQUESTER_MSB = 0x7171;
    private static final long REQUESTER_LSB = 0x7272;
    private static final byte[] NAMESPACE = "model=peer-test".getBytes(StandardCharsets.US_ASCII);
    private static final int LENGTH = 10_000;

    @TempDir
    Path dir;

    private final Arena arena = Arena.ofShared();
    private final SystemCounters counters = SystemCounterFamilies.inMemory();
    private final UnsafeBuffer raw = new UnsafeBuffer(new byte[4096]);
    private final MessageHeaderEncoder headerEncoder = new MessageHeaderEncoder();
    private final Answers answers = new Answers();
    private final SourceMembers members = new SourceMembers()
    {
        public boolean grantsAllowed(final long nowNs)
        {
            return true;
        }

        public boolean isMember(final long incarnationMsb, final long incarnationLsb)
        {
            return REQUESTER_MSB == incarnationMsb && REQUESTER_LSB == incarnationLsb;
        }

        public long viewVersion()
        {
            return 1;
        }
    };
    private PeerNode source;
    private PeerNode requester;
    private TransferService transfers;
    private BuiltinTransport transport;
    private BuiltinTransport readerTransport;
    private final Reads reads = new Reads();

    @AfterEach
    void tearDown()
    {
        try
        {
            for (final PeerNode node : new PeerNode[]{ source, requester })
            {
                if (null != node && !node.errors.isEmpty())
                {
                    fail("unexpected error logged by node " + node.nodeIndex + ": " + node.errors.get(0));
                }
            }
        }
        finally
        {
            if (null != requester)
            {
                requester.close();
            }
            if (null != source)
            {
                source.close();
            }
            if (null != readerTransport)
            {
                readerTransport.close();
            }
            if (null != transport)
            {
                transport.close();
            }
            arena.close();
        }
    }

    @Test
    void shouldGrantAcrossThePeerChannelAndUnpinAfterReleaseAndRevocation()
    {
        final ManagerContext ctx = new ManagerContext().name("transfer-peers").dir(dir.resolve("m").toFile())
            .poolBytes(4L << 20).conclude();
        final MemorySegment pool = arena.allocate(ctx.poolBytes(), 4096);
        final TieredStore store = new TieredStore(ctx, pool, null, counters, BlockStore.NO_OP_OBSERVER);
        final NamespaceTable namespaces = new NamespaceTable();
        final int namespaceId = namespaces.register(new UnsafeBuffer(NAMESPACE), 0, NAMESPACE.length);
        final UnsafeBuffer hash = new UnsafeBuffer(new byte[]{ 9, 8, 7, 6 });
        final int entry = store.reserve(namespaceId, hash, 0, 4, LENGTH);
        for (int i = 0; i < LENGTH; i++)
        {
            pool.set(ValueLayout.JAVA_BYTE, store.offset(entry) + i, (byte)(i * 31 + 7));
        }
        store.seal(entry, store.computePoolCrc32c(store.offset(entry), LENGTH));
        final long sequence = store.dram().insertionSequence(entry);

        transport = new BuiltinTransport(new BuiltinTransport.Context());
        transport.registerMemory(pool.address(), pool.byteSize());
        readerTransport = new BuiltinTransport(new BuiltinTransport.Context().streamsPerPeer(1));
        final MemorySegment staging = arena.allocate(LENGTH, 4096);
        readerTransport.registerMemory(staging.address(), LENGTH);
        // The source's transport is bound before the transfer service that sends through its publisher; the frames
        // it receives reach the service once that exists.
        final Forwarding toTransfers = new Forwarding();
        source = new PeerNode(dir, 1, SOURCE_MSB, SOURCE_LSB, PeerNode.FINGERPRINT, PeerTransport.AUTO_MTU, false,
            SystemNanoClock.INSTANCE, toTransfers);
        transfers = new TransferService(new TransferSettings(1L << 20, 8, 4, TimeUnit.SECONDS.toNanos(30)),
            store, namespaces, transport, null, members, source.publisher(), null, null, counters,
            SystemNanoClock.INSTANCE);
        toTransfers.to = transfers;
        requester = new PeerNode(dir, 2, REQUESTER_MSB, REQUESTER_LSB, PeerNode.FINGERPRINT, PeerTransport.AUTO_MTU,
            false, SystemNanoClock.INSTANCE, answers);
        final PeerClient client = requester.publisher().connect(source.transport.endpoint(), 1, SOURCE_MSB, SOURCE_LSB);
        await(client::isActive, "peer session");

        send(client, authorize(client.sessionId(), sequence, hash));
        await(() -> 1 == answers.grants, "grant");
        assertEquals(TransferStatus.OK, answers.grantStatus);
        assertEquals(1, answers.grantedKeys);
        assertEquals(pool.address() + store.offset(entry), answers.address);
        assertEquals(LENGTH, answers.length);
        assertEquals(transport.localEndpoint(), answers.endpoint);
        assertEquals(1, store.dram().pinCount(entry));

        // The requester reads the granted range from the endpoint the grant names.
        final int peer = readerTransport.peer(answers.endpoint);
        assertTrue(peer >= 0);
        assertEquals(TransportStatus.OK, read(peer, staging, 1));
        assertEquals(-1, staging.mismatch(pool.asSlice(store.offset(entry), LENGTH)), "byte for byte");

        send(client, release(client.sessionId(), answers.transferSessionId));
        await(() -> 1 == answers.acks, "release ack");
        assertEquals(TransferStatus.OK, answers.ackStatus);
        await(() -> 0 == store.dram().pinCount(entry), "unpinned once the transport revoked");
        assertEquals(1, counters.get(TransferCounter.SOURCE_REVOCATIONS_COMPLETED).get(),
            "the pins went on the transport's onRevoked");
        assertEquals(0, counters.get(TransferCounter.SOURCE_PINNED_BYTES).get());
        assertEquals(0, transport.sessionsHeld(), "the export is gone");
        assertEquals(TransportStatus.REJECTED, read(peer, staging, 2), "the released session is no longer served");
        assertEquals(1, transport.stats().get(BuiltinTransportStats.REJECTED_UNKNOWN_SESSION));
    }

    /**
     * Read the granted range into {@code staging} through the requester's transport and wait for the outcome.
     *
     * @return the transport status.
     */
    private int read(final int peer, final MemorySegment staging, final long requestId)
    {
        staging.fill((byte)0);
        assertTrue(readerTransport.submitRead(
            peer, answers.transferSessionId, answers.token, answers.address, staging.address(), LENGTH, requestId));
        final long deadlineNs = System.nanoTime() + AWAIT_NS;
        while (reads.lastRequestId != requestId)
        {
            readerTransport.poll(reads, 16);
            duty();
            if (System.nanoTime() - deadlineNs > 0)
            {
                fail("read " + requestId + " did not complete");
            }
        }
        return reads.lastStatus;
    }

    private int authorize(final long peerSessionId, final long sequence, final UnsafeBuffer hash)
    {
        final TransferAuthorizeEncoder encoder = new TransferAuthorizeEncoder().wrapAndApplyHeader(raw, 0, headerEncoder);
        encoder.route().destinationIncarnation().msb(SOURCE_MSB).lsb(SOURCE_LSB);
        encoder.route().senderIncarnation().msb(REQUESTER_MSB).lsb(REQUESTER_LSB);
        encoder.peerSessionId(peerSessionId).correlationId(1).requesterSessionId(1).operationId(1).maxBytes(LENGTH)
            .requesterNodeIndex(2);
        encoder.keysCount(1).next().tier(TransferTier.DRAM).insertionSequence(sequence).expectedBytes(LENGTH)
            .putKeyHash(hash, 0, 4);
        encoder.putKeyNamespace(new UnsafeBuffer(NAMESPACE), 0, NAMESPACE.length);
        return MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength();
    }

    private int release(final long peerSessionId, final long transferSessionId)
    {
        final TransferReleaseEncoder encoder = new TransferReleaseEncoder().wrapAndApplyHeader(raw, 0, headerEncoder);
        encoder.route().destinationIncarnation().msb(SOURCE_MSB).lsb(SOURCE_LSB);
        encoder.route().senderIncarnation().msb(REQUESTER_MSB).lsb(REQUESTER_LSB);
        encoder.peerSessionId(peerSessionId).correlationId(2).transferSessionId(transferSessionId)
            .requesterSessionId(1).reason(ReleaseReason.COMPLETED);
        return MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength();
    }

    private void send(final PeerClient client, final int length)
    {
        final long deadlineNs = System.nanoTime() + AWAIT_NS;
        while (!requester.publisher().offer(client, raw, 0, length))
        {
            duty();
            if (System.nanoTime() - deadlineNs > 0)
            {
                fail("offer timed out");
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
        // As the catalog service runs it: transfers first, then the transport that delivers this cycle's frames.
        int work = transfers.doWork(System.nanoTime());
        work += source.transport.doWork() + requester.transport.doWork();
        if (0 == work)
        {
            Thread.yield();
        }
    }

    /**
     * The requester side: what came back.
     */
    private static final class Forwarding implements TransferHandler
    {
        private TransferHandler to;

        public void onAuthorize(final PeerSession session, final TransferAuthorizeDecoder request)
        {
            to.onAuthorize(session, request);
        }

        public void onRelease(final PeerSession session, final TransferReleaseDecoder request)
        {
            to.onRelease(session, request);
        }

        public void onGrant(final PeerClient client, final TransferGrantDecoder grant)
        {
            to.onGrant(client, grant);
        }

        public void onReleaseAck(final PeerClient client, final TransferReleaseAckDecoder ack)
        {
            to.onReleaseAck(client, ack);
        }
    }

    private static final class Answers implements TransferHandler
    {
        int grants;
        int acks;
        TransferStatus grantStatus;
        TransferStatus ackStatus;
        int grantedKeys;
        long transferSessionId;
        long token;
        long address;
        int length;
        String endpoint;

        public void onAuthorize(final PeerSession session, final TransferAuthorizeDecoder request)
        {
            fail("the requester is not asked to authorize");
        }

        public void onRelease(final PeerSession session, final TransferReleaseDecoder request)
        {
            fail("the requester is not asked to release");
        }

        public void onGrant(final PeerClient client, final TransferGrantDecoder grant)
        {
            grantStatus = grant.status();
            grantedKeys = grant.grantedKeys();
            transferSessionId = grant.transferSessionId();
            token = grant.token();
            final TransferGrantDecoder.KeysDecoder keys = grant.keys();
            while (keys.hasNext())
            {
                keys.next();
                if (0 == address)
                {
                    address = keys.address();
                    length = keys.length();
                }
            }
            endpoint = grant.transportEndpoint();
            grants++;
        }

        public void onReleaseAck(final PeerClient client, final TransferReleaseAckDecoder ack)
        {
            ackStatus = ack.status();
            acks++;
        }
    }

    /**
     * The requester's transport listener: the last read completion.
     */
    private static final class Reads implements TransportListener
    {
        long lastRequestId;
        int lastStatus = -1;

        public void onReadComplete(final long requestId, final int status, final long bytes)
        {
            lastRequestId = requestId;
            lastStatus = status;
        }

        public void onRevoked(final long sessionId)
        {
            fail("the requester exports nothing");
        }
    }
}
