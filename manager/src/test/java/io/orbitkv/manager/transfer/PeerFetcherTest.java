package io.orbitkv.manager.transfer;

import io.orbitkv.manager.SystemCounterFamilies;
import io.orbitkv.manager.status.CounterDescriptor;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import io.orbitkv.codecs.StateKeyFlyweight;
import io.orbitkv.codecs.TransferLimits;
import io.orbitkv.codecs.engine.FailureReason;
import io.orbitkv.codecs.engine.KeyStatus;
import io.orbitkv.codecs.engine.LookupRequestDecoder;
import io.orbitkv.codecs.transfer.MessageHeaderDecoder;
import io.orbitkv.codecs.transfer.MessageHeaderEncoder;
import io.orbitkv.codecs.transfer.ReleaseReason;
import io.orbitkv.codecs.transfer.TransferAuthorizeDecoder;
import io.orbitkv.codecs.transfer.TransferGrantDecoder;
import io.orbitkv.codecs.transfer.TransferGrantEncoder;
import io.orbitkv.codecs.transfer.TransferReleaseAckDecoder;
import io.orbitkv.codecs.transfer.TransferReleaseAckEncoder;
import io.orbitkv.codecs.transfer.TransferReleaseDecoder;
import io.orbitkv.codecs.transfer.TransferStatus;
import io.orbitkv.index.BlockStore;
import io.orbitkv.index.NamespaceTable;
import io.orbitkv.manager.ManagerContext;
import io.orbitkv.manager.catalog.CatalogRequester;
import io.orbitkv.manager.catalog.LookupAnswerSink;
import io.orbitkv.manager.catalog.PendingLookup;
import io.orbitkv.manager.catalog.TestLookups;
import io.orbitkv.manager.membership.MemberRecord;
import io.orbitkv.manager.peer.PeerClient;
import io.orbitkv.manager.peer.TestPeerSessions;
import io.orbitkv.manager.port.FetchHandle;
import io.orbitkv.manager.port.LookupHandle;
import io.orbitkv.manager.port.PeerListener;
import io.orbitkv.manager.status.SystemCounters;
import io.orbitkv.manager.store.TieredStore;
import io.orbitkv.transport.Transport;
import io.orbitkv.transport.TransportListener;
import org.agrona.DirectBuffer;
import org.agrona.IoUtil;
import org.agrona.collections.Long2ObjectHashMap;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The requester's coordinator alone, in the manner of aeron-cluster's ConsensusModuleAgentTest: built from a catalog
 * of fakes (members, source sessions, candidate removals), a channel that records the frames it would send, a
 * transport that only counts reads, and stepped with {@code doWork(nowMs)} on a clock the test moves. No Aeron, no
 * etcd, no transport process.
 */
class PeerFetcherTest
{
    private static final byte[] NAMESPACE = "model=fetcher-test".getBytes(StandardCharsets.US_ASCII);
    private static final int BLOCK = 4096;
    private static final long T0 = 1_000_000L;
    private static final long SELF_MSB = 0x5E1FL;
    private static final long SELF_LSB = 0x5E1FL;
    private static final long GRANTED_ADDRESS = 0x10_0000L;

    private final SystemCounters counters = SystemCounterFamilies.inMemory();
    private final FakeCatalog catalog = new FakeCatalog();
    private final RecordingChannel channel = new RecordingChannel();
    private final CountingTransport transport = new CountingTransport();
    private final List<PeerFetch> answered = new ArrayList<>();
    private final List<PendingLookup> lookupsAnswered = new ArrayList<>();
    private final PeerListener listener = new PeerListener()
    {
        public void onLookupAnswered(final LookupHandle lookup)
        {
            lookupsAnswered.add((PendingLookup)lookup);
        }

        public void onFetchAnswered(final FetchHandle fetch)
        {
            answered.add((PeerFetch)fetch);
        }
    };
    private final UnsafeBuffer hash = new UnsafeBuffer(new byte[32]);
    private final UnsafeBuffer namespace = new UnsafeBuffer(NAMESPACE);
    private Arena arena;
    private Path dir;
    private PeerFetcher fetcher;

