package io.orbitkv.manager.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.orbitkv.client.EngineClient;
import io.orbitkv.client.KeyBatch;
import io.orbitkv.client.OperationResult;
import io.orbitkv.codecs.cnc.CncFileDescriptor;
import io.orbitkv.manager.catalog.CatalogCounter;
import io.orbitkv.manager.status.SystemCounterDescriptor;
import io.orbitkv.manager.membership.EtcdCluster;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.agrona.CloseHelper;
import org.agrona.IoUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.extension.TestWatcher;

/**
 * An idle Manager process sleeps: over 10 s after warm-up it uses a few percent of a core at most (standalone and in
 * a two-Manager cluster with a real etcd), read from {@code /proc/PID/stat} as an operator would; and a request from
 * another process while it sleeps is answered at once, because the engine rang the doorbell. The longest sleep is
 * set to 10 s there, so a request that had to wait for the timer fails the 1 s bound.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class IdleManagerEndToEndTest
{
    /** Standalone bound: before the agent slept, an idle Manager used 9-51% of a core on the 2-vCPU VM. */
    private static final double STANDALONE_IDLE_CPU_PERCENT = 5.0;

    /** Clustered bound (membership's etcd threads included): before, 12-72%. */
    private static final double CLUSTERED_IDLE_CPU_PERCENT = 8.0;

    private static final long MEASURE_NS = TimeUnit.SECONDS.toNanos(10);
    private static final int CLUSTERED_WINDOWS = 3;
    private static final long DEADLINE_NS = TimeUnit.SECONDS.toNanos(40);
    private static final long ANSWER_BOUND_NS = TimeUnit.SECONDS.toNanos(1);
    private static final long CLIENT_TIMEOUT_MS = 60_000;
    private static final String SLEEPS = SystemCounterDescriptor.IDLE_SLEEPS.label();

    private final List<OrbitKvProcesses> managers = new ArrayList<>();
    private final List<AutoCloseable> closeables = new ArrayList<>();
    private EtcdCluster etcd;

    @RegisterExtension
    final TestWatcher dumpOnFailure = new TestWatcher()
    {
        public void testFailed(final ExtensionContext context, final Throwable cause)
        {
            for (final OrbitKvProcesses m : managers)
            {
                System.err.println("---- " + context.getDisplayName() + "\n" + m.dump() + "\n" + m.counters("Idle"));
            }
        }
    };

    @AfterEach
    void after()
    {
        CloseHelper.quietCloseAll(closeables);
        CloseHelper.quietCloseAll(managers);
        CloseHelper.quietClose(etcd);
    }

    @Test
    void shouldUseAlmostNoCpuWhenIdleStandalone() throws Exception
    {
        final OrbitKvProcesses m = manager();
        m.startManager("--pool-bytes", "16m");
        warmUp(m);
        final double percent = cpuPercentOverWindow(m.managerProcess().pid());
        assertTrue(percent < STANDALONE_IDLE_CPU_PERCENT, "idle standalone Manager used " + percent + "% of a core");
    }

    @Test
    void shouldUseAlmostNoCpuWhenIdleInATwoManagerCluster() throws Exception
    {
        etcd = EtcdCluster.start(1);
        final String cluster = "idle-" + UUID.randomUUID().toString().substring(0, 8);
        for (final String node : new String[]{"a", "b"})
        {
            final OrbitKvProcesses m = manager();
            m.startManager(
                "--pool-bytes", "16m",
                "--etcd-endpoints", etcd.endpoints(),
                "--cluster-name", cluster,
                "--node-id", node,
                "--catalog-nodes", "a,b",
                "--membership-ttl-secs", "30");
        }
        for (final OrbitKvProcesses m : managers)
        {
            final long incomplete = m.awaitCounter(CatalogCounter.INCOMPLETE_SHARDS.label(), 0, DEADLINE_NS);
            assertEquals(0, incomplete, "catalog shards complete");
        }
        for (final OrbitKvProcesses m : managers)
        {
            warmUp(m);
        }
        // The JIT goes on compiling the membership's gRPC path for a while after start (benches/RESULTS.md, idle CPU
        // of clustered Managers): each Manager's quietest of up to three windows counts. A Manager that spins exceeds
        // the bound in every window.
        final double[] quietest = new double[managers.size()];
        java.util.Arrays.fill(quietest, Double.MAX_VALUE);
        for (int window = 0; window < CLUSTERED_WINDOWS && !allBelow(quietest, CLUSTERED_IDLE_CPU_PERCENT); window++)
        {
            final long[] startTicks = new long[managers.size()];
            for (int i = 0; i < startTicks.length; i++)
            {
                startTicks[i] = cpuTicks(managers.get(i).managerProcess().pid());
            }
            final long startNs = System.nanoTime();
            LockSupport.parkNanos(MEASURE_NS);
            final long elapsedNs = System.nanoTime() - startNs;
            for (int i = 0; i < startTicks.length; i++)
            {
                quietest[i] = Math.min(quietest[i],
                    percent(cpuTicks(managers.get(i).managerProcess().pid()) - startTicks[i], elapsedNs));
            }
        }
        for (int i = 0; i < quietest.length; i++)
        {
            assertTrue(quietest[i] < CLUSTERED_IDLE_CPU_PERCENT, "idle clustered Manager " + i + " used " +
                quietest[i] + "% of a core in its quietest of " + CLUSTERED_WINDOWS + " windows");
        }
        for (final OrbitKvProcesses m : managers)
        {
            assertTrue(m.counter(SystemCounterDescriptor.IDLE_PEER_WAKEUPS.label()) > 0,
                "peer datagrams (the other Manager's heartbeats) ended sleeps");
        }
    }

    @Test
    void shouldAnswerAnEngineProcessThatWritesWhileTheManagerSleeps() throws Exception
    {
        final OrbitKvProcesses m = manager();
        m.startManager("--pool-bytes", "16m", "--idle-sleep-max", "10s", "--client-timeout", "60s");
        final OrbitKvProcesses.ClientRun publish = m.runClient(CLIENT_TIMEOUT_MS, "publish", "--blocks", "8");
        assertEquals(0, publish.exitCode(), publish.stdout());

        // Another engine process: its attach and its lookup each find the Manager asleep for up to 10 s.
        awaitAsleep(m);
        final long doorbellWakeups = m.counter(SystemCounterDescriptor.IDLE_DOORBELL_WAKEUPS.label());
        final long startNs = System.nanoTime();
        final OrbitKvProcesses.ClientRun lookup = m.runClient(CLIENT_TIMEOUT_MS, "lookup", "--blocks", "8");
        final long tookNs = System.nanoTime() - startNs;
        assertEquals(0, lookup.exitCode(), lookup.stdout());
        assertEquals(8, lookup.json().get("prefixLength").asInt(), lookup.stdout());
        assertTrue(lookup.json().get("lookupMs").asDouble() < ANSWER_BOUND_NS / 1e6, lookup.stdout());
        assertTrue(tookNs < TimeUnit.SECONDS.toNanos(9), "the engine process's attach waited " + tookNs + " ns");
        assertTrue(m.counter(SystemCounterDescriptor.IDLE_DOORBELL_WAKEUPS.label()) > doorbellWakeups,
            "the engine process rang the doorbell");

        // And an engine in this process, measured request by request.
        final EngineClient client = EngineClient.connect(new EngineClient.Context()
            .dir(m.dir.toString())
            .clientName("idle-engine")
            .dataRegionBytes(1 << 20)
            .heartbeatThread(false));
        closeables.add(client);
        final KeyBatch batch = new KeyBatch(1);
        batch.namespace("idle".getBytes(StandardCharsets.US_ASCII));
        batch.addKey(new byte[]{1, 2, 3}, 0, 3);
        final OperationResult result = new OperationResult(1);
        for (int i = 0; i < 3; i++)
        {
            awaitAsleep(m);
            final long ringsBefore = client.doorbellRings();
            final long lookupStartNs = System.nanoTime();
            client.lookup(batch, false, result);
            final long answeredNs = System.nanoTime() - lookupStartNs;
            assertTrue(result.isOk(), result.message());
            assertEquals(ringsBefore + 1, client.doorbellRings(), "the lookup rang the sleeping Manager's doorbell");
            assertTrue(answeredNs < ANSWER_BOUND_NS, "answered after " + answeredNs + " ns");
        }
    }

    private OrbitKvProcesses manager() throws IOException
    {
        final OrbitKvProcesses m = new OrbitKvProcesses();
        managers.add(m);
        return m;
    }

    /**
     * An engine process publishes and reads back (attach, detach and the request paths run, the JIT sees them), then
     * the Manager is left alone until it has slept a few times.
     */
    private static void warmUp(final OrbitKvProcesses m) throws Exception
    {
        final OrbitKvProcesses.ClientRun smoke = m.runClient(CLIENT_TIMEOUT_MS, "smoke");
        assertEquals(0, smoke.exitCode(), smoke.stdout());
        final long sleeps = m.counter(SLEEPS);
        final long deadlineNs = System.nanoTime() + DEADLINE_NS;
        while (m.counter(SLEEPS) < sleeps + 5)
        {
            assertTrue(System.nanoTime() - deadlineNs < 0, "the idle Manager never slept\n" + m.counters("Idle"));
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
        }
    }

    /**
     * Until the Manager announced a sleep and counted it (it is in epoll, or just about to be).
     */
    private static void awaitAsleep(final OrbitKvProcesses m) throws IOException
    {
        final Path cnc = m.dir.resolve(CncFileDescriptor.CNC_FILE_NAME);
        final MappedByteBuffer mapped;
        try (RandomAccessFile file = new RandomAccessFile(cnc.toFile(), "r"))
        {
            mapped = file.getChannel().map(FileChannel.MapMode.READ_ONLY, 0, CncFileDescriptor.HEADER_LENGTH);
        }
        try
        {
            final UnsafeBuffer header = new UnsafeBuffer(mapped);
            final long sleeps = m.counter(SLEEPS);
            final long deadlineNs = System.nanoTime() + DEADLINE_NS;
            while (m.counter(SLEEPS) == sleeps ||
                CncFileDescriptor.AGENT_SLEEPING != header.getIntVolatile(CncFileDescriptor.AGENT_STATE_OFFSET))
            {
                assertTrue(System.nanoTime() - deadlineNs < 0, "the Manager never slept\n" + m.counters("Idle"));
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
            }
        }
        finally
        {
            IoUtil.unmap(mapped);
        }
    }

    private static double cpuPercentOverWindow(final long pid) throws IOException
    {
        final long startTicks = cpuTicks(pid);
        final long startNs = System.nanoTime();
        LockSupport.parkNanos(MEASURE_NS);
        return percent(cpuTicks(pid) - startTicks, System.nanoTime() - startNs);
    }

    private static double percent(final long ticks, final long elapsedNs)
    {
        return 100.0 * ticks / clockTicksPerSecond() / (elapsedNs / 1e9);
    }

    /**
     * utime + stime of a process in clock ticks ({@code /proc/PID/stat} fields 14 and 15, counted after the command
     * name, which may hold spaces).
     */
    private static long cpuTicks(final long pid) throws IOException
    {
        final String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
        final String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
    }

    private static long clockTicksPerSecond()
    {
        // USER_HZ is 100 on every Linux ABI the project builds for.
        return 100;
    }

    private static boolean allBelow(final double[] values, final double bound)
    {
        for (final double value : values)
        {
            if (value >= bound)
            {
                return false;
            }
        }
        return true;
    }
}
