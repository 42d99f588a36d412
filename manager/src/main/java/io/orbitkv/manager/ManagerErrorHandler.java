package io.orbitkv.manager;

import java.io.PrintStream;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.errors.DistinctErrorLog;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * Counts every internal error and records it once in the CnC distinct error log; falls back to stderr when the
 * log is full so that nothing is lost silently.
 */
final class ManagerErrorHandler implements ErrorHandler
{
    private final DistinctErrorLog errorLog;
    private final AtomicCounter errors;
    private final PrintStream fallback;

    ManagerErrorHandler(final DistinctErrorLog errorLog, final AtomicCounter errors, final PrintStream fallback)
    {
        this.errorLog = errorLog;
        this.errors = errors;
        this.fallback = fallback;
    }

    public void onError(final Throwable throwable)
    {
        errors.incrementRelease();
        if (!errorLog.record(throwable))
        {
            fallback.println("orbitkv manager: error log full; error follows");
            throwable.printStackTrace(fallback);
        }
    }
}
