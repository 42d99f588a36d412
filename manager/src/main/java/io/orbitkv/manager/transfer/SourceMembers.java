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

    /**
     * A grant was made, decided at {@code decidedNs} after {@link #grantsAllowed(long)} said yes for that time (agent
     * thread; must not allocate). Recorded in the authority log by {@link MembershipMembers}.
     *
     * @param decidedNs          the time the registration was checked at.
     * @param requesterMsb       requester incarnation's runtime UUID.
     * @param requesterLsb       requester incarnation's runtime UUID.
     * @param requesterSessionId the requester's session id.
     * @param transferSessionId  the transfer session.
     * @param keys               keys granted.
     * @param bytes              bytes charged.
     */
    default void granted(
        final long decidedNs,
        final long requesterMsb,
        final long requesterLsb,
        final long requesterSessionId,
        final long transferSessionId,
        final int keys,
        final long bytes)
    {
    }
}
