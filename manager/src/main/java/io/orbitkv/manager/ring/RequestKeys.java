package io.orbitkv.manager.ring;

import io.orbitkv.codecs.EngineRingLimits;
import org.agrona.DirectBuffer;

/**
 * The keys of one Publish, Lookup or Read as the {@link RequestAdapter} decoded them: where each hash lies in the
 * frame, the key's region range (Publish: source offset and length; Read: destination offset and capacity; unused
 * by Lookup), a Publish key's lineage when its sender gave one (where its parent hash and token ids lie) and the
 * namespace. Preallocated once and refilled for every request; valid only during the call it
 * is handed to.
 */
final class RequestKeys
{
    private final int[] hashOffsets = new int[EngineRingLimits.MAX_KEYS_PER_REQUEST];
    private final int[] hashLengths = new int[EngineRingLimits.MAX_KEYS_PER_REQUEST];
    private final long[] regionOffsets = new long[EngineRingLimits.MAX_KEYS_PER_REQUEST];
    private final int[] regionLengths = new int[EngineRingLimits.MAX_KEYS_PER_REQUEST];
    private final int[] parentOffsets = new int[EngineRingLimits.MAX_KEYS_PER_REQUEST];
    private final int[] parentLengths = new int[EngineRingLimits.MAX_KEYS_PER_REQUEST];
    private final int[] tokenOffsets = new int[EngineRingLimits.MAX_KEYS_PER_REQUEST];
    private final int[] tokenCounts = new int[EngineRingLimits.MAX_KEYS_PER_REQUEST];
    private DirectBuffer buffer;
    private int count;
    private int namespaceOffset;
    private int namespaceLength;

    void reset(final DirectBuffer buffer, final int namespaceOffset, final int namespaceLength)
    {
        this.buffer = buffer;
        this.namespaceOffset = namespaceOffset;
        this.namespaceLength = namespaceLength;
        this.count = 0;
    }

    void add(final int hashOffset, final int hashLength, final long regionOffset, final int regionLength)
    {
        hashOffsets[count] = hashOffset;
        hashLengths[count] = hashLength;
        regionOffsets[count] = regionOffset;
        regionLengths[count] = regionLength;
        parentLengths[count] = 0;
        tokenCounts[count] = 0;
        count++;
    }

    /**
     * Give the key added last its lineage.
     *
     * @param parentOffset where the parent hash lies in the frame.
     * @param parentLength its length, 0 for none.
     * @param tokenOffset  where the token ids (little-endian int32 each) lie in the frame.
     * @param tokenCount   how many, 0 for none.
     */
    void lineage(final int parentOffset, final int parentLength, final int tokenOffset, final int tokenCount)
    {
        final int key = count - 1;
        parentOffsets[key] = parentOffset;
        parentLengths[key] = parentLength;
        tokenOffsets[key] = tokenOffset;
        tokenCounts[key] = tokenCount;
    }

    /** The frame the hashes and the namespace are in. */
    DirectBuffer buffer()
    {
        return buffer;
    }

    int count()
    {
        return count;
    }

    int namespaceOffset()
    {
        return namespaceOffset;
    }

    int namespaceLength()
    {
        return namespaceLength;
    }

    int hashOffset(final int key)
    {
        return hashOffsets[key];
    }

    int hashLength(final int key)
    {
        return hashLengths[key];
    }

    long regionOffset(final int key)
    {
        return regionOffsets[key];
    }

    int regionLength(final int key)
    {
        return regionLengths[key];
    }

    /** @return true when the sender gave the key a parent hash or token ids. */
    boolean hasLineage(final int key)
    {
        return 0 != parentLengths[key] || 0 != tokenCounts[key];
    }

    int parentOffset(final int key)
    {
        return parentOffsets[key];
    }

    int parentLength(final int key)
    {
        return parentLengths[key];
    }

    int tokenOffset(final int key)
    {
        return tokenOffsets[key];
    }

    int tokenCount(final int key)
    {
        return tokenCounts[key];
    }
}
