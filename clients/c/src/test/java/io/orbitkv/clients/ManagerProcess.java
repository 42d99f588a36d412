package io.orbitkv.clients;

import io.orbitkv.manager.cli.OrbitKvCli;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A real Manager in its own JVM, on a fresh directory under /dev/shm, for the cross-language tests. Engines attach
 * to {@link #dir()}; {@link #close()} stops the process and deletes the directory.
 */
final class ManagerProcess implements AutoCloseable
{
    private final Path dir;
    private final Path log;
    private final Process process;

    private ManagerProcess(final Path dir, final Path log, final Process process)
    {
        this.dir = dir;
        this.log = log;
        this.process = process;
    }

    static ManagerProcess start(final String... extraArgs) throws IOException
    {
        final Path shm = Paths.get("/dev/shm");
        final Path dir = Files.createTempDirectory(Files.isDirectory(shm) ? shm : Paths.get(System.getProperty("java.io.tmpdir")),
            "orbitkv-clients-");
        final List<String> command = new ArrayList<>();
        command.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        for (final String arg : ManagementFactory.getRuntimeMXBean().getInputArguments())
        {
            if (arg.startsWith("--add-") || arg.startsWith("--enable-native-access") ||
                arg.startsWith("--sun-misc-unsafe-memory-access"))
            {
                command.add(arg);
            }
        }
        command.add("-Xmx512m");
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(OrbitKvCli.class.getName());
        command.add("manager");
        command.add("--dir");
        command.add(dir.resolve("m").toString());
        command.addAll(List.of(extraArgs));
        final Path logs = Files.createDirectories(Paths.get("target", "clients-logs"));
        final Path log = logs.resolve(dir.getFileName() + "-manager.log");
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        return new ManagerProcess(dir.resolve("m"), log, process);
    }

    String dir()
    {
        return dir.toString();
    }

    boolean isAlive()
    {
        return process.isAlive();
    }

    void kill() throws InterruptedException
    {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }

    String output() throws IOException
    {
        return Files.readString(log);
    }

    public void close() throws IOException
    {
        process.destroy();
        try
        {
            if (!process.waitFor(10, TimeUnit.SECONDS))
            {
                process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        }
        catch (final InterruptedException ex)
        {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
        try (Stream<Path> paths = Files.walk(dir.getParent()))
        {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }
}
