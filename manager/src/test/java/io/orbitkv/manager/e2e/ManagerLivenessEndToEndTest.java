package io.orbitkv.manager.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.orbitkv.client.EngineClient;
import io.orbitkv.client.EngineClientException;
import io.orbitkv.codecs.cnc.CncFileDescriptor;
import io.orbitkv.manager.status.CncReader;
import java.io.File;
import java.io.IOException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The Manager's side ({@link CncReader}: {@code orbitkv stat}, a starting Manager) and an engine's side
 * ({@link EngineClient}) apply one liveness rule, so they agree on a real Manager process: alive while it runs, not
 * alive once it hangs (stopped with SIGSTOP: its process is there, its heartbeat is not), and not alive once it has
 * been killed (its file left behind) or has stopped cleanly (its file removed). The client liveness is 1 s, the
 * shortest timeout the rule allows.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ManagerLivenessEndToEndTest
{
    private static final long STALE_DEADLINE_NS = TimeUnit.SECONDS.toNanos(20);

    @RegisterExtension
    final OrbitKvProcesses processes = OrbitKvProcesses.perTest();

    @Test
    void shouldAgreeWithTheEngineOnALiveAHungAndAKilledManager() throws Exception
    {
        final Process manager = processes.startManager("--pool-bytes", "16m", "--client-timeout", "1s");
        final File cnc = processes.dir.resolve(CncFileDescriptor.CNC_FILE_NAME).toFile();
        try (CncReader reader = CncReader.map(cnc))
        {
            assertTrue(reader.isManagerAlive(System.currentTimeMillis()), "live: the Manager's side");
            try (EngineClient client = connect(TimeUnit.SECONDS.toNanos(10)))
            {
                assertTrue(client.clientId() != 0, "live: the engine attached");
            }

            signal("-STOP", manager.pid());
            final long deadlineNs = System.nanoTime() + STALE_DEADLINE_NS;
            while (reader.isManagerAlive(System.currentTimeMillis()))
            {
                assertTrue(System.nanoTime() - deadlineNs < 0, "a hung Manager's heartbeat never went stale");
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
            }
            final EngineClientException hung = assertThrows(EngineClientException.class,
                () -> connect(TimeUnit.MILLISECONDS.toNanos(300)));
            assertEquals(EngineClientException.Reason.STALE_MANAGER, hung.reason(), "hung: the engine's side");
            assertFalse(hung.getMessage().contains("not running"), hung.getMessage());

            manager.destroyForcibly();
            assertTrue(manager.waitFor(10, TimeUnit.SECONDS));
            assertTrue(cnc.isFile(), "a killed Manager leaves its CnC file");
            assertFalse(reader.isManagerAlive(System.currentTimeMillis()), "killed: the Manager's side");
            final long startNs = System.nanoTime();
            final EngineClientException killed = assertThrows(EngineClientException.class,
                () -> connect(TimeUnit.SECONDS.toNanos(30)));
            assertEquals(EngineClientException.Reason.STALE_MANAGER, killed.reason(), "killed: the engine's side");
            assertTrue(killed.getMessage().contains("not running"), killed.getMessage());
            assertTrue(System.nanoTime() - startNs < TimeUnit.SECONDS.toNanos(10), "did not wait for the deadline");
        }
        finally
        {
            manager.destroyForcibly();
        }
    }

    @Test
    void shouldAgreeThatACleanlyStoppedManagerIsGone() throws Exception
    {
        final Process manager = processes.startManager("--pool-bytes", "16m", "--client-timeout", "1s");
        final File cnc = processes.dir.resolve(CncFileDescriptor.CNC_FILE_NAME).toFile();
        manager.destroy();
        assertTrue(manager.waitFor(30, TimeUnit.SECONDS));

        assertNull(CncReader.mapIfReady(cnc), "stopped: the Manager's side finds no Manager");
        final EngineClientException stopped = assertThrows(EngineClientException.class,
            () -> connect(TimeUnit.MILLISECONDS.toNanos(300)));
        assertEquals(EngineClientException.Reason.NO_MANAGER, stopped.reason(), "stopped: the engine's side");
    }

    private EngineClient connect(final long attachTimeoutNs)
    {
        return EngineClient.connect(new EngineClient.Context()
            .dir(processes.dir.toString())
            .clientName("liveness-engine")
            .dataRegionBytes(1 << 20)
            .heartbeatThread(false)
            .attachTimeoutNs(attachTimeoutNs));
    }

    private static void signal(final String signal, final long pid) throws IOException, InterruptedException
    {
        final Process kill = new ProcessBuilder("kill", signal, Long.toString(pid)).inheritIO().start();
        assertEquals(0, kill.waitFor(), "kill " + signal + " " + pid);
    }
}
