package io.orbitkv.manager.architecture.reach;

/**
 * Fixture of {@code MainCodeReachabilityTest}: uses {@link Unused} but is itself used by nothing, so both are
 * unreachable although each has a user.
 */
final class Orphan
{
    private Orphan()
    {
    }

    static int sixTimes(final int value)
    {
        return Unused.thrice(Used.twice(value));
    }
}
