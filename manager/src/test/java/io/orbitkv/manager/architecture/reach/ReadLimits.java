package io.orbitkv.manager.architecture.reach;

/**
 * Fixture of {@code MainCodeReachabilityTest}: constants only, inlined into {@link Used}, whose source names them.
 */
final class ReadLimits
{
    static final int FACTOR = 2;

    private ReadLimits()
    {
    }
}
