package io.orbitkv.manager.peer;

/**
 * Recorded in the error log when a peer frame is rejected for its bytes. Preallocated per reason without a stack
 * trace: a flood of bad frames costs a distinct-log lookup, not an allocation each.
 */
public final class PeerFrameException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    public PeerFrameException(final String message)
    {
        super(message, null, false, false);
    }
}
