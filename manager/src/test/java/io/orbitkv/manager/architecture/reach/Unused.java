package io.orbitkv.manager.architecture.reach;

/**
 * Fixture of {@code MainCodeReachabilityTest}: nothing reachable from an entry point uses it, only {@link Orphan}.
 */
final class Unused
{
    private Unused()
    {
    }

    static int thrice(final int value)
    {
        return UnreadLimits.FACTOR * value;
    }
}
