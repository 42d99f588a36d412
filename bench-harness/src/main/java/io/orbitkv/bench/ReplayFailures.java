package io.orbitkv.bench;

import io.orbitkv.manager.membership.MembershipCounter;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
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
 * requests served and recomputed while etcd was away.
 */
final class ReplayFailures implements AutoCloseable
{
    /** How long the Managers may take, once etcd is back, to be registered with a complete view of all members again. */
    static final long REJOIN_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(60);
    /** Membership registration state meaning registered (the counter's label lists the states). */
    static final long REGISTERED = 2;

    private static final long POLL_NS = TimeUnit.MILLISECONDS.toNanos(20);

    private final List<ReplayBench.Failure> failures;
    private final List<BenchManager> managers;
    private final List<ReplayEngineProcess> engines;
    private final BenchEtcd etcd;
    private final PrintWriter out;
    private final boolean[] fired;
    private final List<Map<String, Object>> events = new ArrayList<>();
    private final List<Thread> threads = new ArrayList<>();
    private final long startNs = System.nanoTime();

    ReplayFailures(
        final List<ReplayBench.Failure> failures,
        final List<BenchManager> managers,
        final List<ReplayEngineProcess> engines,
        final BenchEtcd etcd,
        final PrintWriter out)
    {
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
