package io.orbitkv.index;

/**
 * Offset accounting for the DRAM block pool. The allocator never touches pool memory: it hands out offsets that the
 * Manager resolves against its own mapping.
 * <p>
 * The pool is cut into {@link #PAGE_BYTES} pages. Size classes grow geometrically from {@link #MIN_CLASS_BYTES} with
 * {@link #CLASSES_PER_DOUBLING} steps per doubling, each rounded up to a multiple of {@link #MIN_CLASS_BYTES}, and
 * end at {@code maxBlockBytes}. A class no larger than a page is served from slab pages that hold chunks of that one
 * class; a larger class takes a run of contiguous free pages, found first fit from the low end so that slabs and runs
 * crowd the bottom of the pool and leave long runs free at the top. The same order lets the Manager pre-touch the pool
 * from its low end while it serves: fresh pages come from the bottom, which the toucher reaches first, and preferring
 * touched memory needs no extra rule, since every free page below the toucher's frontier is lower than any above it.
 * <p>
 * Free chunks of a slab class are tracked as a list of partially free pages plus a per-page occupancy bitmap: a list
 * threaded through every 4 KiB chunk would need heap metadata proportional to the chunk count, the bitmap costs 64
 * bytes per page. An emptied slab page goes straight back to the free pages so that other classes and runs can use it.
 * <p>
 * Single threaded and allocation free after construction.
 */
public final class SlabAllocator
{
    /**
     * Size of a pool page: the unit of slabs and of runs for large classes.
     */
    public static final int PAGE_BYTES = 2 * 1024 * 1024;

    /**
     * Smallest size class and the granule every class is a multiple of.
     */
    public static final int MIN_CLASS_BYTES = 4 * 1024;

    /**
     * Number of size classes per doubling of size.
     */
    public static final int CLASSES_PER_DOUBLING = 4;

    /**
     * Default largest block the pool accepts.
     */
    public static final int DEFAULT_MAX_BLOCK_BYTES = 64 * 1024 * 1024;

    /**
     * Largest supported value for {@code maxBlockBytes}.
     */
    public static final int MAX_MAX_BLOCK_BYTES = 1024 * 1024 * 1024;

    /**
     * Returned by {@link #allocate(int)} when no space of the class is left.
     */
    public static final long NO_SPACE = -1;

    private static final int BITMAP_WORDS_PER_PAGE = SlabChunkBits.WORDS_PER_PAGE;
    private static final int PAGE_FREE = -1;
    private static final int PAGE_RUN_TAIL = -2;
    private static final int NO_PAGE = -1;

    private final long poolBytes;
    private final int pageCount;
    private final int maxBlockBytes;
    private final int[] classBytes;
    private final int[] classChunksPerPage;
    private final int[] classPagesPerRun;
    private final int[] partialPageHead;

    private final int[] pageClass;
    private final int[] pageFreeChunks;
    private final int[] pagePrev;
    private final int[] pageNext;
    private final SlabChunkBits chunkBits;
    private final FreePageMap freePageMap;

    private long allocatedBytes;
    private long freeChunkBytes;
    private long slackBytes;
    private long liveChunks;

    /**
     * Allocator with the {@link #DEFAULT_MAX_BLOCK_BYTES} largest class.
     *
     * @param poolBytes size of the pool, a positive multiple of {@link #PAGE_BYTES}.
     */
    public SlabAllocator(final long poolBytes)
    {
        this(poolBytes, DEFAULT_MAX_BLOCK_BYTES);
    }