    @BeforeEach
    void setUp() throws Exception
    {
        arena = Arena.ofShared();
        dir = Files.createTempDirectory("orbitkv-fetcher-test");
        final ManagerContext ctx = new ManagerContext().name("fetcher-test").dir(dir.toFile()).poolBytes(8L << 20)
            .conclude();
        final MemorySegment pool = arena.allocate(ctx.poolBytes(), 4096);
        final TieredStore store = new TieredStore(ctx, pool, null, counters, BlockStore.NO_OP_OBSERVER);
        fetcher = new PeerFetcher(catalog, channel, transport, store, new NamespaceTable(),
            new PeerAdmission(PeerAdmission.Policy.OFF, 60_000), counters,
            Throwable::printStackTrace);
        fetcher.doWork(T0);
        for (int k = 0; k < 4; k++)
        {
            hash.putLong(k * 8, 0x1234_5678L + k);
        }
    }

    @AfterEach
    void tearDown()
    {
        arena.close();
        IoUtil.delete(dir.toFile(), true);
    }

    @Test
    void shouldRemoveEachRefusedVersionAndTryAnotherSourceAtMostTwice()
    {
        final Source a = catalog.source(1);
        final Source b = catalog.source(2);
        final Source c = catalog.source(3);
        final Source d = catalog.source(4);
        final PeerFetch fetch = startHold(a, b, c, d);

        grant(a, channel.lastAuthorize(), TransferStatus.MISSING, 0);
        assertEquals(b.msb, channel.lastAuthorize().destinationMsb, "the refused key is asked of the next source");
        grant(b, channel.lastAuthorize(), TransferStatus.STALE_SEQUENCE, 0);
        assertEquals(c.msb, channel.lastAuthorize().destinationMsb);
        grant(c, channel.lastAuthorize(), TransferStatus.LENGTH_MISMATCH, 0);

        assertEquals(3, channel.authorizes.size(), "the first source and two alternatives; the fourth is never asked");
        assertEquals(3, catalog.removedVersions, "each verdict on the evidence removes that version only");
        assertEquals(2, counter(TransferCounter.ALTERNATIVES_TRIED));
        assertEquals(3, counter(TransferCounter.REFUSALS_RECEIVED));
        assertEquals(List.of(fetch), answered);
        assertEquals(KeyStatus.FAILED, fetch.statuses()[0]);
        assertEquals(FailureReason.REJECTED, fetch.reasons()[0]);
        assertEquals(0, fetch.value());
    }

    @Test
    void shouldKeepACandidateWhoseSourceIsOnlyOutOfBudgetAndGetTheKeyFromAnother()
    {
        final Source a = catalog.source(1);
        final Source b = catalog.source(2);
        final PeerFetch fetch = startHold(a, b);

        grant(a, channel.lastAuthorize(), TransferStatus.OVER_BUDGET, 0);
        assertEquals(0, catalog.removedVersions, "the source still holds the block");
        grant(b, channel.lastAuthorize(), TransferStatus.OK, 1);

        assertEquals(List.of(fetch), answered);
        assertEquals(KeyStatus.PEER, fetch.statuses()[0]);
        assertEquals(1, fetch.value());
        assertEquals(1, counter(TransferCounter.GRANTS_RECEIVED));
    }

    @Test
    void shouldAskTheSameSourceAgainAfterPendingWithoutSpendingAnAlternative()
    {
        final Source a = catalog.source(1);
        final Source b = catalog.source(2);
        final PeerFetch fetch = startHold(a, b);
        final Authorize first = channel.lastAuthorize();

        grant(a, first, TransferStatus.PENDING, 0);
        fetcher.doWork(T0 + TransferLimits.PREPARE_RETRY_INTERVAL_MS - 1);
        assertEquals(1, channel.authorizes.size(), "not asked again before the prepare interval");
        assertEquals(1, fetcher.waitingToAsk(), "the agent must stay awake for the timer");
        fetcher.doWork(T0 + TransferLimits.PREPARE_RETRY_INTERVAL_MS);
        final Authorize second = channel.lastAuthorize();
        assertEquals(2, channel.authorizes.size());
        assertEquals(a.msb, second.destinationMsb, "the same source, still preparing the span");
        assertNotEquals(first.requesterSessionId, second.requesterSessionId, "each ask is a new session");
        assertEquals(1, counter(TransferCounter.PREPARE_WAITS));
        assertEquals(0, counter(TransferCounter.ALTERNATIVES_TRIED));
        assertEquals(0, catalog.removedVersions);

        grant(a, second, TransferStatus.OK, 1);
        assertEquals(List.of(fetch), answered);
        assertEquals(KeyStatus.PEER, fetch.statuses()[0]);
    }

