package io.orbitkv.manager.status;

import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersManager;
import org.agrona.concurrent.status.CountersReader;

/**
 * The allocated {@link SystemCounterDescriptor} counters, indexed by descriptor, for the agents to update. Allocated
 * first in the CnC file, at their fixed ids.
 */
public final class SystemCounters extends CounterSet<SystemCounterDescriptor>
{
    public SystemCounters(final CountersManager countersManager)
    {
        super(countersManager, SystemCounterDescriptor.values());
    }

    /**
     * Counters in a private heap buffer, for tools (e.g. {@code orbitkv members}) that reuse Manager components
     * without a CnC file.
     *
     * @return counters nobody else can read.
     */
    public static SystemCounters inMemory()
    {
        final int valuesLength = 256 * CountersReader.COUNTER_LENGTH;
        return new SystemCounters(new CountersManager(
            new UnsafeBuffer(BufferUtil.allocateDirectAligned(valuesLength * 4, 64)),
            new UnsafeBuffer(BufferUtil.allocateDirectAligned(valuesLength, 64))));
    }
}
