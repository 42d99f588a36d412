package io.orbitkv.manager.catalog;

import java.util.Arrays;

import io.orbitkv.codecs.CandidateTable;
import io.orbitkv.codecs.CatalogLimits;
import io.orbitkv.codecs.EngineRingLimits;
import io.orbitkv.codecs.StateKeyFlyweight;
import io.orbitkv.codecs.StateKeyShard;
import io.orbitkv.codecs.catalog.ColdQueryResponseDecoder;
import io.orbitkv.codecs.catalog.Coverage;
import io.orbitkv.codecs.catalog.ResidenceTier;
import io.orbitkv.codecs.engine.FailureReason;
import io.orbitkv.codecs.engine.KeyStatus;
import io.orbitkv.index.CandidateIndex;
import io.orbitkv.index.CandidateSet;
import io.orbitkv.manager.membership.MemberRecord;
import io.orbitkv.manager.membership.PlacementState;
import io.orbitkv.manager.peer.PeerClient;
import io.orbitkv.manager.status.SystemCounters;
import org.agrona.DirectBuffer;
import org.agrona.collections.Long2LongHashMap;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * The requester side of discovery: keys after an engine Lookup's local prefix are answered from the
 * {@link CandidateIndex} when it has usable evidence (no RPC), otherwise batched into one cold query per catalog host
 * (never one per block, never a broadcast), with a 3 s budget per lookup; keys of shards this Manager holds a copy of
 * are read from its own catalog view, with no RPC, unless that view is incomplete. Keys already being asked by
 * another lookup are not asked again: the lookup waits for that query and rechecks the index afterwards. Rows go into
 * the candidate index (an empty row stores nothing: it is not proof of absence), and the answer is built from the
 * index, skipping candidates of this Manager itself and of incarnations the member view does not show. A key this
 * Manager's own DRAM holds (given a {@link LocalResidency}) is neither asked nor a miss: it is answered DRAM and the
 * answer goes on after it, so a chain whose blocks alternate between peers and this Manager is found whole.
 * <p>
 * Each key is asked of one copy of its shard: preferably a host not suspected of leaving a query unanswered, with an
 * active session, already asked by the same creator, with the fewest queries in flight, else the first by rank. When
 * that copy does not answer within {@link CatalogLimits#COLD_QUERY_ATTEMPT_MS}, refuses, leaves the view, or answers a
 * row empty from an incomplete view, the key is asked of a copy not tried yet, within the same budget: at most one
 * try per copy, never a broadcast. A key no copy can be asked of stays unresolved (counted unavailable). Runs on the
 * agent thread.
 */
final class PeerDiscovery
{
    static final int MAX_PENDING_LOOKUPS = CatalogRequester.MAX_PENDING_LOOKUPS;

    /**
     * Cold queries in flight at once.
     */
    static final int MAX_INFLIGHT_QUERIES = 64;

    /**
     * How long a host that left a query unanswered or refused it is passed over when another copy can be asked.
     */
    static final long SUSPECT_MS = CatalogLimits.COLD_QUERY_BUDGET_MS;

    private static final long NO_QUERY = -1;
    private static final int ROW_BITS = 8;

    private final HostedCatalog host;
    private final DiscoveryMembers members;
    private final CandidateIndex candidates;
    private final AtomicCounter candidateHits;
    private final AtomicCounter coldQueries;
    private final AtomicCounter coldKeys;
    private final AtomicCounter localHostKeys;
    private final AtomicCounter coldCoalesced;
    private final AtomicCounter coldTimeouts;
    private final AtomicCounter peerKeys;
    private final AtomicCounter localKeys;
    private final AtomicCounter coldFailovers;
    private final AtomicCounter coldAttemptTimeouts;
    private final AtomicCounter keysUnavailable;
    private final ColdQueryLink[] replicaLinks = new ColdQueryLink[PlacementState.MAX_HOLDERS];
    private final boolean[] retryRows = new boolean[CatalogLimits.MAX_COLD_QUERY_KEYS];
    private int askedRow;
    private final StateKeyShard shardFunction = new StateKeyShard();
    private final PendingLookup[] lookups = new PendingLookup[MAX_PENDING_LOOKUPS];
    private final ColdQuerySlot[] queries = new ColdQuerySlot[MAX_INFLIGHT_QUERIES];
    private final Long2LongHashMap inflightKeys = new Long2LongHashMap(NO_QUERY);
    private final CandidateSet set = new CandidateSet();
    private final CandidateSet held = new CandidateSet();
    private final StateKeyFlyweight key = new StateKeyFlyweight();
    private final StateKeyFlyweight probe = new StateKeyFlyweight();
    private final LocalResidency localResidency;
    private final ColdQuerySender sender;
    private int activeLookups;
    private int activeQueries;

    PeerDiscovery(
        final HostedCatalog host,
        final DiscoveryMembers members,
        final CandidateIndex candidates,
        final SystemCounters counters,
        final LocalResidency localResidency,
        final ColdQuerySender sender)
    {
        this.host = host;
        this.localResidency = localResidency;
        this.sender = sender;
        this.members = members;
        this.candidates = candidates;
        this.candidateHits = counters.get(CatalogCounter.CANDIDATE_HITS);
        this.coldQueries = counters.get(CatalogCounter.COLD_QUERIES);
        this.coldKeys = counters.get(CatalogCounter.COLD_KEYS);
        this.localHostKeys = counters.get(CatalogCounter.LOCAL_HOST_KEYS);
        this.coldCoalesced = counters.get(CatalogCounter.COLD_COALESCED);
        this.coldTimeouts = counters.get(CatalogCounter.COLD_TIMEOUTS);
        this.peerKeys = counters.get(CatalogCounter.PEER_KEYS);
        this.localKeys = counters.get(CatalogCounter.LOCAL_CONTINUATION_KEYS);
        this.coldFailovers = counters.get(CatalogCounter.COLD_FAILOVERS);
        this.coldAttemptTimeouts = counters.get(CatalogCounter.COLD_ATTEMPT_TIMEOUTS);
        this.keysUnavailable = counters.get(CatalogCounter.COLD_KEYS_UNAVAILABLE);
        for (int i = 0; i < lookups.length; i++)
        {
            lookups[i] = new PendingLookup(i);
        }
        for (int i = 0; i < queries.length; i++)
        {
            queries[i] = new ColdQuerySlot(i, MAX_PENDING_LOOKUPS);
        }
    }

    PendingLookup acquire()
    {
        if (activeLookups == MAX_PENDING_LOOKUPS)
        {
            return null;
        }
        for (final PendingLookup lookup : lookups)
        {
            if (!lookup.active)
            {
                return lookup;
            }
        }
        return null;
    }

    /**
     * Resolve a filled lookup: at once when every key is warm (or nothing can be asked), else after its queries.
     */
    void start(final PendingLookup lookup, final LookupAnswerSink sink, final long nowMs)
    {
        lookup.sink = sink;
        lookup.generation++;
        lookup.active = true;
        lookup.outstanding = 0;
        lookup.answeredKeys = 0;
        lookup.deadlineMs = nowMs + CatalogLimits.COLD_QUERY_BUDGET_MS;
        activeLookups++;

        for (int k = 0; k < lookup.peerKeyCount(); k++)
        {
            if (localLength(lookup, k) >= 0)
            {
                // Held here: answered from DRAM when the lookup completes, never asked of a catalog host.
                continue;
            }
            final StateKeyFlyweight key = lookup.key(k, this.key);
            final int usable = usableCandidates(key, nowMs);
            if (usable > 0)
            {
                candidateHits.incrementRelease();
                // Warm keys that continue the answered prefix are answered now, from this one read of the index.
                if (k == lookup.answeredKeys)
                {
                    answerKey(lookup, k, usable);
                }
                continue;
            }
            final long fingerprint = fingerprint(key);
            final long inflight = inflightKeys.get(fingerprint);
            if (NO_QUERY != inflight)
            {
                final ColdQuerySlot query = queries[(int)(inflight >>> ROW_BITS)];
                if (query.active && query.matches((int)(inflight & 0xFF), key))
                {
                    query.addWaiter(lookup);
                    coldCoalesced.incrementRelease();
                    continue;
                }
            }
            final int shard = shardFunction.shard(key);
            if (host.hostsShard(shard))
            {
                // This Manager holds a copy: its own view answers on this thread, without an RPC to itself through
                // the media driver. An empty row stores nothing, as from a remote host; from an incomplete view
                // (this copy is being rebuilt) it proves nothing, so another copy is asked.
                localHostKeys.incrementRelease();
                set.clear();
                final boolean complete = host.lookup(shard, key, set);
                if (set.count() > 0)
                {
                    candidates.put(key, set, nowMs);
                    if (k == lookup.answeredKeys)
                    {
                        answerKey(lookup, k, usableCandidates(key, nowMs));
                    }
                    continue;
                }
                if (complete)
                {
                    continue;
                }
            }
            final ColdQuerySlot query = ask(lookup.index, lookup.generation, lookup.deadlineMs,
                lookup.namespaceBuffer(), lookup.namespaceLength(), shard, key, fingerprint, 0, nowMs);
            if (null == query)
            {
                keysUnavailable.incrementRelease();
                lookup.markUnavailable(k);
                continue;
            }
            inflightKeys.put(fingerprint, ((long)query.index << ROW_BITS) | askedRow);
            query.addWaiter(lookup);
        }
        if (0 == lookup.outstanding)
        {
            complete(lookup, nowMs);
        }
        else
        {
            sendReady(nowMs);
        }
    }

    int doWork(final long nowMs)
    {
        if (0 == activeLookups && 0 == activeQueries)
        {
            return 0;
        }
        int work = sendReady(nowMs);
        for (final ColdQuerySlot query : queries)
        {
            if (!query.active)
            {
                continue;
            }
            if (nowMs - query.budgetDeadlineMs >= 0)
            {
                // No copy answered these keys within the budget (keys moved to another copy are that query's).
                for (int row = 0; row < query.keyCount; row++)
                {
                    if (inflightKeys.get(query.fingerprints[row]) == (((long)query.index << ROW_BITS) | row))
                    {
                        keysUnavailable.incrementRelease();
                        markUnavailable(query, row);
                    }
                }
                finish(query, nowMs);
                work++;
            }
            else if (query.link.isClosed())
            {
                failOver(query, null, true, nowMs);
                finish(query, nowMs);
                work++;
            }
            else if (nowMs - query.attemptDeadlineMs >= 0)
            {
                coldAttemptTimeouts.incrementRelease();
                query.link.suspect(nowMs + SUSPECT_MS);
                query.attemptDeadlineMs = query.budgetDeadlineMs;
                if (0 == failOver(query, null, false, nowMs))
                {
                    finish(query, nowMs);
                }
                work++;
            }
        }
        for (final PendingLookup lookup : lookups)
        {
            if (lookup.active && nowMs - lookup.deadlineMs >= 0)
            {
                coldTimeouts.incrementRelease();
                complete(lookup, nowMs);
                work++;
            }
        }
        return work;
    }

    void onColdQueryResponse(final PeerClient client, final ColdQueryResponseDecoder response, final long nowMs)
    {
        final ColdQuerySlot query = queryFor(client, response.correlationId());
        if (null == query)
        {
            return;
        }
        final ColdQueryResponseDecoder.RowsDecoder rows = response.rows();
        boolean retry = false;
        Arrays.fill(retryRows, false);
        while (rows.hasNext())
        {
            rows.next();
            final int row = rows.rowIndex();
            final boolean incomplete = Coverage.INCOMPLETE == rows.coverage();
            final ColdQueryResponseDecoder.RowsDecoder.CandidatesDecoder found = rows.candidates();
            set.clear();
            while (found.hasNext())
            {
                found.next();
                set.add(found.ownerNodeIndex(), found.ownerIncarnation().msb(), found.ownerIncarnation().lsb(),
                    found.insertionSequence(), ResidenceTier.DRAM == found.tier() ? 0 : 1, found.byteSize());
            }
            if (row < query.keyCount && set.count() > 0)
            {
                putMerged(query.key(row, key), nowMs);
            }
            else if (row < query.keyCount && incomplete)
            {
                // An empty row from a copy still being rebuilt proves nothing: ask another copy.
                retryRows[row] = true;
                retry = true;
            }
        }
        if (retry)
        {
            failOver(query, retryRows, true, nowMs);
        }
        finish(query, nowMs);
    }

    /**
     * A host refused a cold query (the generic response names its correlation id): the keys stay unresolved.
     */
    void onResponse(final PeerClient client, final long correlationId, final long nowMs)
    {
        final ColdQuerySlot query = queryFor(client, correlationId);
        if (null != query)
        {
            query.link.suspect(nowMs + SUSPECT_MS);
            failOver(query, null, true, nowMs);
            finish(query, nowMs);
        }
    }

    private ColdQuerySlot queryFor(final PeerClient client, final long correlationId)
    {
        for (final ColdQuerySlot query : queries)
        {
            if (query.active && query.sent && query.correlationId == correlationId && query.link.owns(client))
            {
                return query;
            }
        }
        return null;
    }

    /**
     * Add a key to a query to one copy of its shard not tried yet ({@link #askedRow} is its row).
     *
     * @return the query, or null when no copy is left to ask or no query slot is free.
     */
    private ColdQuerySlot ask(
        final int creatorIndex,
        final long creatorGeneration,
        final long budgetDeadlineMs,
        final DirectBuffer namespace,
        final int namespaceLength,
        final int shard,
        final StateKeyFlyweight key,
        final long fingerprint,
        final int triedReplicas,
        final long nowMs)
    {
        final int hashLength = key.hashLength();
        final int replica = pickReplica(creatorIndex, creatorGeneration, shard, triedReplicas, hashLength, nowMs);
        if (replica < 0)
        {
            return null;
        }
        final ColdQueryLink link = replicaLinks[replica];
        ColdQuerySlot free = null;
        for (final ColdQuerySlot query : queries)
        {
            if (query.acceptsKeysFrom(creatorIndex, creatorGeneration, link, hashLength))
            {
                askedRow = query.addKey(shard, key, fingerprint, triedReplicas | (1 << replica));
                return query;
            }
            if (null == free && !query.active)
            {
                free = query;
            }
        }
        if (null != free)
        {
            free.open(link, sender.nextCorrelationId(), nowMs, budgetDeadlineMs, creatorIndex, creatorGeneration,
                namespace, 0, namespaceLength);
            activeQueries++;
            askedRow = free.addKey(shard, key, fingerprint, triedReplicas | (1 << replica));
        }
        return free;
    }

    /**
     * The copy of {@code shard} to ask next, fills {@link #replicaLinks}.
     *
     * @return its replica rank, or -1 when every copy with a link was tried.
     */
    private int pickReplica(
        final int creatorIndex,
        final long creatorGeneration,
        final int shard,
        final int triedReplicas,
        final int hashLength,
        final long nowMs)
    {
        final int replicas = members.replicaLinks(shard, replicaLinks);
        int best = -1;
        long bestScore = Long.MAX_VALUE;
        for (int r = 0; r < replicas; r++)
        {
            final ColdQueryLink link = replicaLinks[r];
            if (null == link || link.isClosed() || 0 != (triedReplicas & (1 << r)))
            {
                continue;
            }
            int inflight = 0;
            boolean joinable = false;
            for (final ColdQuerySlot query : queries)
            {
                if (query.active && query.link == link)
                {
                    inflight++;
                    joinable |= query.acceptsKeysFrom(creatorIndex, creatorGeneration, link, hashLength);
                }
            }
            // Lexicographic: not suspected, session active, a query of this creator to join, fewest in flight, rank.
            final long score = (link.suspectUntilMs() - nowMs > 0 ? 1L << 40 : 0) +
                (null == link.poll(nowMs) ? 1L << 32 : 0) + (joinable ? 0 : 1L << 24) +
                ((long)Math.min(inflight, 0xFFFF) << 8) + r;
            if (score < bestScore)
            {
                bestScore = score;
                best = r;
            }
        }
        return best;
    }

    /**
     * Ask the keys of a query that failed (all rows, or the flagged ones) of copies not tried yet, within what is left
     * of the budget; the lookups waiting for it wait for the new queries too (added before the failed one finishes).
     * A query past its attempt time is not {@code ending}: it stays open until the budget when some of its keys have
     * no other copy, and whichever answer comes first fills the candidate index.
     *
     * @return the keys left with no other copy to ask.
     */
    private int failOver(final ColdQuerySlot failed, final boolean[] rows, final boolean ending, final long nowMs)
    {
        if (nowMs - failed.budgetDeadlineMs >= 0)
        {
            return failed.keyCount;
        }
        boolean moved = false;
        int stranded = 0;
        for (int row = 0; row < failed.keyCount; row++)
        {
            if (null != rows && !rows[row])
            {
                continue;
            }
            final long fingerprint = failed.fingerprints[row];
            final ColdQuerySlot next = ask(failed.retryCreator(), failed.correlationId, failed.budgetDeadlineMs,
                failed.namespace, failed.namespaceLength, failed.shards[row], failed.key(row, key), fingerprint,
                failed.triedReplicas[row], nowMs);
            if (null == next)
            {
                // With the query ending no copy is left to ask; otherwise the query itself still may answer.
                if (ending)
                {
                    keysUnavailable.incrementRelease();
                    markUnavailable(failed, row);
                }
                stranded++;
                continue;
            }
            coldFailovers.incrementRelease();
            if (inflightKeys.get(fingerprint) == (((long)failed.index << ROW_BITS) | row))
            {
                inflightKeys.put(fingerprint, ((long)next.index << ROW_BITS) | askedRow);
            }
            for (int i = 0; i < failed.waiterCount; i++)
            {
                final PendingLookup lookup = lookups[failed.waiterIndex[i]];
                if (failed.waits(i, lookup))
                {
                    next.addWaiter(lookup);
                }
            }
            moved = true;
        }
        if (moved)
        {
            sendReady(nowMs);
        }
        return stranded;
    }

    private int sendReady(final long nowMs)
    {
        int sent = 0;
        for (final ColdQuerySlot query : queries)
        {
            if (query.active && !query.sent)
            {
                final PeerClient client = query.link.poll(nowMs);
                if (null != client && sender.sendColdQuery(client, query.correlationId, query.shards[0],
                    query.keyCount, query.shards, query.namespaces, query.namespaceLengths, query.hashes,
                    query.hashLengths))
                {
                    query.sent = true;
                    coldQueries.incrementRelease();
                    coldKeys.getAndAddRelease(query.keyCount);
                    sent++;
                }
            }
        }
        return sent;
    }

    private void finish(final ColdQuerySlot query, final long nowMs)
    {
        query.active = false;
        activeQueries--;
        for (int row = 0; row < query.keyCount; row++)
        {
            final long fingerprint = query.fingerprints[row];
            if (inflightKeys.get(fingerprint) == (((long)query.index << ROW_BITS) | row))
            {
                inflightKeys.remove(fingerprint);
            }
        }
        for (int i = 0; i < query.waiterCount; i++)
        {
            final PendingLookup lookup = lookups[query.waiterIndex[i]];
            if (lookup.active && lookup.generation == query.waiterGeneration[i] && --lookup.outstanding == 0)
            {
                complete(lookup, nowMs);
            }
        }
        query.waiterCount = 0;
    }

    /**
     * Store the row in {@link #set} for {@code key}, merged with what the index already holds from another copy of the
     * shard: one candidate per owner incarnation, the later insertion sequence of the two winning. (Whether an
     * incarnation is still live is judged when the answer is built, against the member view.)
     */
    private void putMerged(final StateKeyFlyweight key, final long nowMs)
    {
        final int heldCount = candidates.get(key, nowMs, held);
        for (int h = 0; h < heldCount; h++)
        {
            boolean known = false;
            for (int c = 0; c < set.count() && !known; c++)
            {
                known = set.incarnationMsb(c) == held.incarnationMsb(h) && set.incarnationLsb(c) == held.incarnationLsb(h);
                if (known && held.insertionSequence(h) > set.insertionSequence(c))
                {
                    set.replace(c, held, h);
                }
            }
            if (!known)
            {
                set.add(held.ownerNode(h), held.incarnationMsb(h), held.incarnationLsb(h), held.insertionSequence(h),
                    held.tier(h), held.byteSize(h), held.generation(h));
            }
        }
        candidates.put(key, set, nowMs);
    }

    /**
     * The lookups waiting for row {@code row} of {@code query} learn that no copy answered for that key.
     */
    private void markUnavailable(final ColdQuerySlot query, final int row)
    {
        for (int i = 0; i < query.waiterCount; i++)
        {
            final PendingLookup lookup = lookups[query.waiterIndex[i]];
            if (query.waits(i, lookup))
            {
                for (int k = lookup.answeredKeys; k < lookup.peerKeyCount(); k++)
                {
                    if (query.matches(row, lookup.key(k, probe)))
                    {
                        lookup.markUnavailable(k);
                    }
                }
            }
        }
    }

    /**
     * Finish the answer: keys from the first one not yet answered are reread from the candidate index (the cold
     * queries and any coalesced ones have filled it by now); the prefix continues through keys with a candidate.
     */
    private void complete(final PendingLookup lookup, final long nowMs)
    {
        lookup.active = false;
        activeLookups--;
        final KeyStatus[] statuses = lookup.statuses();
        final int[] lengths = lookup.lengths();
        final int first = lookup.firstPeerKey();
        boolean missed = false;
        int local = 0;
        for (int k = lookup.answeredKeys; k < lookup.peerKeyCount(); k++)
        {
            final int keyIndex = first + k;
            final int localLength;
            if (missed)
            {
                statuses[keyIndex] = KeyStatus.NOT_ATTEMPTED;
                lengths[keyIndex] = 0;
            }
            else if ((localLength = localLength(lookup, k)) >= 0)
            {
                // Held here (the fetcher serves it from this Manager's DRAM): the prefix goes on after it.
                statuses[keyIndex] = KeyStatus.DRAM;
                lengths[keyIndex] = localLength;
                lookup.answeredKeys++;
                local++;
            }
            else if (!answerKey(lookup, k, usableCandidates(lookup.key(k, key), nowMs)))
            {
                // Not found: proven absent, unless no copy of its shard could answer for it.
                if (lookup.isUnavailable(k))
                {
                    statuses[keyIndex] = KeyStatus.FAILED;
                    lookup.reasons()[keyIndex] = FailureReason.CATALOG_UNAVAILABLE;
                }
                else
                {
                    statuses[keyIndex] = KeyStatus.MISS;
                }
                lengths[keyIndex] = 0;
                missed = true;
            }
        }
        peerKeys.getAndAddRelease(lookup.answeredKeys - local);
        if (local > 0)
        {
            localKeys.getAndAddRelease(local);
        }
        final LookupAnswerSink sink = lookup.sink;
        lookup.sink = null;
        sink.answer(lookup);
    }

    /**
     * Append the usable candidates in {@link #set} as peer key {@code k}'s answer (status PEER, length of the first).
     *
     * @return false when none could be added (the key stays unanswered).
     */
    private boolean answerKey(final PendingLookup lookup, final int k, final int usable)
    {
        final CandidateTable answer = lookup.answer();
        final int keyIndex = lookup.firstPeerKey() + k;
        // Leave room for one candidate per key after this one: the answer's rows are fewer than keys x 4.
        final int room = EngineRingLimits.MAX_CANDIDATES_PER_LOOKUP - answer.candidateCount() -
            (lookup.peerKeyCount() - k - 1);
        final int wanted = Math.min(usable, Math.max(1, room));
        int added = 0;
        for (int c = 0; c < wanted; c++)
        {
            final MemberRecord owner = members.memberByIncarnation(set.incarnationMsb(c), set.incarnationLsb(c));
            final int ownerIndex = answer.addOwner(set.incarnationMsb(c), set.incarnationLsb(c), owner.nodeId());
            if (ownerIndex >= 0 && answer.addCandidate(keyIndex, ownerIndex,
                0 == set.tier(c) ? KeyStatus.DRAM : KeyStatus.SSD, set.insertionSequence(c), (int)set.byteSize(c)))
            {
                if (0 == added)
                {
                    lookup.lengths()[keyIndex] = (int)set.byteSize(c);
                }
                added++;
            }
        }
        if (added > 0)
        {
            lookup.statuses()[keyIndex] = KeyStatus.PEER;
            lookup.answeredKeys++;
            return true;
        }
        return false;
    }

    /**
     * Fill {@link #set} with the key's candidates that can serve: known to the member view, not this Manager.
     */
    private int usableCandidates(final StateKeyFlyweight key, final long nowMs)
    {
        final int count = candidates.get(key, nowMs, set);
        int kept = 0;
        for (int c = 0; c < count; c++)
        {
            final long msb = set.incarnationMsb(c);
            final long lsb = set.incarnationLsb(c);
            if (!members.isSelf(msb, lsb) && null != members.memberByIncarnation(msb, lsb))
            {
                if (kept != c)
                {
                    set.copy(c, kept);
                }
                kept++;
            }
        }
        set.truncate(kept);
        return kept;
    }

    /**
     * @return the DRAM length of peer key {@code k} when this Manager holds it, else -1.
     */
    private int localLength(final PendingLookup lookup, final int k)
    {
        if (lookup.namespaceId() < 0)
        {
            return -1;
        }
        return localResidency.dramLength(
            lookup.namespaceId(), lookup.hashBuffer(), lookup.hashOffset(k), lookup.hashLength(k));
    }

    private static long fingerprint(final StateKeyFlyweight key)
    {
        final long h = key.fingerprint();
        return h == NO_QUERY ? 0 : h;
    }
}
