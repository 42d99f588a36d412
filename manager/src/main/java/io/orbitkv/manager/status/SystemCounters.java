package io.orbitkv.manager.status;

import org.agrona.CloseHelper;
import org.agrona.concurrent.status.AtomicCounter;
import org.agrona.concurrent.status.CountersManager;

/**
 * The allocated {@link SystemCounterDescriptor} counters, indexed by descriptor, for the agents to update.
 */
public final class SystemCounters implements AutoCloseable
{
    /** Label of a counter that holds an id kept for a system counter not defined yet. */
    static final String RESERVED_LABEL = "Reserved system counter id";

    private final AtomicCounter[] counters;

    public SystemCounters(final CountersManager countersManager)
    {
        final SystemCounterDescriptor[] descriptors = SystemCounterDescriptor.values();
        counters = new AtomicCounter[descriptors.length];
        int nextId = 0;
        for (final SystemCounterDescriptor descriptor : descriptors)
        {
            // Ids no descriptor names yet (left for descriptors added later) are held by reserved counters, which
            // stay allocated: freed, their ids would go to other counters and the next system counter would move.
            for (; nextId < descriptor.id(); nextId++)
            {
                countersManager.allocate(
                    RESERVED_LABEL + " " + nextId, SystemCounterDescriptor.RESERVED_COUNTER_TYPE_ID);
            }
            nextId = descriptor.id() + 1;
            final AtomicCounter counter = descriptor.newCounter(countersManager);
            if (counter.id() != descriptor.id())
            {
                // Readers key on the id: system counters must be allocated first, in id order.
                throw new IllegalStateException("counter " + descriptor + " allocated as id " + counter.id());
            }
            counters[descriptor.ordinal()] = counter;
        }
    }

    /**
     * Counters in a private heap buffer, for tools (e.g. {@code orbitkv members}) that reuse Manager components
     * without a CnC file.
     *
     * @return counters nobody else can read.
     */
    public static SystemCounters inMemory()
    {
        final int valuesLength = 256 * org.agrona.concurrent.status.CountersReader.COUNTER_LENGTH;
        return new SystemCounters(new CountersManager(
            new org.agrona.concurrent.UnsafeBuffer(org.agrona.BufferUtil.allocateDirectAligned(valuesLength * 4, 64)),
            new org.agrona.concurrent.UnsafeBuffer(org.agrona.BufferUtil.allocateDirectAligned(valuesLength, 64))));
    }

    /**
     * The counter of a descriptor.
     *
     * @param descriptor which one.
     * @return its counter.
     */
    public AtomicCounter get(final SystemCounterDescriptor descriptor)
    {
        return counters[descriptor.ordinal()];
    }

    public void close()
    {
        CloseHelper.closeAll(counters);
    }
}
