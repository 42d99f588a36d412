package io.orbitkv.manager.membership;

import io.orbitkv.codecs.ShardPlacement;
import io.orbitkv.manager.Configuration;
import java.util.UUID;

/**
 * What one Manager incarnation joins a cluster with: the concluded context's membership settings (their properties
 * and defaults are in {@code io.orbitkv.manager.Configuration}) together with values only a running Manager has, its
 * runtime UUID, start time and bound peer endpoint. Not a source of configuration: it holds no default of its own
 * (the short constructor takes the join timeout's from Configuration), and it is what {@link Membership} needs
 * without the whole ManagerContext, so membership tests and tools can join without a Manager.
 *
 * @param etcdEndpoints     comma-separated client URLs.
 * @param clusterName       cluster.
 * @param nodeId            stable node id.
 * @param ttlSecs           lease TTL requested.
 * @param etcdDeadlineMs    deadline of every etcd call.
 * @param placement         this Manager's --catalog-nodes.
 * @param peerEndpoint      advertised peer endpoint.
 * @param transferEndpoint  advertised transfer endpoint.
 * @param runtimeUuid       the Manager's runtime UUID.
 * @param startTimeMs       Manager start, epoch ms.
 * @param joinTimeoutMs     how long joining may keep retrying before the Manager gives up.
 * @param maxShardMoves     shard moves in flight at once while this Manager is the placement reconciler
 *                          ({@code --max-shard-moves}).
 * @param etcdSecurity      TLS and auth of the etcd connection ({@link EtcdSecurity#NONE}: plaintext, no auth).
 */
public record MembershipSettings(
    String etcdEndpoints,
    String clusterName,
    String nodeId,
    int ttlSecs,
    long etcdDeadlineMs,
    ShardPlacement placement,
    String peerEndpoint,
    String transferEndpoint,
    UUID runtimeUuid,
    long startTimeMs,
    long joinTimeoutMs,
    int maxShardMoves,
    EtcdSecurity etcdSecurity)
{
    public MembershipSettings
    {
        checkMaxShardMoves(maxShardMoves);
        java.util.Objects.requireNonNull(etcdSecurity, "etcdSecurity");
    }

    /**
     * Settings for a plaintext etcd without auth.
     */
    public MembershipSettings(
        final String etcdEndpoints,
        final String clusterName,
        final String nodeId,
        final int ttlSecs,
        final long etcdDeadlineMs,
        final ShardPlacement placement,
        final String peerEndpoint,
        final String transferEndpoint,
        final UUID runtimeUuid,
        final long startTimeMs,
        final long joinTimeoutMs,
        final int maxShardMoves)
    {
        this(etcdEndpoints, clusterName, nodeId, ttlSecs, etcdDeadlineMs, placement, peerEndpoint, transferEndpoint,
            runtimeUuid, startTimeMs, joinTimeoutMs, maxShardMoves, EtcdSecurity.NONE);
    }

    /**
     * Settings with the default shard moves in flight.
     */
    public MembershipSettings(
        final String etcdEndpoints,
        final String clusterName,
        final String nodeId,
        final int ttlSecs,
        final long etcdDeadlineMs,
        final ShardPlacement placement,
        final String peerEndpoint,
        final String transferEndpoint,
        final UUID runtimeUuid,
        final long startTimeMs,
        final long joinTimeoutMs)
    {
        this(etcdEndpoints, clusterName, nodeId, ttlSecs, etcdDeadlineMs, placement, peerEndpoint, transferEndpoint,
            runtimeUuid, startTimeMs, joinTimeoutMs, MembershipConfiguration.MAX_SHARD_MOVES_DEFAULT);
    }

    /**
     * Validate a limit of shard moves in flight.
     *
     * @param maxShardMoves the limit.
     * @throws IllegalArgumentException naming the range when it is out of it.
     */
    public static void checkMaxShardMoves(final int maxShardMoves)
    {
        if (maxShardMoves < MembershipConfiguration.MIN_SHARD_MOVES ||
            maxShardMoves > MembershipConfiguration.MAX_SHARD_MOVES)
        {
            throw new IllegalArgumentException("--max-shard-moves must be in [" +
                MembershipConfiguration.MIN_SHARD_MOVES + ", " + MembershipConfiguration.MAX_SHARD_MOVES +
                "] (shard moves a placement transition runs at once): " + maxShardMoves);
        }
    }

    /**
     * Settings with the default join timeout.
     */
    public MembershipSettings(
        final String etcdEndpoints,
        final String clusterName,
        final String nodeId,
        final int ttlSecs,
        final long etcdDeadlineMs,
        final ShardPlacement placement,
        final String peerEndpoint,
        final String transferEndpoint,
        final UUID runtimeUuid,
        final long startTimeMs)
    {
        this(etcdEndpoints, clusterName, nodeId, ttlSecs, etcdDeadlineMs, placement, peerEndpoint, transferEndpoint,
            runtimeUuid, startTimeMs, Configuration.JOIN_TIMEOUT_MS_DEFAULT, MembershipConfiguration.MAX_SHARD_MOVES_DEFAULT);
    }
}
