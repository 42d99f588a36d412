package io.orbitkv.manager.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.orbitkv.manager.Configuration;
import io.orbitkv.manager.ManagerContext;
import io.orbitkv.manager.ManagerTestSupport;
import java.io.File;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code orbitkv manager} and {@link Configuration} are one scheme: every flag has a property, the CLI's defaults are
 * Configuration's, and a flag wins over a property, which wins over the default. The tests that set system properties
 * do so in a child JVM, as a user does, so no other test's context sees them.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
final class ManagerCommandConfigurationTest
{
    @TempDir
    Path tmp;

    @Test
    void shouldListEveryFlagWithItsPropertyAndEveryPropertyInTheTable()
    {
        final CommandLine cli = new CommandLine(new ManagerCommand());
        final Set<String> flags = new TreeSet<>();
        for (final CommandLine.Model.OptionSpec option : cli.getCommandSpec().options())
        {
            if (!option.usageHelp() && !option.versionHelp())
            {
                flags.add(option.longestName());
            }
        }
        final Set<String> tableFlags = new TreeSet<>();
        final Set<String> tableProperties = new HashSet<>();
        for (final ManagerCommand.Setting setting : ManagerCommand.SETTINGS)
        {
            assertTrue(tableFlags.add(setting.flag()), "listed twice: " + setting.flag());
            assertNotNull(setting.property(), setting.flag() + " has no property");
            tableProperties.add(setting.property());
            if (!"--no-pool-pretouch".equals(setting.flag()))
            {
                // one naming rule: the flag's words joined by dots under orbitkv.manager.
                assertEquals("orbitkv.manager." + setting.flag().substring(2).replace('-', '.'), setting.property());
            }
        }
        assertEquals(flags, tableFlags, "flags of orbitkv manager vs ManagerCommand.SETTINGS");

        final Set<String> properties = new TreeSet<>();
        for (final Field field : Configuration.class.getFields())
        {
            if (Modifier.isStatic(field.getModifiers()) && field.getName().endsWith("_PROP_NAME"))
            {
                properties.add(staticString(field));
            }
        }
        final Set<String> listed = new TreeSet<>(tableProperties);
        for (final String property : ManagerCommand.PROPERTIES_WITHOUT_FLAG)
        {
            assertFalse(tableProperties.contains(property), property + " has a flag and is listed as without one");
            listed.add(property);
        }
        assertEquals(properties, listed, "Configuration's *_PROP_NAME vs SETTINGS and PROPERTIES_WITHOUT_FLAG");
        for (final String property : properties)
        {
            assertTrue(property.startsWith("orbitkv.manager."), property);
        }
    }

    @Test
    void shouldChooseSsdDirectReadsAutomaticallyUnlessToldOnOrOff()
    {
        final ManagerCommand byDefault = new ManagerCommand();
        new CommandLine(byDefault).parseArgs();
        assertEquals(Configuration.SsdDirectReads.AUTO, byDefault.context().ssdDirectReads());
        final ManagerCommand off = new ManagerCommand();
        new CommandLine(off).parseArgs("--ssd-direct-reads=off");
        assertEquals(Configuration.SsdDirectReads.OFF, off.context().ssdDirectReads());
        final ManagerCommand on = new ManagerCommand();
        new CommandLine(on).parseArgs("--ssd-direct-reads", "on");
        assertEquals(Configuration.SsdDirectReads.ON, on.context().ssdDirectReads());
        final IllegalArgumentException bad = assertThrows(IllegalArgumentException.class,
            () -> Configuration.parseSsdDirectReads("--ssd-direct-reads", "sometimes"));
        assertTrue(bad.getMessage().contains("auto, on or off"), bad.getMessage());
    }

