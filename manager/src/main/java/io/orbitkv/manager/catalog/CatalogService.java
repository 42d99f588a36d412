package io.orbitkv.manager.catalog;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import io.orbitkv.catalog.CatalogDirectory;
import io.orbitkv.catalog.CatalogRequestValidator;
import io.orbitkv.catalog.ColdQueryHandler;
import io.orbitkv.catalog.HostBudget;
import io.orbitkv.catalog.JournalRecord;
import io.orbitkv.catalog.OwnerJournal;
import io.orbitkv.catalog.ShardInventory;
import io.orbitkv.catalog.ShardReceiver;
import io.orbitkv.codecs.CatalogLimits;
import io.orbitkv.codecs.ShardPlacement;
import io.orbitkv.codecs.StateKeyFlyweight;
import io.orbitkv.codecs.catalog.CatalogStatus;
import io.orbitkv.codecs.catalog.ColdQueryResponseDecoder;
import io.orbitkv.index.BlockStore;
import io.orbitkv.index.CandidateIndex;
import io.orbitkv.index.CandidateSet;
import io.orbitkv.index.CatalogRecordTable;
import io.orbitkv.index.NamespaceTable;
import io.orbitkv.manager.status.SystemCounterDescriptor;
import io.orbitkv.manager.status.SystemCounters;
import io.orbitkv.manager.membership.MemberRecord;
import io.orbitkv.manager.membership.MemberView;
import io.orbitkv.manager.membership.Membership;
import io.orbitkv.manager.peer.PeerAgent;
import io.orbitkv.manager.peer.PeerClient;
import io.orbitkv.manager.peer.PeerSession;
import io.orbitkv.manager.peer.PeerTransport;
import io.orbitkv.manager.peer.ReceivingPeerHandler;
import org.agrona.CloseHelper;
import org.agrona.ErrorHandler;
import org.agrona.collections.Long2ObjectHashMap;
import org.agrona.collections.Object2IntHashMap;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.status.AtomicCounter;
import org.agrona.concurrent.status.CountersManager;

/**
 * The Manager's part in the distributed catalog, all on the agent thread that also owns the block stores (it runs
 * in the same composite as the engine ring agent, so an inventory transition, its journal record and the stream that
 * sends it never cross threads):
 * <ul>
 *     <li>owner: the {@link ShardInventory} fed by both tiers' stores and one {@link OwnerStream} per shard to the
 *     shard's catalog host;</li>
 *     <li>catalog host: a {@link CatalogDirectory} over the shards placement gives this node, with one receiving
 *     state per (member, shard), admitted and dropped from the member view, answering cold queries;</li>
 *     <li>requester: {@link PeerDiscovery} for engine lookups.</li>
 * </ul>
 * Hosts know publishers by runtime incarnation (every route carries it), mapped to a local owner slot through the
 * member view; the node index in a PeerConnect is not used for that.
 */
public final class CatalogService extends ReceivingPeerHandler implements Agent, AutoCloseable
{
    /**
     * Residences per shard the inventory is sized for, as a multiple of an even share of both tiers' index
     * capacity: keys do not spread perfectly over 16 shards.
     */
    static final int INVENTORY_SHARD_SLACK = 2;

    /**
     * Least inventory capacity per shard.
     */
    static final int MIN_INVENTORY_RECORDS_PER_SHARD = 1024;

    private static final long GAUGE_INTERVAL_NS = 100_000_000L;

    /**
     * Retired incarnations remembered for answering their late frames STALE_INCARNATION (the receivers themselves
     * remember the last {@link ShardReceiver#MAX_RETIRED_INCARNATIONS} each).
     */
    static final int MAX_RETIRED_INCARNATIONS = 4096;

    private final String nodeId;
    private final ShardPlacement placement;
    private long selfMsb;
    private long selfLsb;
    private final NanoClock clock;
    private final CatalogMetrics metrics;
    private final OwnerJournal journal;
    private final ShardInventory inventory;
    private final OwnerStream[] streams = new OwnerStream[CatalogLimits.SHARD_COUNT];
    private final boolean[] hosted = new boolean[CatalogLimits.SHARD_COUNT];
    private final CatalogDirectory directory;
    private final ColdQueryHandler coldQueryHandler;
    private final CatalogRequestValidator validator;
    private final AtomicCounter incarnationsRetired;
    private final CandidateIndex candidates = new CandidateIndex();
    private final PeerTransport transport;
    private final PeerDiscovery discovery;
    private final InventoryObserver dramObserver;
    private final InventoryObserver ssdObserver;

