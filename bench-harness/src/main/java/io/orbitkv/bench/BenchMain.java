package io.orbitkv.bench;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;

/**
 * The {@code orbitkv} command as the benchmarks see it: {@code scripts/orbitkv bench ...} (and
 * {@code scripts/orbitkv help bench}) run this class with the whole argument list, so the command tree under
 * {@code bench}, its usage and its errors read exactly as {@code orbitkv bench ...}. The product's own
 * subcommands live in {@link io.orbitkv.manager.cli.OrbitKvCli}, which lists {@code bench} by name only.
 */
@Command(
    name = "orbitkv",
    mixinStandardHelpOptions = true,
    version = "orbitkv 0.1.0",
    description = "Benchmarks of the KV-cache manager for LLM inference engines.",
    subcommands = { BenchCommand.class, CommandLine.HelpCommand.class })
public final class BenchMain implements Runnable
{
    /** Held so the setting is not garbage collected with the logger: grpc logs transport chatter at INFO. */
    private static final java.util.logging.Logger GRPC_LOGGER = java.util.logging.Logger.getLogger("io.grpc");

    @CommandLine.Spec
    private CommandSpec spec;

    private BenchMain()
    {
    }

    public static void main(final String[] args)
    {
        GRPC_LOGGER.setLevel(java.util.logging.Level.WARNING);
        System.exit(commandLine().execute(args));
    }

    /**
     * The command line with every benchmark built, as tests and in-process callers use it.
     *
     * @return a new command line.
     */
    public static CommandLine commandLine()
    {
        return new CommandLine(new BenchMain());
    }

    public void run()
    {
        spec.commandLine().usage(System.out);
    }
}