    /**
     * @param poolBytes     size of the pool, a positive multiple of {@link #PAGE_BYTES}.
     * @param maxBlockBytes largest block length accepted, from {@link #MIN_CLASS_BYTES} to {@link #MAX_MAX_BLOCK_BYTES}.
     */
    public SlabAllocator(final long poolBytes, final int maxBlockBytes)
    {
        if (poolBytes <= 0 || poolBytes % PAGE_BYTES != 0)
        {
            throw new IllegalArgumentException("poolBytes must be a positive multiple of " + PAGE_BYTES + ": " + poolBytes);
        }
        if (maxBlockBytes < MIN_CLASS_BYTES || maxBlockBytes > MAX_MAX_BLOCK_BYTES)
        {
            throw new IllegalArgumentException(
                "maxBlockBytes must be in [" + MIN_CLASS_BYTES + ", " + MAX_MAX_BLOCK_BYTES + "]: " + maxBlockBytes);
        }
        final long pages = poolBytes / PAGE_BYTES;
        if (pages > Integer.MAX_VALUE / BITMAP_WORDS_PER_PAGE)
        {
            throw new IllegalArgumentException("poolBytes too large: " + poolBytes);
        }

        this.poolBytes = poolBytes;
        this.pageCount = (int)pages;
        this.maxBlockBytes = maxBlockBytes;
        this.classBytes = buildClasses(maxBlockBytes);

        final int classCount = classBytes.length;
        classChunksPerPage = new int[classCount];
        classPagesPerRun = new int[classCount];
        partialPageHead = new int[classCount];
        for (int i = 0; i < classCount; i++)
        {
            final int bytes = classBytes[i];
            if (bytes <= PAGE_BYTES)
            {
                classChunksPerPage[i] = PAGE_BYTES / bytes;
                classPagesPerRun[i] = 0;
            }
            else
            {
                classChunksPerPage[i] = 0;
                classPagesPerRun[i] = (int)((bytes + (long)PAGE_BYTES - 1) / PAGE_BYTES);
            }
            partialPageHead[i] = NO_PAGE;
        }

        pageClass = new int[pageCount];
        pageFreeChunks = new int[pageCount];
        pagePrev = new int[pageCount];
        pageNext = new int[pageCount];
        chunkBits = new SlabChunkBits(pageCount);
        freePageMap = new FreePageMap(pageCount);
        for (int page = 0; page < pageCount; page++)
        {
            pageClass[page] = PAGE_FREE;
            pagePrev[page] = NO_PAGE;
            pageNext[page] = NO_PAGE;
        }
    }

    private static int[] buildClasses(final int maxBlockBytes)
    {
        final int[] scratch = new int[Long.SIZE * CLASSES_PER_DOUBLING];
        int count = 0;
        int last = 0;
        outer:
        for (long base = MIN_CLASS_BYTES; ; base <<= 1)
        {
            for (int step = 0; step < CLASSES_PER_DOUBLING; step++)
            {
                final long size = roundUpToGranule(base + (base * step) / CLASSES_PER_DOUBLING);
                if (size >= maxBlockBytes)
                {
                    final int top = (int)roundUpToGranule(maxBlockBytes);
                    if (top > last)
                    {
                        scratch[count++] = top;
                    }
                    break outer;
                }
                if (size > last)
                {
                    last = (int)size;
                    scratch[count++] = last;
                }
            }
        }
        final int[] classes = new int[count];
        System.arraycopy(scratch, 0, classes, 0, count);
        return classes;
    }

    private static long roundUpToGranule(final long bytes)
    {
        return (bytes + MIN_CLASS_BYTES - 1) & ~((long)MIN_CLASS_BYTES - 1);
    }

    /**
     * @param length block length in bytes.
     * @return the smallest class holding {@code length}, or -1 if {@code length <= 0} or above {@code maxBlockBytes}.
     */
    public int sizeClassOf(final int length)
    {
        if (length <= 0 || length > maxBlockBytes)
        {
            return -1;
        }
        int low = 0;
        int high = classBytes.length - 1;
        while (low < high)
        {
            final int mid = (low + high) >>> 1;
            if (classBytes[mid] >= length)
            {
                high = mid;
            }
            else
            {
                low = mid + 1;
            }
        }
        return low;
    }

    /**
     * @param sizeClass a class from {@link #sizeClassOf(int)}.
     * @return bytes reserved by one chunk of the class.
     */
    public int classBytes(final int sizeClass)
    {
        return classBytes[sizeClass];
    }

    /**
     * @return number of size classes.
     */
    public int sizeClassCount()
    {
        return classBytes.length;
    }

    /**
     * @param sizeClass a class from {@link #sizeClassOf(int)}.
     * @return true if the class is carved from slab pages, false if it takes runs of whole pages.
     */
    public boolean isSlabClass(final int sizeClass)
    {
        return classChunksPerPage[sizeClass] != 0;
    }

    /**
     * Allocate one chunk of a class: a free chunk of the class first, then a fresh slab page or a run of free pages.
     *
     * @param sizeClass a class from {@link #sizeClassOf(int)}.
     * @return offset of the chunk in the pool, or {@link #NO_SPACE}.
     */
    public long allocate(final int sizeClass)
    {
        if (sizeClass < 0 || sizeClass >= classBytes.length)
        {
            throw new IllegalArgumentException("unknown size class: " + sizeClass);
        }
        return classChunksPerPage[sizeClass] != 0 ? allocateChunk(sizeClass) : allocateRun(sizeClass);
    }

