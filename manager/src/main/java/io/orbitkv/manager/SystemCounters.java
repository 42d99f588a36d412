package io.orbitkv.manager;

import org.agrona.CloseHelper;
import org.agrona.concurrent.status.AtomicCounter;
import org.agrona.concurrent.status.CountersManager;

/**
 * The allocated {@link SystemCounterDescriptor} counters, indexed by descriptor, for the agents to update.
 */
final class SystemCounters implements AutoCloseable
{
    private final AtomicCounter[] counters;

    SystemCounters(final CountersManager countersManager)
    {
        final SystemCounterDescriptor[] descriptors = SystemCounterDescriptor.values();
        counters = new AtomicCounter[descriptors.length];
        for (final SystemCounterDescriptor descriptor : descriptors)
        {
            final AtomicCounter counter = descriptor.newCounter(countersManager);
            if (counter.id() != descriptor.id())
            {
                // Readers key on the id: system counters must be allocated first, in id order.
                throw new IllegalStateException("counter " + descriptor + " allocated as id " + counter.id());
            }
            counters[descriptor.ordinal()] = counter;
        }
    }

    AtomicCounter get(final SystemCounterDescriptor descriptor)
    {
        return counters[descriptor.ordinal()];
    }

    public void close()
    {
        CloseHelper.closeAll(counters);
    }
}
