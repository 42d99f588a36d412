package io.orbitkv.codecs;

import io.orbitkv.codecs.engine.KeyStatus;
import java.nio.charset.StandardCharsets;

/**
 * The per-key candidate table of a Lookup or Read Response (engine ring schema version 2 and later): the distinct
 * owners (other Managers, one entry per runtime UUID, with a node id) and the candidate copies of {@code PEER} keys on
 * them, in key order. The Manager fills one per answer frame and its response proxy encodes it; the engine client
 * fills one per batch from the frames it decodes. The wire form is the {@code owners} and {@code candidates} groups of
 * the {@code Response} message; this is the one in-memory form of both sides.
 *
 * <p>Pre-sized and reused: {@link #reset()}, then owners, then candidates. Nothing here allocates but the String
 * forms of a node id. A candidate that does not fit is refused ({@code false}) and counted in {@link #dropped()}.
 *
 * <p>A table made by {@link #forAnswer()} also keeps the rules of one answer frame: candidates in key order, at most
 * {@link EngineRingLimits#MAX_CANDIDATES_PER_KEY} per key and {@link EngineRingLimits#MAX_PEER_KEYS_PER_LOOKUP} keys,
 * key indexes of one request, owners added before, a DRAM or SSD tier. A table made by {@link #forBatch(int, int)}
 * keeps what its decoder gives it (the decoder checks rows and owners against the frame they came from).
 *
 * <p>Not thread safe.
 */
public final class CandidateTable
{
    /** Returned by the {@code addOwner} methods when the table holds as many owners as it can. */
    public static final int NO_OWNER = -1;

    private static final int NO_KEY = -1;

    private final boolean frameRules;
    private final int[] candidateKeyIndexes;
    private final int[] candidateOwnerIndexes;
    private final KeyStatus[] candidateTiers;
    private final long[] candidateInsertionSequences;
    private final int[] candidateLengths;
    private final long[] ownerMsbs;
    private final long[] ownerLsbs;
    private final byte[] ownerNodeIds;
    private final int[] ownerNodeIdLengths;

    private int candidateCount;
    private int ownerCount;
    private int peerKeyCount;
    private int lastKeyIndex = NO_KEY;
    private int lastKeyCandidates;
    private int dropped;

    private CandidateTable(final int candidateCapacity, final int ownerCapacity, final boolean frameRules)
    {
        this.frameRules = frameRules;
        candidateKeyIndexes = new int[candidateCapacity];
        candidateOwnerIndexes = new int[candidateCapacity];
        candidateTiers = new KeyStatus[candidateCapacity];
        candidateInsertionSequences = new long[candidateCapacity];
        candidateLengths = new int[candidateCapacity];
        ownerMsbs = new long[ownerCapacity];
        ownerLsbs = new long[ownerCapacity];
        ownerNodeIds = new byte[ownerCapacity * EngineRingLimits.MAX_NODE_ID_LENGTH];
        ownerNodeIdLengths = new int[ownerCapacity];
    }

    /**
     * The table of one answer frame, sized for the protocol limits and keeping the frame's rules.
     *
     * @return a new, empty table.
     */
    public static CandidateTable forAnswer()
    {
        return new CandidateTable(
            EngineRingLimits.MAX_CANDIDATES_PER_LOOKUP, EngineRingLimits.MAX_PEER_OWNERS_PER_LOOKUP, true);
    }

    /**
     * The table of a batch gathered from several answer frames: capacity only.
     *
     * @param candidateCapacity candidates it keeps.
     * @param ownerCapacity     distinct owners it keeps.
     * @return a new, empty table.
     */
    public static CandidateTable forBatch(final int candidateCapacity, final int ownerCapacity)
    {
        return new CandidateTable(candidateCapacity, ownerCapacity, false);
    }

    /**
     * Forget every owner and candidate.
     */
    public void reset()
    {
        ownerCount = 0;
        candidateCount = 0;
        peerKeyCount = 0;
        lastKeyIndex = NO_KEY;
        lastKeyCandidates = 0;
        dropped = 0;
    }

    /**
     * The index of the owner with this runtime UUID.
     *
     * @param msb most significant bits of the owner's runtime UUID.
     * @param lsb least significant bits of the owner's runtime UUID.
     * @return its index, or {@link #NO_OWNER}.
     */
    public int findOwner(final long msb, final long lsb)
    {
        for (int i = 0; i < ownerCount; i++)
        {
            if (ownerMsbs[i] == msb && ownerLsbs[i] == lsb)
            {
                return i;
            }
        }
        return NO_OWNER;
    }

    /**
     * Add an owner without looking for it first; its node id is then written into {@link #ownerNodeIdBytes()} at
     * {@link #ownerNodeIdOffset(int)} and its length given to {@link #ownerNodeIdLength(int, int)} (a decoder copies
     * it straight from the frame).
     *
     * @param msb most significant bits of the owner's runtime UUID.
     * @param lsb least significant bits of the owner's runtime UUID.
     * @return the owner index, or {@link #NO_OWNER} when full.
     */
    public int addOwner(final long msb, final long lsb)
    {
        if (ownerCount == ownerMsbs.length)
        {
            return NO_OWNER;
        }
        ownerMsbs[ownerCount] = msb;
        ownerLsbs[ownerCount] = lsb;
        ownerNodeIdLengths[ownerCount] = 0;
        return ownerCount++;
    }

