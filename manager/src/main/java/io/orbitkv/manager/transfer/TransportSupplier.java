package io.orbitkv.manager.transfer;

import io.orbitkv.manager.ManagerContext;
import io.orbitkv.transport.Transport;

/**
 * Opens the Manager's transfer transport, chosen in the context as Aeron's driver chooses its channel endpoint
 * suppliers: {@link Transports} opens what {@code --transport} names; a supplier that wraps it is how faults are
 * injected (a transport that corrupts a payload, drops a read) without a test hook in the product's path.
 */
@FunctionalInterface
public interface TransportSupplier
{
    /**
     * @param ctx a concluded context: the transport's kind, endpoint and limits.
     * @return an open transport; the caller closes it after the agent that uses it stopped.
     */
    Transport newTransport(ManagerContext ctx);
}
