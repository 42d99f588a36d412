package io.orbitkv.manager.membership;

import java.util.Map;
import java.util.TreeMap;

/**
 * What this Manager's catalog host tells the reconciler about the shards a transition is moving to it: those whose
 * view is complete (every owner in the member view has finished its snapshot and streams on), each with the stream
 * sequence applied per owner node. The catalog agent hands the newest report to {@link Membership#reportCoverage};
 * the placement agent writes it to etcd under this node's lease when it changes.
 *
 * @param generation     the transition's target generation the report is about.
 * @param completeShards shard to (owner node id to applied sequence), for complete shards only.
 */
public record CoverageReport(long generation, Map<Integer, Map<String, Long>> completeShards)
{
    public CoverageReport
    {
        final Map<Integer, Map<String, Long>> copy = new TreeMap<>();
        completeShards.forEach((shard, watermarks) -> copy.put(shard, Map.copyOf(new TreeMap<>(watermarks))));
        completeShards = Map.copyOf(copy);
    }
}