    @Test
    void shouldWaitTheBackpressureIntervalBeforeAskingAgain()
    {
        final Source a = catalog.source(1);
        startHold(a);

        grant(a, channel.lastAuthorize(), TransferStatus.BACKPRESSURE, 0);
        fetcher.doWork(T0 + TransferLimits.BACKPRESSURE_RETRY_INTERVAL_MS - 1);
        assertEquals(1, channel.authorizes.size());
        fetcher.doWork(T0 + TransferLimits.BACKPRESSURE_RETRY_INTERVAL_MS);
        assertEquals(2, channel.authorizes.size());
        assertEquals(1, counter(TransferCounter.BUDGET_WAITS));
    }

    @Test
    void shouldRetryAnUnacknowledgedReleaseAndAbandonItAfterTheLastAttempt()
    {
        final Source a = catalog.source(1);
        final PeerFetch fetch = startHold(a);
        grant(a, channel.lastAuthorize(), TransferStatus.OK, 1);
        fetcher.doWork(T0);
        assertEquals(1, counter(TransferCounter.FETCHES_ACTIVE), "a held fetch lives until its lease goes");

        fetcher.release(fetch);
        assertEquals(1, channel.releases.size());
        assertEquals(ReleaseReason.ABANDONED, channel.releases.get(0).reason, "a lease released unread");
        long nowMs = T0;
        for (int attempt = 2; attempt <= TransferLimits.RELEASE_ATTEMPTS; attempt++)
        {
            fetcher.doWork(nowMs + TransferLimits.RELEASE_RETRY_INTERVAL_MS - 1);
            assertEquals(attempt - 1, channel.releases.size(), "not before the retry interval");
            nowMs += TransferLimits.RELEASE_RETRY_INTERVAL_MS;
            fetcher.doWork(nowMs);
            assertEquals(attempt, channel.releases.size());
        }
        fetcher.doWork(nowMs + TransferLimits.RELEASE_RETRY_INTERVAL_MS);

        assertEquals(TransferLimits.RELEASE_ATTEMPTS, channel.releases.size());
        assertEquals(TransferLimits.RELEASE_ATTEMPTS, counter(TransferCounter.RELEASES_SENT));
        assertEquals(TransferLimits.RELEASE_ATTEMPTS - 1, counter(TransferCounter.RELEASE_RETRIES));
        assertEquals(1, counter(TransferCounter.RELEASES_ABANDONED));
        assertEquals(0, counter(TransferCounter.FETCHES_ACTIVE),
            "the source's session TTL reclaims it from here");
    }

    @Test
    void shouldEndTheReleaseAtItsAcknowledgement()
    {
        final Source a = catalog.source(1);
        final PeerFetch fetch = startHold(a);
        grant(a, channel.lastAuthorize(), TransferStatus.OK, 1);
        fetcher.release(fetch);
        fetcher.doWork(T0 + TransferLimits.RELEASE_RETRY_INTERVAL_MS);
        assertEquals(2, channel.releases.size());

        releaseAck(a, channel.releases.get(1));
        fetcher.doWork(T0 + 10L * TransferLimits.RELEASE_RETRY_INTERVAL_MS);

        assertEquals(2, channel.releases.size(), "no retry after the acknowledgement");
        assertEquals(0, counter(TransferCounter.RELEASES_ABANDONED));
        assertEquals(0, counter(TransferCounter.FETCHES_ACTIVE));
    }

    @Test
    void shouldPlanAroundASourceThatLeftAnAuthorizationUnanswered()
    {
        final Source a = catalog.source(1);
        final Source b = catalog.source(2);
        startHold(a, b);

        fetcher.doWork(T0 + TransferLimits.AUTHORIZE_TIMEOUT_MS - 1);
        assertEquals(1, channel.authorizes.size());
        fetcher.doWork(T0 + TransferLimits.AUTHORIZE_TIMEOUT_MS);
        assertEquals(1, counter(TransferCounter.AUTHORIZE_TIMEOUTS));
        assertEquals(b.msb, channel.lastAuthorize().destinationMsb, "no verdict, but another source is asked");
        assertEquals(0, catalog.removedVersions, "nothing was judged");
        grant(b, channel.lastAuthorize(), TransferStatus.OK, 1);

        // Within the backoff a new fetch does not wait on the silent source again.
        startHold(a, b);
        assertEquals(b.msb, channel.lastAuthorize().destinationMsb);
        assertEquals(1, counter(TransferCounter.UNANSWERED_SOURCE_SKIPS));
    }

