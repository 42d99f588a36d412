package io.orbitkv.manager.peer;

import org.agrona.CloseHelper;
import org.agrona.concurrent.status.AtomicCounter;
import org.agrona.concurrent.status.CountersManager;

/**
 * The peer transport's counters, allocated from a {@link CountersManager} the caller owns (the Manager will pass the
 * one behind its CnC file), indexed by {@link PeerCounter}.
 */
public final class PeerCounters implements AutoCloseable
{
    private static final PeerCounter[] VALUES = PeerCounter.values();

    private final AtomicCounter[] counters = new AtomicCounter[VALUES.length];

    public PeerCounters(final CountersManager countersManager)
    {
        for (final PeerCounter counter : VALUES)
        {
            counters[counter.ordinal()] = countersManager.newCounter(counter.label(), counter.typeId());
        }
    }

    public AtomicCounter get(final PeerCounter counter)
    {
        return counters[counter.ordinal()];
    }

    public long value(final PeerCounter counter)
    {
        return counters[counter.ordinal()].get();
    }

    void increment(final PeerCounter counter)
    {
        counters[counter.ordinal()].incrementRelease();
    }

    void add(final PeerCounter counter, final long delta)
    {
        counters[counter.ordinal()].getAndAddRelease(delta);
    }

    public void close()
    {
        CloseHelper.closeAll(counters);
    }
}
