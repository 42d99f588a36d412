package io.orbitkv.transport;

/**
 * Outcomes of a transport read, as delivered to {@link TransportListener#onReadComplete}.
 */
public final class TransportStatus
{
    /** Every byte landed. */
    public static final int OK = 0;

    /** The connection failed or the peer went away mid-read; some bytes may have landed and must not be used. */
    public static final int FAILED = 1;

    /** The source refused the read: unknown or revoked session, wrong token, or a range outside the grant. */
    public static final int REJECTED = 2;

    /** The read did not end within the transport's deadline. */
    public static final int TIMEOUT = 3;

    /** The peer handle was closed, or the transport closed, before the read ended. */
    public static final int CLOSED = 4;

    private TransportStatus()
    {
    }

    /**
     * @return a short name for logs and counters.
     */
    public static String name(final int status)
    {
        return switch (status)
        {
            case OK -> "ok";
            case FAILED -> "failed";
            case REJECTED -> "rejected";
            case TIMEOUT -> "timeout";
            case CLOSED -> "closed";
            default -> "unknown(" + status + ")";
        };
    }
}
