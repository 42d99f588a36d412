package io.orbitkv.manager.catalog;

import io.orbitkv.catalog.ColdQueryHandler;
import io.orbitkv.codecs.ShardPlacement;
import io.orbitkv.codecs.StateKeyFlyweight;
import io.orbitkv.index.BlockStore;
import io.orbitkv.index.CandidateIndex;
import io.orbitkv.manager.membership.MemberRecord;
import io.orbitkv.manager.membership.Membership;
import io.orbitkv.manager.peer.PeerAgent;
import io.orbitkv.manager.peer.PeerClient;
import io.orbitkv.manager.peer.PeerTransport;
import io.orbitkv.manager.status.SystemCounterDescriptor;
import io.orbitkv.manager.status.SystemCounters;
import org.agrona.CloseHelper;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * The Manager's part in the distributed catalog as one agent, on the thread that also owns the block stores (it runs
 * in the same composite as the engine ring agent, so an inventory transition, its journal record and the stream that
 * sends it never cross threads). Its duty cycle reads the clock once and sums the work of each part:
 * <ul>
 *     <li>the peer transport (which delivers frames to the {@link CatalogPeerHandler});</li>
 *     <li>the {@link MemberViewSync}: the incarnation this runtime speaks as and the member view, followed from the
 *     {@link Membership} (no remote work until it shows this incarnation);</li>
 *     <li>owner: the {@link OwnerStreams} of this Manager's inventory to the shards' catalog hosts;</li>
 *     <li>catalog host: the {@link CatalogHost} directory over the shards placement gives this node;</li>
 *     <li>requester: {@link PeerDiscovery} for engine lookups, answered through the {@link LookupAnswerSink} each
 *     lookup was started with.</li>
 * </ul>
 * Built from a concluded {@link CatalogContext} and the membership that advertises the context's peer endpoint.
 */
public final class CatalogService implements Agent, AutoCloseable
{
    private static final long GAUGE_INTERVAL_NS = 100_000_000L;

    private final String nodeId;
    private final NanoClock clock;
    private final Membership membership;
    private final CatalogContext ctx;
    private final AtomicCounter discoverySkipped;
    private final AtomicCounter journalBytes;
    private final AtomicCounter journalOverflows;
    private final AtomicCounter indexBytes;
    private final AtomicCounter candidateBytes;
    private final AtomicCounter incompleteShards;
    private final AtomicCounter coldQueriesServed;
    private final AtomicCounter coldRowsServed;
    private final AtomicCounter coldRowsIncomplete;
    private final AtomicCounter coldClaimsCorrected;
    private final AtomicCounter coldQueriesRefused;
    private final AtomicCounter coldQueriesMalformed;
    private final CatalogHost host;
    private final OwnerStreams streams;
    private final MemberViewSync members;
    private final CandidateIndex candidates;
    private final PeerDiscovery discovery;
    private final PeerTransport transport;
    private final PeerAgent agent;
    private final SourceLinks sourceLinks = new SourceLinks();
    private final TransferPart transfers;
    private long gaugesAtNs;

    /**
     * @param ctx        a concluded context; closed with this service.
     * @param membership the joining (or joined) membership, started with {@code ctx.transport().endpoint()}.
     */
    public CatalogService(final CatalogContext ctx, final Membership membership)
    {
        this.ctx = ctx;
        this.membership = membership;
        this.nodeId = ctx.nodeId();
        this.clock = ctx.nanoClock();
        this.transport = ctx.transport();
        this.agent = transport.agent();
        final SystemCounters counters = ctx.systemCounters();
        this.discoverySkipped = counters.get(SystemCounterDescriptor.CATALOG_DISCOVERY_SKIPPED);
        this.journalBytes = counters.get(SystemCounterDescriptor.CATALOG_JOURNAL_BYTES);
        this.journalOverflows = counters.get(SystemCounterDescriptor.CATALOG_JOURNAL_OVERFLOWS);
        this.indexBytes = counters.get(SystemCounterDescriptor.CATALOG_INDEX_BYTES);
        this.candidateBytes = counters.get(SystemCounterDescriptor.CATALOG_CANDIDATE_BYTES);
        this.incompleteShards = counters.get(SystemCounterDescriptor.CATALOG_INCOMPLETE_SHARDS);
        this.coldQueriesServed = counters.get(SystemCounterDescriptor.CATALOG_COLD_QUERIES_SERVED);
        this.coldRowsServed = counters.get(SystemCounterDescriptor.CATALOG_COLD_ROWS_SERVED);
        this.coldRowsIncomplete = counters.get(SystemCounterDescriptor.CATALOG_COLD_ROWS_INCOMPLETE);
        this.coldClaimsCorrected = counters.get(SystemCounterDescriptor.CATALOG_COLD_CLAIMS_CORRECTED);
        this.coldQueriesRefused = counters.get(SystemCounterDescriptor.CATALOG_COLD_QUERIES_REFUSED);
        this.coldQueriesMalformed = counters.get(SystemCounterDescriptor.CATALOG_COLD_QUERIES_MALFORMED);
        this.host = ctx.host();
        this.streams = ctx.streams();
        this.members = ctx.members();
        this.candidates = ctx.candidates();
        this.discovery = ctx.discovery();
        this.transfers = ctx.transfers();
    }

    /**
     * The placement fingerprint as carried on the wire: the first 64 bits of the 128-bit hex fingerprint.
     */
    public static long fingerprintOf(final ShardPlacement placement)
    {
        return Long.parseUnsignedLong(placement.fingerprint().substring(0, 16), 16);
    }

    public BlockStore.ResidencyObserver dramObserver()
    {
        return streams.dramObserver();
    }

