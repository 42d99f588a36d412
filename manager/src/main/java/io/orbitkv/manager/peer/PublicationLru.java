package io.orbitkv.manager.peer;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

import io.aeron.Aeron;
import io.aeron.ExclusivePublication;
import org.agrona.CloseHelper;

/**
 * Publications to peers, created lazily and kept in access order, at most {@link #MAX_CLIENTS} of them (design:
 * source-channel LRU of 64 clients). Adding one more closes the least recently used and counts the eviction; a session
 * whose publication was evicted gets a fresh one on its next send, which must connect again before offers succeed.
 * <p>
 * Creating a publication is a slow path (a driver round trip, an allocation); a hit allocates nothing. Single
 * threaded: the peer agent only, and never from an image-available callback (the Aeron client refuses reentrant
 * calls there).
 */
final class PublicationLru implements AutoCloseable
{
    /**
     * design: source-channel LRU of at most 64 clients.
     */
    static final int MAX_CLIENTS = 64;

    private final Aeron aeron;
    private final int streamId;
    private final int capacity;
    private final PeerCounters counters;
    private final LinkedHashMap<String, ExclusivePublication> byChannel;

    PublicationLru(final Aeron aeron, final int streamId, final int capacity, final PeerCounters counters)
    {
        if (capacity < 1)
        {
            throw new IllegalArgumentException("capacity must be positive: " + capacity);
        }
        this.aeron = aeron;
        this.streamId = streamId;
        this.capacity = capacity;
        this.counters = counters;
        this.byChannel = new LinkedHashMap<>(capacity * 2, 0.75f, true);
    }

    /**
     * The publication to a channel, created when absent (evicting the least recently used when full).
     */
    ExclusivePublication publication(final String channel)
    {
        ExclusivePublication publication = byChannel.get(channel);
        if (null == publication || publication.isClosed())
        {
            if (null != publication)
            {
                byChannel.remove(channel);
            }
            if (byChannel.size() >= capacity)
            {
                evictEldest();
            }
            publication = aeron.addExclusivePublication(channel, streamId);
            byChannel.put(channel, publication);
        }
        return publication;
    }

    /**
     * @return the cached publication, or null, without changing the access order's eviction decision much (a hit
     * still counts as a use).
     */
    ExclusivePublication cached(final String channel)
    {
        return byChannel.get(channel);
    }

    int size()
    {
        return byChannel.size();
    }

    int capacity()
    {
        return capacity;
    }

    public void close()
    {
        for (final ExclusivePublication publication : byChannel.values())
        {
            CloseHelper.quietClose(publication);
        }
        byChannel.clear();
    }

    private void evictEldest()
    {
        final Iterator<Map.Entry<String, ExclusivePublication>> it = byChannel.entrySet().iterator();
        final Map.Entry<String, ExclusivePublication> eldest = it.next();
        it.remove();
        CloseHelper.quietClose(eldest.getValue());
        counters.increment(PeerCounter.PUBLICATIONS_EVICTED);
    }
}
