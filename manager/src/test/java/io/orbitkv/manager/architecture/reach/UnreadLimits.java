package io.orbitkv.manager.architecture.reach;

/**
 * Fixture of {@code MainCodeReachabilityTest}: constants only, and no reached source names them.
 */
final class UnreadLimits
{
    static final int FACTOR = 3;

    private UnreadLimits()
    {
    }
}
