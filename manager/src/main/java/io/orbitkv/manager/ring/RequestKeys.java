package io.orbitkv.manager.ring;

import io.orbitkv.codecs.EngineRingLimits;
import org.agrona.DirectBuffer;

/**
 * The keys of one Publish, Lookup or Read as the {@link RequestAdapter} decoded them: where each hash lies in the
 * frame, the key's region range (Publish: source offset and length; Read: destination offset and capacity; unused
 * by Lookup) and the namespace. Preallocated once and refilled for every request; valid only during the call it
 * is handed to.
 */
final class RequestKeys
{
    private final int[] hashOffsets = new int[EngineRingLimits.MAX_KEYS_PER_REQUEST];
    private final int[] hashLengths = new int[EngineRingLimits.MAX_KEYS_PER_REQUEST];
    private final long[] regionOffsets = new long[EngineRingLimits.MAX_KEYS_PER_REQUEST];
    private final int[] regionLengths = new int[EngineRingLimits.MAX_KEYS_PER_REQUEST];
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
        count++;
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
}
