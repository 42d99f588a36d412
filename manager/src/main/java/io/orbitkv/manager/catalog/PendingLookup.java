package io.orbitkv.manager.catalog;

import java.util.Arrays;

import io.orbitkv.codecs.CandidateTable;
import io.orbitkv.codecs.EngineRingLimits;
import io.orbitkv.codecs.StateKeyFlyweight;
import io.orbitkv.codecs.engine.FailureReason;
import io.orbitkv.codecs.engine.KeyStatus;
import io.orbitkv.manager.port.LookupHandle;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * One engine Lookup waiting for peer candidates: the local answer (statuses, lengths, lease) and copies of the keys
 * after the local prefix, since the request frame is gone once the ring agent returns. Pooled by
 * {@link PeerDiscovery}; filled by the ring agent through its {@link LookupHandle}, answered through the
 * {@link LookupAnswerSink} it was started with.
 */
public final class PendingLookup implements LookupHandle
{
    final int index;
    long generation;
    boolean active;
    long deadlineMs;
    int outstanding;
    int answeredKeys;
    LookupAnswerSink sink;

    private long clientId;
    private long correlationId;
    private long leaseId;
    private int localPrefix;
    private boolean pinned;
    private int namespaceId;
    private int keyCount;
    private int firstPeerKey;
    private int peerKeyCount;
    private final KeyStatus[] statuses = new KeyStatus[EngineRingLimits.MAX_KEYS_PER_REQUEST];
    private final int[] lengths = new int[EngineRingLimits.MAX_KEYS_PER_REQUEST];
    private final FailureReason[] reasons = new FailureReason[EngineRingLimits.MAX_KEYS_PER_REQUEST];
    private final boolean[] unavailable = new boolean[EngineRingLimits.MAX_PEER_KEYS_PER_LOOKUP];
    private final UnsafeBuffer namespace = new UnsafeBuffer(new byte[EngineRingLimits.MAX_NAMESPACE_LENGTH]);
    private int namespaceLength;
    private final UnsafeBuffer hashes = new UnsafeBuffer(
        new byte[EngineRingLimits.MAX_PEER_KEYS_PER_LOOKUP * EngineRingLimits.MAX_HASH_LENGTH]);
    private final int[] hashLengths = new int[EngineRingLimits.MAX_PEER_KEYS_PER_LOOKUP];
    private final CandidateTable answer = CandidateTable.forAnswer();

    PendingLookup(final int index)
    {
        this.index = index;
    }

    /**
     * Record the local part of the answer.
     *
     * @param localPrefix keys resident here (the Response value).
     * @param statuses    per-key local statuses; copied.
     * @param lengths     per-key lengths; copied.
     * @param keyCount    keys in the request.
     */
    public PendingLookup request(
        final long clientId,
        final long correlationId,
        final long leaseId,
        final int localPrefix,
        final KeyStatus[] statuses,
        final int[] lengths,
        final int keyCount)
    {
        this.clientId = clientId;
        this.correlationId = correlationId;
        this.leaseId = leaseId;
        this.localPrefix = localPrefix;
        this.keyCount = keyCount;
        System.arraycopy(statuses, 0, this.statuses, 0, keyCount);
        System.arraycopy(lengths, 0, this.lengths, 0, keyCount);
        Arrays.fill(this.reasons, 0, keyCount, FailureReason.NONE);
        Arrays.fill(this.unavailable, false);
        this.firstPeerKey = localPrefix;
        this.peerKeyCount = 0;
        this.pinned = false;
        this.namespaceId = -1;
        this.answer.reset();
        return this;
    }

    /**
     * The namespace's id in this Manager's namespace table (negative when unknown here): keys this Manager holds
     * itself are found with it.
     */
    public PendingLookup namespaceId(final int namespaceId)
    {
        this.namespaceId = namespaceId;
        return this;
    }

    public int namespaceId()
    {
        return namespaceId;
    }

    /**
     * Whether the Lookup asked to pin: its peer keys are then authorized and held at their sources.
     */
    public PendingLookup pinned(final boolean pinned)
    {
        this.pinned = pinned;
        return this;
    }

    public boolean isPinned()
    {
        return pinned;
    }

    public PendingLookup namespace(final DirectBuffer buffer, final int offset, final int length)
    {
        namespace.putBytes(0, buffer, offset, length);
        namespaceLength = length;
        return this;
    }

    /**
     * Append the next key after the local prefix.
     *
     * @return false when {@link EngineRingLimits#MAX_PEER_KEYS_PER_LOOKUP} keys are held already.
     */
    public boolean addPeerKey(final DirectBuffer buffer, final int offset, final int length)
    {
        if (peerKeyCount == EngineRingLimits.MAX_PEER_KEYS_PER_LOOKUP)
        {
            return false;
        }
        hashes.putBytes(peerKeyCount * EngineRingLimits.MAX_HASH_LENGTH, buffer, offset, length);
        hashLengths[peerKeyCount++] = length;
        return true;
    }

    /**
     * @return this lookup's slot, in use by one lookup from {@code startLookup} until its sink is answered.
     */
    public int index()
    {
        return index;
    }

    public long clientId()
    {
        return clientId;
    }

    public long correlationId()
    {
        return correlationId;
    }

    public long leaseId()
    {
        return leaseId;
    }

    public int localPrefix()
    {
        return localPrefix;
    }

    public int keyCount()
    {
        return keyCount;
    }

    public KeyStatus[] statuses()
    {
        return statuses;
    }

    public FailureReason[] reasons()
    {
        return reasons;
    }

    /**
     * Peer key {@code k} could not be asked of any copy of its catalog shard, or none answered for it in time.
     */
    void markUnavailable(final int k)
    {
        unavailable[k] = true;
    }

    boolean isUnavailable(final int k)
    {
        return unavailable[k];
    }

    public int[] lengths()
    {
        return lengths;
    }

    public CandidateTable answer()
    {
        return answer;
    }

    /**
     * @return the row of the first key after the local prefix.
     */
    public int firstPeerKey()
    {
        return firstPeerKey;
    }

    /**
     * @return keys after the local prefix that were asked of the catalog.
     */
    public int peerKeyCount()
    {
        return peerKeyCount;
    }

    public UnsafeBuffer namespaceBuffer()
    {
        return namespace;
    }

    public int namespaceLength()
    {
        return namespaceLength;
    }

    /**
     * @return the buffer holding the peer keys' hashes; peer key k starts at {@link #hashOffset(int)}.
     */
    public UnsafeBuffer hashBuffer()
    {
        return hashes;
    }

    public int hashOffset(final int peerKey)
    {
        return peerKey * EngineRingLimits.MAX_HASH_LENGTH;
    }

    public int hashLength(final int peerKey)
    {
        return hashLengths[peerKey];
    }

    /**
     * Point a flyweight at peer key {@code peerKey} (valid until this lookup is reused).
     */
    StateKeyFlyweight key(final int peerKey, final StateKeyFlyweight key)
    {
        return key.wrap(StateKeyFlyweight.NO_NAMESPACE_ID, namespace, 0, namespaceLength, hashes,
            peerKey * EngineRingLimits.MAX_HASH_LENGTH, hashLengths[peerKey]);
    }
}
