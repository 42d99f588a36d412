package io.orbitkv.manager.catalog;

import io.orbitkv.manager.membership.MemberRecord;

/**
 * The member view as {@link PeerDiscovery} asks it: where the cold queries of a shard go, and which candidates'
 * owners are live members (and which is this Manager). The Manager's is the {@link MemberViewSync}.
 */
interface DiscoveryMembers
{
    /**
     * @return the link to the catalog host of {@code shard}, or null when the view shows none.
     */
    ColdQueryLink linkForShard(int shard);

    /**
     * @return the member record of a live incarnation, or null (unknown or retired).
     */
    MemberRecord memberByIncarnation(long msb, long lsb);

    /**
     * @return whether the incarnation is this Manager's.
     */
    boolean isSelf(long msb, long lsb);
}
