package io.orbitkv.manager.e2e;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.orbitkv.codecs.cnc.CncFileDescriptor;
import io.orbitkv.manager.status.CncReader;
import io.orbitkv.manager.cli.ChildJvm;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;
import org.agrona.concurrent.status.CountersReader;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.AfterTestExecutionCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Test support: a Manager and its clients as separate OS processes, talked to as a user would (the CLI, JSON
 * on stdout, counters from cnc.dat). Output of every process is captured and dumped by {@link #dump()}.
 *
 * <p>Registered as a JUnit extension ({@link #perTest()}) it belongs to one test: a failed test prints the dump while
 * the processes' output files still exist, and every process is stopped and the directory deleted after the test.
 */
public final class OrbitKvProcesses implements AutoCloseable, AfterTestExecutionCallback, AfterEachCallback
{
    static final ObjectMapper JSON = new ObjectMapper();

    public final Path dir;
    private List<String> jvmArgs = List.of();
    private final List<Started> started = new ArrayList<>();
    private Process manager;
    private CncReader cncReader;
    private CountersReader counters;

    public OrbitKvProcesses() throws IOException
    {
        final Path shm = Paths.get("/dev/shm");
        dir = Files.createTempDirectory(Files.isDirectory(shm) ? shm : Paths.get(System.getProperty("java.io.tmpdir")),
            "orbitkv-e2e-");
    }

    /**
     * A new instance for one test, for {@code @RegisterExtension}.
     *
     * @return the processes of that test.
     */
    public static OrbitKvProcesses perTest()
    {
        try
        {
            return new OrbitKvProcesses();
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    public void afterTestExecution(final ExtensionContext context)
    {
        if (context.getExecutionException().isPresent())
        {
            System.err.println("---- processes of " + context.getDisplayName() + "\n" + dump());
        }
    }

    public void afterEach(final ExtensionContext context) throws IOException
    {
        close();
    }

    public record Started(String name, Process process, Path out, Path err)
    {
    }

    /** One finished client run: exit code and the JSON object it printed. */
    public record ClientRun(int exitCode, JsonNode json, String stdout)
    {
    }

    /**
     * JVM options (e.g. system properties) for the processes started from now on.
     */
    public OrbitKvProcesses jvmArgs(final String... args)
    {
        jvmArgs = List.of(args);
        return this;
    }

    public Process startManager(final String... extraArgs) throws IOException
    {
        final List<String> args = new ArrayList<>(List.of("manager", "--dir", dir.toString()));
        args.addAll(List.of(extraArgs));
        manager = start("manager", args);
        awaitCncReady(TimeUnit.SECONDS.toNanos(30));
        return manager;
    }

    /**
     * Start a Manager and return at once, before its CnC file is ready ({@link #awaitReady(long)}).
     *
     * @return the started process with its output files.
     */
    public Started launchManager(final String... extraArgs) throws IOException
    {
        final List<String> args = new ArrayList<>(List.of("manager", "--dir", dir.toString()));
        args.addAll(List.of(extraArgs));
        manager = start("manager", args);
        return started.get(started.size() - 1);
    }

    /**
     * Wait until the Manager's CnC file is ready; fails if the Manager exits first.
     */
    public void awaitReady(final long timeoutNs) throws IOException
    {
        awaitCncReady(timeoutNs);
    }

    /**
     * @return the runtime UUID in this directory's CnC file.
     */
    public UUID runtimeUuid()
    {
        return cncReader.runtimeUuid();
    }

    /**
     * @return the Manager process of this directory.
     */
    public Process managerProcess()
    {
        return manager;
    }

    public Started startClient(final String... args) throws IOException
    {
        final List<String> all = new ArrayList<>(List.of("client", "--dir", dir.toString()));
        all.addAll(List.of(args));
        start("client", all);
        return started.get(started.size() - 1);
    }

    public ClientRun runClient(final long timeoutMs, final String... args) throws IOException, InterruptedException
    {
        final Started client = startClient(args);
        if (!client.process().waitFor(timeoutMs, TimeUnit.MILLISECONDS))
        {
            client.process().destroyForcibly();
            throw new AssertionError("client did not finish within " + timeoutMs + " ms: " + String.join(" ", args));
        }
        final String stdout = Files.readString(client.out(), StandardCharsets.UTF_8).trim();
        final String lastLine = stdout.isEmpty() ? "{}" : stdout.substring(stdout.lastIndexOf('\n') + 1);
        return new ClientRun(client.process().exitValue(), JSON.readTree(lastLine), stdout);
    }

    /**
     * Run any {@code orbitkv} command to its end (e.g. {@code placement status}).
     *
     * @return its exit code and what it printed on stdout (the JSON of its last line, if it printed JSON).
     */
    public ClientRun runCommand(final long timeoutMs, final String... args) throws IOException, InterruptedException
    {
        final Process process = start(args[0], List.of(args));
        final Started command = started.get(started.size() - 1);
        if (!process.waitFor(timeoutMs, TimeUnit.MILLISECONDS))
        {
            process.destroyForcibly();
            throw new AssertionError("orbitkv did not finish within " + timeoutMs + " ms: " + String.join(" ", args));
        }
        final String stdout = Files.readString(command.out(), StandardCharsets.UTF_8).trim();
        final String lastLine = stdout.isEmpty() ? "" : stdout.substring(stdout.lastIndexOf('\n') + 1);
        return new ClientRun(process.exitValue(), lastLine.startsWith("{") ? JSON.readTree(lastLine) : null, stdout);
    }

    /**
     * Run {@code orbitkv stat --once} on this directory's Manager.
     *
     * @return what it printed.
     */
    public String runStatOnce(final long timeoutMs) throws IOException, InterruptedException
    {
        final Process stat = start("stat", List.of("stat", "--dir", dir.toString(), "--once"));
        final Started started = this.started.get(this.started.size() - 1);
        if (!stat.waitFor(timeoutMs, TimeUnit.MILLISECONDS))
        {
            stat.destroyForcibly();
            throw new AssertionError("stat did not finish within " + timeoutMs + " ms");
        }
        return Files.readString(started.out(), StandardCharsets.UTF_8);
    }

    /**
     * Wait for the first JSON line a long-running client prints.
     *
     * @param client    the process.
     * @param timeoutNs deadline.
     * @return the parsed line.
     */
    public JsonNode awaitFirstLine(final Started client, final long timeoutNs) throws IOException
    {
        final long deadlineNs = System.nanoTime() + timeoutNs;
        while (System.nanoTime() - deadlineNs < 0)
        {
            try (BufferedReader reader = new BufferedReader(
                new InputStreamReader(Files.newInputStream(client.out()), StandardCharsets.UTF_8)))
            {
                final String line = reader.readLine();
                if (line != null && line.endsWith("}"))
                {
                    return JSON.readTree(line);
                }
            }
            if (!client.process().isAlive())
            {
                throw new AssertionError(client.name() + " exited with " + client.process().exitValue() + " before printing");
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
        }
        throw new AssertionError(client.name() + " printed nothing in time");
    }

    /**
     * @return "label = value" lines of every counter whose label starts with a prefix (for failure messages).
     */
    public String counters(final String labelPrefix)
    {
        final StringBuilder text = new StringBuilder();
        if (null == counters)
        {
            return "(closed: no counters)\n";
        }
        counters.forEach((counterId, typeId, keyBuffer, counterLabel) ->
        {
            if (counterLabel.startsWith(labelPrefix))
            {
                text.append(counterLabel).append(" = ").append(counters.getCounterValue(counterId)).append('\n');
            }
        });
        return text.toString();
    }

    public long counter(final String label)
    {
        final long[] value = {Long.MIN_VALUE};
        counters.forEach((counterId, typeId, keyBuffer, counterLabel) ->
        {
            if (counterLabel.equals(label))
            {
                value[0] = counters.getCounterValue(counterId);
            }
        });
        if (value[0] == Long.MIN_VALUE)
        {
            throw new AssertionError("no counter labelled '" + label + "'");
        }
        return value[0];
    }

    /**
     * Poll a counter until it equals {@code expected} or the deadline passes.
     *
     * @return the last value seen.
     */
    public long awaitCounter(final String label, final long expected, final long timeoutNs)
    {
        final long deadlineNs = System.nanoTime() + timeoutNs;
        long value = counter(label);
        while (value != expected && System.nanoTime() - deadlineNs < 0)
        {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
            value = counter(label);
        }
        return value;
    }

    /**
     * Poll a counter of this Manager until it reaches at least {@code least} or the timeout passes.
     *
     * @return its last value read.
     */
    public long awaitCounterAtLeast(final String label, final long least, final long timeoutNs)
    {
        final long deadlineNs = System.nanoTime() + timeoutNs;
        long value = counter(label);
        while (value < least && System.nanoTime() - deadlineNs < 0)
        {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
            value = counter(label);
        }
        return value;
    }

    private void awaitCncReady(final long timeoutNs) throws IOException
    {
        final Path cnc = dir.resolve(CncFileDescriptor.CNC_FILE_NAME);
        final long deadlineNs = System.nanoTime() + timeoutNs;
        while (true)
        {
            final CncReader ready = CncReader.mapIfReady(cnc.toFile());
            if (null != ready)
            {
                cncReader = ready;
                counters = ready.countersReader();
                return;
            }
            if (!manager.isAlive())
            {
                throw new AssertionError("Manager exited with " + manager.exitValue() + "\n" + dump());
            }
            if (System.nanoTime() - deadlineNs > 0)
            {
                throw new AssertionError("Manager not ready in time\n" + dump());
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
        }
    }

    private Process start(final String name, final List<String> args) throws IOException
    {
        final List<String> jvm = new ArrayList<>(List.of("-Xmx512m"));
        jvm.addAll(jvmArgs);
        final List<String> command = ChildJvm.orbitkvCommand(jvm, args);
        final int index = started.size();
        // logs live under target/ so that they survive clean-up and can be dumped after a failure
        final Path logs = Files.createDirectories(Paths.get("target", "e2e-logs"));
        final Path out = logs.resolve(dir.getFileName() + "-" + index + "-" + name + ".out");
        final Path err = logs.resolve(dir.getFileName() + "-" + index + "-" + name + ".err");
        final Process process = new ProcessBuilder(command)
            .redirectOutput(out.toFile())
            .redirectError(err.toFile())
            .start();
        started.add(new Started(name + "#" + index + " " + String.join(" ", args), process, out, err));
        return process;
    }

    /**
     * @return everything the Manager of this directory printed on stdout so far.
     */
    public String managerOutput() throws IOException
    {
        for (int i = started.size() - 1; i >= 0; i--)
        {
            if (started.get(i).process() == manager)
            {
                return Files.readString(started.get(i).out(), StandardCharsets.UTF_8);
            }
        }
        return "";
    }

    public String dump()
    {
        final StringBuilder builder = new StringBuilder();
        for (final Started s : started)
        {
            builder.append("==== ").append(s.name()).append(" alive=").append(s.process().isAlive()).append('\n');
            try
            {
                builder.append("-- stdout\n").append(tail(Files.readString(s.out()))).append('\n');
                builder.append("-- stderr\n").append(tail(Files.readString(s.err()))).append('\n');
            }
            catch (final IOException ex)
            {
                builder.append(ex).append('\n');
            }
        }
        return builder.toString();
    }

    private static String tail(final String text)
    {
        return text.length() > 4000 ? "..." + text.substring(text.length() - 4000) : text;
    }

    public void close() throws IOException
    {
        for (final Started s : started)
        {
            s.process().destroyForcibly();
        }
        for (final Started s : started)
        {
            try
            {
                s.process().waitFor(10, TimeUnit.SECONDS);
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
        }
        if (cncReader != null)
        {
            // Unmapped: a reader of the counters afterwards (a failure report) must not touch the old mapping.
            counters = null;
            cncReader.close();
            cncReader = null;
        }
        if (!Files.exists(dir))
        {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir))
        {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }
}
