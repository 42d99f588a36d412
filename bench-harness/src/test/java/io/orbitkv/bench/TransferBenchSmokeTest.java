package io.orbitkv.bench;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.orbitkv.manager.Manager;
import io.orbitkv.manager.ManagerContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code bench transfer} end to end with tiny sizes: iperf3 when installed, the raw TCP anchor, the TE stand-in and
 * two clustered Manager processes with the bench's own etcd, every figure in the JSON.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class TransferBenchSmokeTest
{
    @TempDir
    Path dir;

    @Test
    void shouldRunEveryPartWithTinySizesAndWriteTheFiguresToJson() throws Exception
    {
        final Path json = dir.resolve("transfer.json");
        final StringWriter text = new StringWriter();
        final CommandLine commandLine = BenchMain.commandLine();
        commandLine.setOut(new PrintWriter(text));
        final int exitCode = commandLine.execute("bench", "transfer", "--blocks", "4", "--rounds", "1",
            "--restore-blocks", "4", "--restore-reps", "5", "--iperf-secs", "1", "--streams", "1",
            "--work-dir", dir.resolve("work").toString(), "--json", json.toString());
        assertEquals(0, exitCode, text.toString());

        final JsonNode root = new ObjectMapper().readTree(json.toFile());
        if (null != IperfAnchor.binary())
        {
            assertTrue(root.path("iperf3").path("gbps_P1").asDouble() > 0, root.toString());
            assertTrue(root.path("iperf3").path("gbps_P4").asDouble() > 0, root.toString());
        }
        else
        {
            assertTrue(root.path("iperf3").path("reason").asText().contains("not found"), root.toString());
        }
        assertEquals(4 * TransferBench.RESTORE_BLOCK_BYTES, root.path("raw_tcp").path("bytes").asInt());
        assertTrue(root.path("raw_tcp").path("p50_us").asDouble() > 0, root.toString());
        assertTrue(root.path("te_standin").path("available").asBoolean(), root.toString());
        assertTrue(root.path("te_standin").path("gbps_median").asDouble() > 0, root.toString());
        assertEquals("TE stand-in (not Mooncake)", root.path("te_standin").path("label").asText());

        final JsonNode pair = root.path("managers").path("streams_1");
        assertTrue(text.toString().contains("b's lookups offer all 4 + 4 blocks published on a"), text.toString());
        assertTrue(pair.path("gbps_median").asDouble() > 0, pair.toString());
        assertTrue(pair.path("restore_p50_us").asDouble() > 0, pair.toString());
        assertTrue(pair.path("restore_p99_us").asDouble() >= pair.path("restore_p50_us").asDouble(), pair.toString());
        assertTrue(pair.path("transfer_counters").path("b").size() > 0, pair.toString());
        assertTrue(text.toString().contains("| metric | OrbitKV | anchor (same run) | ratio | goal |"), text.toString());
    }

    @Test
    void shouldFindTheTransferCountersByLabelAndAnswerNullForOnesTheBuildLacks() throws Exception
    {
        try (Manager manager = Manager.launch(new ManagerContext()
            .dir(dir.resolve("manager").toFile())
            .poolBytes(8L << 20)
            .maxBlockBytes(1 << 20)
            .indexBudgetBytes(1L << 20));
            io.orbitkv.manager.status.CncReader cnc = io.orbitkv.manager.status.CncReader.map(
                dir.resolve("manager").resolve(io.orbitkv.codecs.cnc.CncFileDescriptor.CNC_FILE_NAME).toFile());
            TransferCounters counters = new TransferCounters("m", cnc.countersReader()))
        {
            assertTrue(counters.count() > 0, "no counter labelled " + TransferCounters.LABEL_PREFIX);
            assertEquals(0L, counters.maxOf("blocks", "restored from peers"));
            assertEquals(0L, counters.deltaOf("blocks", "restored from peers"));
            assertNull(counters.maxOf("no-such-counter-word"));
            assertTrue(counters.describe().startsWith("m ("), counters.describe());
        }
    }
}
