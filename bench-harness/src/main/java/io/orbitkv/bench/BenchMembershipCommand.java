package io.orbitkv.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code orbitkv bench membership}: join time, view convergence and steady-state etcd call rate against a real etcd
 * (start one with {@code scripts/etcd start}).
 */
@Command(
    name = "membership",
    mixinStandardHelpOptions = true,
    description = "Join time (start -> registered -> complete view) for one and for N Managers, view convergence " +
        "after a join/leave, and etcd calls per minute in steady state.")
public final class BenchMembershipCommand implements Callable<Integer>
{
    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    @Option(names = "--etcd-endpoints", required = true, description = "etcd client URLs.")
    String etcdEndpoints;

    @picocli.CommandLine.Mixin
    io.orbitkv.manager.cli.EtcdAuthOptions etcdAuth = new io.orbitkv.manager.cli.EtcdAuthOptions();

    @Option(names = "--managers", description = "Managers joining together (default: ${DEFAULT-VALUE}).",
        defaultValue = "16")
    int managers;

    @Option(names = "--rounds", description = "Repetitions of single join and join/leave (default: ${DEFAULT-VALUE}).",
        defaultValue = "10")
    int rounds;

    @Option(names = "--steady-secs", description = "Steady-state window (default: ${DEFAULT-VALUE}).",
        defaultValue = "60")
    int steadySecs;

    @Option(names = "--json", description = "Also write the results as JSON to this file.")
    File jsonFile;

    public Integer call() throws Exception
    {
        final Map<String, Object> results =
            new MembershipBench(etcdEndpoints, etcdAuth.security(), spec.commandLine().getOut()).run(managers, rounds, steadySecs);
        if (null != jsonFile)
        {
            new ObjectMapper().writerWithDefaultPrettyPrinter().writeValue(jsonFile, results);
            spec.commandLine().getOut().println("results written to " + jsonFile);
        }
        return 0;
    }
}