    /**
     * Allocate the chunk of a class that starts at a given offset, e.g. to rebuild the allocation of a tier whose
     * extents were recorded (the SSD tier after a restart). The chunk must lie where {@link #allocate(int)} could
     * have put it: in a free page or a slab page of the same class at a chunk boundary, or, for a large class, at
     * the start of a run of free pages.
     *
     * @param sizeClass a class from {@link #sizeClassOf(int)}.
     * @param offset    where the chunk starts.
     * @return true when claimed; false, changing nothing, when the offset is not a possible chunk of the class or
     * any of its bytes is already allocated.
     */
    public boolean allocateAt(final int sizeClass, final long offset)
    {
        if (sizeClass < 0 || sizeClass >= classBytes.length || offset < 0 || offset >= poolBytes)
        {
            return false;
        }
        final int page = (int)(offset / PAGE_BYTES);
        final int offsetInPage = (int)(offset - (long)page * PAGE_BYTES);
        final int bytes = classBytes[sizeClass];
        final int perPage = classChunksPerPage[sizeClass];
        if (0 == perPage)
        {
            final int runPages = classPagesPerRun[sizeClass];
            if (0 != offsetInPage || page + runPages > pageCount || !freePageMap.takePages(page, runPages))
            {
                return false;
            }
            for (int i = 0; i < runPages; i++)
            {
                pageClass[page + i] = PAGE_RUN_TAIL;
            }
            pageClass[page] = sizeClass;
            allocatedBytes += bytes;
            slackBytes += (long)runPages * PAGE_BYTES - bytes;
            liveChunks++;
            return true;
        }
        final int slot = offsetInPage / bytes;
        if (offsetInPage % bytes != 0 || slot >= perPage)
        {
            return false;
        }
        if (PAGE_FREE == pageClass[page])
        {
            if (!freePageMap.takePages(page, 1))
            {
                return false;
            }
            startSlab(page, sizeClass);
            chunkBits.claimSlot(page, slot);
        }
        else if (pageClass[page] != sizeClass || !chunkBits.claimSlot(page, slot))
        {
            return false;
        }
        if (--pageFreeChunks[page] == 0)
        {
            unlinkPartial(page, sizeClass);
        }
        allocatedBytes += bytes;
        freeChunkBytes -= bytes;
        liveChunks++;
        return true;
    }

    /**
     * Return a chunk obtained from {@link #allocate(int)}. The class comes from the page metadata.
     *
     * @param offset offset returned by {@link #allocate(int)}.
     * @throws IllegalStateException    if the chunk is not allocated (double free).
     * @throws IllegalArgumentException if the offset is not the start of a chunk.
     */
    public void free(final long offset)
    {
        if (offset < 0 || offset >= poolBytes)
        {
            throw new IllegalArgumentException("offset outside the pool: " + offset);
        }
        final int page = (int)(offset / PAGE_BYTES);
        final int sizeClass = pageClass[page];
        if (sizeClass < 0)
        {
            throw new IllegalStateException("offset is not allocated (double free?): " + offset);
        }
        final int offsetInPage = (int)(offset - (long)page * PAGE_BYTES);
        if (classChunksPerPage[sizeClass] != 0)
        {
            freeChunk(page, sizeClass, offsetInPage, offset);
        }
        else
        {
            if (offsetInPage != 0)
            {
                throw new IllegalArgumentException("offset is inside a run, not at its start: " + offset);
            }
            freeRun(page, sizeClass);
        }
    }

    /**
     * @param offset an offset inside the pool.
     * @return class of the allocated chunk starting at {@code offset}, or -1 if none starts there.
     */
    public int sizeClassAt(final long offset)
    {
        if (offset < 0 || offset >= poolBytes)
        {
            return -1;
        }
        final int page = (int)(offset / PAGE_BYTES);
        final int sizeClass = pageClass[page];
        if (sizeClass < 0)
        {
            return -1;
        }
        final int offsetInPage = (int)(offset - (long)page * PAGE_BYTES);
        if (classChunksPerPage[sizeClass] == 0)
        {
            return offsetInPage == 0 ? sizeClass : -1;
        }
        final int bytes = classBytes[sizeClass];
        final int slot = offsetInPage / bytes;
        if (offsetInPage % bytes != 0 || slot >= classChunksPerPage[sizeClass] || !chunkBits.isAllocated(page, slot))
        {
            return -1;
        }
        return sizeClass;
    }

