package io.orbitkv.manager.cli;

import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;

/**
 * The {@code orbitkv} command: one entry point, one subcommand per job. {@code scripts/orbitkv} builds if
 * needed, finds a JDK 25 and runs this class with the project's JVM flags.
 *
 * <p>{@link #main} builds only the subcommand it runs: picocli reflects over every registered command class, and
 * the signatures of some (JSON output, etcd, benchmarks) would load Jackson, gRPC or Aeron into a call that needs
 * none of them. The other subcommands appear in the usage by name and description only, read from their
 * {@link Command} annotations without reflecting over their members.
 */
@Command(
    name = "orbitkv",
    mixinStandardHelpOptions = true,
    version = "orbitkv 0.1.0",
    description = "KV-cache manager for LLM inference engines.")
public final class OrbitKvCli implements Runnable
{
    /** Every subcommand, in usage order; {@code help} is added last by {@link #register}. */
    static final List<Class<?>> SUBCOMMANDS = List.of(
        ManagerCommand.class,
        StatCommand.class,
        ClientCommand.class,
        HarnessPointer.class,
        MembersCommand.class,
        PlacementCommand.class,
        SsdCommand.class,
        AotTrainingCommand.class);

    /** Held so the setting is not garbage collected with the logger: grpc logs transport chatter at INFO. */
    private static final java.util.logging.Logger GRPC_LOGGER = java.util.logging.Logger.getLogger("io.grpc");

    @CommandLine.Spec
    private CommandSpec spec;

    /** Only {@link #commandLine()} and {@link #commandLineFor} build one: alone it would have no subcommands. */
    private OrbitKvCli()
    {
    }

    public static void main(final String[] args)
    {
        GRPC_LOGGER.setLevel(java.util.logging.Level.WARNING);
        System.exit(commandLineFor(args).execute(args));
    }

    /**
     * The command line with every subcommand fully built, as tests and in-process callers use it.
     *
     * @return a new command line.
     */
    public static CommandLine commandLine()
    {
        return register(null);
    }

    /**
     * The command line for one invocation: the subcommand named by the first positional argument (or by the one
     * after {@code help}) is built in full, the others only as names in the usage.
     *
     * @param args the invocation's arguments.
     * @return a new command line.
     */
    static CommandLine commandLineFor(final String[] args)
    {
        String target = "";
        for (int i = 0; i < args.length; i++)
        {
            if (!args[i].startsWith("-"))
            {
                target = "help".equals(args[i]) && i + 1 < args.length ? args[i + 1] : args[i];
                break;
            }
        }
        return register(target);
    }

    private static CommandLine register(final String onlyTarget)
    {
        final CommandLine commandLine = new CommandLine(new OrbitKvCli());
        for (final Class<?> type : SUBCOMMANDS)
        {
            final Command command = type.getAnnotation(Command.class);
            if (null == onlyTarget || command.name().equals(onlyTarget))
            {
                commandLine.addSubcommand(command.name(), type);
            }
            else
            {
                final CommandSpec placeholder = CommandSpec.create().name(command.name());
                placeholder.usageMessage().description(command.description()).hidden(command.hidden());
                commandLine.addSubcommand(command.name(), new CommandLine(placeholder));
            }
        }
        commandLine.addSubcommand("help", CommandLine.HelpCommand.class);
        return commandLine;
    }

    public void run()
    {
        spec.commandLine().usage(System.out);
    }

    /**
     * {@code bench} in this command's usage: the benchmarks are the bench-harness module's ({@code
     * io.orbitkv.bench.BenchMain}), never in the Manager's jar; {@code scripts/orbitkv bench ...} runs them there.
     * Called here, it says so and fails.
     */
    @Command(
        name = "bench",
        description = {
            "Benchmarks, each printed as a ratio to an anchor measured in the same run.",
            "  Run through scripts/orbitkv bench ... (the bench-harness module)."
        })
    static final class HarnessPointer implements Callable<Integer>
    {
        @CommandLine.Spec
        private CommandSpec spec;

        @CommandLine.Unmatched
        private List<String> args;

        public Integer call()
        {
            spec.commandLine().getErr().println(
                "orbitkv bench: the benchmarks are not in the Manager's jar; run scripts/orbitkv bench ... " +
                "(module bench-harness, main io.orbitkv.bench.BenchMain)");
            return 2;
        }
    }
}
