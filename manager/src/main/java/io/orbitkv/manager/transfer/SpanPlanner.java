package io.orbitkv.manager.transfer;

import io.orbitkv.codecs.TransferLimits;
import io.orbitkv.index.NamespaceTable;
import io.orbitkv.manager.catalog.CatalogRequester;
import io.orbitkv.manager.membership.MemberRecord;
import io.orbitkv.manager.status.SystemCounters;
import io.orbitkv.manager.store.Residence;
import io.orbitkv.manager.store.TieredStore;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * Cuts a fetch's keys into spans, one source each: at each key this Manager's own DRAM when it holds the key (a local
 * span, pinned and granted at once), else the live, answering source whose unrefused candidates continue furthest
 * from it (ties: the smaller peer endpoint, then the smaller incarnation), at most
 * {@link TransferLimits#MAX_KEYS_PER_AUTHORIZE} keys. Single threaded (the agent that owns the fetches).
 */
final class SpanPlanner
{
    private final CatalogRequester catalog;
    private final TieredStore store;
    private final NamespaceTable namespaces;
    private final UnansweredSources unanswered;
    private final AtomicCounter suspectSkips;
    private long nextRequesterSessionId;

    SpanPlanner(
        final CatalogRequester catalog,
        final TieredStore store,
        final NamespaceTable namespaces,
        final UnansweredSources unanswered,
        final SystemCounters counters)
    {
        this.catalog = catalog;
        this.store = store;
        this.namespaces = namespaces;
        this.unanswered = unanswered;
        this.suspectSkips = counters.get(TransferCounter.UNANSWERED_SOURCE_SKIPS);
    }

    /**
     * Cut the keys from {@code fetch.nextKey} into spans: at each key, this Manager's own DRAM when it holds the key
     * (a local span), else the source whose unrefused candidates continue furthest from it; the span ends where that
     * run ends. Stops at the first key nobody can serve.
     */
    void plan(final PeerFetch fetch, final long nowMs)
    {
        final int namespaceId = namespaces.lookup(fetch.namespace, 0, fetch.namespaceLength);
        int k = fetch.nextKey;
        while (k < fetch.keyCount && k < fetch.stopKey && fetch.attemptCount < PeerFetch.MAX_ATTEMPTS)
        {
            final int localRun = planLocal(fetch, namespaceId, k, nowMs);
            if (localRun > 0)
            {
                k += localRun;
                fetch.nextKey = k;
                continue;
            }
            long bestMsb = 0;
            long bestLsb = 0;
            int bestRun = 0;
            MemberRecord bestRecord = null;
            final int base = k * PeerFetch.MAX_CANDIDATES;
            for (int c = 0; c < fetch.candidateCounts[k]; c++)
            {
                if (0 != (fetch.candidateRefused[k] & (1 << c)))
                {
                    continue;
                }
                final long msb = fetch.candidateMsbs[base + c];
                final long lsb = fetch.candidateLsbs[base + c];
                final MemberRecord record = catalog.member(msb, lsb);
                if (null == record)
                {
                    continue;
                }
                if (unanswered.isSuspect(msb, lsb, nowMs))
                {
                    suspectSkips.incrementRelease();
                    continue;
                }
                int run = 1;
                while (k + run < fetch.keyCount && k + run < fetch.stopKey &&
                    run < TransferLimits.MAX_KEYS_PER_AUTHORIZE && fetch.candidateOf(k + run, msb, lsb) >= 0)
                {
                    run++;
                }
                if (run > bestRun || (run == bestRun && precedes(record, msb, lsb, bestRecord, bestMsb, bestLsb)))
                {
                    bestRun = run;
                    bestMsb = msb;
                    bestLsb = lsb;
                    bestRecord = record;
                }
            }
            if (0 == bestRun)
            {
                fetch.stopAt(k);
                break;
            }
            newAttempt(fetch, bestMsb, bestLsb, k, bestRun, nowMs);
            for (int i = k; i < k + bestRun; i++)
            {
                fetch.keyCandidates[i] = fetch.candidateOf(i, bestMsb, bestLsb);
            }
            k += bestRun;
            fetch.nextKey = k;
        }
    }

    /**
     * A local span from key {@code k}: the run of keys this Manager's DRAM holds, pinned now and granted at once (the
     * coordinator starts its copies for a READ). SSD residences are not served this way: their read goes through the
     * storage agent.
     *
     * @return the keys in the span, 0 when DRAM does not hold key {@code k}.
     */
    private int planLocal(final PeerFetch fetch, final int namespaceId, final int k, final long nowMs)
    {
        if (namespaceId < 0)
        {
            return 0;
        }
        int run = 0;
        while (k + run < fetch.keyCount && k + run < fetch.stopKey && run < TransferLimits.MAX_KEYS_PER_AUTHORIZE)
        {
            final int i = k + run;
            final long residence = store.findReady(namespaceId, fetch.hashes, fetch.hashOffset(i), fetch.hashLengths[i]);
            if (!Residence.isDram(residence))
            {
                break;
            }
            fetch.keyResidences[i] = residence;
            run++;
        }
        if (0 == run)
        {
            return 0;
        }
        final SourceAttempt attempt = newAttempt(fetch, 0, 0, k, run, nowMs);
        attempt.local = true;
        attempt.state = SourceAttempt.GRANTED;
        attempt.grantedKeys = run;
        final long poolAddress = store.pool().address();
        for (int i = k; i < k + run; i++)
        {
            final long residence = fetch.keyResidences[i];
            store.pin(residence);
            fetch.keyAddresses[i] = poolAddress + store.offset(Residence.entryId(residence));
            fetch.keyLengths[i] = store.length(residence);
            fetch.keyCrcs[i] = store.crc32c(residence);
            fetch.keyCandidates[i] = -1;
            fetch.keyStates[i] = PeerFetch.KEY_GRANTED;
        }
        return run;
    }

    /**
     * A new attempt, TO_SEND from {@code notBeforeMs} on, for keys [firstKey, firstKey + keyCount) at one source.
     */
    SourceAttempt newAttempt(
        final PeerFetch fetch, final long ownerMsb, final long ownerLsb, final int firstKey, final int keyCount,
        final long notBeforeMs)
    {
        return fetch.newAttempt(ownerMsb, ownerLsb, firstKey, keyCount, nextRequesterSessionId(), notBeforeMs);
    }

    /**
     * @return a requester session id no earlier ask of this Manager carried (an ask again is a new session).
     */
    long nextRequesterSessionId()
    {
        return ++nextRequesterSessionId;
    }

    static int inFlightSources(final PeerFetch fetch)
    {
        int n = 0;
        for (int a = 0; a < fetch.attemptCount; a++)
        {
            if (SourceAttempt.SENT == fetch.attempt(a).state)
            {
                n++;
            }
        }
        return n;
    }

    private static boolean precedes(
        final MemberRecord record, final long msb, final long lsb, final MemberRecord other, final long otherMsb,
        final long otherLsb)
    {
        if (null == other)
        {
            return true;
        }
        final int byEndpoint = record.peerEndpoint().compareTo(other.peerEndpoint());
        if (0 != byEndpoint)
        {
            return byEndpoint < 0;
        }
        final int byMsb = Long.compareUnsigned(msb, otherMsb);
        return byMsb != 0 ? byMsb < 0 : Long.compareUnsigned(lsb, otherLsb) < 0;
    }
}
