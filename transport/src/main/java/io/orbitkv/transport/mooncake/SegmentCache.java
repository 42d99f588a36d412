package io.orbitkv.transport.mooncake;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import io.orbitkv.ffm.te.TransferEngineC;

/**
 * The TE segments a {@link MooncakeTransport} keeps open, one per peer endpoint, at most
 * {@link MooncakeTransport#PEER_CACHE_CAPACITY}. A handle packs the entry and a generation, so a handle of a
 * closed or evicted peer never reaches its successor. Only a peer without reads outstanding is evicted (the least
 * recently used), because TE tasks name the segment they read from.
 */
final class SegmentCache
{
    private static final int INDEX_BITS = 6;
    private static final int INDEX_MASK = (1 << INDEX_BITS) - 1;
    private static final int GENERATION_MASK = (1 << (31 - INDEX_BITS)) - 1;
    private static final int CAPACITY = MooncakeTransport.PEER_CACHE_CAPACITY;

    private final TransferEngineC te;
    private final MemorySegment engine;
    private final MemorySegment nameBuffer;

    // Segment id per entry (0 when free), the endpoint it was opened for, a generation in the handle.
    private final int[] segment = new int[CAPACITY];
    private final String[] endpoint = new String[CAPACITY];
    private final int[] generation = new int[CAPACITY];
    private final long[] lastUsed = new long[CAPACITY];
    private final int[] outstanding = new int[CAPACITY];
    private long clock;
    private long openFailureCount;
    private long cacheFullCount;
    private long evictionCount;

    /**
     * @param nameBuffer holds a NUL-terminated endpoint of up to {@link MooncakeTransport#MAX_ENDPOINT_BYTES}.
     */
    SegmentCache(final TransferEngineC te, final MemorySegment engine, final MemorySegment nameBuffer)
    {
        this.te = te;
        this.engine = engine;
        this.nameBuffer = nameBuffer;
    }

    /**
     * Find the peer at {@code peerEndpoint} or open its segment, evicting an idle peer when the cache is full.
     *
     * @return an entry index, or -1 when the endpoint is malformed, cannot be opened, or every cached peer has reads
     * outstanding (each counted).
     */
    int acquire(final CharSequence peerEndpoint)
    {
        if (!wellFormedEndpoint(peerEndpoint))
        {
            openFailureCount++;
            return -1;
        }

        int victim = -1;
        long victimLastUsed = Long.MAX_VALUE;
        for (int i = 0; i < CAPACITY; i++)
        {
            if (0 == segment[i])
            {
                if (victimLastUsed != Long.MIN_VALUE)
                {
                    victim = i;
                    victimLastUsed = Long.MIN_VALUE;
                }
            }
            else if (contentEquals(endpoint[i], peerEndpoint))
            {
                lastUsed[i] = ++clock;
                return i;
            }
            else if (0 == outstanding[i] && lastUsed[i] < victimLastUsed)
            {
                victim = i;
                victimLastUsed = lastUsed[i];
            }
        }
        if (-1 == victim)
        {
            cacheFullCount++;
            return -1;
        }
        if (0 != segment[victim])
        {
            evictionCount++;
            close(victim);
        }

        final int length = peerEndpoint.length();
        for (int i = 0; i < length; i++)
        {
            nameBuffer.set(ValueLayout.JAVA_BYTE, i, (byte)peerEndpoint.charAt(i));
        }
        nameBuffer.set(ValueLayout.JAVA_BYTE, length, (byte)0);
        final int opened = te.openSegment(engine, nameBuffer);
        if (opened < 1)
        {
            openFailureCount++;
            return -1;
        }
        segment[victim] = opened;
        endpoint[victim] = peerEndpoint.toString();
        lastUsed[victim] = ++clock;
        return victim;
    }

    /**
     * Close the entry's segment; its handles stop naming it.
     */
    void close(final int index)
    {
        te.closeSegment(engine, segment[index]);
        segment[index] = 0;
        endpoint[index] = null;
        outstanding[index] = 0;
        generation[index] = (generation[index] + 1) & GENERATION_MASK;
    }

    int handle(final int index)
    {
        return (generation[index] << INDEX_BITS) | index;
    }

    /**
     * @return the entry a handle names while its segment is open, else -1.
     */
    int liveIndex(final int handle)
    {
        if (handle < 0)
        {
            return -1;
        }
        final int index = handle & INDEX_MASK;
        return 0 != segment[index] && generation[index] == (handle >>> INDEX_BITS) ? index : -1;
    }

    int segment(final int index)
    {
        return segment[index];
    }

    void readStarted(final int index)
    {
        outstanding[index]++;
    }

    void readEnded(final int index)
    {
        if (outstanding[index] > 0)
        {
            outstanding[index]--;
        }
    }

    long openFailureCount()
    {
        return openFailureCount;
    }

    long cacheFullCount()
    {
        return cacheFullCount;
    }

    long evictionCount()
    {
        return evictionCount;
    }

    private static boolean wellFormedEndpoint(final CharSequence peerEndpoint)
    {
        if (null == peerEndpoint || peerEndpoint.isEmpty() || peerEndpoint.length() > MooncakeTransport.MAX_ENDPOINT_BYTES)
        {
            return false;
        }
        for (int i = 0, length = peerEndpoint.length(); i < length; i++)
        {
            final char c = peerEndpoint.charAt(i);
            if (c <= ' ' || c > '~')
            {
                return false;
            }
        }
        return true;
    }

    private static boolean contentEquals(final String cached, final CharSequence peerEndpoint)
    {
        final int length = cached.length();
        if (length != peerEndpoint.length())
        {
            return false;
        }
        for (int i = 0; i < length; i++)
        {
            if (cached.charAt(i) != peerEndpoint.charAt(i))
            {
                return false;
            }
        }
        return true;
    }
}
