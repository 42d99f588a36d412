package io.orbitkv.manager.transfer;

/**
 * What the transfer source asks of membership, on the agent's thread: whether this runtime may grant at all, and
 * whether a requester's incarnation is in the local member view (design: source admission consults only the local
 * view). {@link MembershipMembers} answers from the Manager's {@link io.orbitkv.manager.membership.Membership}.
 */
public interface SourceMembers
{
    /**
     * @param nowNs now, from the Manager's nano clock.
     * @return true when this runtime's registration is valid and not fenced and its view complete: new grants may
     * be made.
     */
    boolean grantsAllowed(long nowNs);

    /**
     * @return true when the incarnation is in the last complete member view (an incomplete view proves no absence).
     */
    boolean isMember(long incarnationMsb, long incarnationLsb);

    /**
     * @return a number that changes whenever the answers of {@link #isMember} may have changed: the source looks for
     * requesters that left the view only then.
     */
    long viewVersion();
}
