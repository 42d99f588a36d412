package io.orbitkv.client;

import io.orbitkv.codecs.CandidateTable;
import io.orbitkv.codecs.EngineRingLimits;
import io.orbitkv.codecs.engine.FailureReason;
import io.orbitkv.codecs.engine.KeyStatus;
import io.orbitkv.codecs.engine.StatusCode;
import java.nio.charset.StandardCharsets;

/**
 * The reusable outcome of one Publish, Lookup or Read over a whole {@link KeyBatch}, however many requests the
 * client split it into. Per-key rows stay aligned with the batch: keys the client never sent (after a short
 * prefix or an error) are {@link KeyStatus#NOT_ATTEMPTED}.
 *
 * <ul>
 *   <li>{@link #value()}: Publish, blocks stored; Lookup, resident prefix length (with the pin and peers flags: the
 *   blocks the leases cover, local prefix and peer holds); Read, blocks restored (local and, with the peers flag,
 *   fetched from peers).</li>
 *   <li>{@link #reason(int)}: why a key was answered {@link KeyStatus#FAILED} (schema version 3); {@code NONE} for
 *   every other key and for answers of version 1 and 2.</li>
 *   <li>{@link #leaseCount()}/{@link #leaseId(int)}: a pinned Lookup holds one lease per request sent (request
 *   {@code i} covers keys {@code [i * MAX_KEYS_PER_REQUEST, ...)}).</li>
 *   <li>{@link #message()}: the reason of a non-OK code; the String is built only when asked for.</li>
 *   <li>{@link #candidateCount()}/{@link #ownerCount()}: keys after the local prefix answered {@link KeyStatus#PEER}
 *   and the copies of them on other Managers (owners). A Lookup with the peers flag (schema version 2) lists up to
 *   {@link EngineRingLimits#MAX_CANDIDATES_PER_KEY} candidates per key as a hint; a pinned Lookup with the peers flag
 *   and a Read with the peers flag (schema version 3) list exactly one per {@code PEER} key: the source held for the
 *   lease, or the source the block was fetched from. Candidate key indexes are indexes of the batch; owner indexes
 *   are indexes of this result's owners, which are distinct across all the answers of the batch (one entry per
 *   runtime UUID). Capacity: {@link #candidateCapacity(int)} candidates and {@link #ownerCapacity(int)} owners; a
 *   candidate that does not fit, or names a row or an owner its answer does not have, is dropped and counted in
 *   {@link #droppedCandidates()}. All accessors are allocation-free but {@link #ownerNodeId(int)}.</li>
 * </ul>
 *
 * <p>Not thread safe.
 */
public final class OperationResult
{
    private final KeyStatus[] statuses;
    private final int[] lengths;
    private final FailureReason[] reasons;
    private final long[] poolOffsets;
    private final long[] leaseIds;
    private final byte[] messageBytes = new byte[EngineRingLimits.MAX_MESSAGE_LENGTH];
    private int messageLength;
    private String message;
    private StatusCode code = StatusCode.OK;
    private long value;
    private int keyCount;
    private int leaseCount;
    private int requestCount;

    private final CandidateTable candidates;

    /**
     * Create a result able to describe batches of up to {@code maxKeys} keys.
     *
     * @param maxKeys capacity in keys, at least 1.
     */
    public OperationResult(final int maxKeys)
    {
        if (maxKeys < 1)
        {
            throw new IllegalArgumentException("maxKeys must be >= 1: " + maxKeys);
        }
        statuses = new KeyStatus[maxKeys];
        lengths = new int[maxKeys];
        reasons = new FailureReason[maxKeys];
        poolOffsets = new long[maxKeys];
        final int maxRequests = (maxKeys + EngineRingLimits.MAX_KEYS_PER_REQUEST - 1) / EngineRingLimits.MAX_KEYS_PER_REQUEST;
        leaseIds = new long[maxRequests];

        candidates = CandidateTable.forBatch(candidateCapacity(maxKeys), ownerCapacity(maxKeys));
    }

    /**
     * Candidates a result of {@code maxKeys} keys keeps: a whole hint answer, or one per key of the batch.
     *
     * @param maxKeys capacity in keys.
     * @return candidate capacity.
     */
    public static int candidateCapacity(final int maxKeys)
    {
        return Math.max(EngineRingLimits.MAX_CANDIDATES_PER_LOOKUP, maxKeys);
    }

