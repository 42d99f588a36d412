package io.orbitkv.manager.membership;

/**
 * Why an incarnation stopped taking remote work. The code is the value of the "Membership: fenced" counter.
 *
 * <p>An incarnation, once fenced, never revives (design). What the process does next depends on the cause: when
 * the registration merely lapsed (validity ran out, etcd dropped the lease, the record vanished with it) the node id
 * is still this process's to hold, so it registers a new incarnation as an operator restarting it would; when the
 * evidence says someone else now speaks for the node id, or the cluster's installed placement was deleted (placement
 * changes themselves go through generations and never fence), registering again would be wrong and the process stays
 * fenced until an operator acts.
 */
public enum FenceCause
{
    NONE(0, "not fenced", false),
    REGISTRATION_EXPIRED(1, "registration expired: no keepalive acknowledged within half the TTL", true),
    LEASE_LOST(2, "etcd no longer knows the lease", true),
    OWN_RECORD_REMOVED(3, "own member record removed", true),
    BINDING_CHANGED(4, "own member record rewritten with another epoch, lease or runtime", false),
    PLACEMENT_CHANGED(5, "cluster placement deleted", false),
    NODE_ID_TAKEN(6, "node id registered by another live runtime while re-registering", false);

    /** values() clones its array on every call; this is read on the request path (remote-work checks). */
    private static final FenceCause[] VALUES = values();

    private final int code;
    private final String description;
    private final boolean reRegisters;

    FenceCause(final int code, final String description, final boolean reRegisters)
    {
        this.code = code;
        this.description = description;
        this.reRegisters = reRegisters;
    }

    /**
     * Whether the process registers a new incarnation after this cause (otherwise it stays fenced until restart).
     *
     * @return true for a lapsed registration.
     */
    public boolean reRegisters()
    {
        return reRegisters;
    }

    public int code()
    {
        return code;
    }

    public String description()
    {
        return description;
    }

    /**
     * Cause of a counter value.
     *
     * @param code counter value.
     * @return the cause, NONE for unknown codes.
     */
    public static FenceCause of(final long code)
    {
        for (final FenceCause cause : VALUES)
        {
            if (cause.code == code)
            {
                return cause;
            }
        }
        return NONE;
    }
}
