package io.orbitkv.manager.catalog;

import io.orbitkv.codecs.StateKeyFlyweight;
import io.orbitkv.index.CandidateIndex;
import io.orbitkv.manager.membership.MemberRecord;
import io.orbitkv.manager.membership.Membership;
import io.orbitkv.manager.peer.PeerClient;
import io.orbitkv.manager.status.SystemCounters;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * The {@link CatalogRequester} over the catalog's parts: discovery, the member view sync, the candidate index and
 * the source links. Built by the {@link CatalogContext}, so the transfer requester and the ring receive it in their
 * constructors, before the agent that delivers frames exists.
 */
final class CatalogFront implements CatalogRequester
{
    private final MemberViewSync members;
    private final Membership membership;
    private final PeerDiscovery discovery;
    private final CandidateIndex candidates;
    private final SourceLinks sourceLinks;
    private final NanoClock clock;
    private final AtomicCounter discoverySkipped;

    CatalogFront(
        final MemberViewSync members,
        final Membership membership,
        final PeerDiscovery discovery,
        final CandidateIndex candidates,
        final SourceLinks sourceLinks,
        final SystemCounters counters,
        final NanoClock clock)
    {
        this.members = members;
        this.membership = membership;
        this.discovery = discovery;
        this.candidates = candidates;
        this.sourceLinks = sourceLinks;
        this.clock = clock;
        this.discoverySkipped = counters.get(CatalogCounter.DISCOVERY_SKIPPED);
    }

    /**
     * @return a lookup to fill and {@link #startLookup}, or null when discovery cannot take one now (no member
     * view yet, remote work disabled, or every pending slot in use): answer locally.
     */
    public PendingLookup acquireLookup()
    {
        // The ring agent runs before the catalog in a duty cycle, and an idle Manager sleeps until a request comes:
        // a view the membership published while it slept is applied here, before the lookup picks its copies, so a
        // copy that just joined is asked rather than the key called unavailable. Nothing happens when the view is
        // the one applied already.
        members.syncIncarnation();
        members.syncView();
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
     * Resolve a filled lookup; {@code sink} gets it once its peer candidates are known or its budget ran out (at
     * once, from this call, when every key is warm or nothing can be asked).
     */
    public void startLookup(final PendingLookup lookup, final LookupAnswerSink sink)
    {
        discovery.start(lookup, sink, clock.nanoTime() / 1_000_000L);
    }

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
            hostLink.poll(nowMs) : sourceLinks.client(record, nowMs);
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

    void close()
    {
        sourceLinks.close();
    }
}
