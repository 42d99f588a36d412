package io.orbitkv.codecs.cnc;

import org.agrona.concurrent.AtomicBuffer;

/**
 * A flyweight over one client slot of the CnC slot table (layout in {@link CncFileDescriptor}), for both sides of
 * the slot protocol: the engine claims and, if it never attached, frees the slot; the Manager attaches, reclaims
 * and resets it. Each accessor carries the memory ordering that side of the protocol relies on.
 */
public final class ClientSlot
{
    private AtomicBuffer table;
    private int offset;
    private int index;

    /**
     * Point at one slot.
     *
     * @param slotTable the slot table section.
     * @param slotIndex the slot.
     * @return this.
     */
    public ClientSlot wrap(final AtomicBuffer slotTable, final int slotIndex)
    {
        this.table = slotTable;
        this.index = slotIndex;
        this.offset = CncFileDescriptor.Sections.slotOffset(slotIndex);
        return this;
    }

    public int index()
    {
        return index;
    }

    public long claimPidVolatile()
    {
        return table.getLongVolatile(offset + CncFileDescriptor.SLOT_CLAIM_PID_OFFSET);
    }

    public long claimTimeMsVolatile()
    {
        return table.getLongVolatile(offset + CncFileDescriptor.SLOT_CLAIM_TIME_MS_OFFSET);
    }

    public int generation()
    {
        return table.getInt(offset + CncFileDescriptor.SLOT_GENERATION_OFFSET);
    }

    public int stateVolatile()
    {
        return table.getIntVolatile(offset + CncFileDescriptor.SLOT_STATE_OFFSET);
    }

    public long clientIdVolatile()
    {
        return table.getLongVolatile(offset + CncFileDescriptor.SLOT_CLIENT_ID_OFFSET);
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Engine side

    /**
     * Claim the slot if it is free: compare-and-set {@code claimPid} 0 to {@code pid}, then the claim time and
     * {@link CncFileDescriptor#SLOT_CLAIMED}.
     *
     * @param pid   the engine's pid, positive.
     * @param nowMs the engine's epoch time.
     * @return true when this engine now holds the claim.
     */
    public boolean tryClaim(final long pid, final long nowMs)
    {
        if (0 != claimPidVolatile() ||
            !table.compareAndSetLong(offset + CncFileDescriptor.SLOT_CLAIM_PID_OFFSET, 0, pid))
        {
            return false;
        }
        table.putLongRelease(offset + CncFileDescriptor.SLOT_CLAIM_TIME_MS_OFFSET, nowMs);
        table.putIntRelease(offset + CncFileDescriptor.SLOT_STATE_OFFSET, CncFileDescriptor.SLOT_CLAIMED);
        return true;
    }

    /**
     * Give back a claim that never became an attachment (design: an attached slot belongs to the Manager).
     *
     * @param pid the engine's pid.
     */
    public void freeClaim(final long pid)
    {
        if (CncFileDescriptor.SLOT_CLAIMED == stateVolatile() && claimPidVolatile() == pid)
        {
            table.putIntRelease(offset + CncFileDescriptor.SLOT_STATE_OFFSET, CncFileDescriptor.SLOT_FREE);
            table.compareAndSetLong(offset + CncFileDescriptor.SLOT_CLAIM_PID_OFFSET, pid, 0);
        }
    }

    /**
     * Whether the Manager has this slot attached to this client.
     *
     * @param clientId the id the Manager answered the attach with.
     * @return true while attached.
     */
    public boolean isAttachedAs(final long clientId)
    {
        return clientIdVolatile() == clientId && CncFileDescriptor.SLOT_ATTACHED == stateVolatile();
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Manager side

    /**
     * Record an attachment: generation and client id, then {@link CncFileDescriptor#SLOT_ATTACHED} with release.
     *
     * @param generation the slot's new generation.
     * @param clientId   {@code (generation << 32) | slot index}.
     */
    public void attach(final int generation, final long clientId)
    {
        table.putInt(offset + CncFileDescriptor.SLOT_GENERATION_OFFSET, generation);
        table.putLong(offset + CncFileDescriptor.SLOT_CLIENT_ID_OFFSET, clientId);
        table.putIntRelease(offset + CncFileDescriptor.SLOT_STATE_OFFSET, CncFileDescriptor.SLOT_ATTACHED);
    }

    /**
     * Fence a stale claim off from new claimants while the slot is reset.
     *
     * @param pid      the claimant seen.
     * @param fencePid a value no engine claims with.
     * @return true if the claim was still {@code pid}'s and is now fenced.
     */
    public boolean fenceClaim(final long pid, final long fencePid)
    {
        return table.compareAndSetLong(offset + CncFileDescriptor.SLOT_CLAIM_PID_OFFSET, pid, fencePid);
    }

    /**
     * Hand the slot back: client id, claim time and state cleared, {@code claimPid = 0} last with release. The
     * caller has emptied the slot's response ring first.
     */
    public void reset()
    {
        table.putLong(offset + CncFileDescriptor.SLOT_CLIENT_ID_OFFSET, 0L);
        table.putLong(offset + CncFileDescriptor.SLOT_CLAIM_TIME_MS_OFFSET, 0L);
        table.putIntRelease(offset + CncFileDescriptor.SLOT_STATE_OFFSET, CncFileDescriptor.SLOT_FREE);
        table.putLongRelease(offset + CncFileDescriptor.SLOT_CLAIM_PID_OFFSET, 0L);
    }
}
