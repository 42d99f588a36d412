package io.orbitkv.manager.catalog;

/**
 * What a catalog host decided after applying one delta batch: the contiguous sequence to ack and whether to request
 * repair of a gap. Filled by {@link CatalogHandler#onDeltaBatchEnd}; reused, never allocated per batch.
 */
public final class DeltaBatchOutcome
{
    public static final long NO_ACK = -1;

    private long ackSequence = NO_ACK;
    private boolean repair;
    private long repairFrom;
    private long repairTo;

    public DeltaBatchOutcome ack(final long contiguousSequence)
    {
        this.ackSequence = contiguousSequence;
        return this;
    }

    public DeltaBatchOutcome repair(final long fromSequence, final long toSequence)
    {
        this.repair = true;
        this.repairFrom = fromSequence;
        this.repairTo = toSequence;
        return this;
    }

    long ackSequence()
    {
        return ackSequence;
    }

    boolean repairRequested()
    {
        return repair;
    }

    long repairFrom()
    {
        return repairFrom;
    }

    long repairTo()
    {
        return repairTo;
    }

    void reset()
    {
        ackSequence = NO_ACK;
        repair = false;
        repairFrom = 0;
        repairTo = 0;
    }
}
