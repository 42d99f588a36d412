package io.orbitkv.client;

import io.orbitkv.codecs.engine.StatusCode;

/**
 * Failure to attach to, or keep talking with, a Manager. Per-request outcomes the Manager answers with (for
 * example {@code OUT_OF_RANGE} or {@code PIN_LIMIT}) are reported in {@link OperationResult} instead; this
 * exception is for conditions after which the caller has to decide what to do with the connection itself.
 */
public final class EngineClientException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    /** Why the client gave up. */
    public enum Reason
    {
        /** No CnC file, or the Manager never finished writing it within the attach timeout. */
        NO_MANAGER,
        /** The CnC file exists but its Manager stopped updating its heartbeat (crashed or stopped). */
        STALE_MANAGER,
        /** The CnC layout version is not the one this client understands. */
        INCOMPATIBLE_LAYOUT,
        /** Every client slot of the CnC file is claimed. */
        NO_FREE_SLOT,
        /** The Manager refused the Attach; see {@link #statusCode()}. */
        ATTACH_REJECTED,
        /** No response within the response timeout, or the request ring stayed full. */
        TIMEOUT,
        /** The Manager's heartbeat went stale while this client was waiting for it. */
        MANAGER_DIED,
        /** The Manager detached this client (liveness timeout) and gave its slot away. */
        DETACHED,
        /** The client was closed, or is unusable after an earlier failure. */
        CLOSED
    }

    private final Reason reason;
    private final StatusCode statusCode;

    EngineClientException(final Reason reason, final String message)
    {
        this(reason, null, message, null);
    }

    EngineClientException(final Reason reason, final StatusCode statusCode, final String message, final Throwable cause)
    {
        super(reason + ": " + message, cause);
        this.reason = reason;
        this.statusCode = statusCode;
    }

    public Reason reason()
    {
        return reason;
    }

    /**
     * The Manager's status code when it answered with a refusal.
     *
     * @return the status code, or null when the Manager did not answer.
     */
    public StatusCode statusCode()
    {
        return statusCode;
    }
}
