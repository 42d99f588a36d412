package io.orbitkv.manager.architecture.reach;

/**
 * Fixture of {@code MainCodeReachabilityTest}: reached from {@link Entry}, and in turn the only user of nothing.
 */
final class Used
{
    private Used()
    {
    }

    static int twice(final int value)
    {
        return ReadLimits.FACTOR * value;
    }
}
