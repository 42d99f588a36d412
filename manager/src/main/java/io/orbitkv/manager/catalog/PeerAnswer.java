package io.orbitkv.manager.catalog;

import io.orbitkv.codecs.EngineRingLimits;
import io.orbitkv.codecs.engine.KeyStatus;
import java.nio.charset.StandardCharsets;

/**
 * The peer part of one Lookup answer (engine ring schema version 2): the distinct owners (other Managers) and, per
 * {@code PEER} key, up to {@link EngineRingLimits#MAX_CANDIDATES_PER_KEY} candidate copies on them. Filled by the
 * catalog's discovery, encoded by the engine ring's response proxy (the ring package depends on the catalog, never
 * the reverse).
 *
 * <p>Pre-sized for the protocol limits and reused across lookups: {@link #reset()}, then owners, then candidates
 * appended in key order. Nothing here allocates; a refusal is a {@code false}/{@code -1} return, not an exception,
 * except for a node id that breaks the node id rule (a bug in the caller, never a runtime condition).
 *
 * <p>Fill it only for a Lookup that carried the {@code peers} flag: only such a client (schema version 2) can decode
 * the candidates, and an answer with candidates is written as a version-2 frame.
 *
 * <p>Not thread safe: one instance per ring agent.
 */
public final class PeerAnswer
{
    /** Returned by {@link #addOwner(long, long, String)} once {@link EngineRingLimits#MAX_PEER_OWNERS_PER_LOOKUP} are taken. */
    public static final int NO_OWNER = -1;

    private static final int NO_KEY = -1;

    private final long[] ownerMsbs = new long[EngineRingLimits.MAX_PEER_OWNERS_PER_LOOKUP];
    private final long[] ownerLsbs = new long[EngineRingLimits.MAX_PEER_OWNERS_PER_LOOKUP];
    private final byte[] ownerNodeIds =
        new byte[EngineRingLimits.MAX_PEER_OWNERS_PER_LOOKUP * EngineRingLimits.MAX_NODE_ID_LENGTH];
    private final int[] ownerNodeIdLengths = new int[EngineRingLimits.MAX_PEER_OWNERS_PER_LOOKUP];

    private final int[] candidateKeyIndexes = new int[EngineRingLimits.MAX_CANDIDATES_PER_LOOKUP];
    private final int[] candidateOwnerIndexes = new int[EngineRingLimits.MAX_CANDIDATES_PER_LOOKUP];
    private final KeyStatus[] candidateTiers = new KeyStatus[EngineRingLimits.MAX_CANDIDATES_PER_LOOKUP];
    private final long[] candidateInsertionSequences = new long[EngineRingLimits.MAX_CANDIDATES_PER_LOOKUP];
    private final int[] candidateLengths = new int[EngineRingLimits.MAX_CANDIDATES_PER_LOOKUP];

    private int ownerCount;
    private int candidateCount;
    private int peerKeyCount;
    private int lastKeyIndex = NO_KEY;
    private int lastKeyCandidates;

    /**
     * Forget every owner and candidate; call before filling the answer of the next lookup.
     */
    public void reset()
    {
        ownerCount = 0;
        candidateCount = 0;
        peerKeyCount = 0;
        lastKeyIndex = NO_KEY;
        lastKeyCandidates = 0;
    }

    /**
     * Add an owner, or find it: owners are identified by their runtime UUID, so adding a UUID again returns the index
     * it already has (the node id given first is kept).
     *
     * @param msb    most significant bits of the owner's runtime UUID.
     * @param lsb    least significant bits of the owner's runtime UUID.
     * @param nodeId the owner's node id: 1..{@link EngineRingLimits#MAX_NODE_ID_LENGTH} ASCII characters.
     * @return the owner index, or {@link #NO_OWNER} when {@link EngineRingLimits#MAX_PEER_OWNERS_PER_LOOKUP} distinct
     *         owners are already taken.
     * @throws IllegalArgumentException if the node id is null, empty, too long or not ASCII.
     */
    public int addOwner(final long msb, final long lsb, final String nodeId)
    {
        for (int i = 0; i < ownerCount; i++)
        {
            if (ownerMsbs[i] == msb && ownerLsbs[i] == lsb)
            {
                return i;
            }
        }
        if (ownerCount == EngineRingLimits.MAX_PEER_OWNERS_PER_LOOKUP)
        {
            return NO_OWNER;
        }
        final int length = null == nodeId ? 0 : nodeId.length();
        if (length < 1 || length > EngineRingLimits.MAX_NODE_ID_LENGTH)
        {
            throw new IllegalArgumentException("node id must be 1.." + EngineRingLimits.MAX_NODE_ID_LENGTH + " characters");
        }
        final int index = ownerCount;
        final int base = index * EngineRingLimits.MAX_NODE_ID_LENGTH;
        for (int i = 0; i < length; i++)
        {
            final char c = nodeId.charAt(i);
            if (c > 0x7F)
            {
                throw new IllegalArgumentException("node id must be ASCII");
            }
            ownerNodeIds[base + i] = (byte)c;
        }
        ownerMsbs[index] = msb;
        ownerLsbs[index] = lsb;
        ownerNodeIdLengths[index] = length;
        ownerCount++;
        return index;
    }

