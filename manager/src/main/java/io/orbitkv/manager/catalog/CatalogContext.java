package io.orbitkv.manager.catalog;

import java.nio.file.Path;
import java.util.UUID;

import io.orbitkv.codecs.CatalogLimits;
import io.orbitkv.codecs.ShardPlacement;
import io.orbitkv.index.BlockStore;
import io.orbitkv.index.CandidateIndex;
import io.orbitkv.index.NamespaceTable;
import io.orbitkv.manager.peer.PeerTransport;
import io.orbitkv.manager.status.SystemCounterDescriptor;
import io.orbitkv.manager.status.SystemCounters;
import org.agrona.CloseHelper;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.SystemNanoClock;
import org.agrona.concurrent.status.CountersManager;

/**
 * Settings of the Manager's catalog and, once {@link #conclude() concluded}, its parts: the owner streams (whose
 * inventory observers the block stores take), the catalog host, the member view follower, discovery, and the peer
 * transport bound to its endpoint. The transport is up after conclude, so the endpoint it resolved (port 0 binds an
 * ephemeral port) can go into the member record before the membership the {@link CatalogService} follows exists;
 * nothing runs until the service's duty cycle does. Close it only when no service was built from it (the service
 * closes it).
 */
public final class CatalogContext implements AutoCloseable
{
    private String nodeId;
    private ShardPlacement placement;
    private UUID runtimeUuid;
    private String peerEndpoint;
    private int peerMtuLength = PeerTransport.AUTO_MTU;
    private Path directory;
    private NamespaceTable namespaces;
    private long inventoryResidences;
    private long inventoryBytes;
    private long candidateBytes = CatalogLimits.CANDIDATE_INDEX_BUDGET_BYTES;
    private long journalBytes;
    private SystemCounters systemCounters;
    private CountersManager countersManager;
    private ErrorHandler errorHandler;
    private NanoClock nanoClock = SystemNanoClock.INSTANCE;
    private TransferPart transfers;

    private boolean concluded;
    private CatalogHost host;
    private OwnerStreams streams;
    private MemberViewSync members;
    private CandidateIndex candidates;
    private PeerDiscovery discovery;
    private PeerTransport transport;

    /**
     * Validate the settings, build the parts and launch the peer transport (its embedded media driver included).
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
        require(null != peerEndpoint, "peerEndpoint is required");
        require(null != directory, "directory is required");
        require(null != namespaces, "namespaces is required");
        require(inventoryResidences >= 0, "inventoryResidences must not be negative: " + inventoryResidences);
        require(inventoryBytes > 0, "inventoryBytes must be positive: " + inventoryBytes);
        require(journalBytes > 0, "journalBytes must be positive: " + journalBytes);
        require(null != systemCounters, "systemCounters is required");
        require(null != countersManager, "countersManager is required");
        require(null != errorHandler, "errorHandler is required");
        require(null != nanoClock, "nanoClock is required");
        concluded = true;

        final long selfMsb = runtimeUuid.getMostSignificantBits();
        final long selfLsb = runtimeUuid.getLeastSignificantBits();
        streams = new OwnerStreams(namespaces, inventoryResidences, inventoryBytes, journalBytes, systemCounters);
        host = new CatalogHost(nodeId, placement, selfMsb, selfLsb);
        systemCounters.get(SystemCounterDescriptor.CATALOG_HOSTED_SHARDS).setRelease(host.hostedCount());
        members = new MemberViewSync(nodeId, placement, runtimeUuid, host, streams,
            systemCounters.get(SystemCounterDescriptor.CATALOG_INCARNATIONS_RETIRED));
        candidates = new CandidateIndex(candidateBytes, CatalogLimits.CANDIDATE_TTL_MS, new NamespaceTable());
        discovery = new PeerDiscovery(host, members, candidates, systemCounters);
        transport = PeerTransport.launch(new PeerTransport.Context()
            .endpoint(peerEndpoint)
            .mtuLength(peerMtuLength)
            .directory(directory)
            .localNodeIndex(0)
            .incarnation(selfMsb, selfLsb)
            .placementFingerprint(host.placementFingerprint())
            .validator(host.validator())
            .coldQueryHandler(host.coldQueryHandler())
            .handler(new CatalogPeerHandler(members, streams, discovery, systemCounters, nanoClock))
            .transferHandler(transfers)
            .countersManager(countersManager)
            .errorHandler(errorHandler)
            .nanoClock(nanoClock));
        return this;
    }

    /**
     * Close the peer transport of a context no service was built from.
     */
    public void close()
    {
        CloseHelper.quietClose(transport);
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
     * @return the peer transport, bound to its endpoint.
     */
    public PeerTransport transport()
    {
        requireConcluded();
        return transport;
    }

    /**
     * @return what the DRAM store reports its READY transitions to.
     */
    public BlockStore.ResidencyObserver dramObserver()
    {
        requireConcluded();
        return streams.dramObserver();
    }

    /**
     * @return what the SSD tier reports its READY transitions to.
     */
    public BlockStore.ResidencyObserver ssdObserver()
    {
        requireConcluded();
        return streams.ssdObserver();
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
     * @param peerEndpoint HOST:PORT the peer transport binds and the member record advertises.
     * @return this.
     */
    public CatalogContext peerEndpoint(final String peerEndpoint)
    {
        this.peerEndpoint = peerEndpoint;
        return this;
    }

    /**
     * @param peerMtuLength payload bytes per peer datagram, {@link PeerTransport#AUTO_MTU} for the interface's.
     * @return this.
     */
    public CatalogContext peerMtuLength(final int peerMtuLength)
    {
        this.peerMtuLength = peerMtuLength;
        return this;
    }

    /**
     * @param directory where the embedded media driver's directory goes (inside the Manager's dir).
     * @return this.
     */
    public CatalogContext directory(final Path directory)
    {
        this.directory = directory;
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
     * @param inventoryResidences residences both tiers can hold (sizes the inventory).
     * @return this.
     */
    public CatalogContext inventoryResidences(final long inventoryResidences)
    {
        this.inventoryResidences = inventoryResidences;
        return this;
    }

    /**
     * @param inventoryBytes ceiling of the inventory's tables over all shards.
     * @return this.
     */
    /**
     * @param candidateBytes logical byte budget of the candidate index (design default 16 MiB).
     * @return this.
     */
    public CatalogContext candidateBytes(final long candidateBytes)
    {
        this.candidateBytes = candidateBytes;
        return this;
    }

    public CatalogContext inventoryBytes(final long inventoryBytes)
    {
        this.inventoryBytes = inventoryBytes;
        return this;
    }

    /**
     * @param journalBytes owner journal budget of all shards (design: 16 MiB).
     * @return this.
     */
    public CatalogContext journalBytes(final long journalBytes)
    {
        this.journalBytes = journalBytes;
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
     * @param countersManager where the peer transport's counters go (the CnC file's).
     * @return this.
     */
    public CatalogContext countersManager(final CountersManager countersManager)
    {
        this.countersManager = countersManager;
        return this;
    }

    /**
     * @param errorHandler error handler of the transport.
     * @return this.
     */
    public CatalogContext errorHandler(final ErrorHandler errorHandler)
    {
        this.errorHandler = errorHandler;
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
     * @param transfers the transfer control the peer transport delivers transfer frames to and the service's duty
     *                  cycle drives, or null (default) for a Manager without peer transfers.
     * @return this.
     */
    public CatalogContext transfers(final TransferPart transfers)
    {
        this.transfers = transfers;
        return this;
    }

    TransferPart transfers()
    {
        return transfers;
    }
}