    /**
     * @return size of the pool.
     */
    public long poolBytes()
    {
        return poolBytes;
    }

    /**
     * @return number of pages in the pool.
     */
    public int pageCount()
    {
        return pageCount;
    }

    /**
     * @return largest block length accepted.
     */
    public int maxBlockBytes()
    {
        return maxBlockBytes;
    }

    /**
     * @return sum of the class sizes of live chunks.
     */
    public long allocatedBytes()
    {
        return allocatedBytes;
    }

    /**
     * @return bytes that can still be handed out: free pages plus free chunks inside slab pages.
     */
    public long freeBytes()
    {
        return (long)freePageMap.freePages() * PAGE_BYTES + freeChunkBytes;
    }

    /**
     * @return bytes lost at the tail of slab pages and runs, where a whole chunk does not fit.
     */
    public long slackBytes()
    {
        return slackBytes;
    }

    /**
     * @return number of pages that are neither a slab nor part of a run.
     */
    public int freePages()
    {
        return freePageMap.freePages();
    }

    /**
     * @return number of live chunks and runs.
     */
    public long liveChunks()
    {
        return liveChunks;
    }

    /**
     * Recompute the accounting from page metadata and check that every byte of the pool is exactly one of: an
     * allocated chunk, a free chunk inside a slab, slack at the tail of a slab page or run, or a free page; and that the
     * running gauges agree with the recount. Walks every page: a diagnostic, not for the data path.
     *
     * @throws IllegalStateException describing the first discrepancy.
     */
    public void accountingCheck()
    {
        long allocated = 0;
        long freeChunks = 0;
        long slack = 0;
        long free = 0;
        long chunks = 0;
        int page = 0;
        while (page < pageCount)
        {
            final int sizeClass = pageClass[page];
            final boolean freeBit = freePageMap.isFree(page);
            if (sizeClass == PAGE_FREE)
            {
                if (!freeBit)
                {
                    throw new IllegalStateException("free page " + page + " missing from the free page bitmap");
                }
                free += PAGE_BYTES;
                page++;
            }
            else if (sizeClass == PAGE_RUN_TAIL)
            {
                throw new IllegalStateException("run tail page " + page + " without a run head");
            }
            else
            {
                if (freeBit)
                {
                    throw new IllegalStateException("used page " + page + " marked free in the bitmap");
                }
                final int bytes = classBytes[sizeClass];
                final int perPage = classChunksPerPage[sizeClass];
                if (perPage != 0)
                {
                    final int used = chunkBits.count(page);
                    if (used != perPage - pageFreeChunks[page] || used == 0)
                    {
                        throw new IllegalStateException("slab page " + page + " counts " + pageFreeChunks[page] +
                            " free chunks but its bitmap holds " + used + " used of " + perPage);
                    }
                    allocated += (long)used * bytes;
                    freeChunks += (long)(perPage - used) * bytes;
                    slack += PAGE_BYTES - (long)perPage * bytes;
                    chunks += used;
                    page++;
                }
                else
                {
                    final int runPages = classPagesPerRun[sizeClass];
                    for (int i = 1; i < runPages; i++)
                    {
                        if (page + i >= pageCount || pageClass[page + i] != PAGE_RUN_TAIL)
                        {
                            throw new IllegalStateException("run at page " + page + " is not contiguous");
                        }
                    }
                    allocated += bytes;
                    slack += (long)runPages * PAGE_BYTES - bytes;
                    chunks++;
                    page += runPages;
                }
            }
        }

        final long total = allocated + freeChunks + slack + free;
        if (total != poolBytes)
        {
            throw new IllegalStateException("accounted " + total + " bytes of a " + poolBytes + " byte pool");
        }
        if (allocated != allocatedBytes || freeChunks != freeChunkBytes || slack != slackBytes ||
            free != (long)freePageMap.freePages() * PAGE_BYTES || chunks != liveChunks)
        {
            throw new IllegalStateException("gauges disagree with the recount: allocated " + allocatedBytes + "/" + allocated +
                " freeChunks " + freeChunkBytes + "/" + freeChunks + " slack " + slackBytes + "/" + slack +
                " freePages " + freePageMap.freePages() + "/" + (free / PAGE_BYTES) + " chunks " + liveChunks + "/" + chunks);
        }
    }

