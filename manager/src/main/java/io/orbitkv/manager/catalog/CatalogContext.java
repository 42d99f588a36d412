package io.orbitkv.manager.catalog;

import java.util.UUID;

import io.orbitkv.codecs.CatalogLimits;
import io.orbitkv.codecs.ShardPlacement;
import io.orbitkv.index.CandidateIndex;
import io.orbitkv.index.NamespaceTable;
import io.orbitkv.manager.membership.Membership;
import io.orbitkv.manager.membership.PlacementState;
import io.orbitkv.manager.peer.PeerPublisher;
import io.orbitkv.manager.peer.PeerTransport;
import io.orbitkv.manager.status.SystemCounters;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.SystemNanoClock;

/**
 * Settings of the Manager's catalog and, once {@link #conclude() concluded}, its parts, each built once with its
 * collaborators: the owner streams (of the {@link OwnerInventory} the block stores feed), the catalog host, the member
 * view follower, the candidate index, discovery, the source links, the {@link CatalogRequester} the transfer
 * requester and the ring use, and the handler of catalog frames. The peer transport is bound and the membership
 * started before (the member record advertises the transport's endpoint); the parts send through the transport's
 * publisher, and the {@link CatalogService} builds the transport's agent, which delivers frames to them.
 */
public final class CatalogContext
{
    private String nodeId;
    private ShardPlacement placement;
    private UUID runtimeUuid;
    private NamespaceTable namespaces;
    private OwnerInventory inventory;
    private long candidateBytes = CatalogLimits.CANDIDATE_INDEX_BUDGET_BYTES;
    private SystemCounters systemCounters;
    private NanoClock nanoClock = SystemNanoClock.INSTANCE;
    private PeerTransport peerTransport;
    private Membership membership;
    private LocalResidency localResidency = LocalResidency.NONE;

    private boolean concluded;
    private CatalogHost host;
    private OwnerStreams streams;
    private MemberViewSync members;
    private CandidateIndex candidates;
    private PeerDiscovery discovery;
    private CatalogFront front;
    private CatalogPeerHandler peerHandler;
    private CatalogProxy proxy;
    private CatalogAdapter adapter;

    /**
     * Validate the settings and build the parts.
     *
     * @return this.
     * @throws IllegalStateException naming the setting that is missing or out of range.
     */
    public CatalogContext conclude()
    {
        if (concluded)
        {
            throw new IllegalStateException("catalog context already concluded");
        }
        require(null != nodeId && !nodeId.isEmpty(), "nodeId is required");
        require(null != placement, "placement is required");
        require(null != runtimeUuid, "runtimeUuid is required");
        require(null != namespaces, "namespaces is required");
        require(null != inventory, "inventory is required");
        require(null != systemCounters, "systemCounters is required");
        require(null != nanoClock, "nanoClock is required");
        require(null != peerTransport, "peerTransport is required");
        require(null != membership, "membership is required");
        require(null != localResidency, "localResidency is required");
        concluded = true;

        final PeerPublisher publisher = peerTransport.publisher();
        proxy = new CatalogProxy(publisher);
        final long selfMsb = runtimeUuid.getMostSignificantBits();
        final long selfLsb = runtimeUuid.getLeastSignificantBits();
        // The flags' placement as generation 1 until the member view shows the cluster's placement state.
        final PlacementState initial = PlacementState.stable(1, placement);
        publisher.placementFingerprint(initial.sendFingerprint());
        streams = new OwnerStreams(inventory, systemCounters, publisher, proxy);
        host = new CatalogHost(nodeId, initial, selfMsb, selfLsb);
        systemCounters.get(CatalogCounter.HOSTED_SHARDS).setRelease(host.hostedCount());
        members = new MemberViewSync(nodeId, initial, runtimeUuid, host, streams,
            systemCounters.get(CatalogCounter.INCARNATIONS_RETIRED),
            systemCounters.get(CatalogCounter.PLACEMENT_STATES_APPLIED), membership, publisher);
        candidates = new CandidateIndex(candidateBytes, CatalogLimits.CANDIDATE_TTL_MS, new NamespaceTable());
        discovery = new PeerDiscovery(host, members, candidates, systemCounters, localResidency, proxy);
        front = new CatalogFront(
            members, membership, discovery, candidates, new SourceLinks(publisher), systemCounters, nanoClock);
        peerHandler = new CatalogPeerHandler(host, members, streams, discovery, systemCounters, nanoClock);
        adapter = new CatalogAdapter(publisher, peerTransport.counters(), publisher.errorHandler(), proxy,
            host.validator(), peerHandler);
        return this;
    }

