package io.orbitkv.manager.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code orbitkv} command: one entry point, one subcommand per job. {@code scripts/orbitkv} builds if
 * needed, finds a JDK 25 and runs this class with the project's JVM flags.
 */
@Command(
    name = "orbitkv",
    mixinStandardHelpOptions = true,
    version = "orbitkv 0.1.0",
    description = "KV-cache manager for LLM inference engines.",
    subcommands = {
        ManagerCommand.class,
        StatCommand.class,
        ClientCommand.class,
        BenchCommand.class,
        MembersCommand.class,
        CommandLine.HelpCommand.class
    })
public final class OrbitKvCli implements Runnable
{
    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    /** Held so the setting is not garbage collected with the logger: grpc logs transport chatter at INFO. */
    private static final java.util.logging.Logger GRPC_LOGGER = java.util.logging.Logger.getLogger("io.grpc");

    public static void main(final String[] args)
    {
        GRPC_LOGGER.setLevel(java.util.logging.Level.WARNING);
        System.exit(new CommandLine(new OrbitKvCli()).execute(args));
    }

    public void run()
    {
        spec.commandLine().usage(System.out);
    }
}
