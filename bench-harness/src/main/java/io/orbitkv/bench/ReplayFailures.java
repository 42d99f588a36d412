package io.orbitkv.bench;

import java.io.IOException;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Fires the failures of a replay when their share of the requests has been dispatched, each on its own thread so the
 * replay goes on: {@code kill} SIGKILLs a Manager and starts it again {@link ReplayBench#KILL_DOWN_NS} later,
 * {@code restart-catalog} stops a Manager with SIGTERM and starts it again at once, {@code etcd-stop} suspends the
 * bench's etcd (SIGSTOP) for the given time and resumes it (SIGCONT). Each records when it fired and ended, in
 * seconds since the replay began and in requests completed.
 */
final class ReplayFailures implements AutoCloseable
{
    private final List<ReplayBench.Failure> failures;
    private final List<BenchManager> managers;
    private final List<ReplayEngine> engines;
    private final PrintWriter out;
    private final boolean[] fired;
    private final List<Map<String, Object>> events = new ArrayList<>();
    private final List<Thread> threads = new ArrayList<>();
    private final long startNs = System.nanoTime();

    ReplayFailures(
        final List<ReplayBench.Failure> failures,
        final List<BenchManager> managers,
        final List<ReplayEngine> engines,
        final PrintWriter out)
    {
        this.failures = failures;
        this.managers = managers;
        this.engines = engines;
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
                case "restart-catalog" ->
                {
                    engines.get(f.target()).managerUp(false);
                    managers.get(f.target()).stop();
                    restart(f.target(), event, outcomes);
                }
                case "etcd-stop" ->
                {
                    final long pid = etcdPid().orElseThrow(() ->
                        new IllegalStateException("etcd-stop needs the bench's own etcd (no --etcd-endpoints)"));
                    signal("STOP", pid);
                    TimeUnit.NANOSECONDS.sleep(f.pauseNs());
                    signal("CONT", pid);
                    mark(event, "ended", outcomes);
                }
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

    private static Optional<Long> etcdPid()
    {
        return ProcessHandle.current().children()
            .filter((p) -> p.info().command().map((c) -> c.endsWith("/etcd") || c.equals("etcd")).orElse(false))
            .map(ProcessHandle::pid)
            .findFirst();
    }

    private static void signal(final String signal, final long pid) throws IOException, InterruptedException
    {
        final Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).inheritIO().start();
        if (0 != kill.waitFor())
        {
            throw new IOException("kill -" + signal + " " + pid + " failed");
        }
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
