package io.orbitkv.manager.transfer;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;

import io.orbitkv.codecs.TransferLimits;
import io.orbitkv.codecs.transfer.TransferAuthorizeDecoder;
import io.orbitkv.codecs.transfer.TransferGrantDecoder;
import io.orbitkv.codecs.transfer.TransferReleaseAckDecoder;
import io.orbitkv.codecs.transfer.TransferReleaseDecoder;
import io.orbitkv.index.NamespaceTable;
import io.orbitkv.manager.peer.PeerClient;
import io.orbitkv.manager.peer.PeerCounter;
import io.orbitkv.manager.peer.PeerCounters;
import io.orbitkv.manager.peer.PeerFrameHandler;
import io.orbitkv.manager.peer.PeerPublisher;
import io.orbitkv.manager.peer.PeerSession;
import io.orbitkv.manager.catalog.TransferPart;
import io.orbitkv.manager.status.SystemCounters;
import io.orbitkv.manager.store.TieredStore;
import io.orbitkv.transport.Transport;
import io.orbitkv.transport.TransportListener;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * The Manager's transfer control on the agent that owns the store: the {@link TransferHandler} its
 * {@link TransferAdapter} delivers the peer agent's transfer frames to (authorizations and releases go to the source,
 * {@link SourceAuthorizer}; grants and release acks to the requester side, the {@link PeerFetcher}), and the one
 * poller of the {@link Transport} (revocations to the source, read completions to the requester).
 * <p>
 * Built once with every collaborator: the publisher its answers leave through, the member view it judges requesters
 * by, and the requester side, all built before the peer agent that delivers frames here. {@link #doWork} runs in the
 * catalog's duty cycle before the transport polls its subscription. With nothing held and no event, a call costs a
 * clock compare and a field read: an idle Manager does no transfer work.
 */
public final class TransferService implements TransferPart, TransferHandler, TransportListener
{
    /**
     * Transport events handled per duty cycle.
     */
    static final int POLL_LIMIT = 64;

    /**
     * How often the transport's statistics are copied into its counters.
     */
    static final long STATS_INTERVAL_NS = 100_000_000L;

    private final Transport transport;
    private final PeerFetcher requester;
    private final TransportCounters transportCounters;
    private final NanoClock clock;
    private final SourceAuthorizer source;
    private final TransferAdapter adapter;
    private final PeerCounters peerCounters;
    private final AtomicCounter staleIncarnations;
    private long statsAtNs;

    /**
     * @param settings          the source's limits.
     * @param store             the tiered store this thread owns.
     * @param namespaces        the Manager's namespace table.
     * @param transport         the transport grants are exported through and reads are made with.
     * @param ssdExportStaging  where SSD-only residences are prepared for peers, registered with {@code transport} by
     *                          the caller (a multiple of 2 MiB); null, or a store without SSD tier, serves DRAM only.
     * @param members           the member view requesters are judged by.
     * @param publisher         where grants and release acks are sent.
     * @param requester         the requester side that takes grants, release acks and read completions, or null for
     *                          a source only.
     * @param transportCounters the counters {@code transport}'s statistics are mirrored into, or null.
     * @param counters          the system counters.
     * @param clock             the Manager's nano clock.
     */
    public TransferService(
        final TransferSettings settings,
        final TieredStore store,
        final NamespaceTable namespaces,
        final Transport transport,
        final MemorySegment ssdExportStaging,
        final SourceMembers members,
        final PeerPublisher publisher,
        final PeerFetcher requester,
        final TransportCounters transportCounters,
        final SystemCounters counters,
        final NanoClock clock)
    {
        this.transport = transport;
        this.requester = requester;
        this.transportCounters = transportCounters;
        this.clock = clock;
        this.peerCounters = publisher.counters();
        this.staleIncarnations = counters.get(TransferCounter.SOURCE_REJECTED_STALE_INCARNATION);
        final SsdExports exports = null == ssdExportStaging || !store.hasSsd() ? null : new SsdExports(
            store, ssdExportStaging, store.dram().allocator().maxBlockBytes(),
            TimeUnit.MILLISECONDS.toNanos(TransferLimits.STAGED_UNCLAIMED_TTL_MS), counters);
        this.source = new SourceAuthorizer(
            settings, store, namespaces, transport, members, new PublisherChannel(publisher), exports, counters);
        this.adapter = new TransferAdapter(publisher, this);
    }

    /**
     * @return the decoder of transfer frames, which hands them to this service.
     */
    public PeerFrameHandler frameHandler()
    {
        return adapter;
    }

    /**
     * One duty cycle's transfer work, before the peer transport polls: expire sessions whose deadline passed, end
     * those whose requester left the view, and deliver the transport's events.
     *
     * @return work done.
     */
    public int doWork(final long nowNs)
    {
        final long stale = peerCounters.get(PeerCounter.TRANSFER_REJECTED_STALE_INCARNATION).get();
        if (stale != staleIncarnations.getPlain())
        {
            staleIncarnations.setRelease(stale);
        }
        if (null != transportCounters && nowNs - statsAtNs >= 0)
        {
            statsAtNs = nowNs + STATS_INTERVAL_NS;
            transportCounters.update();
        }
        return source.doWork(nowNs) + transport.poll(this, POLL_LIMIT);
    }

    /**
     * @return when the next granted session expires, {@link Long#MAX_VALUE} when none: an idle agent need not wake
     * for transfers before then.
     */
    public long nextDeadlineNs()
    {
        return source.nextDeadlineNs();
    }

    /**
     * @return revocations the transport has still to confirm: an agent with some must not sleep deep, as the
     * confirmation is polled, not signalled.
     */
    public int revocationsPending()
    {
        return source.revocationsPending();
    }

    public Transport transport()
    {
        return transport;
    }

    public void onAuthorize(final PeerSession session, final TransferAuthorizeDecoder request)
    {
        source.onAuthorize(session, request, clock.nanoTime());
    }

    public void onRelease(final PeerSession session, final TransferReleaseDecoder request)
    {
        source.onRelease(session, request);
    }

    public void onGrant(final PeerClient client, final TransferGrantDecoder grant)
    {
        if (null != requester)
        {
            requester.onGrant(client, grant);
        }
    }

    public void onReleaseAck(final PeerClient client, final TransferReleaseAckDecoder ack)
    {
        if (null != requester)
        {
            requester.onReleaseAck(client, ack);
        }
    }

    public void onReadComplete(final long requestId, final int status, final long bytes)
    {
        if (null != requester)
        {
            requester.onReadComplete(requestId, status, bytes);
        }
    }

    public void onReadComplete(final long requestId, final int status, final long bytes, final int crc32c)
    {
        if (null != requester)
        {
            requester.onReadComplete(requestId, status, bytes, crc32c);
        }
    }

    public void onRevoked(final long sessionId)
    {
        source.onRevoked(sessionId);
    }
}
