package io.orbitkv.manager.ring;

import io.orbitkv.codecs.cnc.CncFileDescriptor;
import io.orbitkv.index.NamespaceTable;
import io.orbitkv.manager.ManagerContext;
import io.orbitkv.manager.catalog.CatalogService;
import io.orbitkv.manager.transfer.PeerAdmission;
import io.orbitkv.manager.transfer.PeerFetcher;
import io.orbitkv.transport.Transport;
import io.orbitkv.manager.status.SystemCounterDescriptor;
import io.orbitkv.manager.status.SystemCounters;
import io.orbitkv.manager.store.TieredStore;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.errors.DistinctErrorLog;

/**
 * The engine ring service's parts, built from a concluded context before its agent: the session table, the copy
 * scheduler, the request handler and the response proxy. The cluster catalog, built after these parts, is handed to
 * {@link #newAgent(CatalogService)} once; each peer lookup names the request handler as the sink of its answer, so
 * the catalog holds no reference back into the ring.
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
    PeerFetcher fetcher;
    private boolean agentMade;

    /**
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
        this.ctx = ctx;
        this.sections = sections;
        this.store = store;
        this.namespaces = namespaces;
        this.counters = counters;
        this.errorHandler = errorHandler;
        rejections = new Rejections(counters, errorLog);
        final ResponseProxy responseProxy = new ResponseProxy(counters.get(SystemCounterDescriptor.RESPONSES_DROPPED));
        final ClientSession[] table = ClientSessions.newTable(sections);
        copies = new CopyScheduler(store, table, responseProxy, ctx.copyChunkBytes(), counters);
        sessions = new ClientSessions(ctx, table, sections.slotTable(), store, copies, rejections, counters);
        requests = new RingRequests(
            ctx, sessions, store, namespaces, copies, responseProxy, rejections, counters, errorHandler);
    }

    /**
     * The agent that runs these parts. Once only.
     *
     * @param catalog serves Lookups with the peers flag, or null in standalone mode.
     * @return the agent.
     */
    public EngineRingAgent newAgent(final CatalogService catalog)
    {
        return newAgent(catalog, null, null);
    }

    /**
     * The agent that runs these parts, fetching from peers through {@code transport}. Once only.
     *
     * @param catalog   serves Lookups with the peers flag, or null in standalone mode.
     * @param transport moves blocks from peers, or null: no peer fetches (candidates are still reported).
     * @param admission whether blocks fetched from peers are kept in the pool (with a transport).
     * @return the agent.
     */
    public EngineRingAgent newAgent(
        final CatalogService catalog, final Transport transport, final PeerAdmission admission)
    {
        if (agentMade)
        {
            throw new IllegalStateException("the engine ring already has its agent");
        }
        agentMade = true;
        requests.catalog(catalog);
        if (null != catalog && null != transport)
        {
            fetcher = new PeerFetcher(catalog, transport, store, namespaces, admission, requests, counters, errorHandler);
            requests.fetcher(fetcher);
            catalog.localResidency(fetcher);
            copies.fetcher(fetcher);
            sessions.fetcher(fetcher);
        }
        return new EngineRingAgent(this);
    }

    /**
     * @return the requester side of peer transfers, or null without a catalog and transport.
     */
    public PeerFetcher fetcher()
    {
        return fetcher;
    }
}
