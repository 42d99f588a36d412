package io.orbitkv.manager.port;

import io.orbitkv.codecs.engine.KeyStatus;
import io.orbitkv.index.BlockChecksum;

/**
 * The engine ring's one door to the peer side: start a lookup past the local prefix, start or continue a fetch, let
 * a held fetch go. Answers come back through the {@link PeerListener} each request names. This package is the
 * whole door: the port, the listener and the two handles the ring fills and reads ({@link LookupHandle},
 * {@link FetchHandle}); the ring sees no other type of the peer side. The transfer part's {@code PeerFetcher}
 * coordinates both flows behind it (a pinned lookup's holds and a read's transfers); with the ring and the peer side
 * on one thread it is called directly, and a proxy with the same methods over a bounded queue is what would let them
 * run on two. Called on the ring agent's thread.
 */
public interface PeerPort
{
    /**
     * @return a lookup to fill with the keys after the local prefix and {@link #startLookup}, or null when the peer
     * side cannot take one now (answer locally).
     */
    LookupHandle acquireLookup();

    /**
     * Find candidates for a filled lookup; a pinned one is also held at its sources. The answer comes through
     * {@code listener}, possibly from within this call.
     */
    void startLookup(LookupHandle lookup, PeerListener listener);

    /**
     * @return a fetch to fill with a request and keys, or null when none is free or remote work is disabled (counted):
     * answer from the local prefix.
     */
    FetchHandle acquireFetch(PeerListener listener);

    /**
     * Give a fetch back that was acquired but never started.
     */
    void discard(FetchHandle fetch);

    /**
     * Start a filled READ fetch once its local part ended: discover, authorize, read.
     */
    void start(FetchHandle fetch);

    /**
     * Read the first {@code keys} held keys of a HOLD fetch for the Read that uses its lease.
     */
    void readHeld(FetchHandle fetch, int keys, long correlationId, int firstRow, int rowCount, KeyStatus[] localStatuses,
        int[] localLengths);

    /**
     * The lease holding a HOLD fetch went away: release its sources.
     */
    void release(FetchHandle fetch);

    /**
     * The fetch's client detached; {@code region} (its data region, may be null) is closed once its reads ended.
     */
    void clientGone(FetchHandle fetch, AutoCloseable region);

    /**
     * The checksum of the client's data region at {@code address}, where a READ's destinations lie.
     */
    void destinationRegion(FetchHandle fetch, long address, BlockChecksum regionChecksum);

    /**
     * A client's data region may receive peer reads.
     */
    void registerDestination(long address, long length);

    void unregisterDestination(long address);

    /**
     * The peer side's work in the ring's duty cycle: sends due, deadlines.
     *
     * @return work done.
     */
    int doWork(long nowMs);
}
