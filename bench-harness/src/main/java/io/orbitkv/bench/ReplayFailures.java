package io.orbitkv.bench;

import io.orbitkv.codecs.ShardPlacement;
import io.orbitkv.manager.SystemCounterFamilies;
import io.orbitkv.manager.catalog.CatalogCounter;
import io.orbitkv.manager.membership.EtcdGateway;
import io.orbitkv.manager.membership.MembershipCounter;
import io.orbitkv.manager.membership.MovePhase;
import io.orbitkv.manager.membership.PlacementAdmin;
import io.orbitkv.manager.membership.ShardMove;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;


/**
 * Fires the failures of a replay when their share of the requests has been dispatched, each on its own thread so the
 * replay goes on: {@code kill} SIGKILLs a Manager and starts it again {@link ReplayBench#KILL_DOWN_NS} later,
 * {@code kill-stay} SIGKILLs it for the rest of the replay (its engine's requests are recomputed),
 * {@code restart-catalog} stops a Manager with SIGTERM and starts it again at once, {@code etcd-stop} stops the
 * bench's etcd (SIGTERM, waiting for it to exit) and starts it again the given time later on the same data directory
 * and ports. Each records when it fired and ended, in seconds since the replay began and in requests completed; an
 * etcd stop also records what the Managers' membership said when etcd went, just before it came back and once every
 * Manager was registered with a complete view again (or that one was not within {@link #REJOIN_TIMEOUT_NS}), and the
 * requests served and recomputed while etcd was away. {@code place} writes a desired placement with these catalog
 * nodes ({@code orbitkv placement set}) and follows the placement status until it is stable again, recording the
 * moves, how long each took (first seen started to first seen retired, polled every
 * {@link #PLACEMENT_POLL_MS} ms), the most in flight at once, and what the Managers sent and answered meanwhile:
 * metadata bytes, snapshot cuts completed, cold-query rows answered from an incomplete copy.
 */
final class ReplayFailures implements AutoCloseable
{
    /** How long the Managers may take, once etcd is back, to be registered with a complete view of all members again. */
    static final long REJOIN_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(60);
    /** Membership registration state meaning registered (the counter's label lists the states). */
    static final long REGISTERED = 2;

    private static final long POLL_NS = TimeUnit.MILLISECONDS.toNanos(20);

    /** How often a placement change's status is read from etcd. */
    static final long PLACEMENT_POLL_MS = 50;

    /** How long a placement change may take to be stable again. */
    static final long PLACEMENT_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(300);

    private static final long ETCD_DEADLINE_MS = 5_000;

    private final List<ReplayBench.Failure> failures;
    private final List<BenchManager> managers;
    private final List<ReplayEngineProcess> engines;
    private final BenchEtcd etcd;
    private final PrintWriter out;
    private final String endpoints;
    private final String clusterName;
    private final int replicas;
    private final boolean[] fired;
    private final List<Map<String, Object>> events = new ArrayList<>();
    private final List<Thread> threads = new ArrayList<>();
    private final long startNs = System.nanoTime();

    ReplayFailures(
        final List<ReplayBench.Failure> failures,
        final List<BenchManager> managers,
        final List<ReplayEngineProcess> engines,
        final BenchEtcd etcd,
        final PrintWriter out,
        final String endpoints,
        final String clusterName,
        final int replicas)
    {
        this.endpoints = endpoints;
        this.clusterName = clusterName;
        this.replicas = replicas;
        this.failures = failures;
        this.managers = managers;
        this.engines = engines;
        this.etcd = etcd;
        this.out = out;
        this.fired = new boolean[failures.size()];
    }

    void onDispatch(final int index, final int total, final ReplayOutcomes outcomes)
    {
        for (int i = 0; i < fired.length; i++)
        {
            final ReplayBench.Failure f = failures.get(i);
            if (!fired[i] && index >= f.atFraction() * total)
            {
                fired[i] = true;
                final Map<String, Object> event = new LinkedHashMap<>();
                event.put("spec", f.spec());
                event.put("firedAtRequest", index);
                synchronized (events)
                {
                    events.add(event);
                }
                final Thread thread = new Thread(() -> fire(f, event, outcomes), "replay-failure-" + i);
                thread.setDaemon(true);
                threads.add(thread);
                thread.start();
            }
        }
    }

