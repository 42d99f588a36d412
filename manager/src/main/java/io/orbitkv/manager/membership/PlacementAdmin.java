package io.orbitkv.manager.membership;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import io.orbitkv.codecs.ShardPlacement;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * What {@code orbitkv placement} does to a cluster's placement keys, without a Manager: read the placement status
 * (installed, desired, transition, reconciler, coverage reports, all at one revision) and request a new desired
 * placement. Tests drive transitions through the same calls.
 */
public final class PlacementAdmin
{
    /** Rounds {@link #setDesired} retries when another writer changed the desired key between its read and write. */
    public static final int SET_ATTEMPTS = 5;

    private static final ObjectMapper JSON = new ObjectMapper();

    private PlacementAdmin()
    {
    }

    /**
     * The placement keys of a cluster at one revision.
     *
     * @param revision         etcd revision of the read.
     * @param generation       installed generation (0 when none is installed or it is unreadable).
     * @param installed        installed placement, or null.
     * @param desiredGeneration desired generation (0 when none was ever set or it is unreadable).
     * @param desired          desired placement, or null.
     * @param transition       the transition in flight, or null.
     * @param reconciler       the elected reconciler, or null.
     * @param coverage         the coverage reports by node.
     * @param errors           unreadable placement, desired or transition records, by key.
     * @param coverageErrors   unreadable coverage reports, by key.
     */
    public record Status(
        long revision,
        long generation,
        ShardPlacement installed,
        long desiredGeneration,
        ShardPlacement desired,
        PlacementTransition transition,
        String reconciler,
        Map<String, CoverageReport> coverage,
        Map<String, String> errors,
        Map<String, String> coverageErrors)
    {
        /**
         * @return whether no transition runs and no desired generation waits: what {@code --wait-stable} waits for.
         */
        public boolean isStable()
        {
            return null != installed && null == transition && desiredGeneration <= generation && errors.isEmpty();
        }

        /**
         * @return the newest generation any key names.
         */
        public long newestGeneration()
        {
            return Math.max(generation, Math.max(desiredGeneration, null == transition ? 0 : transition.toGeneration()));
        }

        /**
         * @return the placement the cluster heads to: the newest of desired, transition target and installed.
         */
        public ShardPlacement target()
        {
            if (null != desired && desiredGeneration >= generation &&
                (null == transition || desiredGeneration >= transition.toGeneration()))
            {
                return desired;
            }
            return null != transition ? transition.target() : installed;
        }

        /**
         * @param shard a shard whose move is in flight.
         * @return the added copies that have not reported the shard complete for the target generation.
         */
        public List<String> awaitingCoverage(final int shard)
        {
            final List<String> missing = new ArrayList<>();
            if (null == transition || null == installed)
            {
                return missing;
            }
            final Set<String> added = PlacementAgent.copies(transition.target(), shard);
            added.removeAll(PlacementAgent.copies(installed, shard));
            for (final String node : added)
            {
                final CoverageReport report = coverage.get(node);
                if (null == report || report.generation() != transition.toGeneration() ||
                    !report.completeShards().containsKey(shard))
                {
                    missing.add(node);
                }
            }
            return missing;
        }
    }

