package io.orbitkv.manager.transfer;

import io.orbitkv.codecs.TransferLimits;
import io.orbitkv.codecs.engine.FailureReason;
import io.orbitkv.codecs.engine.KeyStatus;
import io.orbitkv.codecs.engine.LookupRequestDecoder;
import io.orbitkv.codecs.transfer.TransferGrantDecoder;
import io.orbitkv.codecs.transfer.TransferReleaseAckDecoder;
import io.orbitkv.codecs.transfer.TransferStatus;
import io.orbitkv.index.BlockChecksum;
import io.orbitkv.index.NamespaceTable;
import io.orbitkv.manager.catalog.CatalogRequester;
import io.orbitkv.manager.catalog.LookupAnswerSink;
import io.orbitkv.manager.catalog.PendingLookup;
import io.orbitkv.manager.peer.PeerClient;
import io.orbitkv.manager.peer.PeerPublisher;
import io.orbitkv.manager.port.FetchHandle;
import io.orbitkv.manager.port.LookupHandle;
import io.orbitkv.manager.port.PeerListener;
import io.orbitkv.manager.port.PeerPort;
import io.orbitkv.manager.status.SystemCounters;
import io.orbitkv.manager.store.TieredStore;
import io.orbitkv.transport.Transport;
import io.orbitkv.transport.TransportListener;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * The requester side of peer transfers, on the agent thread. For the keys after an engine request's local prefix it
 * finds candidates (the catalog's discovery), plans spans over them (the longest contiguous run per source, ties broken
 * by endpoint then incarnation), asks each source to authorize and pin its span, reads the granted ranges through the
 * {@link Transport} straight into the client's destination ranges, verifies every block's CRC32C and releases the
 * source's session. A refusal removes only the refused candidate version from the candidate index and tries another
 * source at most {@link TransferLimits#MAX_ALTERNATIVE_ATTEMPTS} times per fetch, with no new directory RPC; a payload
 * failure stops the prefix at that key, with no retry. The engine is told a block is good only once its bytes landed
 * and matched.
 * <p>
 * A fetch owns its destinations until every read it submitted has ended, even when its client detaches (the client's
 * data region is then handed over and closed only afterwards), and it owns the release of each source session:
 * sent when the session's reads ended, retried {@link TransferLimits#RELEASE_ATTEMPTS} times until acknowledged.
 * Steady-state work allocates nothing.
 * <p>
 * This class is the coordinator: the door the ring calls ({@link PeerPort}), the answers of discovery, the duty cycle,
 * and the end of each fetch (answer, free). The steps are parts it builds: {@link Authorizations} (spans,
 * authorizations, grants, refusals and waits), {@link FetchReads} (reads and checks), {@link FetchAnswers} (answer
 * rows, admission) and {@link SourceReleases} (releases until acknowledged). A {@link PeerFetch} changes its own
 * request and lifecycle fields; the parts record progress in its keys and attempts.
 */
public final class PeerFetcher implements PeerPort, LookupAnswerSink, TransportListener
{
    /**
     * Fetches in progress at once; beyond it a request is answered from its local prefix only (counted).
     */
    public static final int MAX_FETCHES = 64;

    private final CatalogRequester catalog;
    private final FetchReads reads;
    private final FetchAnswers answers;
    private final SourceReleases releases;
    private final Authorizations authorizations;
    private final Transport transport;
    private final NamespaceTable namespaces;
    private final ErrorHandler errorHandler;
    private final PeerFetch[] fetches = new PeerFetch[MAX_FETCHES];
    private final PeerListener[] lookupListeners = new PeerListener[CatalogRequester.MAX_PENDING_LOOKUPS];
    private final AtomicCounter fetchesStarted;
    private final AtomicCounter fetchesSkipped;
    private final AtomicCounter staleGrants;
    private final AtomicCounter budgetExpired;
    private final AtomicCounter fetchesActiveGauge;
    private final AtomicCounter readsInFlightGauge;
    private int activeFetches;
    private long nowMs;

    /**
     * @param catalog      the catalog as the requester uses it: lookups, members, source sessions.
     * @param publisher    where authorizations and releases are sent.
     * @param transport    reads granted ranges (and registers the engines' data regions).
     * @param store        this Manager's tiered store: local spans and admitted blocks.
     * @param namespaces   the Manager's namespace table.
     * @param admission    whether a verified peer block is kept in DRAM.
     * @param counters     the system counters.
     * @param errorHandler where failed reads and checksum mismatches are recorded.
     * @param accepted     where each session whose bytes were accepted is recorded.
     */
    public PeerFetcher(
        final CatalogRequester catalog,
        final PeerPublisher publisher,
        final Transport transport,
        final TieredStore store,
        final NamespaceTable namespaces,
        final PeerAdmission admission,
        final SystemCounters counters,
        final ErrorHandler errorHandler,
        final AcceptedSessions accepted)
    {
        this(catalog, new PublisherChannel(publisher), transport, store, namespaces, admission, counters, errorHandler,
            accepted);
    }

    PeerFetcher(
        final CatalogRequester catalog,
        final RequestChannel channel,
        final Transport transport,
        final TieredStore store,
        final NamespaceTable namespaces,
        final PeerAdmission admission,
        final SystemCounters counters,
        final ErrorHandler errorHandler)
    {
        this(catalog, channel, transport, store, namespaces, admission, counters, errorHandler, AcceptedSessions.NONE);
    }

    PeerFetcher(
        final CatalogRequester catalog,
        final RequestChannel channel,
        final Transport transport,
        final TieredStore store,
        final NamespaceTable namespaces,
        final PeerAdmission admission,
        final SystemCounters counters,
        final ErrorHandler errorHandler,
        final AcceptedSessions accepted)
    {
        final TransferProxy proxy = new TransferProxy(channel);
        final UnansweredSources unanswered = new UnansweredSources();
        this.catalog = catalog;
        this.reads = new FetchReads(transport, counters, errorHandler, accepted);
        this.answers = new FetchAnswers(catalog, store, namespaces, admission, counters);
        this.releases = new SourceReleases(catalog, proxy, store, counters);
        this.authorizations = new Authorizations(catalog, proxy,
            new SpanPlanner(catalog, store, namespaces, unanswered, counters), unanswered, reads, releases, transport,
            counters);
        this.transport = transport;
        this.namespaces = namespaces;
        this.errorHandler = errorHandler;
        for (int i = 0; i < fetches.length; i++)
        {
            fetches[i] = new PeerFetch(i);
        }
        fetchesStarted = counters.get(TransferCounter.FETCHES_STARTED);
        fetchesSkipped = counters.get(TransferCounter.FETCHES_SKIPPED);
        staleGrants = counters.get(TransferCounter.STALE_GRANTS);
        budgetExpired = counters.get(TransferCounter.FETCH_BUDGET_EXPIRED);
        fetchesActiveGauge = counters.get(TransferCounter.FETCHES_ACTIVE);
        readsInFlightGauge = counters.get(TransferCounter.READS_IN_FLIGHT);
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Engine ring side.

    /**
     * @param listener told when the fetch has its answer.
     * @return a free fetch to fill with {@link PeerFetch#request} and keys, or null when none is free or remote work
     * is disabled (counted): the request is then answered from its local prefix.
     */
    public PeerFetch acquireFetch(final PeerListener listener)
    {
        if (activeFetches < MAX_FETCHES && catalog.remoteWorkEnabled())
        {
            for (final PeerFetch fetch : fetches)
            {
                if (!fetch.active)
                {
                    fetch.begin(listener);
                    activeFetches++;
                    return fetch;
                }
            }
        }
        fetchesSkipped.incrementRelease();
        return null;
    }

    /**
     * Give a fetch back that was acquired but never started.
     */
    public void discard(final FetchHandle handle)
    {
        final PeerFetch fetch = (PeerFetch)handle;
        if (fetch.active && PeerFetch.IDLE == fetch.phase)
        {
            fetch.end(errorHandler);
            activeFetches--;
        }
    }

    /**
     * Start a filled fetch: discover candidates for its keys, then authorize (HOLD) or authorize and read (READ).
     * For a READ, the statuses and lengths of the local rows must be final (the local copy ended).
     */
    public void start(final FetchHandle handle)
    {
        final PeerFetch fetch = (PeerFetch)handle;
        fetchesStarted.incrementRelease();
        fetch.started(nowMs + TransferLimits.FETCH_BUDGET_MS);
        final PendingLookup lookup = catalog.acquireLookup();
        if (null == lookup)
        {
            fetch.authorizing();
            fetch.stopAt(0);
            finishIfDone(fetch);
            return;
        }
        lookup.request(fetch.clientId, fetch.correlationId, 0, 0, fetch.statuses, fetch.lengths, 0)
            .namespace(fetch.namespace, 0, fetch.namespaceLength)
            .namespaceId(namespaces.lookup(fetch.namespace, 0, fetch.namespaceLength));
        for (int k = 0; k < fetch.keyCount; k++)
        {
            lookup.addPeerKey(fetch.hashes, fetch.hashOffset(k), fetch.hashLengths[k]);
        }
        // The slot is this fetch's until discovery answers it (possibly from within startLookup).
        fetch.discovering(lookup.index());
        catalog.startLookup(lookup, this);
    }

    /**
     * Start a HOLD fetch from a Lookup whose discovery has just ended: its candidates are those of the answer.
     */
    void startHold(final PeerFetch fetch, final PendingLookup lookup)
    {
        fetchesStarted.incrementRelease();
        fetch.started(nowMs + TransferLimits.FETCH_BUDGET_MS);
        fetch.candidatesFrom(lookup.answer(), lookup.firstPeerKey());
        fetch.authorizing();
        authorizations.plan(fetch, nowMs);
        finishIfDone(fetch);
    }

    /**
     * Turn a held fetch into a READ of the same keys for the Read that uses its lease: every granted key with a
     * destination is read now; the answer comes through the listener.
     *
     * @param keys the number of leading held keys the Read asks for (each given its destination).
     */
    public void readHeld(final FetchHandle handle, final int keys, final long correlationId, final int firstRow,
        final int rowCount, final KeyStatus[] localStatuses, final int[] localLengths)
    {
        final PeerFetch fetch = (PeerFetch)handle;
        fetch.readHeld(keys, correlationId, firstRow, rowCount, localStatuses, localLengths,
            nowMs + TransferLimits.FETCH_BUDGET_MS);
        for (int a = 0; a < fetch.attemptCount; a++)
        {
            final SourceAttempt attempt = fetch.attempt(a);
            if (SourceAttempt.GRANTED == attempt.state)
            {
                reads.submit(fetch, attempt);
            }
        }
        finishIfDone(fetch);
    }

    /**
     * The lease holding a HOLD fetch went away (Release, a Read that did not use it, detach): release its sources.
     */
    public void release(final FetchHandle handle)
    {
        final PeerFetch fetch = (PeerFetch)handle;
        if (!fetch.active || PeerFetch.HOLD != fetch.kind)
        {
            return;
        }
        fetch.letHoldGo();
        for (int a = 0; a < fetch.attemptCount; a++)
        {
            releases.start(fetch, fetch.attempt(a), true, nowMs);
        }
        freeIfDone(fetch);
    }

    /**
     * The fetch's client detached: its answer will not be sent, and its destinations stay mapped until its reads
     * ended, when {@code region} (the client's data region, may be null) is closed.
     */
    public void clientGone(final FetchHandle handle, final AutoCloseable region)
    {
        final PeerFetch fetch = (PeerFetch)handle;
        fetch.clientGone(region);
        if (PeerFetch.HOLD == fetch.kind && fetch.answered)
        {
            release(fetch);
        }
        else
        {
            fetch.stopAt(fetch.firstUnfinished());
        }
        freeIfDone(fetch);
    }

    /**
     * Give the destinations of a READ the checksum of the client's data region at {@code address} they lie in.
     */
    public void destinationRegion(final FetchHandle handle, final long address, final BlockChecksum regionChecksum)
    {
        final PeerFetch fetch = (PeerFetch)handle;
        fetch.destinationRegion(address, regionChecksum);
    }

    /**
     * A client's data region became a possible destination: register it with the transport.
     */
    public void registerDestination(final long address, final long length)
    {
        transport.registerMemory(address, length);
    }

    public void unregisterDestination(final long address)
    {
        transport.unregisterMemory(address);
    }

    public int readsInFlight()
    {
        return reads.inFlight();
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Duty cycle.

    /**
     * Send what waits to be sent, deliver transport completions, enforce deadlines.
     */
    public int doWork(final long nowMs)
    {
        this.nowMs = nowMs;
        if (0 == activeFetches)
        {
            if (0 != fetchesActiveGauge.getPlain() || 0 != readsInFlightGauge.getPlain())
            {
                fetchesActiveGauge.setRelease(0);
                readsInFlightGauge.setRelease(0);
            }
            return 0;
        }
        int work = 0;
        for (final PeerFetch fetch : fetches)
        {
            if (!fetch.active)
            {
                continue;
            }
            for (int a = 0; a < fetch.attemptCount; a++)
            {
                work += progress(fetch, fetch.attempt(a));
            }
            if (!fetch.answered && nowMs - fetch.deadlineMs >= 0 && PeerFetch.DISCOVERING != fetch.phase)
            {
                budgetExpired.incrementRelease();
                final int stop = fetch.firstUnfinished();
                if (stop < fetch.keyCount && FailureReason.NONE == fetch.keyReasons[stop])
                {
                    fetch.keyReasons[stop] = FailureReason.BUDGET;
                }
                fetch.stopAt(stop);
                for (int a = 0; a < fetch.attemptCount; a++)
                {
                    final SourceAttempt attempt = fetch.attempt(a);
                    if (SourceAttempt.TO_SEND == attempt.state)
                    {
                        attempt.state = SourceAttempt.DONE;
                    }
                }
                work++;
            }
            finishIfDone(fetch);
        }
        fetchesActiveGauge.setRelease(activeFetches);
        readsInFlightGauge.setRelease(reads.inFlight());
        return work;
    }

    private int progress(final PeerFetch fetch, final SourceAttempt attempt)
    {
        switch (attempt.state)
        {
            case SourceAttempt.TO_SEND:
            case SourceAttempt.SENT:
                return authorizations.progress(fetch, attempt, nowMs);

            case SourceAttempt.GRANTED:
                if (PeerFetch.READ == fetch.kind && 0 == attempt.readsOutstanding &&
                    attempt.readsSubmitted < FetchReads.readable(fetch, attempt))
                {
                    return reads.submit(fetch, attempt);
                }
                if (PeerFetch.READ == fetch.kind && 0 == attempt.readsOutstanding)
                {
                    releases.start(fetch, attempt, false, nowMs);
                    return 1;
                }
                return 0;

            case SourceAttempt.RELEASING:
                if (nowMs - attempt.deadlineMs >= 0)
                {
                    if (!releases.retry(attempt, nowMs))
                    {
                        freeIfDone(fetch);
                    }
                    return 1;
                }
                return 0;

            default:
                return 0;
        }
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Discovery.

    public PendingLookup acquireLookup()
    {
        return catalog.acquireLookup();
    }

    public void startLookup(final LookupHandle handle, final PeerListener listener)
    {
        final PendingLookup lookup = (PendingLookup)handle;
        lookupListeners[lookup.index()] = listener;
        catalog.startLookup(lookup, this);
    }

    /**
     * Discovery resolved a lookup: the candidates of a READ being fetched, or a lookup of the ring's, which a pinned
     * lookup with peer keys turns into a HOLD of its sources.
     */
    public void answer(final PendingLookup lookup)
    {
        for (final PeerFetch fetch : fetches)
        {
            if (fetch.active && PeerFetch.DISCOVERING == fetch.phase && fetch.lookupIndex == lookup.index())
            {
                fetch.candidatesFrom(lookup.answer(), 0);
                fetch.authorizing();
                authorizations.plan(fetch, nowMs);
                finishIfDone(fetch);
                return;
            }
        }
        final PeerListener listener = lookupListeners[lookup.index()];
        lookupListeners[lookup.index()] = null;
        if (null == listener)
        {
            return;
        }
        if (!lookup.isPinned() || 0 == lookup.answer().peerKeyCount() || !startHold(lookup, listener))
        {
            listener.onLookupAnswered(lookup);
        }
    }

    /**
     * A pinned lookup whose candidates are known: ask their sources to authorize and pin them, so its lease covers
     * them too; answered through {@link PeerListener#onFetchAnswered} once they granted or refused.
     *
     * @return false when no fetch is free (the lookup is then answered as a hint).
     */
    private boolean startHold(final PendingLookup lookup, final PeerListener listener)
    {
        final PeerFetch fetch = acquireFetch(listener);
        if (null == fetch)
        {
            return false;
        }
        fetch.request(PeerFetch.HOLD, lookup.clientId(), lookup.correlationId(), LookupRequestDecoder.TEMPLATE_ID,
            lookup.leaseId(), lookup.firstPeerKey(), lookup.keyCount(), lookup.statuses(), lookup.lengths())
            .namespace(lookup.namespaceBuffer(), 0, lookup.namespaceLength());
        for (int k = 0; k < lookup.peerKeyCount(); k++)
        {
            fetch.addKey(lookup.hashBuffer(), lookup.hashOffset(k), lookup.hashLength(k), 0, 0);
        }
        startHold(fetch, lookup);
        return true;
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Sources.

    /**
     * A source's answer to an authorization.
     */
    public void onGrant(final PeerClient client, final TransferGrantDecoder grant)
    {
        final long correlationId = grant.correlationId();
        final long requesterSessionId = grant.requesterSessionId();
        for (final PeerFetch fetch : fetches)
        {
            if (!fetch.active)
            {
                continue;
            }
            for (int a = 0; a < fetch.attemptCount; a++)
            {
                final SourceAttempt attempt = fetch.attempt(a);
                if (SourceAttempt.SENT == attempt.state && attempt.correlationId == correlationId &&
                    attempt.requesterSessionId == requesterSessionId && attempt.client == client)
                {
                    authorizations.onGrant(fetch, attempt, grant, nowMs);
                    finishIfDone(fetch);
                    return;
                }
            }
        }
        // Nobody waits for it (timed out, or the client left): a granted session is released at once.
        staleGrants.incrementRelease();
        if (TransferStatus.OK == grant.status())
        {
            releases.releaseStale(client, grant.transferSessionId(), requesterSessionId);
        }
    }

    /**
     * @return attempts waiting to ask a source again: the agent must wake for them, no descriptor will.
     */
    public int waitingToAsk()
    {
        if (0 == activeFetches)
        {
            return 0;
        }
        int waiting = 0;
        for (final PeerFetch fetch : fetches)
        {
            waiting += fetch.active ? fetch.attemptsToSend() : 0;
        }
        return waiting;
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Reads.

    public void onReadComplete(final long requestId, final int status, final long bytes)
    {
        final PeerFetch fetch = reads.complete(fetches, requestId, status, bytes, false, 0);
        if (null != fetch)
        {
            finishIfDone(fetch);
        }
    }

    public void onReadComplete(final long requestId, final int status, final long bytes, final int crc32c)
    {
        final PeerFetch fetch = reads.complete(fetches, requestId, status, bytes, true, crc32c);
        if (null != fetch)
        {
            finishIfDone(fetch);
        }
    }

    public void onRevoked(final long sessionId)
    {
        // Revocations are the source side's; the transfer service routes them there.
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Release.

    /**
     * A source acknowledged a release (or said it did not hold the session: released already).
     */
    public void onReleaseAck(final PeerClient client, final TransferReleaseAckDecoder ack)
    {
        final long transferSessionId = ack.transferSessionId();
        for (final PeerFetch fetch : fetches)
        {
            if (!fetch.active)
            {
                continue;
            }
            for (int a = 0; a < fetch.attemptCount; a++)
            {
                final SourceAttempt attempt = fetch.attempt(a);
                if (SourceReleases.acknowledges(attempt, client, transferSessionId))
                {
                    attempt.state = SourceAttempt.DONE;
                    freeIfDone(fetch);
                    return;
                }
            }
        }
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Completion.

    /**
     * Answer once every key up to the stop is settled and no read is in flight: the delivered leading run counts,
     * the first key after it says why the prefix ended.
     */
    private void finishIfDone(final PeerFetch fetch)
    {
        if (!fetch.active || fetch.answered || PeerFetch.DISCOVERING == fetch.phase || !fetch.localDone)
        {
            freeIfDone(fetch);
            return;
        }
        if (fetch.settled())
        {
            answer(fetch);
            freeIfDone(fetch);
        }
    }

    private void answer(final PeerFetch fetch)
    {
        fetch.markAnswered();
        final int delivered = answers.fill(fetch, nowMs);
        if (PeerFetch.HOLD == fetch.kind)
        {
            // Only the held run stays pinned at the sources; the rest is released now.
            for (int a = 0; a < fetch.attemptCount; a++)
            {
                final SourceAttempt attempt = fetch.attempt(a);
                if (attempt.firstKey >= delivered)
                {
                    releases.start(fetch, attempt, true, nowMs);
                }
            }
        }
        else
        {
            for (int a = 0; a < fetch.attemptCount; a++)
            {
                releases.start(fetch, fetch.attempt(a), false, nowMs);
            }
        }
        if (!fetch.clientGone)
        {
            fetch.listener.onFetchAnswered(fetch);
        }
    }

    private void freeIfDone(final PeerFetch fetch)
    {
        if (!fetch.active || !fetch.answered && !fetch.clientGone || fetch.readsInFlight > 0)
        {
            return;
        }
        if (PeerFetch.HOLD == fetch.kind && !fetch.clientGone && !fetch.holdReleased)
        {
            // A held fetch lives until its lease is read or released; once released, a span granted late (its
            // authorization was still out when the lease ended) is released below like any other.
            for (int a = 0; a < fetch.attemptCount; a++)
            {
                if (SourceAttempt.GRANTED == fetch.attempt(a).state)
                {
                    return;
                }
            }
        }
        for (int a = 0; a < fetch.attemptCount; a++)
        {
            final int state = fetch.attempt(a).state;
            if (SourceAttempt.SENT == state || SourceAttempt.RELEASING == state)
            {
                return;
            }
            if (SourceAttempt.GRANTED == state)
            {
                releases.start(fetch, fetch.attempt(a), fetch.clientGone, nowMs);
                return;
            }
        }
        fetch.end(errorHandler);
        activeFetches--;
    }
}
