package io.orbitkv.manager.membership;

import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One registration of this process: runtime UUID, lease, epoch and record, its local validity and its fence latch.
 * A process has a first incarnation at start and a new one after each re-registration; an incarnation, once fenced,
 * stays fenced (design: an expired runtime never revives), which is why the latch lives here and not in
 * {@link Membership}: fencing an old incarnation late (a watch event about its record) cannot touch the new one.
 *
 * <p>Immutable once published, except the fence latch (either membership thread) and the validity (lease keeper).
 */
public final class Incarnation
{
    private final int number;
    private final UUID runtimeUuid;
    private final long leaseId;
    private final long ttlSecs;
    private final RegistrationValidity validity;
    private final MemberRecord record;
    private final long registeredRevision;
    private final AtomicInteger fenceCause = new AtomicInteger(FenceCause.NONE.code());

    Incarnation(
        final int number,
        final UUID runtimeUuid,
        final long leaseId,
        final long ttlSecs,
        final RegistrationValidity validity,
        final MemberRecord record,
        final long registeredRevision)
    {
        this.number = number;
        this.runtimeUuid = runtimeUuid;
        this.leaseId = leaseId;
        this.ttlSecs = ttlSecs;
        this.validity = validity;
        this.record = record;
        this.registeredRevision = registeredRevision;
    }

    /**
     * @return 1 for the process's first registration, then one more per re-registration.
     */
    public int number()
    {
        return number;
    }

    public UUID runtimeUuid()
    {
        return runtimeUuid;
    }

    public long leaseId()
    {
        return leaseId;
    }

    public long ttlSecs()
    {
        return ttlSecs;
    }

    public MemberRecord record()
    {
        return record;
    }

    public long epoch()
    {
        return record.epoch();
    }

    /**
     * etcd revision of the transaction that wrote this incarnation's record (0 if it was found rather than written:
     * an unknown-outcome retry). Watch events about the own key older than this concern an earlier incarnation.
     *
     * @return revision.
     */
    long registeredRevision()
    {
        return registeredRevision;
    }

    /**
     * @return the local validity deadline (Manager's nano clock): remote work under this incarnation ends there.
     */
    public long validUntilNs()
    {
        return validity.validUntilNs();
    }

    RegistrationValidity validity()
    {
        return validity;
    }

    public FenceCause fenceCause()
    {
        return FenceCause.of(fenceCause.get());
    }

    /**
     * Latch a cause (first one wins).
     *
     * @return true if this call fenced the incarnation.
     */
    boolean fence(final FenceCause cause)
    {
        return fenceCause.compareAndSet(FenceCause.NONE.code(), cause.code());
    }

    public String toString()
    {
        return "incarnation " + number + " (runtime " + runtimeUuid + ", epoch " + record.epoch() + ", lease " +
            Long.toHexString(leaseId) + ")";
    }
}
