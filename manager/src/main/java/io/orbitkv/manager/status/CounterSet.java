package io.orbitkv.manager.status;

import org.agrona.CloseHelper;
import org.agrona.concurrent.status.AtomicCounter;
import org.agrona.concurrent.status.CountersManager;

/**
 * The counters of one family of {@link CounterDescriptor}s, allocated in declaration order and indexed by descriptor:
 * the one path by which the Manager registers counters. A descriptor with a fixed id is allocated at that id with the
 * id as its key; fixed ids ascend in declaration order and an id skipped between two descriptors is held by a
 * reserved counter, so every later id stays put (a family with fixed ids is therefore allocated first, from id 0).
 * Any other descriptor takes the next id, without a key.
 *
 * @param <E> the family's enum.
 */
public abstract class CounterSet<E extends Enum<E> & CounterDescriptor> implements AutoCloseable
{
    /** Type id of the placeholders holding fixed ids no descriptor uses (yet). */
    public static final int RESERVED_COUNTER_TYPE_ID = 1;

    /** Label of a placeholder, followed by the id it holds. */
    static final String RESERVED_LABEL = "Reserved system counter id";

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
        int nextFixedId = 0;
        for (final E descriptor : descriptors)
        {
            final int fixedId = descriptor.fixedId();
            if (CounterDescriptor.NO_FIXED_ID != fixedId)
            {
                // Freed, a placeholder's id would go to another counter and the next fixed id would move: they stay.
                for (; nextFixedId < fixedId; nextFixedId++)
                {
                    countersManager.allocate(RESERVED_LABEL + " " + nextFixedId, RESERVED_COUNTER_TYPE_ID);
                }
                nextFixedId = fixedId + 1;
            }
            final AtomicCounter counter = newCounter(countersManager, descriptor);
            if (CounterDescriptor.NO_FIXED_ID != fixedId && counter.id() != fixedId)
            {
                // Readers key on the id: the fixed ids must be allocated first, in id order.
                throw new IllegalStateException("counter " + descriptor + " allocated as id " + counter.id());
            }
            counters[descriptor.ordinal()] = counter;
        }
    }

    private static AtomicCounter newCounter(final CountersManager countersManager, final CounterDescriptor descriptor)
    {
        final int fixedId = descriptor.fixedId();
        final int counterId = CounterDescriptor.NO_FIXED_ID == fixedId ?
            countersManager.allocate(descriptor.label(), descriptor.typeId()) :
            countersManager.allocate(descriptor.label(), descriptor.typeId(), (keyBuffer) -> keyBuffer.putInt(0, fixedId));
        return new AtomicCounter(countersManager.valuesBuffer(), counterId, countersManager);
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
