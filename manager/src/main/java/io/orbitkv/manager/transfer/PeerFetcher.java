package io.orbitkv.manager.transfer;

import io.orbitkv.codecs.CandidateTable;
import io.orbitkv.codecs.StateKeyFlyweight;
import io.orbitkv.codecs.TransferLimits;
import io.orbitkv.codecs.engine.FailureReason;
import io.orbitkv.codecs.engine.KeyStatus;
import io.orbitkv.codecs.engine.LookupRequestDecoder;
import io.orbitkv.codecs.transfer.ReleaseReason;
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
import io.orbitkv.manager.status.SystemCounterDescriptor;
import io.orbitkv.manager.status.SystemCounters;
import io.orbitkv.manager.store.TieredStore;
import io.orbitkv.transport.Transport;
import io.orbitkv.transport.TransportListener;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.UnsafeBuffer;
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
 */
public final class PeerFetcher implements PeerPort, LookupAnswerSink, TransportListener
{
    /**
     * Fetches in progress at once; beyond it a request is answered from its local prefix only (counted).
     */
    public static final int MAX_FETCHES = 64;


    private final CatalogRequester catalog;
    private final TransferProxy proxy;
    private final FetchReads reads;
    private final FetchAnswers answers;
    private final SpanPlanner planner;
    private final Transport transport;
    private final TieredStore store;
    private final NamespaceTable namespaces;
    private final ErrorHandler errorHandler;
    private final PeerFetch[] fetches = new PeerFetch[MAX_FETCHES];
    private final PeerListener[] lookupListeners = new PeerListener[CatalogRequester.MAX_PENDING_LOOKUPS];
    private final StateKeyFlyweight key = new StateKeyFlyweight();
    private final byte[] endpointBytes = new byte[1024];
    private final org.agrona.AsciiSequenceView endpointView = new org.agrona.AsciiSequenceView();
    private final UnsafeBuffer endpointBuffer = new UnsafeBuffer(endpointBytes);
    private final AtomicCounter fetchesStarted;
    private final AtomicCounter fetchesSkipped;
    private final AtomicCounter authorizeSent;
    private final AtomicCounter grantsReceived;
    private final AtomicCounter refusalsReceived;
    private final AtomicCounter authorizeTimeouts;
    private final AtomicCounter alternativesTried;
    private final AtomicCounter candidatesRemoved;
    private final AtomicCounter releasesSent;
    private final AtomicCounter releaseRetries;
    private final AtomicCounter releasesAbandoned;
    private final AtomicCounter staleGrants;
    private final AtomicCounter budgetExpired;
    private final AtomicCounter fetchesActiveGauge;
    private final AtomicCounter readsInFlightGauge;
    private final AtomicCounter prepareWaits;
    private final AtomicCounter budgetWaits;
    private final UnansweredSources unanswered = new UnansweredSources();
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
     */
    public PeerFetcher(
        final CatalogRequester catalog,
        final PeerPublisher publisher,
        final Transport transport,
        final TieredStore store,
        final NamespaceTable namespaces,
        final PeerAdmission admission,
        final SystemCounters counters,
        final ErrorHandler errorHandler)
    {
        this(catalog, new PublisherChannel(publisher), transport, store, namespaces, admission, counters, errorHandler);
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
        this.catalog = catalog;
        this.proxy = new TransferProxy(channel);
        this.reads = new FetchReads(transport, counters, errorHandler);
        this.answers = new FetchAnswers(catalog, store, namespaces, admission, counters);
        this.planner = new SpanPlanner(catalog, store, namespaces, unanswered, counters);
        this.transport = transport;
        this.store = store;
        this.namespaces = namespaces;
        this.errorHandler = errorHandler;
        for (int i = 0; i < fetches.length; i++)
        {
            fetches[i] = new PeerFetch(i);
        }
        fetchesStarted = counters.get(SystemCounterDescriptor.TRANSFER_FETCHES_STARTED);
        fetchesSkipped = counters.get(SystemCounterDescriptor.TRANSFER_FETCHES_SKIPPED);
        authorizeSent = counters.get(SystemCounterDescriptor.TRANSFER_AUTHORIZE_SENT);
        grantsReceived = counters.get(SystemCounterDescriptor.TRANSFER_GRANTS_RECEIVED);
        refusalsReceived = counters.get(SystemCounterDescriptor.TRANSFER_REFUSALS_RECEIVED);
        authorizeTimeouts = counters.get(SystemCounterDescriptor.TRANSFER_AUTHORIZE_TIMEOUTS);
        alternativesTried = counters.get(SystemCounterDescriptor.TRANSFER_ALTERNATIVES_TRIED);
        candidatesRemoved = counters.get(SystemCounterDescriptor.TRANSFER_CANDIDATES_REMOVED);
        releasesSent = counters.get(SystemCounterDescriptor.TRANSFER_RELEASES_SENT);
        releaseRetries = counters.get(SystemCounterDescriptor.TRANSFER_RELEASE_RETRIES);
        releasesAbandoned = counters.get(SystemCounterDescriptor.TRANSFER_RELEASES_ABANDONED);
        staleGrants = counters.get(SystemCounterDescriptor.TRANSFER_STALE_GRANTS);
        budgetExpired = counters.get(SystemCounterDescriptor.TRANSFER_FETCH_BUDGET_EXPIRED);
        fetchesActiveGauge = counters.get(SystemCounterDescriptor.TRANSFER_FETCHES_ACTIVE);
        readsInFlightGauge = counters.get(SystemCounterDescriptor.TRANSFER_READS_IN_FLIGHT);
        prepareWaits = counters.get(SystemCounterDescriptor.TRANSFER_PREPARE_WAITS);
        budgetWaits = counters.get(SystemCounterDescriptor.TRANSFER_BUDGET_WAITS);
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
            fetch.active = false;
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
        fetch.deadlineMs = nowMs + TransferLimits.FETCH_BUDGET_MS;
        fetch.localDone = true;
        final PendingLookup lookup = catalog.acquireLookup();
        if (null == lookup)
        {
            fetch.phase = PeerFetch.AUTHORIZING;
            fetch.stopKey = 0;
            finishIfDone(fetch);
            return;
        }
        fetch.phase = PeerFetch.DISCOVERING;
        lookup.request(fetch.clientId, fetch.correlationId, 0, 0, fetch.statuses, fetch.lengths, 0)
            .namespace(fetch.namespace, 0, fetch.namespaceLength)
            .namespaceId(namespaces.lookup(fetch.namespace, 0, fetch.namespaceLength));
        for (int k = 0; k < fetch.keyCount; k++)
        {
            lookup.addPeerKey(fetch.hashes, fetch.hashOffset(k), fetch.hashLengths[k]);
        }
        // The slot is this fetch's until discovery answers it (possibly from within startLookup).
        fetch.lookupIndex = lookup.index();
        catalog.startLookup(lookup, this);
    }

