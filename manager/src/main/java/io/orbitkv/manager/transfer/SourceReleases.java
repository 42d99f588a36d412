package io.orbitkv.manager.transfer;

import io.orbitkv.codecs.TransferLimits;
import io.orbitkv.codecs.transfer.ReleaseReason;
import io.orbitkv.manager.catalog.CatalogRequester;
import io.orbitkv.manager.peer.PeerClient;
import io.orbitkv.manager.status.SystemCounters;
import io.orbitkv.manager.store.TieredStore;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * The requester's releases of source sessions: a granted attempt is released once its reads ended (COMPLETED) or when
 * its fetch lets it go (ABANDONED), every {@link TransferLimits#RELEASE_RETRY_INTERVAL_MS} until the source
 * acknowledges, at most {@link TransferLimits#RELEASE_ATTEMPTS} times; the source's session TTL reclaims one that was
 * never acknowledged. A local attempt only unpins this Manager's own residences. A grant nobody waits for is released
 * at once. Single threaded (the agent that owns the fetches).
 */
final class SourceReleases
{
    private final CatalogRequester catalog;
    private final TransferProxy proxy;
    private final TieredStore store;
    private final AtomicCounter releasesSent;
    private final AtomicCounter releaseRetries;
    private final AtomicCounter releasesAbandoned;

    SourceReleases(
        final CatalogRequester catalog, final TransferProxy proxy, final TieredStore store, final SystemCounters counters)
    {
        this.catalog = catalog;
        this.proxy = proxy;
        this.store = store;
        releasesSent = counters.get(TransferCounter.RELEASES_SENT);
        releaseRetries = counters.get(TransferCounter.RELEASE_RETRIES);
        releasesAbandoned = counters.get(TransferCounter.RELEASES_ABANDONED);
    }

    /**
     * Let an attempt go: a granted one with no read outstanding starts releasing, a local one unpins, one not sent yet
     * is dropped; any other is left as it is (its reads end first, or it was never granted).
     *
     * @param abandoned whether the fetch gave the span up rather than read it.
     */
    void start(
        final PeerFetch fetch, final SourceAttempt attempt, final boolean abandoned, final long nowMs)
    {
        if (attempt.local)
        {
            // Nothing to tell anyone: this Manager's own pins are let go.
            if (SourceAttempt.GRANTED == attempt.state)
            {
                for (int i = attempt.firstKey; i < attempt.firstKey + attempt.grantedKeys; i++)
                {
                    store.unpin(fetch.keyResidences[i]);
                }
            }
            attempt.state = SourceAttempt.DONE;
            return;
        }
        if (SourceAttempt.GRANTED != attempt.state || attempt.readsOutstanding > 0)
        {
            if (SourceAttempt.TO_SEND == attempt.state)
            {
                attempt.state = SourceAttempt.DONE;
            }
            return;
        }
        attempt.state = SourceAttempt.RELEASING;
        attempt.abandoned = abandoned;
        attempt.releaseAttempts = 0;
        send(attempt, nowMs);
    }

    /**
     * A releasing attempt's interval passed without an acknowledgement: send again, or give up after the last attempt.
     *
     * @return false when it gave up (the attempt is DONE).
     */
    boolean retry(final SourceAttempt attempt, final long nowMs)
    {
        if (attempt.releaseAttempts >= TransferLimits.RELEASE_ATTEMPTS)
        {
            releasesAbandoned.incrementRelease();
            attempt.state = SourceAttempt.DONE;
            return false;
        }
        releaseRetries.incrementRelease();
        send(attempt, nowMs);
        return true;
    }

    /**
     * Whether an acknowledgement from {@code client} of {@code transferSessionId} ends this attempt's release.
     */
    static boolean acknowledges(
        final SourceAttempt attempt, final PeerClient client, final long transferSessionId)
    {
        return SourceAttempt.RELEASING == attempt.state && attempt.transferSessionId == transferSessionId &&
            attempt.ownerMsb == client.remoteIncarnationMsb() && attempt.ownerLsb == client.remoteIncarnationLsb();
    }

    /**
     * Release a session granted to an authorization nobody waits for any more (timed out, or its client left).
     */
    void releaseStale(final PeerClient client, final long transferSessionId, final long requesterSessionId)
    {
        if (proxy.release(client, proxy.nextCorrelationId(), catalog.localIncarnationMsb(),
            catalog.localIncarnationLsb(), transferSessionId, requesterSessionId, ReleaseReason.ABANDONED))
        {
            releasesSent.incrementRelease();
        }
    }

    private void send(final SourceAttempt attempt, final long nowMs)
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
}
