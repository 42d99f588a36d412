package io.orbitkv.bench;

import io.orbitkv.codecs.ShardPlacement;
import io.orbitkv.manager.SystemCounterFamilies;
import io.orbitkv.manager.membership.MemberView;
import io.orbitkv.manager.membership.Membership;
import io.orbitkv.manager.membership.MembershipCounter;
import io.orbitkv.manager.membership.MembershipSettings;
import io.orbitkv.manager.status.CounterDescriptor;
import io.orbitkv.manager.status.SystemCounters;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;
import org.agrona.concurrent.SystemNanoClock;

/**
 * Join time, view convergence and steady-state etcd call rate of in-process memberships against one etcd. Each
 * member has its own jetcd client, keepalive and view keeper, as separate Managers would.
 */
final class MembershipBench
{
    private static final PrintStream QUIET = new PrintStream(OutputStream.nullOutputStream());
    private static final long POLL_NS = TimeUnit.MICROSECONDS.toNanos(200);
    private final String endpoints;
    private final io.orbitkv.manager.membership.EtcdSecurity security;
    private final PrintWriter out;

    public MembershipBench(final String endpoints, final PrintWriter out)
    {
        this(endpoints, io.orbitkv.manager.membership.EtcdSecurity.NONE, out);
    }

    /**
     * A bench against an etcd with TLS and/or auth.
     *
     * @param endpoints etcd client URLs.
     * @param security  TLS and auth of the etcd connection.
     * @param out       where the report goes.
     */
    public MembershipBench(
        final String endpoints, final io.orbitkv.manager.membership.EtcdSecurity security, final PrintWriter out)
    {
        this.security = security;
        this.endpoints = endpoints;
        this.out = out;
    }

    private record Member(Membership membership, SystemCounters counters)
    {
    }

    private Member join(final String cluster, final String nodeId, final String catalog)
    {
        final SystemCounters counters = SystemCounterFamilies.inMemory();
        final MembershipSettings settings = new MembershipSettings(endpoints, cluster, nodeId,
            io.orbitkv.manager.Configuration.MEMBERSHIP_TTL_SECS_DEFAULT, io.orbitkv.manager.Configuration.ETCD_DEADLINE_MS_DEFAULT,
            ShardPlacement.parse(catalog, io.orbitkv.manager.Configuration.CATALOG_REPLICAS_DEFAULT), "peer-" + nodeId,
            "transfer-" + nodeId, UUID.randomUUID(), System.currentTimeMillis(),
            io.orbitkv.manager.Configuration.JOIN_TIMEOUT_MS_DEFAULT,
            io.orbitkv.manager.membership.MembershipConfiguration.MAX_SHARD_MOVES_DEFAULT, security);
        return new Member(Membership.join(settings, counters, Throwable::printStackTrace, QUIET,
            SystemNanoClock.INSTANCE), counters);
    }

    private static long awaitNs(final long startNs, final Predicate<MemberView> condition, final Membership m)
    {
        final long deadlineNs = startNs + TimeUnit.SECONDS.toNanos(30);
        while (!condition.test(m.view()))
        {
            if (System.nanoTime() - deadlineNs > 0)
            {
                throw new IllegalStateException("no convergence in 30 s: " + m.view());
            }
            LockSupport.parkNanos(POLL_NS);
        }
        return System.nanoTime() - startNs;
    }

    private static String ms(final long ns)
    {
        return String.format("%.1f", ns / 1e6);
    }

    /** The figures of one printed line, for --json: min / median / max in ms and the sample count. */
    private static Map<String, Object> figures(final long[] ns)
    {
        final long[] sorted = ns.clone();
        Arrays.sort(sorted);
        final Map<String, Object> figures = new LinkedHashMap<>();
        figures.put("minMs", sorted[0] / 1e6);
        figures.put("medianMs", sorted[sorted.length / 2] / 1e6);
        figures.put("maxMs", sorted[sorted.length - 1] / 1e6);
        figures.put("n", sorted.length);
        return figures;
    }

    private static String stats(final long[] ns)
    {
        final long[] sorted = ns.clone();
        Arrays.sort(sorted);
        return "min " + ms(sorted[0]) + " ms, median " + ms(sorted[sorted.length / 2]) + " ms, max " +
            ms(sorted[sorted.length - 1]) + " ms (n=" + sorted.length + ")";
    }

