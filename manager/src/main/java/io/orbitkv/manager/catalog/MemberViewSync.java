package io.orbitkv.manager.catalog;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;

import io.orbitkv.catalog.CatalogDirectory;
import io.orbitkv.catalog.ShardReceiver;
import io.orbitkv.codecs.CatalogLimits;
import io.orbitkv.manager.membership.CoverageReport;
import io.orbitkv.manager.membership.MemberRecord;
import io.orbitkv.manager.membership.MemberView;
import io.orbitkv.manager.membership.Membership;
import io.orbitkv.manager.membership.MovePhase;
import io.orbitkv.manager.membership.PlacementState;
import io.orbitkv.manager.membership.PlacementTransition;
import io.orbitkv.manager.membership.ShardMove;
import io.orbitkv.manager.peer.PeerPublisher;
import org.agrona.collections.Long2ObjectHashMap;
import org.agrona.collections.Object2IntHashMap;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * The catalog's copy of the member view, applied on the catalog agent's thread: which incarnation this runtime speaks
 * as, one {@link HostLink} per catalog host incarnation (the owner streams and cold queries share them), which owner
 * slot of the {@link CatalogHost} each member is, and which incarnations are retired. Hosts know publishers by
 * runtime incarnation (every route carries it), mapped to a local owner slot through the view; the node index in a
 * PeerConnect is not used for that.
 * <p>
 * The view's {@link PlacementState} decides which shards this host holds, which nodes each shard's owner streams go
 * to and in which order its copies are asked; a placement transition changes them as its moves advance, and this
 * host reports, for the shards moving to it, when its copy is complete ({@link #reportCoverage()}).
 * <p>
 * Only complete views are applied: an incomplete one proves no absence, so the last complete one stays in force.
 * Slow path: applying a view allocates (links, slots); looking a member up does not.
 */
final class MemberViewSync implements DiscoveryMembers
{
    /**
     * Retired incarnations remembered for answering their late frames STALE_INCARNATION (the receivers themselves
     * remember the last {@link ShardReceiver#MAX_RETIRED_INCARNATIONS} each).
     */
    static final int MAX_RETIRED_INCARNATIONS = 4096;

    private final String nodeId;
    private PlacementState placement;
    private final CatalogHost host;
    private final OwnerStreams streams;
    private final AtomicCounter incarnationsRetired;
    private final AtomicCounter placementStatesApplied;
    private final Membership membership;
    private final PeerPublisher publisher;
    private long selfMsb;
    private long selfLsb;

    private final Map<String, HostLink> links = new HashMap<>();
    private final Long2ObjectHashMap<MemberRecord> membersByMsb = new Long2ObjectHashMap<>();
    private final Object2IntHashMap<String> slotByNode = new Object2IntHashMap<>(-1);
    private final List<String> slotNodes = new ArrayList<>();
    private final Long2ObjectHashMap<MemberRecord> retiredByMsb = new Long2ObjectHashMap<>();
    private final boolean[] slotPresent = new boolean[CatalogDirectory.MAX_OWNERS];
    private final boolean[] slotAdmitted = new boolean[CatalogDirectory.MAX_OWNERS];
    private final long[] slotIncarnationMsb = new long[CatalogDirectory.MAX_OWNERS];
    private final long[] slotIncarnationLsb = new long[CatalogDirectory.MAX_OWNERS];

    private CoverageReport lastReport;
    private MemberView appliedView;
    private MemberView skippedView;
    private boolean resyncView;

    MemberViewSync(
        final String nodeId,
        final PlacementState placement,
        final UUID runtimeUuid,
        final CatalogHost host,
        final OwnerStreams streams,
        final AtomicCounter incarnationsRetired,
        final AtomicCounter placementStatesApplied,
        final Membership membership,
        final PeerPublisher publisher)
    {
        this.membership = membership;
        this.publisher = publisher;
        this.nodeId = nodeId;
        this.placement = placement;
        this.selfMsb = runtimeUuid.getMostSignificantBits();
        this.selfLsb = runtimeUuid.getLeastSignificantBits();
        this.host = host;
        this.streams = streams;
        this.incarnationsRetired = incarnationsRetired;
        this.placementStatesApplied = placementStatesApplied;
    }

    boolean hasView()
    {
        return null != appliedView;
    }

    int ownerSlots()
    {
        return slotNodes.size();
    }

    /**
     * @return the session to a catalog host node, or null when the node hosts no shard.
     */
    HostLink linkForNode(final String nodeId)
    {
        return links.get(nodeId);
    }

    public int replicaLinks(final int shard, final ColdQueryLink[] out)
    {
        final String[] order = placement.queryOrder(shard);
        for (int r = 0; r < order.length; r++)
        {
            out[r] = order[r].equals(nodeId) ? null : links.get(order[r]);
        }
        return order.length;
    }

    public MemberRecord memberByIncarnation(final long msb, final long lsb)
    {
        final MemberRecord record = membersByMsb.get(msb);
        return null != record && record.runtimeUuid().getLeastSignificantBits() == lsb ? record : null;
    }

    long selfMsb()
    {
        return selfMsb;
    }

    long selfLsb()
    {
        return selfLsb;
    }

    public boolean isSelf(final long msb, final long lsb)
    {
        return msb == selfMsb && lsb == selfLsb;
    }

    /**
     * @return the host's receiver of a publisher incarnation for a hosted shard (a retired incarnation's too, so its
     * late frames are refused as stale), or null when the view never showed it.
     */
    ShardReceiver receiverOf(final long msb, final long lsb, final int shard)
    {
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
        return slot < 0 ? null : host.directory().receiver(slot, shard);
    }

    /**
     * Follow the runtime UUID membership speaks for. After a lapsed registration the process is a new incarnation
     * (design: the old one never revives): routes are judged against and sent from the new UUID, every session
     * opened as the old one is closed, and once the view shows the new record the streams reconnect and start, as
     * for any new session, with a snapshot cut: the inventory is re-announced through the normal snapshot path.
     * The journal keeps its sequences; a new incarnation's receivers start from that snapshot's watermark.
     */
    int syncIncarnation()
    {
        final UUID uuid = membership.runtimeUuid();
        final long msb = uuid.getMostSignificantBits();
        final long lsb = uuid.getLeastSignificantBits();
        if (msb == selfMsb && lsb == selfLsb)
        {
            return 0;
        }
        final UUID previous = new UUID(selfMsb, selfLsb);
        selfMsb = msb;
        selfLsb = lsb;
        host.localIncarnation(msb, lsb);
        publisher.localIncarnation(msb, lsb);
        closeLinks();
        streams.retargetAllToNone();
        resyncView = true;
        membership.log().println("orbitkv catalog: node '" + nodeId + "' now speaks as runtime " + uuid + " (was " +
            previous + "); its inventory is re-announced by snapshot once the view shows the new record");
        return 1;
    }

    int syncView()
    {
        final MemberView view = membership.view();
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
            rememberRetired(previous);
        }
        final PlacementState state = view.placementState();
        if (null != state && !state.equals(placement))
        {
            applyPlacement(state);
        }
        applyLinks(view);
        applyOwnerSlots(view, membership);
        admitMemberHosts(view);
        return 1;
    }

    /**
     * The peer socket hears the hosts of this view's members from now on (their peer endpoints' addresses).
     */
    private void admitMemberHosts(final MemberView view)
    {
        final List<String> endpoints = new ArrayList<>(view.members().size());
        for (final MemberRecord record : view.members().values())
        {
            endpoints.add(record.peerEndpoint());
        }
        publisher.sourceFilter().admit(endpoints);
    }

    void closeLinks()
    {
        for (final HostLink link : links.values())
        {
            link.close();
        }
        links.clear();
    }

    /**
     * Incarnations leaving the view stay known, so their late frames reach the receiver that retired them and are
     * refused as STALE_INCARNATION rather than as an unknown publisher.
     */
    private void rememberRetired(final MemberView previous)
    {
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

    private void applyPlacement(final PlacementState state)
    {
        final PlacementState previous = placement;
        placement = state;
        placementStatesApplied.incrementRelease();
        final int changed = host.applyPlacement(state);
        publisher.placementFingerprint(state.sendFingerprint());
        // The membership logs every phase; this log says what changed here: hosted shards or the generation.
        if (0 != changed || previous.generation() != state.generation())
        {
            membership.log().println("orbitkv catalog: placement generation " + state.generation() +
                (state.isStable() ? "" : ", moving to generation " + state.transition().toGeneration()) + ": " +
                host.hostedCount() + " hosted shard(s), " + changed + " changed");
        }
    }

    private void applyLinks(final MemberView view)
    {
        final TreeSet<String> nodes = new TreeSet<>(placement.placement().nodes());
        nodes.addAll(placement.target().nodes());
        for (final Map.Entry<String, HostLink> link : new ArrayList<>(links.entrySet()))
        {
            if (!nodes.contains(link.getKey()))
            {
                link.getValue().close();
                links.remove(link.getKey());
            }
        }
        for (final String node : nodes)
        {
            final MemberRecord record = view.member(node);
            final HostLink link = links.get(node);
            if (null != link && !link.isFor(record))
            {
                link.close();
                links.remove(node);
            }
            if (null != record && !links.containsKey(node))
            {
                links.put(node, new HostLink(record, publisher));
            }
        }
        for (int s = 0; s < CatalogLimits.SHARD_COUNT; s++)
        {
            streams.retarget(s, placement.holders(s), links::get);
        }
    }

    /**
     * Tell the reconciler which of the shards a transition moves to this node have a complete copy here, with the
     * stream sequence applied per owner (the handoff watermarks). Runs on the gauge tick; allocates only while a
     * transition moves a shard to this node, and hands a report over only when it differs from the last one.
     *
     * @return 1 if a new report was handed over.
     */
    int reportCoverage()
    {
        final PlacementTransition transition = placement.transition();
        if (null == transition || null == appliedView)
        {
            return 0;
        }
        Map<Integer, Map<String, Long>> complete = null;
        for (int s = 0; s < CatalogLimits.SHARD_COUNT; s++)
        {
            final ShardMove move = transition.move(s);
            if (null == move || MovePhase.PENDING == move.phase() || transition.target().replicaIndex(s, nodeId) < 0 ||
                !host.shardComplete(s, slotNodes.size(), true))
            {
                continue;
            }
            // The watermarks of the moment the copy first became complete stay: the report changes only when the
            // set of complete shards does, not with every applied delta.
            Map<String, Long> watermarks = null == lastReport || lastReport.generation() != transition.toGeneration() ?
                null : lastReport.completeShards().get(s);
            if (null == watermarks)
            {
                watermarks = new TreeMap<>();
                for (int slot = 0; slot < slotNodes.size(); slot++)
                {
                    if (slotPresent[slot])
                    {
                        watermarks.put(slotNodes.get(slot), host.directory().receiver(slot, s).contiguousSequence());
                    }
                }
            }
            if (null == complete)
            {
                complete = new TreeMap<>();
            }
            complete.put(s, watermarks);
        }
        final CoverageReport report =
            new CoverageReport(transition.toGeneration(), null == complete ? Map.of() : complete);
        if (report.equals(lastReport))
        {
            return 0;
        }
        lastReport = report;
        membership.reportCoverage(report);
        return 1;
    }

    /**
     * Catalog host: admit every member's incarnation, drop those the view no longer shows.
     */
    private void applyOwnerSlots(final MemberView view, final Membership membership)
    {
        Arrays.fill(slotPresent, false);
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
                retired(membership, slot, "replaced by " + record.runtimeUuid() + ", epoch " + record.epoch());
            }
            slotAdmitted[slot] = true;
            slotIncarnationMsb[slot] = msb;
            slotIncarnationLsb[slot] = lsb;
            host.admitIncarnation(slot, msb, lsb);
        }
        for (int slot = 0; slot < slotNodes.size(); slot++)
        {
            if (!slotPresent[slot])
            {
                if (slotAdmitted[slot])
                {
                    retired(membership, slot, "left the member view");
                    slotAdmitted[slot] = false;
                }
                host.dropMember(slot);
            }
        }
    }

    /**
     * Admitting a new incarnation of an owner, or dropping one that left, retires the old one on every hosted shard:
     * its evidence is dropped and its late frames are refused as stale (ShardReceiver).
     */
    private void retired(final Membership membership, final int slot, final String why)
    {
        if (0 == host.hostedCount())
        {
            return;
        }
        incarnationsRetired.incrementRelease();
        membership.log().println("orbitkv catalog: retired incarnation " +
            new UUID(slotIncarnationMsb[slot], slotIncarnationLsb[slot]) + " of node '" + slotNodes.get(slot) + "' (" +
            why + "): its evidence on " + host.hostedCount() + " hosted shard(s) is dropped");
    }

    private int slotFor(final String node)
    {
        int slot = slotByNode.getValue(node);
        if (slot < 0)
        {
            slot = slotNodes.size();
            if (!host.directory().addOwner(slot))
            {
                return -1;
            }
            slotNodes.add(node);
            slotByNode.put(node, slot);
        }
        return slot;
    }
}
