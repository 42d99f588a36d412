package io.orbitkv.manager.status;

import org.agrona.concurrent.status.CountersReader;

/**
 * What a counter in the Manager's CnC file is: its type id, its label, whether it is a gauge and, for the system
 * counters, the fixed id readers key on. Every family of counters is an enum of descriptors owned by its part (the
 * ring's {@code ring.RingCounter}, the store's, the catalog's, transfer's, membership's, the process-wide
 * {@link SystemCounterDescriptor}, all {@link FixedCounter}s; the peer transport's {@code peer.PeerCounter} without
 * fixed ids): adding a counter is one constant in its part's enum. {@link SystemCounters} and {@link CounterSet} are
 * the only paths that allocate.
 * <p>
 * One rule finds a counter again, in the Manager and from another process alike: a descriptor with a fixed id is at
 * that id (and carries it as its key); any other is the counter of its type id, which only it uses.
 */
public interface CounterDescriptor
{
    /** {@link #fixedId()} of a counter allocated at whichever id comes next. */
    int NO_FIXED_ID = -1;

    /**
     * @return the type id in the counters metadata.
     */
    int typeId();

    /**
     * @return the label {@code orbitkv stat} prints and /metrics names the metric after; never changes once shipped.
     */
    String label();

    /**
     * Whether the value is a level (set on the housekeeping tick) rather than a monotonically growing count.
     *
     * @return true for gauges.
     */
    default boolean isGauge()
    {
        return false;
    }

    /**
     * @return the counter id this counter always has, or {@link #NO_FIXED_ID}.
     */
    default int fixedId()
    {
        return NO_FIXED_ID;
    }

    /**
     * Where this counter is in a counters file.
     *
     * @param reader over the file.
     * @return its counter id: the fixed id, else the last counter of its type id, else -1.
     */
    default int counterIdIn(final CountersReader reader)
    {
        final int fixedId = fixedId();
        if (NO_FIXED_ID != fixedId)
        {
            return fixedId;
        }
        final int typeId = typeId();
        final int[] found = {-1};
        reader.forEach((counterId, counterTypeId, keyBuffer, label) ->
        {
            if (counterTypeId == typeId)
            {
                found[0] = counterId;
            }
        });
        return found[0];
    }

    /**
     * This counter's value in a counters file (a reader's look-up: not for the agents, which hold their counters).
     *
     * @param reader over the file.
     * @return its value, 0 if the file has no such counter.
     */
    default long valueIn(final CountersReader reader)
    {
        final int counterId = counterIdIn(reader);
        return counterId < 0 ? 0 : reader.getCounterValue(counterId);
    }
}