    /**
     * Distinct owners a result of {@code maxKeys} keys keeps: each answer names at most
     * {@link EngineRingLimits#MAX_PEER_OWNERS_PER_LOOKUP}, and every owner has a candidate.
     *
     * @param maxKeys capacity in keys.
     * @return owner capacity.
     */
    public static int ownerCapacity(final int maxKeys)
    {
        final int maxRequests = (maxKeys + EngineRingLimits.MAX_KEYS_PER_REQUEST - 1) / EngineRingLimits.MAX_KEYS_PER_REQUEST;
        return Math.min(
            maxRequests * EngineRingLimits.MAX_PEER_OWNERS_PER_LOOKUP,
            Math.max(EngineRingLimits.MAX_PEER_OWNERS_PER_LOOKUP, maxKeys));
    }

    /**
     * Where a Prepare reserved key {@code index}'s slot in the pool ({@link EngineClient#pool()}); the engine writes
     * the block's {@link #length(int)} bytes there and then commits.
     *
     * @param index key index.
     * @return the slot's offset in the pool, -1 for a key without one (not {@code RESERVED}).
     */
    public long poolOffset(final int index)
    {
        checkIndex(index);
        return poolOffsets[index];
    }

    public int maxKeys()
    {
        return statuses.length;
    }

    /**
     * Status of the operation: OK, or the first non-OK code the Manager answered (later requests not sent).
     *
     * @return the status code.
     */
    public StatusCode code()
    {
        return code;
    }

    public boolean isOk()
    {
        return code == StatusCode.OK;
    }

    public long value()
    {
        return value;
    }

    public int keyCount()
    {
        return keyCount;
    }

    public KeyStatus status(final int index)
    {
        checkIndex(index);
        return statuses[index];
    }

    /**
     * Block length in bytes reported for a key, 0 where unknown.
     *
     * @param index key index.
     * @return length in bytes.
     */
    public int length(final int index)
    {
        checkIndex(index);
        return lengths[index];
    }

    /**
     * Why a key was answered {@link KeyStatus#FAILED}: {@link FailureReason#NONE} for every other key and for answers
     * of schema version 1 and 2, {@code NULL_VAL} for a value this client does not know.
     *
     * @param index key index.
     * @return the reason.
     */
    public FailureReason reason(final int index)
    {
        checkIndex(index);
        return reasons[index];
    }

    /**
     * Candidates (and their owners) that were not kept: over this result's capacity, or naming a row or an owner that
     * their answer does not have.
     *
     * @return candidates dropped since the last reset.
     */
    public int droppedCandidates()
    {
        return candidates.dropped();
    }

    public int leaseCount()
    {
        return leaseCount;
    }

    /**
     * The lease of request {@code i} of a pinned Lookup; 0 if that request pinned nothing.
     *
     * @param i request index.
     * @return lease id.
     */
    public long leaseId(final int i)
    {
        if (i < 0 || i >= leaseCount)
        {
            throw new IndexOutOfBoundsException("lease index " + i + " not in [0, " + leaseCount + ")");
        }
        return leaseIds[i];
    }

    /**
     * The first lease of a pinned Lookup, or 0.
     *
     * @return lease id.
     */
    public long leaseId()
    {
        return leaseCount > 0 ? leaseIds[0] : 0;
    }

    /**
     * Number of requests sent for this operation.
     *
     * @return request count.
     */
    public int requestCount()
    {
        return requestCount;
    }

    /**
     * The Manager's reason for a non-OK code, or an empty string.
     *
     * @return the message (allocated on first call after an error).
     */
    public String message()
    {
        if (message == null)
        {
            message = new String(messageBytes, 0, messageLength, StandardCharsets.US_ASCII);
        }
        return message;
    }

    /**
     * Count of keys with the given status.
     *
     * @param status the status to count.
     * @return how many keys have it.
     */
    public int count(final KeyStatus status)
    {
        int n = 0;
        for (int i = 0; i < keyCount; i++)
        {
            if (statuses[i] == status)
            {
                n++;
            }
        }
        return n;
    }

    /**
     * Number of peer candidates: copies of {@link KeyStatus#PEER} keys on other Managers, in key order.
     *
     * @return candidate count.
     */
    public int candidateCount()
    {
        return candidates.candidateCount();
    }

