package io.orbitkv.manager.status;

import org.agrona.CloseHelper;
import org.agrona.concurrent.status.AtomicCounter;
import org.agrona.concurrent.status.CountersManager;

/**
 * The counters of one family of {@link CounterDescriptor}s without fixed ids, allocated after the {@link SystemCounters}
 * in declaration order and indexed by descriptor; each is found again by its own type id.
 *
 * @param <E> the family's enum.
 */
public abstract class CounterSet<E extends Enum<E> & CounterDescriptor> implements AutoCloseable
{
    private final AtomicCounter[] counters;

    /**
     * Allocate every descriptor of the family.
     *
     * @param countersManager where the counters go (the CnC file's).
     * @param descriptors     all constants of the family, in declaration order ({@code values()}).
     */
    protected CounterSet(final CountersManager countersManager, final E[] descriptors)
    {
        counters = new AtomicCounter[descriptors.length];
        for (final E descriptor : descriptors)
        {
            if (CounterDescriptor.NO_FIXED_ID != descriptor.fixedId())
            {
                throw new IllegalArgumentException("fixed ids belong to the system counters: " + descriptor);
            }
            final int counterId = countersManager.allocate(descriptor.label(), descriptor.typeId());
            counters[descriptor.ordinal()] = new AtomicCounter(countersManager.valuesBuffer(), counterId, countersManager);
        }
    }

    /**
     * The counter of a descriptor.
     *
     * @param descriptor which one.
     * @return its counter.
     */
    public final AtomicCounter get(final E descriptor)
    {
        return counters[descriptor.ordinal()];
    }

    /**
     * @param descriptor which one.
     * @return its counter's value.
     */
    public final long value(final E descriptor)
    {
        return counters[descriptor.ordinal()].get();
    }

    /**
     * @param descriptor the counter to increment, with release semantics.
     */
    public final void increment(final E descriptor)
    {
        counters[descriptor.ordinal()].incrementRelease();
    }

    /**
     * @param descriptor the counter to add to, with release semantics.
     * @param delta      the amount.
     */
    public final void add(final E descriptor, final long delta)
    {
        counters[descriptor.ordinal()].getAndAddRelease(delta);
    }

    public final void close()
    {
        CloseHelper.closeAll(counters);
    }
}
