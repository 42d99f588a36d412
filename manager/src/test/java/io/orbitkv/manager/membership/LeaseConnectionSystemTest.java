package io.orbitkv.manager.membership;

import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static io.orbitkv.manager.membership.MembershipTestSupport.Joined;
import static io.orbitkv.manager.membership.MembershipTestSupport.await;
import static io.orbitkv.manager.membership.MembershipTestSupport.awaitCompleteWith;
import static io.orbitkv.manager.membership.MembershipTestSupport.join;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Keepalives when the connections to etcd get stuck, through a proxy that stalls them as a partition leaves them (TCP
 * holds what was sent during the cut until its retransmission backoff fires, seconds after the heal; a new connection
 * goes through at once). The Manager renews its lease connections once a keepalive is overdue and keeps its
 * registration; on the old connections alone it expired. Real etcd, TTL 10 s (validity 5 s from an acknowledged send).
 */
class LeaseConnectionSystemTest
{
    private static final long SEC_NS = TimeUnit.SECONDS.toNanos(1);

    private static String cluster(final String name)
    {
        return "lease-" + name + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    private static long awaitAck(final Joined a)
    {
        final long acked = a.counter(MembershipCounter.KEEPALIVES_ACKED);
        await(() -> a.counter(MembershipCounter.KEEPALIVES_ACKED) > acked, 10_000, a::log);
        return System.nanoTime();
    }

    private static void assertRegisteredUntil(final Joined a, final long untilNs)
    {
        while (System.nanoTime() - untilNs < 0)
        {
            assertEquals(FenceCause.NONE, a.membership.fenceCause(), a::log);
            assertEquals(1, a.membership.incarnation().number(), a::log);
            java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
        }
    }

    @Test
    @Timeout(90)
    void shouldKeepItsRegistrationWhenEveryConnectionItHasStallsForGood() throws Exception
    {
        try (EtcdCluster etcd = EtcdCluster.start(1);
            StallingTcpProxy proxy = new StallingTcpProxy(etcd.endpoints());
            Joined a = join(proxy.endpoint(), cluster("stall"), "a", "a"))
        {
            awaitCompleteWith(a, "a");
            awaitAck(a);
            proxy.stallExisting();
            final long stalledNs = System.nanoTime();
            final long acked = a.counter(MembershipCounter.KEEPALIVES_ACKED);

            // Two validity windows and more on connections made after the stall.
            assertRegisteredUntil(a, stalledNs + 12 * SEC_NS);
            final String state = a.log() + "\nrenewals " + a.counter(MembershipCounter.LEASE_CONNECTIONS_RENEWED) +
                ", acked " + a.counter(MembershipCounter.KEEPALIVES_ACKED) + ", connections " + proxy.accepted();
            assertTrue(a.counter(MembershipCounter.KEEPALIVES_ACKED) >= acked + 3, state);
            assertTrue(a.counter(MembershipCounter.LEASE_CONNECTIONS_RENEWED) >= 1, state);
            assertTrue(a.membership.remoteWorkIncarnation(System.nanoTime()) != null || !a.membership.view().isComplete(),
                state);
        }
    }

    @Test
    @Timeout(90)
    void shouldKeepItsRegistrationThroughACutEndingBeforeItsValidityWhileTheOldConnectionsStayStuck() throws Exception
    {
        try (EtcdCluster etcd = EtcdCluster.start(1);
            StallingTcpProxy proxy = new StallingTcpProxy(etcd.endpoints());
            Joined a = join(proxy.endpoint(), cluster("cut"), "a", "a"))
        {
            awaitCompleteWith(a, "a");
            final long ackNs = awaitAck(a);
            // Cut just before the next keepalive (one interval, TTL/6, after that acknowledged send): validity then
            // ends about 3.4 s after the cut starts, the least it ever has at a cut. Heal 2.2 s in: the keepalives
            // sent during the cut stay stuck on their connections (as in TCP backoff), so only a new connection
            // can answer before validity ends.
            await(() -> System.nanoTime() - ackNs >= TimeUnit.MILLISECONDS.toNanos(1_550), 5_000, () -> "wait");
            proxy.cut();
            final long cutNs = System.nanoTime();
            final long validUntilNs = a.membership.incarnation().validUntilNs();
            await(() -> System.nanoTime() - cutNs >= TimeUnit.MILLISECONDS.toNanos(2_200), 5_000, () -> "cut");
            proxy.heal();
            final long healNs = System.nanoTime();
            final String cutState = "validity ended " + (validUntilNs - cutNs) / 1_000_000 + " ms after the cut, heal " +
                (healNs - cutNs) / 1_000_000 + " ms after it";

            assertRegisteredUntil(a, healNs + 10 * SEC_NS);
            final String state = a.log() + "\n" + cutState + "; renewals " +
                a.counter(MembershipCounter.LEASE_CONNECTIONS_RENEWED) + ", keepalive failures " +
                a.counter(MembershipCounter.KEEPALIVE_FAILURES);
            assertTrue(a.membership.incarnation().validUntilNs() - healNs > 5 * SEC_NS, state);
            assertTrue(a.counter(MembershipCounter.LEASE_CONNECTIONS_RENEWED) >= 1, state);
        }
    }
}
