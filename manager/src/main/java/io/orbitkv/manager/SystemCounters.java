package io.orbitkv.manager;

import org.agrona.CloseHelper;
import org.agrona.concurrent.status.AtomicCounter;
import org.agrona.concurrent.status.CountersManager;

/**
 * The allocated {@link SystemCounterDescriptor} counters, indexed by descriptor, for the agents to update.
 */
public final class SystemCounters implements AutoCloseable
{
    private final AtomicCounter[] counters;

    public SystemCounters(final CountersManager countersManager)
    {
        final SystemCounterDescriptor[] descriptors = SystemCounterDescriptor.values();
        counters = new AtomicCounter[descriptors.length];
        final SystemCounterDescriptor[] byId = descriptors.clone();
        java.util.Arrays.sort(byId, java.util.Comparator.comparingInt(SystemCounterDescriptor::id));
        final org.agrona.collections.IntArrayList gaps = new org.agrona.collections.IntArrayList();
        int nextId = 0;
        for (final SystemCounterDescriptor descriptor : byId)
        {
            // An id with no descriptor yet holds a placeholder while the rest are allocated, so that every
            // descriptor lands on its own id; the placeholders are freed afterwards for other counters to reuse.
            for (; nextId < descriptor.id(); nextId++)
            {
                gaps.addInt(countersManager.allocate("unassigned system counter id"));
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
        for (int i = 0; i < gaps.size(); i++)
        {
            countersManager.free(gaps.getInt(i));
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