    private long allocateChunk(final int sizeClass)
    {
        int page = partialPageHead[sizeClass];
        if (NO_PAGE == page)
        {
            page = freePageMap.take();
            if (NO_PAGE == page)
            {
                return NO_SPACE;
            }
            startSlab(page, sizeClass);
        }

        final int slot = chunkBits.claim(page, classChunksPerPage[sizeClass]);
        final int bytes = classBytes[sizeClass];
        if (--pageFreeChunks[page] == 0)
        {
            unlinkPartial(page, sizeClass);
        }
        allocatedBytes += bytes;
        freeChunkBytes -= bytes;
        liveChunks++;

        return (long)page * PAGE_BYTES + (long)slot * bytes;
    }

    private void freeChunk(final int page, final int sizeClass, final int offsetInPage, final long offset)
    {
        final int bytes = classBytes[sizeClass];
        final int perPage = classChunksPerPage[sizeClass];
        final int slot = offsetInPage / bytes;
        if (offsetInPage % bytes != 0 || slot >= perPage)
        {
            throw new IllegalArgumentException("offset is not the start of a chunk: " + offset);
        }
        if (!chunkBits.release(page, slot))
        {
            throw new IllegalStateException("chunk already free (double free): " + offset);
        }
        allocatedBytes -= bytes;
        freeChunkBytes += bytes;
        liveChunks--;

        final int free = ++pageFreeChunks[page];
        if (free == perPage)
        {
            // design: an emptied slab page returns to the free pages so other classes and runs can reuse it.
            unlinkPartial(page, sizeClass);
            freeChunkBytes -= (long)perPage * bytes;
            slackBytes -= PAGE_BYTES - (long)perPage * bytes;
            releasePage(page);
        }
        else if (free == 1)
        {
            linkPartial(page, sizeClass);
        }
    }

    private long allocateRun(final int sizeClass)
    {
        final int runPages = classPagesPerRun[sizeClass];
        final int first = freePageMap.takeRun(runPages);
        if (FreePageMap.NO_PAGE == first)
        {
            return NO_SPACE;
        }
        for (int i = 0; i < runPages; i++)
        {
            pageClass[first + i] = PAGE_RUN_TAIL;
        }
        pageClass[first] = sizeClass;
        final int bytes = classBytes[sizeClass];
        allocatedBytes += bytes;
        slackBytes += (long)runPages * PAGE_BYTES - bytes;
        liveChunks++;

        return (long)first * PAGE_BYTES;
    }

    private void freeRun(final int first, final int sizeClass)
    {
        final int runPages = classPagesPerRun[sizeClass];
        final int bytes = classBytes[sizeClass];
        allocatedBytes -= bytes;
        slackBytes -= (long)runPages * PAGE_BYTES - bytes;
        liveChunks--;
        for (int i = 0; i < runPages; i++)
        {
            releasePage(first + i);
        }
    }

    private void startSlab(final int page, final int sizeClass)
    {
        final int perPage = classChunksPerPage[sizeClass];
        final int bytes = classBytes[sizeClass];
        pageClass[page] = sizeClass;
        pageFreeChunks[page] = perPage;
        chunkBits.clear(page);
        freeChunkBytes += (long)perPage * bytes;
        slackBytes += PAGE_BYTES - (long)perPage * bytes;
        linkPartial(page, sizeClass);
    }

    private void releasePage(final int page)
    {
        pageClass[page] = PAGE_FREE;
        freePageMap.release(page);
    }

    private void linkPartial(final int page, final int sizeClass)
    {
        final int head = partialPageHead[sizeClass];
        pagePrev[page] = NO_PAGE;
        pageNext[page] = head;
        if (NO_PAGE != head)
        {
            pagePrev[head] = page;
        }
        partialPageHead[sizeClass] = page;
    }

    private void unlinkPartial(final int page, final int sizeClass)
    {
        final int prev = pagePrev[page];
        final int next = pageNext[page];
        if (NO_PAGE == prev)
        {
            partialPageHead[sizeClass] = next;
        }
        else
        {
            pageNext[prev] = next;
        }
        if (NO_PAGE != next)
        {
            pagePrev[next] = prev;
        }
        pagePrev[page] = NO_PAGE;
        pageNext[page] = NO_PAGE;
    }
}