    /**
     * Run every measurement.
     *
     * @param managers    members joining together.
     * @param rounds      repetitions of the single join and of join/leave convergence.
     * @param steadySecs  steady-state window for the call rate.
     * @return every printed figure by name, for a JSON record.
     */
    public Map<String, Object> run(final int managers, final int rounds, final int steadySecs)
        throws InterruptedException
    {
        final Map<String, Object> results = new LinkedHashMap<>();
        results.put("managers", managers);
        results.put("rounds", rounds);
        final String catalog = "m0";
        // 1. one Manager: start -> registered -> complete view containing itself
        final long[] registered = new long[rounds];
        final long[] complete = new long[rounds];
        for (int r = 0; r <= rounds; r++)
        {
            final String cluster = "bench1-" + UUID.randomUUID().toString().substring(0, 8);
            final long startNs = System.nanoTime();
            final Member m = join(cluster, "m0", catalog);
            final long regNs = System.nanoTime() - startNs;
            final long completeNs = awaitNs(startNs, (v) -> v.isComplete() && null != v.member("m0"), m.membership());
            m.membership().close();
            if (0 == r)
            {
                out.println("single join, cold JVM (first jetcd client): registered " + ms(regNs) +
                    " ms, complete view " + ms(completeNs) + " ms");
                results.put("coldJoinRegisteredMs", regNs / 1e6);
                results.put("coldJoinCompleteViewMs", completeNs / 1e6);
                continue;
            }
            registered[r - 1] = regNs;
            complete[r - 1] = completeNs;
        }
        out.println("single join, warm: registered " + stats(registered));
        out.println("single join, warm: complete view " + stats(complete));
        results.put("warmJoinRegistered", figures(registered));
        results.put("warmJoinCompleteView", figures(complete));

        // 2. N Managers joining at once on one etcd
        final String cluster = "benchN-" + UUID.randomUUID().toString().substring(0, 8);
        final Member[] members = new Member[managers];
        final long[] regNs = new long[managers];
        final CountDownLatch go = new CountDownLatch(1);
        final List<Thread> threads = new ArrayList<>();
        final long[] startNs = new long[1];
        for (int i = 0; i < managers; i++)
        {
            final int index = i;
            final Thread t = new Thread(() ->
            {
                try
                {
                    go.await();
                }
                catch (final InterruptedException ex)
                {
                    return;
                }
                members[index] = join(cluster, "m" + index, catalog);
                regNs[index] = System.nanoTime() - startNs[0];
            });
            t.start();
            threads.add(t);
        }
        startNs[0] = System.nanoTime();
        go.countDown();
        for (final Thread t : threads)
        {
            t.join();
        }
        final long[] allSeen = new long[managers];
        for (int i = 0; i < managers; i++)
        {
            allSeen[i] = awaitNs(startNs[0], (v) -> v.isComplete() && v.members().size() == managers,
                members[i].membership());
        }
        out.println(managers + " joining at once: registered " + stats(regNs));
        out.println(managers + " joining at once: complete view with all " + managers + " members " + stats(allSeen));
        results.put("concurrentJoinRegistered", figures(regNs));
        results.put("concurrentJoinCompleteView", figures(allSeen));

        // 3. convergence after one more joins, then leaves gracefully (lease revoke)
        final long[] joinConv = new long[rounds];
        final long[] leaveConv = new long[rounds];
        for (int r = 0; r < rounds; r++)
        {
            final String id = "extra" + r;
            final long joinStartNs = System.nanoTime();
            final Member extra = join(cluster, id, catalog);
            long worst = 0;
            for (final Member m : members)
            {
                worst = Math.max(worst, awaitNs(joinStartNs, (v) -> null != v.member(id), m.membership()));
            }
            joinConv[r] = worst;
            final long leaveStartNs = System.nanoTime();
            extra.membership().close();
            worst = 0;
            for (final Member m : members)
            {
                worst = Math.max(worst, awaitNs(leaveStartNs, (v) -> null == v.member(id), m.membership()));
            }
            leaveConv[r] = worst;
        }
        out.println("join -> all " + managers + " views contain it: " + stats(joinConv));
        out.println("graceful leave -> all " + managers + " views dropped it: " + stats(leaveConv));
        results.put("joinConvergence", figures(joinConv));
        results.put("leaveConvergence", figures(leaveConv));

        // 4. steady state: etcd calls per minute per Manager, by kind
        final CounterDescriptor[] kinds = {
            MembershipCounter.ETCD_CALLS_GET, MembershipCounter.ETCD_CALLS_TXN,
            MembershipCounter.ETCD_CALLS_LEASE_GRANT, MembershipCounter.ETCD_CALLS_LEASE_KEEPALIVE,
            MembershipCounter.ETCD_CALLS_LEASE_REVOKE, MembershipCounter.ETCD_CALLS_WATCH};
        final long[] before = new long[kinds.length];
        for (int k = 0; k < kinds.length; k++)
        {
            for (final Member m : members)
            {
                before[k] += m.counters().get(kinds[k]).get();
            }
        }
        final long windowStartNs = System.nanoTime();
        LockSupport.parkNanos(TimeUnit.SECONDS.toNanos(steadySecs));
        final double minutes = (System.nanoTime() - windowStartNs) / 60e9;
        final StringBuilder line = new StringBuilder("steady state over " + steadySecs + " s, etcd calls per minute per Manager:");
        final Map<String, Object> perMinute = new LinkedHashMap<>();
        for (int k = 0; k < kinds.length; k++)
        {
            long after = 0;
            for (final Member m : members)
            {
                after += m.counters().get(kinds[k]).get();
            }
            final String kind = kinds[k].label().replace("etcd calls: ", "");
            final double rate = (after - before[k]) / minutes / managers;
            line.append(String.format(" %s=%.1f", kind, rate));
            perMinute.put(kind, rate);
        }
        out.println(line);
        results.put("steadyEtcdCallsPerMinutePerManager", perMinute);
        for (final Member m : members)
        {
            m.membership().close();
        }
        out.flush();
        return results;
    }
}
