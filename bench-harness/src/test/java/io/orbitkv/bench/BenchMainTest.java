package io.orbitkv.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.orbitkv.manager.cli.OrbitKvCli;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code orbitkv bench ...} from the harness: the same command tree under {@code bench}, children started with bench
 * arguments run the harness's main, and the Manager's own CLI names {@code bench} in its usage but runs none.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
final class BenchMainTest
{
    @TempDir
    Path dir;

    @Test
    void shouldOfferEveryBenchSubcommandUnderBench()
    {
        final CommandLine bench = BenchMain.commandLine().getSubcommands().get("bench");
        assertEquals(List.of("local", "ring-echo", "ssd", "ssd-persist", "membership", "catalog", "discovery", "cli", "transfer",
            "replay", "client"),
            List.copyOf(bench.getSubcommands().keySet()));
        assertEquals("orbitkv bench local", bench.getSubcommands().get("local").getCommandSpec().qualifiedName());
    }

    @Test
    void shouldRunBenchArgumentsInAChildThroughTheHarnessMain() throws Exception
    {
        assertEquals(BenchMain.class, ChildJvm.mainClassFor(List.of("bench", "ring-echo")));
        assertEquals(OrbitKvCli.class, ChildJvm.mainClassFor(List.of("manager", "--dir", "d")));

        final File log = dir.resolve("child.log").toFile();
        final Process child = ChildJvm.startOrbitkv(log, List.of("-Xmx64m"), List.of("bench", "local", "--help"));
        assertTrue(child.waitFor(60, TimeUnit.SECONDS), "child did not exit");
        final String output = Files.readString(log.toPath());
        assertEquals(0, child.exitValue(), output);
        assertTrue(output.startsWith("Usage: orbitkv bench local"), output);
    }

    @Test
    void shouldListBenchInTheManagerUsageAndPointToTheHarness()
    {
        final StringWriter usage = new StringWriter();
        final CommandLine cli = OrbitKvCli.commandLine();
        cli.usage(new PrintWriter(usage, true));
        assertTrue(usage.toString().matches("(?s).*\\n  bench +Benchmarks, each printed as a ratio to an anchor.*"),
            usage.toString());

        final StringWriter err = new StringWriter();
        cli.setErr(new PrintWriter(err, true));
        assertEquals(2, cli.execute("bench", "local", "--json", dir.resolve("never.json").toString()));
        assertTrue(err.toString().contains("scripts/orbitkv bench"), err.toString());
        assertTrue(Files.notExists(dir.resolve("never.json")));
    }
}
