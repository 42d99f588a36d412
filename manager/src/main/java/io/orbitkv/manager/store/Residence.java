package io.orbitkv.manager.store;

/**
 * Where one copy of a block lives, packed in a {@code long} so leases and lookups hold it without allocating.
 * Layout:
 * <pre>
 *   bits 63..40  zero
 *   bits 39..32  tier: {@link #TIER_DRAM} or {@link #TIER_SSD}; 0 only in {@link #NONE}
 *   bits 31..0   entry id in that tier's index (non-negative)
 * </pre>
 * Only this class reads or writes the layout.
 */
public final class Residence
{
    /** No residence: the key is in neither tier. */
    public static final long NONE = 0L;
    /** The DRAM pool's index. */
    public static final int TIER_DRAM = 1;
    /** The SSD tier's index. */
    public static final int TIER_SSD = 2;

    private static final int TIER_SHIFT = 32;
    private static final long ENTRY_MASK = 0xFFFF_FFFFL;

    private Residence()
    {
    }

    /**
     * A DRAM residence.
     *
     * @param entryId the DRAM index entry.
     * @return the residence.
     */
    public static long dram(final int entryId)
    {
        return ((long)TIER_DRAM << TIER_SHIFT) | (entryId & ENTRY_MASK);
    }

    /**
     * An SSD residence.
     *
     * @param entryId the SSD index entry.
     * @return the residence.
     */
    public static long ssd(final int entryId)
    {
        return ((long)TIER_SSD << TIER_SHIFT) | (entryId & ENTRY_MASK);
    }

    public static boolean isNone(final long residence)
    {
        return NONE == residence;
    }

    public static boolean isDram(final long residence)
    {
        return TIER_DRAM == tier(residence);
    }

    public static boolean isSsd(final long residence)
    {
        return TIER_SSD == tier(residence);
    }

    public static int tier(final long residence)
    {
        return (int)(residence >>> TIER_SHIFT);
    }

    public static int entryId(final long residence)
    {
        return (int)(residence & ENTRY_MASK);
    }
}