    private final Map<String, HostLink> links = new HashMap<>();
    private final Long2ObjectHashMap<MemberRecord> membersByMsb = new Long2ObjectHashMap<>();
    private final Object2IntHashMap<String> slotByNode = new Object2IntHashMap<>(-1);
    private final List<String> slotNodes = new ArrayList<>();
    private final Long2ObjectHashMap<MemberRecord> retiredByMsb = new Long2ObjectHashMap<>();
    private final boolean[] slotPresent = new boolean[CatalogDirectory.MAX_OWNERS];
    private final boolean[] slotAdmitted = new boolean[CatalogDirectory.MAX_OWNERS];
    private final long[] slotIncarnationMsb = new long[CatalogDirectory.MAX_OWNERS];
    private final long[] slotIncarnationLsb = new long[CatalogDirectory.MAX_OWNERS];
    private final int hostedCount;

    private volatile Membership membership;
    private MemberView appliedView;
    private MemberView skippedView;
    private boolean resyncView;
    private long gaugesAtNs;

    /**
     * @param nodeId            this node's id.
     * @param placement         the cluster's placement (checked against etcd by the membership join).
     * @param runtimeUuid       this runtime's incarnation.
     * @param peerEndpoint      HOST:PORT the peer transport binds and the member record advertises.
     * @param peerMtuLength     payload bytes per peer datagram, {@link PeerTransport#AUTO_MTU} for the interface's.
     * @param directory         where the embedded media driver's directory goes (inside the Manager's dir).
     * @param namespaces        the Manager's namespace table (resolves store entries' namespace ids).
     * @param inventoryResidences residences both tiers can hold (sizes the inventory).
     * @param inventoryBytes    ceiling of the inventory's tables over all shards.
     * @param journalBytes      owner journal budget of all shards (design: 16 MiB).
     * @param counters          system counters.
     * @param countersManager   where the peer transport's counters go (the CnC file's).
     * @param errorHandler      error handler.
     * @param clock             nano clock.
     * @param sink              receives lookups whose peer answer is ready.
     */
    public CatalogService(
        final String nodeId,
        final ShardPlacement placement,
        final UUID runtimeUuid,
        final String peerEndpoint,
        final int peerMtuLength,
        final Path directory,
        final NamespaceTable namespaces,
        final long inventoryResidences,
        final long inventoryBytes,
        final long journalBytes,
        final SystemCounters counters,
        final CountersManager countersManager,
        final ErrorHandler errorHandler,
        final NanoClock clock,
        final LookupAnswerSink sink)
    {
        this.nodeId = nodeId;
        this.placement = placement;
        this.selfMsb = runtimeUuid.getMostSignificantBits();
        this.selfLsb = runtimeUuid.getLeastSignificantBits();
        this.clock = clock;
        this.metrics = new CatalogMetrics(counters);
        this.journal = new OwnerJournal(CatalogLimits.SHARD_COUNT, journalBytes, OwnerJournal.DEFAULT_SEGMENT_BYTES,
            OwnerJournal.DEFAULT_MAX_RECEIVERS_PER_SHARD);

        final int perShard = (int)Math.min(Integer.MAX_VALUE / 2, Math.max(MIN_INVENTORY_RECORDS_PER_SHARD,
            inventoryResidences * INVENTORY_SHARD_SLACK / CatalogLimits.SHARD_COUNT));
        this.inventory = new ShardInventory(journal, namespaces,
            Math.min(CatalogRecordTable.budgetFor(perShard), inventoryBytes / CatalogLimits.SHARD_COUNT));
        this.dramObserver = new InventoryObserver(JournalRecord.TIER_DRAM, inventory, namespaces, metrics);
        this.ssdObserver = new InventoryObserver(JournalRecord.TIER_SSD, inventory, namespaces, metrics);
        for (int s = 0; s < streams.length; s++)
        {
            streams[s] = new OwnerStream(s, inventory, metrics);
            hosted[s] = nodeId.equals(placement.hostOf(s));
        }
        int hostedCount = 0;
        for (final boolean h : hosted)
        {
            hostedCount += h ? 1 : 0;
        }
        metrics.hostedShards.setRelease(hostedCount);
        this.hostedCount = hostedCount;
        this.incarnationsRetired = counters.get(SystemCounterDescriptor.CATALOG_INCARNATIONS_RETIRED);

        this.directory = new CatalogDirectory(hosted, new HostBudget());
        final long fingerprint = fingerprintOf(placement);
        this.validator = new CatalogRequestValidator(selfMsb, selfLsb, fingerprint, hosted);
        this.coldQueryHandler = new ColdQueryHandler(validator, this.directory, selfMsb, selfLsb, fingerprint);
        this.discovery = new PeerDiscovery(this, candidates, metrics, sink);
        this.transport = PeerTransport.launch(new PeerTransport.Context()
            .endpoint(peerEndpoint)
            .mtuLength(peerMtuLength)
            .directory(directory)
            .localNodeIndex(0)
            .incarnation(selfMsb, selfLsb)
            .placementFingerprint(fingerprint)
            .validator(validator)
            .coldQueryHandler(coldQueryHandler)
            .handler(this)
            .countersManager(countersManager)
            .errorHandler(errorHandler)
            .nanoClock(clock));
    }