    /**
     * The batch key index a candidate is a copy of.
     *
     * @param i candidate index.
     * @return key index in the batch.
     */
    public int candidateKeyIndex(final int i)
    {
        return candidates.candidateKeyIndex(i);
    }

    /**
     * The owner (see {@link #ownerCount()}) holding a candidate.
     *
     * @param i candidate index.
     * @return owner index.
     */
    public int candidateOwnerIndex(final int i)
    {
        return candidates.candidateOwnerIndex(i);
    }

    /**
     * The owner's tier for a candidate: {@link KeyStatus#DRAM} or {@link KeyStatus#SSD} ({@code NULL_VAL} for a value
     * this client does not know).
     *
     * @param i candidate index.
     * @return the tier.
     */
    public KeyStatus candidateTier(final int i)
    {
        return candidates.candidateTier(i);
    }

    /**
     * The owner's insertion sequence of a candidate block.
     *
     * @param i candidate index.
     * @return insertion sequence.
     */
    public long candidateInsertionSequence(final int i)
    {
        return candidates.candidateInsertionSequence(i);
    }

    /**
     * Block length in bytes of a candidate.
     *
     * @param i candidate index.
     * @return length in bytes.
     */
    public int candidateLength(final int i)
    {
        return candidates.candidateLength(i);
    }

    /**
     * Number of distinct owners (other Managers) the candidates name.
     *
     * @return owner count.
     */
    public int ownerCount()
    {
        return candidates.ownerCount();
    }

    public long ownerRuntimeUuidMsb(final int i)
    {
        return candidates.ownerRuntimeUuidMsb(i);
    }

    public long ownerRuntimeUuidLsb(final int i)
    {
        return candidates.ownerRuntimeUuidLsb(i);
    }

    /**
     * An owner's node id. Allocates a String on every call; {@link #ownerNodeId(int, StringBuilder)} does not.
     *
     * @param i owner index.
     * @return the node id.
     */
    public String ownerNodeId(final int i)
    {
        return candidates.ownerNodeId(i);
    }

    /**
     * Append an owner's node id to a builder; allocation-free when the builder has room.
     *
     * @param i   owner index.
     * @param dst builder to append to.
     * @return dst, for chaining.
     */
    public StringBuilder ownerNodeId(final int i, final StringBuilder dst)
    {
        return candidates.ownerNodeId(i, dst);
    }

    void reset(final int keyCount)
    {
        if (keyCount > statuses.length)
        {
            throw new IllegalArgumentException("result holds " + statuses.length + " keys, batch has " + keyCount);
        }
        this.keyCount = keyCount;
        for (int i = 0; i < keyCount; i++)
        {
            statuses[i] = KeyStatus.NOT_ATTEMPTED;
            lengths[i] = 0;
            reasons[i] = FailureReason.NONE;
            poolOffsets[i] = -1;
        }
        code = StatusCode.OK;
        value = 0;
        leaseCount = 0;
        requestCount = 0;
        messageLength = 0;
        message = "";
        candidates.reset();
    }

    void key(final int index, final KeyStatus status, final int length, final FailureReason reason)
    {
        statuses[index] = status;
        lengths[index] = length;
        reasons[index] = reason;
    }

    void poolOffset(final int index, final long poolOffset)
    {
        poolOffsets[index] = poolOffset;
    }

    void addValue(final long delta)
    {
        value += delta;
    }

    void addLease(final long leaseId)
    {
        leaseIds[leaseCount++] = leaseId;
    }

    void requestSent()
    {
        requestCount++;
    }

    void failed(final StatusCode code)
    {
        this.code = code;
        messageLength = 0;
        message = null;
    }

    byte[] messageBytes()
    {
        return messageBytes;
    }

    void messageLength(final int length)
    {
        messageLength = length;
        message = null;
    }

    /**
     * The candidate table the response decoder fills: owners and candidates of every answer of the batch.
     */
    CandidateTable candidates()
    {
        return candidates;
    }

    private void checkIndex(final int index)
    {
        if (index < 0 || index >= keyCount)
        {
            throw new IndexOutOfBoundsException("key index " + index + " not in [0, " + keyCount + ")");
        }
    }
}
