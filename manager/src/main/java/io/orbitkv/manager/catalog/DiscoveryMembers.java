package io.orbitkv.manager.catalog;

import io.orbitkv.manager.membership.MemberRecord;

/**
 * The member view as {@link PeerDiscovery} asks it: where the cold queries of a shard go, and which candidates'
 * owners are live members (and which is this Manager). The Manager's is the {@link MemberViewSync}.
 */
interface DiscoveryMembers
{
    /**
     * The links to the catalog hosts holding a copy of {@code shard}, by replica rank.
     *
     * @param shard a shard.
     * @param out   filled from index 0: the link of each replica, or null where the view shows no such host or the
     *              replica is this Manager (which answers from its own view).
     * @return the shard's replica count (entries of {@code out} filled).
     */
    int replicaLinks(int shard, ColdQueryLink[] out);

    /**
     * @return the member record of a live incarnation, or null (unknown or retired).
     */
    MemberRecord memberByIncarnation(long msb, long lsb);

    /**
     * @return whether the incarnation is this Manager's.
     */
    boolean isSelf(long msb, long lsb);
}
