package io.orbitkv.transport;

import java.net.InetSocketAddress;

/**
 * The peers a requester keeps, on the owner's thread: endpoint, generation and last use per slot. A handle packs
 * the slot and its generation, so a handle of an evicted or closed peer never reaches its successor. Opening a peer
 * writes a connect entry that the I/O thread reads after it took the connect command naming it.
 */
final class BuiltinPeers
{
    private static final int SLOT_BITS = 8;
    private static final int SLOT_MASK = (1 << SLOT_BITS) - 1;
    private static final int GENERATION_MASK = 0x7FFFFF;

    // Connect requests: entry (sequence mod capacity) is filled before CMD_CONNECT names it; the command ring holds
    // fewer commands than entries, so an entry is not reused before the I/O thread took its command.
    final InetSocketAddress[] connectAddress;
    final int[] connectGeneration;
    private int connectSequence;

    private final int maxPeers;
    private final String[] endpoint;
    private final int[] generation;
    private final boolean[] live;
    private final long[] lastUsed;
    private long useClock;

    BuiltinPeers(final int maxPeers, final int connectEntries)
    {
        this.maxPeers = maxPeers;
        endpoint = new String[maxPeers];
        generation = new int[maxPeers];
        live = new boolean[maxPeers];
        lastUsed = new long[maxPeers];
        connectAddress = new InetSocketAddress[connectEntries];
        connectGeneration = new int[connectEntries];
    }

    static int slotOf(final int handle)
    {
        return handle & SLOT_MASK;
    }

    static int generationOf(final int handle)
    {
        return handle >>> SLOT_BITS;
    }

    int handle(final int slot)
    {
        return (generation[slot] << SLOT_BITS) | slot;
    }

    int generation(final int slot)
    {
        return generation[slot];
    }

    /**
     * @return the handle of the live peer at {@code peerEndpoint}, marked used, or -1.
     */
    int find(final CharSequence peerEndpoint)
    {
        for (int i = 0; i < maxPeers; i++)
        {
            if (live[i] && endpoint[i].contentEquals(peerEndpoint))
            {
                lastUsed[i] = ++useClock;
                return handle(i);
            }
        }
        return -1;
    }

    /**
     * @return a slot without a live peer, or -1 when every slot is live.
     */
    int freeSlot()
    {
        for (int i = 0; i < maxPeers; i++)
        {
            if (!live[i])
            {
                return i;
            }
        }
        return -1;
    }

    /**
     * @return the live slot used least recently.
     */
    int leastRecentlyUsed()
    {
        int lru = 0;
        for (int i = 1; i < maxPeers; i++)
        {
            if (lastUsed[i] < lastUsed[lru])
            {
                lru = i;
            }
        }
        return lru;
    }

    /**
     * Give {@code slot} to a new peer with a new generation and fill its connect entry.
     *
     * @return the index of the connect entry for the I/O thread.
     */
    int open(final int slot, final CharSequence peerEndpoint, final InetSocketAddress address)
    {
        endpoint[slot] = peerEndpoint.toString();
        generation[slot] = (generation[slot] + 1) & GENERATION_MASK;
        live[slot] = true;
        lastUsed[slot] = ++useClock;
        final int connectIndex = connectSequence;
        connectSequence = (connectSequence + 1) % connectAddress.length;
        connectAddress[connectIndex] = address;
        connectGeneration[connectIndex] = generation[slot];
        return connectIndex;
    }

    void close(final int slot)
    {
        live[slot] = false;
        endpoint[slot] = null;
    }

    void touch(final int slot)
    {
        lastUsed[slot] = ++useClock;
    }

    /**
     * @return the slot of a handle that names a live peer of its generation, else -1.
     */
    int liveSlotOf(final int handle)
    {
        if (handle < 0)
        {
            return -1;
        }
        final int slot = slotOf(handle);
        if (slot >= maxPeers || !live[slot] || generation[slot] != generationOf(handle))
        {
            return -1;
        }
        return slot;
    }

    int count()
    {
        int count = 0;
        for (int i = 0; i < maxPeers; i++)
        {
            count += live[i] ? 1 : 0;
        }
        return count;
    }

    /**
     * @param text {@code host:port} or {@code [v6-address]:port}.
     * @return the resolved address, or null when the text is not an endpoint or the host does not resolve.
     */
    static InetSocketAddress parseEndpoint(final CharSequence text)
    {
        if (null == text)
        {
            return null;
        }
        final String value = text.toString();
        final int colon = value.lastIndexOf(':');
        if (colon <= 0 || colon == value.length() - 1)
        {
            return null;
        }
        String host = value.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]"))
        {
            host = host.substring(1, host.length() - 1);
        }
        final int port;
        try
        {
            port = Integer.parseInt(value.substring(colon + 1));
        }
        catch (final NumberFormatException ex)
        {
            return null;
        }
        if (port <= 0 || port > 65535 || host.isEmpty())
        {
            return null;
        }
        final InetSocketAddress address = new InetSocketAddress(host, port);
        return address.isUnresolved() ? null : address;
    }
}
