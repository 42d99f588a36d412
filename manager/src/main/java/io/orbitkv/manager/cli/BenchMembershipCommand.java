package io.orbitkv.manager.cli;

import io.orbitkv.manager.membership.MembershipBench;
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

    @Option(names = "--managers", description = "Managers joining together (default: ${DEFAULT-VALUE}).",
        defaultValue = "16")
    int managers;

    @Option(names = "--rounds", description = "Repetitions of single join and join/leave (default: ${DEFAULT-VALUE}).",
        defaultValue = "10")
    int rounds;

    @Option(names = "--steady-secs", description = "Steady-state window (default: ${DEFAULT-VALUE}).",
        defaultValue = "60")
    int steadySecs;

    public Integer call() throws InterruptedException
    {
        new MembershipBench(etcdEndpoints, spec.commandLine().getOut()).run(managers, rounds, steadySecs);
        return 0;
    }
}