    /**
     * Start a HOLD fetch from a Lookup whose discovery has just ended: its candidates are those of the answer.
     */
    void startHold(final PeerFetch fetch, final PendingLookup lookup)
    {
        fetchesStarted.incrementRelease();
        fetch.deadlineMs = nowMs + TransferLimits.FETCH_BUDGET_MS;
        fetch.localDone = true;
        copyCandidates(fetch, lookup.answer(), lookup.firstPeerKey());
        fetch.phase = PeerFetch.AUTHORIZING;
        plan(fetch);
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
        fetch.kind = PeerFetch.READ;
        fetch.answered = false;
        fetch.correlationId = correlationId;
        fetch.templateId = io.orbitkv.codecs.engine.ReadRequestDecoder.TEMPLATE_ID;
        fetch.firstRow = firstRow;
        fetch.rowCount = rowCount;
        System.arraycopy(localStatuses, 0, fetch.statuses, 0, firstRow);
        System.arraycopy(localLengths, 0, fetch.lengths, 0, firstRow);
        for (int i = 0; i < rowCount; i++)
        {
            fetch.reasons[i] = FailureReason.NONE;
        }
        fetch.answer.reset();
        fetch.deadlineMs = nowMs + TransferLimits.FETCH_BUDGET_MS;
        if (keys < fetch.stopKey)
        {
            fetch.stopKey = keys;
        }
        fetch.phase = PeerFetch.READING;
        for (int a = 0; a < fetch.attemptCount; a++)
        {
            final PeerFetch.SourceAttempt attempt = fetch.attempt(a);
            if (PeerFetch.SourceAttempt.GRANTED == attempt.state)
            {
                submitReads(fetch, attempt);
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
        fetch.stopKey = 0;
        fetch.answered = true;
        fetch.holdReleased = true;
        for (int a = 0; a < fetch.attemptCount; a++)
        {
            startRelease(fetch, fetch.attempt(a), true);
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
        fetch.clientGone = true;
        fetch.orphanedRegion = region;
        if (PeerFetch.HOLD == fetch.kind && fetch.answered)
        {
            release(fetch);
        }
        else
        {
            fetch.stopKey = Math.min(fetch.stopKey, firstUnfinished(fetch));
        }
        freeIfDone(fetch);
    }

    /**
     * Give the destinations of a READ the checksum of the client's data region at {@code address} they lie in.
     */
    public void destinationRegion(final FetchHandle handle, final long address, final BlockChecksum regionChecksum)
    {
        final PeerFetch fetch = (PeerFetch)handle;
        fetch.regionAddress = address;
        fetch.regionChecksum = regionChecksum;
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

    public int activeFetches()
    {
        return activeFetches;
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
                final int stop = firstUnfinished(fetch);
                if (stop < fetch.keyCount && FailureReason.NONE == fetch.keyReasons[stop])
                {
                    fetch.keyReasons[stop] = FailureReason.BUDGET;
                }
                fetch.stopKey = Math.min(fetch.stopKey, stop);
                for (int a = 0; a < fetch.attemptCount; a++)
                {
                    final PeerFetch.SourceAttempt attempt = fetch.attempt(a);
                    if (PeerFetch.SourceAttempt.TO_SEND == attempt.state)
                    {
                        attempt.state = PeerFetch.SourceAttempt.DONE;
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

    private int progress(final PeerFetch fetch, final PeerFetch.SourceAttempt attempt)
    {
        switch (attempt.state)
        {
            case PeerFetch.SourceAttempt.TO_SEND:
                if (fetch.stopKey <= attempt.firstKey)
                {
                    attempt.state = PeerFetch.SourceAttempt.DONE;
                    return 1;
                }
                return sendAuthorize(fetch, attempt) ? 1 : 0;

            case PeerFetch.SourceAttempt.SENT:
                if (nowMs - attempt.deadlineMs >= 0)
                {
                    // No answer: the source may have gone; a late grant is released as stale.
                    authorizeTimeouts.incrementRelease();
                    unanswered.suspect(attempt.ownerMsb, attempt.ownerLsb, nowMs);
                    refused(fetch, attempt, TransferStatus.ERROR, false);
                    return 1;
                }
                return 0;

            case PeerFetch.SourceAttempt.GRANTED:
                if (PeerFetch.READ == fetch.kind && 0 == attempt.readsOutstanding && attempt.readsSubmitted < readable(fetch, attempt))
                {
                    return submitReads(fetch, attempt);
                }
                if (PeerFetch.READ == fetch.kind && 0 == attempt.readsOutstanding)
                {
                    startRelease(fetch, attempt, false);
                    return 1;
                }
                return 0;

            case PeerFetch.SourceAttempt.RELEASING:
                if (nowMs - attempt.deadlineMs >= 0)
                {
                    if (attempt.releaseAttempts >= TransferLimits.RELEASE_ATTEMPTS)
                    {
                        releasesAbandoned.incrementRelease();
                        attempt.state = PeerFetch.SourceAttempt.DONE;
                        freeIfDone(fetch);
                        return 1;
                    }
                    releaseRetries.incrementRelease();
                    sendRelease(fetch, attempt);
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
                copyCandidates(fetch, lookup.answer(), 0);
                fetch.phase = PeerFetch.AUTHORIZING;
                plan(fetch);
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

    private void copyCandidates(final PeerFetch fetch, final CandidateTable answer, final int firstRow)
    {
        for (int i = 0; i < answer.candidateCount(); i++)
        {
            final int k = answer.candidateKeyIndex(i) - firstRow;
            if (k < 0 || k >= fetch.keyCount)
            {
                continue;
            }
            final int owner = answer.candidateOwnerIndex(i);
            fetch.addCandidate(k, answer.ownerRuntimeUuidMsb(owner), answer.ownerRuntimeUuidLsb(owner),
                KeyStatus.DRAM == answer.candidateTier(i) ? (byte)0 : (byte)1,
                answer.candidateInsertionSequence(i), answer.candidateLength(i));
        }
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Planning.

    /**
     * Plan the keys from {@code fetch.nextKey} into spans ({@link SpanPlanner}), start the copies of new local spans
     * of a READ, and send the authorizations the fetch may have in flight.
     */
    private void plan(final PeerFetch fetch)
    {
        final int before = fetch.attemptCount;
        planner.plan(fetch, nowMs);
        if (PeerFetch.READ == fetch.kind)
        {
            for (int a = before; a < fetch.attemptCount; a++)
            {
                final PeerFetch.SourceAttempt attempt = fetch.attempt(a);
                if (attempt.local)
                {
                    submitReads(fetch, attempt);
                }
            }
        }
        for (int a = 0; a < fetch.attemptCount; a++)
        {
            final PeerFetch.SourceAttempt attempt = fetch.attempt(a);
            if (PeerFetch.SourceAttempt.TO_SEND == attempt.state &&
                SpanPlanner.inFlightSources(fetch) < TransferLimits.MAX_CONCURRENT_SOURCES)
            {
                sendAuthorize(fetch, attempt);
            }
        }
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Authorization.

    private boolean sendAuthorize(final PeerFetch fetch, final PeerFetch.SourceAttempt attempt)
    {
        if (nowMs - attempt.notBeforeMs < 0 || SpanPlanner.inFlightSources(fetch) >= TransferLimits.MAX_CONCURRENT_SOURCES)
        {
            return false;
        }
        final PeerClient client = catalog.sourceClient(attempt.ownerMsb, attempt.ownerLsb, nowMs);
        if (null == catalog.member(attempt.ownerMsb, attempt.ownerLsb))
        {
            refused(fetch, attempt, TransferStatus.STALE_INCARNATION, false);
            return true;
        }
        if (null == client)
        {
            if (nowMs - attempt.deadlineMs >= 0)
            {
                authorizeTimeouts.incrementRelease();
                unanswered.suspect(attempt.ownerMsb, attempt.ownerLsb, nowMs);
                refused(fetch, attempt, TransferStatus.ERROR, false);
                return true;
            }
            return false;
        }
        attempt.correlationId = proxy.nextCorrelationId();
        attempt.client = client;
        if (!proxy.authorize(client, attempt.correlationId, catalog.localIncarnationMsb(),
            catalog.localIncarnationLsb(), fetch, attempt))
        {
            return false;
        }
        authorizeSent.incrementRelease();
        attempt.state = PeerFetch.SourceAttempt.SENT;
        attempt.deadlineMs = nowMs + TransferLimits.AUTHORIZE_TIMEOUT_MS;
        return true;
    }

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
                final PeerFetch.SourceAttempt attempt = fetch.attempt(a);
                if (PeerFetch.SourceAttempt.SENT == attempt.state && attempt.correlationId == correlationId &&
                    attempt.requesterSessionId == requesterSessionId && attempt.client == client)
                {
                    onGrant(fetch, attempt, grant);
                    finishIfDone(fetch);
                    return;
                }
            }
        }
        // Nobody waits for it (timed out, or the client left): a granted session is released at once.
        staleGrants.incrementRelease();
        if (TransferStatus.OK == grant.status())
        {
            sendStaleRelease(client, grant.transferSessionId(), requesterSessionId);
        }
    }

    private void onGrant(final PeerFetch fetch, final PeerFetch.SourceAttempt attempt, final TransferGrantDecoder grant)
    {
        unanswered.answeredBy(attempt.ownerMsb, attempt.ownerLsb, nowMs);
        final TransferStatus status = grant.status();
        if (TransferStatus.OK != status || 0 == grant.grantedKeys())
        {
            refusalsReceived.incrementRelease();
            // The first key's own verdict says why; only that candidate version was judged.
            final TransferGrantDecoder.KeysDecoder keys = grant.keys();
            TransferStatus reason = status;
            if (keys.hasNext())
            {
                keys.next();
                if (TransferStatus.OK != keys.status())
                {
                    reason = keys.status();
                }
            }
            while (keys.hasNext())
            {
                keys.next();
            }
            grant.skipTransportEndpoint();
            grant.skipMessage();
            if (isWait(reason) && askAgainLater(fetch, reason))
            {
                // The source prepares the span (or waits for staging credit): the same keys, the same source, later.
                attempt.askAgain(planner.nextRequesterSessionId(), nowMs + retryIntervalMs(reason));
                return;
            }
            refused(fetch, attempt, reason, true);
            return;
        }
        grantsReceived.incrementRelease();
        attempt.transferSessionId = grant.transferSessionId();
        attempt.token = grant.token();
        final int granted = Math.min(grant.grantedKeys(), attempt.keyCount);
        attempt.grantedKeys = granted;
        final TransferGrantDecoder.KeysDecoder keys = grant.keys();
        int k = 0;
        TransferStatus firstRefusal = TransferStatus.OK;
        while (keys.hasNext())
        {
            keys.next();
            final int i = attempt.firstKey + k;
            if (k < granted)
            {
                fetch.keyAddresses[i] = keys.address();
                fetch.keyLengths[i] = keys.length();
                fetch.keyCrcs[i] = keys.crc32c();
                fetch.keyStates[i] = PeerFetch.KEY_GRANTED;
                if (0 == keys.address() || keys.length() <= 0)
                {
                    // A grant without a usable range: nothing can be read for this key.
                    fetch.keyStates[i] = PeerFetch.KEY_FAILED;
                    fetch.keyReasons[i] = FailureReason.TRANSFER;
                    fetch.stopKey = Math.min(fetch.stopKey, i);
                }
            }
            else if (k == granted && k < attempt.keyCount)
            {
                firstRefusal = keys.status();
            }
            k++;
        }
        final int endpointLength = grant.getTransportEndpoint(endpointBytes, 0, endpointBytes.length);
        grant.skipMessage();
        endpointView.wrap(endpointBuffer, 0, endpointLength);
        attempt.peer = transport.peer(endpointView);
        attempt.state = PeerFetch.SourceAttempt.GRANTED;
        if (attempt.peer < 0)
        {
            for (int i = attempt.firstKey; i < attempt.firstKey + granted; i++)
            {
                fetch.keyStates[i] = PeerFetch.KEY_FAILED;
                fetch.keyReasons[i] = FailureReason.TRANSFER;
            }
            fetch.stopKey = Math.min(fetch.stopKey, attempt.firstKey);
            startRelease(fetch, attempt, true);
            return;
        }
        if (granted < attempt.keyCount)
        {
            final int end = attempt.firstKey + attempt.keyCount;
            final int next = attempt.firstKey + granted;
            if (isWait(firstRefusal) && fetch.attemptCount < PeerFetch.MAX_ATTEMPTS && askAgainLater(fetch, firstRefusal))
            {
                // The keys after the granted run are being prepared at this source: ask it for them again later.
                attempt.keyCount = granted;
                planner.newAttempt(fetch, attempt.ownerMsb, attempt.ownerLsb, next, end - next,
                    nowMs + retryIntervalMs(firstRefusal));
            }
            else
            {
                // The source granted the leading run only: the keys after it go back to planning, from other sources.
                splitRefused(fetch, attempt, next, firstRefusal);
            }
        }
        if (PeerFetch.READ == fetch.kind)
        {
            submitReads(fetch, attempt);
        }
    }

    /**
     * Keys of {@code attempt} from {@code key} on were not granted: the refused key's candidate version is removed
     * and the keys are planned again (another source, within the alternative budget).
     */
    private void splitRefused(
        final PeerFetch fetch, final PeerFetch.SourceAttempt attempt, final int key, final TransferStatus reason)
    {
        final int end = attempt.firstKey + attempt.keyCount;
        attempt.keyCount = key - attempt.firstKey;
        refuseCandidate(fetch, key, attempt, reason);
        for (int i = key; i < end; i++)
        {
            fetch.keyStates[i] = PeerFetch.KEY_UNPLANNED;
        }
        replanFrom(fetch, key, end);
    }

    private void refused(
        final PeerFetch fetch, final PeerFetch.SourceAttempt attempt, final TransferStatus reason, final boolean judged)
    {
        attempt.state = PeerFetch.SourceAttempt.REFUSED;
        final int end = attempt.firstKey + attempt.keyCount;
        if (judged)
        {
            refuseCandidate(fetch, attempt.firstKey, attempt, reason);
        }
        else
        {
            // Unanswered: nothing was judged, but this source is not tried again for these keys in this fetch.
            for (int i = attempt.firstKey; i < end; i++)
            {
                final int c = fetch.candidateOf(i, attempt.ownerMsb, attempt.ownerLsb);
                if (c >= 0)
                {
                    fetch.candidateRefused[i] |= (byte)(1 << c);
                }
            }
        }
        for (int i = attempt.firstKey; i < end; i++)
        {
            fetch.keyStates[i] = PeerFetch.KEY_UNPLANNED;
        }
        replanFrom(fetch, attempt.firstKey, end);
    }

    private void refuseCandidate(
        final PeerFetch fetch, final int k, final PeerFetch.SourceAttempt attempt, final TransferStatus reason)
    {
        final int c = fetch.candidateOf(k, attempt.ownerMsb, attempt.ownerLsb);
        if (c < 0)
        {
            return;
        }
        fetch.candidateRefused[k] |= (byte)(1 << c);
        // design: a rejection removes only the attempted candidate version from the index. Only a verdict on the
        // evidence does: a source out of budget or sessions still holds the block, and is only not asked again
        // within this fetch.
        if (isStaleEvidence(reason) && catalog.removeCandidate(fetch.key(k, key), attempt.ownerMsb,
            attempt.ownerLsb, fetch.candidateSequences[k * PeerFetch.MAX_CANDIDATES + c]))
        {
            candidatesRemoved.incrementRelease();
        }
        if (FailureReason.NONE == fetch.keyReasons[k] && TransferStatus.OK != reason)
        {
            fetch.keyReasons[k] = FailureReason.REJECTED;
        }
    }

    /**
     * Whether a source answered "not yet" rather than "no": its SSD residences are being prepared (PENDING) or wait for
     * export staging credit (BACKPRESSURE).
     */
    static boolean isWait(final TransferStatus reason)
    {
        return TransferStatus.PENDING == reason || TransferStatus.BACKPRESSURE == reason;
    }

    private static long retryIntervalMs(final TransferStatus reason)
    {
        return TransferStatus.PENDING == reason ?
            TransferLimits.PREPARE_RETRY_INTERVAL_MS : TransferLimits.BACKPRESSURE_RETRY_INTERVAL_MS;
    }

    /**
     * Count a wait for a source that answered {@link #isWait}, if the fetch's budget leaves room to ask again; the
     * budget bounds the waits (design: no unbounded retry while destinations are held).
     *
     * @return whether to ask again.
     */
    private boolean askAgainLater(final PeerFetch fetch, final TransferStatus reason)
    {
        if (nowMs + retryIntervalMs(reason) - fetch.deadlineMs >= 0)
        {
            return false;
        }
        if (TransferStatus.PENDING == reason)
        {
            prepareWaits.incrementRelease();
        }
        else
        {
            budgetWaits.incrementRelease();
        }
        return true;
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
            if (!fetch.active)
            {
                continue;
            }
            for (int a = 0; a < fetch.attemptCount; a++)
            {
                if (PeerFetch.SourceAttempt.TO_SEND == fetch.attempt(a).state)
                {
                    waiting++;
                }
            }
        }
        return waiting;
    }

    /**
     * Whether a source's refusal says the candidate version itself is wrong (gone, another episode, another size, a
     * dead incarnation), rather than that the source cannot take the transfer now.
     */
    static boolean isStaleEvidence(final TransferStatus reason)
    {
        return TransferStatus.MISSING == reason || TransferStatus.STALE_SEQUENCE == reason ||
            TransferStatus.LENGTH_MISMATCH == reason || TransferStatus.STALE_INCARNATION == reason;
    }

    /**
     * Plan keys [from, end) again once a source refused them: allowed only within the fetch's alternative budget and
     * only where later keys have not been planned on another source yet (a span never jumps back).
     */
    private void replanFrom(final PeerFetch fetch, final int from, final int end)
    {
        if (fetch.alternativesUsed >= TransferLimits.MAX_ALTERNATIVE_ATTEMPTS || fetch.nextKey > end)
        {
            fetch.stopKey = Math.min(fetch.stopKey, from);
            return;
        }
        fetch.alternativesUsed++;
        alternativesTried.incrementRelease();
        fetch.nextKey = from;
        plan(fetch);
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Reads.

    private int submitReads(final PeerFetch fetch, final PeerFetch.SourceAttempt attempt)
    {
        return reads.submit(fetch, attempt);
    }

    private static int readable(final PeerFetch fetch, final PeerFetch.SourceAttempt attempt)
    {
        return FetchReads.readable(fetch, attempt);
    }

    public void onReadComplete(final long requestId, final int status, final long bytes)
    {
        final PeerFetch fetch = reads.complete(fetches, requestId, status, bytes);
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

    private void startRelease(final PeerFetch fetch, final PeerFetch.SourceAttempt attempt, final boolean abandoned)
    {
        if (attempt.local)
        {
            // Nothing to tell anyone: this Manager's own pins are let go.
            if (PeerFetch.SourceAttempt.GRANTED == attempt.state)
            {
                for (int i = attempt.firstKey; i < attempt.firstKey + attempt.grantedKeys; i++)
                {
                    store.unpin(fetch.keyResidences[i]);
                }
            }
            attempt.state = PeerFetch.SourceAttempt.DONE;
            return;
        }
        if (PeerFetch.SourceAttempt.GRANTED != attempt.state || attempt.readsOutstanding > 0)
        {
            if (PeerFetch.SourceAttempt.TO_SEND == attempt.state)
            {
                attempt.state = PeerFetch.SourceAttempt.DONE;
            }
            return;
        }
        attempt.state = PeerFetch.SourceAttempt.RELEASING;
        attempt.abandoned = abandoned;
        attempt.releaseAttempts = 0;
        sendRelease(fetch, attempt);
    }

    private void sendRelease(final PeerFetch fetch, final PeerFetch.SourceAttempt attempt)
    {
        attempt.releaseAttempts++;
        attempt.deadlineMs = nowMs + TransferLimits.RELEASE_RETRY_INTERVAL_MS;
        final PeerClient client = catalog.sourceClient(attempt.ownerMsb, attempt.ownerLsb, nowMs);
        if (null == client)
        {
            return;
        }
        attempt.correlationId = proxy.nextCorrelationId();
        attempt.client = client;
        if (proxy.release(client, attempt.correlationId, catalog.localIncarnationMsb(), catalog.localIncarnationLsb(),
            attempt.transferSessionId, attempt.requesterSessionId,
            attempt.abandoned ? ReleaseReason.ABANDONED : ReleaseReason.COMPLETED))
        {
            releasesSent.incrementRelease();
        }
    }

    private void sendStaleRelease(final PeerClient client, final long transferSessionId, final long requesterSessionId)
    {
        if (proxy.release(client, proxy.nextCorrelationId(), catalog.localIncarnationMsb(),
            catalog.localIncarnationLsb(), transferSessionId, requesterSessionId, ReleaseReason.ABANDONED))
        {
            releasesSent.incrementRelease();
        }
    }

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
                final PeerFetch.SourceAttempt attempt = fetch.attempt(a);
                if (PeerFetch.SourceAttempt.RELEASING == attempt.state &&
                    attempt.transferSessionId == transferSessionId && attempt.ownerMsb == client.remoteIncarnationMsb() &&
                    attempt.ownerLsb == client.remoteIncarnationLsb())
                {
                    attempt.state = PeerFetch.SourceAttempt.DONE;
                    freeIfDone(fetch);
                    return;
                }
            }
        }
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Completion.

    private static int firstUnfinished(final PeerFetch fetch)
    {
        final byte done = PeerFetch.HOLD == fetch.kind ? PeerFetch.KEY_GRANTED : PeerFetch.KEY_DONE;
        int k = 0;
        while (k < fetch.keyCount && fetch.keyStates[k] == done)
        {
            k++;
        }
        return k;
    }

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
        final int limit = Math.min(fetch.keyCount, fetch.stopKey);
        for (int k = 0; k < limit; k++)
        {
            final byte state = fetch.keyStates[k];
            if (PeerFetch.KEY_UNPLANNED == state || PeerFetch.KEY_AUTHORIZING == state ||
                PeerFetch.KEY_READING == state || (PeerFetch.READ == fetch.kind && PeerFetch.KEY_GRANTED == state))
            {
                return;
            }
        }
        if (fetch.readsInFlight > 0)
        {
            return;
        }
        for (int a = 0; a < fetch.attemptCount; a++)
        {
            final PeerFetch.SourceAttempt attempt = fetch.attempt(a);
            if (PeerFetch.SourceAttempt.SENT == attempt.state)
            {
                // A later span still waits for its grant; the answer waits for it only if it could extend the run.
                if (attempt.firstKey < limit)
                {
                    return;
                }
            }
        }
        answer(fetch);
        freeIfDone(fetch);
    }

    private void answer(final PeerFetch fetch)
    {
        fetch.answered = true;
        final int delivered = answers.fill(fetch, nowMs);
        if (PeerFetch.HOLD == fetch.kind)
        {
            // Only the held run stays pinned at the sources; the rest is released now.
            for (int a = 0; a < fetch.attemptCount; a++)
            {
                final PeerFetch.SourceAttempt attempt = fetch.attempt(a);
                if (attempt.firstKey >= delivered)
                {
                    startRelease(fetch, attempt, true);
                }
            }
        }
        else
        {
            for (int a = 0; a < fetch.attemptCount; a++)
            {
                startRelease(fetch, fetch.attempt(a), false);
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
                if (PeerFetch.SourceAttempt.GRANTED == fetch.attempt(a).state)
                {
                    return;
                }
            }
        }
        for (int a = 0; a < fetch.attemptCount; a++)
        {
            final int state = fetch.attempt(a).state;
            if (PeerFetch.SourceAttempt.SENT == state || PeerFetch.SourceAttempt.RELEASING == state)
            {
                return;
            }
            if (PeerFetch.SourceAttempt.GRANTED == state)
            {
                startRelease(fetch, fetch.attempt(a), fetch.clientGone);
                return;
            }
        }
        if (null != fetch.orphanedRegion)
        {
            try
            {
                fetch.orphanedRegion.close();
            }
            catch (final Exception ex)
            {
                errorHandler.onError(ex);
            }
            fetch.orphanedRegion = null;
        }
        fetch.active = false;
        fetch.phase = PeerFetch.IDLE;
        fetch.answered = false;
        activeFetches--;
    }
}
