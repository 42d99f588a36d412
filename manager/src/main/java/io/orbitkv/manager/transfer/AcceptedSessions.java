package io.orbitkv.manager.transfer;

/**
 * Where a requester records that it accepted bytes read under a source's session (the authority log, through
 * {@link MembershipMembers}). Called on the agent thread, once per granted session, at its first block that passed its
 * checks; must not allocate.
 */
public interface AcceptedSessions
{
    /** Records nothing. */
    AcceptedSessions NONE = (sourceMsb, sourceLsb, requesterSessionId, transferSessionId, keyIndex, bytes) ->
    {
    };

    /**
     * The first block of a session was accepted.
     *
     * @param sourceMsb          source incarnation's runtime UUID.
     * @param sourceLsb          source incarnation's runtime UUID.
     * @param requesterSessionId this requester's session id.
     * @param transferSessionId  the source's transfer session.
     * @param keyIndex           the key's index in its fetch.
     * @param bytes              its bytes.
     */
    void accepted(long sourceMsb, long sourceLsb, long requesterSessionId, long transferSessionId, int keyIndex, long bytes);
}
