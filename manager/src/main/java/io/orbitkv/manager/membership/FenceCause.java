package io.orbitkv.manager.membership;

/**
 * Why a runtime stopped taking remote work until restart. The code is the value of the
 * "Membership: fenced" counter.
 */
public enum FenceCause
{
    NONE(0, "not fenced"),
    REGISTRATION_EXPIRED(1, "registration expired: no keepalive acknowledged within half the TTL"),
    LEASE_LOST(2, "etcd no longer knows the lease"),
    OWN_RECORD_REMOVED(3, "own member record removed"),
    BINDING_CHANGED(4, "own member record rewritten with another epoch, lease or runtime"),
    PLACEMENT_CHANGED(5, "cluster placement changed");

    private final int code;
    private final String description;

    FenceCause(final int code, final String description)
    {
        this.code = code;
        this.description = description;
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
        for (final FenceCause cause : values())
        {
            if (cause.code == code)
            {
                return cause;
            }
        }
        return NONE;
    }
}
