package io.orbitkv.manager.transfer;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.SplittableRandom;

import io.orbitkv.codecs.TransferLimits;
import io.orbitkv.codecs.transfer.TransferAuthorizeDecoder;
import io.orbitkv.codecs.transfer.TransferReleaseDecoder;
import io.orbitkv.codecs.transfer.TransferStatus;
import io.orbitkv.index.BlockStore;
import io.orbitkv.index.NamespaceTable;
import io.orbitkv.manager.peer.PeerSession;
import io.orbitkv.manager.status.SystemCounters;
import io.orbitkv.manager.store.Residence;
import io.orbitkv.manager.store.TieredStore;
import io.orbitkv.transport.Transport;
import io.orbitkv.transport.TransportException;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * The source half of a peer transfer: validates an authorization, pins the leading run of valid keys under the
 * store's single owner (this thread), exports their ranges through the {@link Transport} and answers with a grant;
 * ends sessions on release, expiry, requester loss or revocation. See docs/transfer.md for the order of checks and
 * the lifetime rules; in short:
 * <ol>
 *     <li>frame sanity (1..{@link TransferLimits#MAX_KEYS_PER_AUTHORIZE} keys, lengths, positive expected bytes,
 *     maxBytes their sum): MALFORMED;</li>
 *     <li>a duplicate (same requester incarnation and requester session id as a held grant) gets that grant again;</li>
 *     <li>own registration: FENCED; requester in the member view: UNKNOWN_REQUESTER; session limit:
 *     TOO_MANY_SESSIONS; per-peer limit: PEER_LIMIT;</li>
 *     <li>per key in order: the residence of the named tier (MISSING), insertion sequence (STALE_SEQUENCE), length
 *     (LENGTH_MISMATCH); for DRAM the budget (OVER_BUDGET); for SSD a copy prepared in {@link SsdExports}, else its
 *     preparation starts (PENDING) or finds no staging credit (BACKPRESSURE). The grant covers the keys before the
 *     first refused one; when the first key is refused nothing is pinned and no session exists. SSD keys behind a
 *     PENDING one are prepared too, so the requester's next ask can take them all.</li>
 * </ol>
 * The checks are {@link AuthorizeChecks}'s, the answers the {@link TransferProxy}'s. Single threaded (the agent that
 * owns the store); allocation free on every path once constructed.
 */
final class SourceAuthorizer
{
    private final TransferSettings settings;
    private final TieredStore store;
    private final BlockStore dram;
    private final long poolAddress;
    private final Transport transport;
    private final SourceMembers members;
    private final TransferProxy proxy;
    private final SourceHolds holds;
    private final SplittableRandom tokens;

    private final UnsafeBuffer endpoint;
    private final long[] exportAddresses = new long[TransferLimits.MAX_KEYS_PER_AUTHORIZE];
    private final int[] exportLengths = new int[TransferLimits.MAX_KEYS_PER_AUTHORIZE];
    private final SsdExports exports;
    private final AuthorizeChecks checks;

    private final AtomicCounter rejectedFenced;
    private final AtomicCounter rejectedUnknownRequester;
    private final AtomicCounter rejectedMissing;
    private final AtomicCounter rejectedStaleSequence;
    private final AtomicCounter rejectedLengthMismatch;
    private final AtomicCounter rejectedOverBudget;
    private final AtomicCounter rejectedTooManySessions;
    private final AtomicCounter rejectedPeerLimit;
    private final AtomicCounter rejectedMalformed;
    private final AtomicCounter rejectedExport;
    private final AtomicCounter grants;
    private final AtomicCounter grantedKeys;
    private final AtomicCounter partialGrants;
    private final AtomicCounter sessionsActive;
    private final AtomicCounter pinnedBytes;
    private final AtomicCounter releases;
    private final AtomicCounter duplicateAuthorizes;
    private final AtomicCounter duplicateReleases;
    private final AtomicCounter unknownSessionReleases;
    private final AtomicCounter expiries;
    private final AtomicCounter revocationsCompleted;
    private final AtomicCounter quarantinedSessions;
    private final AtomicCounter quarantinedBytes;
    private final AtomicCounter requestersLost;
    private final AtomicCounter answersFailed;
    private final AtomicCounter pendingAnswers;
    private final AtomicCounter backpressureAnswers;
    private final AtomicCounter ssdGrantedKeys;

    private long nextDeadlineNs = Long.MAX_VALUE;
    private int revoking;
    private long appliedViewVersion;

    SourceAuthorizer(
        final TransferSettings settings,
        final TieredStore store,
        final NamespaceTable namespaces,
        final Transport transport,
        final SourceMembers members,
        final AnswerChannel channel,
        final SsdExports exports,
        final SystemCounters counters)
    {
        this.settings = settings;
        this.exports = exports;
        this.store = store;
        this.dram = store.dram();
        this.poolAddress = store.pool().address();
        this.transport = transport;
        this.members = members;
        this.proxy = new TransferProxy(channel);
        final SecureRandom seed = new SecureRandom();
        this.tokens = new SplittableRandom(seed.nextLong());
        this.holds = new SourceHolds(settings.maxSessions(), settings.budgetBytes(), seed.nextLong() >>> 24);
        final byte[] endpointBytes = transport.localEndpoint().getBytes(StandardCharsets.US_ASCII);
        this.endpoint = new UnsafeBuffer(endpointBytes);
        this.appliedViewVersion = members.viewVersion();
        this.checks = new AuthorizeChecks(store, namespaces, exports, holds);

        rejectedFenced = counters.get(TransferCounter.SOURCE_REJECTED_FENCED);
        rejectedUnknownRequester = counters.get(TransferCounter.SOURCE_REJECTED_UNKNOWN_REQUESTER);
        rejectedMissing = counters.get(TransferCounter.SOURCE_REJECTED_MISSING);
        rejectedStaleSequence = counters.get(TransferCounter.SOURCE_REJECTED_STALE_SEQUENCE);
        rejectedLengthMismatch = counters.get(TransferCounter.SOURCE_REJECTED_LENGTH_MISMATCH);
        rejectedOverBudget = counters.get(TransferCounter.SOURCE_REJECTED_OVER_BUDGET);
        rejectedTooManySessions = counters.get(TransferCounter.SOURCE_REJECTED_TOO_MANY_SESSIONS);
        rejectedPeerLimit = counters.get(TransferCounter.SOURCE_REJECTED_PEER_LIMIT);
        rejectedMalformed = counters.get(TransferCounter.SOURCE_REJECTED_MALFORMED);
        rejectedExport = counters.get(TransferCounter.SOURCE_REJECTED_EXPORT);
        grants = counters.get(TransferCounter.SOURCE_GRANTS);
        grantedKeys = counters.get(TransferCounter.SOURCE_GRANTED_KEYS);
        partialGrants = counters.get(TransferCounter.SOURCE_PARTIAL_GRANTS);
        sessionsActive = counters.get(TransferCounter.SOURCE_SESSIONS_ACTIVE);
        pinnedBytes = counters.get(TransferCounter.SOURCE_PINNED_BYTES);
        releases = counters.get(TransferCounter.SOURCE_RELEASES);
        duplicateAuthorizes = counters.get(TransferCounter.SOURCE_DUPLICATE_AUTHORIZES);
        duplicateReleases = counters.get(TransferCounter.SOURCE_DUPLICATE_RELEASES);
        unknownSessionReleases = counters.get(TransferCounter.SOURCE_UNKNOWN_SESSION_RELEASES);
        expiries = counters.get(TransferCounter.SOURCE_EXPIRIES);
        revocationsCompleted = counters.get(TransferCounter.SOURCE_REVOCATIONS_COMPLETED);
        quarantinedSessions = counters.get(TransferCounter.SOURCE_QUARANTINED_SESSIONS);
        quarantinedBytes = counters.get(TransferCounter.SOURCE_QUARANTINED_BYTES);
        requestersLost = counters.get(TransferCounter.SOURCE_REQUESTERS_LOST);
        answersFailed = counters.get(TransferCounter.SOURCE_ANSWERS_FAILED);
        pendingAnswers = counters.get(TransferCounter.SOURCE_PENDING);
        backpressureAnswers = counters.get(TransferCounter.SOURCE_BACKPRESSURE);
        ssdGrantedKeys = counters.get(TransferCounter.SOURCE_SSD_GRANTED_KEYS);
    }

    SourceHolds holds()
    {
        return holds;
    }

    /**
     * @return when the next granted session expires ({@link Long#MAX_VALUE} when none is held).
     */
    long nextDeadlineNs()
    {
        return nextDeadlineNs;
    }

    /**
     * @return sessions whose revocation the transport has not confirmed yet (their pins wait for it).
     */
    int revocationsPending()
    {
        return revoking;
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Authorization.

    void onAuthorize(final PeerSession session, final TransferAuthorizeDecoder request, final long nowNs)
    {
        final long correlationId = request.correlationId();
        final long requesterSessionId = request.requesterSessionId();
        final long requesterMsb = session.requesterIncarnationMsb();
        final long requesterLsb = session.requesterIncarnationLsb();

        final int keyCount = checks.checkFrame(request);
        if (keyCount < 0)
        {
            rejectedMalformed.incrementRelease();
            refuse(session, correlationId, requesterSessionId, TransferStatus.MALFORMED, 0);
            return;
        }
        final TransferSession held = holds.granted(requesterMsb, requesterLsb, requesterSessionId);
        if (null != held)
        {
            // design: duplicate requests are idempotent; the same grant again, nothing pinned twice.
            duplicateAuthorizes.incrementRelease();
            sendGrant(session, held, correlationId);
            return;
        }
        if (!members.grantsAllowed(nowNs))
        {
            rejectedFenced.incrementRelease();
            refuse(session, correlationId, requesterSessionId, TransferStatus.FENCED, 0);
            return;
        }
        if (!members.isMember(requesterMsb, requesterLsb))
        {
            rejectedUnknownRequester.incrementRelease();
            refuse(session, correlationId, requesterSessionId, TransferStatus.UNKNOWN_REQUESTER, 0);
            return;
        }
        if (holds.activeCount() >= holds.capacity())
        {
            rejectedTooManySessions.incrementRelease();
            refuse(session, correlationId, requesterSessionId, TransferStatus.TOO_MANY_SESSIONS, 0);
            return;
        }
        if (holds.countOf(requesterMsb, requesterLsb) >= settings.sessionsPerPeer())
        {
            rejectedPeerLimit.incrementRelease();
            refuse(session, correlationId, requesterSessionId, TransferStatus.PEER_LIMIT, 0);
            return;
        }

        final int valid = checks.checkKeys(request);
        final TransferStatus refused = checks.refused();
        if (TransferStatus.NOT_ATTEMPTED != refused)
        {
            countRefusal(refused);
        }
        if (0 == valid)
        {
            // design: rejection grants no addresses and creates no transfer session.
            refuse(session, correlationId, requesterSessionId, refused, keyCount);
            return;
        }
        grant(session, correlationId, requesterSessionId, keyCount, valid, refused, checks.charge(), nowNs);
    }

    private void grant(
        final PeerSession session,
        final long correlationId,
        final long requesterSessionId,
        final int keyCount,
        final int valid,
        final TransferStatus refused,
        final long charge,
        final long nowNs)
    {
        final TransferSession hold = holds.acquire();
        hold.requesterMsb = session.requesterIncarnationMsb();
        hold.requesterLsb = session.requesterIncarnationLsb();
        hold.requesterSessionId = requesterSessionId;
        hold.requestedKeys = keyCount;
        hold.grantedKeys = valid;
        hold.refusedStatus = refused;
        hold.token = tokens.nextLong();
        hold.chargedBytes = charge;
        int staged = 0;
        for (int i = 0; i < valid; i++)
        {
            final long residence = checks.residence(i);
            final int slot = checks.slot(i);
            hold.residences[i] = residence;
            hold.stagedSlots[i] = slot;
            if (slot >= 0)
            {
                exports.claim(slot);
                hold.addresses[i] = exports.address(slot);
                hold.lengths[i] = exports.length(slot);
                hold.crcs[i] = exports.crc32c(slot);
                staged++;
            }
            else
            {
                final int entryId = Residence.entryId(residence);
                store.pin(residence);
                hold.addresses[i] = poolAddress + dram.offset(entryId);
                hold.lengths[i] = dram.length(entryId);
                hold.crcs[i] = store.crc32c(residence);
            }
            exportAddresses[i] = hold.addresses[i];
            exportLengths[i] = hold.lengths[i];
        }
        boolean exported;
        try
        {
            exported = transport.export(hold.transferSessionId, hold.token, exportAddresses, exportLengths, valid);
        }
        catch (final TransportException ex)
        {
            // A range the transport cannot serve (not registered, too many): refused like a full transport.
            exported = false;
        }
        if (!exported)
        {
            letGo(hold, valid);
            hold.chargedBytes = 0;
            holds.abandon(hold);
            rejectedExport.incrementRelease();
            refuse(session, correlationId, requesterSessionId, TransferStatus.ERROR, 0);
            return;
        }
        hold.deadlineNs = nowNs + settings.sessionTtlNs();
        nextDeadlineNs = Math.min(nextDeadlineNs, hold.deadlineNs);
        holds.granted(hold);
        members.granted(nowNs, hold.requesterMsb, hold.requesterLsb, requesterSessionId, hold.transferSessionId, valid,
            hold.chargedBytes);
        grants.incrementRelease();
        grantedKeys.getAndAddRelease(valid);
        if (staged > 0)
        {
            ssdGrantedKeys.getAndAddRelease(staged);
        }
        if (valid < keyCount)
        {
            partialGrants.incrementRelease();
        }
        updateGauges();
        sendGrant(session, hold, correlationId);
    }

    private void countRefusal(final TransferStatus status)
    {
        switch (status)
        {
            case MISSING -> rejectedMissing.incrementRelease();
            case STALE_SEQUENCE -> rejectedStaleSequence.incrementRelease();
            case LENGTH_MISMATCH -> rejectedLengthMismatch.incrementRelease();
            case OVER_BUDGET -> rejectedOverBudget.incrementRelease();
            case PENDING -> pendingAnswers.incrementRelease();
            case BACKPRESSURE -> backpressureAnswers.incrementRelease();
            default ->
            {
                // Frame-level refusals are counted where they are decided.
            }
        }
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Release, expiry, requester loss, revocation.

    void onRelease(final PeerSession session, final TransferReleaseDecoder request)
    {
        final long transferSessionId = request.transferSessionId();
        final long correlationId = request.correlationId();
        final TransferSession hold = holds.byId(transferSessionId);
        if (null == hold || !hold.isFrom(session.requesterIncarnationMsb(), session.requesterIncarnationLsb()) ||
            hold.requesterSessionId != request.requesterSessionId())
        {
            if (holds.wasFreed(transferSessionId))
            {
                duplicateReleases.incrementRelease();
            }
            else
            {
                unknownSessionReleases.incrementRelease();
            }
            sendAck(session, correlationId, transferSessionId, TransferStatus.UNKNOWN_SESSION);
            return;
        }
        switch (hold.state)
        {
            case TransferSession.GRANTED ->
            {
                releases.incrementRelease();
                endSession(hold);
                sendAck(session, correlationId, transferSessionId, TransferStatus.OK);
            }
            case TransferSession.QUARANTINED ->
            {
                // The requester says its reads ended: what the quarantine waited for.
                releases.incrementRelease();
                unpinAndFree(hold);
                sendAck(session, correlationId, transferSessionId, TransferStatus.OK);
            }
            default ->
            {
                // Revoking: released (or expired) already; the pins go when the transport says so.
                duplicateReleases.incrementRelease();
                sendAck(session, correlationId, transferSessionId, TransferStatus.UNKNOWN_SESSION);
            }
        }
    }

    /**
     * The transport completed a revocation: no read of the session is in progress, its bytes may be reused.
     */
    void onRevoked(final long transferSessionId)
    {
        final TransferSession hold = holds.byId(transferSessionId);
        if (null != hold && TransferSession.REVOKING == hold.state)
        {
            revocationsCompleted.incrementRelease();
            unpinAndFree(hold);
        }
    }

    /**
     * Expire sessions past their lifetime and end those whose requester left the member view.
     *
     * @return work done.
     */
    int doWork(final long nowNs)
    {
        int work = null == exports ? 0 : exports.doWork(nowNs);
        if (nowNs - nextDeadlineNs >= 0)
        {
            work += expire(nowNs);
        }
        final long viewVersion = members.viewVersion();
        if (viewVersion != appliedViewVersion)
        {
            appliedViewVersion = viewVersion;
            work += dropLostRequesters();
        }
        return work;
    }

    private int expire(final long nowNs)
    {
        int expired = 0;
        long next = Long.MAX_VALUE;
        for (int i = 0, n = holds.capacity(); i < n; i++)
        {
            final TransferSession hold = holds.at(i);
            if (TransferSession.GRANTED != hold.state)
            {
                continue;
            }
            if (nowNs - hold.deadlineNs >= 0)
            {
                expiries.incrementRelease();
                expired++;
                if (transport.canRevoke())
                {
                    hold.state = TransferSession.REVOKING;
                    revoking++;
                    transport.revoke(hold.transferSessionId);
                }
                else
                {
                    // design: no timeout-only reclamation. New reads are refused; reads already submitted by the
                    // requester cannot be proven over, so the memory stays pinned and charged.
                    transport.revoke(hold.transferSessionId);
                    holds.quarantine(hold);
                }
            }
            else
            {
                next = Math.min(next, hold.deadlineNs);
            }
        }
        nextDeadlineNs = next;
        updateGauges();
        return expired;
    }

    private int dropLostRequesters()
    {
        int dropped = 0;
        for (int i = 0, n = holds.capacity(); i < n; i++)
        {
            final TransferSession hold = holds.at(i);
            if ((TransferSession.GRANTED != hold.state && TransferSession.QUARANTINED != hold.state) ||
                members.isMember(hold.requesterMsb, hold.requesterLsb))
            {
                continue;
            }
            requestersLost.incrementRelease();
            dropped++;
            if (TransferSession.GRANTED == hold.state && transport.canRevoke())
            {
                hold.state = TransferSession.REVOKING;
                revoking++;
                transport.revoke(hold.transferSessionId);
            }
            else
            {
                // The requester's incarnation is gone: no read of it can still be in progress.
                unpinAndFree(hold);
            }
        }
        updateGauges();
        return dropped;
    }

    private void endSession(final TransferSession hold)
    {
        if (transport.canRevoke())
        {
            hold.state = TransferSession.REVOKING;
            revoking++;
            transport.revoke(hold.transferSessionId);
        }
        else
        {
            // One-sided reads: the requester's release says its reads ended, so the bytes are free now.
            unpinAndFree(hold);
        }
    }

    private void unpinAndFree(final TransferSession hold)
    {
        if (TransferSession.REVOKING == hold.state)
        {
            revoking--;
        }
        if (!transport.canRevoke() && TransferSession.QUARANTINED != hold.state)
        {
            // Withdraw the export; a one-sided transport delivers no revocation to wait for.
            transport.revoke(hold.transferSessionId);
        }
        letGo(hold, hold.grantedKeys);
        holds.free(hold);
        updateGauges();
    }

    /**
     * Drop what a session's keys hold: the DRAM pins, or the claims on export staging.
     */
    private void letGo(final TransferSession hold, final int keys)
    {
        for (int i = 0; i < keys; i++)
        {
            final int slot = hold.stagedSlots[i];
            if (slot >= 0)
            {
                exports.release(slot);
            }
            else
            {
                store.unpin(hold.residences[i]);
            }
        }
    }

    private void updateGauges()
    {
        sessionsActive.setRelease(holds.activeCount());
        pinnedBytes.setRelease(holds.chargedBytes());
        quarantinedSessions.setRelease(holds.quarantinedSessions());
        quarantinedBytes.setRelease(holds.quarantinedBytes());
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Answers.

    private void sendGrant(final PeerSession session, final TransferSession hold, final long correlationId)
    {
        counted(proxy.grant(session, hold, correlationId, settings.sessionTtlMs(), endpoint));
    }

    private void refuse(
        final PeerSession session,
        final long correlationId,
        final long requesterSessionId,
        final TransferStatus status,
        final int keyCount)
    {
        counted(proxy.refuse(session, correlationId, requesterSessionId, status, keyCount));
    }

    private void sendAck(
        final PeerSession session, final long correlationId, final long transferSessionId, final TransferStatus status)
    {
        counted(proxy.releaseAck(session, correlationId, transferSessionId, status));
    }

    private void counted(final boolean sent)
    {
        if (!sent)
        {
            answersFailed.incrementRelease();
        }
    }
}
