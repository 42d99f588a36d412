package io.orbitkv.catalog;

import io.orbitkv.codecs.CatalogLimits;
import io.orbitkv.codecs.StateKeyFlyweight;
import io.orbitkv.index.CandidateSet;
import io.orbitkv.index.CatalogRecordTable;
import io.orbitkv.index.NamespaceTable;
import org.agrona.DirectBuffer;

/**
 * A catalog host's directory: for each shard it hosts, one {@link ShardReceiver} per owner node, all sharing one
 * {@link HostBudget} and one namespace table. Answers one cold-query row from every owner's view of the key's shard.
 * <p>
 * Owners are added when the member view shows them (slow path, allocates the receivers); a row visits owners in node
 * order and stops at {@link CatalogLimits#MAX_CANDIDATES_PER_ROW}. The cost of a row is proportional to the number of
 * owners, which is fine for the tens of nodes this stage targets; a key-to-owners index per shard is the next step if
 * clusters grow. Single threaded (the peer agent).
 */
public final class CatalogDirectory
{
    /**
     * design: the member view holds at most 4,096 members.
     */
    public static final int MAX_OWNERS = 4096;

    private final boolean[] hostedShards;
    private final HostBudget budget;
    private final NamespaceTable namespaces = new NamespaceTable();
    private final ShardReceiver[][] receivers = new ShardReceiver[MAX_OWNERS][];
    private final int[] owners = new int[MAX_OWNERS];
    private int ownerCount;

    public CatalogDirectory(final boolean[] hostedShards, final HostBudget budget)
    {
        if (hostedShards.length != CatalogLimits.SHARD_COUNT)
        {
            throw new IllegalArgumentException("hostedShards must have " + CatalogLimits.SHARD_COUNT + " entries");
        }
        this.hostedShards = hostedShards.clone();
        this.budget = budget;
    }

    public boolean hosts(final int shard)
    {
        return shard >= 0 && shard < CatalogLimits.SHARD_COUNT && hostedShards[shard];
    }

    /**
     * Start hosting a shard: a receiver for every known owner, each waiting for its first snapshot (so the shard's
     * coverage is incomplete until every admitted owner has sent one). Slow path; nothing happens if hosted already.
     *
     * @param shard shard in [0, 16).
     */
    public void hostShard(final int shard)
    {
        if (hostedShards[shard])
        {
            return;
        }
        hostedShards[shard] = true;
        for (int i = 0; i < ownerCount; i++)
        {
            receivers[owners[i]][shard] = new ShardReceiver(shard, owners[i], budget, namespaces);
        }
    }

    /**
     * Stop hosting a shard: every owner's view of it is freed and its bytes go back to the budget.
     *
     * @param shard shard in [0, 16).
     */
    public void unhostShard(final int shard)
    {
        if (!hostedShards[shard])
        {
            return;
        }
        hostedShards[shard] = false;
        for (int i = 0; i < ownerCount; i++)
        {
            receivers[owners[i]][shard].close();
            receivers[owners[i]][shard] = null;
        }
    }

    /**
     * Receivers for an owner node (created on first call).
     *
     * @return false when {@link #MAX_OWNERS} owners exist or the node index is out of range.
     */
    public boolean addOwner(final int ownerNode)
    {
        if (ownerNode < 0 || ownerNode >= MAX_OWNERS)
        {
            return false;
        }
        if (null == receivers[ownerNode])
        {
            final ShardReceiver[] byShard = new ShardReceiver[CatalogLimits.SHARD_COUNT];
            for (int s = 0; s < byShard.length; s++)
            {
                if (hostedShards[s])
                {
                    byShard[s] = new ShardReceiver(s, ownerNode, budget, namespaces);
                }
            }
            receivers[ownerNode] = byShard;
            int at = ownerCount++;
            while (at > 0 && owners[at - 1] > ownerNode)
            {
                owners[at] = owners[at - 1];
                at--;
            }
            owners[at] = ownerNode;
        }
        return true;
    }

    /**
     * @return the receiver of (owner, shard), or null when the owner is unknown or the shard not hosted here.
     */
    public ShardReceiver receiver(final int ownerNode, final int shard)
    {
        if (ownerNode < 0 || ownerNode >= MAX_OWNERS || null == receivers[ownerNode] || !hosts(shard))
        {
            return null;
        }
        return receivers[ownerNode][shard];
    }

    /**
     * {@link #lookup(int, DirectBuffer, int, int, DirectBuffer, int, int, CandidateSet)} for a key in a flyweight.
     */
    public boolean lookup(final int shard, final StateKeyFlyweight key, final CandidateSet row)
    {
        return lookup(shard, key.namespaceBuffer(), key.namespaceOffset(), key.namespaceLength(), key.hashBuffer(),
            key.hashOffset(), key.hashLength(), row);
    }

    /**
     * Fill one cold-query row.
     *
     * @param row cleared by the caller; receives at most four candidates.
     * @return true when every owner's view of the shard is complete (otherwise an empty row proves nothing).
     */
    public boolean lookup(
        final int shard,
        final DirectBuffer namespace,
        final int namespaceOffset,
        final int namespaceLength,
        final DirectBuffer hash,
        final int hashOffset,
        final int hashLength,
        final CandidateSet row)
    {
        boolean complete = true;
        for (int i = 0; i < ownerCount; i++)
        {
            final ShardReceiver receiver = receivers[owners[i]][shard];
            complete &= receiver.coverageComplete();
            if (row.count() < CandidateSet.CAPACITY)
            {
                receiver.lookup(namespace, namespaceOffset, namespaceLength, hash, hashOffset, hashLength, row);
            }
        }
        return complete;
    }

    /**
     * Queue a key a batch of {@link #lookup}s will read, in both tiers of every owner's view of the shard, so that
     * {@link #touchQueued()} brings their records into cache together (overlapping the misses).
     */
    public void queueTouch(
        final int shard,
        final DirectBuffer namespace,
        final int namespaceOffset,
        final int namespaceLength,
        final DirectBuffer hash,
        final int hashOffset,
        final int hashLength)
    {
        for (int i = 0; i < ownerCount; i++)
        {
            final ShardReceiver receiver = receivers[owners[i]][shard];
            for (int tier = 0; tier < CatalogRecordTable.TIER_COUNT; tier++)
            {
                receiver.queueTouch(tier, namespace, namespaceOffset, namespaceLength, hash, hashOffset, hashLength);
            }
        }
    }

    /**
     * Load what {@link #queueTouch} queued and clear the queues.
     */
    public void touchQueued()
    {
        for (int i = 0; i < ownerCount; i++)
        {
            final ShardReceiver[] shards = receivers[owners[i]];
            for (int s = 0; s < shards.length; s++)
            {
                if (null != shards[s])
                {
                    shards[s].touchQueuedKeys();
                }
            }
        }
    }

    public int ownerCount()
    {
        return ownerCount;
    }

    public HostBudget budget()
    {
        return budget;
    }
}
