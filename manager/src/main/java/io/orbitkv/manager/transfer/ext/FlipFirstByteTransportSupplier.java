package io.orbitkv.manager.transfer.ext;

import io.orbitkv.manager.ManagerContext;
import io.orbitkv.manager.transfer.TransportSupplier;
import io.orbitkv.manager.transfer.Transports;
import io.orbitkv.transport.Transport;
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
    public static final class FlippingTransport extends ForwardingTransport
    {
        private final UnsafeBuffer target = new UnsafeBuffer(0, 0);
        private boolean flipped;

        public FlippingTransport(final Transport transport)
        {
            super(transport);
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
    }
}
