package io.orbitkv.manager.membership;

import io.orbitkv.codecs.ShardPlacement;
import io.orbitkv.codecs.StateKeyShard;
import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;

/**
 * An immutable member view at one etcd revision, published by the view keeper through a volatile reference and
 * read by agents without locks or etcd calls. A new object replaces it on every change; nothing in it mutates.
 */
public final class MemberView
{
    /** The view before the first snapshot: incomplete, empty. */
    public static final MemberView NONE = new MemberView(0, false, Collections.emptyMap(), null, "no snapshot yet");

    private final long revision;
    private final boolean complete;
    private final Map<String, MemberRecord> members;
    private final ShardPlacement placement;
    private final String incompleteReason;
    private final int unavailableShards;

    MemberView(
        final long revision,
        final boolean complete,
        final Map<String, MemberRecord> members,
        final ShardPlacement placement,
        final String incompleteReason)
    {
        this.revision = revision;
        this.complete = complete;
        this.members = Collections.unmodifiableMap(new TreeMap<>(members));
        this.placement = placement;
        this.incompleteReason = incompleteReason;
        int unavailable = 0;
        for (int shard = 0; shard < StateKeyShard.SHARD_COUNT; shard++)
        {
            if (null == hostRecord(shard))
            {
                unavailable++;
            }
        }
        this.unavailableShards = unavailable;
    }

    /**
     * A view that keeps this one's members for diagnostics but is marked incomplete.
     *
     * @param reason why.
     * @return the incomplete view.
     */
    MemberView invalidated(final String reason)
    {
        return new MemberView(revision, false, members, placement, reason);
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

    public ShardPlacement placement()
    {
        return placement;
    }

    /**
     * The live record of a shard's configured host, or null when that host is missing (the shard is unavailable;
     * design: temporary liveness changes never move shards).
     *
     * @param shard shard in [0, 16).
     * @return host record or null.
     */
    public MemberRecord hostRecord(final int shard)
    {
        return null == placement || !complete ? null : members.get(placement.hostOf(shard));
    }

    /**
     * Shards whose configured host is not in the view (all 16 while the view is incomplete).
     *
     * @return count.
     */
    public int unavailableShards()
    {
        return unavailableShards;
    }

    public String toString()
    {
        return "MemberView{revision=" + revision + ", complete=" + complete + ", members=" + members.keySet() +
            (complete ? "" : ", reason=" + incompleteReason) + '}';
    }
}
