package io.orbitkv.manager.transfer;

import io.orbitkv.manager.membership.MemberRecord;
import io.orbitkv.manager.membership.MemberView;
import io.orbitkv.manager.membership.Membership;
import org.agrona.collections.Long2ObjectHashMap;

/**
 * {@link SourceMembers} over the Manager's membership: grants need {@link Membership#remoteWorkEnabled(long)}
 * (registered, locally valid, not fenced, view complete); requesters are judged against the last complete view,
 * copied into a map by incarnation when the published view changes (slow path; the look-up allocates nothing).
 */
public final class MembershipMembers implements SourceMembers
{
    private final Membership membership;
    private final Long2ObjectHashMap<MemberRecord> membersByMsb = new Long2ObjectHashMap<>();
    private MemberView applied;
    private long version;

    public MembershipMembers(final Membership membership)
    {
        this.membership = membership;
    }

    public boolean grantsAllowed(final long nowNs)
    {
        return membership.remoteWorkEnabled(nowNs);
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