    /**
     * The placement fingerprint as carried on the wire: the first 64 bits of the 128-bit hex fingerprint.
     */
    public static long fingerprintOf(final ShardPlacement placement)
    {
        return Long.parseUnsignedLong(placement.fingerprint().substring(0, 16), 16);
    }

    /**
     * Hand over the joined membership (the service idles until then); any thread.
     */
    public void membership(final Membership membership)
    {
        this.membership = membership;
    }

    public BlockStore.ResidencyObserver dramObserver()
    {
        return dramObserver;
    }

    public BlockStore.ResidencyObserver ssdObserver()
    {
        return ssdObserver;
    }

    public String roleName()
    {
        return "orbitkv-catalog";
    }

    public int doWork()
    {
        final long nowNs = clock.nanoTime();
        final long nowMs = nowNs / 1_000_000L;
        int work = transport.doWork();
        work += syncIncarnation();
        work += syncView();
        for (final OwnerStream stream : streams)
        {
            work += stream.doWork(transport.agent(), nowNs, nowMs);
        }
        work += discovery.doWork(nowMs);
        if (work > 0)
        {
            work += transport.agent().invokeDriver();
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
        for (final OwnerStream stream : streams)
        {
            stream.close();
        }
        for (final HostLink link : links.values())
        {
            link.close(transport.agent());
        }
        links.clear();
    }

    public void close()
    {
        CloseHelper.quietClose(transport);
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Requester API for the ring agent.

    /**
     * @return a lookup to fill and {@link #startLookup}, or null when the service cannot take one now (no member
     * view yet, remote work disabled, or every pending slot in use): answer locally.
     */
    public PendingLookup acquireLookup()
    {
        final Membership current = membership;
        if (null == current || !current.remoteWorkEnabled(clock.nanoTime()) || null == appliedView)
        {
            metrics.discoverySkipped.incrementRelease();
            return null;
        }
        final PendingLookup lookup = discovery.acquire();
        if (null == lookup)
        {
            metrics.discoverySkipped.incrementRelease();
        }
        return lookup;
    }

    public void startLookup(final PendingLookup lookup)
    {
        discovery.start(lookup, clock.nanoTime() / 1_000_000L);
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Shared with PeerDiscovery.

    boolean hostsShard(final int shard)
    {
        return hosted[shard];
    }

    /**
     * One row from this Manager's own catalog view, as a cold query to it would answer (the view also holds this
     * Manager's own residences, which the caller filters out like any self candidate). Whether the view is complete
     * does not matter to the caller: an empty row is stored nowhere either way.
     */
    void lookupHosted(final int shard, final StateKeyFlyweight key, final CandidateSet row)
    {
        directory.lookup(shard, key, row);
    }

    HostLink linkForShard(final int shard)
    {
        return links.get(placement.hostOf(shard));
    }

    MemberRecord memberByIncarnation(final long msb, final long lsb)
    {
        final MemberRecord record = membersByMsb.get(msb);
        return null != record && record.runtimeUuid().getLeastSignificantBits() == lsb ? record : null;
    }

    boolean isSelf(final long msb, final long lsb)
    {
        return msb == selfMsb && lsb == selfLsb;
    }

    PeerAgent agent()
    {
        return transport.agent();
    }

    long nextCorrelationId()
    {
        return transport.agent().nextCorrelationId();
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Member view.

    /**
     * Follow the runtime UUID membership speaks for. After a lapsed registration the process is a new incarnation
     * (design: the old one never revives): routes are judged against and sent from the new UUID, every session
     * opened as the old one is closed, and once the view shows the new record the streams reconnect and start, as
     * for any new session, with a snapshot cut: the inventory is re-announced through the normal snapshot path.
     * The journal keeps its sequences; a new incarnation's receivers start from that snapshot's watermark.
     */
    private int syncIncarnation()
    {
        final Membership current = membership;
        if (null == current)
        {
            return 0;
        }
        final UUID uuid = current.runtimeUuid();
        final long msb = uuid.getMostSignificantBits();
        final long lsb = uuid.getLeastSignificantBits();
        if (msb == selfMsb && lsb == selfLsb)
        {
            return 0;
        }
        final UUID previous = new UUID(selfMsb, selfLsb);
        selfMsb = msb;
        selfLsb = lsb;
        validator.localIncarnation(msb, lsb);
        coldQueryHandler.localIncarnation(msb, lsb);
        transport.agent().localIncarnation(msb, lsb);
        for (final HostLink link : links.values())
        {
            link.close(transport.agent());
        }
        links.clear();
        for (final OwnerStream stream : streams)
        {
            stream.retarget(null);
        }
        resyncView = true;
        current.log().println("orbitkv catalog: node '" + nodeId + "' now speaks as runtime " + uuid + " (was " +
            previous + "); its inventory is re-announced by snapshot once the view shows the new record");
        return 1;
    }

    private int syncView()
    {
        final Membership current = membership;
        if (null == current)
        {
            return 0;
        }
        final MemberView view = current.view();
        if ((view == appliedView && !resyncView) || view == skippedView || !view.isComplete())
        {
            // An incomplete view proves no absence: keep acting on the last complete one.
            return 0;
        }
        final MemberRecord own = view.member(nodeId);
        if (null == own || !isSelf(own.runtimeUuid().getMostSignificantBits(), own.runtimeUuid().getLeastSignificantBits()))
        {
            // The view does not show the incarnation this process speaks for yet (it is registering): wait for the
            // one that does, so links and streams are built once, for the right identity.
            skippedView = view;
            return 0;
        }
        resyncView = false;
        skippedView = null;
        final MemberView previous = appliedView;
        appliedView = view;

        membersByMsb.clear();
        for (final MemberRecord record : view.members().values())
        {
            membersByMsb.put(record.runtimeUuid().getMostSignificantBits(), record);
        }
        if (null != previous)
        {
            // Incarnations leaving the view stay known, so their late frames reach the receiver that retired them
            // and are refused as STALE_INCARNATION rather than as an unknown publisher.
            for (final MemberRecord record : previous.members().values())
            {
                final UUID incarnation = record.runtimeUuid();
                if (null == memberByIncarnation(incarnation.getMostSignificantBits(), incarnation.getLeastSignificantBits()))
                {
                    if (retiredByMsb.size() >= MAX_RETIRED_INCARNATIONS)
                    {
                        retiredByMsb.clear();
                    }
                    retiredByMsb.put(incarnation.getMostSignificantBits(), record);
                }
            }
        }

        for (final String node : placement.nodes())
        {
            final MemberRecord record = view.member(node);
            final HostLink link = links.get(node);
            if (null != link && !link.isFor(record))
            {
                link.close(transport.agent());
                links.remove(node);
            }
            if (null != record && !links.containsKey(node))
            {
                links.put(node, new HostLink(record));
            }
        }
        for (final OwnerStream stream : streams)
        {
            stream.retarget(links.get(placement.hostOf(stream.shard)));
        }

        // Catalog host: admit every member's incarnation, drop those the view no longer shows.
        java.util.Arrays.fill(slotPresent, false);
        for (final MemberRecord record : view.members().values())
        {
            final int slot = slotFor(record.nodeId());
            if (slot < 0)
            {
                continue;
            }
            slotPresent[slot] = true;
            final long msb = record.runtimeUuid().getMostSignificantBits();
            final long lsb = record.runtimeUuid().getLeastSignificantBits();
            if (slotAdmitted[slot] && (slotIncarnationMsb[slot] != msb || slotIncarnationLsb[slot] != lsb))
            {
                retired(slot, "replaced by " + record.runtimeUuid() + ", epoch " + record.epoch());
            }
            slotAdmitted[slot] = true;
            slotIncarnationMsb[slot] = msb;
            slotIncarnationLsb[slot] = lsb;
            for (int s = 0; s < hosted.length; s++)
            {
                if (hosted[s])
                {
                    directory.receiver(slot, s).admitIncarnation(msb, lsb);
                }
            }
        }
        for (int slot = 0; slot < slotNodes.size(); slot++)
        {
            if (!slotPresent[slot])
            {
                if (slotAdmitted[slot])
                {
                    retired(slot, "left the member view");
                    slotAdmitted[slot] = false;
                }
                for (int s = 0; s < hosted.length; s++)
                {
                    if (hosted[s])
                    {
                        directory.receiver(slot, s).dropMember();
                    }
                }
            }
        }
        return 1;
    }

    /**
     * Admitting a new incarnation of an owner, or dropping one that left, retires the old one on every hosted shard:
     * its evidence is dropped and its late frames are refused as stale (ShardReceiver).
     */
    private void retired(final int slot, final String why)
    {
        if (0 == hostedCount)
        {
            return;
        }
        incarnationsRetired.incrementRelease();
        membership.log().println("orbitkv catalog: retired incarnation " +
            new UUID(slotIncarnationMsb[slot], slotIncarnationLsb[slot]) + " of node '" + slotNodes.get(slot) + "' (" +
            why + "): its evidence on " + hostedCount + " hosted shard(s) is dropped");
    }

    private int slotFor(final String node)
    {
        int slot = slotByNode.getValue(node);
        if (slot < 0)
        {
            slot = slotNodes.size();
            if (!directory.addOwner(slot))
            {
                return -1;
            }
            slotNodes.add(node);
            slotByNode.put(node, slot);
        }
        return slot;
    }

    protected ShardReceiver receiverOf(final PeerSession session, final int shard)
    {
        final long msb = session.requesterIncarnationMsb();
        final long lsb = session.requesterIncarnationLsb();
        MemberRecord record = memberByIncarnation(msb, lsb);
        if (null == record)
        {
            record = retiredByMsb.get(msb);
            if (null == record || record.runtimeUuid().getLeastSignificantBits() != lsb)
            {
                return null;
            }
        }
        final int slot = slotByNode.getValue(record.nodeId());
        return slot < 0 ? null : directory.receiver(slot, shard);
    }

    private void updateGauges()
    {
        metrics.journalBytes.setRelease(journal.usedBytes());
        metrics.journalOverflows.setRelease(journal.overflowResyncs());
        metrics.indexBytes.setRelease(directory.budget().reservedBytes());
        metrics.candidateBytes.setRelease(candidates.logicalBytes());
        metrics.onColdQueriesServed(coldQueryHandler);
        int incomplete = 0;
        for (int s = 0; s < hosted.length; s++)
        {
            if (!hosted[s])
            {
                continue;
            }
            boolean complete = null != appliedView;
            for (int slot = 0; slot < slotNodes.size() && complete; slot++)
            {
                complete = directory.receiver(slot, s).coverageComplete();
            }
            incomplete += complete ? 0 : 1;
        }
        metrics.incompleteShards.setRelease(incomplete);
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Catalog host: ReceivingPeerHandler hooks.

    protected void onDeltaOutcome(final int outcome)
    {
        if (ShardReceiver.APPLIED == outcome)
        {
            metrics.recordsApplied.incrementRelease();
        }
    }

    protected void onStatus(final CatalogStatus status)
    {
        if (CatalogStatus.RESYNC_REQUIRED == status)
        {
            metrics.hostResyncs.incrementRelease();
        }
    }

    // ---------------------------------------------------------------------------------------------------------------
    // PeerHandler: owner and requester.

    public void onAck(final PeerClient client, final int shard, final long contiguousSequence)
    {
        streams[shard].onAck(client, contiguousSequence, clock.nanoTime());
    }

    public void onGapRepair(
        final PeerClient client, final int shard, final long correlationId, final long fromSequence,
        final long toSequence)
    {
        streams[shard].onGapRepair(client, fromSequence, clock.nanoTime());
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
            streams[shard].onResyncRequired(client, clock.nanoTime());
        }
        discovery.onResponse(client, correlationId, clock.nanoTime() / 1_000_000L);
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
