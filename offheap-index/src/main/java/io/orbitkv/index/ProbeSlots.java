package io.orbitkv.index;

import java.nio.ByteBuffer;
import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The slot table of a {@link BlockIndex}: 8-byte slots, each 0 when empty or a 32-bit hash fragment over the entry id
 * + 1, probed linearly from a home slot picked by multiply-shift range reduction of the fragment (so the slot count
 * need not be a power of two). Removal shifts later members of the cluster back into the hole instead of leaving a
 * tombstone, so a probe always ends at the first empty slot and probe lengths do not degrade under churn.
 * <p>
 * Off-heap, allocated once, aligned to a cache line. Single threaded and allocation free after construction.
 */
final class ProbeSlots
{
    static final int SLOT_BYTES = 8;
    static final int ALIGNMENT = 64;
    private static final byte[] NO_BYTES = new byte[0];

    private final int slotCount;
    private final UnsafeBuffer slots;
    private ByteBuffer memory;

    ProbeSlots(final int slotCount)
    {
        this.slotCount = slotCount;
        memory = ByteBuffer.allocateDirect(slotCount * SLOT_BYTES + ALIGNMENT);
        slots = new UnsafeBuffer(memory, alignedOffset(memory), slotCount * SLOT_BYTES);
    }

    /**
     * @param memory direct memory allocated with {@link #ALIGNMENT} spare bytes.
     * @return offset of its first cache-line aligned byte.
     */
    static int alignedOffset(final ByteBuffer memory)
    {
        return (int)(-BufferUtil.address(memory) & (ALIGNMENT - 1));
    }

    /**
     * @param hashCode slot value of an id: the fragment in the high half, id + 1 in the low half.
     * @param id       entry id.
     * @return the value a slot holding this entry carries.
     */
    static long slotValue(final int hashCode, final int id)
    {
        return ((long)hashCode << 32) | ((id + 1) & 0xFFFF_FFFFL);
    }

    int slotCount()
    {
        return slotCount;
    }

    int home(final int hashCode)
    {
        return (int)(((hashCode & 0xFFFF_FFFFL) * slotCount) >>> 32);
    }

    int next(final int slot)
    {
        final int next = slot + 1;
        return next == slotCount ? 0 : next;
    }

    long get(final int slot)
    {
        return slots.getLong(slot * SLOT_BYTES);
    }

    /**
     * Place an entry in the first empty slot from its home; the caller keeps the load below the slot count.
     */
    void put(final int hashCode, final int id)
    {
        int slot = home(hashCode);
        while (0 != slots.getLong(slot * SLOT_BYTES))
        {
            if (++slot == slotCount)
            {
                slot = 0;
            }
        }
        slots.putLong(slot * SLOT_BYTES, slotValue(hashCode, id));
    }

    /**
     * Take an entry out of the table and close the hole it leaves.
     *
     * @throws IllegalStateException when the entry is not in the table.
     */
    void remove(final int hashCode, final int id)
    {
        final long wanted = slotValue(hashCode, id);
        int slot = home(hashCode);
        while (true)
        {
            final long value = slots.getLong(slot * SLOT_BYTES);
            if (wanted == value)
            {
                break;
            }
            if (0 == value)
            {
                throw new IllegalStateException("entry " + id + " missing from the slot table");
            }
            if (++slot == slotCount)
            {
                slot = 0;
            }
        }
        shiftBack(slot);
    }

    /**
     * Give the memory back now; the table must not be used afterwards. Idempotent.
     */
    void free()
    {
        if (null != memory)
        {
            slots.wrap(NO_BYTES);
            BufferUtil.free(memory);
            memory = null;
        }
    }

    private void shiftBack(final int removedSlot)
    {
        // design: backward-shift deletion keeps every cluster tombstone free, so lookups stop at the first empty slot.
        int hole = removedSlot;
        int slot = removedSlot;
        while (true)
        {
            if (++slot == slotCount)
            {
                slot = 0;
            }
            final long value = slots.getLong(slot * SLOT_BYTES);
            if (0 == value)
            {
                break;
            }
            final int home = home((int)(value >>> 32));
            final boolean homeInGap = hole <= slot ? (home <= hole || home > slot) : (home <= hole && home > slot);
            if (homeInGap)
            {
                slots.putLong(hole * SLOT_BYTES, value);
                hole = slot;
            }
        }
        slots.putLong(hole * SLOT_BYTES, 0);
    }
}
