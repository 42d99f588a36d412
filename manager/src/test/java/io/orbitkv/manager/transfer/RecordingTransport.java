package io.orbitkv.manager.transfer;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;

import io.orbitkv.transport.Transport;
import io.orbitkv.transport.TransportListener;

/**
 * A transport that only records what the source asks of it: exported sessions with their ranges, revocations, and
 * (when it can revoke) the onRevoked events {@link #poll} delivers. Stands in for the real transports in the source's
 * unit tests.
 */
public final class RecordingTransport implements Transport
{
    public final Map<Long, long[]> exported = new HashMap<>();
    final Map<Long, Long> tokens = new HashMap<>();
    final ArrayDeque<Long> revoked = new ArrayDeque<>();
    final boolean canRevoke;
    boolean refuseExports;
    int exports;
    public int revokes;

    public RecordingTransport(final boolean canRevoke)
    {
        this.canRevoke = canRevoke;
    }

    public String name()
    {
        return "recording";
    }

    public String localEndpoint()
    {
        return "127.0.0.1:7000";
    }

    public boolean canRevoke()
    {
        return canRevoke;
    }

    public void registerMemory(final long address, final long length)
    {
    }

    public void unregisterMemory(final long address)
    {
    }

    public boolean export(
        final long sessionId, final long token, final long[] addresses, final int[] lengths, final int count)
    {
        if (refuseExports)
        {
            return false;
        }
        final long[] ranges = new long[count * 2];
        for (int i = 0; i < count; i++)
        {
            ranges[2 * i] = addresses[i];
            ranges[2 * i + 1] = lengths[i];
        }
        exported.put(sessionId, ranges);
        tokens.put(sessionId, token);
        exports++;
        return true;
    }

    public void revoke(final long sessionId)
    {
        revokes++;
        exported.remove(sessionId);
        if (canRevoke)
        {
            revoked.add(sessionId);
        }
    }

    public int peer(final CharSequence endpoint)
    {
        return -1;
    }

    public void closePeer(final int peer)
    {
    }

    public boolean submitRead(
        final int peer, final long sessionId, final long token, final long remoteAddress, final long localAddress,
        final int length, final long requestId)
    {
        return false;
    }

    public int poll(final TransportListener listener, final int limit)
    {
        int events = 0;
        while (events < limit && !revoked.isEmpty())
        {
            listener.onRevoked(revoked.poll());
            events++;
        }
        return events;
    }

    public int readsInFlight()
    {
        return 0;
    }

    public void close()
    {
    }
}
