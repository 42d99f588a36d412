package io.orbitkv.manager.cli;

import io.orbitkv.codecs.ShardPlacement;
import io.orbitkv.manager.membership.CoverageReport;
import io.orbitkv.manager.membership.EtcdGateway;
import io.orbitkv.manager.membership.MembershipConfiguration;
import io.orbitkv.manager.membership.PlacementAdmin;
import io.orbitkv.manager.membership.PlacementTransition;
import io.orbitkv.manager.membership.ShardMove;
import java.io.PrintWriter;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code orbitkv placement}: change a cluster's placement online ({@code set}) and follow the change
 * ({@code status}). {@code set} writes the desired placement; the elected reconciler inside one Manager moves the
 * shards (docs/membership.md).
 *
 * <p>Exit codes: 0 done (or stable), 1 etcd unreachable, no placement installed, unreadable keys, or
 * {@code --wait-stable} timed out, 2 usage.
 */
@Command(
    name = "placement",
    mixinStandardHelpOptions = true,
    description = "Change a cluster's catalog placement online (set) and follow the change (status).",
    subcommands = {PlacementCommand.Set.class, PlacementCommand.Status.class})
public final class PlacementCommand implements Runnable
{
    /** Pause between two reads of {@code status --wait-stable}. */
    static final long WAIT_POLL_MS = 200;

    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    public void run()
    {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    /**
     * {@code orbitkv placement set}: write the desired placement.
     */
    @Command(name = "set", mixinStandardHelpOptions = true,
        description = "Ask for a new placement: written to etcd with the next generation; the reconciler moves the " +
            "shards. A request equal to the placement the cluster already heads to prints 'unchanged'.")
    static final class Set implements Callable<Integer>
    {
        @CommandLine.Spec
        private CommandLine.Model.CommandSpec spec;

        @CommandLine.Mixin
        EtcdConnection connection = new EtcdConnection();

        @Option(names = "--catalog-nodes", required = true, description = "The 1-16 catalog node ids, e.g. a,b,c,d, " +
            "optionally with failure domains and capacity weights (a@rack1=2,...).")
        String catalogNodes;

        @Option(names = "--placement-seed", defaultValue = "", description = "Agreed seed of the rendezvous scores " +
            "(default: none).")
        String placementSeed;

        @Option(names = "--catalog-replicas", description = "Copies of each shard, " + ShardPlacement.MIN_REPLICAS +
            "-" + ShardPlacement.MAX_REPLICAS + " (default: ${DEFAULT-VALUE}).",
            defaultValue = "" + io.orbitkv.manager.Configuration.CATALOG_REPLICAS_DEFAULT)
        int catalogReplicas;

        public Integer call()
        {
            final PrintWriter out = spec.commandLine().getOut();
            final PrintWriter err = spec.commandLine().getErr();
            final ShardPlacement placement;
            try
            {
                MembershipConfiguration.checkClusterName(connection.clusterName);
                placement = ShardPlacement.parse(catalogNodes, catalogReplicas).withSeed(placementSeed);
            }
            catch (final IllegalArgumentException ex)
            {
                err.println("orbitkv placement set: " + ex.getMessage());
                return 2;
            }
            try (EtcdGateway etcd = connection.open())
            {
                final PlacementAdmin.SetResult result = PlacementAdmin.setDesired(etcd, connection.clusterName, placement);
                out.println(result.written() ?
                    "desired placement generation " + result.generation() + ": " + PlacementAdmin.describe(placement) :
                    "unchanged: the cluster already heads to " + PlacementAdmin.describe(placement) + " (generation " +
                    result.generation() + ")");
                out.flush();
                return 0;
            }
            catch (final RuntimeException ex)
            {
                err.println("orbitkv placement set: " + connection.describe(ex));
                return 1;
            }
        }
    }

    /**
     * {@code orbitkv placement status}: installed, desired, the transition and the reconciler.
     */
    @Command(name = "status", mixinStandardHelpOptions = true,
        description = "Print the installed and desired placement, the transition in flight (each move: shard, phase, " +
            "old copies -> new copies, handoff), the reconciler, and 'stable' or 'moving'.")
    static final class Status implements Callable<Integer>
    {
        @CommandLine.Spec
        private CommandLine.Model.CommandSpec spec;

        @CommandLine.Mixin
        EtcdConnection connection = new EtcdConnection();

        @Option(names = "--json", description = "Print one JSON object instead of text.")
        boolean json;

        @Option(names = "--wait-stable", paramLabel = "SECONDS", description = "Read again until the placement is " +
            "stable, for at most this many seconds; exit 1 if it is not by then.", defaultValue = "0")
        long waitStableSecs;

        public Integer call()
        {
            final PrintWriter out = spec.commandLine().getOut();
            final PrintWriter err = spec.commandLine().getErr();
            try
            {
                MembershipConfiguration.checkClusterName(connection.clusterName);
                if (waitStableSecs < 0)
                {
                    throw new IllegalArgumentException("--wait-stable must be 0 or more seconds: " + waitStableSecs);
                }
            }
            catch (final IllegalArgumentException ex)
            {
                err.println("orbitkv placement status: " + ex.getMessage());
                return 2;
            }
            try (EtcdGateway etcd = connection.open())
            {
                final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(waitStableSecs);
                PlacementAdmin.Status status = PlacementAdmin.status(etcd, connection.clusterName);
                while (waitStableSecs > 0 && !status.isStable() && System.nanoTime() - deadlineNs < 0)
                {
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(WAIT_POLL_MS));
                    status = PlacementAdmin.status(etcd, connection.clusterName);
                }
                if (json)
                {
                    out.println(PlacementAdmin.toJson(status));
                }
                else
                {
                    print(out, connection.clusterName, status);
                }
                out.flush();
                if (null == status.installed())
                {
                    return 1;
                }
                if (waitStableSecs > 0 && !status.isStable())
                {
                    err.println("orbitkv placement status: not stable after " + waitStableSecs + " s");
                    return 1;
                }
                return 0;
            }
            catch (final RuntimeException ex)
            {
                err.println("orbitkv placement status: " + connection.describe(ex));
                return 1;
            }
        }
    }

