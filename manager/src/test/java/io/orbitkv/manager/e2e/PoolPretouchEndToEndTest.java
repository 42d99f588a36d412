package io.orbitkv.manager.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.orbitkv.codecs.cnc.CncFileDescriptor;
import io.orbitkv.manager.status.SystemCounterDescriptor;
import io.orbitkv.manager.store.StoreCounter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The default pool pre-touch (background) with the Manager and its engines as separate processes: engines are
 * served while the pool is still being touched, and a Manager stopped mid-touch exits cleanly and promptly.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class PoolPretouchEndToEndTest
{
    private static final long CLIENT_TIMEOUT_MS = 60_000;
    private static final long MIB = 1L << 20;
    private static final String TOUCHED = StoreCounter.POOL_BYTES_TOUCHED.label();
    private static final String STATE = StoreCounter.POOL_TOUCH_STATE.label();

    @RegisterExtension
    final OrbitKvProcesses processes = OrbitKvProcesses.perTest();

    @Test
    void shouldServeEnginesByteExactWhileTheDefaultBackgroundTouchRunsAndAfterItEnds() throws Exception
    {
        final long poolBytes = 64 * MIB;
        // 500 ms after each 2 MiB: the touch takes over 15 s, so the engines below run while it is under way.
        processes.startManager("--pool-bytes", "64m", "--pool-pretouch-pause", "500ms");
        assertTrue(processes.counter(TOUCHED) < poolBytes, "ready only after the touch: " + processes.counter(TOUCHED));
        assertEquals(1, processes.counter(StoreCounter.POOL_TOUCH_MODE.label()), "background is the default");

        // 640 blocks of 64 KiB fill the pool's first 40 MiB.
        final String[] chain = {"--namespace", "pretouch", "--seed", "7", "--blocks", "640", "--block-bytes", "64k",
            "--no-keys"};
        final OrbitKvProcesses.ClientRun publish = processes.runClient(CLIENT_TIMEOUT_MS, concat("publish", chain));
        assertEquals(0, publish.exitCode(), publish.stdout());
        assertEquals(640, publish.json().get("stored").asInt(), publish.stdout());
        final OrbitKvProcesses.ClientRun read = processes.runClient(CLIENT_TIMEOUT_MS, concat("read", chain));
        final long touchedAfterRead = processes.counter(TOUCHED);
        assertEquals(0, read.exitCode(), read.stdout());
        assertEquals(640, read.json().get("restored").asInt(), read.stdout());
        assertEquals(0, read.json().get("mismatches").asInt(), read.stdout());
        assertTrue(touchedAfterRead < 40 * MIB, "the touch overtook the engines: " + touchedAfterRead);
        assertEquals(StoreCounter.POOL_TOUCH_TOUCHING, processes.counter(STATE));

        assertEquals(poolBytes, processes.awaitCounter(TOUCHED, poolBytes, TimeUnit.SECONDS.toNanos(60)));
        assertEquals(StoreCounter.POOL_TOUCH_DONE,
            processes.awaitCounter(STATE, StoreCounter.POOL_TOUCH_DONE, TimeUnit.SECONDS.toNanos(5)));

        final OrbitKvProcesses.ClientRun again = processes.runClient(CLIENT_TIMEOUT_MS, concat("read", chain));
        assertEquals(0, again.json().get("mismatches").asInt(), again.stdout());
        assertEquals(640, again.json().get("restored").asInt(), again.stdout());
        final String stat = processes.runStatOnce(CLIENT_TIMEOUT_MS);
        assertTrue(stat.contains("pool touch: 100% (64 MiB of 64 MiB), background, done in "), stat);
    }

    @Test
    void shouldBeReadyBeforeALargePoolIsTouchedAndExitCleanlyAndPromptlyOnSigtermMidTouch() throws Exception
    {
        final long poolBytes = 4L << 30;
        final Process manager = processes.startManager("--pool-bytes", "4g");
        final long touchedAtReady = processes.counter(TOUCHED);
        final long readyMs = processes.counter(SystemCounterDescriptor.READY_MS.label());
        System.out.println("4 GiB pool: ready " + readyMs + " ms after process start, " + touchedAtReady +
            " bytes touched by then");
        assertTrue(touchedAtReady < poolBytes, "ready only after the touch");
        assertTrue(readyMs > 0, "time to ready recorded: " + readyMs);
        processes.awaitCounter(STATE, StoreCounter.POOL_TOUCH_TOUCHING, TimeUnit.SECONDS.toNanos(10));
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (processes.counter(TOUCHED) < 4 * MIB && System.nanoTime() - deadlineNs < 0)
        {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }

        final long startNs = System.nanoTime();
        manager.destroy();
        assertTrue(manager.waitFor(10, TimeUnit.SECONDS), "Manager still running 10 s after SIGTERM");
        final long exitMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs);

        // The counters stay readable through this process's mapping after the Manager unlinked its file.
        final long touchedAtClose = processes.counter(TOUCHED);
        assertTrue(touchedAtClose < poolBytes, "the touch ended before SIGTERM: nothing was tested");
        assertEquals(StoreCounter.POOL_TOUCH_STOPPED, processes.counter(STATE));
        assertEquals(0, processes.counter(SystemCounterDescriptor.ERRORS.label()));
        assertTrue(exitMs < 3_000, "exit took " + exitMs + " ms after SIGTERM");
        assertEquals(143, manager.exitValue(), "exit status of a JVM ended by SIGTERM");
        assertFalse(Files.exists(processes.dir.resolve(CncFileDescriptor.CNC_FILE_NAME)), "close did not run");
        final String stderr = processes.dump();
        assertFalse(stderr.contains("SIGSEGV") || stderr.contains("hs_err") || stderr.contains("Exception"), stderr);
        assertFalse(Files.exists(Path.of("hs_err_pid" + manager.pid() + ".log")), "the JVM crashed");
        System.out.println("SIGTERM at " + touchedAtClose + " of " + poolBytes + " bytes touched: exit after " +
            exitMs + " ms");
    }

    private static String[] concat(final String first, final String... rest)
    {
        final String[] all = new String[rest.length + 1];
        all[0] = first;
        System.arraycopy(rest, 0, all, 1, rest.length);
        return all;
    }
}
