package io.orbitkv.manager.port;

import io.orbitkv.codecs.CandidateTable;
import io.orbitkv.codecs.engine.FailureReason;
import io.orbitkv.codecs.engine.KeyStatus;
import org.agrona.DirectBuffer;

/**
 * The engine ring's handle on one peer fetch taken from {@link PeerPort#acquireFetch}: it fills the request part
 * (identity, local rows, peer keys and their destinations), keeps the handle under a lease or a Read while the fetch
 * runs, and reads the answer part (rows, value, candidate table) when {@link PeerListener#onFetchAnswered} names it.
 * Everything else about the fetch belongs to the peer side.
 */
public interface FetchHandle
{
    /** Restore the keys into the destinations. */
    int READ = 1;
    /** Authorize and keep the grants under a lease. */
    int HOLD = 2;

    /**
     * Start filling a fetch for an engine request: its identity, where its peer rows start, and the statuses and
     * lengths of its local rows (copied; the peer rows are answered by the fetch).
     *
     * @return this handle.
     */
    FetchHandle request(
        int kind,
        long clientId,
        long correlationId,
        int templateId,
        long leaseId,
        int firstRow,
        int rowCount,
        KeyStatus[] localStatuses,
        int[] localLengths);

    FetchHandle namespace(DirectBuffer buffer, int offset, int length);

    /**
     * Append the next peer key; for a READ, with the absolute address and capacity of its destination.
     *
     * @return false when the fetch holds as many keys as one request's peer part may have.
     */
    boolean addKey(DirectBuffer buffer, int offset, int length, long destination, int capacity);

    /**
     * Give a held key (from a HOLD fetch) its destination, for the Read that uses the lease.
     */
    void destination(int key, long destination, int capacity);

    /**
     * The lease holding this fetch moved to another client of this Manager: its answers go to that client.
     */
    void handOver(long clientId);

    /**
     * The final statuses and lengths of the local rows, once the local part of a READ ended.
     */
    void localRows(KeyStatus[] localStatuses, int[] localLengths);

    /**
     * Whether peer key {@code key} has the same hash as {@code hash[offset, offset + length)}.
     */
    boolean sameKey(int key, DirectBuffer hash, int offset, int length);

    /**
     * @return {@link #READ} or {@link #HOLD}.
     */
    int kind();

    long clientId();

    long correlationId();

    int templateId();

    long leaseId();

    /**
     * @return the row of the request where the peer keys start (the local prefix length).
     */
    int firstRow();

    int rowCount();

    /**
     * @return keys granted (HOLD) or restored (READ) as the leading run of the peer keys.
     */
    int deliveredKeys();

    KeyStatus[] statuses();

    int[] lengths();

    FailureReason[] reasons();

    /**
     * @return the answer's value: blocks restored (READ: local and peer) or covered by the lease (HOLD).
     */
    long value();

    /**
     * @return the source of each delivered peer key, one candidate per {@code PEER} row.
     */
    CandidateTable answer();
}
