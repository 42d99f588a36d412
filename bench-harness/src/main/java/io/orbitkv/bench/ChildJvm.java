package io.orbitkv.bench;

import java.io.File;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import io.orbitkv.manager.cli.OrbitKvCli;

/**
 * Starts another OrbitKV JVM (a Manager, a client, a bench responder) as a separate OS process with this JVM's
 * java binary, class path and JVM flags, so every process of a bench runs exactly the
 * same build with the same flags. The child's output goes to a log file the caller names.
 */
final class ChildJvm
{
    private ChildJvm()
    {
    }

    /**
     * Command line that runs the given {@code orbitkv} arguments in a new JVM, dispatched as {@code scripts/orbitkv}
     * does: {@code bench ...} to {@link BenchMain}, every other subcommand to {@link OrbitKvCli}.
     *
     * @param extraJvmArgs JVM options for this child only (e.g. {@code -Xlog:gc}); may be empty.
     * @param args         orbitkv arguments, e.g. {@code manager --dir ...}.
     * @return the command.
     */
    public static List<String> orbitkvCommand(final List<String> extraJvmArgs, final List<String> args)
    {
        return command(extraJvmArgs, mainClassFor(args), args);
    }

    /**
     * Command line that runs a main class of this class path in a new JVM with this JVM's java binary and flags.
     *
     * @param extraJvmArgs JVM options for this child only; may be empty.
     * @param mainClass    the class whose {@code main} runs.
     * @param args         its arguments.
     * @return the command.
     */
    static List<String> command(final List<String> extraJvmArgs, final Class<?> mainClass, final List<String> args)
    {
        final List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        for (final String arg : ManagementFactory.getRuntimeMXBean().getInputArguments())
        {
            // Our own flags (the pom's orbitkv.jvm.flags, inline hints included) are inherited; debugger agents and
            // per-run options of the parent are not.
            if (arg.startsWith("--add-") || arg.startsWith("--enable-native-access") ||
                arg.startsWith("--sun-misc-unsafe-memory-access") || arg.startsWith("-XX:CompileCommand="))
            {
                command.add(arg);
            }
        }
        command.addAll(extraJvmArgs);
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(mainClass.getName());
        command.addAll(args);
        return command;
    }

    static Class<?> mainClassFor(final List<String> args)
    {
        return !args.isEmpty() && "bench".equals(args.get(0)) ? BenchMain.class : OrbitKvCli.class;
    }

    /**
     * Start {@code orbitkv} with the given arguments in a new JVM (see {@link #orbitkvCommand}).
     *
     * @param log          file receiving the child's stdout and stderr.
     * @param extraJvmArgs JVM options for this child only.
     * @param args         orbitkv arguments.
     * @return the started process.
     * @throws IOException if the process cannot be started.
     */
    public static Process startOrbitkv(final File log, final List<String> extraJvmArgs, final List<String> args)
        throws IOException
    {
        return new ProcessBuilder(orbitkvCommand(extraJvmArgs, args))
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log))
            .start();
    }
}
