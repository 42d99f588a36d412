package io.orbitkv.manager.cli;

import java.io.File;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Command line of another OrbitKV JVM (a Manager, a client, {@code stat}) for the end-to-end tests: this JVM's java
 * binary, class path and JVM flags, so every process of a test runs exactly the same build with the same flags.
 */
public final class ChildJvm
{
    private ChildJvm()
    {
    }

    /**
     * Command line that runs {@link OrbitKvCli} with the given arguments in a new JVM.
     *
     * @param extraJvmArgs JVM options for this child only (e.g. {@code -Xlog:gc}); may be empty.
     * @param args         orbitkv arguments, e.g. {@code manager --dir ...}.
     * @return the command.
     */
    public static List<String> orbitkvCommand(final List<String> extraJvmArgs, final List<String> args)
    {
        return javaCommand(extraJvmArgs, OrbitKvCli.class.getName(), args);
    }

    /**
     * Command line that runs a main class of this class path (e.g. a test's engine) in a new JVM.
     *
     * @param extraJvmArgs JVM options for this child only; may be empty.
     * @param mainClass    the class to run.
     * @param args         its arguments.
     * @return the command.
     */
    public static List<String> javaCommand(final List<String> extraJvmArgs, final String mainClass, final List<String> args)
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
        command.add(mainClass);
        command.addAll(args);
        return command;
    }

    /**
     * Start {@link OrbitKvCli} in a new JVM, its output appended to a file.
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