    @Test
    void shouldShowDefaultsThatAreTheContextsOwn() throws Exception
    {
        // Every flag given its shown default must leave the context exactly as the context starts without flags.
        final List<String> args = new ArrayList<>();
        final CommandLine.Model.CommandSpec spec = new CommandLine(new ManagerCommand()).getCommandSpec();
        for (final ManagerCommand.Setting setting : ManagerCommand.SETTINGS)
        {
            if (null == setting.defaultText())
            {
                continue;
            }
            final Class<?> type = spec.findOption(setting.flag()).type();
            if (boolean.class == type || Boolean.class == type)
            {
                if (Boolean.parseBoolean(setting.defaultText()))
                {
                    args.add(setting.flag());
                }
                continue;
            }
            args.add(setting.flag() + "=" + setting.defaultText());
        }
        final ManagerCommand command = new ManagerCommand();
        new CommandLine(command).parseArgs(args.toArray(new String[0]));
        final ManagerContext fromFlags = command.context();
        final ManagerContext own = new ManagerContext();
        for (final Field field : ManagerContext.class.getDeclaredFields())
        {
            if (Modifier.isStatic(field.getModifiers()) || "maxBlockBytesSet".equals(field.getName()))
            {
                continue;
            }
            field.setAccessible(true);
            assertEquals(field.get(own), field.get(fromFlags), field.getName() + " from " + args);
        }

        final String help = new CommandLine(new ManagerCommand()).getUsageMessage().replaceAll("\\s+", " ");
        assertTrue(help.contains("DRAM pool size, multiple of 2m (default: 1g)."), help);
        assertTrue(help.contains("Lease TTL of the member record, at least 10 (default: 10)."), help);
        assertTrue(help.contains("(default: on-evict)") && help.contains("(default: 60s)"), help);
    }

    @Test
    void shouldPassAPropertyToACliStartedManagerUnlessAFlagOverridesIt() throws Exception
    {
        final File dir = ManagerTestSupport.newDir();
        final Path log = tmp.resolve("manager.log");
        final Process process = ChildJvm.startOrbitkv(log.toFile(),
            List.of("-D" + Configuration.MAX_CLIENTS_PROP_NAME + "=7", "-D" + Configuration.CLIENT_TIMEOUT_PROP_NAME + "=3s",
                "-D" + Configuration.IDLE_SLEEP_PROP_NAME + "=false"),
            List.of("manager", "--dir", dir.getPath(), "--pool-bytes", "4m", "--pool-pretouch=off",
                "--client-timeout", "2s"));
        try
        {
            final String out = awaitOutput(process, log, "ready ");
            // no --max-clients: the property's 7, not the CLI's old literal 64
            assertTrue(out.contains(" 7 client slots"), out);
            // --client-timeout 2s wins over the property's 3s
            assertTrue(out.contains("client timeout 2000 ms"), out);
            assertTrue(out.contains("never sleeps"), out);
        }
        finally
        {
            process.destroy();
            assertTrue(process.waitFor(60, TimeUnit.SECONDS), "Manager did not stop");
            ManagerTestSupport.deleteDir(dir);
        }
    }

    @Test
    void shouldShowThePropertysValueAsTheDefaultInTheHelp() throws Exception
    {
        final Run run = run(List.of("-D" + Configuration.MAX_CLIENTS_PROP_NAME + "=7",
            "-D" + Configuration.CLUSTER_NAME_PROP_NAME + "=alpha",
            "-D" + Configuration.IDLE_SLEEP_PROP_NAME + "=false"), List.of("manager", "--help"));
        assertEquals(0, run.exit, run.output);
        final String help = run.output.replaceAll("\\s+", " ");
        assertTrue(help.contains("Client slots (default: 7)."), help);
        assertTrue(help.contains("/orbitkv/v1/<cluster>/ (default: alpha)."), help);
        assertTrue(help.contains("for latency) (default: false)."), help);
        assertTrue(help.contains("DRAM pool size, multiple of 2m (default: 1g)."), help);
    }

