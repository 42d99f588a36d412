package io.orbitkv.manager.membership;

import io.orbitkv.codecs.ShardPlacement;
import io.orbitkv.codecs.StateKeyShard;
import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;

/**
 * An immutable member view at one etcd revision, published by the view keeper through a volatile reference and
 * read by agents without locks or etcd calls. A new object replaces it on every change; nothing in it mutates.
 *
 * <p>Each shard has the copies its {@link PlacementState} asks queries of ({@link PlacementState#queryOrder}); the
 * live ones are those whose node is in the view. A shard with no live copy is unavailable; one with some live copies
 * but fewer than the placement asks ({@link ShardPlacement#replicas()}) is degraded: it is served, with less failure
 * coverage. That includes every shard of a cluster with fewer catalog nodes than asked copies. Copies never move to
 * other nodes while one is missing (design: temporary liveness changes never move shards); only a placement
 * transition moves them.
 */
public final class MemberView
{
    /** The view before the first snapshot: incomplete, empty. */
    public static final MemberView NONE = new MemberView(0, false, Collections.emptyMap(), null, "no snapshot yet");

    private final long revision;
    private final boolean complete;
    private final Map<String, MemberRecord> members;
    private final PlacementState placementState;
    private final String incompleteReason;
    private final byte[] liveReplicasByShard;
    private final int unavailableShards;
    private final int degradedShards;

    MemberView(
        final long revision,
        final boolean complete,
        final Map<String, MemberRecord> members,
        final PlacementState placementState,
        final String incompleteReason)
    {
        this.revision = revision;
        this.complete = complete;
        this.members = Collections.unmodifiableMap(new TreeMap<>(members));
        this.placementState = placementState;
        this.incompleteReason = incompleteReason;
        this.liveReplicasByShard = new byte[StateKeyShard.SHARD_COUNT];
        int unavailable = 0;
        int degraded = 0;
        for (int shard = 0; shard < StateKeyShard.SHARD_COUNT; shard++)
        {
            int live = 0;
            if (null != placementState && complete)
            {
                for (final String node : placementState.queryOrder(shard))
                {
                    live += this.members.containsKey(node) ? 1 : 0;
                }
            }
            liveReplicasByShard[shard] = (byte)live;
            if (0 == live)
            {
                unavailable++;
            }
            else if (live < placementState.target().replicas())
            {
                degraded++;
            }
        }
        this.unavailableShards = unavailable;
        this.degradedShards = degraded;
    }

    /**
     * A view that keeps this one's members for diagnostics but is marked incomplete.
     *
     * @param reason why.
     * @return the incomplete view.
     */
    MemberView invalidated(final String reason)
    {
        return new MemberView(revision, false, members, placementState, reason);
    }

    /**
     * etcd revision the view reflects.
     *
     * @return revision.
     */
    public long revision()
    {
        return revision;
    }

    /**
     * Whether the view is a complete snapshot plus every later event; remote work needs a complete view.
     *
     * @return true if complete.
     */
    public boolean isComplete()
    {
        return complete;
    }

    /**
     * Why the view is incomplete, or null.
     *
     * @return reason.
     */
    public String incompleteReason()
    {
        return complete ? null : incompleteReason;
    }

    /**
     * Live members by node id, sorted.
     *
     * @return unmodifiable map.
     */
    public Map<String, MemberRecord> members()
    {
        return members;
    }

    /**
     * Member record of a node, or null when it is not registered.
     *
     * @param nodeId node.
     * @return record or null.
     */
    public MemberRecord member(final String nodeId)
    {
        return members.get(nodeId);
    }

    /**
     * @return the installed placement (the generation in force), or null before the first snapshot.
     */
    public ShardPlacement placement()
    {
        return null == placementState ? null : placementState.placement();
    }

    /**
     * @return the installed placement generation and the transition in flight, or null before the first snapshot.
     */
    public PlacementState placementState()
    {
        return placementState;
    }

    /**
     * The live record of the node a shard's queries go to first, or null when that node is missing (design:
     * temporary liveness changes never move shards).
     *
     * @param shard shard in [0, 16).
     * @return host record or null.
     */
    public MemberRecord hostRecord(final int shard)
    {
        return replicaRecord(shard, 0);
    }

    /**
     * The live record of the node asked {@code replica}-th for a shard, or null when that node is not in the view.
     *
     * @param shard   shard in [0, 16).
     * @param replica position in the shard's {@link PlacementState#queryOrder}.
     * @return the copy's member record or null.
     */
    public MemberRecord replicaRecord(final int shard, final int replica)
    {
        return null == placementState || !complete || replica >= placementState.queryOrder(shard).length ? null :
            members.get(placementState.queryOrder(shard)[replica]);
    }

    /**
     * Copies of a shard whose node is in the view (0 while the view is incomplete).
     *
     * @param shard shard in [0, 16).
     * @return live copies among those queries go to.
     */
    public int liveReplicas(final int shard)
    {
        return liveReplicasByShard[shard];
    }

    /**
     * Shards with no copy in the view (all 16 while the view is incomplete).
     *
     * @return count.
     */
    public int unavailableShards()
    {
        return unavailableShards;
    }

    /**
     * Shards with at least one copy in the view but fewer than the placement asks: served, with reduced failure
     * coverage. Every available shard counts while the cluster has fewer catalog nodes than asked copies.
     *
     * @return count (0 while the view is incomplete).
     */
    public int degradedShards()
    {
        return degradedShards;
    }

    public String toString()
    {
        return "MemberView{revision=" + revision + ", complete=" + complete + ", members=" + members.keySet() +
            (complete ? "" : ", reason=" + incompleteReason) + '}';
    }
}