    /**
     * Read a cluster's placement status in one transaction.
     *
     * @param etcd        gateway.
     * @param clusterName cluster.
     * @return the status.
     */
    public static Status status(final EtcdGateway etcd, final String clusterName)
    {
        final String coveragePrefix = MembershipConfiguration.coveragePrefix(clusterName);
        final TxnResponse response = etcd.txn(new Cmp[0], new Op[]{
            get(MembershipConfiguration.placementKey(clusterName)),
            get(MembershipConfiguration.placementDesiredKey(clusterName)),
            get(MembershipConfiguration.placementTransitionKey(clusterName)),
            get(MembershipConfiguration.reconcilerKey(clusterName)),
            Op.get(EtcdGateway.bytes(coveragePrefix), GetOption.builder().isPrefix(true).build())}, new Op[0]);
        final List<GetResponse> gets = response.getGetResponses();
        final Map<String, String> errors = new TreeMap<>();
        long generation = 0;
        ShardPlacement installed = null;
        final KeyValue installedKv = first(gets.get(0));
        if (null != installedKv)
        {
            try
            {
                final PlacementRecord.Generational record =
                    PlacementRecord.decodeGenerational(installedKv.getValue().getBytes());
                generation = record.generation();
                installed = record.placement();
            }
            catch (final IllegalStateException ex)
            {
                errors.put(MembershipConfiguration.placementKey(clusterName), ex.getMessage());
            }
        }
        long desiredGeneration = 0;
        ShardPlacement desired = null;
        final KeyValue desiredKv = first(gets.get(1));
        if (null != desiredKv)
        {
            try
            {
                final PlacementRecord.Generational record =
                    PlacementRecord.decodeGenerational(desiredKv.getValue().getBytes());
                desiredGeneration = record.generation();
                desired = record.placement();
            }
            catch (final IllegalStateException ex)
            {
                errors.put(MembershipConfiguration.placementDesiredKey(clusterName), ex.getMessage());
            }
        }
        PlacementTransition transition = null;
        final KeyValue transitionKv = first(gets.get(2));
        if (null != transitionKv)
        {
            try
            {
                transition = TransitionRecord.decode(transitionKv.getValue().getBytes());
            }
            catch (final IllegalStateException ex)
            {
                errors.put(MembershipConfiguration.placementTransitionKey(clusterName), ex.getMessage());
            }
        }
        String reconciler = null;
        final KeyValue reconcilerKv = first(gets.get(3));
        if (null != reconcilerKv)
        {
            try
            {
                final ReconcilerRecord record = ReconcilerRecord.decode(reconcilerKv.getValue().getBytes());
                reconciler = "node '" + record.nodeId() + "' runtime " + record.runtimeUuid();
            }
            catch (final IllegalStateException ex)
            {
                reconciler = "unreadable: " + ex.getMessage();
            }
        }
        final Map<String, CoverageReport> coverage = new TreeMap<>();
        final Map<String, String> coverageErrors = new TreeMap<>();
        for (final KeyValue kv : gets.get(4).getKvs())
        {
            final String node = kv.getKey().toString(StandardCharsets.UTF_8).substring(coveragePrefix.length());
            try
            {
                coverage.put(node, CoverageRecord.decode(kv.getValue().getBytes()).report());
            }
            catch (final IllegalStateException ex)
            {
                coverageErrors.put(kv.getKey().toString(StandardCharsets.UTF_8), ex.getMessage());
            }
        }
        return new Status(response.getHeader().getRevision(), generation, installed, desiredGeneration, desired,
            transition, reconciler, coverage, errors, coverageErrors);
    }

    /**
     * Outcome of {@link #setDesired}.
     *
     * @param written    whether a new desired placement was written.
     * @param generation the generation written, or the one the request already equals.
     */
    public record SetResult(boolean written, long generation)
    {
    }

