package io.orbitkv.bench;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code bench client} end to end with tiny counts: the C tool and the Python package built by the reactor (clients/c
 * comes before this module) against a Manager in this JVM; the JSON carries every figure.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ClientBenchSmokeTest
{
    @TempDir
    Path dir;

    @Test
    void shouldMeasureEveryClientAndWriteEveryFigureToJson() throws Exception
    {
        final Path tool = Paths.get("..", "clients", "c", "target", "bin", "okv-tool").toAbsolutePath();
        Assumptions.assumeTrue(Files.isExecutable(tool), "clients/c not built: " + tool);
        final Path json = dir.resolve("client.json");
        final StringWriter text = new StringWriter();
        final CommandLine commandLine = BenchMain.commandLine();
        commandLine.setOut(new PrintWriter(text));
        final int exitCode = commandLine.execute("bench", "client", "--iterations", "200", "--rounds", "1",
            "--put-reps", "2", "--put-batch", "5", "--block-bytes", "65536", "--c-tool", tool.toString(),
            "--python-dir", Paths.get("..", "clients", "python").toAbsolutePath().toString(), "--json", json.toString());
        assertEquals(0, exitCode, text.toString());
        final JsonNode root = new ObjectMapper().readTree(json.toFile());
        for (final String row : new String[]{"lookup1", "lookup64"})
        {
            for (final String field : new String[]{"javaMedianNs", "cMedianNs", "pythonMedianNs", "pythonPackedMedianNs", "cToJava"})
            {
                assertTrue(root.path(row).path(field).asDouble() > 0, row + "." + field + " in " + root);
            }
        }
        for (final String row : new String[]{"put", "get", "putBatch", "getBatch"})
        {
            assertTrue(root.path(row).path("ratio").asDouble() > 0, row + " in " + root);
        }
        assertTrue(text.toString().contains("blocks per call, per block"), text.toString());
        assertTrue(text.toString().contains("| Lookup RTT, 64 keys |"), text.toString());
    }
}
