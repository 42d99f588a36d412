package io.orbitkv.manager.catalog;

import io.orbitkv.codecs.CatalogLimits;
import io.orbitkv.manager.membership.MemberRecord;
import io.orbitkv.manager.peer.PeerPublisher;
import io.orbitkv.manager.peer.PeerClient;

/**
 * This Manager's sessions to the sources it fetches from that host no catalog shard (a catalog host's link serves
 * its transfers: a remote keeps one session per requester), one per source incarnation, at most
 * {@link CatalogLimits#SOURCE_CHANNEL_CLIENTS}: the least recently used is closed to make room for a new one. A link
 * to an incarnation that left the member view is closed when next asked for. Runs on the agent thread; opening a link
 * allocates (first contact with a source), using one does not.
 */
final class SourceLinks
{
    private final PeerPublisher publisher;
    private final HostLink[] links;
    private final long[] lastUseMs;
    private int count;
    private long evictions;

    SourceLinks(final PeerPublisher publisher, final int capacity)
    {
        this.publisher = publisher;
        links = new HostLink[capacity];
        lastUseMs = new long[capacity];
    }

    SourceLinks(final PeerPublisher publisher)
    {
        this(publisher, CatalogLimits.SOURCE_CHANNEL_CLIENTS);
    }

    /**
     * The active session to {@code record}'s incarnation, connecting (or reconnecting after a failure) when needed.
     *
     * @return the client, or null while it connects.
     */
    PeerClient client(final MemberRecord record, final long nowMs)
    {
        final long msb = record.runtimeUuid().getMostSignificantBits();
        final long lsb = record.runtimeUuid().getLeastSignificantBits();
        int slot = find(msb, lsb);
        if (slot < 0 || !links[slot].isFor(record))
        {
            if (slot >= 0)
            {
                remove(slot);
            }
            slot = count < links.length ? count++ : evictLeastRecent();
            links[slot] = new HostLink(record, publisher);
        }
        lastUseMs[slot] = nowMs;
        return links[slot].poll(nowMs);
    }

    /**
     * Whether {@code client} is the session of one of these links.
     */
    boolean owns(final PeerClient client)
    {
        for (int i = 0; i < count; i++)
        {
            if (links[i].owns(client))
            {
                return true;
            }
        }
        return false;
    }

    int size()
    {
        return count;
    }

    long evictions()
    {
        return evictions;
    }

    void close()
    {
        for (int i = 0; i < count; i++)
        {
            links[i].close();
            links[i] = null;
        }
        count = 0;
    }

    private int find(final long msb, final long lsb)
    {
        for (int i = 0; i < count; i++)
        {
            if (links[i].incarnationMsb == msb && links[i].incarnationLsb == lsb)
            {
                return i;
            }
        }
        return -1;
    }

    private int evictLeastRecent()
    {
        int oldest = 0;
        for (int i = 1; i < count; i++)
        {
            if (lastUseMs[i] - lastUseMs[oldest] < 0)
            {
                oldest = i;
            }
        }
        links[oldest].close();
        evictions++;
        return oldest;
    }

    private void remove(final int slot)
    {
        links[slot].close();
        final int last = --count;
        links[slot] = links[last];
        lastUseMs[slot] = lastUseMs[last];
        links[last] = null;
    }
}
