package io.orbitkv.manager.membership;

import io.orbitkv.codecs.ShardPlacement;
import java.util.UUID;

/**
 * What a Manager joins a cluster with (from the ManagerContext / CLI flags), already validated.
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
            runtimeUuid, startTimeMs, MembershipConfiguration.JOIN_TIMEOUT_MS_DEFAULT);
    }
}
