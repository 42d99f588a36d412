package io.orbitkv.manager.transfer;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;

import io.orbitkv.codecs.TransferLimits;
import io.orbitkv.codecs.transfer.TransferAuthorizeDecoder;
import io.orbitkv.codecs.transfer.TransferGrantDecoder;
import io.orbitkv.codecs.transfer.TransferReleaseAckDecoder;
import io.orbitkv.codecs.transfer.TransferReleaseDecoder;
import io.orbitkv.index.NamespaceTable;
import io.orbitkv.manager.membership.Membership;
import io.orbitkv.manager.peer.PeerAgent;
import io.orbitkv.manager.peer.PeerClient;
import io.orbitkv.manager.peer.PeerCounter;
import io.orbitkv.manager.peer.PeerSession;
import io.orbitkv.manager.catalog.TransferPart;
import io.orbitkv.manager.peer.TransferHandler;
import io.orbitkv.manager.status.SystemCounterDescriptor;
import io.orbitkv.manager.status.SystemCounters;
import io.orbitkv.manager.store.TieredStore;
import io.orbitkv.transport.BuiltinTransport;
import io.orbitkv.transport.Transport;
import io.orbitkv.transport.TransportListener;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * The Manager's transfer control on the agent that owns the store: the {@link TransferHandler} the peer transport
 * delivers transfer frames to (authorizations and releases go to the source, {@link SourceAuthorizer}; grants and
 * release acks to the requester-side handler given here), and the one poller of the {@link Transport} (revocations
 * to the source, read completions to the requester-side listener).
 * <p>
 * Built before the peer transport, which takes it as its transfer handler; the agent it answers through and the
 * membership it judges requesters by exist only later, so the duty cycle hands them over: {@link #doWork} runs in
 * the same duty cycle before the transport polls its subscription. Until the first call every authorization is
 * refused FENCED (and its answer counted as not sent). With nothing held and no event, a call costs a clock compare
 * and a field read: an idle Manager does no transfer work.
 */
public final class TransferService implements TransferPart, TransportListener
{
    /**
     * Transport events handled per duty cycle.
     */
    static final int POLL_LIMIT = 64;

    private final Transport transport;
    /**
     * How often the transport's statistics are copied into its counters.
     */
    static final long STATS_INTERVAL_NS = 100_000_000L;

    private TransferHandler requester;
    private TransportCounters transportCounters;
    private long statsAtNs;
    private TransportListener requesterListener;
    private final NanoClock clock;
    private final SourceAuthorizer source;
    private final AgentChannel channel = new AgentChannel();
    private final BoundMembers members = new BoundMembers();
    private final AtomicCounter staleIncarnations;
    private Membership boundMembership;
    private MembershipMembers membershipMembers;

    /**
     * @param settings          the source's limits.
     * @param store             the tiered store this thread owns.
     * @param namespaces        the Manager's namespace table.
     * @param transport         the transport grants are exported through.
     * @param counters          the system counters.
     * @param clock             the Manager's nano clock.
     */
    public TransferService(
        final TransferSettings settings,
        final TieredStore store,
        final NamespaceTable namespaces,
        final Transport transport,
        final SystemCounters counters,
        final NanoClock clock)
    {
        this(settings, store, namespaces, transport, null, counters, clock);
    }

    /**
     * @param settings          the source's limits.
     * @param store             the tiered store this thread owns.
     * @param namespaces        the Manager's namespace table.
     * @param transport         the transport grants are exported through.
     * @param ssdExportStaging  where SSD-only residences are prepared for peers, registered with {@code transport} by
     *                          the caller (a multiple of 2 MiB); null, or a store without SSD tier, serves DRAM only.
     * @param counters          the system counters.
     * @param clock             the Manager's nano clock.
     */
    public TransferService(
        final TransferSettings settings,
        final TieredStore store,
        final NamespaceTable namespaces,
        final Transport transport,
        final MemorySegment ssdExportStaging,
        final SystemCounters counters,
        final NanoClock clock)
    {
        this.transport = transport;
        this.clock = clock;
        this.staleIncarnations = counters.get(SystemCounterDescriptor.TRANSFER_SOURCE_REJECTED_STALE_INCARNATION);
        final SsdExports exports = null == ssdExportStaging || !store.hasSsd() ? null : new SsdExports(
            store, ssdExportStaging, store.dram().allocator().maxBlockBytes(),
            TimeUnit.MILLISECONDS.toNanos(TransferLimits.STAGED_UNCLAIMED_TTL_MS), counters);
        this.source = new SourceAuthorizer(settings, store, namespaces, transport, members, channel, exports, counters);
    }

    /**
     * One duty cycle's transfer work, before the peer transport polls: take the agent and membership the answers of
     * this cycle go through, expire sessions whose deadline passed, end those whose requester left the view, and
     * deliver the transport's events.
     *
     * @return work done.
     */
    public int doWork(final PeerAgent agent, final Membership membership, final long nowNs)
    {
        if (null == membershipMembers || boundMembership != membership)
        {
            boundMembership = membership;
            membershipMembers = new MembershipMembers(membership);
        }
        return doWork(agent, membershipMembers, nowNs);
    }

    /**
     * {@link #doWork(PeerAgent, Membership, long)} with the member view given as {@link SourceMembers}.
     *
     * @return work done.
     */
    public int doWork(final PeerAgent agent, final SourceMembers sourceMembers, final long nowNs)
    {
        channel.agent = agent;
        members.members = sourceMembers;
        final long stale = agent.counters().get(PeerCounter.TRANSFER_REJECTED_STALE_INCARNATION).get();
        if (stale != staleIncarnations.getPlain())
        {
            staleIncarnations.setRelease(stale);
        }
        if (null != transportCounters && nowNs - statsAtNs >= 0 && transport instanceof BuiltinTransport builtin)
        {
            statsAtNs = nowNs + STATS_INTERVAL_NS;
            transportCounters.update(builtin.stats());
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

    /**
     * Mirror the built-in transport's statistics into {@code counters} on a 100 ms tick. Set once, before the agent
     * runs; ignored for another transport.
     */
    public void transportCounters(final TransportCounters counters)
    {
        this.transportCounters = counters;
    }

    /**
     * Where grants, release acks and read completions go when the requester side is built after this service (it
     * needs the catalog this service is part of). Set once, before the agent runs.
     */
    public void requester(final TransferHandler requester, final TransportListener requesterListener)
    {
        this.requester = requester;
        this.requesterListener = requesterListener;
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
        if (null != requesterListener)
        {
            requesterListener.onReadComplete(requestId, status, bytes);
        }
    }

    public void onRevoked(final long sessionId)
    {
        source.onRevoked(sessionId);
    }

    /**
     * The agent of the current duty cycle as the source's answer channel.
     */
    private static final class AgentChannel implements AnswerChannel
    {
        private PeerAgent agent;

        public boolean offer(final PeerSession session, final DirectBuffer buffer, final int offset, final int length)
        {
            return null != agent && agent.offer(session, buffer, offset, length);
        }

        public long localIncarnationMsb()
        {
            return null == agent ? 0 : agent.localIncarnationMsb();
        }

        public long localIncarnationLsb()
        {
            return null == agent ? 0 : agent.localIncarnationLsb();
        }
    }

    /**
     * The membership handed over by the duty cycle; before it, nothing may be granted and nobody is a member.
     */
    private static final class BoundMembers implements SourceMembers
    {
        private SourceMembers members;

        public boolean grantsAllowed(final long nowNs)
        {
            return null != members && members.grantsAllowed(nowNs);
        }

        public boolean isMember(final long incarnationMsb, final long incarnationLsb)
        {
            return null != members && members.isMember(incarnationMsb, incarnationLsb);
        }

        public long viewVersion()
        {
            return null == members ? 0 : members.viewVersion();
        }
    }
}