    public BlockStore.ResidencyObserver ssdObserver()
    {
        return streams.ssdObserver();
    }

    public String roleName()
    {
        return "orbitkv-catalog";
    }

    public int doWork()
    {
        final long nowNs = clock.nanoTime();
        final long nowMs = nowNs / 1_000_000L;
        // Transfers first: the answers to frames the transport delivers in this cycle go through this cycle's agent.
        int work = null == transfers ? 0 : transfers.doWork(agent, membership, nowNs);
        work += transport.doWork();
        work += members.syncIncarnation(membership, agent);
        work += members.syncView(membership, agent);
        work += streams.doWork(agent, nowNs, nowMs);
        work += discovery.doWork(agent, nowMs);
        if (work > 0)
        {
            work += agent.invokeDriver();
        }
        if (nowNs - gaugesAtNs >= 0)
        {
            gaugesAtNs = nowNs + GAUGE_INTERVAL_NS;
            updateGauges();
        }
        return work;
    }

    public void onClose()
    {
        streams.close();
        members.closeLinks(agent);
        sourceLinks.close(agent);
    }

    public void close()
    {
        CloseHelper.quietClose(ctx);
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Requester API for the ring agent.

    /**
     * @return a lookup to fill and {@link #startLookup}, or null when the service cannot take one now (no member
     * view yet, remote work disabled, or every pending slot in use): answer locally.
     */
    public PendingLookup acquireLookup()
    {
        if (!membership.remoteWorkEnabled(clock.nanoTime()) || !members.hasView())
        {
            discoverySkipped.incrementRelease();
            return null;
        }
        final PendingLookup lookup = discovery.acquire();
        if (null == lookup)
        {
            discoverySkipped.incrementRelease();
        }
        return lookup;
    }

    /**
     * Let discovery answer the keys this Manager's own DRAM holds and go on after them; set once, before the first
     * lookup, by whoever serves such keys (the peer fetcher).
     */
    public void localResidency(final LocalResidency localResidency)
    {
        discovery.localResidency(localResidency);
    }

    /**
     * Resolve a filled lookup; {@code sink} gets it once its peer candidates are known or its budget ran out (at
     * once, from this call, when every key is warm or nothing can be asked).
     */
    public void startLookup(final PendingLookup lookup, final LookupAnswerSink sink)
    {
        discovery.start(lookup, sink, agent, clock.nanoTime() / 1_000_000L);
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Requester API for peer transfers (agent thread).

    /**
     * @return whether this Manager may start remote work now: a complete member view and a valid registration.
     */
    public boolean remoteWorkEnabled()
    {
        return members.hasView() && membership.remoteWorkEnabled(clock.nanoTime());
    }

    /**
     * @return the member record of a live incarnation in the member view, or null (unknown, retired or this one).
     */
    public MemberRecord member(final long msb, final long lsb)
    {
        return members.isSelf(msb, lsb) ? null : members.memberByIncarnation(msb, lsb);
    }

    /**
     * @return this Manager's current incarnation (it changes when a lost registration is replaced).
     */
    public long localIncarnationMsb()
    {
        return members.selfMsb();
    }

    public long localIncarnationLsb()
    {
        return members.selfLsb();
    }

    public boolean isSelf(final long msb, final long lsb)
    {
        return members.isSelf(msb, lsb);
    }

    /**
     * An active peer session to a source incarnation, kept in a bounded LRU of source links.
     *
     * @return the client, or null while it connects or when the incarnation is not a live member.
     */
    public PeerClient sourceClient(final long msb, final long lsb, final long nowMs)
    {
        final MemberRecord record = member(msb, lsb);
        if (null == record)
        {
            return null;
        }
        // One session per remote incarnation: a second connect would replace the first at the remote, so a catalog
        // host's link carries the transfers too.
        final HostLink hostLink = members.linkForNode(record.nodeId());
        return null != hostLink && hostLink.isFor(record) ?
            hostLink.poll(agent, nowMs) : sourceLinks.client(record, agent, nowMs);
    }

    /**
     * The peer agent, to send transfer messages on its thread.
     */
    public PeerAgent peerAgent()
    {
        return agent;
    }

    /**
     * Drop one refused candidate version of a key from the candidate index; other candidates of the key stay.
     */
    public boolean removeCandidate(
        final StateKeyFlyweight key, final long ownerMsb, final long ownerLsb, final long insertionSequence)
    {
        return candidates.removeCandidate(key.namespaceBuffer(), key.namespaceOffset(), key.namespaceLength(),
            key.hashBuffer(), key.hashOffset(), key.hashLength(), ownerMsb, ownerLsb, insertionSequence);
    }

    private void updateGauges()
    {
        journalBytes.setRelease(streams.journal().usedBytes());
        journalOverflows.setRelease(streams.journal().overflowResyncs());
        indexBytes.setRelease(host.directory().budget().reservedBytes());
        candidateBytes.setRelease(candidates.logicalBytes());
        // the handler keeps plain totals on this thread: published here, on the gauge tick
        final ColdQueryHandler served = host.coldQueryHandler();
        coldQueriesServed.setRelease(served.queriesServed());
        coldRowsServed.setRelease(served.rowsServed());
        coldRowsIncomplete.setRelease(served.incompleteRows());
        coldClaimsCorrected.setRelease(served.claimsCorrected());
        coldQueriesRefused.setRelease(served.rejected());
        coldQueriesMalformed.setRelease(
            served.malformedFrames() + served.schemaMismatches() + served.unknownTemplates());
        incompleteShards.setRelease(host.incompleteShards(members.ownerSlots(), members.hasView()));
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Observability and tests.

    public PeerTransport transport()
    {
        return transport;
    }

    public String nodeId()
    {
        return nodeId;
    }
}
