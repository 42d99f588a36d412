package io.orbitkv.manager.port;

import io.orbitkv.codecs.CandidateTable;
import io.orbitkv.codecs.engine.FailureReason;
import io.orbitkv.codecs.engine.KeyStatus;
import org.agrona.DirectBuffer;

/**
 * The engine ring's handle on one peer lookup taken from {@link PeerPort#acquireLookup()}: it fills the request (the
 * local answer and the keys after the local prefix, copied since the request frame is gone once the ring agent
 * returns) and, once {@link PeerListener#onLookupAnswered} names it, reads the answer rows and the candidate table.
 * The peer side owns the object behind it; it is valid until the listener returns.
 */
public interface LookupHandle
{
    /**
     * Record the local part of the answer.
     *
     * @param localPrefix keys resident here (the Response value).
     * @param statuses    per-key local statuses; copied.
     * @param lengths     per-key lengths; copied.
     * @param keyCount    keys in the request.
     * @return this handle.
     */
    LookupHandle request(
        long clientId, long correlationId, long leaseId, int localPrefix, KeyStatus[] statuses, int[] lengths, int keyCount);

    LookupHandle namespace(DirectBuffer buffer, int offset, int length);

    /**
     * The namespace's id in this Manager's namespace table (negative when unknown here): keys this Manager holds
     * itself are found with it.
     */
    LookupHandle namespaceId(int namespaceId);

    /**
     * Whether the Lookup asked to pin: its peer keys are then authorized and held at their sources.
     */
    LookupHandle pinned(boolean pinned);

    /**
     * Append the next key after the local prefix.
     *
     * @return false when the lookup holds as many peer keys as one request may ask for.
     */
    boolean addPeerKey(DirectBuffer buffer, int offset, int length);

    long clientId();

    long correlationId();

    long leaseId();

    int localPrefix();

    int keyCount();

    KeyStatus[] statuses();

    int[] lengths();

    /**
     * @return per key, why it is FAILED (a key no copy of its catalog shard could answer for); NONE otherwise.
     */
    FailureReason[] reasons();

    /**
     * @return the candidates of the keys after the local prefix (rows of the request).
     */
    CandidateTable answer();
}
