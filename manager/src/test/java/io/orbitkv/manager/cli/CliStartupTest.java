package io.orbitkv.manager.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * Start-up cost of the CLI: a command loads only what it uses (no JSON, gRPC or Aeron classes for usage or
 * {@code stat}), and the workload the start-up cache is recorded from keeps running.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
final class CliStartupTest
{
    private static final List<String> HEAVY_PACKAGES = List.of("com.fasterxml.jackson.", "io.grpc.", "io.netty.",
        "io.etcd.", "io.aeron.", "io.vertx.");

    @TempDir
    Path tmp;

    @Test
    void shouldBuildOnlyTheInvokedSubcommandInFull()
    {
        final CommandLine stat = OrbitKvCli.commandLineFor(new String[]{"stat", "--once"});
        assertFalse(stat.getSubcommands().get("stat").getCommandSpec().options().isEmpty(), "stat built in full");
        assertTrue(stat.getSubcommands().get("client").getCommandSpec().options().isEmpty(), "client a name only");

        final CommandLine help = OrbitKvCli.commandLineFor(new String[]{"help", "members"});
        assertFalse(help.getSubcommands().get("members").getCommandSpec().options().isEmpty());
        assertTrue(help.getSubcommands().get("manager").getCommandSpec().options().isEmpty());

        final CommandLine usage = OrbitKvCli.commandLineFor(new String[]{"--help"});
        assertEquals(OrbitKvCli.commandLine().getSubcommands().keySet(), usage.getSubcommands().keySet());
    }

    @Test
    void shouldNotLoadJsonRpcOrTransportClassesForUsageOrStat() throws Exception
    {
        assertLoadsNoHeavyClass(List.of("--help"), 0);
        final File noManager = tmp.resolve("no-manager").toFile();
        assertLoadsNoHeavyClass(List.of("stat", "--dir", noManager.getPath(), "--once"), 1);
    }

    @Test
    void shouldRunTheStartupCacheTrainingWorkload()
    {
        assertEquals(0, OrbitKvCli.commandLine().execute("aot-training"));
    }

    private void assertLoadsNoHeavyClass(final List<String> args, final int expectedExit) throws Exception
    {
        final Path classLog = tmp.resolve("classes-" + System.nanoTime() + ".txt");
        final Path output = tmp.resolve("output-" + System.nanoTime() + ".txt");
        final Process process = new ProcessBuilder(
            ChildJvm.orbitkvCommand(List.of("-Xlog:class+load:file=" + classLog), args))
            .redirectErrorStream(true)
            .redirectOutput(output.toFile())
            .start();
        assertTrue(process.waitFor(60, TimeUnit.SECONDS), "CLI did not exit");
        assertEquals(expectedExit, process.exitValue(), () -> read(output));
        final List<String> loaded = Files.readAllLines(classLog, StandardCharsets.UTF_8);
        assertTrue(loaded.stream().anyMatch(line -> line.contains("picocli.CommandLine ")), "class log is read");
        for (final String line : loaded)
        {
            for (final String heavy : HEAVY_PACKAGES)
            {
                assertFalse(line.contains(" " + heavy), () -> args + " loaded " + line);
            }
        }
    }

    private static String read(final Path file)
    {
        try
        {
            return Files.readString(file);
        }
        catch (final IOException ex)
        {
            return ex.toString();
        }
    }
}
