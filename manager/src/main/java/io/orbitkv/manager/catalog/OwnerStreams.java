package io.orbitkv.manager.catalog;

import io.orbitkv.catalog.OwnerJournal;
import io.orbitkv.catalog.ShardInventory;
import io.orbitkv.codecs.CatalogLimits;
import io.orbitkv.manager.peer.PeerPublisher;
import io.orbitkv.manager.peer.PeerClient;
import io.orbitkv.manager.status.SystemCounters;

/**
 * The owner role of this Manager: one {@link OwnerStream} per (shard, replica), sending the {@link OwnerJournal} of
 * the {@link OwnerInventory} to each catalog host that holds a copy of the shard. Every stream has its own journal
 * receiver, cursor, acks and snapshot cuts, so a slow or dead replica falls behind (and past the journal's budget,
 * into a resync) without holding back the others or a local Publish. Single threaded (the catalog agent, which shares
 * its thread with the stores).
 */
final class OwnerStreams
{
    private final OwnerInventory owned;
    private final OwnerStream[][] streams = new OwnerStream[CatalogLimits.SHARD_COUNT][];

    /**
     * @param owned     the inventory and journal the streams send.
     * @param replicas  copies of each shard (streams per shard).
     * @param counters  the system counters the streams count in.
     * @param publisher the transport the streams pace their snapshots on.
     * @param proxy     encodes the streams' delta batches and snapshots.
     */
    OwnerStreams(
        final OwnerInventory owned,
        final int replicas,
        final SystemCounters counters,
        final PeerPublisher publisher,
        final CatalogProxy proxy)
    {
        this.owned = owned;
        for (int s = 0; s < streams.length; s++)
        {
            streams[s] = new OwnerStream[replicas];
            for (int r = 0; r < replicas; r++)
            {
                streams[s][r] = new OwnerStream(s, owned.inventory(), counters, publisher, proxy);
            }
        }
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
        for (final OwnerStream[] replicas : streams)
        {
            for (final OwnerStream stream : replicas)
            {
                work += stream.doWork(nowNs, nowMs);
            }
        }
        return work;
    }

    /**
     * Stream copy {@code replica} of shard {@code shard} to another host link (or to none).
     */
    void retarget(final int shard, final int replica, final HostLink link)
    {
        streams[shard][replica].retarget(link);
    }

    /**
     * Stop streaming every copy of every shard (the links are gone).
     */
    void retargetAllToNone()
    {
        for (int s = 0; s < streams.length; s++)
        {
            for (int r = 0; r < streams[s].length; r++)
            {
                streams[s][r].retarget(null);
            }
        }
    }

    // Answers go to every copy's stream of the shard: each takes only those of its own session (distinct hosts).

    void onAck(final PeerClient client, final int shard, final long contiguousSequence, final long nowNs)
    {
        for (final OwnerStream stream : streams[shard])
        {
            stream.onAck(client, contiguousSequence, nowNs);
        }
    }

    void onGapRepair(final PeerClient client, final int shard, final long fromSequence, final long nowNs)
    {
        for (final OwnerStream stream : streams[shard])
        {
            stream.onGapRepair(client, fromSequence, nowNs);
        }
    }

    void onResyncRequired(final PeerClient client, final int shard, final long nowNs)
    {
        for (final OwnerStream stream : streams[shard])
        {
            stream.onResyncRequired(client, nowNs);
        }
    }

    /**
     * @return the most journal records any copy's stream has not had acknowledged.
     */
    long maxLagRecords()
    {
        long max = 0;
        for (final OwnerStream[] replicas : streams)
        {
            for (final OwnerStream stream : replicas)
            {
                max = Math.max(max, stream.lagRecords());
            }
        }
        return max;
    }

    void close()
    {
        for (final OwnerStream[] replicas : streams)
        {
            for (final OwnerStream stream : replicas)
            {
                stream.close();
            }
        }
    }
}
