package io.orbitkv.manager.catalog;

import io.orbitkv.codecs.StateKeyFlyweight;
import io.orbitkv.manager.membership.MemberRecord;
import io.orbitkv.manager.peer.PeerClient;

/**
 * The catalog as this Manager's requester side uses it, on the agent thread: peer lookups (discovery), the member
 * view (who is a live member, which incarnation this runtime speaks as), the sessions to sources and the removal of
 * a refused candidate version. An interface so the requester's coordinator can be stepped in a unit test over a
 * catalog of fakes.
 */
public interface CatalogRequester
{
    /**
     * Engine lookups that may wait for peer candidates at once; beyond it a lookup is answered locally (counted).
     * {@link PendingLookup#index()} is below it.
     */
    int MAX_PENDING_LOOKUPS = 64;

    /**
     * @return a lookup to fill and {@link #startLookup}, or null when discovery cannot take one now (no member
     * view yet, remote work disabled, or every pending slot in use): answer locally.
     */
    PendingLookup acquireLookup();

    /**
     * Resolve a filled lookup; {@code sink} gets it once its peer candidates are known or its budget ran out (at
     * once, from this call, when every key is warm or nothing can be asked).
     */
    void startLookup(PendingLookup lookup, LookupAnswerSink sink);

    /**
     * @return whether this Manager may start remote work now: a complete member view and a valid registration.
     */
    boolean remoteWorkEnabled();

    /**
     * @return the member record of a live incarnation in the member view, or null (unknown, retired or this one).
     */
    MemberRecord member(long msb, long lsb);

    /**
     * @return this Manager's current incarnation (it changes when a lost registration is replaced).
     */
    long localIncarnationMsb();

    long localIncarnationLsb();

    /**
     * An active peer session to a source incarnation.
     *
     * @return the client, or null while it connects or when the incarnation is not a live member.
     */
    PeerClient sourceClient(long msb, long lsb, long nowMs);

    /**
     * Drop one refused candidate version of a key from the candidate index; other candidates of the key stay.
     *
     * @return whether that version was there.
     */
    boolean removeCandidate(StateKeyFlyweight key, long ownerMsb, long ownerLsb, long insertionSequence);
}
