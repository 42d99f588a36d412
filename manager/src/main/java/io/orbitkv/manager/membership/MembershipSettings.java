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
    long joinTimeoutMs)
{
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
            runtimeUuid, startTimeMs, Configuration.JOIN_TIMEOUT_MS_DEFAULT);
    }
}
