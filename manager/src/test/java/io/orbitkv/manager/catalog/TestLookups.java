package io.orbitkv.manager.catalog;

/**
 * Pending lookups for unit tests of the requester side, which answer them with candidates of their own choosing
 * instead of running discovery.
 */
public final class TestLookups
{
    private TestLookups()
    {
    }

    /**
     * @return a pending lookup with pool index {@code index}, to fill with a request and an answer.
     */
    public static PendingLookup newLookup(final int index)
    {
        return new PendingLookup(index);
    }
}
