package io.orbitkv.manager.catalog;

import io.orbitkv.catalog.OwnerJournal;
import io.orbitkv.catalog.ShardInventory;
import io.orbitkv.codecs.CatalogLimits;
import io.orbitkv.manager.peer.PeerPublisher;
import io.orbitkv.manager.peer.PeerClient;
import io.orbitkv.manager.status.SystemCounters;

/**
 * The owner role of this Manager: one {@link OwnerStream} per shard, sending the {@link OwnerJournal} of the
 * {@link OwnerInventory} to the shard's catalog host. Single threaded (the catalog agent, which shares its thread with the stores).
 */
final class OwnerStreams
{
    private final OwnerInventory owned;
    private final OwnerStream[] streams = new OwnerStream[CatalogLimits.SHARD_COUNT];

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
        for (int s = 0; s < streams.length; s++)
        {
            streams[s] = new OwnerStream(s, owned.inventory(), counters, publisher, proxy);
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
        for (final OwnerStream stream : streams)
        {
            work += stream.doWork(nowNs, nowMs);
        }
        return work;
    }

    /**
     * Stream shard {@code shard} to another host link (or to none).
     */
    void retarget(final int shard, final HostLink link)
    {
        streams[shard].retarget(link);
    }

    void onAck(final PeerClient client, final int shard, final long contiguousSequence, final long nowNs)
    {
        streams[shard].onAck(client, contiguousSequence, nowNs);
    }

    void onGapRepair(final PeerClient client, final int shard, final long fromSequence, final long nowNs)
    {
        streams[shard].onGapRepair(client, fromSequence, nowNs);
    }

    void onResyncRequired(final PeerClient client, final int shard, final long nowNs)
    {
        streams[shard].onResyncRequired(client, nowNs);
    }

    void close()
    {
        for (final OwnerStream stream : streams)
        {
            stream.close();
        }
    }
}
