package io.orbitkv.manager.transfer;

import io.orbitkv.manager.SystemCounterFamilies;
import io.orbitkv.manager.status.CounterDescriptor;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.orbitkv.codecs.TransferLimits;
import io.orbitkv.codecs.transfer.MessageHeaderDecoder;
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
import io.orbitkv.manager.peer.PeerSession;
import io.orbitkv.manager.transfer.ext.FlipFirstByteTransportSupplier;
import io.orbitkv.manager.peer.TestPeerSessions;
import io.orbitkv.manager.status.SystemCounters;
import io.orbitkv.manager.store.TieredStore;
import io.orbitkv.transport.BuiltinTransport;
import io.orbitkv.transport.BuiltinTransportStats;
import io.orbitkv.transport.Transport;
import io.orbitkv.transport.TransportListener;
import io.orbitkv.transport.TransportStatus;
import io.orbitkv.transport.mooncake.MooncakeTransport;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The transfer source over a real DRAM store (pool, slab allocator, index) and a real transport, with a member view
 * the test controls; authorizations and releases are real encoded frames, time is the test's.
 * <p>
 * Revocable paths run on {@link BuiltinTransport}: a second built-in transport acts as the requester and reads the
 * granted addresses over loopback, so a grant is proven by a byte-exact read and an ended session by a read the
 * source answers REJECTED. Revocations reach the source only when the test polls the source's transport, as the
 * agent does. One-sided paths (no revocation, quarantine) run on {@link MooncakeTransport} over the C stand-in of
 * the Transfer Engine library that te-ffm's build compiles, whose reads ignore sessions as the real engine does.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SourceAuthorizerTest
{
    private static final long REQUESTER_MSB = 0xAAAAL;
    private static final long REQUESTER_LSB = 0xBBBBL;
    private static final long OTHER_MSB = 0xCCCCL;
    private static final long OTHER_LSB = 0xDDDDL;
    private static final long SELF_MSB = 0x1111L;
    private static final long SELF_LSB = 0x2222L;
    private static final byte[] NAMESPACE = "model=test;block=16".getBytes(StandardCharsets.US_ASCII);
    private static final int BLOCK_LENGTH = 3_000;
    /** The slab class a 3,000-byte block occupies: what the budget is charged. */
    private static final int BLOCK_CHARGE = 4_096;
    private static final long TTL_NS = TimeUnit.SECONDS.toNanos(2);
    private static final long POOL_BYTES = 4L << 20;
    private static final long STAGING_BYTES = 1L << 20;
    private static final long AWAIT_NS = TimeUnit.SECONDS.toNanos(10);
    /** Set by the manager's surefire configuration to the TE stand-in te-ffm's build compiles. */
    private static final String FAKE_TE_LIBRARY_PROPERTY = "orbitkv.te.fakeLibrary";
    /** The built-in transport's wire format (docs/transport-builtin.md), for a requester that stops reading. */
    private static final int HELLO_MAGIC = 0x42564B4F;
    private static final int HELLO_BYTES = 8;
    private static final int REQUEST_BYTES = 40;
    private static final int RESPONSE_HEADER_BYTES = 16;

    @TempDir
    Path dir;

    private final Arena arena = Arena.ofShared();
    private final List<Transport> transports = new ArrayList<>();
    private final SystemCounters counters = SystemCounterFamilies.inMemory();
    private final NamespaceTable namespaces = new NamespaceTable();
    private final Members members = new Members();
    private final Channel channel = new Channel();
    private final Reads reads = new Reads();
    private final UnsafeBuffer frame = new UnsafeBuffer(new byte[64 * 1024]);
    private final MessageHeaderEncoder headerEncoder = new MessageHeaderEncoder();
    private final MessageHeaderDecoder headerDecoder = new MessageHeaderDecoder();
    private final TransferAuthorizeDecoder authorizeDecoder = new TransferAuthorizeDecoder();
    private final TransferReleaseDecoder releaseDecoder = new TransferReleaseDecoder();
    private final PeerSession session = TestPeerSessions.active(77, 2, REQUESTER_MSB, REQUESTER_LSB);
    private final PeerSession otherSession = TestPeerSessions.active(78, 3, OTHER_MSB, OTHER_LSB);

    private TieredStore store;
    private int namespaceId;
    /** The source's transport. */
    private Transport transport;
    /** The source's transport when it is the built-in one, else null. */
    private BuiltinTransport builtin;
    /** The source's transport when it is Mooncake's, else null. */
    private MooncakeTransport mooncake;
    /** The requester's transport (same kind as the source's) and its handle of the source. */
    private Transport reader;
    private int readerPeer;
    private MemorySegment staging;
    private Revocations revocations;
    private SourceAuthorizer source;
    private long nowNs = 1_000_000_000L;
    /** The tier the next authorizations name for every key. */
    private TransferTier tier = TransferTier.DRAM;
    private long nextRequestId = 1;
    /** Probe sessions are negative: the source's transfer session ids are positive. */
    /** Settings of the next source built-in transport {@link #start} opens; defaults unless a test changes them. */
    private BuiltinTransport.Context sourceContext = new BuiltinTransport.Context();

    @AfterEach
    void tearDown()
    {
        for (int i = transports.size() - 1; i >= 0; i--)
        {
            transports.get(i).close();
        }
        arena.close();
    }

    private void start(final boolean canRevoke, final long budgetBytes, final int maxSessions, final int perPeer)
    {
        start(canRevoke, budgetBytes, maxSessions, perPeer, false);
    }

    /**
     * @param flip wrap the source's transport in the fault injector that flips a byte of the first range it exports.
     */
    private void start(
        final boolean canRevoke, final long budgetBytes, final int maxSessions, final int perPeer, final boolean flip)
    {
        final ManagerContext ctx = new ManagerContext()
            .name("transfer-source-test")
            .dir(dir.toFile())
            .poolBytes(POOL_BYTES)
            .conclude();
        final MemorySegment pool = arena.allocate(ctx.poolBytes(), 4096);
        store = new TieredStore(ctx, pool, null, counters, BlockStore.NO_OP_OBSERVER);
        final UnsafeBuffer ns = new UnsafeBuffer(NAMESPACE);
        namespaceId = namespaces.register(ns, 0, NAMESPACE.length);
        if (canRevoke)
        {
            builtin = open(new BuiltinTransport(sourceContext));
            sourceContext = new BuiltinTransport.Context();
            mooncake = null;
            transport = flip ? new FlipFirstByteTransportSupplier.FlippingTransport(builtin) : builtin;
            reader = open(new BuiltinTransport(new BuiltinTransport.Context().streamsPerPeer(1)));
        }
        else
        {
            mooncake = open(new MooncakeTransport(mooncakeContext()));
            builtin = null;
            transport = mooncake;
            reader = open(new MooncakeTransport(mooncakeContext()));
        }
        assertEquals(canRevoke, transport.canRevoke());
        // As the Manager does at start: the pool is what grants export.
        transport.registerMemory(pool.address(), pool.byteSize());
        staging = arena.allocate(STAGING_BYTES, 4096);
        reader.registerMemory(staging.address(), STAGING_BYTES);
        readerPeer = reader.peer(transport.localEndpoint());
        assertTrue(readerPeer >= 0, "the requester reaches the source's transport");
        members.add(REQUESTER_MSB, REQUESTER_LSB);
        members.add(OTHER_MSB, OTHER_LSB);
        source = new SourceAuthorizer(new TransferSettings(budgetBytes, maxSessions, perPeer, TTL_NS), store,
            namespaces, transport, members, channel, null, counters);
        revocations = new Revocations(source);
    }

    private <T extends Transport> T open(final T opened)
    {
        transports.add(opened);
        return opened;
    }

    private static MooncakeTransport.Context mooncakeContext()
    {
        final String configured = System.getProperty(FAKE_TE_LIBRARY_PROPERTY);
        assertNotNull(configured, "surefire sets " + FAKE_TE_LIBRARY_PROPERTY);
        final Path library = Path.of(configured);
        assertTrue(Files.isRegularFile(library), () -> "te-ffm's build did not compile the TE stand-in: " + library);
        return new MooncakeTransport.Context().libraryPath(library).host("127.0.0.1");
    }

    /**
     * Read {@code length} bytes at a granted {@code address} through the requester's transport, as a requester
     * would, and wait for the outcome.
     *
     * @return the transport status; when OK the bytes read equal the source's bytes at the address.
     */
    private int read(final long sessionId, final long token, final long address, final int length)
    {
        final long requestId = nextRequestId++;
        staging.asSlice(0, length).fill((byte)0x5A);
        assertTrue(reader.submitRead(readerPeer, sessionId, token, address, staging.address(), length, requestId));
        final long deadlineNs = System.nanoTime() + AWAIT_NS;
        while (reads.lastRequestId != requestId)
        {
            reader.poll(reads, 16);
            if (System.nanoTime() - deadlineNs > 0)
            {
                fail("read " + requestId + " did not complete");
            }
            Thread.yield();
        }
        if (TransportStatus.OK == reads.lastStatus)
        {
            assertEquals(length, reads.lastBytes);
            assertEquals(-1, staging.asSlice(0, length).mismatch(MemorySegment.ofAddress(address).reinterpret(length)),
                "the bytes read are the source's, byte for byte");
        }
        return reads.lastStatus;
    }

    /**
     * Poll the source's transport, as the agent does, until it delivered {@code count} revocations in all.
     */
    private void awaitRevocations(final int count)
    {
        final long deadlineNs = System.nanoTime() + AWAIT_NS;
        while (revocations.delivered < count)
        {
            transport.poll(revocations, 16);
            if (System.nanoTime() - deadlineNs > 0)
            {
                fail("revocations " + revocations.delivered + " of " + count + "; " + builtin.stats());
            }
            Thread.yield();
        }
    }

    private long stat(final int id)
    {
        return builtin.stats().get(id);
    }

    private void awaitStat(final int id, final long value)
    {
        final long deadlineNs = System.nanoTime() + AWAIT_NS;
        while (stat(id) != value)
        {
            if (System.nanoTime() - deadlineNs > 0)
            {
                fail(BuiltinTransportStats.label(id) + " never reached " + value + "; " + builtin.stats());
            }
            Thread.yield();
        }
    }

    /**
     * @return the source's rejections of reads of an ended session (being revoked, or revoked and gone).
     */
    private long rejectedEndedSessions()
    {
        return stat(BuiltinTransportStats.REJECTED_REVOKED) + stat(BuiltinTransportStats.REJECTED_UNKNOWN_SESSION);
    }

    /**
     * Publish a sealed block whose bytes are its key's number.
     *
     * @return its insertion sequence.
     */
    private long publish(final int key, final int length)
    {
        final int entry = store.reserve(namespaceId, hash(key), 0, 8, length);
        assertTrue(entry >= 0, "reserved");
        final long offset = store.offset(entry);
        for (int i = 0; i < length; i++)
        {
            store.pool().set(ValueLayout.JAVA_BYTE, offset + i, (byte)key);
        }
        store.seal(entry, store.computePoolCrc32c(offset, length));
        return store.dram().insertionSequence(entry);
    }

    private static UnsafeBuffer hash(final int key)
    {
        final UnsafeBuffer hash = new UnsafeBuffer(new byte[8]);
        hash.putLong(0, 0x5EED_0000_0000L + key);
        return hash;
    }

    private int entryOf(final int key)
    {
        return store.dram().findReady(namespaceId, hash(key), 0, 8);
    }

    private long addressOf(final int key)
    {
        return store.pool().address() + store.offset(entryOf(key));
    }

    /**
     * Encode an authorization of (key, sequence, expected bytes) triples.
     */
    private TransferAuthorizeDecoder authorize(final long requesterSessionId, final long... triples)
    {
        final int keys = triples.length / 3;
        long sum = 0;
        for (int i = 0; i < keys; i++)
        {
            sum += triples[3 * i + 2];
        }
        return authorizeRaw(requesterSessionId, sum, NAMESPACE.length, 8, triples);
    }

    private TransferAuthorizeDecoder authorizeRaw(
        final long requesterSessionId, final long maxBytes, final int namespaceLength, final int hashLength,
        final long... triples)
    {
        final TransferAuthorizeEncoder encoder = new TransferAuthorizeEncoder().wrapAndApplyHeader(frame, 0, headerEncoder);
        encoder.route().destinationIncarnation().msb(SELF_MSB).lsb(SELF_LSB);
        encoder.route().senderIncarnation().msb(REQUESTER_MSB).lsb(REQUESTER_LSB);
        encoder.peerSessionId(77).correlationId(1000 + requesterSessionId).requesterSessionId(requesterSessionId)
            .operationId(5).maxBytes(maxBytes).requesterNodeIndex(2);
        final int keys = triples.length / 3;
        final TransferAuthorizeEncoder.KeysEncoder group = encoder.keysCount(keys);
        for (int i = 0; i < keys; i++)
        {
            group.next()
                .tier(tier)
                .insertionSequence(triples[3 * i + 1])
                .expectedBytes((int)triples[3 * i + 2])
                .putKeyHash(hash((int)triples[3 * i]), 0, hashLength);
        }
        final UnsafeBuffer ns = new UnsafeBuffer(new byte[256]);
        ns.putBytes(0, NAMESPACE);
        encoder.putKeyNamespace(ns, 0, namespaceLength);
        return wrapAuthorize();
    }

    private TransferAuthorizeDecoder wrapAuthorize()
    {
        headerDecoder.wrap(frame, 0);
        return authorizeDecoder.wrap(
            frame, MessageHeaderDecoder.ENCODED_LENGTH, headerDecoder.blockLength(), headerDecoder.version());
    }

    private TransferReleaseDecoder release(final long transferSessionId, final long requesterSessionId)
    {
        final TransferReleaseEncoder encoder = new TransferReleaseEncoder().wrapAndApplyHeader(frame, 0, headerEncoder);
        encoder.route().destinationIncarnation().msb(SELF_MSB).lsb(SELF_LSB);
        encoder.route().senderIncarnation().msb(REQUESTER_MSB).lsb(REQUESTER_LSB);
        encoder.peerSessionId(77).correlationId(9).transferSessionId(transferSessionId)
            .requesterSessionId(requesterSessionId).reason(ReleaseReason.COMPLETED);
        headerDecoder.wrap(frame, 0);
        return releaseDecoder.wrap(
            frame, MessageHeaderDecoder.ENCODED_LENGTH, headerDecoder.blockLength(), headerDecoder.version());
    }

    private long counter(final CounterDescriptor descriptor)
    {
        return counters.get(descriptor).get();
    }

    // ---------------------------------------------------------------------------------------------------------------

    @Test
    void shouldGrantEveryValidKeyWithItsPoolAddressAndChargeWholeAllocations()
    {
        start(true, 1L << 20, 16, 4);
        final long seq0 = publish(0, BLOCK_LENGTH);
        final long seq1 = publish(1, BLOCK_LENGTH);

        source.onAuthorize(session, authorize(1, 0, seq0, BLOCK_LENGTH, 1, seq1, BLOCK_LENGTH), nowNs);

        final TransferGrantDecoder grant = channel.grant();
        assertEquals(TransferStatus.OK, grant.status());
        assertEquals(2, grant.grantedKeys());
        assertEquals(1, grant.requesterSessionId());
        assertEquals(1001, grant.correlationId());
        assertEquals(REQUESTER_MSB, grant.route().destinationIncarnation().msb());
        assertEquals(SELF_MSB, grant.route().senderIncarnation().msb());
        assertEquals((int)(TTL_NS / 1_000_000), grant.ttlMs());
        final long sessionId = grant.transferSessionId();
        final long token = grant.token();
        assertNotEquals(0, sessionId);
        final long[] addresses = new long[2];
        final TransferGrantDecoder.KeysDecoder keys = grant.keys();
        assertEquals(2, keys.count());
        for (int key = 0; key < 2; key++)
        {
            keys.next();
            assertEquals(TransferStatus.OK, keys.status());
            assertEquals(BLOCK_LENGTH, keys.length());
            addresses[key] = keys.address();
            assertEquals(addressOf(key), addresses[key]);
            assertEquals(1, store.dram().pinCount(entryOf(key)));
        }
        assertEquals(transport.localEndpoint(), grant.transportEndpoint());
        assertEquals(1, builtin.sessionsHeld());
        assertEquals(2L * BLOCK_CHARGE, counter(TransferCounter.SOURCE_PINNED_BYTES));
        assertEquals(1, counter(TransferCounter.SOURCE_SESSIONS_ACTIVE));
        assertEquals(1, counter(TransferCounter.SOURCE_GRANTS));
        assertEquals(2, counter(TransferCounter.SOURCE_GRANTED_KEYS));

        // The grant is what the transport serves: each block under the granted session and token, nothing else.
        for (int key = 0; key < 2; key++)
        {
            assertEquals(TransportStatus.OK, read(sessionId, token, addresses[key], BLOCK_LENGTH), "key " + key);
            assertEquals((byte)key, staging.get(ValueLayout.JAVA_BYTE, BLOCK_LENGTH - 1), "the block's own bytes");
        }
        assertEquals(TransportStatus.OK, read(sessionId, token, addresses[1] + 100, 200), "a part of a granted block");
        assertEquals(TransportStatus.REJECTED, read(sessionId, token ^ 1, addresses[0], BLOCK_LENGTH));
        assertEquals(1, stat(BuiltinTransportStats.REJECTED_TOKEN));
        assertEquals(TransportStatus.REJECTED, read(sessionId, token, addresses[0], BLOCK_LENGTH + 1),
            "the export is the block's length, not its allocation");
        assertEquals(1, stat(BuiltinTransportStats.REJECTED_RANGE));
        assertEquals(TransportStatus.REJECTED, read(sessionId + 1, token, addresses[0], BLOCK_LENGTH));
        assertEquals(1, stat(BuiltinTransportStats.REJECTED_UNKNOWN_SESSION));
    }

    @Test
    void shouldGrantTheLeadingRunAndMarkKeysAfterTheFirstRefusedOneNotAttempted()
    {
        start(true, 1L << 20, 16, 4);
        final long seq0 = publish(0, BLOCK_LENGTH);
        final long seq1 = publish(1, BLOCK_LENGTH);
        final long seq2 = publish(2, BLOCK_LENGTH);

        source.onAuthorize(session,
            authorize(1, 0, seq0, BLOCK_LENGTH, 1, seq1 + 100, BLOCK_LENGTH, 2, seq2, BLOCK_LENGTH), nowNs);

        final TransferGrantDecoder grant = channel.grant();
        assertEquals(TransferStatus.OK, grant.status());
        assertEquals(1, grant.grantedKeys());
        final long sessionId = grant.transferSessionId();
        final long token = grant.token();
        final TransferGrantDecoder.KeysDecoder keys = grant.keys();
        assertEquals(3, keys.count());
        assertEquals(TransferStatus.OK, keys.next().status());
        assertEquals(TransferStatus.STALE_SEQUENCE, keys.next().status());
        assertEquals(0, keys.address());
        assertEquals(TransferStatus.NOT_ATTEMPTED, keys.next().status());
        assertEquals(1, store.dram().pinCount(entryOf(0)));
        assertEquals(0, store.dram().pinCount(entryOf(1)));
        assertEquals(0, store.dram().pinCount(entryOf(2)), "nothing after the refused key is pinned");
        assertEquals(1, counter(TransferCounter.SOURCE_PARTIAL_GRANTS));
        assertEquals(1, counter(TransferCounter.SOURCE_REJECTED_STALE_SEQUENCE));

        assertEquals(TransportStatus.OK, read(sessionId, token, addressOf(0), BLOCK_LENGTH));
        assertEquals(TransportStatus.REJECTED, read(sessionId, token, addressOf(1), BLOCK_LENGTH),
            "the refused key is not exported");
        assertEquals(TransportStatus.REJECTED, read(sessionId, token, addressOf(2), BLOCK_LENGTH),
            "nor is any key after it");
        assertEquals(2, stat(BuiltinTransportStats.REJECTED_RANGE));
    }

    @Test
    void shouldRejectWithNothingPinnedWhenTheFirstKeyIsRefused()
    {
        start(true, 1L << 20, 16, 4);
        final long seq0 = publish(0, BLOCK_LENGTH);
        final long seq1 = publish(1, BLOCK_LENGTH);

        source.onAuthorize(session, authorize(1, 9, 1, BLOCK_LENGTH, 1, seq1, BLOCK_LENGTH), nowNs);
        assertRejected(TransferStatus.MISSING, 2);
        source.onAuthorize(session, authorize(2, 0, seq0 + 7, BLOCK_LENGTH), nowNs);
        assertRejected(TransferStatus.STALE_SEQUENCE, 1);
        source.onAuthorize(session, authorize(3, 0, seq0, BLOCK_LENGTH - 1), nowNs);
        assertRejected(TransferStatus.LENGTH_MISMATCH, 1);
        // The key is in DRAM, but the requester names an SSD residence: this source has no SSD tier, so it is
        // MISSING here, whatever DRAM holds (a source serves the residence it was asked for, never another's).
        tier = TransferTier.SSD;
        source.onAuthorize(session, authorize(4, 0, seq0, BLOCK_LENGTH), nowNs);
        assertRejected(TransferStatus.MISSING, 1);
        tier = TransferTier.DRAM;

        assertEquals(0, store.dram().pinCount(entryOf(0)));
        assertEquals(0, store.dram().pinCount(entryOf(1)));
        assertEquals(0, builtin.sessionsHeld(), "a rejection exports nothing");
        assertEquals(0, source.holds().activeCount());
        assertEquals(2, counter(TransferCounter.SOURCE_REJECTED_MISSING));
        assertEquals(1, counter(TransferCounter.SOURCE_REJECTED_STALE_SEQUENCE));
        assertEquals(1, counter(TransferCounter.SOURCE_REJECTED_LENGTH_MISMATCH));
    }

    private void assertRejected(final TransferStatus status, final int keyCount)
    {
        final TransferGrantDecoder grant = channel.grant();
        assertEquals(status, grant.status());
        assertEquals(0, grant.transferSessionId());
        assertEquals(0, grant.grantedKeys());
        final TransferGrantDecoder.KeysDecoder keys = grant.keys();
        assertEquals(keyCount, keys.count());
        while (keys.hasNext())
        {
            keys.next();
            assertEquals(0, keys.address(), "a rejection names no address");
        }
        assertEquals("", grant.transportEndpoint());
    }

    @Test
    void shouldAcceptExactlyTheBudgetAndRefuseOneByteOver()
    {
        start(true, 2L * BLOCK_CHARGE, 16, 4);
        final long seq0 = publish(0, BLOCK_LENGTH);
        final long seq1 = publish(1, BLOCK_LENGTH);
        source.onAuthorize(session, authorize(1, 0, seq0, BLOCK_LENGTH, 1, seq1, BLOCK_LENGTH), nowNs);
        final TransferGrantDecoder full = channel.grant();
        assertEquals(2, full.grantedKeys(), "two whole allocations fill the budget exactly");
        assertEquals(2L * BLOCK_CHARGE, source.holds().chargedBytes());
        assertEquals(TransportStatus.OK, read(full.transferSessionId(), full.token(), addressOf(1), BLOCK_LENGTH));

        start(true, 2L * BLOCK_CHARGE - 1, 16, 4);
        final long seq2 = publish(2, BLOCK_LENGTH);
        final long seq3 = publish(3, BLOCK_LENGTH);
        source.onAuthorize(session, authorize(1, 2, seq2, BLOCK_LENGTH, 3, seq3, BLOCK_LENGTH), nowNs);
        final TransferGrantDecoder grant = channel.grant();
        assertEquals(1, grant.grantedKeys(), "one byte short of the second allocation");
        final long sessionId = grant.transferSessionId();
        final long token = grant.token();
        final TransferGrantDecoder.KeysDecoder keys = grant.keys();
        keys.next();
        assertEquals(TransferStatus.OVER_BUDGET, keys.next().status());
        assertEquals(1, counter(TransferCounter.SOURCE_REJECTED_OVER_BUDGET));
        assertEquals(TransportStatus.OK, read(sessionId, token, addressOf(2), BLOCK_LENGTH));
        assertEquals(TransportStatus.REJECTED, read(sessionId, token, addressOf(3), BLOCK_LENGTH),
            "the key over budget is not exported");

        source.onAuthorize(session, authorize(2, 3, seq3, BLOCK_LENGTH), nowNs);
        assertRejected(TransferStatus.OVER_BUDGET, 1);
        assertEquals(1, builtin.sessionsHeld());
    }

    @Test
    void shouldRefuseBeyondTheSessionLimitAndThePerPeerLimit()
    {
        start(true, 1L << 20, 3, 2);
        final long seq0 = publish(0, BLOCK_LENGTH);
        source.onAuthorize(session, authorize(1, 0, seq0, BLOCK_LENGTH), nowNs);
        assertEquals(TransferStatus.OK, channel.grant().status());
        source.onAuthorize(session, authorize(2, 0, seq0, BLOCK_LENGTH), nowNs);
        assertEquals(TransferStatus.OK, channel.grant().status(), "the second session of a peer is at its limit");
        source.onAuthorize(session, authorize(3, 0, seq0, BLOCK_LENGTH), nowNs);
        assertRejected(TransferStatus.PEER_LIMIT, 0);
        assertEquals(1, counter(TransferCounter.SOURCE_REJECTED_PEER_LIMIT));

        source.onAuthorize(otherSession, authorize(1, 0, seq0, BLOCK_LENGTH), nowNs);
        final TransferGrantDecoder last = channel.grant();
        assertEquals(TransferStatus.OK, last.status(), "another peer takes the last session");
        final long lastSessionId = last.transferSessionId();
        final long lastToken = last.token();
        source.onAuthorize(otherSession, authorize(2, 0, seq0, BLOCK_LENGTH), nowNs);
        assertRejected(TransferStatus.TOO_MANY_SESSIONS, 0);
        assertEquals(1, counter(TransferCounter.SOURCE_REJECTED_TOO_MANY_SESSIONS));
        assertEquals(3, store.dram().pinCount(entryOf(0)));
        assertEquals(3, builtin.sessionsHeld(), "one export per granted session, none for a refusal");
        assertEquals(TransportStatus.OK, read(lastSessionId, lastToken, addressOf(0), BLOCK_LENGTH));
    }

    @Test
    void shouldAcceptTheMostKeysAndRefuseOneMoreAsMalformed()
    {
        start(true, 64L << 20, 16, 4);
        final long[] triples = new long[3 * (TransferLimits.MAX_KEYS_PER_AUTHORIZE + 1)];
        for (int key = 0; key <= TransferLimits.MAX_KEYS_PER_AUTHORIZE; key++)
        {
            triples[3 * key] = key;
            triples[3 * key + 1] = publish(key, BLOCK_LENGTH);
            triples[3 * key + 2] = BLOCK_LENGTH;
        }
        source.onAuthorize(session, authorize(1, java.util.Arrays.copyOf(triples, triples.length - 3)), nowNs);
        final TransferGrantDecoder grant = channel.grant();
        assertEquals(TransferLimits.MAX_KEYS_PER_AUTHORIZE, grant.grantedKeys());
        final int lastKey = TransferLimits.MAX_KEYS_PER_AUTHORIZE - 1;
        assertEquals(TransportStatus.OK,
            read(grant.transferSessionId(), grant.token(), addressOf(lastKey), BLOCK_LENGTH), "the last range exported");

        source.onAuthorize(session, authorize(2, triples), nowNs);
        assertRejected(TransferStatus.MALFORMED, 0);
        assertEquals(0, store.dram().pinCount(entryOf(TransferLimits.MAX_KEYS_PER_AUTHORIZE)));
        assertEquals(1, counter(TransferCounter.SOURCE_REJECTED_MALFORMED));
        assertEquals(1, builtin.sessionsHeld());
    }

    @Test
    void shouldRefuseMalformedFramesWithoutTouchingTheStore()
    {
        start(true, 1L << 20, 16, 4);
        final long seq0 = publish(0, BLOCK_LENGTH);

        source.onAuthorize(session, authorizeRaw(1, BLOCK_LENGTH + 1, NAMESPACE.length, 8, 0, seq0, BLOCK_LENGTH), nowNs);
        assertRejected(TransferStatus.MALFORMED, 0);
        source.onAuthorize(session, authorizeRaw(2, BLOCK_LENGTH, NAMESPACE.length, 0, 0, seq0, BLOCK_LENGTH), nowNs);
        assertRejected(TransferStatus.MALFORMED, 0);
        source.onAuthorize(session, authorizeRaw(3, BLOCK_LENGTH, 0, 8, 0, seq0, BLOCK_LENGTH), nowNs);
        assertRejected(TransferStatus.MALFORMED, 0);
        source.onAuthorize(session, authorizeRaw(4, 0, NAMESPACE.length, 8, 0, seq0, 0), nowNs);
        assertRejected(TransferStatus.MALFORMED, 0);
        source.onAuthorize(session, authorize(5), nowNs);
        assertRejected(TransferStatus.MALFORMED, 0);

        // A group count far past the frame: the bounded view stops the read.
        authorize(6, 0, seq0, BLOCK_LENGTH);
        final int groupOffset = MessageHeaderDecoder.ENCODED_LENGTH + TransferAuthorizeDecoder.BLOCK_LENGTH;
        final int length = MessageHeaderDecoder.ENCODED_LENGTH + wrapAuthorize().sbeDecodedLength();
        frame.putShort(groupOffset + 2, (short)100);
        final UnsafeBuffer bounded = new UnsafeBuffer(frame, 0, length);
        headerDecoder.wrap(bounded, 0);
        source.onAuthorize(session, authorizeDecoder.wrap(bounded, MessageHeaderDecoder.ENCODED_LENGTH,
            headerDecoder.blockLength(), headerDecoder.version()), nowNs);
        assertRejected(TransferStatus.MALFORMED, 0);

        assertEquals(6, counter(TransferCounter.SOURCE_REJECTED_MALFORMED));
        assertEquals(0, store.dram().pinCount(entryOf(0)));
        assertEquals(0, builtin.sessionsHeld(), "nothing exported");
    }

    @Test
    void shouldRefuseWhenFencedOrTheRequesterIsUnknownButStillReleaseHeldSessions()
    {
        start(true, 1L << 20, 16, 4);
        final long seq0 = publish(0, BLOCK_LENGTH);
        source.onAuthorize(session, authorize(1, 0, seq0, BLOCK_LENGTH), nowNs);
        final TransferGrantDecoder grant = channel.grant();
        final long held = grant.transferSessionId();
        final long token = grant.token();

        members.grantsAllowed = false;
        source.onAuthorize(session, authorize(2, 0, seq0, BLOCK_LENGTH), nowNs);
        assertRejected(TransferStatus.FENCED, 0);
        assertEquals(1, counter(TransferCounter.SOURCE_REJECTED_FENCED));
        assertEquals(1, builtin.sessionsHeld(), "a fenced refusal exports nothing");
        assertEquals(TransportStatus.OK, read(held, token, addressOf(0), BLOCK_LENGTH), "a held grant is still served");

        source.onRelease(session, release(held, 1));
        assertEquals(TransferStatus.OK, channel.ack().status(), "a fenced source still releases");
        source.doWork(nowNs);
        awaitRevocations(1);
        assertEquals(0, store.dram().pinCount(entryOf(0)));
        assertEquals(TransportStatus.REJECTED, read(held, token, addressOf(0), BLOCK_LENGTH));

        members.grantsAllowed = true;
        members.remove(OTHER_MSB, OTHER_LSB);
        source.onAuthorize(otherSession, authorize(3, 0, seq0, BLOCK_LENGTH), nowNs);
        assertRejected(TransferStatus.UNKNOWN_REQUESTER, 0);
        assertEquals(1, counter(TransferCounter.SOURCE_REJECTED_UNKNOWN_REQUESTER));
        assertEquals(0, builtin.sessionsHeld());
    }

    @Test
    void shouldAnswerADuplicateAuthorizeWithTheSameGrantWithoutPinningAgain()
    {
        start(true, 1L << 20, 16, 4);
        final long seq0 = publish(0, BLOCK_LENGTH);
        source.onAuthorize(session, authorize(1, 0, seq0, BLOCK_LENGTH), nowNs);
        final TransferGrantDecoder first = channel.grant();
        final long sessionId = first.transferSessionId();
        final long token = first.token();

        source.onAuthorize(session, authorize(1, 0, seq0, BLOCK_LENGTH), nowNs);
        final TransferGrantDecoder again = channel.grant();
        assertEquals(sessionId, again.transferSessionId());
        assertEquals(token, again.token());
        assertEquals(1, again.grantedKeys());
        assertEquals(1, store.dram().pinCount(entryOf(0)), "pinned once");
        assertEquals(1, builtin.sessionsHeld(), "exported once");
        assertEquals(0, stat(BuiltinTransportStats.EXPORTS_REFUSED), "the session id was not exported again");
        assertEquals(1, counter(TransferCounter.SOURCE_DUPLICATE_AUTHORIZES));
        assertEquals((long)BLOCK_CHARGE, source.holds().chargedBytes());
        assertEquals(TransportStatus.OK, read(sessionId, token, addressOf(0), BLOCK_LENGTH));
    }

    @Test
    void shouldRevokeOnReleaseUnpinOnRevokedAndAnswerRepeatedReleasesHarmlessly()
    {
        start(true, 1L << 20, 16, 4);
        final long seq0 = publish(0, BLOCK_LENGTH);
        source.onAuthorize(session, authorize(1, 0, seq0, BLOCK_LENGTH), nowNs);
        final TransferGrantDecoder grant = channel.grant();
        final long sessionId = grant.transferSessionId();
        final long token = grant.token();
        final long address = addressOf(0);
        assertEquals(TransportStatus.OK, read(sessionId, token, address, BLOCK_LENGTH));
        revocations.watchedEntry = entryOf(0);

        source.onRelease(session, release(sessionId, 1));
        assertEquals(TransferStatus.OK, channel.ack().status());
        assertEquals(sessionId, channel.ack().transferSessionId());
        assertEquals(TransportStatus.REJECTED, read(sessionId, token, address, BLOCK_LENGTH), "revoked at release");
        assertEquals(1, rejectedEndedSessions());
        assertEquals(1, store.dram().pinCount(entryOf(0)), "pinned until the transport proves no send is running");

        source.onRelease(session, release(sessionId, 1));
        assertEquals(TransferStatus.UNKNOWN_SESSION, channel.ack().status());
        awaitRevocations(1);
        assertEquals(1, revocations.pinsAtLastRevocation, "still pinned when onRevoked arrived");
        assertEquals(0, store.dram().pinCount(entryOf(0)));
        assertEquals(1, counter(TransferCounter.SOURCE_REVOCATIONS_COMPLETED));
        assertEquals(0, source.holds().chargedBytes());
        assertEquals(0, builtin.sessionsHeld());

        source.onRelease(session, release(sessionId, 1));
        assertEquals(TransferStatus.UNKNOWN_SESSION, channel.ack().status());
        // The transport answers a revocation of a session it no longer holds with onRevoked as well.
        transport.revoke(sessionId);
        awaitRevocations(2);
        assertEquals(0, store.dram().pinCount(entryOf(0)), "never unpinned twice");
        assertEquals(1, counter(TransferCounter.SOURCE_REVOCATIONS_COMPLETED));
        assertEquals(2, counter(TransferCounter.SOURCE_DUPLICATE_RELEASES));
        assertEquals(1, counter(TransferCounter.SOURCE_RELEASES));
        assertEquals(TransportStatus.REJECTED, read(sessionId, token, address, BLOCK_LENGTH));
        assertEquals(2, rejectedEndedSessions());

        source.onRelease(session, release(12345, 1));
        assertEquals(TransferStatus.UNKNOWN_SESSION, channel.ack().status());
        assertEquals(1, counter(TransferCounter.SOURCE_UNKNOWN_SESSION_RELEASES));
    }

    @Test
    void shouldKeepThePinsOfAReleasedSessionWhileTheTransportIsStillSendingIt() throws IOException
    {
        // Small socket buffers and a requester that does not read: the source's send of the block cannot finish.
        sourceContext.socketSendBufferBytes(4096).sendStallTimeoutNs(TimeUnit.SECONDS.toNanos(50));
        start(true, 4L << 20, 16, 4);
        final int length = 1 << 20;
        final long seq0 = publish(7, length);
        source.onAuthorize(session, authorize(1, 7, seq0, length), nowNs);
        final TransferGrantDecoder grant = channel.grant();
        assertEquals(TransferStatus.OK, grant.status());
        final long sessionId = grant.transferSessionId();
        final long token = grant.token();
        final long address = addressOf(7);
        revocations.watchedEntry = entryOf(7);

        try (SocketChannel stalled = SocketChannel.open())
        {
            stalled.setOption(StandardSocketOptions.SO_RCVBUF, 4096);
            final String endpoint = transport.localEndpoint();
            final int colon = endpoint.lastIndexOf(':');
            stalled.connect(new InetSocketAddress(endpoint.substring(0, colon), Integer.parseInt(endpoint.substring(colon + 1))));
            final ByteBuffer request = ByteBuffer.allocate(HELLO_BYTES + REQUEST_BYTES).order(ByteOrder.LITTLE_ENDIAN);
            request.putInt(HELLO_MAGIC).putShort((short)1).putShort((short)0);
            request.putInt(1).putInt(length).putLong(1).putLong(sessionId).putLong(token).putLong(address).flip();
            while (request.hasRemaining())
            {
                stalled.write(request);
            }
            awaitStat(BuiltinTransportStats.SENDS_IN_PROGRESS, 1);

            source.onRelease(session, release(sessionId, 1));
            assertEquals(TransferStatus.OK, channel.ack().status());
            assertEquals(TransportStatus.REJECTED, read(sessionId, token, address, BLOCK_LENGTH));
            assertEquals(1, stat(BuiltinTransportStats.REJECTED_REVOKED),
                "judged after the revocation, while the session's send still runs");
            transport.poll(revocations, 16);
            assertEquals(0, revocations.delivered, "no revocation while a send of it runs");
            assertEquals(1, store.dram().pinCount(entryOf(7)), "the bytes being sent stay pinned");
            assertEquals(1, source.holds().activeCount());

            // The requester reads on: the send ends, the revocation completes, the pins go.
            final ByteBuffer response = ByteBuffer.allocate(RESPONSE_HEADER_BYTES + length).order(ByteOrder.LITTLE_ENDIAN);
            while (response.hasRemaining())
            {
                if (stalled.read(response) < 0)
                {
                    fail("the source closed the stalled connection");
                }
            }
            assertEquals(TransportStatus.OK, response.getInt(8));
            assertEquals(length, response.getInt(12));
            assertEquals(-1, MemorySegment.ofBuffer(response.position(RESPONSE_HEADER_BYTES).slice())
                .mismatch(MemorySegment.ofAddress(address).reinterpret(length)), "the whole block, byte for byte");
        }
        awaitRevocations(1);
        assertEquals(1, revocations.pinsAtLastRevocation, "still pinned when onRevoked arrived");
        assertEquals(0, store.dram().pinCount(entryOf(7)));
        assertEquals(0, source.holds().activeCount());
        assertEquals(1, counter(TransferCounter.SOURCE_REVOCATIONS_COMPLETED));
    }

    @Test
    void shouldUnpinAtReleaseWhenTheTransportCannotRevoke()
    {
        start(false, 1L << 20, 16, 4);
        final long seq0 = publish(0, BLOCK_LENGTH);
        source.onAuthorize(session, authorize(1, 0, seq0, BLOCK_LENGTH), nowNs);
        final TransferGrantDecoder grant = channel.grant();
        final long sessionId = grant.transferSessionId();
        grant.keys().next();
        assertEquals(transport.localEndpoint(), grant.transportEndpoint());
        assertEquals(1, mooncake.exportedSessions());
        assertEquals(TransportStatus.OK, read(sessionId, grant.token(), addressOf(0), BLOCK_LENGTH),
            "a one-sided read of the granted address");

        source.onRelease(session, release(sessionId, 1));
        assertEquals(TransferStatus.OK, channel.ack().status());
        assertEquals(0, store.dram().pinCount(entryOf(0)), "the requester's release says its reads ended");
        assertEquals(1, mooncake.revokedSessions(), "the export is withdrawn");
        assertEquals(0, transport.poll(revocations, 16), "nothing to wait for");
        source.onRelease(session, release(sessionId, 1));
        assertEquals(TransferStatus.UNKNOWN_SESSION, channel.ack().status());
        assertEquals(0, store.dram().pinCount(entryOf(0)));
        assertEquals(1, mooncake.revokedSessions());
    }

    @Test
    void shouldRevokeAnExpiredSessionAndUnpinOnceRevoked()
    {
        start(true, 1L << 20, 16, 4);
        final long seq0 = publish(0, BLOCK_LENGTH);
        source.onAuthorize(session, authorize(1, 0, seq0, BLOCK_LENGTH), nowNs);
        final TransferGrantDecoder grant = channel.grant();
        final long sessionId = grant.transferSessionId();
        final long token = grant.token();
        final long address = addressOf(0);
        assertEquals(nowNs + TTL_NS, source.nextDeadlineNs());
        revocations.watchedEntry = entryOf(0);

        assertEquals(0, source.doWork(nowNs + TTL_NS - 1));
        assertEquals(TransportStatus.OK, read(sessionId, token, address, BLOCK_LENGTH), "served until its deadline");
        assertEquals(1, source.doWork(nowNs + TTL_NS));
        assertEquals(TransportStatus.REJECTED, read(sessionId, token, address, BLOCK_LENGTH), "revoked at expiry");
        assertEquals(1, rejectedEndedSessions());
        assertEquals(1, counter(TransferCounter.SOURCE_EXPIRIES));
        assertEquals(1, store.dram().pinCount(entryOf(0)));
        assertEquals(Long.MAX_VALUE, source.nextDeadlineNs(), "nothing else to wake for");

        awaitRevocations(1);
        assertEquals(1, revocations.pinsAtLastRevocation, "still pinned when onRevoked arrived");
        assertEquals(0, store.dram().pinCount(entryOf(0)));
        assertEquals(1, counter(TransferCounter.SOURCE_REVOCATIONS_COMPLETED));
        assertEquals(0, builtin.sessionsHeld());
        source.onRelease(session, release(sessionId, 1));
        assertEquals(TransferStatus.UNKNOWN_SESSION, channel.ack().status());
    }

    @Test
    void shouldQuarantineAnExpiredSessionUntilItsRequesterLeavesTheView()
    {
        start(false, 1L << 20, 16, 4);
        final long seq0 = publish(0, BLOCK_LENGTH);
        source.onAuthorize(session, authorize(1, 0, seq0, BLOCK_LENGTH), nowNs);
        final TransferGrantDecoder grant = channel.grant();
        final long sessionId = grant.transferSessionId();
        final long token = grant.token();

        source.doWork(nowNs + TTL_NS);
        assertEquals(1, mooncake.revokedSessions(), "new reads are refused as far as the transport can");
        assertEquals(1, counter(TransferCounter.SOURCE_QUARANTINED_SESSIONS));
        assertEquals((long)BLOCK_CHARGE, counter(TransferCounter.SOURCE_QUARANTINED_BYTES));
        assertEquals(1, store.dram().pinCount(entryOf(0)));
        assertEquals(TransportStatus.OK, read(sessionId, token, addressOf(0), BLOCK_LENGTH),
            "a one-sided read still reaches the expired range: why its pins stay");
        assertEquals(0, transport.poll(revocations, 16), "no revocation is ever proven");

        for (long later = 1; later <= 10; later++)
        {
            source.doWork(nowNs + later * TTL_NS);
        }
        members.version++;
        source.doWork(nowNs + 11 * TTL_NS);
        assertEquals(1, store.dram().pinCount(entryOf(0)), "no timeout-only reclamation while the requester is a member");
        assertEquals((long)BLOCK_CHARGE, source.holds().chargedBytes());
        assertEquals((long)BLOCK_CHARGE, counter(TransferCounter.SOURCE_PINNED_BYTES));

        members.remove(REQUESTER_MSB, REQUESTER_LSB);
        assertEquals(1, source.doWork(nowNs + 12 * TTL_NS));
        assertEquals(0, store.dram().pinCount(entryOf(0)));
        assertEquals(0, source.holds().chargedBytes());
        assertEquals(0, counter(TransferCounter.SOURCE_QUARANTINED_SESSIONS));
        assertEquals(0, counter(TransferCounter.SOURCE_QUARANTINED_BYTES));
        assertEquals(1, counter(TransferCounter.SOURCE_REQUESTERS_LOST));
        assertEquals(1, mooncake.revokedSessions(), "a quarantined session is not withdrawn twice");
    }

    @Test
    void shouldUnpinAGrantedSessionAtOnceWhenItsRequesterLeavesAndTheTransportCannotRevoke()
    {
        start(false, 1L << 20, 16, 4);
        final long seq0 = publish(0, BLOCK_LENGTH);
        source.onAuthorize(session, authorize(1, 0, seq0, BLOCK_LENGTH), nowNs);
        assertEquals(TransferStatus.OK, channel.grant().status());
        source.onAuthorize(otherSession, authorize(1, 0, seq0, BLOCK_LENGTH), nowNs);
        assertEquals(2, store.dram().pinCount(entryOf(0)));

        members.remove(REQUESTER_MSB, REQUESTER_LSB);
        assertEquals(1, source.doWork(nowNs));
        assertEquals(1, store.dram().pinCount(entryOf(0)), "the lost requester's incarnation reads nothing more");
        assertEquals(1, mooncake.revokedSessions());
        assertEquals(1, source.holds().activeCount(), "the other requester's session stays");
        assertEquals(1, counter(TransferCounter.SOURCE_REQUESTERS_LOST));
    }

    @Test
    void shouldRevokeTheSessionsOfARequesterThatLeftTheView()
    {
        start(true, 1L << 20, 16, 4);
        final long seq0 = publish(0, BLOCK_LENGTH);
        source.onAuthorize(session, authorize(1, 0, seq0, BLOCK_LENGTH), nowNs);
        final TransferGrantDecoder lost = channel.grant();
        final long lostSessionId = lost.transferSessionId();
        final long lostToken = lost.token();
        source.onAuthorize(otherSession, authorize(1, 0, seq0, BLOCK_LENGTH), nowNs);
        final TransferGrantDecoder kept = channel.grant();
        final long keptSessionId = kept.transferSessionId();
        final long keptToken = kept.token();
        assertEquals(2, store.dram().pinCount(entryOf(0)));
        revocations.watchedEntry = entryOf(0);

        members.remove(REQUESTER_MSB, REQUESTER_LSB);
        source.doWork(nowNs);
        assertEquals(TransportStatus.REJECTED, read(lostSessionId, lostToken, addressOf(0), BLOCK_LENGTH));
        assertEquals(1, rejectedEndedSessions());
        assertEquals(TransportStatus.OK, read(keptSessionId, keptToken, addressOf(0), BLOCK_LENGTH));
        awaitRevocations(1);
        assertEquals(2, revocations.pinsAtLastRevocation, "both pins held until onRevoked arrived");
        assertEquals(1, store.dram().pinCount(entryOf(0)), "the other requester's session stays");
        assertEquals(1, source.holds().activeCount());
        assertEquals(1, builtin.sessionsHeld());
        assertEquals(1, counter(TransferCounter.SOURCE_REQUESTERS_LOST));
    }

    @Test
    void shouldUndoThePinsWhenTheTransportRefusesTheExport()
    {
        sourceContext.maxSessions(2);
        start(true, 1L << 20, 16, 4);
        final long seq0 = publish(0, BLOCK_LENGTH);
        final long seq1 = publish(1, BLOCK_LENGTH);
        // The transport's sessions are taken, so it refuses the next export.
        assertTrue(transport.export(998, 1, new long[]{addressOf(1)}, new int[]{BLOCK_LENGTH}, 1));
        assertTrue(transport.export(999, 1, new long[]{addressOf(1)}, new int[]{BLOCK_LENGTH}, 1));

        source.onAuthorize(session, authorize(1, 0, seq0, BLOCK_LENGTH, 1, seq1, BLOCK_LENGTH), nowNs);
        assertRejected(TransferStatus.ERROR, 0);
        final TransferGrantDecoder refused = channel.grant();
        refused.keys();
        refused.transportEndpoint();
        assertEquals("the transport would not export the session", refused.message());
        assertEquals(1, stat(BuiltinTransportStats.EXPORTS_REFUSED));
        assertEquals(0, store.dram().pinCount(entryOf(0)));
        assertEquals(0, store.dram().pinCount(entryOf(1)));
        assertEquals(0, source.holds().activeCount());
        assertEquals(0, source.holds().chargedBytes());
        assertEquals(0, counter(TransferCounter.SOURCE_PINNED_BYTES));
        assertEquals(1, counter(TransferCounter.SOURCE_REJECTED_EXPORT));

        // Once the transport has room again the same keys are granted.
        transport.revoke(999);
        awaitRevocations(1);
        source.onAuthorize(session, authorize(2, 0, seq0, BLOCK_LENGTH, 1, seq1, BLOCK_LENGTH), nowNs);
        final TransferGrantDecoder grant = channel.grant();
        assertEquals(TransferStatus.OK, grant.status());
        // The grant's bytes are readable.
        assertEquals(TransportStatus.OK, read(grant.transferSessionId(), grant.token(), addressOf(1), BLOCK_LENGTH));
    }

    @Test
    void shouldReadAFlippedByteOfTheFirstGrantedBlockOnceThroughTheFaultInjectingTransport()
    {
        start(true, 1L << 20, 16, 4, true);
        final long seq0 = publish(0, BLOCK_LENGTH);
        final long seq1 = publish(1, BLOCK_LENGTH);
        final long offset0 = store.offset(entryOf(0));
        source.onAuthorize(session, authorize(1, 0, seq0, BLOCK_LENGTH, 1, seq1, BLOCK_LENGTH), nowNs);
        final TransferGrantDecoder grant = channel.grant();
        assertEquals((byte)1, store.pool().get(ValueLayout.JAVA_BYTE, offset0), "0 ^ 1");
        assertEquals((byte)1, store.pool().get(ValueLayout.JAVA_BYTE, store.offset(entryOf(1))));
        assertEquals(TransportStatus.OK, read(grant.transferSessionId(), grant.token(), addressOf(0), BLOCK_LENGTH));
        assertEquals((byte)1, staging.get(ValueLayout.JAVA_BYTE, 0), "the requester reads the flipped byte");
        assertEquals((byte)0, staging.get(ValueLayout.JAVA_BYTE, 1));
        source.onAuthorize(session, authorize(2, 0, seq0, BLOCK_LENGTH), nowNs);
        assertEquals((byte)1, store.pool().get(ValueLayout.JAVA_BYTE, offset0), "flipped once only");
    }

    /**
     * Rounds of authorize, grant and release on the source's thread until a window of 500 rounds allocated nothing.
     * Mooncake's export and revoke only count, so what is measured is the source's own path; the built-in transport's
     * owner-side calls are measured by te-ffm's tests.
     */
    @Test
    void shouldAuthorizeGrantAndReleaseWithoutAllocating()
    {
        start(false, 1L << 20, 16, 4);
        final long seq0 = publish(0, BLOCK_LENGTH);
        final long seq1 = publish(1, BLOCK_LENGTH);
        final Rounds rounds = new Rounds();
        authorize(1, 0, seq0, BLOCK_LENGTH, 1, seq1, BLOCK_LENGTH);
        rounds.authorizeFrame.putBytes(0, frame, 0, rounds.authorizeFrame.capacity());
        release(1, 1);
        rounds.releaseFrame.putBytes(0, frame, 0, rounds.releaseFrame.capacity());
        final com.sun.management.ThreadMXBean threads =
            (com.sun.management.ThreadMXBean)java.lang.management.ManagementFactory.getThreadMXBean();
        threads.setThreadAllocatedMemoryEnabled(true);

        long allocated = -1;
        for (int window = 0; window < 30 && 0 != allocated; window++)
        {
            final long before = threads.getCurrentThreadAllocatedBytes();
            for (int i = 0; i < 500; i++)
            {
                rounds.run();
            }
            allocated = threads.getCurrentThreadAllocatedBytes() - before;
        }
        assertEquals(0, allocated, "bytes allocated in the last window of 500 authorize/grant/release rounds");
        assertEquals(0, store.dram().pinCount(entryOf(0)));
        assertEquals(0, store.dram().pinCount(entryOf(1)));
        assertEquals(0, source.holds().activeCount());
        assertTrue(mooncake.exportedSessions() >= 500);
        assertEquals(mooncake.exportedSessions(), mooncake.revokedSessions(), "every export withdrawn at its release");
    }

    /**
     * One authorize/grant/release round as the source's agent runs it, with its frames and views made once.
     */
    private final class Rounds
    {
        private static final int REQUESTER_SESSION_ID_OFFSET =
            MessageHeaderDecoder.ENCODED_LENGTH + TransferAuthorizeDecoder.requesterSessionIdEncodingOffset();
        private static final int RELEASE_TRANSFER_SESSION_ID_OFFSET =
            MessageHeaderDecoder.ENCODED_LENGTH + TransferReleaseDecoder.transferSessionIdEncodingOffset();
        private static final int RELEASE_REQUESTER_SESSION_ID_OFFSET =
            MessageHeaderDecoder.ENCODED_LENGTH + TransferReleaseDecoder.requesterSessionIdEncodingOffset();

        final UnsafeBuffer authorizeFrame = new UnsafeBuffer(new byte[4096]);
        final UnsafeBuffer releaseFrame = new UnsafeBuffer(new byte[256]);
        private final TransferAuthorizeDecoder authorizeView = new TransferAuthorizeDecoder();
        private final TransferReleaseDecoder releaseView = new TransferReleaseDecoder();
        private final TransferGrantDecoder grantView = new TransferGrantDecoder();
        private long requesterSessionId = 1;

        void run()
        {
            authorizeFrame.putLong(REQUESTER_SESSION_ID_OFFSET, ++requesterSessionId, java.nio.ByteOrder.LITTLE_ENDIAN);
            authorizeView.wrap(authorizeFrame, MessageHeaderDecoder.ENCODED_LENGTH,
                TransferAuthorizeDecoder.BLOCK_LENGTH, TransferAuthorizeDecoder.SCHEMA_VERSION);
            source.onAuthorize(session, authorizeView, nowNs);
            grantView.wrap(channel.last, MessageHeaderDecoder.ENCODED_LENGTH, TransferGrantDecoder.BLOCK_LENGTH,
                TransferGrantDecoder.SCHEMA_VERSION);
            if (TransferStatus.OK != grantView.status())
            {
                throw new AssertionError("refused: " + grantView.status());
            }
            releaseFrame.putLong(RELEASE_TRANSFER_SESSION_ID_OFFSET, grantView.transferSessionId(),
                java.nio.ByteOrder.LITTLE_ENDIAN);
            releaseFrame.putLong(RELEASE_REQUESTER_SESSION_ID_OFFSET, requesterSessionId,
                java.nio.ByteOrder.LITTLE_ENDIAN);
            releaseView.wrap(releaseFrame, MessageHeaderDecoder.ENCODED_LENGTH, TransferReleaseDecoder.BLOCK_LENGTH,
                TransferReleaseDecoder.SCHEMA_VERSION);
            source.onRelease(session, releaseView);
            source.doWork(nowNs);
            transport.poll(revocations, 16);
        }
    }

    // ---------------------------------------------------------------------------------------------------------------

    /**
     * The requester's side of a read: the last completion its transport delivered.
     */
    private static final class Reads implements TransportListener
    {
        long lastRequestId;
        int lastStatus = -1;
        long lastBytes;

        public void onReadComplete(final long requestId, final int status, final long bytes)
        {
            lastRequestId = requestId;
            lastStatus = status;
            lastBytes = bytes;
        }

        public void onRevoked(final long sessionId)
        {
            fail("the requester exports nothing");
        }
    }

    /**
     * The source's side: revocations delivered by its transport go to the source, as the transfer service routes
     * them, after noting how many pins the watched entry still had at that moment.
     */
    private final class Revocations implements TransportListener
    {
        private final SourceAuthorizer authorizer;
        int watchedEntry = -1;
        int pinsAtLastRevocation = -1;
        int delivered;

        Revocations(final SourceAuthorizer authorizer)
        {
            this.authorizer = authorizer;
        }

        public void onReadComplete(final long requestId, final int status, final long bytes)
        {
            fail("the source reads nothing");
        }

        public void onRevoked(final long sessionId)
        {
            if (watchedEntry >= 0)
            {
                pinsAtLastRevocation = store.dram().pinCount(watchedEntry);
            }
            delivered++;
            authorizer.onRevoked(sessionId);
        }
    }

    /**
     * The member view the test controls (a few incarnations, looked up without allocating).
     */
    private static final class Members implements SourceMembers
    {
        private final long[] msbs = new long[8];
        private final long[] lsbs = new long[8];
        private int count;
        boolean grantsAllowed = true;
        long version;

        void add(final long msb, final long lsb)
        {
            msbs[count] = msb;
            lsbs[count] = lsb;
            count++;
            version++;
        }

        void remove(final long msb, final long lsb)
        {
            for (int i = 0; i < count; i++)
            {
                if (msbs[i] == msb && lsbs[i] == lsb)
                {
                    count--;
                    msbs[i] = msbs[count];
                    lsbs[i] = lsbs[count];
                    version++;
                    return;
                }
            }
        }

        public boolean grantsAllowed(final long nowNs)
        {
            return grantsAllowed;
        }

        public boolean isMember(final long incarnationMsb, final long incarnationLsb)
        {
            for (int i = 0; i < count; i++)
            {
                if (msbs[i] == incarnationMsb && lsbs[i] == incarnationLsb)
                {
                    return true;
                }
            }
            return false;
        }

        public long viewVersion()
        {
            return version;
        }
    }

    private static final class Channel implements AnswerChannel
    {
        final UnsafeBuffer last = new UnsafeBuffer(new byte[TransferProxy.MAX_ANSWER_BYTES]);
        private final MessageHeaderDecoder header = new MessageHeaderDecoder();

        public boolean offer(final PeerSession session, final DirectBuffer buffer, final int offset, final int length)
        {
            last.putBytes(0, buffer, offset, length);
            return true;
        }

        public long localIncarnationMsb()
        {
            return SELF_MSB;
        }

        public long localIncarnationLsb()
        {
            return SELF_LSB;
        }

        TransferGrantDecoder grant()
        {
            header.wrap(last, 0);
            assertEquals(TransferGrantDecoder.TEMPLATE_ID, header.templateId());
            return new TransferGrantDecoder().wrap(
                last, MessageHeaderDecoder.ENCODED_LENGTH, header.blockLength(), header.version());
        }

        TransferReleaseAckDecoder ack()
        {
            header.wrap(last, 0);
            assertEquals(TransferReleaseAckDecoder.TEMPLATE_ID, header.templateId());
            return new TransferReleaseAckDecoder().wrap(
                last, MessageHeaderDecoder.ENCODED_LENGTH, header.blockLength(), header.version());
        }
    }

}
