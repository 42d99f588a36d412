package io.orbitkv.manager.status;

import org.agrona.BufferUtil;
import org.agrona.CloseHelper;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.AtomicCounter;
import org.agrona.concurrent.status.CountersManager;
import org.agrona.concurrent.status.CountersReader;

/**
 * The Manager's system counters: every part's family of fixed-id descriptors, allocated first in the CnC file, each at
 * its id with the id as its key, for the agents to update. The families come from the composition root (this package
 * knows none of them); together they must not hold an id twice. An id no family holds is taken by a reserved
 * placeholder, so every later id stays put.
 */
public final class SystemCounters implements AutoCloseable
{
    /** Type id of every system counter in the CnC counters section. */
    public static final int SYSTEM_COUNTER_TYPE_ID = 0;

    /** Type id of the placeholders holding ids no descriptor uses (yet). */
    public static final int RESERVED_COUNTER_TYPE_ID = 1;

    /** Label of a placeholder, followed by the id it holds. */
    public static final String RESERVED_LABEL = "Reserved system counter id";

    private final CounterDescriptor[] descriptorById;
    private final AtomicCounter[] counterById;

    /**
     * Allocate every descriptor of the families, in id order.
     *
     * @param countersManager where the counters go (the CnC file's), with nothing allocated in it yet.
     * @param families        each part's descriptors ({@code values()} of its enum), all with fixed ids.
     */
    public SystemCounters(final CountersManager countersManager, final CounterDescriptor[]... families)
    {
        int maxId = -1;
        for (final CounterDescriptor[] family : families)
        {
            for (final CounterDescriptor descriptor : family)
            {
                if (CounterDescriptor.NO_FIXED_ID == descriptor.fixedId())
                {
                    throw new IllegalArgumentException("system counter without a fixed id: " + descriptor);
                }
                maxId = Math.max(maxId, descriptor.fixedId());
            }
        }

        descriptorById = new CounterDescriptor[maxId + 1];
        for (final CounterDescriptor[] family : families)
        {
            for (final CounterDescriptor descriptor : family)
            {
                final CounterDescriptor other = descriptorById[descriptor.fixedId()];
                if (null != other)
                {
                    throw new IllegalArgumentException(
                        "counter id " + descriptor.fixedId() + " held by " + other + " and " + descriptor);
                }
                descriptorById[descriptor.fixedId()] = descriptor;
            }
        }

        counterById = new AtomicCounter[maxId + 1];
        for (int id = 0; id <= maxId; id++)
        {
            final CounterDescriptor descriptor = descriptorById[id];
            final int counterId;
            if (null == descriptor)
            {
                // Freed, a placeholder's id would go to another counter and the next id would move: it stays.
                counterId = countersManager.allocate(RESERVED_LABEL + " " + id, RESERVED_COUNTER_TYPE_ID);
            }
            else
            {
                final int fixedId = id;
                counterId = countersManager.allocate(
                    descriptor.label(), descriptor.typeId(), (keyBuffer) -> keyBuffer.putInt(0, fixedId));
                counterById[id] = new AtomicCounter(countersManager.valuesBuffer(), counterId, countersManager);
            }
            if (counterId != id)
            {
                // Readers key on the id: the system counters must be the first allocated.
                throw new IllegalStateException("system counter id " + id + " allocated as " + counterId);
            }
        }
    }

    /**
     * Counters in a private heap buffer, for tools (e.g. {@code orbitkv members}) and tests that run Manager parts
     * without a CnC file.
     *
     * @param families each part's descriptors.
     * @return counters nobody else can read.
     */
    public static SystemCounters inMemory(final CounterDescriptor[]... families)
    {
        int maxId = 0;
        for (final CounterDescriptor[] family : families)
        {
            for (final CounterDescriptor descriptor : family)
            {
                maxId = Math.max(maxId, descriptor.fixedId());
            }
        }
        // Every id up to the highest is laid out in place (placeholders included), with room for as many again for the
        // counters parts allocate beside the fixed ones.
        final int valuesLength =
            org.agrona.BitUtil.findNextPositivePowerOfTwo(Math.max(256, 2 * (maxId + 1))) * CountersReader.COUNTER_LENGTH;
        return new SystemCounters(new CountersManager(
            new UnsafeBuffer(BufferUtil.allocateDirectAligned(valuesLength * 4, 64)),
            new UnsafeBuffer(BufferUtil.allocateDirectAligned(valuesLength, 64))), families);
    }

    /**
     * The counter of a descriptor.
     *
     * @param descriptor one of the families'.
     * @return its counter.
     */
    public AtomicCounter get(final CounterDescriptor descriptor)
    {
        return counterById[descriptor.fixedId()];
    }

    /**
     * @param descriptor which one.
     * @return its counter's value.
     */
    public long value(final CounterDescriptor descriptor)
    {
        return counterById[descriptor.fixedId()].get();
    }

    /**
     * @param descriptor the counter to increment, with release semantics.
     */
    public void increment(final CounterDescriptor descriptor)
    {
        counterById[descriptor.fixedId()].incrementRelease();
    }

    /**
     * @param descriptor the counter to add to, with release semantics.
     * @param delta      the amount.
     */
    public void add(final CounterDescriptor descriptor, final long delta)
    {
        counterById[descriptor.fixedId()].getAndAddRelease(delta);
    }

    /**
     * @param counterId a counter id.
     * @return the system counter's descriptor at that id, or null (a placeholder or no system counter).
     */
    public CounterDescriptor descriptor(final int counterId)
    {
        return counterId >= 0 && counterId < descriptorById.length ? descriptorById[counterId] : null;
    }

    public void close()
    {
        CloseHelper.closeAll(counterById);
    }
}
