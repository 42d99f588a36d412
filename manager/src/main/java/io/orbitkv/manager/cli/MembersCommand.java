package io.orbitkv.manager.cli;

import io.orbitkv.codecs.ShardPlacement;
import io.orbitkv.codecs.StateKeyShard;
import io.orbitkv.manager.membership.EtcdGateway;
import io.orbitkv.manager.membership.MemberRecord;
import io.orbitkv.manager.membership.MemberSnapshot;
import io.orbitkv.manager.membership.MembershipConfiguration;
import io.orbitkv.manager.membership.PlacementTransition;
import java.io.PrintWriter;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code orbitkv members}: one consistent snapshot of a cluster's members (node id, epoch, runtime UUID, endpoints,
 * lease TTL left) and its shard table with the placement fingerprint: each shard's copies in rank order (the host
 * first), those whose node is not registered marked, and the shards unavailable (no copy registered) or with reduced
 * failure coverage (fewer registered copies than the placement asks).
 *
 * <p>Exit codes: 0 printed, 1 etcd unreachable or the cluster has no placement, 2 usage.
 */
@Command(
    name = "members",
    mixinStandardHelpOptions = true,
    description = "List a cluster's members and each shard's copies (host first), read from etcd.")
public final class MembersCommand implements Callable<Integer>
{
    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    @CommandLine.Mixin
    EtcdConnection connection = new EtcdConnection();

    public Integer call()
    {
        final PrintWriter out = spec.commandLine().getOut();
        final PrintWriter err = spec.commandLine().getErr();
        try
        {
            MembershipConfiguration.checkClusterName(connection.clusterName);
        }
        catch (final IllegalArgumentException ex)
        {
            err.println("orbitkv members: " + ex.getMessage());
            return 2;
        }
        try (EtcdGateway etcd = connection.open())
        {
            final MemberSnapshot snapshot = MemberSnapshot.read(etcd, connection.clusterName, null);
            out.println("cluster '" + connection.clusterName + "' at etcd revision " + snapshot.revision() + ": " +
                snapshot.members().size() + " member(s)");
            out.printf("%-20s %8s  %-36s  %-24s %-24s %10s%n",
                "NODE", "EPOCH", "RUNTIME UUID", "PEER ENDPOINT", "TRANSFER ENDPOINT", "TTL LEFT");
            for (final Map.Entry<String, MemberRecord> entry : snapshot.members().entrySet())
            {
                final MemberRecord record = entry.getValue();
                final long leaseId = snapshot.leaseIds().get(entry.getKey());
                String ttlLeft;
                try
                {
                    final long ttl = etcd.timeToLive(leaseId).getTTL();
                    ttlLeft = ttl < 0 ? "expired" : ttl + " s";
                }
                catch (final RuntimeException ex)
                {
                    ttlLeft = "?";
                }
                out.printf("%-20s %8d  %-36s  %-24s %-24s %10s%n", record.nodeId(), record.epoch(),
                    record.runtimeUuid(), record.peerEndpoint(), record.transferEndpoint(), ttlLeft);
                out.printf("%-20s started %s, protocol %d, lease %x%n", "",
                    Instant.ofEpochMilli(record.startTimeMs()), record.protocolVersion(), leaseId);
            }
            for (final Map.Entry<String, String> rejected : snapshot.rejected().entrySet())
            {
                out.println("INVALID RECORD " + rejected.getKey() + ": " + rejected.getValue());
            }

            final ShardPlacement placement = snapshot.placement();
            if (null == placement)
            {
                out.println(null == snapshot.placementError() ?
                    "no placement installed at " + MembershipConfiguration.placementKey(connection.clusterName) :
                    "UNREADABLE placement: " + snapshot.placementError());
                out.flush();
                return 1;
            }
            out.println();
            printShards(out, placement, snapshot);
            out.flush();
            return 0;
        }
        catch (final RuntimeException ex)
        {
            err.println("orbitkv members: " + connection.describe(ex));
            return 1;
        }
    }

    private static void printShards(final PrintWriter out, final ShardPlacement placement, final MemberSnapshot snapshot)
    {
        out.println("placement " + placement.nodes() + ", " + placement.replicas() +
            (1 == placement.replicas() ? " copy" : " copies") + " per shard" +
            (placement.domains().isEmpty() ? "" : ", failure domains " + placement.domains()) +
            ", fingerprint " + placement.fingerprint());
        final PlacementTransition transition = snapshot.transition();
        out.println("placement generation " + snapshot.generation() + (null == transition ? ", stable" :
            ", transition " + transition.fromGeneration() + " -> " + transition.toGeneration() + ": " +
            transition.inFlight() + " shard move(s) in flight " + transition.phases() +
            " (orbitkv placement status for details)") +
            (null == snapshot.transitionError() ? "" : "; UNREADABLE transition: " + snapshot.transitionError()));
        if (placement.replicaCount() < placement.replicas())
        {
            out.println("only " + placement.replicaCount() + " catalog node(s) for " + placement.replicas() +
                " copies: every node holds every shard, at most " + placement.replicaCount() + " of " +
                placement.replicas() + " copies");
        }
        out.printf("%-6s %-40s %s%n", "SHARD", "COPIES (host first, * = not registered)", "STATE");
        int unavailable = 0;
        int degraded = 0;
        int fewestLive = placement.replicas();
        final StringBuilder unavailableList = new StringBuilder();
        final StringBuilder degradedList = new StringBuilder();
        for (int shard = 0; shard < StateKeyShard.SHARD_COUNT; shard++)
        {
            final StringBuilder copies = new StringBuilder();
            int live = 0;
            for (int replica = 0; replica < placement.replicaCount(); replica++)
            {
                final String node = placement.replicaOf(shard, replica);
                final boolean registered = snapshot.members().containsKey(node);
                live += registered ? 1 : 0;
                copies.append(0 == replica ? "" : " ").append(node).append(registered ? "" : "*");
            }
            final String state;
            if (0 == live)
            {
                unavailable++;
                unavailableList.append(unavailableList.isEmpty() ? "" : ",").append(shard);
                state = "UNAVAILABLE (no copy registered)";
            }
            else if (live < placement.replicas())
            {
                degraded++;
                fewestLive = Math.min(fewestLive, live);
                degradedList.append(degradedList.isEmpty() ? "" : ",").append(shard);
                state = "reduced failure coverage: " + live + " of " + placement.replicas() + " copies live";
            }
            else
            {
                state = "available (" + live + " of " + placement.replicas() + " copies live)";
            }
            out.printf("%-6d %-40s %s%n", shard, copies, state);
        }
        out.println(unavailable + " of " + StateKeyShard.SHARD_COUNT + " shards unavailable" +
            (0 == unavailable ? "" : ": " + unavailableList));
        if (degraded > 0)
        {
            out.println(degraded + " of " + StateKeyShard.SHARD_COUNT + " shards with reduced failure coverage " +
                "(fewest live copies: " + fewestLive + " of " + placement.replicas() + "): " + degradedList);
        }
    }
}
