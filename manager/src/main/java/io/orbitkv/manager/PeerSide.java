package io.orbitkv.manager;

import java.util.UUID;
import java.util.concurrent.TimeUnit;

import io.orbitkv.ffm.HugePageMemory;
import io.orbitkv.ffm.MappedRegion;
import io.orbitkv.index.NamespaceTable;
import io.orbitkv.manager.authority.AuthorityLog;
import io.orbitkv.manager.catalog.CatalogContext;
import io.orbitkv.manager.catalog.CatalogService;
import io.orbitkv.manager.catalog.OwnerInventory;
import io.orbitkv.manager.membership.Membership;
import io.orbitkv.manager.membership.MembershipSettings;
import io.orbitkv.manager.peer.PeerTransport;
import io.orbitkv.manager.status.SystemCounters;
import io.orbitkv.manager.store.SsdTier;
import io.orbitkv.manager.store.TieredStore;
import io.orbitkv.manager.transfer.DramResidency;
import io.orbitkv.manager.transfer.MembershipMembers;
import io.orbitkv.manager.transfer.PeerAdmission;
import io.orbitkv.manager.transfer.PeerFetcher;
import io.orbitkv.manager.transfer.TransferService;
import io.orbitkv.manager.transfer.TransferSettings;
import io.orbitkv.manager.transfer.TransportCounters;
import io.orbitkv.transport.Transport;
import org.agrona.CloseHelper;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.status.CountersManager;

/**
 * A clustered Manager's peer side, built once and in dependency order, each part with its collaborators in its
 * constructor: the transfer transport (bound first: the member record advertises where it listens, and the pool is
 * what peers read from), the peer transport (bound: its endpoint goes into the member record too), the membership,
 * the catalog's parts from their concluded context (they send through the peer transport's publisher), the
 * requester's {@link PeerFetcher}, the {@link TransferService} (source side, and the router of the sources' answers
 * and read completions to the fetcher), and last the {@link CatalogService}, which builds the peer transport's agent
 * with the handlers that frames go to. The ring's parts are built after this, with the fetcher as their one
 * door to the peer side ({@link io.orbitkv.manager.port.PeerPort}). A part that fails to start closes what was started before it.
 */
final class PeerSide
{
    final Transport transport;
    final MappedRegion exportStagingRegion;
    final Membership membership;
    final CatalogService catalog;
    final PeerFetcher fetcher;
    final TransferService transfers;

