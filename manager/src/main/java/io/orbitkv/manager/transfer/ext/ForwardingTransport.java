package io.orbitkv.manager.transfer.ext;

import io.orbitkv.transport.Transport;
import io.orbitkv.transport.TransportListener;

/**
 * A transport that hands every call to the one it wraps: the base of the fault injectors in this package, each of
 * which overrides only the calls it disturbs.
 */
public class ForwardingTransport implements Transport
{
    protected final Transport transport;

    public ForwardingTransport(final Transport transport)
    {
        this.transport = transport;
    }

    public String name()
    {
        return transport.name();
    }

    public String localEndpoint()
    {
        return transport.localEndpoint();
    }

    public boolean canRevoke()
    {
        return transport.canRevoke();
    }

    public void registerMemory(final long address, final long length)
    {
        transport.registerMemory(address, length);
    }

    public void unregisterMemory(final long address)
    {
        transport.unregisterMemory(address);
    }

    public boolean export(
        final long sessionId, final long token, final long[] addresses, final int[] lengths, final int count)
    {
        return transport.export(sessionId, token, addresses, lengths, count);
    }

    public void revoke(final long sessionId)
    {
        transport.revoke(sessionId);
    }

    public int peer(final CharSequence endpoint)
    {
        return transport.peer(endpoint);
    }

    public void closePeer(final int peer)
    {
        transport.closePeer(peer);
    }

    public boolean submitRead(
        final int peer,
        final long sessionId,
        final long token,
        final long remoteAddress,
        final long localAddress,
        final int length,
        final long requestId)
    {
        return transport.submitRead(peer, sessionId, token, remoteAddress, localAddress, length, requestId);
    }

    public int poll(final TransportListener listener, final int limit)
    {
        return transport.poll(listener, limit);
    }

    public int readsInFlight()
    {
        return transport.readsInFlight();
    }

    public void close()
    {
        transport.close();
    }
}