    private void fire(final ReplayBench.Failure f, final Map<String, Object> event, final ReplayOutcomes outcomes)
    {
        try
        {
            mark(event, "fired", outcomes);
            switch (f.kind())
            {
                case "kill" ->
                {
                    engines.get(f.target()).managerUp(false);
                    managers.get(f.target()).kill();
                    TimeUnit.NANOSECONDS.sleep(ReplayBench.KILL_DOWN_NS);
                    restart(f.target(), event, outcomes);
                }
                case "kill-stay" ->
                {
                    engines.get(f.target()).managerUp(false);
                    managers.get(f.target()).kill();
                    mark(event, "ended", outcomes);
                }
                case "restart-catalog" ->
                {
                    engines.get(f.target()).managerUp(false);
                    managers.get(f.target()).stop();
                    restart(f.target(), event, outcomes);
                }
                case "etcd-stop" -> etcdStop(f, event, outcomes);
                case "place" -> placementChange(f, event, outcomes);
                default -> throw new IllegalStateException("unknown failure " + f.kind());
            }
            out.printf(Locale.ROOT, "  failure %s: %s%n", f.spec(), event);
            out.flush();
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        catch (final IOException | RuntimeException ex)
        {
            event.put("error", ex.toString());
        }
    }

    private void restart(final int target, final Map<String, Object> event, final ReplayOutcomes outcomes)
        throws IOException
    {
        managers.get(target).restart();
        managers.get(target).awaitReady();
        engines.get(target).managerUp(true);
        mark(event, "ended", outcomes);
    }

    private void mark(final Map<String, Object> event, final String what, final ReplayOutcomes outcomes)
    {
        event.put(what + "AtSeconds", (System.nanoTime() - startNs) / 1e9);
        event.put(what + "AtCompleted", outcomes.done.get());
    }

    private void etcdStop(final ReplayBench.Failure f, final Map<String, Object> event, final ReplayOutcomes outcomes)
        throws IOException, InterruptedException
    {
        if (null == etcd)
        {
            throw new IllegalStateException("etcd-stop needs the bench's own etcd (no --etcd-endpoints)");
        }
        final long stoppedPid = etcd.pid();
        final int exit = etcd.stop();
        final int completedAtStop = outcomes.done.get();
        final int recomputedAtStop = outcomes.recomputed.get();
        event.put("etcdPidStopped", stoppedPid);
        event.put("etcdExitCode", exit);
        mark(event, "etcdExited", outcomes);
        event.put("membershipAtStop", membership());
        TimeUnit.NANOSECONDS.sleep(f.pauseNs());
        event.put("membershipBeforeRestart", membership());
        final int completedAway = outcomes.done.get() - completedAtStop;
        final int recomputedAway = outcomes.recomputed.get() - recomputedAtStop;
        event.put("requestsCompletedWhileAway", completedAway);
        event.put("requestsRecomputedWhileAway", recomputedAway);
        etcd.restart();
        event.put("etcdPidRestarted", etcd.pid());
        mark(event, "ended", outcomes);
        final long deadlineNs = System.nanoTime() + REJOIN_TIMEOUT_NS;
        while (!allRejoined())
        {
            if (System.nanoTime() - deadlineNs > 0)
            {
                event.put("rejoined", "not within " + TimeUnit.NANOSECONDS.toSeconds(REJOIN_TIMEOUT_NS) +
                    " s of etcd's restart");
                event.put("membershipAtRejoinDeadline", membership());
                return;
            }
            TimeUnit.NANOSECONDS.sleep(POLL_NS);
        }
        mark(event, "rejoined", outcomes);
        event.put("membershipRejoined", membership());
    }

    private void placementChange(
        final ReplayBench.Failure f, final Map<String, Object> event, final ReplayOutcomes outcomes)
        throws InterruptedException
    {
        final Map<String, Long> before = placementCounters();
        try (EtcdGateway gateway = new EtcdGateway(endpoints,
            io.orbitkv.manager.cli.EtcdAuthOptions.securityFromProperties(), ETCD_DEADLINE_MS, SystemCounterFamilies.inMemory(), false))
        {
            final PlacementAdmin.SetResult set =
                PlacementAdmin.setDesired(gateway, clusterName, ShardPlacement.parse(f.argument(), replicas));
            event.put("generation", set.generation());
            event.put("written", set.written());
            final Map<Integer, Long> startedNs = new TreeMap<>();
            final Map<Integer, Long> retiredNs = new TreeMap<>();
            int moves = 0;
            int maxInFlight = 0;
            final long deadlineNs = System.nanoTime() + PLACEMENT_TIMEOUT_NS;
            while (true)
            {
                final PlacementAdmin.Status status = PlacementAdmin.status(gateway, clusterName);
                final long nowNs = System.nanoTime();
                if (null != status.transition())
                {
                    moves = Math.max(moves, status.transition().moveList().size());
                    maxInFlight = Math.max(maxInFlight, status.transition().inFlight());
                    for (final ShardMove move : status.transition().moveList())
                    {
                        if (MovePhase.PENDING != move.phase())
                        {
                            startedNs.putIfAbsent(move.shard(), nowNs);
                        }
                        if (MovePhase.RETIRED == move.phase())
                        {
                            retiredNs.putIfAbsent(move.shard(), nowNs);
                        }
                    }
                }
                if (status.isStable() && status.generation() >= set.generation())
                {
                    break;
                }
                if (nowNs - deadlineNs > 0)
                {
                    event.put("stable", "not within " + TimeUnit.NANOSECONDS.toSeconds(PLACEMENT_TIMEOUT_NS) + " s");
                    break;
                }
                TimeUnit.MILLISECONDS.sleep(PLACEMENT_POLL_MS);
            }
            final long endNs = System.nanoTime();
            mark(event, "ended", outcomes);
            final List<Double> moveSeconds = new ArrayList<>();
            startedNs.forEach((shard, start) -> moveSeconds.add((retiredNs.getOrDefault(shard, endNs) - start) / 1e9));
            event.put("moves", moves);
            event.put("maxMovesInFlight", maxInFlight);
            event.put("moveSeconds", moveSeconds);
            event.put("secondsPerMove", moveSeconds.stream().mapToDouble(Double::doubleValue).average().orElse(0));
            final Map<String, Long> after = placementCounters();
            after.forEach((label, value) -> event.put(label, value - before.getOrDefault(label, 0L)));
        }
    }

    /**
     * Sums over the Managers still running of what a placement change costs and risks.
     */
    private Map<String, Long> placementCounters()
    {
        final Map<String, Long> sums = new LinkedHashMap<>();
        for (final BenchManager m : managers)
        {
            final Map<String, Long> all = m.counters();
            sums.merge("metadataBytesSent", all.getOrDefault("peer: metadata bytes sent", 0L), Long::sum);
            sums.merge("snapshotsCompleted", m.counter(CatalogCounter.SNAPSHOTS_COMPLETED), Long::sum);
            sums.merge("coldRowsIncomplete", m.counter(CatalogCounter.COLD_ROWS_INCOMPLETE), Long::sum);
            sums.merge("coverageReports", m.counter(CatalogCounter.COVERAGE_REPORTS), Long::sum);
        }
        return sums;
    }

    private boolean allRejoined()
    {
        for (final BenchManager m : managers)
        {
            if (REGISTERED != m.counter(MembershipCounter.REGISTRATION_STATE) ||
                1 != m.counter(MembershipCounter.VIEW_COMPLETE) ||
                managers.size() != m.counter(MembershipCounter.MEMBERS) ||
                1 != m.counter(MembershipCounter.REMOTE_WORK_ENABLED))
            {
                return false;
            }
        }
        return true;
    }

    /**
     * Each Manager's membership as its counters show it: registration state, members in view, view complete, remote
     * work enabled, incarnation, re-registrations, keepalive failures.
     */
    private Map<String, Object> membership()
    {
        final Map<String, Object> all = new LinkedHashMap<>();
        for (final BenchManager m : managers)
        {
            final Map<String, Long> state = new LinkedHashMap<>();
            state.put("registrationState", m.counter(MembershipCounter.REGISTRATION_STATE));
            state.put("members", m.counter(MembershipCounter.MEMBERS));
            state.put("viewComplete", m.counter(MembershipCounter.VIEW_COMPLETE));
            state.put("remoteWork", m.counter(MembershipCounter.REMOTE_WORK_ENABLED));
            state.put("incarnation", m.counter(MembershipCounter.INCARNATION));
            state.put("reregistrations", m.counter(MembershipCounter.REREGISTRATIONS));
            state.put("keepaliveFailures", m.counter(MembershipCounter.KEEPALIVE_FAILURES));
            all.put(m.nodeId(), state);
        }
        return all;
    }

    List<Map<String, Object>> events()
    {
        synchronized (events)
        {
            return new ArrayList<>(events);
        }
    }

    public void close() throws InterruptedException
    {
        for (final Thread t : threads)
        {
            t.join(TimeUnit.SECONDS.toMillis(120));
        }
    }
}
