package io.orbitkv.manager.membership;

/**
 * Where one shard's move between two placement generations stands. Phases only advance, one step at a time, each
 * written by the elected reconciler in an etcd transaction; every Manager derives from the phase which nodes hold the
 * shard and which answer queries for it ({@link PlacementState}).
 */
public enum MovePhase
{
    /** Planned, not started: the old copies hold and answer the shard. */
    PENDING,

    /** The new copies hold the shard and owners stream to old and new copies; queries still go to the old ones. */
    PREPARE,

    /** Every new copy reported complete coverage; the handoff watermarks are recorded. Queries still go to old ones. */
    CAUGHT_UP,

    /** Queries go to the new copies first, then to the old ones; both still receive the owners' streams. */
    SWITCHED,

    /** The copies the target drops no longer hold the shard. */
    RETIRED;

    /**
     * @return whether the new copies hold the shard in this phase.
     */
    public boolean newCopiesHold()
    {
        return this != PENDING;
    }

    /**
     * @return whether the copies the target drops still hold the shard in this phase.
     */
    public boolean oldCopiesHold()
    {
        return this != RETIRED;
    }

    /**
     * @return whether queries go to the new copies first.
     */
    public boolean queriesSwitched()
    {
        return this == SWITCHED || this == RETIRED;
    }
}
