package io.orbitkv.manager.catalog;

import io.orbitkv.manager.peer.PeerFrameHandler;

/**
 * The transfer control that shares the catalog's peer transport and duty cycle: the peer agent delivers transfer
 * frames to its {@link #frameHandler()}, and each catalog duty cycle runs it before the transport polls, so the
 * answers to the frames that cycle delivers leave in it. Implemented by the transfer part, which depends on the catalog, never the reverse.
 */
public interface TransferPart
{
    /**
     * @return the decoder of the transfer schema's frames, which the peer agent hands them to.
     */
    PeerFrameHandler frameHandler();

    /**
     * One duty cycle's transfer work, run before the peer transport polls.
     *
     * @param nowNs the duty cycle's time.
     * @return work done.
     */
    int doWork(long nowNs);
}
