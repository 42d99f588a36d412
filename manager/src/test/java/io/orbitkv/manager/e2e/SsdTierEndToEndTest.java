package io.orbitkv.manager.e2e;

import io.orbitkv.manager.cli.BlockChain;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Comparator;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The SSD tier as users run it: a Manager process with {@code --ssd-dir} on a real disk directory (under target/,
 * never tmpfs, which ignores O_DIRECT), engines as separate client processes.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class SsdTierEndToEndTest
{
    private static final long CLIENT_TIMEOUT_MS = 90_000;

    @RegisterExtension
    final OrbitKvProcesses processes = OrbitKvProcesses.perTest();

    private Path ssdDir;

    @BeforeEach
    void before() throws Exception
    {
        ssdDir = Files.createDirectories(Paths.get("target", "ssd-e2e", UUID.randomUUID().toString()).toAbsolutePath());
    }

    @AfterEach
    void after() throws Exception
    {
        try (Stream<Path> paths = Files.walk(ssdDir))
        {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    @ParameterizedTest(name = "--ssd-backend={0}")
    @ValueSource(strings = {"io_uring", "filechannel"})
    void shouldRestoreTenThousandMixedBlocksEvictedToSsdByteExactInAnotherProcess(final String backend)
        throws Exception
    {
        processes.startManager("--pool-bytes", "64m", "--ssd-dir", ssdDir.toString(), "--ssd-bytes", "1g",
            "--ssd-backend", backend, "--ssd-staging-bytes", "256m");
        assertEquals("io_uring".equals(backend) ? 1 : 3,
            processes.counter("SSD backend: 0 none, 1 io_uring fixed buffers, 2 io_uring, 3 FileChannel"));
        assertEquals("filechannel".equals(backend) ? 1 : 0, processes.counter("SSD fallback backend in use"));

        final String[] chain = {"--namespace", "model-a", "--seed", "11", "--blocks", "10000",
            "--min-block-bytes", "4k", "--block-bytes", "64k", "--no-keys"};
        final OrbitKvProcesses.ClientRun publish = processes.runClient(CLIENT_TIMEOUT_MS, concat("publish", chain));
        assertEquals(0, publish.exitCode(), publish.stdout());
        assertEquals(10000, publish.json().get("stored").asInt(), publish.stdout());

        // ~340 MB through a 64 MiB pool: most blocks now live only on SSD.
        // Gauges move on the 1 ms housekeeping tick: wait until no I/O is in flight and admissions stopped moving.
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        long lastAdmissions = -1;
        while (System.nanoTime() - deadlineNs < 0)
        {
            final long admissions = processes.counter("SSD admissions (write completed)");
            if (admissions == lastAdmissions && 0 == processes.counter("SSD I/O in flight"))
            {
                break;
            }
            lastAdmissions = admissions;
            Thread.sleep(50);
        }
        assertEquals(0, processes.counter("SSD admissions skipped (staging, queue or space)"));
        assertEquals(0, processes.counter("SSD I/O errors (residence dropped)"));
        assertTrue(processes.counter("SSD admissions (write completed)") > 8000,
            "admissions " + processes.counter("SSD admissions (write completed)"));

        final OrbitKvProcesses.ClientRun prefix = processes.runClient(CLIENT_TIMEOUT_MS,
            "lookup", "--namespace", "model-a", "--seed", "11", "--blocks", "100",
            "--min-block-bytes", "4k", "--block-bytes", "64k");
        assertEquals(100, prefix.json().get("prefixLength").asInt(), prefix.stdout());
        assertEquals("SSD", prefix.json().get("tiers").get(0).asText());

        final OrbitKvProcesses.ClientRun read = processes.runClient(CLIENT_TIMEOUT_MS, concat("read", chain));
        assertEquals(0, read.exitCode(), read.stdout());
        assertEquals(10000, read.json().get("restored").asInt(), read.stdout());
        assertEquals(0, read.json().get("mismatches").asInt());
        assertEquals(new BlockChain(11, 10000, 4096, 65536).totalBytes(10000), read.json().get("verifiedBytes").asLong());

        assertTrue(processes.counter("SSD reads") > 8000, "reads " + processes.counter("SSD reads"));
        assertEquals(0, processes.counter("SSD I/O errors (residence dropped)"));
        assertEquals(0, processes.counter("Errors"));
    }

    private static String[] concat(final String first, final String[] rest)
    {
        final String[] all = new String[rest.length + 1];
        all[0] = first;
        System.arraycopy(rest, 0, all, 1, rest.length);
        return all;
    }
}