    PeerSide(
        final ManagerContext ctx,
        final UUID runtimeUuid,
        final long startTimeMs,
        final TieredStore store,
        final SsdTier ssdTier,
        final MappedRegion poolRegion,
        final NamespaceTable namespaces,
        final OwnerInventory inventory,
        final SystemCounters systemCounters,
        final CountersManager countersManager,
        final ErrorHandler errorHandler,
        final AuthorityLog authority)
    {
        Transport openedTransport = null;
        MappedRegion stagingRegion = null;
        PeerTransport peerTransport = null;
        Membership startedMembership = null;
        try
        {
            ctx.membershipLog().println(null == ctx.clusterSecret() ?
                "orbitkv manager: peer authentication is OFF (no --cluster-secret-file): peer frames carry no MAC " +
                    "and transfer connections prove nothing" :
                "orbitkv manager: peer authentication is on (secret " + ctx.clusterSecret().file() +
                    "): peer frames carry HMAC-SHA256/128 trailers, " +
                    (Configuration.TransportKind.MOONCAKE == ctx.transport() ?
                    "the mooncake transport's connections are not covered (no handshake of ours)" :
                    "transfer connections prove the secret"));
            ctx.membershipLog().println(null == ctx.transportTls() ?
                "orbitkv manager: transfer transport TLS is off (no --transport-tls-cert): block bytes cross in the clear" :
                "orbitkv manager: transfer transport TLS is on (mutual TLS 1.3, peers verified against " +
                    ctx.transportTlsCa() + "): block bytes are encrypted and copied, not zero-copy");
            openedTransport = ctx.transferTransportSupplier().newTransport(ctx);
            openedTransport.registerMemory(poolRegion.segment().address(), poolRegion.segment().byteSize());
            if (null != ssdTier && ctx.transferSsdStagingBytes() > 0)
            {
                // SSD-only residences are prepared here for peers; small pages, touched only when first used.
                stagingRegion = HugePageMemory.mapAnonymous(ctx.transferSsdStagingBytes(), false);
                openedTransport.registerMemory(stagingRegion.segment().address(), stagingRegion.segment().byteSize());
            }
            peerTransport = PeerTransport.launch(new PeerTransport.Context()
                .endpoint(ctx.peerEndpoint())
                .mtuLength(ctx.peerMtuLength())
                .directory(ctx.dir().toPath())
                .localNodeIndex(0)
                .incarnation(runtimeUuid.getMostSignificantBits(), runtimeUuid.getLeastSignificantBits())
                .placementFingerprint(ctx.placement().routeFingerprint(1))
                .countersManager(countersManager)
                .systemCounters(systemCounters)
                .frameMacKey(null == ctx.clusterSecret() ? null : ctx.clusterSecret().frameMacKey())
                .errorHandler(errorHandler)
                .nanoClock(ctx.nanoClock()));
            // Joining runs on the membership threads; the catalog follows it (no remote work until registered).
            startedMembership = Membership.start(
                new MembershipSettings(
                    ctx.etcdEndpoints(),
                    ctx.clusterName(),
                    ctx.nodeId(),
                    ctx.membershipTtlSecs(),
                    ctx.etcdDeadlineMs(),
                    ctx.placement(),
                    peerTransport.endpoint(),
                    openedTransport.localEndpoint(),
                    runtimeUuid,
                    startTimeMs,
                    ctx.joinTimeoutMs(),
                    ctx.maxShardMoves(),
                    ctx.etcdSecurity()),
                systemCounters,
                errorHandler,
                ctx.membershipLog(),
                ctx.nanoClock(),
                authority);
            final MembershipMembers members = new MembershipMembers(startedMembership, authority);
            final CatalogContext catalogContext = new CatalogContext()
                .nodeId(ctx.nodeId())
                .placement(ctx.placement())
                .runtimeUuid(runtimeUuid)
                .namespaces(namespaces)
                .inventory(inventory)
                .candidateBytes(ctx.catalogCandidateBytes())
                .systemCounters(systemCounters)
                .nanoClock(ctx.nanoClock())
                .peerTransport(peerTransport)
                .membership(startedMembership)
                .localResidency(new DramResidency(store))
                .conclude();
            fetcher = new PeerFetcher(
                catalogContext.requester(), peerTransport.publisher(), openedTransport, store, namespaces,
                new PeerAdmission(ctx.peerAdmission(), TimeUnit.NANOSECONDS.toMillis(ctx.peerAdmissionWindowNs())),
                systemCounters, errorHandler, members);
            transfers = new TransferService(
                TransferSettings.of(ctx),
                store,
                namespaces,
                openedTransport,
                null == stagingRegion ? null : stagingRegion.segment(),
                members,
                peerTransport.publisher(),
                fetcher,
                TransportCounters.of(openedTransport, countersManager, systemCounters),
                systemCounters,
                ctx.nanoClock());
            catalog = new CatalogService(catalogContext, transfers);
        }
        catch (final RuntimeException ex)
        {
            CloseHelper.quietCloseAll(startedMembership, openedTransport, peerTransport, stagingRegion);
            throw ex;
        }
        this.transport = openedTransport;
        this.exportStagingRegion = stagingRegion;
        this.membership = startedMembership;
    }

    /**
     * @return what the idle agent must stay awake for: a transport's completions are polled and a source asked
     * again later is asked on a timer, so no deep sleep while peer reads, revocations or such asks are outstanding.
     */
    int outstandingPolledWork()
    {
        return fetcher.readsInFlight() + transfers.revocationsPending() + fetcher.waitingToAsk();
    }
}
