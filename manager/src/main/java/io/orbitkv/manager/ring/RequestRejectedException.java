package io.orbitkv.manager.ring;


/**
 * Recorded in the distinct error log when the Manager refuses a request. One stackless instance per
 * {@link Rejection} is made at start, so that a flood of bad frames neither allocates nor fills the log: the log
 * keeps one entry per reason with a count and the first/last time seen.
 */
final class RequestRejectedException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    private final transient Rejection rejection;

    RequestRejectedException(final Rejection rejection)
    {
        super(rejection.code() + ": " + rejection.text(), null, false, false);
        this.rejection = rejection;
    }

    Rejection rejection()
    {
        return rejection;
    }
}