    /**
     * Ask for a placement: written to the desired key with the generation after every one the cluster's keys name,
     * in a transaction on the desired key as read (retried up to {@link #SET_ATTEMPTS} rounds when another writer
     * got there first). A request equal to the placement the cluster already heads to writes nothing.
     *
     * @param etcd        gateway.
     * @param clusterName cluster.
     * @param placement   the placement asked for.
     * @return what was done.
     * @throws IllegalStateException if no placement is installed, a key is unreadable, or every round lost a race.
     */
    public static SetResult setDesired(final EtcdGateway etcd, final String clusterName, final ShardPlacement placement)
    {
        final String desiredKey = MembershipConfiguration.placementDesiredKey(clusterName);
        for (int attempt = 0; attempt < SET_ATTEMPTS; attempt++)
        {
            final Status status = status(etcd, clusterName);
            if (null == status.installed())
            {
                throw new IllegalStateException("cluster '" + clusterName + "' has no readable placement at " +
                    MembershipConfiguration.placementKey(clusterName) + (status.errors().isEmpty() ? "" :
                    ": " + status.errors()) + " (the first Manager to join installs it)");
            }
            if (status.errors().containsKey(desiredKey) ||
                status.errors().containsKey(MembershipConfiguration.placementTransitionKey(clusterName)))
            {
                throw new IllegalStateException("unreadable placement keys: " + status.errors());
            }
            if (placement.equals(status.target()))
            {
                return new SetResult(false, status.newestGeneration());
            }
            final long generation = status.newestGeneration() + 1;
            final GetResponse current = etcd.get(desiredKey);
            final ByteSequence key = EtcdGateway.bytes(desiredKey);
            final Cmp asRead = current.getKvs().isEmpty() ?
                new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(0)) :
                new Cmp(key, Cmp.Op.EQUAL, CmpTarget.modRevision(current.getKvs().get(0).getModRevision()));
            final long desiredGeneration = current.getKvs().isEmpty() ? 0 :
                PlacementRecord.decodeGenerational(current.getKvs().get(0).getValue().getBytes()).generation();
            if (desiredGeneration != status.desiredGeneration())
            {
                continue;
            }
            final TxnResponse response = etcd.txn(new Cmp[]{asRead}, new Op[]{Op.put(key,
                EtcdGateway.bytes(PlacementRecord.encode(placement, generation)), PutOption.DEFAULT)}, new Op[0]);
            if (response.isSucceeded())
            {
                return new SetResult(true, generation);
            }
        }
        throw new IllegalStateException("placement set lost " + SET_ATTEMPTS + " races for " + desiredKey +
            " in a row; try again");
    }

    /**
     * The status as JSON, for {@code orbitkv placement status --json}.
     *
     * @param status a status.
     * @return one line of JSON.
     */
    public static String toJson(final Status status)
    {
        final ObjectNode node = JSON.createObjectNode();
        node.put("revision", status.revision());
        node.put("generation", status.generation());
        node.set("installed", null == status.installed() ? null : placementJson(status.installed()));
        node.put("desiredGeneration", status.desiredGeneration());
        node.set("desired", null == status.desired() ? null : placementJson(status.desired()));
        if (null == status.transition())
        {
            node.putNull("transition");
        }
        else
        {
            try
            {
                final ObjectNode transition = (ObjectNode)JSON.readTree(TransitionRecord.encode(status.transition()));
                transition.put("inFlight", status.transition().inFlight());
                for (final var move : transition.withArray("moves"))
                {
                    final int shard = move.get("shard").asInt();
                    final ObjectNode entry = (ObjectNode)move;
                    entry.set("from", array(PlacementAgent.copies(status.installed(), shard)));
                    entry.set("to", array(PlacementAgent.copies(status.transition().target(), shard)));
                    entry.set("awaitingCoverage", array(status.awaitingCoverage(shard)));
                }
                node.set("transition", transition);
            }
            catch (final IOException ex)
            {
                throw new IllegalStateException(ex);
            }
        }
        node.put("reconciler", status.reconciler());
        final ObjectNode errors = node.putObject("errors");
        status.errors().forEach(errors::put);
        status.coverageErrors().forEach(errors::put);
        node.put("stable", status.isStable());
        return node.toString();
    }

    private static ObjectNode placementJson(final ShardPlacement placement)
    {
        final ObjectNode node = JSON.createObjectNode();
        node.set("nodes", array(placement.nodes()));
        node.put("replicas", placement.replicas());
        node.put("fingerprint", placement.fingerprint());
        return node;
    }

    private static ArrayNode array(final java.util.Collection<String> values)
    {
        final ArrayNode array = JSON.createArrayNode();
        values.forEach(array::add);
        return array;
    }

    /**
     * A placement for the status and the logs.
     *
     * @param placement the placement.
     * @return nodes, copies and fingerprint.
     */
    public static String describe(final ShardPlacement placement)
    {
        return PlacementRecord.describe(placement);
    }

    /**
     * A shard's copies in rank order.
     *
     * @param placement the placement.
     * @param shard     shard in [0, 16).
     * @return the nodes holding it.
     */
    public static List<String> copiesOf(final ShardPlacement placement, final int shard)
    {
        return new ArrayList<>(PlacementAgent.copies(placement, shard));
    }

    private static Op get(final String key)
    {
        return Op.get(EtcdGateway.bytes(key), GetOption.DEFAULT);
    }

    private static KeyValue first(final GetResponse response)
    {
        return response.getKvs().isEmpty() ? null : response.getKvs().get(0);
    }
}