    private static void require(final boolean condition, final String message)
    {
        if (!condition)
        {
            throw new IllegalStateException(message);
        }
    }

    private void requireConcluded()
    {
        if (!concluded)
        {
            throw new IllegalStateException("catalog context not concluded");
        }
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Parts, after conclude.

    /**
     * @return the catalog as the requester side sees it: lookups, members, source sessions.
     */
    public CatalogRequester requester()
    {
        requireConcluded();
        return front;
    }

    SystemCounters systemCounters()
    {
        return systemCounters;
    }

    CatalogHost host()
    {
        return host;
    }

    OwnerStreams streams()
    {
        return streams;
    }

    MemberViewSync members()
    {
        return members;
    }

    CandidateIndex candidates()
    {
        return candidates;
    }

    PeerDiscovery discovery()
    {
        return discovery;
    }

    CatalogFront front()
    {
        return front;
    }

    /**
     * @return the decoder of the catalog's frames the peer transport delivers, over {@link #peerHandler()}.
     */
    CatalogAdapter adapter()
    {
        return adapter;
    }

    CatalogPeerHandler peerHandler()
    {
        return peerHandler;
    }

    PeerTransport peerTransport()
    {
        return peerTransport;
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Settings.

    /**
     * @param nodeId this node's id.
     * @return this.
     */
    public CatalogContext nodeId(final String nodeId)
    {
        this.nodeId = nodeId;
        return this;
    }

    public String nodeId()
    {
        return nodeId;
    }

    /**
     * @param placement the cluster's placement (checked against etcd by the membership join).
     * @return this.
     */
    public CatalogContext placement(final ShardPlacement placement)
    {
        this.placement = placement;
        return this;
    }

    public ShardPlacement placement()
    {
        return placement;
    }

    /**
     * @param runtimeUuid the incarnation this runtime starts as.
     * @return this.
     */
    public CatalogContext runtimeUuid(final UUID runtimeUuid)
    {
        this.runtimeUuid = runtimeUuid;
        return this;
    }

    /**
     * @param namespaces the Manager's namespace table (the block stores' namespace ids are its ids).
     * @return this.
     */
    public CatalogContext namespaces(final NamespaceTable namespaces)
    {
        this.namespaces = namespaces;
        return this;
    }

    /**
     * @param inventory what this Manager owns: the inventory the block stores feed and its journal.
     * @return this.
     */
    public CatalogContext inventory(final OwnerInventory inventory)
    {
        this.inventory = inventory;
        return this;
    }

    /**
     * @param candidateBytes logical byte budget of the candidate index (design default 16 MiB).
     * @return this.
     */
    public CatalogContext candidateBytes(final long candidateBytes)
    {
        this.candidateBytes = candidateBytes;
        return this;
    }

    /**
     * @param systemCounters the Manager's system counters.
     * @return this.
     */
    public CatalogContext systemCounters(final SystemCounters systemCounters)
    {
        this.systemCounters = systemCounters;
        return this;
    }

    /**
     * @param nanoClock the clock every part reads (tests drive it).
     * @return this.
     */
    public CatalogContext nanoClock(final NanoClock nanoClock)
    {
        this.nanoClock = nanoClock;
        return this;
    }

    public NanoClock nanoClock()
    {
        return nanoClock;
    }

    /**
     * @param peerTransport the bound peer transport this catalog sends through and whose agent it builds.
     * @return this.
     */
    public CatalogContext peerTransport(final PeerTransport peerTransport)
    {
        this.peerTransport = peerTransport;
        return this;
    }

    /**
     * @param membership the joining (or joined) membership, advertising the peer transport's endpoint.
     * @return this.
     */
    public CatalogContext membership(final Membership membership)
    {
        this.membership = membership;
        return this;
    }

    /**
     * @param localResidency what this Manager's own DRAM holds, for the keys after a lookup's local prefix.
     * @return this.
     */
    public CatalogContext localResidency(final LocalResidency localResidency)
    {
        this.localResidency = localResidency;
        return this;
    }
}
