package io.orbitkv.manager.catalog;

import io.orbitkv.catalog.OwnerJournal;
import io.orbitkv.catalog.ShardInventory;
import io.orbitkv.codecs.CatalogLimits;
import io.orbitkv.manager.membership.PlacementState;
import io.orbitkv.manager.peer.PeerPublisher;
import io.orbitkv.manager.peer.PeerClient;
import io.orbitkv.manager.status.SystemCounters;
import java.util.Objects;
import java.util.function.Function;

/**
 * The owner role of this Manager: one {@link OwnerStream} per (shard, holder), sending the {@link OwnerJournal} of
 * the {@link OwnerInventory} to each catalog host that holds a copy of the shard. Every stream has its own journal
 * receiver, cursor, acks and snapshot cuts, so a slow or dead replica falls behind (and past the journal's budget,
 * into a resync) without holding back the others or a local Publish. A stream stays bound to its holder node while
 * the node holds the shard, so a placement transition that adds a copy starts one new stream (with a snapshot) and
 * disturbs none of the others. Single threaded (the catalog agent, which shares its thread with the stores).
 */
final class OwnerStreams
{
    private final OwnerInventory owned;
    private final SystemCounters counters;
    private final PeerPublisher publisher;
    private final CatalogProxy proxy;
    private final OwnerStream[][] streams = new OwnerStream[CatalogLimits.SHARD_COUNT][PlacementState.MAX_HOLDERS];
    private final String[][] holders = new String[CatalogLimits.SHARD_COUNT][PlacementState.MAX_HOLDERS];

    /**
     * @param owned     the inventory and journal the streams send.
     * @param counters  the system counters the streams count in.
     * @param publisher the transport the streams pace their snapshots on.
     * @param proxy     encodes the streams' delta batches and snapshots.
     */
    OwnerStreams(
        final OwnerInventory owned,
        final SystemCounters counters,
        final PeerPublisher publisher,
        final CatalogProxy proxy)
    {
        this.owned = owned;
        this.counters = counters;
        this.publisher = publisher;
        this.proxy = proxy;
    }

    OwnerJournal journal()
    {
        return owned.journal();
    }

    ShardInventory inventory()
    {
        return owned.inventory();
    }

    int doWork(final long nowNs, final long nowMs)
    {
        int work = 0;
        for (final OwnerStream[] byHolder : streams)
        {
            for (final OwnerStream stream : byHolder)
            {
                if (null != stream)
                {
                    work += stream.doWork(nowNs, nowMs);
                }
            }
        }
        return work;
    }

    /**
     * Stream a shard to exactly the nodes that hold it now: a stream whose node no longer holds it stops (its
     * journal receiver goes), a node that holds it keeps its stream (retargeted only when its link changed, e.g. a new
     * incarnation), and a node new to the shard gets a free stream, which starts with a snapshot.
     *
     * @param shard      shard in [0, 16).
     * @param shardNodes the nodes holding it.
     * @param links      the session to each node, null for a node not in the member view.
     */
    void retarget(final int shard, final String[] shardNodes, final Function<String, HostLink> links)
    {
        final String[] bound = holders[shard];
        for (int i = 0; i < PlacementState.MAX_HOLDERS; i++)
        {
            if (null != bound[i] && !contains(shardNodes, bound[i]))
            {
                streams[shard][i].retarget(null);
                bound[i] = null;
            }
        }
        for (final String node : shardNodes)
        {
            int slot = indexOf(bound, node);
            if (slot < 0)
            {
                slot = indexOf(bound, null);
                bound[slot] = node;
                if (null == streams[shard][slot])
                {
                    streams[shard][slot] = new OwnerStream(shard, owned.inventory(), counters, publisher, proxy);
                }
            }
            streams[shard][slot].retarget(links.apply(node));
        }
    }

    private static boolean contains(final String[] nodes, final String node)
    {
        return indexOf(nodes, node) >= 0;
    }

    private static int indexOf(final String[] nodes, final String node)
    {
        for (int i = 0; i < nodes.length; i++)
        {
            if (Objects.equals(nodes[i], node))
            {
                return i;
            }
        }
        return -1;
    }

    /**
     * Stop streaming every copy of every shard (the links are gone).
     */
    void retargetAllToNone()
    {
        for (final OwnerStream[] byHolder : streams)
        {
            for (final OwnerStream stream : byHolder)
            {
                if (null != stream)
                {
                    stream.retarget(null);
                }
            }
        }
    }

    // Answers go to every copy's stream of the shard: each takes only those of its own session (distinct hosts).

    void onAck(final PeerClient client, final int shard, final long contiguousSequence, final long nowNs)
    {
        for (final OwnerStream stream : streams[shard])
        {
            if (null != stream)
            {
                stream.onAck(client, contiguousSequence, nowNs);
            }
        }
    }

    void onGapRepair(final PeerClient client, final int shard, final long fromSequence, final long nowNs)
    {
        for (final OwnerStream stream : streams[shard])
        {
            if (null != stream)
            {
                stream.onGapRepair(client, fromSequence, nowNs);
            }
        }
    }

    void onResyncRequired(final PeerClient client, final int shard, final long nowNs)
    {
        for (final OwnerStream stream : streams[shard])
        {
            if (null != stream)
            {
                stream.onResyncRequired(client, nowNs);
            }
        }
    }

    /**
     * @return the most journal records any copy's stream has not had acknowledged.
     */
    long maxLagRecords()
    {
        long max = 0;
        for (final OwnerStream[] byHolder : streams)
        {
            for (final OwnerStream stream : byHolder)
            {
                if (null != stream)
                {
                    max = Math.max(max, stream.lagRecords());
                }
            }
        }
        return max;
    }

    void close()
    {
        for (final OwnerStream[] byHolder : streams)
        {
            for (final OwnerStream stream : byHolder)
            {
                if (null != stream)
                {
                    stream.close();
                }
            }
        }
    }
}
