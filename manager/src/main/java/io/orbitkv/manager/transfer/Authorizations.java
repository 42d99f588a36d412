package io.orbitkv.manager.transfer;

import io.orbitkv.codecs.StateKeyFlyweight;
import io.orbitkv.codecs.TransferLimits;
import io.orbitkv.codecs.engine.FailureReason;
import io.orbitkv.codecs.transfer.TransferGrantDecoder;
import io.orbitkv.codecs.transfer.TransferStatus;
import io.orbitkv.manager.catalog.CatalogRequester;
import io.orbitkv.manager.peer.PeerClient;
import io.orbitkv.manager.status.SystemCounters;
import io.orbitkv.transport.Transport;
import org.agrona.AsciiSequenceView;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * The requester asking sources for spans: plan a fetch's keys into spans ({@link SpanPlanner}), send each source its
 * authorization, and take its answer. A grant opens the span's reads; a source that answers "not yet" (PENDING,
 * BACKPRESSURE) is asked for the same keys again after its interval, within the fetch's budget; a refusal removes only
 * the refused candidate version from the candidate index (when the refusal is a verdict on it) and plans the keys
 * again on another source at most {@link TransferLimits#MAX_ALTERNATIVE_ATTEMPTS} times per fetch, with no new
 * directory RPC; an authorization left unanswered past its deadline counts as a refusal that judged nothing. Single
 * threaded (the agent that owns the fetches); allocation free.
 */
final class Authorizations
{
    private final CatalogRequester catalog;
    private final TransferProxy proxy;
    private final SpanPlanner planner;
    private final UnansweredSources unanswered;
    private final FetchReads reads;
    private final SourceReleases releases;
    private final Transport transport;
    private final StateKeyFlyweight key = new StateKeyFlyweight();
    private final byte[] endpointBytes = new byte[1024];
    private final AsciiSequenceView endpointView = new AsciiSequenceView();
    private final UnsafeBuffer endpointBuffer = new UnsafeBuffer(endpointBytes);
    private final AtomicCounter authorizeSent;
    private final AtomicCounter grantsReceived;
    private final AtomicCounter refusalsReceived;
    private final AtomicCounter authorizeTimeouts;
    private final AtomicCounter alternativesTried;
    private final AtomicCounter candidatesRemoved;
    private final AtomicCounter prepareWaits;
    private final AtomicCounter budgetWaits;

    Authorizations(
        final CatalogRequester catalog,
        final TransferProxy proxy,
        final SpanPlanner planner,
        final UnansweredSources unanswered,
        final FetchReads reads,
        final SourceReleases releases,
        final Transport transport,
        final SystemCounters counters)
    {
        this.catalog = catalog;
        this.proxy = proxy;
        this.planner = planner;
        this.unanswered = unanswered;
        this.reads = reads;
        this.releases = releases;
        this.transport = transport;
        authorizeSent = counters.get(TransferCounter.AUTHORIZE_SENT);
        grantsReceived = counters.get(TransferCounter.GRANTS_RECEIVED);
        refusalsReceived = counters.get(TransferCounter.REFUSALS_RECEIVED);
        authorizeTimeouts = counters.get(TransferCounter.AUTHORIZE_TIMEOUTS);
        alternativesTried = counters.get(TransferCounter.ALTERNATIVES_TRIED);
        candidatesRemoved = counters.get(TransferCounter.CANDIDATES_REMOVED);
        prepareWaits = counters.get(TransferCounter.PREPARE_WAITS);
        budgetWaits = counters.get(TransferCounter.BUDGET_WAITS);
    }

    /**
     * The duty-cycle step of an attempt before its grant: send it when due (dropped once the fetch stopped before its
     * keys), or time out an authorization left unanswered.
     *
     * @return work done.
     */
    int progress(final PeerFetch fetch, final SourceAttempt attempt, final long nowMs)
    {
        if (SourceAttempt.TO_SEND == attempt.state)
        {
            if (fetch.stopKey <= attempt.firstKey)
            {
                attempt.state = SourceAttempt.DONE;
                return 1;
            }
            return sendAuthorize(fetch, attempt, nowMs) ? 1 : 0;
        }
        if (SourceAttempt.SENT == attempt.state && nowMs - attempt.deadlineMs >= 0)
        {
            // No answer: the source may have gone; a late grant is released as stale.
            authorizeTimeouts.incrementRelease();
            unanswered.suspect(attempt.ownerMsb, attempt.ownerLsb, nowMs);
            refused(fetch, attempt, TransferStatus.ERROR, false, nowMs);
            return 1;
        }
        return 0;
    }

    /**
     * Plan the keys from {@code fetch.nextKey} into spans ({@link SpanPlanner}), start the copies of new local spans
     * of a READ, and send the authorizations the fetch may have in flight.
     */
    void plan(final PeerFetch fetch, final long nowMs)
    {
        final int before = fetch.attemptCount;
        planner.plan(fetch, nowMs);
        if (PeerFetch.READ == fetch.kind)
        {
            for (int a = before; a < fetch.attemptCount; a++)
            {
                final SourceAttempt attempt = fetch.attempt(a);
                if (attempt.local)
                {
                    reads.submit(fetch, attempt);
                }
            }
        }
        for (int a = 0; a < fetch.attemptCount; a++)
        {
            final SourceAttempt attempt = fetch.attempt(a);
            if (SourceAttempt.TO_SEND == attempt.state &&
                SpanPlanner.inFlightSources(fetch) < TransferLimits.MAX_CONCURRENT_SOURCES)
            {
                sendAuthorize(fetch, attempt, nowMs);
            }
        }
    }


    private boolean sendAuthorize(final PeerFetch fetch, final SourceAttempt attempt, final long nowMs)
    {
        if (nowMs - attempt.notBeforeMs < 0 || SpanPlanner.inFlightSources(fetch) >= TransferLimits.MAX_CONCURRENT_SOURCES)
        {
            return false;
        }
        final PeerClient client = catalog.sourceClient(attempt.ownerMsb, attempt.ownerLsb, nowMs);
        if (null == catalog.member(attempt.ownerMsb, attempt.ownerLsb))
        {
            refused(fetch, attempt, TransferStatus.STALE_INCARNATION, false, nowMs);
            return true;
        }
        if (null == client)
        {
            if (nowMs - attempt.deadlineMs >= 0)
            {
                authorizeTimeouts.incrementRelease();
                unanswered.suspect(attempt.ownerMsb, attempt.ownerLsb, nowMs);
                refused(fetch, attempt, TransferStatus.ERROR, false, nowMs);
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
        attempt.state = SourceAttempt.SENT;
        attempt.deadlineMs = nowMs + TransferLimits.AUTHORIZE_TIMEOUT_MS;
        return true;
    }

    /**
     * A source's answer to this attempt's authorization: a grant of the leading run (its keys' ranges recorded, read
     * at once for a READ; the keys after the run asked again of the same source when it is preparing them, else
     * planned elsewhere), a wait (the same keys asked again later), or a refusal.
     */
    void onGrant(
        final PeerFetch fetch, final SourceAttempt attempt, final TransferGrantDecoder grant, final long nowMs)
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
            if (isWait(reason) && askAgainLater(fetch, reason, nowMs))
            {
                // The source prepares the span (or waits for staging credit): the same keys, the same source, later.
                attempt.askAgain(planner.nextRequesterSessionId(), nowMs + retryIntervalMs(reason));
                return;
            }
            refused(fetch, attempt, reason, true, nowMs);
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
                    fetch.stopAt(i);
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
        attempt.state = SourceAttempt.GRANTED;
        if (attempt.peer < 0)
        {
            for (int i = attempt.firstKey; i < attempt.firstKey + granted; i++)
            {
                fetch.keyStates[i] = PeerFetch.KEY_FAILED;
                fetch.keyReasons[i] = FailureReason.TRANSFER;
            }
            fetch.stopAt(attempt.firstKey);
            releases.start(fetch, attempt, true, nowMs);
            return;
        }
        if (granted < attempt.keyCount)
        {
            final int end = attempt.firstKey + attempt.keyCount;
            final int next = attempt.firstKey + granted;
            if (isWait(firstRefusal) && fetch.attemptCount < PeerFetch.MAX_ATTEMPTS && askAgainLater(fetch, firstRefusal, nowMs))
            {
                // The keys after the granted run are being prepared at this source: ask it for them again later.
                attempt.keyCount = granted;
                planner.newAttempt(fetch, attempt.ownerMsb, attempt.ownerLsb, next, end - next,
                    nowMs + retryIntervalMs(firstRefusal));
            }
            else
            {
                // The source granted the leading run only: the keys after it go back to planning, from other sources.
                splitRefused(fetch, attempt, next, firstRefusal, nowMs);
            }
        }
        if (PeerFetch.READ == fetch.kind)
        {
            reads.submit(fetch, attempt);
        }
    }

    /**
     * Keys of {@code attempt} from {@code key} on were not granted: the refused key's candidate version is removed
     * and the keys are planned again (another source, within the alternative budget).
     */
    private void splitRefused(
        final PeerFetch fetch,
        final SourceAttempt attempt,
        final int key,
        final TransferStatus reason,
        final long nowMs)
    {
        final int end = attempt.firstKey + attempt.keyCount;
        attempt.keyCount = key - attempt.firstKey;
        refuseCandidate(fetch, key, attempt, reason);
        for (int i = key; i < end; i++)
        {
            fetch.keyStates[i] = PeerFetch.KEY_UNPLANNED;
        }
        replanFrom(fetch, key, end, nowMs);
    }

    private void refused(
        final PeerFetch fetch,
        final SourceAttempt attempt,
        final TransferStatus reason,
        final boolean judged,
        final long nowMs)
    {
        attempt.state = SourceAttempt.REFUSED;
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
        replanFrom(fetch, attempt.firstKey, end, nowMs);
    }

    private void refuseCandidate(
        final PeerFetch fetch, final int k, final SourceAttempt attempt, final TransferStatus reason)
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
    private static boolean isWait(final TransferStatus reason)
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
    private boolean askAgainLater(final PeerFetch fetch, final TransferStatus reason, final long nowMs)
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
     * Whether a source's refusal says the candidate version itself is wrong (gone, another episode, another size, a
     * dead incarnation), rather than that the source cannot take the transfer now.
     */
    private static boolean isStaleEvidence(final TransferStatus reason)
    {
        return TransferStatus.MISSING == reason || TransferStatus.STALE_SEQUENCE == reason ||
            TransferStatus.LENGTH_MISMATCH == reason || TransferStatus.STALE_INCARNATION == reason;
    }

    /**
     * Plan keys [from, end) again once a source refused them: allowed only within the fetch's alternative budget and
     * only where later keys have not been planned on another source yet (a span never jumps back).
     */
    private void replanFrom(final PeerFetch fetch, final int from, final int end, final long nowMs)
    {
        if (fetch.alternativesUsed >= TransferLimits.MAX_ALTERNATIVE_ATTEMPTS || fetch.nextKey > end)
        {
            fetch.stopAt(from);
            return;
        }
        fetch.alternativesUsed++;
        alternativesTried.incrementRelease();
        fetch.nextKey = from;
        plan(fetch, nowMs);
    }
}
