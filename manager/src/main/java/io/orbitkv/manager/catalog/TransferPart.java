package io.orbitkv.manager.catalog;

import io.orbitkv.manager.membership.Membership;
import io.orbitkv.manager.peer.PeerAgent;
import io.orbitkv.manager.peer.TransferHandler;

/**
 * The transfer control that shares the catalog's peer transport and duty cycle: the peer adapter delivers transfer
 * frames to it, and each catalog duty cycle runs it with that cycle's peer agent and membership. Implemented by the
 * transfer part, which depends on the catalog, never the reverse.
 */
public interface TransferPart extends TransferHandler
{
    /**
     * One duty cycle's transfer work, run before the peer transport polls.
     *
     * @return work done.
     */
    int doWork(PeerAgent agent, Membership membership, long nowNs);
}
