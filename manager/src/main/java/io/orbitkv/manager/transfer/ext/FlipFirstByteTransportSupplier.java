package io.orbitkv.manager.transfer.ext;

import io.orbitkv.manager.ManagerContext;
import io.orbitkv.manager.transfer.TransportSupplier;
import io.orbitkv.manager.transfer.Transports;
import io.orbitkv.transport.Transport;
import io.orbitkv.transport.TransportListener;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * A fault injector in the manner of Aeron's {@code ext/} loss generators: opens the transport the context names and
 * wraps it so that the first range a source exports has one byte flipped (once per transport), after its checksum
 * was sealed and sent in the grant. A requester then reads a block whose CRC32C does not match. Named by
 * {@code -Dorbitkv.manager.transfer.transport.supplier} in a Manager process started by a test or a serving gate;
 * nothing in the product path refers to it (the {@code ext} package holds what is only ever loaded by name).
 */
public final class FlipFirstByteTransportSupplier implements TransportSupplier
{
    public Transport newTransport(final ManagerContext ctx)
    {
        return new FlippingTransport(new Transports().newTransport(ctx));
    }

    /**
     * Every call goes to the wrapped transport; the first export flips the first byte of its first range.
     */
    public static final class FlippingTransport implements Transport
    {
        private final Transport transport;
        private final UnsafeBuffer target = new UnsafeBuffer(0, 0);
        private boolean flipped;

        public FlippingTransport(final Transport transport)
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
            final boolean exported = transport.export(sessionId, token, addresses, lengths, count);
            if (exported && !flipped && count > 0 && lengths[0] > 0)
            {
                flipped = true;
                target.wrap(addresses[0], 1);
                target.putByte(0, (byte)(target.getByte(0) ^ 0x01));
            }
            return exported;
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
}
