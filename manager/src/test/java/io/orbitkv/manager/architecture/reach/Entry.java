package io.orbitkv.manager.architecture.reach;

/**
 * Fixture of {@code MainCodeReachabilityTest}: an entry point that uses {@link Used}.
 */
public final class Entry
{
    private Entry()
    {
    }

    public static void main(final String[] args)
    {
        System.out.println(Used.twice(args.length));
    }
}
