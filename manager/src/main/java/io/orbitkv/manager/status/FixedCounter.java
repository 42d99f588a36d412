package io.orbitkv.manager.status;

/**
 * A system counter: a {@link CounterDescriptor} at a fixed id, of type {@link SystemCounters#SYSTEM_COUNTER_TYPE_ID}.
 * Each part's family is an enum whose constants carry their {@link Spec}; the descriptor methods come from here.
 */
public interface FixedCounter extends CounterDescriptor
{
    /**
     * What a system counter is.
     *
     * @param id    its fixed id, never renumbered.
     * @param label its label, never changed once shipped.
     * @param gauge whether it is a level set on the housekeeping tick rather than a count.
     */
    record Spec(int id, String label, boolean gauge)
    {
    }

    /**
     * @return this counter's id, label and kind.
     */
    Spec spec();

    default int fixedId()
    {
        return spec().id();
    }

    default int typeId()
    {
        return SystemCounters.SYSTEM_COUNTER_TYPE_ID;
    }

    default String label()
    {
        return spec().label();
    }

    default boolean isGauge()
    {
        return spec().gauge();
    }
}
