package io.orbitkv.manager.transfer;

import io.orbitkv.manager.authority.AuthorityLog;
import io.orbitkv.manager.membership.Incarnation;
import io.orbitkv.manager.membership.MemberRecord;
import io.orbitkv.manager.membership.MemberView;
import io.orbitkv.manager.membership.Membership;
import org.agrona.collections.Long2ObjectHashMap;

/**
 * {@link SourceMembers} over the Manager's membership: grants need {@link Membership#remoteWorkEnabled(long)}
 * (registered, locally valid, not fenced, view complete); requesters are judged against the last complete view,
 * copied into a map by incarnation when the published view changes (slow path; the look-up allocates nothing).
 * With an {@link AuthorityLog} it records each grant under the incarnation whose registration allowed it (with that
 * incarnation's validity deadline) and each session whose bytes this Manager accepted as a requester.
 */
public final class MembershipMembers implements SourceMembers, AcceptedSessions
{
    private final Membership membership;
    private final AuthorityLog authority;
    private Incarnation allowedBy;
    private final Long2ObjectHashMap<MemberRecord> membersByMsb = new Long2ObjectHashMap<>();
    private MemberView applied;
    private long version;

    public MembershipMembers(final Membership membership)
    {
        this(membership, null);
    }

    /**
     * @param membership the Manager's membership.
     * @param authority  where grants and accepted sessions are recorded, or null.
     */
    public MembershipMembers(final Membership membership, final AuthorityLog authority)
    {
        this.membership = membership;
        this.authority = authority;
    }

    public boolean grantsAllowed(final long nowNs)
    {
        allowedBy = membership.remoteWorkIncarnation(nowNs);
        return null != allowedBy;
    }

    public void granted(
        final long decidedNs,
        final long requesterMsb,
        final long requesterLsb,
        final long requesterSessionId,
        final long transferSessionId,
        final int keys,
        final long bytes)
    {
        final Incarnation by = allowedBy;
        if (null != authority && null != by)
        {
            authority.granted(by.number(), by.epoch(), by.runtimeUuid().getMostSignificantBits(),
                by.runtimeUuid().getLeastSignificantBits(), decidedNs, by.validUntilNs(), requesterMsb, requesterLsb,
                requesterSessionId, transferSessionId, keys, bytes);
        }
    }

    public void accepted(
        final long sourceMsb,
        final long sourceLsb,
        final long requesterSessionId,
        final long transferSessionId,
        final int keyIndex,
        final long bytes)
    {
        final Incarnation own = membership.incarnation();
        if (null != authority && null != own)
        {
            authority.accepted(own.number(), own.epoch(), own.runtimeUuid().getMostSignificantBits(),
                own.runtimeUuid().getLeastSignificantBits(), sourceMsb, sourceLsb, requesterSessionId,
                transferSessionId, keyIndex, bytes);
        }
    }

    public boolean isMember(final long incarnationMsb, final long incarnationLsb)
    {
        refresh();
        final MemberRecord record = membersByMsb.get(incarnationMsb);
        return null != record && record.runtimeUuid().getLeastSignificantBits() == incarnationLsb;
    }

    public long viewVersion()
    {
        refresh();
        return version;
    }

    private void refresh()
    {
        final MemberView view = membership.view();
        if (view == applied || !view.isComplete())
        {
            return;
        }
        applied = view;
        membersByMsb.clear();
        for (final MemberRecord record : view.members().values())
        {
            membersByMsb.put(record.runtimeUuid().getMostSignificantBits(), record);
        }
        version++;
    }
}
