package io.orbitkv.manager.peer;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.HashSet;
import java.util.Set;

/**
 * Which hosts the peer socket hears: the addresses of the current members' peer endpoints, as the last complete
 * member view named them. Until a view is applied (a Manager joining), or while a member's endpoint names no single
 * address (a wildcard, a name that does not resolve), every host is heard: a view that cannot say who is a member
 * cannot exclude anyone. Aeron senders send from an ephemeral port, so the check is on the address, not the port: a
 * stranger on a member's host is heard, and what it sends is judged by the frame checks of the
 * {@link GuardedReceiveEndpoint}.
 * <p>
 * Set on the peer agent's thread, read on the driver's (the same thread when the driver is invoked).
 */
public final class PeerSourceFilter
{
    private volatile Set<InetAddress> admitted;

    /**
     * @param source a datagram's source.
     * @return whether it comes from a member's host (or no member view restricts it).
     */
    boolean admits(final InetSocketAddress source)
    {
        final Set<InetAddress> hosts = admitted;
        return null == hosts || (null != source && hosts.contains(source.getAddress()));
    }

    /**
     * Hear these members' hosts only, from now on. Slow path: resolves numeric endpoints and allocates.
     *
     * @param peerEndpoints every current member's peer endpoint ({@code HOST:PORT}), this node's included.
     */
    public void admit(final Iterable<String> peerEndpoints)
    {
        final Set<InetAddress> hosts = new HashSet<>();
        for (final String endpoint : peerEndpoints)
        {
            final InetAddress address = hostOf(endpoint);
            if (null == address || address.isAnyLocalAddress())
            {
                admitted = null;
                return;
            }
            hosts.add(address);
        }
        admitted = hosts.isEmpty() ? null : Set.copyOf(hosts);
    }

    /**
     * Hear every host (no member view restricts the socket).
     */
    public void admitAll()
    {
        admitted = null;
    }

    /**
     * @return whether a member view restricts the hosts heard.
     */
    public boolean isRestricted()
    {
        return null != admitted;
    }

    private static InetAddress hostOf(final String endpoint)
    {
        final int colon = null == endpoint ? -1 : endpoint.lastIndexOf(':');
        if (colon <= 0)
        {
            return null;
        }
        String host = endpoint.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]"))
        {
            host = host.substring(1, host.length() - 1);
        }
        try
        {
            return InetAddress.getByName(host);
        }
        catch (final UnknownHostException | SecurityException ex)
        {
            return null;
        }
    }
}
