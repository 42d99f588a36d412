package io.orbitkv.manager.catalog;

import io.orbitkv.catalog.CatalogRequestValidator;
import io.orbitkv.catalog.ColdQueryHandler;
import io.orbitkv.index.CandidateIndex;
import io.orbitkv.manager.peer.PeerAgent;
import io.orbitkv.manager.peer.PeerTransport;
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
 *     <li>the transfer part, before the peer transport polls, so the answers to this cycle's frames leave in it;</li>
 *     <li>the peer transport's {@link PeerAgent} (which delivers frames to the {@link CatalogAdapter}, and through it
 *     to the {@link CatalogPeerHandler}, and to the transfer part's adapter);</li>
 *     <li>the {@link MemberViewSync}: the incarnation this runtime speaks as and the member view, followed from the
 *     membership (no remote work until it shows this incarnation);</li>
 *     <li>owner: the {@link OwnerStreams} of this Manager's inventory to the shards' catalog hosts;</li>
 *     <li>catalog host: the {@link CatalogHost} directory over the shards placement gives this node;</li>
 *     <li>requester: {@link PeerDiscovery} for engine lookups, answered through the {@link LookupAnswerSink} each
 *     lookup was started with.</li>
 * </ul>
 * Built once from a concluded {@link CatalogContext} and the transfer part: it builds the peer transport's agent
 * with the handlers, the last piece, as every part that sends already exists.
 */
public final class CatalogService implements Agent, AutoCloseable
{
    private static final long GAUGE_INTERVAL_NS = 100_000_000L;

    private final String nodeId;
    private final NanoClock clock;
    private final AtomicCounter journalBytes;
    private final AtomicCounter journalOverflows;
    private final AtomicCounter indexBytes;
    private final AtomicCounter candidateBytes;
    private final AtomicCounter incompleteShards;
    private final AtomicCounter hostedShards;
    private final AtomicCounter staleGenerationRoutes;
    private final AtomicCounter coverageReports;
    private final AtomicCounter replicaLagMax;
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
    private final CatalogFront front;
    private final PeerTransport transport;
    private final PeerAgent agent;
    private final TransferPart transfers;
    private long gaugesAtNs;

    /**
     * @param ctx       a concluded context; its peer transport is closed with this service.
     * @param transfers the transfer part the peer agent delivers transfer frames to and this duty cycle runs, or null
     *                  for a Manager without peer transfers.
     */
    public CatalogService(final CatalogContext ctx, final TransferPart transfers)
    {
        this.nodeId = ctx.nodeId();
        this.clock = ctx.nanoClock();
        this.transport = ctx.peerTransport();
        final SystemCounters counters = ctx.systemCounters();
        this.journalBytes = counters.get(CatalogCounter.JOURNAL_BYTES);
        this.journalOverflows = counters.get(CatalogCounter.JOURNAL_OVERFLOWS);
        this.indexBytes = counters.get(CatalogCounter.INDEX_BYTES);
        this.candidateBytes = counters.get(CatalogCounter.CANDIDATE_BYTES);
        this.incompleteShards = counters.get(CatalogCounter.INCOMPLETE_SHARDS);
        this.hostedShards = counters.get(CatalogCounter.HOSTED_SHARDS);
        this.staleGenerationRoutes = counters.get(CatalogCounter.STALE_GENERATION_ROUTES);
        this.coverageReports = counters.get(CatalogCounter.COVERAGE_REPORTS);
        this.replicaLagMax = counters.get(CatalogCounter.REPLICA_LAG_MAX_RECORDS);
        this.coldQueriesServed = counters.get(CatalogCounter.COLD_QUERIES_SERVED);
        this.coldRowsServed = counters.get(CatalogCounter.COLD_ROWS_SERVED);
        this.coldRowsIncomplete = counters.get(CatalogCounter.COLD_ROWS_INCOMPLETE);
        this.coldClaimsCorrected = counters.get(CatalogCounter.COLD_CLAIMS_CORRECTED);
        this.coldQueriesRefused = counters.get(CatalogCounter.COLD_QUERIES_REFUSED);
        this.coldQueriesMalformed = counters.get(CatalogCounter.COLD_QUERIES_MALFORMED);
        this.host = ctx.host();
        this.streams = ctx.streams();
        this.members = ctx.members();
        this.candidates = ctx.candidates();
        this.discovery = ctx.discovery();
        this.front = ctx.front();
        this.transfers = transfers;
        final CatalogRequestValidator validator = host.validator();
        this.agent = transport.newAgent(validator::checkRoute, ctx.adapter(),
            null == transfers ? CatalogAdapter.transferFramesDropped(transport.counters()) : transfers.frameHandler());
    }

    public String roleName()
    {
        return "orbitkv-catalog";
    }

    public int doWork()
    {
        final long nowNs = clock.nanoTime();
        final long nowMs = nowNs / 1_000_000L;
        // Transfers first: the answers to frames the transport delivers in this cycle go out in this cycle.
        int work = null == transfers ? 0 : transfers.doWork(nowNs);
        work += agent.doWork();
        work += members.syncIncarnation();
        work += members.syncView();
        work += streams.doWork(nowNs, nowMs);
        work += discovery.doWork(nowMs);
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
        members.closeLinks();
        front.close();
    }

    public void close()
    {
        CloseHelper.quietClose(transport);
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
        hostedShards.setRelease(host.hostedCount());
        staleGenerationRoutes.setRelease(host.validator().staleGenerations());
        coverageReports.getAndAddRelease(members.reportCoverage());
        replicaLagMax.setRelease(streams.maxLagRecords());
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
