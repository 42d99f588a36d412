package io.orbitkv.manager.ring;

import io.orbitkv.manager.port.LineageListener;
import io.orbitkv.codecs.cnc.CncFileDescriptor;
import io.orbitkv.index.NamespaceTable;
import io.orbitkv.manager.ManagerContext;
import io.orbitkv.manager.port.PeerPort;
import io.orbitkv.manager.status.SystemCounters;
import io.orbitkv.manager.store.TieredStore;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.errors.DistinctErrorLog;

/**
 * The engine ring service's parts, built once from a concluded context before its agent: the session table, the
 * copy scheduler, the request handler and the response proxy. A clustered Manager builds the peer side first and
 * hands its front door in here, the {@link PeerPort} (lookups, pinned lookups and reads with peers); each request
 * names the request handler as the {@link io.orbitkv.manager.transfer.PeerListener} of its answer, so the peer side
 * holds no reference back into the ring.
 */
public final class EngineRing
{
    final ManagerContext ctx;
    final CncFileDescriptor.Sections sections;
    final TieredStore store;
    final NamespaceTable namespaces;
    final SystemCounters counters;
    final ErrorHandler errorHandler;
    final Rejections rejections;
    final ClientSessions sessions;
    final CopyScheduler copies;
    final RingRequests requests;
    final PeerPort peers;
    private boolean agentMade;

    /**
     * A standalone engine ring: Lookups and Reads with the peers flag are answered locally.
     *
     * @param ctx          concluded context: limits, timeouts and the clocks.
     * @param sections     the CnC file's sections.
     * @param store        the DRAM pool and SSD tier, owned by the agent's thread once it runs.
     * @param namespaces   the namespace table.
     * @param counters     system counters.
     * @param errorHandler counted handler for internal errors.
     * @param errorLog     where refusals are recorded once per reason.
     */
    public EngineRing(
        final ManagerContext ctx,
        final CncFileDescriptor.Sections sections,
        final TieredStore store,
        final NamespaceTable namespaces,
        final SystemCounters counters,
        final ErrorHandler errorHandler,
        final DistinctErrorLog errorLog)
    {
        this(ctx, sections, store, namespaces, counters, errorHandler, errorLog, null, LineageListener.NONE);
    }

    /**
     * @param ctx          concluded context: limits, timeouts and the clocks.
     * @param sections     the CnC file's sections.
     * @param store        the DRAM pool and SSD tier, owned by the agent's thread once it runs.
     * @param namespaces   the namespace table.
     * @param counters     system counters.
     * @param errorHandler counted handler for internal errors.
     * @param errorLog     where refusals are recorded once per reason.
     * @param peers        the peer side's front door (Lookups and Reads with the peers flag), or null in standalone
     *                     mode.
     * @param lineage      where the lineage of published blocks goes ({@link LineageListener#NONE} to drop it).
     */
    public EngineRing(
        final ManagerContext ctx,
        final CncFileDescriptor.Sections sections,
        final TieredStore store,
        final NamespaceTable namespaces,
        final SystemCounters counters,
        final ErrorHandler errorHandler,
        final DistinctErrorLog errorLog,
        final PeerPort peers,
        final LineageListener lineage)
    {
        this.ctx = ctx;
        this.sections = sections;
        this.store = store;
        this.namespaces = namespaces;
        this.counters = counters;
        this.errorHandler = errorHandler;
        this.peers = peers;
        final ResponseProxy responseProxy = new ResponseProxy(counters.get(RingCounter.RESPONSES_DROPPED));
        rejections = new Rejections(counters, errorLog, responseProxy);
        final ClientSession[] table = ClientSessions.newTable(sections);
        copies = new CopyScheduler(store, table, responseProxy, ctx.copyChunkBytes(), counters, peers);
        sessions = new ClientSessions(ctx, table, sections.slotTable(), store, copies, rejections, counters, peers);
        requests = new RingRequests(ctx, sessions, store, namespaces, copies, responseProxy, rejections, counters,
            errorHandler, peers, lineage);
    }

    /**
     * The agent that runs these parts. Once only.
     *
     * @return the agent.
     */
    public EngineRingAgent newAgent()
    {
        if (agentMade)
        {
            throw new IllegalStateException("the engine ring already has its agent");
        }
        agentMade = true;
        return new EngineRingAgent(this);
    }
}
