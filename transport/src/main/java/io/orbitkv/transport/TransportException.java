package io.orbitkv.transport;

/**
 * A transport refused a set-up call (bad endpoint, memory it cannot register, a library that failed to load).
 */
public final class TransportException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    public TransportException(final String message)
    {
        super(message);
    }

    public TransportException(final String message, final Throwable cause)
    {
        super(message, cause);
    }
}
