package io.orbitkv.manager.catalog;

import io.orbitkv.manager.SystemCounterFamilies;
import io.orbitkv.manager.status.CounterDescriptor;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;

import io.orbitkv.codecs.CatalogLimits;
import io.orbitkv.codecs.StateKeyFlyweight;
import io.orbitkv.codecs.StateKeyShard;
import io.orbitkv.codecs.catalog.CatalogStatus;
import io.orbitkv.codecs.catalog.ColdQueryResponseDecoder;
import io.orbitkv.codecs.catalog.ColdQueryResponseEncoder;
import io.orbitkv.codecs.catalog.Coverage;
import io.orbitkv.codecs.catalog.MessageHeaderDecoder;
import io.orbitkv.codecs.catalog.MessageHeaderEncoder;
import io.orbitkv.codecs.catalog.ResidenceTier;
import io.orbitkv.codecs.engine.FailureReason;
import io.orbitkv.codecs.engine.KeyStatus;
import io.orbitkv.index.CandidateIndex;
import io.orbitkv.index.CandidateSet;
import io.orbitkv.index.NamespaceTable;
import io.orbitkv.manager.membership.MemberRecord;
import io.orbitkv.manager.peer.PeerClient;
import io.orbitkv.manager.peer.TestPeerSessions;
import io.orbitkv.manager.status.SystemCounters;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersManager;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * {@link PeerDiscovery} stepped on its own, on a test clock: its own candidate index, and fakes of what it asks (the
 * shards this node hosts, the member view with one link per catalog host, this node's DRAM) and of where its cold
 * queries go. No Aeron, etcd or transport.
 */
class PeerDiscoveryTest
{
    private static final byte[] NAMESPACE_BYTES = "model=discovery;dtype=bf16;block=16".getBytes(StandardCharsets.US_ASCII);
    private static final UnsafeBuffer NAMESPACE = new UnsafeBuffer(NAMESPACE_BYTES);
    private static final int NAMESPACE_ID = 3;
    private static final int HASH_LENGTH = 32;
    private static final long START_MS = 1_000_000L;
    private static final int BLOCK_BYTES = 4096;
    private static final StateKeyShard SHARDS = new StateKeyShard();

    private static final long SELF_MSB = 0x5E1FL;
    private static final long SELF_LSB = 0x5E1EL;
    /**
     * The peer that holds the blocks: a live member.
     */
    private static final MemberRecord OWNER = member("owner", 0xA1L, 0xA2L, 1);
    /**
     * The catalog hosts of the shards this node does not host: host 0 of even shards, host 1 of odd ones; with more
     * copies (a test sets {@link FakeMembers#replicas}), host 2 holds the second copy of every shard and the other
     * of hosts 0 and 1 the third.
     */
    private static final MemberRecord[] HOSTS = {
        member("host-0", 0xB1L, 0xB2L, 2), member("host-1", 0xC1L, 0xC2L, 3), member("host-2", 0xD1L, 0xD2L, 4) };

    private final FakeHosted hosted = new FakeHosted();
    private final FakeMembers members = new FakeMembers();
    private final FakeDram dram = new FakeDram();
    private final RecordingSender sender = new RecordingSender();
    private final RecordingSink sink = new RecordingSink();
    private final CandidateIndex candidates =
        new CandidateIndex(1L << 20, CatalogLimits.CANDIDATE_TTL_MS, new NamespaceTable());
    private final StateKeyFlyweight key = new StateKeyFlyweight();
    private final CandidateSet set = new CandidateSet();
    private SystemCounters counters;
    private PeerDiscovery discovery;

    @BeforeEach
    void setUp()
    {
        counters = SystemCounterFamilies.allocate(new CountersManager(
            new UnsafeBuffer(new byte[2 << 20]), new UnsafeBuffer(new byte[512 << 10]), StandardCharsets.US_ASCII));
        discovery = new PeerDiscovery(hosted, members, candidates, counters, dram, sender);
    }

    @AfterEach
    void tearDown()
    {
        counters.close();
    }

    @Test
    void shouldAnswerWarmKeysFromTheCandidateIndexWithoutAColdQuery()
    {
        final int n = keyOfShard(0, 0);
        candidateOf(n, OWNER, 77);

        final PendingLookup lookup = lookup(n);
        discovery.start(lookup, sink, START_MS);

        assertSame(lookup, sink.only());
        assertEquals(KeyStatus.PEER, lookup.statuses()[0]);
        assertEquals(BLOCK_BYTES, lookup.lengths()[0]);
        assertEquals(77, lookup.answer().candidateInsertionSequence(0));
        assertEquals(OWNER.nodeId(), lookup.answer().ownerNodeId(lookup.answer().candidateOwnerIndex(0)));
        assertTrue(sender.sent.isEmpty(), "no cold query for a warm key");
        assertEquals(1, counter(CatalogCounter.CANDIDATE_HITS));
        assertEquals(1, counter(CatalogCounter.PEER_KEYS));
    }

    @Test
    void shouldAnswerKeysOfAShardThisNodeHostsFromItsOwnView()
    {
        final int shard = 5;
        final int n = keyOfShard(shard, 0);
        hosted.host(shard);
        hosted.candidate = OWNER;

        final PendingLookup lookup = lookup(n);
        discovery.start(lookup, sink, START_MS);

        assertSame(lookup, sink.only());
        assertEquals(KeyStatus.PEER, lookup.statuses()[0]);
        assertEquals(1, hosted.lookups);
        assertTrue(sender.sent.isEmpty(), "no cold query to this node itself");
        assertEquals(1, counter(CatalogCounter.LOCAL_HOST_KEYS));
        // What the own view found is in the index for the next lookup.
        assertEquals(1, candidates.get(key(n), START_MS, set));
    }

    @Test
    void shouldAnswerKeysInLocalDramWithoutAskingAndGoOnAfterThem()
    {
        final int local = keyOfShard(0, 0);
        final int warm = keyOfShard(0, 1);
        dram.hold(local, 2048);
        candidateOf(warm, OWNER, 78);

        final PendingLookup lookup = lookup(local, warm);
        discovery.start(lookup, sink, START_MS);

        assertSame(lookup, sink.only());
        assertEquals(KeyStatus.DRAM, lookup.statuses()[0]);
        assertEquals(2048, lookup.lengths()[0]);
        assertEquals(KeyStatus.PEER, lookup.statuses()[1]);
        assertTrue(sender.sent.isEmpty(), "a key held here is never asked");
        assertEquals(1, counter(CatalogCounter.LOCAL_CONTINUATION_KEYS));
        assertEquals(1, counter(CatalogCounter.PEER_KEYS));
    }

    @Test
    void shouldSendOneColdQueryPerHostAndAnswerOnceEveryResponseFilledTheCandidates()
    {
        final int a = keyOfShard(0, 0);
        final int b = keyOfShard(2, 0);
        final int c = keyOfShard(1, 0);

        final PendingLookup lookup = lookup(a, b, c);
        discovery.start(lookup, sink, START_MS);

        assertEquals(2, sender.sent.size(), () -> "one query per host: " + sender.sent);
        final SentQuery toHost0 = sender.to(HOSTS[0]);
        final SentQuery toHost1 = sender.to(HOSTS[1]);
        assertEquals(2, toHost0.keyCount);
        assertEquals(1, toHost1.keyCount);
        assertNotEquals(toHost0.correlationId, toHost1.correlationId);
        assertEquals(2, counter(CatalogCounter.COLD_QUERIES));
        assertEquals(3, counter(CatalogCounter.COLD_KEYS));
        assertTrue(sink.answered.isEmpty(), "answered before the hosts");

        discovery.onColdQueryResponse(toHost0.client, response(toHost0.correlationId, 0, 1), START_MS + 5);
        assertTrue(sink.answered.isEmpty(), "answered before the second host");
        assertEquals(1, candidates.get(key(a), START_MS + 5, set));
        assertEquals(OWNER.runtimeUuid().getMostSignificantBits(), set.incarnationMsb(0));

        discovery.onColdQueryResponse(toHost1.client, response(toHost1.correlationId, 0), START_MS + 6);
        assertSame(lookup, sink.only());
        assertEquals(KeyStatus.PEER, lookup.statuses()[0]);
        assertEquals(KeyStatus.PEER, lookup.statuses()[1]);
        assertEquals(KeyStatus.PEER, lookup.statuses()[2]);
        assertEquals(3, lookup.answer().candidateCount());
        assertEquals(0, discovery.doWork(START_MS + 7), "nothing left to do");
    }

    @Test
    void shouldCompleteALookupWhoseHostNeverAnswersAtTheThreeSecondBudget()
    {
        final int n = keyOfShard(0, 0);
        final PendingLookup lookup = lookup(n);
        discovery.start(lookup, sink, START_MS);
        assertEquals(1, sender.sent.size());

        discovery.doWork(START_MS + CatalogLimits.COLD_QUERY_BUDGET_MS - 1);
        assertTrue(sink.answered.isEmpty(), "answered before the budget");

        discovery.doWork(START_MS + CatalogLimits.COLD_QUERY_BUDGET_MS);
        assertSame(lookup, sink.only());
        assertUnavailable(lookup, 0);
        assertEquals(0, counter(CatalogCounter.PEER_KEYS));
        assertEquals(1, counter(CatalogCounter.COLD_KEYS_UNAVAILABLE), "unanswered in the budget: unavailable");
    }

    @Test
    void shouldIgnoreAResponseOfAnotherCorrelationOrAnotherSession()
    {
        final int n = keyOfShard(0, 0);
        final PendingLookup lookup = lookup(n);
        discovery.start(lookup, sink, START_MS);
        final SentQuery query = sender.only();
        final long[] before = countersOfDiscovery();

        discovery.onColdQueryResponse(query.client, response(query.correlationId + 1, 0), START_MS + 1);
        discovery.onColdQueryResponse(members.links[1].client, response(query.correlationId, 0), START_MS + 2);
        discovery.onResponse(query.client, query.correlationId + 1, START_MS + 3);

        assertTrue(sink.answered.isEmpty(), "a stale response ended the lookup");
        assertEquals(0, candidates.get(key(n), START_MS + 3, set), "a stale response filled the index");
        assertTrue(Arrays.equals(before, countersOfDiscovery()), "a stale response moved a discovery counter");

        discovery.onColdQueryResponse(query.client, response(query.correlationId, 0), START_MS + 4);
        assertSame(lookup, sink.only());
        assertEquals(KeyStatus.PEER, lookup.statuses()[0]);
    }

    @Test
    void shouldAnswerUnavailableWhenTheOnlyCopyRefusesTheQuery()
    {
        final int n = keyOfShard(0, 0);
        final PendingLookup lookup = lookup(n);
        discovery.start(lookup, sink, START_MS);
        final SentQuery query = sender.only();

        discovery.onResponse(query.client, query.correlationId, START_MS + 1);

        assertSame(lookup, sink.only());
        assertUnavailable(lookup, 0);
    }

    @Test
    void shouldAskTheNextCopyWhenTheFirstLeavesTheQueryUnansweredWithinItsAttemptTime()
    {
        members.replicas = 3;
        final int n = keyOfShard(0, 0);
        final PendingLookup lookup = lookup(n);
        discovery.start(lookup, sink, START_MS);
        final SentQuery first = sender.only();
        assertSame(members.links[0].client, first.client, "rank 0 first when every copy is equal");

        discovery.doWork(START_MS + CatalogLimits.COLD_QUERY_ATTEMPT_MS - 1);
        assertEquals(1, sender.sent.size(), "asked again before the attempt time");
        discovery.doWork(START_MS + CatalogLimits.COLD_QUERY_ATTEMPT_MS);
        assertEquals(2, sender.sent.size());
        final SentQuery second = sender.sent.get(1);
        assertSame(members.links[2].client, second.client, "the next copy by rank");
        assertEquals(1, counter(CatalogCounter.COLD_ATTEMPT_TIMEOUTS));
        assertEquals(1, counter(CatalogCounter.COLD_FAILOVERS));
        assertTrue(sink.answered.isEmpty());

        discovery.onColdQueryResponse(second.client, response(second.correlationId, 0), START_MS + 1_005);
        assertSame(lookup, sink.only(), "answered by the second copy, well inside the budget");
        assertEquals(KeyStatus.PEER, lookup.statuses()[0]);

        // The silent host is passed over while suspected: the next key of its shard goes to another copy first.
        final PendingLookup next = lookup(keyOfShard(0, 1));
        discovery.start(next, sink, START_MS + 1_010);
        assertSame(members.links[2].client, sender.sent.get(sender.sent.size() - 1).client);
    }

    @Test
    void shouldWaitTheWholeBudgetForTheOnlyCopy()
    {
        final int n = keyOfShard(0, 0);
        final PendingLookup lookup = lookup(n);
        discovery.start(lookup, sink, START_MS);
        final SentQuery query = sender.only();

        discovery.doWork(START_MS + CatalogLimits.COLD_QUERY_ATTEMPT_MS);
        assertEquals(1, sender.sent.size(), "no other copy to ask");
        discovery.onColdQueryResponse(query.client, response(query.correlationId, 0), START_MS + 2_000);
        assertSame(lookup, sink.only());
        assertEquals(KeyStatus.PEER, lookup.statuses()[0]);
    }

    @Test
    void shouldAskTheNextCopyAtOnceWhenAHostRefuses()
    {
        members.replicas = 2;
        final int n = keyOfShard(1, 0);
        final PendingLookup lookup = lookup(n);
        discovery.start(lookup, sink, START_MS);
        final SentQuery first = sender.only();

        discovery.onResponse(first.client, first.correlationId, START_MS + 1);
        assertEquals(2, sender.sent.size());
        final SentQuery second = sender.sent.get(1);
        assertSame(members.links[2].client, second.client);
        assertTrue(sink.answered.isEmpty(), "the refusal ended the lookup");

        discovery.onColdQueryResponse(second.client, response(second.correlationId, 0), START_MS + 2);
        assertSame(lookup, sink.only());
        assertEquals(KeyStatus.PEER, lookup.statuses()[0]);
    }

    @Test
    void shouldAskAnotherCopyForRowsAnsweredEmptyFromAnIncompleteView()
    {
        members.replicas = 2;
        final int a = keyOfShard(0, 0);
        final int b = keyOfShard(0, 1);
        final PendingLookup lookup = lookup(a, b);
        discovery.start(lookup, sink, START_MS);
        final SentQuery first = sender.only();
        assertEquals(2, first.keyCount);

        // Row 0 has a candidate; row 1 comes empty from a copy still being rebuilt: only row 1 is asked again.
        discovery.onColdQueryResponse(first.client, response(first.correlationId, new int[]{ 0 }, new int[]{ 1 }),
            START_MS + 1);
        assertEquals(2, sender.sent.size());
        final SentQuery second = sender.sent.get(1);
        assertEquals(1, second.keyCount);
        assertTrue(sink.answered.isEmpty());

        discovery.onColdQueryResponse(second.client, response(second.correlationId, 0), START_MS + 2);
        assertSame(lookup, sink.only());
        assertEquals(KeyStatus.PEER, lookup.statuses()[0]);
        assertEquals(KeyStatus.PEER, lookup.statuses()[1]);
    }

    @Test
    void shouldTryEveryCopyOnceAndCountTheKeyUnavailableWhenNoneAnswers()
    {
        members.replicas = 3;
        final int n = keyOfShard(0, 0);
        final PendingLookup lookup = lookup(n);
        discovery.start(lookup, sink, START_MS);

        for (int i = 0; i < 3; i++)
        {
            final SentQuery query = sender.sent.get(i);
            discovery.onResponse(query.client, query.correlationId, START_MS + 1 + i);
        }
        assertEquals(3, sender.sent.size(), "never more tries than copies");
        assertEquals(3, sender.sent.stream().map(q -> q.client).distinct().count(), "each copy once");
        assertSame(lookup, sink.only());
        assertUnavailable(lookup, 0);
        assertEquals(2, counter(CatalogCounter.COLD_FAILOVERS));
        assertEquals(1, counter(CatalogCounter.COLD_KEYS_UNAVAILABLE));
    }

    @Test
    void shouldPreferACopyWithAnActiveSessionAndNeverAskAClosedLink()
    {
        members.replicas = 3;
        members.links[0].active = false;
        members.links[2].closed = true;
        final int n = keyOfShard(0, 0);
        discovery.start(lookup(n), sink, START_MS);
        assertSame(members.links[1].client, sender.only().client, "rank 2 is the only copy with a session");
    }

    @Test
    void shouldAskARemoteCopyWhenItsOwnCopyIsIncomplete()
    {
        members.replicas = 2;
        final int shard = 4;
        hosted.host(shard);
        hosted.complete = false;
        final int n = keyOfShard(shard, 0);

        final PendingLookup lookup = lookup(n);
        discovery.start(lookup, sink, START_MS);
        assertEquals(1, hosted.lookups);
        assertEquals(1, sender.sent.size(), "an incomplete own view proves nothing");

        hosted.complete = true;
        final PendingLookup again = lookup(keyOfShard(shard, 1));
        discovery.start(again, sink, START_MS + 1);
        assertEquals(1, sender.sent.size(), "a complete own view answers the miss itself");
        assertSame(again, sink.answered.get(sink.answered.size() - 1));
        assertEquals(KeyStatus.MISS, again.statuses()[0]);
    }

    @Test
    void shouldMergeAnAnswerWithWhatAnotherCopyAnsweredBeforeOneCandidatePerIncarnationTheLaterWinning()
    {
        final int n = keyOfShard(0, 0);
        // What an earlier answer left, none of it usable here so the key is still cold: this node's own block at 200
        // and one of an incarnation the view does not show at 50.
        final long staleMsb = 0x57A1EL;
        set.clear();
        set.add(1, SELF_MSB, SELF_LSB, 200, 0, BLOCK_BYTES);
        set.add(2, staleMsb, 1, 50, 0, BLOCK_BYTES);
        assertTrue(candidates.put(key(n), set, START_MS));

        final PendingLookup lookup = lookup(n);
        discovery.start(lookup, sink, START_MS);
        final SentQuery query = sender.only();
        discovery.onColdQueryResponse(query.client, answer(query.correlationId, new long[][]{
            { SELF_MSB, SELF_LSB, 120 }, { staleMsb, 1, 90 },
            { OWNER.runtimeUuid().getMostSignificantBits(), OWNER.runtimeUuid().getLeastSignificantBits(), 95 } }),
            START_MS + 1);

        assertEquals(3, candidates.get(key(n), START_MS + 1, set), "one candidate per incarnation");
        for (int c = 0; c < 3; c++)
        {
            final long expected = SELF_MSB == set.incarnationMsb(c) ? 200 : staleMsb == set.incarnationMsb(c) ? 90 : 95;
            assertEquals(expected, set.insertionSequence(c), "the later sequence wins");
        }
        assertEquals(KeyStatus.PEER, lookup.statuses()[0]);
        assertEquals(1, lookup.answer().candidateCount(), "only the live owner is usable");
        assertEquals(95, lookup.answer().candidateInsertionSequence(0));
    }

    // ---------------------------------------------------------------------------------------------------------------

    /**
     * A host's answer with one row (row 0) naming the given {msb, lsb, insertion sequence} candidates.
     */
    private static ColdQueryResponseDecoder answer(final long correlationId, final long[][] rowCandidates)
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[4096]);
        final ColdQueryResponseEncoder encoder =
            new ColdQueryResponseEncoder().wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder());
        encoder.sessionId(1).correlationId(correlationId).status(CatalogStatus.OK);
        final ColdQueryResponseEncoder.RowsEncoder.CandidatesEncoder found = encoder.rowsCount(1).next()
            .rowIndex(0).coverage(Coverage.COMPLETE).candidatesCount(rowCandidates.length);
        for (final long[] candidate : rowCandidates)
        {
            found.next().ownerNodeIndex(1).insertionSequence(candidate[2]).generation(1).tier(ResidenceTier.DRAM)
                .byteSize(BLOCK_BYTES).ownerIncarnation().msb(candidate[0]).lsb(candidate[1]);
        }
        return new ColdQueryResponseDecoder().wrap(buffer, MessageHeaderDecoder.ENCODED_LENGTH,
            ColdQueryResponseDecoder.BLOCK_LENGTH, ColdQueryResponseDecoder.SCHEMA_VERSION);
    }

    private static void assertUnavailable(final PendingLookup lookup, final int keyIndex)
    {
        assertEquals(KeyStatus.FAILED, lookup.statuses()[keyIndex], "not proven absent");
        assertEquals(FailureReason.CATALOG_UNAVAILABLE, lookup.reasons()[keyIndex]);
    }

    private PendingLookup lookup(final int... keys)
    {
        final PendingLookup lookup = discovery.acquire();
        assertNotNull(lookup);
        final KeyStatus[] statuses = new KeyStatus[keys.length];
        Arrays.fill(statuses, KeyStatus.MISS);
        lookup.request(1, 2, 0, 0, statuses, new int[keys.length], keys.length)
            .namespaceId(NAMESPACE_ID)
            .namespace(NAMESPACE, 0, NAMESPACE_BYTES.length);
        for (final int n : keys)
        {
            assertTrue(lookup.addPeerKey(hash(n), 0, HASH_LENGTH));
        }
        return lookup;
    }

    private void candidateOf(final int n, final MemberRecord owner, final long insertionSequence)
    {
        set.clear();
        set.add(1, owner.runtimeUuid().getMostSignificantBits(), owner.runtimeUuid().getLeastSignificantBits(),
            insertionSequence, 0, BLOCK_BYTES);
        assertTrue(candidates.put(key(n), set, START_MS));
    }

    private StateKeyFlyweight key(final int n)
    {
        return key.wrap(StateKeyFlyweight.NO_NAMESPACE_ID, NAMESPACE, 0, NAMESPACE_BYTES.length, hash(n), 0,
            HASH_LENGTH);
    }

    /**
     * A host's answer naming {@link #OWNER} for the complete rows, and empty INCOMPLETE rows (a copy being rebuilt).
     */
    private static ColdQueryResponseDecoder response(
        final long correlationId, final int[] completeRows, final int[] incompleteRows)
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[4096]);
        final ColdQueryResponseEncoder encoder =
            new ColdQueryResponseEncoder().wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder());
        encoder.sessionId(1).correlationId(correlationId).status(CatalogStatus.OK);
        final ColdQueryResponseEncoder.RowsEncoder encoded =
            encoder.rowsCount(completeRows.length + incompleteRows.length);
        for (final int row : completeRows)
        {
            encoded.next().rowIndex(row).coverage(Coverage.COMPLETE).candidatesCount(1).next()
                .ownerNodeIndex(1)
                .insertionSequence(90 + row)
                .generation(1)
                .tier(ResidenceTier.DRAM)
                .byteSize(BLOCK_BYTES)
                .ownerIncarnation()
                .msb(OWNER.runtimeUuid().getMostSignificantBits())
                .lsb(OWNER.runtimeUuid().getLeastSignificantBits());
        }
        for (final int row : incompleteRows)
        {
            encoded.next().rowIndex(row).coverage(Coverage.INCOMPLETE).candidatesCount(0);
        }
        return new ColdQueryResponseDecoder().wrap(buffer, MessageHeaderDecoder.ENCODED_LENGTH,
            ColdQueryResponseDecoder.BLOCK_LENGTH, ColdQueryResponseDecoder.SCHEMA_VERSION);
    }

    /**
     * A host's answer naming {@link #OWNER} for each of the given rows of the query.
     */
    private static ColdQueryResponseDecoder response(final long correlationId, final int... rows)
    {
        return response(correlationId, rows, new int[0]);
    }

    private long[] countersOfDiscovery()
    {
        final CounterDescriptor[] descriptors = {
            CatalogCounter.CANDIDATE_HITS, CatalogCounter.COLD_QUERIES,
            CatalogCounter.COLD_KEYS, CatalogCounter.LOCAL_HOST_KEYS,
            CatalogCounter.COLD_COALESCED, CatalogCounter.COLD_TIMEOUTS,
            CatalogCounter.PEER_KEYS, CatalogCounter.LOCAL_CONTINUATION_KEYS, CatalogCounter.COLD_FAILOVERS,
            CatalogCounter.COLD_ATTEMPT_TIMEOUTS, CatalogCounter.COLD_KEYS_UNAVAILABLE };
        final long[] values = new long[descriptors.length];
        for (int i = 0; i < descriptors.length; i++)
        {
            values[i] = counter(descriptors[i]);
        }
        return values;
    }

    private long counter(final CounterDescriptor descriptor)
    {
        return counters.get(descriptor).get();
    }

    private static MemberRecord member(final String nodeId, final long msb, final long lsb, final int port)
    {
        return new MemberRecord(nodeId, 1, new UUID(msb, lsb), port, "127.0.0.1:" + (1000 + port),
            "127.0.0.1:" + (2000 + port), 1, 0);
    }

    private static UnsafeBuffer hash(final int n)
    {
        final byte[] bytes = new byte[HASH_LENGTH];
        for (int i = 0; i < HASH_LENGTH; i++)
        {
            bytes[i] = (byte)(n * 29 + i * 7 + 3);
        }
        bytes[0] = (byte)n;
        bytes[1] = (byte)(n >>> 8);
        return new UnsafeBuffer(bytes);
    }

    /**
     * @return the {@code which}-th key number whose key falls in {@code shard}.
     */
    private static int keyOfShard(final int shard, final int which)
    {
        int found = 0;
        for (int n = 0; ; n++)
        {
            if (SHARDS.shard(NAMESPACE, 0, NAMESPACE_BYTES.length, hash(n), 0, HASH_LENGTH) == shard && found++ == which)
            {
                return n;
            }
        }
    }

    /**
     * The shards this node hosts (none unless a test says so); its view holds one candidate of each key asked.
     */
    private static final class FakeHosted implements HostedCatalog
    {
        private final boolean[] hosted = new boolean[CatalogLimits.SHARD_COUNT];
        MemberRecord candidate;
        boolean complete = true;
        int lookups;

        void host(final int shard)
        {
            hosted[shard] = true;
        }

        public boolean hostsShard(final int shard)
        {
            return hosted[shard];
        }

        public boolean lookup(final int shard, final StateKeyFlyweight key, final CandidateSet row)
        {
            lookups++;
            if (null != candidate)
            {
                row.add(1, candidate.runtimeUuid().getMostSignificantBits(),
                    candidate.runtimeUuid().getLeastSignificantBits(), 55, 0, BLOCK_BYTES);
            }
            return complete;
        }
    }

    /**
     * A member view of this node, the owner and two catalog hosts, each host behind a link with an active session.
     */
    private static final class FakeMembers implements DiscoveryMembers
    {
        final FakeLink[] links = { new FakeLink(HOSTS[0], 1), new FakeLink(HOSTS[1], 2), new FakeLink(HOSTS[2], 3) };
        int replicas = 1;

        public int replicaLinks(final int shard, final ColdQueryLink[] out)
        {
            out[0] = links[shard % 2];
            if (replicas > 1)
            {
                out[1] = links[2];
            }
            if (replicas > 2)
            {
                out[2] = links[(shard + 1) % 2];
            }
            return replicas;
        }

        public MemberRecord memberByIncarnation(final long msb, final long lsb)
        {
            for (final MemberRecord record : new MemberRecord[]{ OWNER, HOSTS[0], HOSTS[1], HOSTS[2] })
            {
                if (record.runtimeUuid().getMostSignificantBits() == msb &&
                    record.runtimeUuid().getLeastSignificantBits() == lsb)
                {
                    return record;
                }
            }
            return null;
        }

        public boolean isSelf(final long msb, final long lsb)
        {
            return SELF_MSB == msb && SELF_LSB == lsb;
        }
    }

    private static final class FakeLink implements ColdQueryLink
    {
        final MemberRecord host;
        final PeerClient client;

        FakeLink(final MemberRecord host, final int clientId)
        {
            this.host = host;
            this.client = TestPeerSessions.activeClient(clientId, 100 + clientId,
                host.runtimeUuid().getMostSignificantBits(), host.runtimeUuid().getLeastSignificantBits());
        }

        boolean active = true;
        boolean closed;
        long suspectUntilMs;

        public PeerClient poll(final long nowMs)
        {
            return active ? client : null;
        }

        public boolean owns(final PeerClient candidate)
        {
            return client == candidate;
        }

        public boolean isClosed()
        {
            return closed;
        }

        public long suspectUntilMs()
        {
            return suspectUntilMs;
        }

        public void suspect(final long untilMs)
        {
            suspectUntilMs = untilMs;
        }
    }

    /**
     * This node's DRAM: the keys a test says it holds, by the key number in their first two hash bytes.
     */
    private static final class FakeDram implements LocalResidency
    {
        private final int[] lengths = new int[1 << 16];

        void hold(final int n, final int length)
        {
            lengths[n] = length;
        }

        public int dramLength(final int namespaceId, final DirectBuffer hash, final int hashOffset, final int hashLength)
        {
            final int n = (hash.getByte(hashOffset) & 0xFF) | (hash.getByte(hashOffset + 1) & 0xFF) << 8;
            final int length = NAMESPACE_ID == namespaceId ? lengths[n] : 0;
            return length > 0 ? length : -1;
        }
    }

    private record SentQuery(PeerClient client, long correlationId, int shard, int keyCount)
    {
    }

    private static final class RecordingSender implements ColdQuerySender
    {
        final List<SentQuery> sent = new ArrayList<>();
        long correlationIds = 500;

        public long nextCorrelationId()
        {
            return ++correlationIds;
        }

        public boolean sendColdQuery(
            final PeerClient client,
            final long correlationId,
            final int shard,
            final int keyCount,
            final int[] keyShards,
            final DirectBuffer[] namespaces,
            final int[] namespaceLengths,
            final DirectBuffer[] hashes,
            final int[] hashLengths)
        {
            sent.add(new SentQuery(client, correlationId, shard, keyCount));
            return true;
        }

        SentQuery only()
        {
            assertEquals(1, sent.size(), () -> "queries: " + sent);
            return sent.get(0);
        }

        SentQuery to(final MemberRecord host)
        {
            for (final SentQuery query : sent)
            {
                if (query.client.remoteIncarnationMsb() == host.runtimeUuid().getMostSignificantBits())
                {
                    return query;
                }
            }
            return fail("no query to " + host.nodeId() + ": " + sent);
        }
    }

    private static final class RecordingSink implements LookupAnswerSink
    {
        final List<PendingLookup> answered = new ArrayList<>();

        public void answer(final PendingLookup lookup)
        {
            answered.add(lookup);
        }

        PendingLookup only()
        {
            assertEquals(1, answered.size(), "lookups answered");
            return answered.get(0);
        }
    }
}
