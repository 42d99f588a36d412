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
    long startTimeMs)
{
}