    @Test
    void shouldReleaseAGrantNobodyWaitsForAtOnce()
    {
        final Source a = catalog.source(1);
        startHold(a);
        final Authorize authorize = channel.lastAuthorize();
        fetcher.doWork(T0 + TransferLimits.AUTHORIZE_TIMEOUT_MS);
        assertEquals(1, answered.size(), "answered without the source");

        grant(a, authorize, TransferStatus.OK, 1);

        assertEquals(1, counter(TransferCounter.STALE_GRANTS));
        assertEquals(1, channel.releases.size());
        assertEquals(ReleaseReason.ABANDONED, channel.releases.get(0).reason);
    }

    @Test
    void shouldHoldAPinnedLookupsSourcesBehindTheFrontDoorAndAnswerAHintDirectly()
    {
        final Source a = catalog.source(1);
        final PendingLookup pinned = lookup(0, true, a);
        fetcher.startLookup(pinned, listener);
        assertEquals(1, channel.authorizes.size(), "a pinned lookup asks its source to hold the key");
        assertTrue(lookupsAnswered.isEmpty());
        grant(a, channel.lastAuthorize(), TransferStatus.OK, 1);
        assertEquals(1, answered.size(), "answered as a fetch, with the held key");
        assertEquals(KeyStatus.PEER, answered.get(0).statuses()[0]);
        assertEquals(1, answered.get(0).value());

        final PendingLookup hint = lookup(1, false, a);
        fetcher.startLookup(hint, listener);
        assertEquals(List.of(hint), lookupsAnswered, "without pin the candidates are the answer");
        assertEquals(1, channel.authorizes.size(), "and nobody is asked to hold anything");
    }

    @Test
    void shouldAnswerFromTheLocalPrefixWhenRemoteWorkIsDisabled()
    {
        catalog.remoteWork = false;
        assertNull(fetcher.acquireFetch(listener));
        assertEquals(1, counter(TransferCounter.FETCHES_SKIPPED));
    }

    @Test
    void shouldRemoveTheVersionOfASourceThatRestartedAndAskAnother()
    {
        final Source a = catalog.source(1);
        final Source b = catalog.source(2);
        final PeerFetch fetch = startHold(a, b);

        grant(a, channel.lastAuthorize(), TransferStatus.STALE_INCARNATION, 0);
        assertEquals(1, catalog.removedVersions, "a dead incarnation's copy is evidence gone stale");
        assertEquals(b.msb, channel.lastAuthorize().destinationMsb);
        grant(b, channel.lastAuthorize(), TransferStatus.OK, 1);

        assertEquals(List.of(fetch), answered);
        assertEquals(KeyStatus.PEER, fetch.statuses()[0]);
        assertEquals(1, counter(TransferCounter.ALTERNATIVES_TRIED));
    }

    @Test
    void shouldSkipASourceThatLeftTheMemberViewWithoutAskingOrRemovingIt()
    {
        final Source gone = new Source(1);
        final Source b = catalog.source(2);
        final PeerFetch fetch = startHold(gone, b);

        assertEquals(b.msb, channel.lastAuthorize().destinationMsb, "only the member is asked");
        assertEquals(1, channel.authorizes.size());
        assertEquals(0, catalog.removedVersions, "nothing was judged");
        grant(b, channel.lastAuthorize(), TransferStatus.OK, 1);
        assertEquals(List.of(fetch), answered);
        assertEquals(1, fetch.value());
    }

    @Test
    void shouldPlanTheKeysAfterAPartlyGrantedRunOnAnotherSource()
    {
        final Source a = catalog.source(1);
        final Source b = catalog.source(2);
        final PeerFetch fetch = startHold(2, a, b);
        assertEquals(2, channel.lastAuthorize().keys(), "one span of both keys at the first source");

        grantKeys(a, channel.lastAuthorize(), 1, TransferStatus.MISSING, GRANTED_ADDRESS);
        final Authorize rest = channel.lastAuthorize();
        assertEquals(b.msb, rest.destinationMsb, "the refused key is asked of the other source");
        assertEquals(1, rest.keys());
        assertEquals(1, catalog.removedVersions, "only the refused key's version");
        assertTrue(answered.isEmpty(), "the run may still grow");

        grantKeys(b, rest, 1, TransferStatus.OK, GRANTED_ADDRESS);
        assertEquals(List.of(fetch), answered);
        assertEquals(2, fetch.value());
        assertEquals(KeyStatus.PEER, fetch.statuses()[1]);
        assertEquals(1, counter(TransferCounter.ALTERNATIVES_TRIED));
    }

