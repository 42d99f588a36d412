package io.orbitkv.index;

/**
 * The free pages of a {@link SlabAllocator} pool as a bitmap, one bit per page, searched from the low end: a single
 * page is the lowest free one, a run is the first fit of contiguous free pages. A hint remembers the lowest word that
 * may hold a free page so that a pool filled from the bottom is not rescanned from page 0 each time.
 * <p>
 * Single threaded and allocation free after construction.
 */
final class FreePageMap
{
    /** Returned when no page or run is free. */
    static final int NO_PAGE = -1;

    private final long[] bits;
    private int freePages;
    private int lowestFreeWordHint;

    /**
     * @param pageCount pages of the pool, all free at first.
     */
    FreePageMap(final int pageCount)
    {
        bits = new long[(pageCount + Long.SIZE - 1) / Long.SIZE];
        for (int page = 0; page < pageCount; page++)
        {
            bits[page >>> 6] |= 1L << page;
        }
        freePages = pageCount;
    }

    int freePages()
    {
        return freePages;
    }

    boolean isFree(final int page)
    {
        return (bits[page >>> 6] & (1L << page)) != 0;
    }

    /**
     * Take the lowest free page.
     *
     * @return the page, or {@link #NO_PAGE}.
     */
    int take()
    {
        if (0 == freePages)
        {
            return NO_PAGE;
        }
        final long[] bits = this.bits;
        for (int word = lowestFreeWordHint; word < bits.length; word++)
        {
            final long value = bits[word];
            if (value != 0)
            {
                lowestFreeWordHint = word;
                final int page = (word << 6) + Long.numberOfTrailingZeros(value);
                bits[word] = value & (value - 1);
                freePages--;
                return page;
            }
        }
        throw new IllegalStateException("free page count " + freePages + " but the bitmap is empty");
    }

    /**
     * Take the lowest run of {@code runPages} contiguous free pages.
     *
     * @param runPages pages in the run.
     * @return the first page of the run, or {@link #NO_PAGE}.
     */
    int takeRun(final int runPages)
    {
        if (freePages < runPages)
        {
            return NO_PAGE;
        }
        final int first = findRun(runPages);
        if (NO_PAGE == first)
        {
            return NO_PAGE;
        }
        for (int i = 0; i < runPages; i++)
        {
            final int page = first + i;
            bits[page >>> 6] &= ~(1L << page);
        }
        freePages -= runPages;
        return first;
    }

    /**
     * Take given pages, e.g. to rebuild the allocation of a recovered tier.
     *
     * @param first    first page.
     * @param runPages pages from {@code first}.
     * @return false, taking nothing, when one of them is not free.
     */
    boolean takePages(final int first, final int runPages)
    {
        for (int i = 0; i < runPages; i++)
        {
            if (!isFree(first + i))
            {
                return false;
            }
        }
        for (int i = 0; i < runPages; i++)
        {
            final int page = first + i;
            bits[page >>> 6] &= ~(1L << page);
        }
        freePages -= runPages;
        return true;
    }

    /**
     * Give a page back.
     *
     * @param page a page taken earlier.
     */
    void release(final int page)
    {
        final int word = page >>> 6;
        bits[word] |= 1L << page;
        if (word < lowestFreeWordHint)
        {
            lowestFreeWordHint = word;
        }
        freePages++;
    }

    private int findRun(final int runPages)
    {
        final long[] bits = this.bits;
        int runStart = NO_PAGE;
        int runLength = 0;
        for (int word = lowestFreeWordHint; word < bits.length; word++)
        {
            final long value = bits[word];
            if (0 == value)
            {
                runLength = 0;
                continue;
            }
            if (-1L == value)
            {
                if (0 == runLength)
                {
                    runStart = word << 6;
                }
                runLength += Long.SIZE;
                if (runLength >= runPages)
                {
                    return runStart;
                }
                continue;
            }
            for (int bit = 0; bit < Long.SIZE; bit++)
            {
                if ((value & (1L << bit)) != 0)
                {
                    if (0 == runLength)
                    {
                        runStart = (word << 6) + bit;
                    }
                    if (++runLength >= runPages)
                    {
                        return runStart;
                    }
                }
                else
                {
                    runLength = 0;
                }
            }
        }
        return NO_PAGE;
    }
}