    static void print(final PrintWriter out, final String clusterName, final PlacementAdmin.Status status)
    {
        out.println("cluster '" + clusterName + "' placement at etcd revision " + status.revision());
        out.println("installed: " + (null == status.installed() ? "none" :
            "generation " + status.generation() + ", " + PlacementAdmin.describe(status.installed())));
        out.println("desired: " + (null == status.desired() ? "none" :
            "generation " + status.desiredGeneration() + ", " + PlacementAdmin.describe(status.desired())));
        final PlacementTransition transition = status.transition();
        if (null == transition)
        {
            out.println("transition: none");
        }
        else
        {
            out.println("transition: " + transition.fromGeneration() + " -> " + transition.toGeneration() + " to " +
                PlacementAdmin.describe(transition.target()) + ", " + transition.moveList().size() + " shard move(s), " +
                transition.inFlight() + " in flight");
            out.printf("  %-6s %-10s %-28s %s%n", "SHARD", "PHASE", "COPIES (old -> new)", "HANDOFF / WAITING FOR");
            for (final ShardMove move : transition.moveList())
            {
                final List<String> from = null == status.installed() ? List.of() :
                    PlacementAdmin.copiesOf(status.installed(), move.shard());
                final List<String> to = PlacementAdmin.copiesOf(transition.target(), move.shard());
                final String copies = String.join(",", from) + " -> " + String.join(",", to);
                final List<String> waiting = status.awaitingCoverage(move.shard());
                final String detail = switch (move.phase())
                {
                    case PENDING -> "";
                    case PREPARE -> waiting.isEmpty() ? "coverage complete" :
                        "coverage from " + String.join(",", waiting);
                    default -> move.handoff().toString();
                };
                out.printf("  %-6d %-10s %-28s %s%n", move.shard(), move.phase(), copies, detail);
            }
        }
        out.println("reconciler: " + (null == status.reconciler() ? "none" : status.reconciler()));
        for (final Map.Entry<String, CoverageReport> report : status.coverage().entrySet())
        {
            out.println("coverage of '" + report.getKey() + "': generation " + report.getValue().generation() +
                ", complete shards " + report.getValue().completeShards().keySet());
        }
        for (final Map.Entry<String, String> error : status.errors().entrySet())
        {
            out.println("UNREADABLE " + error.getKey() + ": " + error.getValue());
        }
        for (final Map.Entry<String, String> error : status.coverageErrors().entrySet())
        {
            out.println("UNREADABLE " + error.getKey() + " (ignored by the reconciler): " + error.getValue());
        }
        out.println(status.isStable() ? "stable" : "moving");
    }
}