    @Test
    void shouldAskTheSameSourceAgainForTheKeysItIsStillPreparing()
    {
        final Source a = catalog.source(1);
        final Source b = catalog.source(2);
        startHold(2, a, b);

        grantKeys(a, channel.lastAuthorize(), 1, TransferStatus.PENDING, GRANTED_ADDRESS);
        assertEquals(1, channel.authorizes.size(), "not asked again before the prepare interval");
        fetcher.doWork(T0 + TransferLimits.PREPARE_RETRY_INTERVAL_MS);

        final Authorize again = channel.lastAuthorize();
        assertEquals(2, channel.authorizes.size());
        assertEquals(a.msb, again.destinationMsb, "the same source, for the key after the granted run");
        assertEquals(1, again.keys());
        assertEquals(1, counter(TransferCounter.PREPARE_WAITS));
        assertEquals(0, counter(TransferCounter.ALTERNATIVES_TRIED));
        assertEquals(0, catalog.removedVersions);
    }

    @Test
    void shouldFailAKeyWhoseGrantCarriesNoUsableRange()
    {
        final Source a = catalog.source(1);
        final PeerFetch fetch = startHold(a);

        grantKeys(a, channel.lastAuthorize(), 1, TransferStatus.OK, 0);

        assertEquals(List.of(fetch), answered);
        assertEquals(KeyStatus.FAILED, fetch.statuses()[0]);
        assertEquals(FailureReason.TRANSFER, fetch.reasons()[0]);
        assertEquals(0, fetch.value());
        assertEquals(1, channel.releases.size(), "the useless session is released at once");
        assertEquals(ReleaseReason.ABANDONED, channel.releases.get(0).reason);
    }

    @Test
    void shouldFailAndReleaseASpanWhoseSourceEndpointTheTransportCannotReach()
    {
        final Source a = catalog.source(1);
        final PeerFetch fetch = startHold(a);
        transport.peer = -1;

        grant(a, channel.lastAuthorize(), TransferStatus.OK, 1);

        assertEquals(List.of(fetch), answered);
        assertEquals(KeyStatus.FAILED, fetch.statuses()[0]);
        assertEquals(FailureReason.TRANSFER, fetch.reasons()[0]);
        assertEquals(1, channel.releases.size());
        assertEquals(ReleaseReason.ABANDONED, channel.releases.get(0).reason);
    }

    @Test
    void shouldStopAskingAPreparingSourceOnceTheNextAskWouldPassTheBudget()
    {
        final Source a = catalog.source(1);
        final PeerFetch fetch = startHold(a);
        long nowMs = T0;
        while (answered.isEmpty())
        {
            grant(a, channel.lastAuthorize(), TransferStatus.PENDING, 0);
            nowMs += TransferLimits.PREPARE_RETRY_INTERVAL_MS;
            fetcher.doWork(nowMs);
            assertTrue(nowMs - T0 <= TransferLimits.FETCH_BUDGET_MS, "answered within the fetch's budget");
        }
        final int asks = channel.authorizes.size();

        assertEquals(KeyStatus.FAILED, fetch.statuses()[0]);
        assertEquals(FailureReason.REJECTED, fetch.reasons()[0]);
        assertEquals(asks - 1, counter(TransferCounter.PREPARE_WAITS), "one wait per ask again");
        assertTrue(asks > 1);
        assertEquals(0, catalog.removedVersions, "a source preparing the block still holds it");
        assertEquals(0, counter(TransferCounter.FETCH_BUDGET_EXPIRED));
    }

