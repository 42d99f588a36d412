package io.orbitkv.bench;

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
 * {@code bench replay} end to end on a generated trace through two Manager processes: the isolated mode's hits equal
 * the in-process isolated LRU exactly, request by request, and no restored byte is wrong in either mode.
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
            null, dir.resolve("work"), 1, true);
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