    /**
     * Add an owner, or find it: adding a runtime UUID again returns the index it already has (the node id given first
     * is kept).
     *
     * @param msb    most significant bits of the owner's runtime UUID.
     * @param lsb    least significant bits of the owner's runtime UUID.
     * @param nodeId the owner's node id: 1..{@link EngineRingLimits#MAX_NODE_ID_LENGTH} ASCII characters.
     * @return the owner index, or {@link #NO_OWNER} when a new owner does not fit.
     * @throws IllegalArgumentException if the node id is null, empty, too long or not ASCII (a bug in the caller,
     *                                  never a runtime condition).
     */
    public int addOwner(final long msb, final long lsb, final CharSequence nodeId)
    {
        final int known = findOwner(msb, lsb);
        if (NO_OWNER != known || ownerCount == ownerMsbs.length)
        {
            return known;
        }
        final int length = null == nodeId ? 0 : nodeId.length();
        if (length < 1 || length > EngineRingLimits.MAX_NODE_ID_LENGTH)
        {
            throw new IllegalArgumentException("node id must be 1.." + EngineRingLimits.MAX_NODE_ID_LENGTH + " characters");
        }
        final int base = ownerNodeIdOffset(ownerCount);
        for (int i = 0; i < length; i++)
        {
            final char c = nodeId.charAt(i);
            if (c > 0x7F)
            {
                throw new IllegalArgumentException("node id must be ASCII");
            }
            ownerNodeIds[base + i] = (byte)c;
        }
        final int index = addOwner(msb, lsb);
        ownerNodeIdLengths[index] = length;
        return index;
    }

    /**
     * Append a candidate copy of a key.
     *
     * @param keyIndex          the row of the answer (or batch) the candidate is a copy of.
     * @param ownerIndex        an owner index of this table.
     * @param tier              the owner's tier: {@link KeyStatus#DRAM} or {@link KeyStatus#SSD}.
     * @param insertionSequence the owner's insertion sequence of the block.
     * @param length            block length in bytes.
     * @return false, nothing added and the candidate counted as dropped, when the table is full or, for an answer
     *         frame's table, the candidate breaks one of the frame's rules.
     */
    public boolean addCandidate(
        final int keyIndex, final int ownerIndex, final KeyStatus tier, final long insertionSequence, final int length)
    {
        if (candidateCount == candidateKeyIndexes.length || frameRules && !fitsFrame(keyIndex, ownerIndex, tier))
        {
            dropped++;
            return false;
        }
        if (keyIndex != lastKeyIndex)
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

    /**
     * Count a candidate its decoder could not keep (it names a row or an owner its frame does not have).
     */
    public void candidateDropped()
    {
        dropped++;
    }

    /**
     * @return candidates refused or dropped since the last reset.
     */
    public int dropped()
    {
        return dropped;
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
     * @return distinct keys with at least one candidate (a key's candidates are appended in a row).
     */
    public int peerKeyCount()
    {
        return peerKeyCount;
    }

    /**
     * @return true when no candidate was added: the answer is then a plain local one.
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
     * @param i owner index.
     * @return the length in bytes of the owner's node id.
     */
    public int ownerNodeIdLength(final int i)
    {
        checkOwner(i);
        return ownerNodeIdLengths[i];
    }

    /**
     * Set the length of a node id written into {@link #ownerNodeIdBytes()}.
     *
     * @param owner  owner index.
     * @param length bytes written, at most {@link EngineRingLimits#MAX_NODE_ID_LENGTH}.
     */
    public void ownerNodeIdLength(final int owner, final int length)
    {
        checkOwner(owner);
        ownerNodeIdLengths[owner] = length;
    }

    /**
     * The ASCII bytes of the owners' node ids: owner {@code i} starts at {@link #ownerNodeIdOffset(int)} and is
     * {@link #ownerNodeIdLength(int)} bytes long. For the encoder and the decoder.
     *
     * @return the backing array.
     */
    public byte[] ownerNodeIdBytes()
    {
        return ownerNodeIds;
    }

    /**
     * @param owner owner index.
     * @return where the owner's node id starts in {@link #ownerNodeIdBytes()}.
     */
    public static int ownerNodeIdOffset(final int owner)
    {
        return owner * EngineRingLimits.MAX_NODE_ID_LENGTH;
    }

    /**
     * An owner's node id as a String, for tools and tests (allocates).
     *
     * @param i owner index.
     * @return the node id.
     */
    public String ownerNodeId(final int i)
    {
        checkOwner(i);
        return new String(ownerNodeIds, ownerNodeIdOffset(i), ownerNodeIdLengths[i], StandardCharsets.US_ASCII);
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
        checkOwner(i);
        final int offset = ownerNodeIdOffset(i);
        for (int b = 0, length = ownerNodeIdLengths[i]; b < length; b++)
        {
            dst.append((char)(ownerNodeIds[offset + b] & 0x7F));
        }
        return dst;
    }

    private boolean fitsFrame(final int keyIndex, final int ownerIndex, final KeyStatus tier)
    {
        if (keyIndex < 0 || keyIndex >= EngineRingLimits.MAX_KEYS_PER_REQUEST || keyIndex < lastKeyIndex ||
            ownerIndex < 0 || ownerIndex >= ownerCount || (KeyStatus.DRAM != tier && KeyStatus.SSD != tier))
        {
            return false;
        }
        return keyIndex != lastKeyIndex ?
            peerKeyCount < EngineRingLimits.MAX_PEER_KEYS_PER_LOOKUP :
            lastKeyCandidates < EngineRingLimits.MAX_CANDIDATES_PER_KEY;
    }

    private void checkCandidate(final int i)
    {
        if (i < 0 || i >= candidateCount)
        {
            throw new IndexOutOfBoundsException("candidate index " + i + " not in [0, " + candidateCount + ")");
        }
    }

    private void checkOwner(final int i)
    {
        if (i < 0 || i >= ownerCount)
        {
            throw new IndexOutOfBoundsException("owner index " + i + " not in [0, " + ownerCount + ")");
        }
    }
}