    @Test
    void shouldAnswerWithTheBudgetReasonWhenTheFetchOutlivesItsBudgetAndReleaseTheLateGrant()
    {
        final Source a = catalog.source(1);
        final PeerFetch fetch = startHold(a);
        long nowMs = T0;
        // The source keeps asking to be asked again, then goes quiet with an authorization out past the budget.
        while (nowMs - T0 < TransferLimits.FETCH_BUDGET_MS - TransferLimits.AUTHORIZE_TIMEOUT_MS / 2)
        {
            grant(a, channel.lastAuthorize(), TransferStatus.PENDING, 0);
            nowMs += TransferLimits.PREPARE_RETRY_INTERVAL_MS;
            fetcher.doWork(nowMs);
        }
        final Authorize last = channel.lastAuthorize();
        fetcher.doWork(T0 + TransferLimits.FETCH_BUDGET_MS - 1);
        assertTrue(answered.isEmpty(), "still within the budget");

        fetcher.doWork(T0 + TransferLimits.FETCH_BUDGET_MS);
        assertEquals(List.of(fetch), answered);
        assertEquals(KeyStatus.FAILED, fetch.statuses()[0]);
        assertEquals(FailureReason.BUDGET, fetch.reasons()[0]);
        assertEquals(1, counter(TransferCounter.FETCH_BUDGET_EXPIRED));

        // As the ring does with a hold that delivered nothing: no lease keeps it.
        fetcher.release(fetch);
        assertTrue(channel.releases.isEmpty(), "the authorization still out has no session to release yet");
        grant(a, last, TransferStatus.OK, 1);
        assertEquals(1, channel.releases.size(), "a grant after the lease went is released at once");
        releaseAck(a, channel.releases.get(0));
        fetcher.doWork(T0 + TransferLimits.FETCH_BUDGET_MS + 1);
        assertEquals(0, counter(TransferCounter.FETCHES_ACTIVE));
    }

    @Test
    void shouldReleaseOnlyTheSpansAfterTheHeldRunOfAPinnedLookup()
    {
        final Source a = catalog.source(1);
        final PeerFetch fetch = startHold(2, a);

        grantKeys(a, channel.lastAuthorize(), 1, TransferStatus.MISSING, GRANTED_ADDRESS);

        assertEquals(List.of(fetch), answered);
        assertEquals(1, fetch.value(), "the lease covers the granted run");
        assertEquals(KeyStatus.PEER, fetch.statuses()[0]);
        assertEquals(KeyStatus.FAILED, fetch.statuses()[1]);
        assertEquals(FailureReason.REJECTED, fetch.reasons()[1]);
        assertTrue(channel.releases.isEmpty(), "the held run stays pinned at its source until the lease goes");

        fetcher.release(fetch);
        assertEquals(1, channel.releases.size());
        releaseAck(a, channel.releases.get(0));
        fetcher.doWork(T0 + 10L * TransferLimits.RELEASE_RETRY_INTERVAL_MS);
        assertEquals(1, channel.releases.size());
        assertEquals(0, counter(TransferCounter.FETCHES_ACTIVE));
    }

    /**
     * A lookup of one key, as discovery leaves it: a candidate at each of {@code sources}.
     */
    private PendingLookup lookup(final int index, final boolean pinned, final Source... sources)
    {
        return lookup(index, pinned, 1, sources);
    }

    /**
     * A lookup of {@code keyCount} keys, as discovery leaves it: each key has a candidate at each of {@code sources}.
     */
    private PendingLookup lookup(final int index, final boolean pinned, final int keyCount, final Source... sources)
    {
        final KeyStatus[] statuses = new KeyStatus[keyCount];
        final int[] lengths = new int[keyCount];
        java.util.Arrays.fill(statuses, KeyStatus.MISS);
        final PendingLookup lookup = TestLookups.newLookup(index);
        lookup.request(7, 8, 0, 0, statuses, lengths, keyCount).namespace(namespace, 0, NAMESPACE.length)
            .pinned(pinned);
        for (int k = 0; k < keyCount; k++)
        {
            lookup.addPeerKey(hash, k * 8, 8);
        }
        for (int k = 0; k < keyCount; k++)
        {
            for (final Source source : sources)
            {
                final int owner = lookup.answer().addOwner(source.msb, source.lsb, source.record.nodeId());
                lookup.answer().addCandidate(k, owner, KeyStatus.DRAM, source.sequence, BLOCK);
            }
        }
        return lookup;
    }

    /**
     * A pinned lookup of one key whose discovery found it at {@code sources}: the fetch authorizes a span at the
     * first one (endpoints order them).
     */
    private PeerFetch startHold(final Source... sources)
    {
        return startHold(1, sources);
    }

