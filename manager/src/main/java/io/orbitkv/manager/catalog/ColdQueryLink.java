package io.orbitkv.manager.catalog;

import io.orbitkv.manager.peer.PeerClient;

/**
 * The session to one catalog host that {@link PeerDiscovery}'s cold queries go through: the Manager's is the
 * {@link HostLink} the member view keeps for the host of a shard; a unit test's hands out a session it made.
 */
interface ColdQueryLink
{
    /**
     * Keep the session open (connect, reconnect after a failure).
     *
     * @return the client when it is active, else null.
     */
    PeerClient poll(long nowMs);

    /**
     * @return whether a response that came in on {@code client} is this link's.
     */
    boolean owns(PeerClient client);

    /**
     * @return whether the link was closed (the host left the view): its queries end unanswered.
     */
    boolean isClosed();

    /**
     * @return until when (agent clock, ms) cold queries prefer other copies: the host let one go unanswered or
     * refused it. Nothing else is inferred from it; the member view alone says who is alive.
     */
    long suspectUntilMs();

    /**
     * Prefer other copies until {@code untilMs}.
     */
    void suspect(long untilMs);
}
