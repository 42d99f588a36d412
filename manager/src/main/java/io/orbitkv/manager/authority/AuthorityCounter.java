package io.orbitkv.manager.authority;

import io.orbitkv.manager.status.FixedCounter;

/**
 * The authority log's counters (ids 320-324; 325-329 are the block's others).
 * <p>
 * Each has a fixed id: never renumber or reuse one.
 */
public enum AuthorityCounter implements FixedCounter
{
    RECORDS(320, "Authority log: records written", false),
    OVERWRITTEN(321, "Authority log: records overwritten (a ring wrapped)", false),
    VALIDITY_COALESCED(322, "Authority log: validity extensions not written (coalesced)", false),
    GRANTS(323, "Authority log: grants recorded (source)", false),
    ACCEPTS(324, "Authority log: sessions whose bytes were accepted, recorded (requester)", false);

    private final Spec spec;

    AuthorityCounter(final int id, final String label, final boolean gauge)
    {
        this.spec = new Spec(id, label, gauge);
    }

    public Spec spec()
    {
        return spec;
    }
}
