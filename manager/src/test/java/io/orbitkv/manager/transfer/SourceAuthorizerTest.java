package io.orbitkv.manager.transfer;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
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
import io.orbitkv.index.NamespaceTable;
import io.orbitkv.manager.ManagerContext;
import io.orbitkv.manager.peer.PeerSession;
import io.orbitkv.manager.peer.TestPeerSessions;
import io.orbitkv.manager.status.SystemCounterDescriptor;
import io.orbitkv.manager.status.SystemCounters;
import io.orbitkv.manager.store.TieredStore;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The transfer source over a real DRAM store (pool, slab allocator, index) with a recording transport and a member
 * view the test controls; authorizations and releases are real encoded frames, time is the test's.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
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

    @TempDir
    Path dir;

    private final Arena arena = Arena.ofConfined();
    private final SystemCounters counters = SystemCounters.inMemory();
    private final NamespaceTable namespaces = new NamespaceTable();
    private final Members members = new Members();
    private final Channel channel = new Channel();
    private final UnsafeBuffer frame = new UnsafeBuffer(new byte[64 * 1024]);
    private final MessageHeaderEncoder headerEncoder = new MessageHeaderEncoder();
    private final MessageHeaderDecoder headerDecoder = new MessageHeaderDecoder();
    private final TransferAuthorizeDecoder authorizeDecoder = new TransferAuthorizeDecoder();
    private final TransferReleaseDecoder releaseDecoder = new TransferReleaseDecoder();
    private final PeerSession session = TestPeerSessions.active(77, 2, REQUESTER_MSB, REQUESTER_LSB);
    private final PeerSession otherSession = TestPeerSessions.active(78, 3, OTHER_MSB, OTHER_LSB);

    private TieredStore store;
    private int namespaceId;
    private RecordingTransport transport;
    private SourceAuthorizer source;
    private long nowNs = 1_000_000_000L;

    @AfterEach
    void tearDown()
    {
        arena.close();
    }

    private void start(final boolean canRevoke, final long budgetBytes, final int maxSessions, final int perPeer)
    {
        start(canRevoke, budgetBytes, maxSessions, perPeer, false);
    }

    private void start(
        final boolean canRevoke, final long budgetBytes, final int maxSessions, final int perPeer, final boolean flip)
    {
        final ManagerContext ctx = new ManagerContext()
            .name("transfer-source-test")
            .dir(dir.toFile())
            .poolBytes(4L << 20)
            .conclude();
        final MemorySegment pool = arena.allocate(ctx.poolBytes(), 4096);
        store = new TieredStore(ctx, pool, null, counters);
        final UnsafeBuffer ns = new UnsafeBuffer(NAMESPACE);
        namespaceId = namespaces.register(ns, 0, NAMESPACE.length);
        transport = new RecordingTransport(canRevoke);
        members.add(REQUESTER_MSB, REQUESTER_LSB);
        members.add(OTHER_MSB, OTHER_LSB);
        source = new SourceAuthorizer(new TransferSettings(budgetBytes, maxSessions, perPeer, TTL_NS, flip), store,
            namespaces, transport, members, channel, counters);
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
                .tier(TransferTier.DRAM)
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

    private long counter(final SystemCounterDescriptor descriptor)
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
        assertNotEquals(0, sessionId);
        assertEquals(transport.tokens.get(sessionId), grant.token());
        final TransferGrantDecoder.KeysDecoder keys = grant.keys();
        assertEquals(2, keys.count());
        for (int key = 0; key < 2; key++)
        {
            keys.next();
            assertEquals(TransferStatus.OK, keys.status());
            assertEquals(BLOCK_LENGTH, keys.length());
            final long address = keys.address();
            assertEquals(store.pool().address() + store.offset(entryOf(key)), address);
            assertEquals((byte)key, MemorySegment.ofAddress(address).reinterpret(BLOCK_LENGTH)
                .get(ValueLayout.JAVA_BYTE, BLOCK_LENGTH - 1), "the address is the block's bytes");
            assertEquals(1, store.dram().pinCount(entryOf(key)));
        }
        assertEquals("127.0.0.1:7000", grant.transportEndpoint());
        assertEquals(2, transport.exported.get(sessionId).length / 2);
        assertEquals(2L * BLOCK_CHARGE, counter(SystemCounterDescriptor.TRANSFER_SOURCE_PINNED_BYTES));
        assertEquals(1, counter(SystemCounterDescriptor.TRANSFER_SOURCE_SESSIONS_ACTIVE));
        assertEquals(1, counter(SystemCounterDescriptor.TRANSFER_SOURCE_GRANTS));
        assertEquals(2, counter(SystemCounterDescriptor.TRANSFER_SOURCE_GRANTED_KEYS));
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
        final TransferGrantDecoder.KeysDecoder keys = grant.keys();
        assertEquals(3, keys.count());
        assertEquals(TransferStatus.OK, keys.next().status());
        assertEquals(TransferStatus.STALE_SEQUENCE, keys.next().status());
        assertEquals(0, keys.address());
        assertEquals(TransferStatus.NOT_ATTEMPTED, keys.next().status());
        assertEquals(1, store.dram().pinCount(entryOf(0)));
        assertEquals(0, store.dram().pinCount(entryOf(1)));
        assertEquals(0, store.dram().pinCount(entryOf(2)), "nothing after the refused key is pinned");
        assertEquals(1, counter(SystemCounterDescriptor.TRANSFER_SOURCE_PARTIAL_GRANTS));
        assertEquals(1, counter(SystemCounterDescriptor.TRANSFER_SOURCE_REJECTED_STALE_SEQUENCE));
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

        assertEquals(0, store.dram().pinCount(entryOf(0)));
        assertEquals(0, store.dram().pinCount(entryOf(1)));
        assertEquals(0, transport.exports, "a rejection exports nothing");
        assertEquals(0, source.holds().activeCount());
        assertEquals(1, counter(SystemCounterDescriptor.TRANSFER_SOURCE_REJECTED_MISSING));
        assertEquals(1, counter(SystemCounterDescriptor.TRANSFER_SOURCE_REJECTED_STALE_SEQUENCE));
        assertEquals(1, counter(SystemCounterDescriptor.TRANSFER_SOURCE_REJECTED_LENGTH_MISMATCH));
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
        assertEquals(2, channel.grant().grantedKeys(), "two whole allocations fill the budget exactly");
        assertEquals(2L * BLOCK_CHARGE, source.holds().chargedBytes());

        start(true, 2L * BLOCK_CHARGE - 1, 16, 4);
        final long seq2 = publish(2, BLOCK_LENGTH);
        final long seq3 = publish(3, BLOCK_LENGTH);
        source.onAuthorize(session, authorize(1, 2, seq2, BLOCK_LENGTH, 3, seq3, BLOCK_LENGTH), nowNs);
        final TransferGrantDecoder grant = channel.grant();
        assertEquals(1, grant.grantedKeys(), "one byte short of the second allocation");
        final TransferGrantDecoder.KeysDecoder keys = grant.keys();
        keys.next();
        assertEquals(TransferStatus.OVER_BUDGET, keys.next().status());
        assertEquals(1, counter(SystemCounterDescriptor.TRANSFER_SOURCE_REJECTED_OVER_BUDGET));

        source.onAuthorize(session, authorize(2, 3, seq3, BLOCK_LENGTH), nowNs);
        assertRejected(TransferStatus.OVER_BUDGET, 1);
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
        assertEquals(1, counter(SystemCounterDescriptor.TRANSFER_SOURCE_REJECTED_PEER_LIMIT));

        source.onAuthorize(otherSession, authorize(1, 0, seq0, BLOCK_LENGTH), nowNs);
        assertEquals(TransferStatus.OK, channel.grant().status(), "another peer takes the last session");
        source.onAuthorize(otherSession, authorize(2, 0, seq0, BLOCK_LENGTH), nowNs);
        assertRejected(TransferStatus.TOO_MANY_SESSIONS, 0);
        assertEquals(1, counter(SystemCounterDescriptor.TRANSFER_SOURCE_REJECTED_TOO_MANY_SESSIONS));
        assertEquals(3, store.dram().pinCount(entryOf(0)));
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
        assertEquals(TransferLimits.MAX_KEYS_PER_AUTHORIZE, channel.grant().grantedKeys());

        source.onAuthorize(session, authorize(2, triples), nowNs);
        assertRejected(TransferStatus.MALFORMED, 0);
        assertEquals(0, store.dram().pinCount(entryOf(TransferLimits.MAX_KEYS_PER_AUTHORIZE)));
        assertEquals(1, counter(SystemCounterDescriptor.TRANSFER_SOURCE_REJECTED_MALFORMED));
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

        assertEquals(6, counter(SystemCounterDescriptor.TRANSFER_SOURCE_REJECTED_MALFORMED));
        assertEquals(0, store.dram().pinCount(entryOf(0)));
        assertEquals(0, transport.exports);
    }

    @Test
    void shouldRefuseWhenFencedOrTheRequesterIsUnknownButStillReleaseHeldSessions()
    {
        start(true, 1L << 20, 16, 4);
        final long seq0 = publish(0, BLOCK_LENGTH);
        source.onAuthorize(session, authorize(1, 0, seq0, BLOCK_LENGTH), nowNs);
        final long held = channel.grant().transferSessionId();

        members.grantsAllowed = false;
        source.onAuthorize(session, authorize(2, 0, seq0, BLOCK_LENGTH), nowNs);
        assertRejected(TransferStatus.FENCED, 0);
        assertEquals(1, counter(SystemCounterDescriptor.TRANSFER_SOURCE_REJECTED_FENCED));

        source.onRelease(session, release(held, 1));
        assertEquals(TransferStatus.OK, channel.ack().status(), "a fenced source still releases");
        source.doWork(nowNs);
        transport.poll(new Revocations(source), 10);
        assertEquals(0, store.dram().pinCount(entryOf(0)));

        members.grantsAllowed = true;
        members.remove(OTHER_MSB, OTHER_LSB);
        source.onAuthorize(otherSession, authorize(3, 0, seq0, BLOCK_LENGTH), nowNs);
        assertRejected(TransferStatus.UNKNOWN_REQUESTER, 0);
        assertEquals(1, counter(SystemCounterDescriptor.TRANSFER_SOURCE_REJECTED_UNKNOWN_REQUESTER));
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
        assertEquals(1, transport.exports);
        assertEquals(1, counter(SystemCounterDescriptor.TRANSFER_SOURCE_DUPLICATE_AUTHORIZES));
        assertEquals((long)BLOCK_CHARGE, source.holds().chargedBytes());
    }

    @Test
    void shouldRevokeOnReleaseUnpinOnRevokedAndAnswerRepeatedReleasesHarmlessly()
    {
        start(true, 1L << 20, 16, 4);
        final long seq0 = publish(0, BLOCK_LENGTH);
        source.onAuthorize(session, authorize(1, 0, seq0, BLOCK_LENGTH), nowNs);
        final long sessionId = channel.grant().transferSessionId();

        source.onRelease(session, release(sessionId, 1));
        assertEquals(TransferStatus.OK, channel.ack().status());
        assertEquals(sessionId, channel.ack().transferSessionId());
        assertEquals(1, transport.revokes);
        assertEquals(1, store.dram().pinCount(entryOf(0)), "pinned until the transport proves no send is running");

        source.onRelease(session, release(sessionId, 1));
        assertEquals(TransferStatus.UNKNOWN_SESSION, channel.ack().status());
        transport.poll(new Revocations(source), 10);
        assertEquals(0, store.dram().pinCount(entryOf(0)));
        assertEquals(1, counter(SystemCounterDescriptor.TRANSFER_SOURCE_REVOCATIONS_COMPLETED));
        assertEquals(0, source.holds().chargedBytes());

        source.onRelease(session, release(sessionId, 1));
        assertEquals(TransferStatus.UNKNOWN_SESSION, channel.ack().status());
        source.onRevoked(sessionId);
        assertEquals(0, store.dram().pinCount(entryOf(0)), "never unpinned twice");
        assertEquals(2, counter(SystemCounterDescriptor.TRANSFER_SOURCE_DUPLICATE_RELEASES));
        assertEquals(1, counter(SystemCounterDescriptor.TRANSFER_SOURCE_RELEASES));

        source.onRelease(session, release(12345, 1));
        assertEquals(TransferStatus.UNKNOWN_SESSION, channel.ack().status());
        assertEquals(1, counter(SystemCounterDescriptor.TRANSFER_SOURCE_UNKNOWN_SESSION_RELEASES));
    }

    @Test
    void shouldUnpinAtReleaseWhenTheTransportCannotRevoke()
    {
        start(false, 1L << 20, 16, 4);
        final long seq0 = publish(0, BLOCK_LENGTH);
        source.onAuthorize(session, authorize(1, 0, seq0, BLOCK_LENGTH), nowNs);
        final long sessionId = channel.grant().transferSessionId();

        source.onRelease(session, release(sessionId, 1));
        assertEquals(TransferStatus.OK, channel.ack().status());
        assertEquals(0, store.dram().pinCount(entryOf(0)));
        assertFalse(transport.exported.containsKey(sessionId), "the export is withdrawn");
        source.onRelease(session, release(sessionId, 1));
        assertEquals(TransferStatus.UNKNOWN_SESSION, channel.ack().status());
        assertEquals(0, store.dram().pinCount(entryOf(0)));
    }

    @Test
    void shouldRevokeAnExpiredSessionAndUnpinOnceRevoked()
    {
        start(true, 1L << 20, 16, 4);
        final long seq0 = publish(0, BLOCK_LENGTH);
        source.onAuthorize(session, authorize(1, 0, seq0, BLOCK_LENGTH), nowNs);
        final long sessionId = channel.grant().transferSessionId();
        assertEquals(nowNs + TTL_NS, source.nextDeadlineNs());

        assertEquals(0, source.doWork(nowNs + TTL_NS - 1));
        assertEquals(0, transport.revokes);
        assertEquals(1, source.doWork(nowNs + TTL_NS));
        assertEquals(1, transport.revokes);
        assertEquals(1, counter(SystemCounterDescriptor.TRANSFER_SOURCE_EXPIRIES));
        assertEquals(1, store.dram().pinCount(entryOf(0)));
        assertEquals(Long.MAX_VALUE, source.nextDeadlineNs(), "nothing else to wake for");

        transport.poll(new Revocations(source), 10);
        assertEquals(0, store.dram().pinCount(entryOf(0)));
        assertEquals(1, counter(SystemCounterDescriptor.TRANSFER_SOURCE_REVOCATIONS_COMPLETED));
        source.onRelease(session, release(sessionId, 1));
        assertEquals(TransferStatus.UNKNOWN_SESSION, channel.ack().status());
    }

    @Test
    void shouldQuarantineAnExpiredSessionUntilItsRequesterLeavesTheView()
    {
        start(false, 1L << 20, 16, 4);
        final long seq0 = publish(0, BLOCK_LENGTH);
        source.onAuthorize(session, authorize(1, 0, seq0, BLOCK_LENGTH), nowNs);

        source.doWork(nowNs + TTL_NS);
        assertEquals(1, counter(SystemCounterDescriptor.TRANSFER_SOURCE_QUARANTINED_SESSIONS));
        assertEquals((long)BLOCK_CHARGE, counter(SystemCounterDescriptor.TRANSFER_SOURCE_QUARANTINED_BYTES));
        assertEquals(1, store.dram().pinCount(entryOf(0)));

        for (long later = 1; later <= 10; later++)
        {
            source.doWork(nowNs + later * TTL_NS);
        }
        members.version++;
        source.doWork(nowNs + 11 * TTL_NS);
        assertEquals(1, store.dram().pinCount(entryOf(0)), "no timeout-only reclamation while the requester is a member");
        assertEquals((long)BLOCK_CHARGE, source.holds().chargedBytes());

        members.remove(REQUESTER_MSB, REQUESTER_LSB);
        assertEquals(1, source.doWork(nowNs + 12 * TTL_NS));
        assertEquals(0, store.dram().pinCount(entryOf(0)));
        assertEquals(0, source.holds().chargedBytes());
        assertEquals(0, counter(SystemCounterDescriptor.TRANSFER_SOURCE_QUARANTINED_SESSIONS));
        assertEquals(0, counter(SystemCounterDescriptor.TRANSFER_SOURCE_QUARANTINED_BYTES));
        assertEquals(1, counter(SystemCounterDescriptor.TRANSFER_SOURCE_REQUESTERS_LOST));
    }

    @Test
    void shouldRevokeTheSessionsOfARequesterThatLeftTheView()
    {
        start(true, 1L << 20, 16, 4);
        final long seq0 = publish(0, BLOCK_LENGTH);
        source.onAuthorize(session, authorize(1, 0, seq0, BLOCK_LENGTH), nowNs);
        source.onAuthorize(otherSession, authorize(1, 0, seq0, BLOCK_LENGTH), nowNs);
        assertEquals(2, store.dram().pinCount(entryOf(0)));

        members.remove(REQUESTER_MSB, REQUESTER_LSB);
        source.doWork(nowNs);
        assertEquals(1, transport.revokes);
        transport.poll(new Revocations(source), 10);
        assertEquals(1, store.dram().pinCount(entryOf(0)), "the other requester's session stays");
        assertEquals(1, source.holds().activeCount());
    }

    @Test
    void shouldUndoThePinsWhenTheTransportRefusesTheExport()
    {
        start(true, 1L << 20, 16, 4);
        final long seq0 = publish(0, BLOCK_LENGTH);
        transport.refuseExports = true;
        source.onAuthorize(session, authorize(1, 0, seq0, BLOCK_LENGTH), nowNs);
        assertRejected(TransferStatus.ERROR, 0);
        assertEquals(0, store.dram().pinCount(entryOf(0)));
        assertEquals(0, source.holds().activeCount());
        assertEquals(1, counter(SystemCounterDescriptor.TRANSFER_SOURCE_REJECTED_EXPORT));
    }

    @Test
    void shouldFlipOneByteOfTheFirstGrantedBlockOnceWhenTheTestHookIsOn()
    {
        start(true, 1L << 20, 16, 4, true);
        final long seq0 = publish(0, BLOCK_LENGTH);
        final long seq1 = publish(1, BLOCK_LENGTH);
        final long offset0 = store.offset(entryOf(0));
        source.onAuthorize(session, authorize(1, 0, seq0, BLOCK_LENGTH, 1, seq1, BLOCK_LENGTH), nowNs);
        assertEquals((byte)1, store.pool().get(ValueLayout.JAVA_BYTE, offset0), "0 ^ 1");
        assertEquals((byte)1, store.pool().get(ValueLayout.JAVA_BYTE, store.offset(entryOf(1))));
        source.onAuthorize(session, authorize(2, 0, seq0, BLOCK_LENGTH), nowNs);
        assertEquals((byte)1, store.pool().get(ValueLayout.JAVA_BYTE, offset0), "flipped once only");
    }


    @Test
    void shouldAuthorizeGrantAndReleaseWithoutAllocating()
    {
        start(true, 1L << 20, 16, 4);
        final long seq0 = publish(0, BLOCK_LENGTH);
        final long seq1 = publish(1, BLOCK_LENGTH);
        final QuietTransport quiet = new QuietTransport();
        source = new SourceAuthorizer(new TransferSettings(1L << 20, 16, 4, TTL_NS, false), store, namespaces, quiet,
            members, channel, counters);
        final UnsafeBuffer authorizeFrame = new UnsafeBuffer(new byte[4096]);
        authorize(1, 0, seq0, BLOCK_LENGTH, 1, seq1, BLOCK_LENGTH);
        authorizeFrame.putBytes(0, frame, 0, authorizeFrame.capacity());
        final UnsafeBuffer releaseFrame = new UnsafeBuffer(new byte[256]);
        release(1, 1);
        releaseFrame.putBytes(0, frame, 0, releaseFrame.capacity());
        final int requesterSessionIdOffset = MessageHeaderDecoder.ENCODED_LENGTH +
            TransferAuthorizeDecoder.requesterSessionIdEncodingOffset();
        final int transferSessionIdOffset = MessageHeaderDecoder.ENCODED_LENGTH +
            TransferReleaseDecoder.transferSessionIdEncodingOffset();
        final TransferAuthorizeDecoder authorizeView = new TransferAuthorizeDecoder();
        final TransferReleaseDecoder releaseView = new TransferReleaseDecoder();
        final TransferGrantDecoder grantView = new TransferGrantDecoder();
        final com.sun.management.ThreadMXBean threads =
            (com.sun.management.ThreadMXBean)java.lang.management.ManagementFactory.getThreadMXBean();
        threads.setThreadAllocatedMemoryEnabled(true);

        long allocated = -1;
        long requesterSessionId = 1;
        for (int window = 0; window < 30 && 0 != allocated; window++)
        {
            final long before = threads.getCurrentThreadAllocatedBytes();
            for (int i = 0; i < 500; i++)
            {
                authorizeFrame.putLong(requesterSessionIdOffset, ++requesterSessionId, java.nio.ByteOrder.LITTLE_ENDIAN);
                authorizeView.wrap(authorizeFrame, MessageHeaderDecoder.ENCODED_LENGTH,
                    TransferAuthorizeDecoder.BLOCK_LENGTH, TransferAuthorizeDecoder.SCHEMA_VERSION);
                source.onAuthorize(session, authorizeView, nowNs);
                grantView.wrap(channel.last, MessageHeaderDecoder.ENCODED_LENGTH, TransferGrantDecoder.BLOCK_LENGTH,
                    TransferGrantDecoder.SCHEMA_VERSION);
                if (TransferStatus.OK != grantView.status())
                {
                    throw new AssertionError("refused: " + grantView.status());
                }
                releaseFrame.putLong(transferSessionIdOffset, grantView.transferSessionId(),
                    java.nio.ByteOrder.LITTLE_ENDIAN);
                releaseFrame.putLong(MessageHeaderDecoder.ENCODED_LENGTH +
                    TransferReleaseDecoder.requesterSessionIdEncodingOffset(), requesterSessionId,
                    java.nio.ByteOrder.LITTLE_ENDIAN);
                releaseView.wrap(releaseFrame, MessageHeaderDecoder.ENCODED_LENGTH, TransferReleaseDecoder.BLOCK_LENGTH,
                    TransferReleaseDecoder.SCHEMA_VERSION);
                source.onRelease(session, releaseView);
                source.doWork(nowNs);
            }
            allocated = threads.getCurrentThreadAllocatedBytes() - before;
        }
        assertEquals(0, allocated, "bytes allocated in the last window of 500 authorize/grant/release rounds");
        assertEquals(0, store.dram().pinCount(entryOf(0)));
        assertEquals(0, source.holds().activeCount());
    }

    // ---------------------------------------------------------------------------------------------------------------

    /**
     * A one-sided transport that keeps nothing (the recording one boxes its ids).
     */
    private static final class QuietTransport implements io.orbitkv.transport.Transport
    {
        public String name()
        {
            return "quiet";
        }

        public String localEndpoint()
        {
            return "127.0.0.1:7001";
        }

        public boolean canRevoke()
        {
            return false;
        }

        public void registerMemory(final long address, final long length)
        {
        }

        public void unregisterMemory(final long address)
        {
        }

        public boolean export(
            final long sessionId, final long token, final long[] addresses, final int[] lengths, final int count)
        {
            return true;
        }

        public void revoke(final long sessionId)
        {
        }

        public int peer(final CharSequence endpoint)
        {
            return -1;
        }

        public void closePeer(final int peer)
        {
        }

        public boolean submitRead(
            final int peer, final long sessionId, final long token, final long remoteAddress, final long localAddress,
            final int length, final long requestId)
        {
            return false;
        }

        public int poll(final io.orbitkv.transport.TransportListener listener, final int limit)
        {
            return 0;
        }

        public int readsInFlight()
        {
            return 0;
        }

        public void close()
        {
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
        final UnsafeBuffer last = new UnsafeBuffer(new byte[SourceAuthorizer.MAX_ANSWER_BYTES]);
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

    private record Revocations(SourceAuthorizer source) implements io.orbitkv.transport.TransportListener
    {
        public void onReadComplete(final long requestId, final int status, final long bytes)
        {
        }

        public void onRevoked(final long sessionId)
        {
            source.onRevoked(sessionId);
        }
    }
}
