package io.orbitkv.bench;

import io.orbitkv.manager.Configuration;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code bench replay} end to end on a generated trace through two Manager processes, each with an engine process of
 * its own: the isolated mode's hits equal the in-process isolated LRU exactly, request by request, and no restored
 * byte is wrong in either mode; the Managers go on serving while etcd is stopped and started again, and a Manager
 * restarted mid-run has the counts of both its processes.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ReplayBenchTest
{
    /** Small enough that the hosts evict: the exact match then covers the LRU order, not only residence. */
    private static final int POOL_BLOCKS = 256;
    private static final int BLOCK_BYTES = 32 << 10;
    private static final int REQUESTS = 300;

    @TempDir
    Path dir;

    @Test
    void shouldMatchTheIsolatedReferenceExactlyAndVerifyEveryByte() throws Exception
    {
        final Path trace = dir.resolve("synthetic.jsonl");
        ReplayTrace.writeSynthetic(trace, REQUESTS, 7);
        final ReplayBench.Options options = new ReplayBench.Options(trace, 0, 2, POOL_BLOCKS, BLOCK_BYTES,
            ReplayRoute.ROUND_ROBIN, 0, List.of("isolated", "embedded"), 10_000, List.of(), List.of(), dir.resolve("plots"),
            null, dir.resolve("work"), 1, true, List.of(), Configuration.CATALOG_REPLICAS_DEFAULT, 0,
            Configuration.MAX_SHARD_MOVES_DEFAULT, null, null, List.of());
        Files.createDirectories(options.workDir());
        final StringWriter text = new StringWriter();
        final ByteArrayOutputStream progress = new ByteArrayOutputStream();
        final ReplayBench bench = new ReplayBench(options, new PrintWriter(text), new PrintStream(progress, true,
            StandardCharsets.UTF_8));
        final java.util.Map<String, Object> results = bench.run();
        final JsonNode root = new ObjectMapper().valueToTree(results);

        final long capacity = ReplayBench.effectiveCapacity(POOL_BLOCKS, BLOCK_BYTES);
        assertEquals(POOL_BLOCKS, capacity);
        final int[] expected = bench.isolatedHitsPerRequest(capacity);
        long refs = 0;
        long hits = 0;
        for (final ReplayTrace.Request r : bench.requests())
        {
            refs += r.hashIds().length;
            hits += expected[r.index()];
        }
        assertTrue(hits > refs / 20 && hits < refs, "the trace must both hit and miss: " + hits + " of " + refs);

        final ReplayOutcomes served = bench.outcomes("isolated");
        for (final ReplayTrace.Request r : bench.requests())
        {
            assertEquals(expected[r.index()], served.dram[r.index()], "request " + r.index() + " on host " +
                served.host[r.index()]);
        }
        final JsonNode isolated = root.path("modes").path("isolated");
        assertEquals((double)hits / refs, isolated.path("hitFraction").path("total").asDouble(), 0.0, text.toString());
        assertEquals(isolated.path("reference").path("isolatedLru").asDouble(),
            isolated.path("hitFraction").path("localDram").asDouble(), 0.0, text.toString());
        assertEquals(0.0, isolated.path("hitFraction").path("peer").asDouble(), 0.0);
        assertEquals(0, isolated.path("wrongBytes").asLong());
        assertEquals(0, isolated.path("recomputeFallbackRequests").asInt());

        final JsonNode embedded = root.path("modes").path("embedded");
        assertEquals(0, embedded.path("wrongBytes").asLong(), text.toString());
        assertTrue(embedded.path("hitFraction").path("total").asDouble() >=
            isolated.path("hitFraction").path("total").asDouble() * 0.9, text.toString());
        assertTrue(embedded.path("ttftMs").path("p99").asDouble() >= embedded.path("ttftMs").path("p50").asDouble());
        assertTrue(embedded.has("etcdCallsPerRequest") && embedded.has("ratioToGlobalLru"), embedded.toString());
        assertEquals(0, embedded.path("transfer").path("leakedAfterDrain").path("senderPinnedBytes").asLong());
        assertEquals(0, embedded.path("transfer").path("leakedAfterDrain").path("sourceSessionsActive").asLong());
        assertEquals(0, embedded.path("transfer").path("leakedAfterDrain").path("requesterFetchesActive").asLong());
        assertTrue(Files.size(dir.resolve("plots").resolve("hit-rate-over-time.png")) > 0);
        assertTrue(Files.readString(dir.resolve("plots").resolve("ttft-cdf.svg")).contains("<svg"));
        assertTrue(progress.toString(StandardCharsets.UTF_8).contains(REQUESTS + "/" + REQUESTS), progress.toString());

        final long self = ProcessHandle.current().pid();
        for (final String mode : List.of("isolated", "embedded"))
        {
            final JsonNode engines = root.path("modes").path(mode).path("engineProcesses");
            assertEquals(2, engines.size(), engines.toString());
            final long a = engines.get(0).path("pid").asLong();
            final long b = engines.get(1).path("pid").asLong();
            assertTrue(a != self && b != self && a != b, engines.toString());
            for (final JsonNode e : engines)
            {
                assertEquals(e.path("pid").asLong(), e.path("reportedPid").asLong(), e.toString());
                assertTrue(e.path("aliveAtLastDispatch").asBoolean(), e.toString());
                assertEquals(0, e.path("exitCode").asInt(-1), e.toString());
                assertTrue(ProcessHandle.of(e.path("pid").asLong()).map((p) -> !p.isAlive()).orElse(true));
            }
        }
    }

    @Test
    void shouldKeepServingWhileEtcdIsStoppedAndCountBothProcessesOfARestartedManager() throws Exception
    {
        final Path trace = dir.resolve("synthetic.jsonl");
        ReplayTrace.writeSynthetic(trace, REQUESTS, 7);
        // At speed 1 the 300 requests (10 ms apart) take 3 s: etcd is away for 1 s from 15%, b restarts at 75%.
        final ReplayBench.Options options = new ReplayBench.Options(trace, 0, 2, POOL_BLOCKS, BLOCK_BYTES,
            ReplayRoute.ROUND_ROBIN, 1, List.of("embedded"), 10_000, List.of(),
            List.of(ReplayBench.Failure.parse("etcd-stop:1s@15%", 2), ReplayBench.Failure.parse("restart-catalog:b@75%", 2)),
            null, null, dir.resolve("work"), 1, false, List.of(), Configuration.CATALOG_REPLICAS_DEFAULT, 0,
            Configuration.MAX_SHARD_MOVES_DEFAULT, null, null, List.of());
        Files.createDirectories(options.workDir());
        final StringWriter text = new StringWriter();
        final ReplayBench bench = new ReplayBench(options, new PrintWriter(text), new PrintStream(
            new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
        final JsonNode embedded = new ObjectMapper().valueToTree(bench.run()).path("modes").path("embedded");
        assertEquals(0, embedded.path("wrongBytes").asLong(), text.toString());

        final JsonNode etcdStop = embedded.path("failures").get(0);
        assertEquals("etcd-stop:1s@15%", etcdStop.path("spec").asText(), etcdStop.toString());
        assertTrue(etcdStop.path("etcdPidStopped").asLong() != etcdStop.path("etcdPidRestarted").asLong(),
            etcdStop.toString());
        assertTrue(etcdStop.path("requestsCompletedWhileAway").asInt() > 0, etcdStop.toString());
        assertEquals(0, etcdStop.path("requestsRecomputedWhileAway").asInt(), etcdStop.toString());
        assertTrue(etcdStop.has("rejoinedAtSeconds"), etcdStop.toString());
        assertTrue(etcdStop.path("endedAtSeconds").asDouble() - etcdStop.path("etcdExitedAtSeconds").asDouble() >= 1.0,
            etcdStop.toString());

        // Every served request on b made one lookup; one answered by the process that was stopped counts too.
        assertEquals(List.of(1, 2), List.of(embedded.path("managerProcesses").get(0).asInt(),
            embedded.path("managerProcesses").get(1).asInt()), embedded.toString());
        final ReplayOutcomes o = bench.outcomes("embedded");
        int servedOnB = 0;
        int recomputedOnB = 0;
        for (int i = 0; i < REQUESTS; i++)
        {
            if (1 == o.host[i])
            {
                servedOnB += o.unserved[i] ? 0 : 1;
                recomputedOnB += o.unserved[i] ? 1 : 0;
            }
        }
        final long lookupsOnB = embedded.path("counterChanges").get(1).path("Requests: lookup").asLong();
        assertTrue(lookupsOnB >= servedOnB && lookupsOnB <= servedOnB + recomputedOnB, "lookups " + lookupsOnB +
            ", served " + servedOnB + ", recomputed " + recomputedOnB);
        assertTrue(servedOnB > lookupsOnB / 2 + 10, "b served before and after its restart: " + servedOnB);
    }

    @Test
    void shouldMapOnlyTheRestartedProcessesCncFileAfterAKill() throws Exception
    {
        try (BenchManager manager = BenchManager.start("a", dir, List.of("-Xmx256m"),
            List.of("--pool-bytes", "4m", "--pool-pretouch", "off")))
        {
            manager.awaitReady();
            final long first = manager.pid();
            assertEquals(first, manager.mappedManagerPid());
            manager.kill();
            // The killed process left its CnC file, ready and naming it, for the next process to replace.
            assertTrue(Files.exists(manager.dir().resolve(io.orbitkv.codecs.cnc.CncFileDescriptor.CNC_FILE_NAME)));
            manager.restart();
            manager.awaitReady();
            assertTrue(first != manager.pid());
            assertEquals(manager.pid(), manager.mappedManagerPid());
            assertEquals(1, manager.retiredCounters().size());
            assertTrue(manager.retiredCounters().get(0).containsKey("Requests: lookup"));
        }
    }

    @Test
    void shouldFailClearlyWhenAnEngineProcessExits() throws Exception
    {
        final Path trace = dir.resolve("synthetic.jsonl");
        ReplayTrace.writeSynthetic(trace, 12, 7);
        final List<ReplayTrace.Request> requests = ReplayTrace.read(trace, 0);
        int maxChain = 0;
        for (final ReplayTrace.Request r : requests)
        {
            maxChain = Math.max(maxChain, r.hashIds().length);
        }
        // The engine reads its trace itself: one that is gone makes it exit before it attaches.
        final Path gone = dir.resolve("gone.jsonl");
        try (ReplayEngineProcess engine = ReplayEngineProcess.start(0, "a", dir.resolve("no-manager"), dir, BLOCK_BYTES,
            maxChain, false, gone, 0, requests, new ReplayOutcomes(requests.size())))
        {
            final IllegalStateException ex = assertThrows(IllegalStateException.class, engine::awaitReady);
            assertTrue(ex.getMessage().contains("engine process of Manager a") && ex.getMessage().contains("exited with 1"),
                ex.getMessage());
            assertTrue(ex.getMessage().contains("gone.jsonl"), ex.getMessage());
            assertThrows(IllegalStateException.class, () -> engine.dispatch(0));
        }
    }

    @Test
    void shouldReproduceTheReferenceRequestByRequestInTheEngineOrder()
    {
        final ReplayLru lru = new ReplayLru(3);
        assertEquals(0, lru.access(new long[] {1, 2, 3}));
        assertEquals(3, lru.access(new long[] {1, 2, 3}));
        assertEquals(2, lru.access(new long[] {1, 2, 4}));
        assertEquals(3, lru.size());
        assertEquals(0, lru.access(new long[] {3}));
        assertArrayEquals(new int[] {0, 1}, ReplayRoute.ROUND_ROBIN.assign(List.of(
            new ReplayTrace.Request(0, 0, 1, 1, new long[] {1}), new ReplayTrace.Request(1, 0, 1, 1, new long[] {1})), 2, 1));
    }

    @Test
    void shouldRejectABadTraceLineWithItsNumberAndABadFlag() throws IOException
    {
        final Path trace = dir.resolve("bad.jsonl");
        Files.writeString(trace, "{\"timestamp\": 0, \"input_length\": 5, \"hash_ids\": [0]}\n\n{\"timestamp\": 1}\n");
        final IOException ex = assertThrows(IOException.class, () -> ReplayTrace.read(trace, 0));
        assertTrue(ex.getMessage().contains(":3:"), ex.getMessage());
        final CommandLine commandLine = BenchMain.commandLine();
        final StringWriter err = new StringWriter();
        commandLine.setErr(new PrintWriter(err));
        assertEquals(2, commandLine.execute("bench", "replay", "--trace", trace.toString(), "--route", "sideways"));
        assertTrue(err.toString().contains("--route"), err.toString());
        assertEquals(2, commandLine.execute("bench", "replay", "--trace", trace.toString(), "--fail", "kill:z@40%"));
    }
}
