package io.orbitkv.manager.membership;

import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.orbitkv.manager.SystemCounterDescriptor;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * Renews the own lease about three times per acknowledged TTL with one keepalive round trip at a time, each under
 * the etcd deadline, and keeps local validity: valid until half the acknowledged TTL after the keepalive was
 * <em>sent</em>. Validity running out fences the runtime until restart; a late acknowledgement cannot revive it.
 *
 * <p>Runs on its own thread so that a slow snapshot or watch repair never delays renewal (design).
 */
final class LeaseKeeper implements Agent
{
    private final Membership membership;
    private final NanoClock clock;
    private final RegistrationValidity validity;
    private final EtcdGateway etcd;
    private final AtomicCounter acked;
    private final AtomicCounter failures;
    private long nextKeepaliveNs;

    LeaseKeeper(final Membership membership)
    {
        this.membership = membership;
        this.clock = membership.clock();
        this.validity = membership.validity();
        this.etcd = membership.etcd();
        this.acked = membership.counters().get(SystemCounterDescriptor.MEMBERSHIP_KEEPALIVES_ACKED);
        this.failures = membership.counters().get(SystemCounterDescriptor.MEMBERSHIP_KEEPALIVE_FAILURES);
        this.nextKeepaliveNs = clock.nanoTime() + intervalNs(membership.grantedTtlSecs());
    }

    static long intervalNs(final long ttlSecs)
    {
        return ttlSecs * 1_000_000_000L / MembershipConfiguration.KEEPALIVES_PER_TTL;
    }

    public int doWork()
    {
        if (FenceCause.NONE != membership.fenceCause())
        {
            return 0;
        }
        final long nowNs = clock.nanoTime();
        if (validity.isExpired(nowNs))
        {
            membership.fence(FenceCause.REGISTRATION_EXPIRED);
            return 1;
        }
        if (nowNs - nextKeepaliveNs < 0)
        {
            return 0;
        }

        final long sentNs = nowNs;
        try
        {
            final LeaseKeepAliveResponse response = etcd.keepAliveOnce(membership.leaseId());
            final long ackNs = clock.nanoTime();
            if (response.getTTL() <= 0)
            {
                membership.fence(FenceCause.LEASE_LOST);
            }
            else if (validity.onAcknowledged(sentNs, response.getTTL(), ackNs))
            {
                acked.increment();
                nextKeepaliveNs = sentNs + intervalNs(response.getTTL());
            }
            else
            {
                membership.fence(FenceCause.REGISTRATION_EXPIRED);
            }
        }
        catch (final EtcdGateway.EtcdCallException ex)
        {
            failures.increment();
            if (ex.isLeaseNotFound())
            {
                membership.fence(FenceCause.LEASE_LOST);
            }
            nextKeepaliveNs = clock.nanoTime() + MembershipConfiguration.KEEPALIVE_RETRY_NS;
        }
        return 1;
    }

    public String roleName()
    {
        return "orbitkv-lease-keeper";
    }
}
