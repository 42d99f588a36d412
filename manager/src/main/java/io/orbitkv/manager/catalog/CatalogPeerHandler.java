package io.orbitkv.manager.catalog;

import io.orbitkv.catalog.ColdQueryHandler;
import io.orbitkv.catalog.ShardReceiver;
import io.orbitkv.codecs.catalog.CatalogStatus;
import io.orbitkv.codecs.catalog.ColdQueryResponseDecoder;
import io.orbitkv.manager.peer.PeerClient;
import io.orbitkv.manager.peer.PeerSession;
import io.orbitkv.manager.status.SystemCounters;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * Where the peer transport delivers this Manager's catalog traffic, by role: owner deltas and snapshot frames to the
 * catalog host's receivers (the publisher's owner slot from the {@link MemberViewSync}), acks, repair requests and
 * resync demands to the {@link OwnerStreams}, cold query answers and refusals to {@link PeerDiscovery}. Runs on the
 * catalog agent's thread, inside the transport's poll.
 */
final class CatalogPeerHandler extends CatalogHostHandler
{
    private final MemberViewSync members;
    private final OwnerStreams streams;
    private final PeerDiscovery discovery;
    private final AtomicCounter recordsApplied;
    private final AtomicCounter hostResyncs;
    private final NanoClock clock;
    private final CatalogHost host;

    CatalogPeerHandler(
        final CatalogHost host,
        final MemberViewSync members,
        final OwnerStreams streams,
        final PeerDiscovery discovery,
        final SystemCounters counters,
        final NanoClock clock)
    {
        this.host = host;
        this.members = members;
        this.streams = streams;
        this.discovery = discovery;
        this.recordsApplied = counters.get(CatalogCounter.RECORDS_APPLIED);
        this.hostResyncs = counters.get(CatalogCounter.HOST_RESYNCS);
        this.clock = clock;
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Catalog host.

    protected ColdQueryHandler coldQueryHandler()
    {
        return host.coldQueryHandler();
    }

    protected ShardReceiver receiverOf(final PeerSession session, final int shard)
    {
        return members.receiverOf(session.requesterIncarnationMsb(), session.requesterIncarnationLsb(), shard);
    }

    protected void onDeltaOutcome(final int outcome)
    {
        if (ShardReceiver.APPLIED == outcome)
        {
            recordsApplied.incrementRelease();
        }
    }

    protected void onStatus(final CatalogStatus status)
    {
        if (CatalogStatus.RESYNC_REQUIRED == status)
        {
            hostResyncs.incrementRelease();
        }
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Owner and requester.

    public void onAck(final PeerClient client, final int shard, final long contiguousSequence)
    {
        streams.onAck(client, shard, contiguousSequence, clock.nanoTime());
    }

    public void onGapRepair(
        final PeerClient client, final int shard, final long correlationId, final long fromSequence,
        final long toSequence)
    {
        streams.onGapRepair(client, shard, fromSequence, clock.nanoTime());
    }

    public void onColdQueryResponse(final PeerClient client, final ColdQueryResponseDecoder response)
    {
        discovery.onColdQueryResponse(client, response, clock.nanoTime() / 1_000_000L);
    }

    public void onResponse(
        final PeerClient client, final int shard, final long correlationId, final CatalogStatus code,
        final long relevantSequence)
    {
        if (CatalogStatus.RESYNC_REQUIRED == code || CatalogStatus.BUDGET_EXCEEDED == code)
        {
            streams.onResyncRequired(client, shard, clock.nanoTime());
        }
        discovery.onResponse(client, correlationId, clock.nanoTime() / 1_000_000L);
    }
}
