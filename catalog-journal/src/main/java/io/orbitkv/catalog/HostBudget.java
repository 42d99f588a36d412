package io.orbitkv.catalog;

import io.orbitkv.codecs.CatalogLimits;

/**
 * One catalog host's accounted bytes for index views and retry storage across all the shards it hosts (default
 * {@link CatalogLimits#HOST_BUDGET_BYTES}). Reservations happen before memory is created and never exceed the budget
 * (design: it cannot exceed the budget to make a snapshot appear successful). Single threaded (the peer agent).
 */
public final class HostBudget
{
    private final long budgetBytes;
    private long reservedBytes;
    private long refusals;

    public HostBudget()
    {
        this(CatalogLimits.HOST_BUDGET_BYTES);
    }

    public HostBudget(final long budgetBytes)
    {
        if (budgetBytes <= 0)
        {
            throw new IllegalArgumentException("budget must be positive: " + budgetBytes);
        }
        this.budgetBytes = budgetBytes;
    }

    /**
     * @return true and reserved when {@code bytes} fit; false (counted) otherwise.
     */
    public boolean tryReserve(final long bytes)
    {
        if (bytes < 0 || bytes > budgetBytes - reservedBytes)
        {
            refusals++;
            return false;
        }
        reservedBytes += bytes;
        return true;
    }

    public void release(final long bytes)
    {
        if (bytes < 0 || bytes > reservedBytes)
        {
            throw new IllegalStateException("release of " + bytes + " with " + reservedBytes + " reserved");
        }
        reservedBytes -= bytes;
    }

    public long budgetBytes()
    {
        return budgetBytes;
    }

    public long reservedBytes()
    {
        return reservedBytes;
    }

    public long refusals()
    {
        return refusals;
    }
}