    /**
     * Append a candidate copy of a key. Candidates are appended in key order (several for one key in a row).
     *
     * @param keyIndex          row of the answer's keys, in {@code [0, MAX_KEYS_PER_REQUEST)}, not below the previous
     *                          candidate's.
     * @param ownerIndex        an index returned by {@link #addOwner(long, long, String)} since the last reset.
     * @param tier              the owner's tier: {@link KeyStatus#DRAM} or {@link KeyStatus#SSD}.
     * @param insertionSequence the owner's insertion sequence of the block.
     * @param length            block length in bytes.
     * @return false, and nothing added, when the key already has {@link EngineRingLimits#MAX_CANDIDATES_PER_KEY}, the
     *         answer already holds {@link EngineRingLimits#MAX_CANDIDATES_PER_LOOKUP} candidates or names
     *         {@link EngineRingLimits#MAX_PEER_KEYS_PER_LOOKUP} keys, the key index is out of
     *         order or bounds, the owner index is unknown or the tier is neither DRAM nor SSD.
     */
    public boolean addCandidate(
        final int keyIndex, final int ownerIndex, final KeyStatus tier, final long insertionSequence, final int length)
    {
        if (keyIndex < 0 || keyIndex >= EngineRingLimits.MAX_KEYS_PER_REQUEST || keyIndex < lastKeyIndex ||
            ownerIndex < 0 || ownerIndex >= ownerCount || (KeyStatus.DRAM != tier && KeyStatus.SSD != tier) ||
            candidateCount == EngineRingLimits.MAX_CANDIDATES_PER_LOOKUP)
        {
            return false;
        }
        final boolean newKey = keyIndex != lastKeyIndex;
        if (newKey ? peerKeyCount == EngineRingLimits.MAX_PEER_KEYS_PER_LOOKUP :
            lastKeyCandidates == EngineRingLimits.MAX_CANDIDATES_PER_KEY)
        {
            return false;
        }
        if (newKey)
        {
            lastKeyIndex = keyIndex;
            lastKeyCandidates = 0;
            peerKeyCount++;
        }
        final int i = candidateCount++;
        candidateKeyIndexes[i] = keyIndex;
        candidateOwnerIndexes[i] = ownerIndex;
        candidateTiers[i] = tier;
        candidateInsertionSequences[i] = insertionSequence;
        candidateLengths[i] = length;
        lastKeyCandidates++;
        return true;
    }

    public int candidateCount()
    {
        return candidateCount;
    }

    public int ownerCount()
    {
        return ownerCount;
    }

    /**
     * Distinct keys with at least one candidate.
     *
     * @return the number of peer keys.
     */
    public int peerKeyCount()
    {
        return peerKeyCount;
    }

    /**
     * True when there is nothing to send: the answer is then a plain local one.
     *
     * @return true if no candidate has been added.
     */
    public boolean isEmpty()
    {
        return 0 == candidateCount;
    }

    public int candidateKeyIndex(final int i)
    {
        checkCandidate(i);
        return candidateKeyIndexes[i];
    }

    public int candidateOwnerIndex(final int i)
    {
        checkCandidate(i);
        return candidateOwnerIndexes[i];
    }

    public KeyStatus candidateTier(final int i)
    {
        checkCandidate(i);
        return candidateTiers[i];
    }

    public long candidateInsertionSequence(final int i)
    {
        checkCandidate(i);
        return candidateInsertionSequences[i];
    }

    public int candidateLength(final int i)
    {
        checkCandidate(i);
        return candidateLengths[i];
    }

    public long ownerRuntimeUuidMsb(final int i)
    {
        checkOwner(i);
        return ownerMsbs[i];
    }

    public long ownerRuntimeUuidLsb(final int i)
    {
        checkOwner(i);
        return ownerLsbs[i];
    }

    /**
     * Length in bytes of an owner's node id.
     *
     * @param i owner index.
     * @return the length.
     */
    public int ownerNodeIdLength(final int i)
    {
        checkOwner(i);
        return ownerNodeIdLengths[i];
    }

    /**
     * The ASCII bytes of the owners' node ids: owner {@code i} starts at {@code i * MAX_NODE_ID_LENGTH} and is
     * {@link #ownerNodeIdLength(int)} bytes long. For the encoder; do not write into it.
     *
     * @return the backing array.
     */
    public byte[] ownerNodeIdBytes()
    {
        return ownerNodeIds;
    }

    /**
     * Owner node id as a String, for logs and tests (allocates).
     *
     * @param i owner index.
     * @return the node id.
     */
    public String ownerNodeId(final int i)
    {
        checkOwner(i);
        return new String(ownerNodeIds, i * EngineRingLimits.MAX_NODE_ID_LENGTH, ownerNodeIdLengths[i], StandardCharsets.US_ASCII);
    }

    private void checkCandidate(final int i)
    {
        if (i < 0 || i >= candidateCount)
        {
            throw new IndexOutOfBoundsException("candidate " + i + " not in [0, " + candidateCount + ")");
        }
    }

    private void checkOwner(final int i)
    {
        if (i < 0 || i >= ownerCount)
        {
            throw new IndexOutOfBoundsException("owner " + i + " not in [0, " + ownerCount + ")");
        }
    }
}