    @Test
    void shouldRefuseABadPropertyNamingItAndStartNoManager() throws Exception
    {
        final File dir = ManagerTestSupport.newDir();
        try
        {
            final Run run = run(List.of("-D" + Configuration.POOL_BYTES_PROP_NAME + "=lots"),
                List.of("manager", "--dir", dir.getPath(), "--pool-pretouch=off"));
            assertEquals(2, run.exit, run.output);
            assertTrue(run.output.contains("orbitkv.manager.pool.bytes must be a size") &&
                run.output.contains("'lots'"), run.output);
            assertFalse(new File(dir, "cnc.dat").exists(), "a Manager started");

            // a property without a flag fails the same way, from the context
            final Run slack = run(List.of("-D" + Configuration.AGENT_TIMER_SLACK_NS_PROP_NAME + "=soon"),
                List.of("manager", "--dir", dir.getPath(), "--pool-pretouch=off"));
            assertEquals(2, slack.exit, slack.output);
            assertTrue(slack.output.contains("orbitkv.manager.agent.timer.slack.ns must be an integer: 'soon'"),
                slack.output);
            assertFalse(new File(dir, "cnc.dat").exists(), "a Manager started");
        }
        finally
        {
            ManagerTestSupport.deleteDir(dir);
        }
    }

    @Test
    void shouldRefuseABadFlagNamingItAndStartNoManager()
    {
        final File dir = ManagerTestSupport.newDir();
        try
        {
            final StringWriter text = new StringWriter();
            final CommandLine cli = OrbitKvCli.commandLine();
            cli.setOut(new PrintWriter(text, true));
            cli.setErr(new PrintWriter(text, true));
            assertEquals(2, cli.execute("manager", "--dir", dir.getPath(), "--max-clients", "many"), text.toString());
            assertTrue(text.toString().contains("--max-clients must be an integer: 'many'"), text.toString());
            assertEquals(2, cli.execute("manager", "--dir", dir.getPath(), "--idle-sleep-max", "long"), text.toString());
            assertTrue(text.toString().contains("--idle-sleep-max must be a duration such as 500ms or 5s: 'long'"),
                text.toString());
            // in range only once the context is concluded: a configuration error rather than a usage error
            assertEquals(1, cli.execute("manager", "--dir", dir.getPath(), "--idle-linger", "10001us"), text.toString());
            assertTrue(text.toString().contains("--idle-linger must be in [0, 10ms]: 10001000ns"), text.toString());
            assertFalse(new File(dir, "cnc.dat").exists(), "a Manager started");
        }
        finally
        {
            ManagerTestSupport.deleteDir(dir);
        }
    }

    private record Run(int exit, String output)
    {
    }

    private Run run(final List<String> jvmArgs, final List<String> args) throws Exception
    {
        final Path log = tmp.resolve("run-" + System.nanoTime() + ".log");
        final Process process = ChildJvm.startOrbitkv(log.toFile(), jvmArgs, args);
        if (!process.waitFor(60, TimeUnit.SECONDS))
        {
            process.destroyForcibly();
            throw new AssertionError("orbitkv " + args + " did not exit: " + read(log));
        }
        return new Run(process.exitValue(), read(log));
    }

    private static String awaitOutput(final Process process, final Path log, final String marker)
    {
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true)
        {
            final String out = read(log);
            if (out.contains(marker))
            {
                return out;
            }
            if (!process.isAlive() || System.nanoTime() > deadlineNs)
            {
                throw new AssertionError("no '" + marker + "' from the Manager: " + out);
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
        }
    }

    private static String read(final Path file)
    {
        try
        {
            return Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "";
        }
        catch (final IOException ex)
        {
            return ex.toString();
        }
    }

    private static String staticString(final Field field)
    {
        try
        {
            return Objects.requireNonNull((String)field.get(null), field.getName());
        }
        catch (final IllegalAccessException ex)
        {
            throw new AssertionError(ex);
        }
    }
}