    /**
     * As {@link #startHold(Source...)} for {@code keyCount} keys, each held by every one of {@code sources}.
     */
    private PeerFetch startHold(final int keyCount, final Source... sources)
    {
        final KeyStatus[] statuses = new KeyStatus[keyCount];
        final int[] lengths = new int[keyCount];
        java.util.Arrays.fill(statuses, KeyStatus.MISS);
        final PendingLookup lookup = lookup(0, true, keyCount, sources);
        final PeerFetch fetch = fetcher.acquireFetch(listener);
        assertNotNull(fetch);
        fetch.request(PeerFetch.HOLD, 7, 8, LookupRequestDecoder.TEMPLATE_ID, 0, 0, keyCount, statuses, lengths)
            .namespace(namespace, 0, NAMESPACE.length);
        for (int k = 0; k < keyCount; k++)
        {
            assertTrue(fetch.addKey(hash, k * 8, 8, 0, 0));
        }
        final int before = channel.authorizes.size();
        fetcher.startHold(fetch, lookup);
        assertEquals(before + 1, channel.authorizes.size(), "one authorization for the one span");
        return fetch;
    }

    /**
     * A source's grant of the first {@code granted} keys of an authorization (at {@code address}, 0 for a grant
     * without a usable range), each key after them answered {@code refusal}.
     */
    private void grantKeys(
        final Source source, final Authorize to, final int granted, final TransferStatus refusal, final long address)
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[1024]);
        final TransferGrantEncoder encoder = new TransferGrantEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder());
        encoder.route().destinationIncarnation().msb(SELF_MSB).lsb(SELF_LSB);
        encoder.route().senderIncarnation().msb(source.msb).lsb(source.lsb);
        encoder.peerSessionId(source.client.sessionId()).correlationId(to.correlationId)
            .requesterSessionId(to.requesterSessionId).status(TransferStatus.OK)
            .transferSessionId(500 + source.msb).token(1).ttlMs(30_000).grantedKeys(granted);
        final TransferGrantEncoder.KeysEncoder keys = encoder.keysCount(to.keys);
        for (int k = 0; k < to.keys; k++)
        {
            if (k < granted)
            {
                keys.next().status(TransferStatus.OK).address(address).length(BLOCK).crc32c(7);
            }
            else
            {
                keys.next().status(refusal).address(0).length(0).crc32c(0);
            }
        }
        encoder.putTransportEndpoint(new UnsafeBuffer("127.0.0.1:9".getBytes(StandardCharsets.US_ASCII)), 0, 11);
        encoder.putMessage(new UnsafeBuffer(new byte[0]), 0, 0);
        fetcher.onGrant(source.client, new TransferGrantDecoder().wrapAndApplyHeader(buffer, 0, new MessageHeaderDecoder()));
    }

    private void grant(final Source source, final Authorize to, final TransferStatus status, final int grantedKeys)
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[1024]);
        final TransferGrantEncoder encoder = new TransferGrantEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder());
        encoder.route().destinationIncarnation().msb(SELF_MSB).lsb(SELF_LSB);
        encoder.route().senderIncarnation().msb(source.msb).lsb(source.lsb);
        encoder.peerSessionId(source.client.sessionId()).correlationId(to.correlationId)
            .requesterSessionId(to.requesterSessionId).status(grantedKeys > 0 ? TransferStatus.OK : status)
            .transferSessionId(grantedKeys > 0 ? 500 + source.msb : 0).token(1).ttlMs(30_000)
            .grantedKeys(grantedKeys);
        final TransferGrantEncoder.KeysEncoder keys = encoder.keysCount(1);
        keys.next().status(grantedKeys > 0 ? TransferStatus.OK : status)
            .address(grantedKeys > 0 ? 0x10_0000L : 0).length(grantedKeys > 0 ? BLOCK : 0).crc32c(7);
        encoder.putTransportEndpoint(new UnsafeBuffer("127.0.0.1:9".getBytes(StandardCharsets.US_ASCII)), 0, 11);
        encoder.putMessage(new UnsafeBuffer(new byte[0]), 0, 0);
        fetcher.onGrant(source.client, new TransferGrantDecoder().wrapAndApplyHeader(buffer, 0, new MessageHeaderDecoder()));
    }

    private void releaseAck(final Source source, final Release release)
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[256]);
        final TransferReleaseAckEncoder encoder = new TransferReleaseAckEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder());
        encoder.route().destinationIncarnation().msb(SELF_MSB).lsb(SELF_LSB);
        encoder.route().senderIncarnation().msb(source.msb).lsb(source.lsb);
        encoder.peerSessionId(source.client.sessionId()).correlationId(release.correlationId)
            .transferSessionId(release.transferSessionId).status(TransferStatus.OK);
        fetcher.onReleaseAck(
            source.client, new TransferReleaseAckDecoder().wrapAndApplyHeader(buffer, 0, new MessageHeaderDecoder()));
    }

    private long counter(final CounterDescriptor descriptor)
    {
        return counters.get(descriptor).get();
    }

    private static final class Source
    {
        final long msb;
        final long lsb;
        final long sequence;
        final MemberRecord record;
        final PeerClient client;

        Source(final int n)
        {
            msb = 0xA000L + n;
            lsb = 0xB000L + n;
            sequence = 40 + n;
            record = new MemberRecord("node-" + n, 1, new UUID(msb, lsb), n, "127.0.0.1:" + (1000 + n),
                "127.0.0.1:" + (2000 + n), 1, 0);
            client = TestPeerSessions.activeClient(n, 300 + n, msb, lsb);
        }
    }

    /**
     * The catalog as the requester sees it: a member view of the test's sources, each with an active session, and
     * a count of the candidate versions removed.
     */
    private static final class FakeCatalog implements CatalogRequester
    {
        private final Long2ObjectHashMap<Source> sources = new Long2ObjectHashMap<>();
        boolean remoteWork = true;
        int removedVersions;

        Source source(final int n)
        {
            final Source source = new Source(n);
            sources.put(source.msb, source);
            return source;
        }

        public PendingLookup acquireLookup()
        {
            return null;
        }

        public void startLookup(final PendingLookup lookup, final LookupAnswerSink sink)
        {
            sink.answer(lookup);
        }

        public boolean remoteWorkEnabled()
        {
            return remoteWork;
        }

        public MemberRecord member(final long msb, final long lsb)
        {
            final Source source = sources.get(msb);
            return null == source || source.lsb != lsb ? null : source.record;
        }

        public long localIncarnationMsb()
        {
            return SELF_MSB;
        }

        public long localIncarnationLsb()
        {
            return SELF_LSB;
        }

        public PeerClient sourceClient(final long msb, final long lsb, final long nowMs)
        {
            final Source source = sources.get(msb);
            return null == source ? null : source.client;
        }

        public boolean removeCandidate(
            final StateKeyFlyweight key, final long ownerMsb, final long ownerLsb, final long insertionSequence)
        {
            removedVersions++;
            return true;
        }
    }

    private record Authorize(long correlationId, long requesterSessionId, long destinationMsb, int keys)
    {
    }

    private record Release(long correlationId, long transferSessionId, ReleaseReason reason)
    {
    }

    /**
     * Decodes what the fetcher sends, as a source's adapter would.
     */
    private static final class RecordingChannel implements RequestChannel
    {
        private final MessageHeaderDecoder header = new MessageHeaderDecoder();
        private final TransferAuthorizeDecoder authorize = new TransferAuthorizeDecoder();
        private final TransferReleaseDecoder release = new TransferReleaseDecoder();
        final List<Authorize> authorizes = new ArrayList<>();
        final List<Release> releases = new ArrayList<>();
        private long correlationId;

        Authorize lastAuthorize()
        {
            return authorizes.get(authorizes.size() - 1);
        }

        public boolean offer(final PeerClient client, final DirectBuffer buffer, final int offset, final int length)
        {
            header.wrap(buffer, offset);
            if (TransferAuthorizeDecoder.TEMPLATE_ID == header.templateId())
            {
                authorize.wrapAndApplyHeader(buffer, offset, header);
                authorizes.add(new Authorize(authorize.correlationId(), authorize.requesterSessionId(),
                    authorize.route().destinationIncarnation().msb(), authorize.keys().count()));
            }
            else if (TransferReleaseDecoder.TEMPLATE_ID == header.templateId())
            {
                release.wrapAndApplyHeader(buffer, offset, header);
                releases.add(new Release(release.correlationId(), release.transferSessionId(), release.reason()));
            }
            return true;
        }

        public long nextCorrelationId()
        {
            return ++correlationId;
        }
    }

    /**
     * A transport whose reads never complete on their own; a held span is never read.
     */
    private static final class CountingTransport implements Transport
    {
        int reads;
        int peer;

        public String name()
        {
            return "counting";
        }

        public String localEndpoint()
        {
            return "127.0.0.1:9";
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
            return peer;
        }

        public void closePeer(final int peer)
        {
        }

        public boolean submitRead(
            final int peer,
            final long sessionId,
            final long token,
            final long remoteAddress,
            final long localAddress,
            final int length,
            final long requestId)
        {
            reads++;
            return true;
        }

        public int poll(final TransportListener listener, final int limit)
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
}
