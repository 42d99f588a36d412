package io.orbitkv.index;

/**
 * Occupancy of the chunks inside slab pages: one bitmap per page with a bit per chunk, sized for the smallest class
 * ({@link SlabAllocator#PAGE_BYTES} / {@link SlabAllocator#MIN_CLASS_BYTES} bits, 64 bytes per page). A chunk is
 * claimed lowest first within its page.
 * <p>
 * Single threaded and allocation free after construction.
 */
final class SlabChunkBits
{
    static final int MAX_CHUNKS_PER_PAGE = SlabAllocator.PAGE_BYTES / SlabAllocator.MIN_CLASS_BYTES;
    static final int WORDS_PER_PAGE = MAX_CHUNKS_PER_PAGE / Long.SIZE;

    private final long[] bits;

    SlabChunkBits(final int pageCount)
    {
        bits = new long[pageCount * WORDS_PER_PAGE];
    }

    /**
     * Mark every chunk of a page free, when it becomes a slab.
     *
     * @param page the page.
     */
    void clear(final int page)
    {
        final int base = page * WORDS_PER_PAGE;
        for (int i = 0; i < WORDS_PER_PAGE; i++)
        {
            bits[base + i] = 0;
        }
    }

    /**
     * Claim the lowest free chunk of a page that has one.
     *
     * @param page    a slab page with a free chunk.
     * @param perPage chunks of the page's class per page.
     * @return the chunk's slot in the page.
     */
    int claim(final int page, final int perPage)
    {
        final int base = page * WORDS_PER_PAGE;
        final int words = (perPage + Long.SIZE - 1) >>> 6;
        for (int i = 0; i < words; i++)
        {
            final long value = bits[base + i];
            if (value != -1L)
            {
                final int slot = (i << 6) + Long.numberOfTrailingZeros(~value);
                if (slot < perPage)
                {
                    bits[base + i] = value | (1L << slot);
                    return slot;
                }
            }
        }
        throw new IllegalStateException("partial page " + page + " has no free chunk");
    }

    /**
     * Claim one given chunk, e.g. to rebuild the allocation of a recovered tier.
     *
     * @param page a slab page.
     * @param slot the chunk's slot in the page.
     * @return false when the chunk was already allocated.
     */
    boolean claimSlot(final int page, final int slot)
    {
        final int word = page * WORDS_PER_PAGE + (slot >>> 6);
        final long mask = 1L << slot;
        if ((bits[word] & mask) != 0)
        {
            return false;
        }
        bits[word] |= mask;
        return true;
    }

    /**
     * Clear a chunk's bit.
     *
     * @return false when the chunk was not allocated.
     */
    boolean release(final int page, final int slot)
    {
        final int word = page * WORDS_PER_PAGE + (slot >>> 6);
        final long mask = 1L << slot;
        if ((bits[word] & mask) == 0)
        {
            return false;
        }
        bits[word] &= ~mask;
        return true;
    }

    boolean isAllocated(final int page, final int slot)
    {
        return (bits[page * WORDS_PER_PAGE + (slot >>> 6)] & (1L << slot)) != 0;
    }

    int count(final int page)
    {
        final int base = page * WORDS_PER_PAGE;
        int count = 0;
        for (int i = 0; i < WORDS_PER_PAGE; i++)
        {
            count += Long.bitCount(bits[base + i]);
        }
        return count;
    }
}
