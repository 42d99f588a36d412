package io.orbitkv.manager.membership;

import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * Owns this process's registrations, one incarnation after another:
 * <ol>
 *   <li><b>joining</b>: placement install or adoption, lease grant and registration transaction, retried with backoff (100 ms
 *   doubling to 2 s) until the join timeout, after which the Manager gives up with the last error;</li>
 *   <li><b>keeping</b>: keepalives six times per acknowledged TTL, several in flight when replies are slow, each
 *   given up once the validity its send would grant has passed; local validity = the send time of the latest
 *   acknowledged keepalive + half the TTL, and a late reply cannot revive an expired incarnation; a keepalive
 *   overdue (unanswered for {@link MembershipConfiguration#KEEPALIVE_OVERDUE_NS} with none acknowledged since) moves
 *   the lease calls to fresh connections, again every {@link MembershipConfiguration#LEASE_RENEW_INTERVAL_NS} while
 *   they stay overdue, each time with a keepalive sent at once;</li>
 *   <li><b>re-registering</b> after a lapse ({@link FenceCause#reRegisters()}): the old lease is revoked (best
 *   effort: the old incarnation stays dead either way), a new runtime UUID and lease are taken and registered with
 *   epoch + 1, retried with the same backoff for as long as it takes.</li>
 * </ol>
 * Runs on its own thread, so a slow snapshot or watch repair never delays renewal (design), and sleeps until its
 * next due time (keepalive, validity end, retry) or a signal (a keepalive reply, a fence).
 */
final class LeaseKeeper implements Agent
{
    private static final int JOINING = 0;
    private static final int KEEPING = 1;
    private static final int REREGISTERING = 2;
    private static final int DONE = 3;

    private final Membership membership;
    private final DueTimeIdleStrategy idle;
    private final NanoClock clock;
    private final EtcdGateway etcd;
    private final MemberRegistrar registrar;
    private final MembershipSettings settings;
    private final AtomicCounter acked;
    private final AtomicCounter failures;
    private final AtomicCounter joinRetries;
    private final AtomicCounter rttMaxMs;
    private final AtomicCounter marginMinMs;
    private final long joinDeadlineNs;
    private final long[] keepaliveSentNs = new long[MembershipConfiguration.MAX_OUTSTANDING_KEEPALIVES];
    private final int[] keepaliveGeneration = new int[MembershipConfiguration.MAX_OUTSTANDING_KEEPALIVES];
    @SuppressWarnings("unchecked")
    private final CompletableFuture<LeaseKeepAliveResponse>[] keepalives =
        new CompletableFuture[MembershipConfiguration.MAX_OUTSTANDING_KEEPALIVES];
    private final Runnable signal;
    private final java.util.function.IntPredicate inFlight = this::keepaliveInFlight;

    private int phase = JOINING;
    private long retryAtNs;
    private long retryDelayNs = MembershipConfiguration.REGISTER_RETRY_MIN_NS;
    private int rounds;
    private RuntimeException lastFailure;
    private boolean placementChecked;
    private UUID pendingUuid;
    private long pendingLeaseId;
    private long pendingTtlSecs;
    private RegistrationValidity pendingValidity;
    private FenceCause previousCause;
    private int incarnations;
    private Incarnation current;
    private long nextKeepaliveNs;
    private long keepaliveIntervalNs;
    private long lastAckNs;
    private long renewedAtNs;

    LeaseKeeper(final Membership membership, final DueTimeIdleStrategy idle)
    {
        this.membership = membership;
        this.idle = idle;
        this.clock = membership.clock();
        this.etcd = membership.etcd();
        this.registrar = membership.registrar();
        this.settings = membership.settings();
        this.acked = membership.counters().get(MembershipCounter.KEEPALIVES_ACKED);
        this.failures = membership.counters().get(MembershipCounter.KEEPALIVE_FAILURES);
        this.joinRetries = membership.counters().get(MembershipCounter.JOIN_RETRIES);
        this.rttMaxMs = membership.counters().get(MembershipCounter.KEEPALIVE_RTT_MAX_MS);
        this.marginMinMs = membership.counters().get(MembershipCounter.VALIDITY_MARGIN_MIN_MS);
        this.joinDeadlineNs = clock.nanoTime() + TimeUnit.MILLISECONDS.toNanos(settings.joinTimeoutMs());
        this.pendingUuid = settings.runtimeUuid();
        this.signal = idle::signal;
        this.renewedAtNs = clock.nanoTime() - MembershipConfiguration.LEASE_RENEW_INTERVAL_NS;
        marginMinMs.setRelease(Long.MAX_VALUE);
    }

    static long intervalNs(final long ttlSecs)
    {
        return ttlSecs * 1_000_000_000L / MembershipConfiguration.KEEPALIVES_PER_TTL;
    }

    public int doWork()
    {
        if (membership.isClosed())
        {
            idle.dueAt(Long.MAX_VALUE);
            return 0;
        }
        final long nowNs = clock.nanoTime();
        switch (phase)
        {
            case JOINING:
            case REREGISTERING:
                return registerRound(nowNs);
            case KEEPING:
                return keep(nowNs);
            default:
                idle.dueAt(Long.MAX_VALUE);
                return 0;
        }
    }

    private int registerRound(final long nowNs)
    {
        if (nowNs - retryAtNs < 0)
        {
            idle.dueAt(retryAtNs);
            return 0;
        }
        rounds++;
        try
        {
            if (!placementChecked)
            {
                membership.placementAdopted(registrar.installOrAdoptPlacement());
                placementChecked = true;
            }
            if (0 != pendingLeaseId && pendingValidity.isExpired(clock.nanoTime()))
            {
                // Retries outlasted the lease's local validity: registering with it would fence at once.
                pendingLeaseId = 0;
            }
            if (0 == pendingLeaseId)
            {
                final long grantSentNs = clock.nanoTime();
                final long[] lease = etcd.grant(settings.ttlSecs());
                pendingLeaseId = lease[0];
                pendingTtlSecs = lease[1];
                pendingValidity = new RegistrationValidity(grantSentNs, pendingTtlSecs);
                keepaliveIntervalNs = intervalNs(pendingTtlSecs);
                // The first keepalive is due one interval after the grant was sent, not after registration:
                // registering on a loaded host may take a good part of the validity window.
                nextKeepaliveNs = grantSentNs + keepaliveIntervalNs;
                // Validity counts from the grant's send, as from an acknowledged keepalive's.
                lastAckNs = grantSentNs;
            }
            final Incarnation registered =
                registrar.register(incarnations + 1, pendingUuid, pendingLeaseId, pendingTtlSecs, pendingValidity);
            incarnations++;
            current = registered;
            pendingLeaseId = 0;
            pendingValidity = null;
            phase = KEEPING;
            retryDelayNs = MembershipConfiguration.REGISTER_RETRY_MIN_NS;
            rounds = 0;
            lastFailure = null;
            membership.registered(registered, previousCause);
            membership.updateRemoteWorkGauge(clock.nanoTime());
            return 1;
        }
        catch (final Membership.NodeIdInUseException ex)
        {
            return fatal(FenceCause.NODE_ID_TAKEN, ex);
        }
        catch (final RuntimeException ex)
        {
            // etcd did not answer, every round lost a race, or an unreadable placement: all worth another round.
            if (ex instanceof EtcdGateway.EtcdCallException call && call.isLeaseNotFound())
            {
                pendingLeaseId = 0;
            }
            lastFailure = ex;
            joinRetries.increment();
            if (ex instanceof EtcdGateway.EtcdCallException call && call.outcomeUnknown())
            {
                // No answer within the deadline: the next round goes out on fresh connections.
                etcd.renewLeaseConnection();
                etcd.closeRetiredLeaseClients(inFlight);
                renewedAtNs = clock.nanoTime();
            }
            if (JOINING == phase)
            {
                final String access = etcd.explainAccess(ex, MembershipConfiguration.clusterPrefix(settings.clusterName()));
                if (null != access)
                {
                    // etcd answered (or its endpoint's handshake did): this client's TLS or auth is wrong.
                    phase = DONE;
                    membership.joinFailed(new Membership.EtcdAccessException("cannot join cluster '" +
                        settings.clusterName() + "' as node '" + settings.nodeId() + "' through etcd at " +
                        settings.etcdEndpoints() + ": " + access, ex));
                    return 1;
                }
            }
            final long afterNs = clock.nanoTime();
            if (JOINING == phase && afterNs + retryDelayNs - joinDeadlineNs >= 0)
            {
                phase = DONE;
                membership.joinFailed(new Membership.JoinTimeoutException("cannot join cluster '" +
                    settings.clusterName() + "' as node '" + settings.nodeId() + "': etcd at " +
                    settings.etcdEndpoints() + " did not answer within the join timeout of " + settings.joinTimeoutMs() +
                    " ms (" + rounds + " rounds; last: " + ex.getMessage() + ")", ex));
                return 1;
            }
            retryAtNs = afterNs + retryDelayNs;
            retryDelayNs = Math.min(retryDelayNs * 2, MembershipConfiguration.REGISTER_RETRY_MAX_NS);
            idle.dueAt(retryAtNs);
            return 1;
        }
    }

    private int fatal(final FenceCause cause, final RuntimeException ex)
    {
        phase = DONE;
        if (0 == incarnations)
        {
            membership.joinFailed(ex);
        }
        else
        {
            membership.fatal(cause, ex.getMessage());
        }
        return 1;
    }

    private int keep(final long nowNs)
    {
        final Incarnation incarnation = current;
        final FenceCause cause = incarnation.fenceCause();
        if (FenceCause.NONE != cause)
        {
            return afterFence(incarnation, cause);
        }
        final RegistrationValidity validity = incarnation.validity();
        if (validity.isExpired(nowNs))
        {
            membership.fence(incarnation, FenceCause.REGISTRATION_EXPIRED);
            return 1;
        }

        int work = 0;
        long giveUpDueNs = Long.MAX_VALUE;
        boolean free = false;
        long unansweredSinceNs = Long.MAX_VALUE;
        for (int i = 0; i < keepalives.length; i++)
        {
            final CompletableFuture<LeaseKeepAliveResponse> pending = keepalives[i];
            if (null == pending)
            {
                free = true;
                continue;
            }
            final long sentNs = keepaliveSentNs[i];
            if (pending.isDone())
            {
                keepalives[i] = null;
                free = true;
                work++;
                onReply(incarnation, pending, sentNs);
                if (FenceCause.NONE != incarnation.fenceCause())
                {
                    return work;
                }
            }
            else if (nowNs - (sentNs + RegistrationValidity.halfTtlNs(incarnation.ttlSecs())) >= 0)
            {
                // Its reply could no longer extend validity: give it up and count it as a timeout.
                keepalives[i] = null;
                free = true;
                pending.cancel(true);
                etcd.countFailure(null);
                failures.increment();
                work++;
            }
            else
            {
                giveUpDueNs = Math.min(giveUpDueNs, sentNs + RegistrationValidity.halfTtlNs(incarnation.ttlSecs()));
                if (sentNs - lastAckNs > 0)
                {
                    // Sent after the last acknowledgement arrived: nothing has come back since.
                    unansweredSinceNs = Math.min(unansweredSinceNs, sentNs);
                }
            }
        }

        if (Long.MAX_VALUE != unansweredSinceNs && nowNs - overdueAtNs(unansweredSinceNs) >= 0)
        {
            free |= renewConnection(nowNs);
            nextKeepaliveNs = nowNs;
            work++;
        }

        if (free && nowNs - nextKeepaliveNs >= 0)
        {
            send(incarnation, nowNs);
            unansweredSinceNs = Math.min(unansweredSinceNs, nowNs);
            nextKeepaliveNs = nowNs + keepaliveIntervalNs;
            work++;
        }
        long dueNs = Math.min(Math.min(nextKeepaliveNs, validity.validUntilNs()), giveUpDueNs);
        if (Long.MAX_VALUE != unansweredSinceNs)
        {
            dueNs = Math.min(dueNs, overdueAtNs(unansweredSinceNs));
        }
        // A retired lease client goes once nothing in flight uses it.
        etcd.closeRetiredLeaseClients(inFlight);
        idle.dueAt(dueNs);
        return work;
    }

    /**
     * When keepalives unanswered since {@code unansweredSinceNs} call for fresh connections: once the oldest is overdue,
     * and no sooner than one renewal interval after the last renewal.
     */
    private long overdueAtNs(final long unansweredSinceNs)
    {
        return Math.max(unansweredSinceNs + MembershipConfiguration.KEEPALIVE_OVERDUE_NS,
            renewedAtNs + MembershipConfiguration.LEASE_RENEW_INTERVAL_NS);
    }

    /**
     * Lease calls move to fresh connections. With no slot free, the second oldest keepalive in flight is given up
     * (counted as a failure) so one can go out at once on the new connection: the oldest, sent before the trouble,
     * stays, as a slow etcd may still answer it; the newest are the best hopes after a heal.
     *
     * @return true when a slot is free.
     */
    private boolean renewConnection(final long nowNs)
    {
        etcd.renewLeaseConnection();
        renewedAtNs = nowNs;
        boolean free = false;
        int oldest = -1;
        int second = -1;
        for (int i = 0; i < keepalives.length; i++)
        {
            if (null == keepalives[i])
            {
                free = true;
            }
            else if (-1 == oldest || keepaliveSentNs[i] - keepaliveSentNs[oldest] < 0)
            {
                second = oldest;
                oldest = i;
            }
            else if (-1 == second || keepaliveSentNs[i] - keepaliveSentNs[second] < 0)
            {
                second = i;
            }
        }
        if (!free && -1 != second)
        {
            giveUp(second);
            free = true;
        }
        etcd.closeRetiredLeaseClients(inFlight);
        return free;
    }

    private boolean keepaliveInFlight(final int generation)
    {
        for (int i = 0; i < keepalives.length; i++)
        {
            if (null != keepalives[i] && keepaliveGeneration[i] == generation)
            {
                return true;
            }
        }
        return false;
    }

    private void giveUp(final int i)
    {
        keepalives[i].cancel(true);
        keepalives[i] = null;
        etcd.countFailure(null);
        failures.increment();
    }

    private void send(final Incarnation incarnation, final long nowNs)
    {
        for (int i = 0; i < keepalives.length; i++)
        {
            if (null == keepalives[i])
            {
                final CompletableFuture<LeaseKeepAliveResponse> future = etcd.keepAliveAsync(incarnation.leaseId());
                keepalives[i] = future;
                keepaliveSentNs[i] = nowNs;
                keepaliveGeneration[i] = etcd.leaseGeneration();
                future.whenComplete((response, error) -> signal.run());
                return;
            }
        }
    }

    private void onReply(
        final Incarnation incarnation, final CompletableFuture<LeaseKeepAliveResponse> reply, final long sentNs)
    {
        final LeaseKeepAliveResponse response;
        try
        {
            response = reply.join();
        }
        catch (final RuntimeException ex)
        {
            failures.increment();
            final EtcdGateway.EtcdCallException failure = etcd.countFailure(ex);
            if (failure.isLeaseNotFound())
            {
                membership.fence(incarnation, FenceCause.LEASE_LOST);
            }
            else
            {
                // Failed at once (no connected member, a reset stream): try again soon rather than in one interval.
                nextKeepaliveNs = Math.min(nextKeepaliveNs, clock.nanoTime() + MembershipConfiguration.KEEPALIVE_RETRY_NS);
            }
            return;
        }
        final long ackNs = clock.nanoTime();
        if (response.getTTL() <= 0)
        {
            membership.fence(incarnation, FenceCause.LEASE_LOST);
        }
        else if (incarnation.validity().onAcknowledged(sentNs, response.getTTL(), ackNs))
        {
            acked.increment();
            lastAckNs = ackNs;
            membership.validityExtended(incarnation, sentNs);
            keepaliveIntervalNs = intervalNs(response.getTTL());
            final long rttMs = TimeUnit.NANOSECONDS.toMillis(ackNs - sentNs);
            if (rttMs > rttMaxMs.get())
            {
                rttMaxMs.setRelease(rttMs);
            }
            final long marginMs = TimeUnit.NANOSECONDS.toMillis(incarnation.validity().validUntilNs() - ackNs);
            if (marginMs < marginMinMs.get())
            {
                marginMinMs.setRelease(marginMs);
            }
        }
        else
        {
            membership.fence(incarnation, FenceCause.REGISTRATION_EXPIRED);
        }
    }

    private int afterFence(final Incarnation fenced, final FenceCause cause)
    {
        for (int i = 0; i < keepalives.length; i++)
        {
            if (null != keepalives[i])
            {
                keepalives[i].cancel(true);
                keepalives[i] = null;
            }
        }
        if (!cause.reRegisters())
        {
            phase = DONE;
            return 1;
        }
        if (FenceCause.REGISTRATION_EXPIRED == cause)
        {
            // No keepalive came back in time on these connections: register the next incarnation on fresh ones.
            etcd.renewLeaseConnection();
            etcd.closeRetiredLeaseClients(inFlight);
            renewedAtNs = clock.nanoTime();
        }
        try
        {
            // The old incarnation is dead by our own verdict; revoking its lease removes its record at once, so
            // hosts retire its evidence now rather than when etcd would have expired it. Best effort: the
            // registration below replaces a record that survived.
            etcd.revoke(fenced.leaseId());
        }
        catch (final RuntimeException ignore)
        {
            // lease already gone, or etcd unreachable: it expires by itself
        }
        previousCause = cause;
        pendingUuid = UUID.randomUUID();
        pendingLeaseId = 0;
        placementChecked = false;
        membership.registering(pendingUuid);
        phase = REREGISTERING;
        retryAtNs = clock.nanoTime();
        retryDelayNs = MembershipConfiguration.REGISTER_RETRY_MIN_NS;
        return 1;
    }

    /**
     * The lease a graceful close revokes: the current incarnation's, or one granted for a registration in
     * progress. Read after the agent stopped.
     *
     * @return lease id, 0 for none.
     */
    long leaseToRevoke()
    {
        if (0 != pendingLeaseId)
        {
            return pendingLeaseId;
        }
        return null == current || FenceCause.NONE != current.fenceCause() ? 0 : current.leaseId();
    }

    public String roleName()
    {
        return "orbitkv-lease-keeper";
    }
}
