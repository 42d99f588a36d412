package io.orbitkv.index;

import java.util.Arrays;
import java.util.Random;

import org.junit.jupiter.api.Test;

import static io.orbitkv.index.SlabAllocator.MIN_CLASS_BYTES;
import static io.orbitkv.index.SlabAllocator.NO_SPACE;
import static io.orbitkv.index.SlabAllocator.PAGE_BYTES;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SlabAllocatorTest
{
    private static final int KIB = 1024;
    private static final int MIB = 1024 * 1024;

    @Test
    void shouldBuildGeometricClassesOfFourPerDoublingInMultiplesOf4KiB()
    {
        final SlabAllocator allocator = new SlabAllocator(16L * MIB);
        final int count = allocator.sizeClassCount();

        assertEquals(4 * KIB, allocator.classBytes(0));
        assertEquals(8 * KIB, allocator.classBytes(1));
        assertEquals(12 * KIB, allocator.classBytes(2));
        assertEquals(64 * MIB, allocator.classBytes(count - 1));
        for (int i = 0; i < count; i++)
        {
            assertEquals(0, allocator.classBytes(i) % MIN_CLASS_BYTES, "class " + i);
            if (i > 0)
            {
                assertTrue(allocator.classBytes(i) > allocator.classBytes(i - 1));
            }
        }
        final int sixteenKiB = allocator.sizeClassOf(16 * KIB);
        assertEquals(20 * KIB, allocator.classBytes(sixteenKiB + 1));
        assertEquals(24 * KIB, allocator.classBytes(sixteenKiB + 2));
        assertEquals(28 * KIB, allocator.classBytes(sixteenKiB + 3));
        assertEquals(32 * KIB, allocator.classBytes(sixteenKiB + 4));
        final int oneMiB = allocator.sizeClassOf(MIB);
        assertEquals(MIB + MIB / 4, allocator.classBytes(oneMiB + 1));
    }

    @Test
    void shouldMapLengthToSmallestClassThatHoldsIt()
    {
        final SlabAllocator allocator = new SlabAllocator(16L * MIB, 8 * MIB);

        assertEquals(0, allocator.sizeClassOf(1));
        assertEquals(0, allocator.sizeClassOf(4 * KIB));
        assertEquals(8 * KIB, allocator.classBytes(allocator.sizeClassOf(4 * KIB + 1)));
        assertEquals(160 * KIB, allocator.classBytes(allocator.sizeClassOf(130 * KIB)));
        assertEquals(8 * MIB, allocator.classBytes(allocator.sizeClassOf(8 * MIB)));
        assertEquals(-1, allocator.sizeClassOf(8 * MIB + 1));
        assertEquals(-1, allocator.sizeClassOf(0));
        assertEquals(-1, allocator.sizeClassOf(-5));
    }

    @Test
    void shouldEndClassesAtMaxBlockBytesWhenNotOnTheGeometricLadder()
    {
        final SlabAllocator allocator = new SlabAllocator(16L * MIB, 5000);

        assertEquals(2, allocator.sizeClassCount());
        assertEquals(8 * KIB, allocator.classBytes(allocator.sizeClassOf(5000)));
        assertEquals(-1, allocator.sizeClassOf(5001));
    }

    @Test
    void shouldKeepEveryByteAccountedForUnderRandomMixedAllocationAndFree()
    {
        final long poolBytes = 64L * MIB;
        final SlabAllocator allocator = new SlabAllocator(poolBytes, 8 * MIB);
        final Random random = new Random(42);
        final long[] live = new long[100_000];
        int liveCount = 0;
        int noSpace = 0;

        for (int op = 0; op < 50_000; op++)
        {
            final boolean doAllocate = liveCount == 0 || random.nextInt(100) < 55;
            if (doAllocate)
            {
                final int length = randomLength(random);
                final int sizeClass = allocator.sizeClassOf(length);
                final long offset = allocator.allocate(sizeClass);
                if (NO_SPACE == offset)
                {
                    noSpace++;
                    assertTrue(allocator.freeBytes() < allocator.classBytes(sizeClass) ||
                        !allocator.isSlabClass(sizeClass) || allocator.freePages() == 0);
                }
                else
                {
                    assertEquals(sizeClass, allocator.sizeClassAt(offset));
                    live[liveCount++] = offset;
                }
            }
            else
            {
                final int victim = random.nextInt(liveCount);
                allocator.free(live[victim]);
                live[victim] = live[--liveCount];
            }
            if (op % 1000 == 0)
            {
                allocator.accountingCheck();
                assertNoOverlap(allocator, live, liveCount);
            }
        }

        allocator.accountingCheck();
        assertNoOverlap(allocator, live, liveCount);
        assertEquals(poolBytes, allocator.allocatedBytes() + allocator.freeBytes() + allocator.slackBytes());
        assertTrue(noSpace > 0, "the sequence should have filled the pool at least once");

        for (int i = 0; i < liveCount; i++)
        {
            allocator.free(live[i]);
        }
        allocator.accountingCheck();
        assertEquals(0, allocator.allocatedBytes());
        assertEquals(allocator.pageCount(), allocator.freePages());
        assertEquals(poolBytes, allocator.freeBytes());
    }

    @Test
    void shouldReturnSlabPageToFreePagesOnceItsLastChunkIsFreed()
    {
        final SlabAllocator allocator = new SlabAllocator(4L * PAGE_BYTES);
        final int sizeClass = allocator.sizeClassOf(64 * KIB);
        final int perPage = PAGE_BYTES / (64 * KIB);
        final long[] offsets = new long[perPage + 1];
        for (int i = 0; i < offsets.length; i++)
        {
            offsets[i] = allocator.allocate(sizeClass);
        }
        assertEquals(2, allocator.freePages());

        allocator.free(offsets[perPage]);
        assertEquals(3, allocator.freePages(), "second slab page held one chunk");

        for (int i = 0; i < perPage - 1; i++)
        {
            allocator.free(offsets[i]);
        }
        assertEquals(3, allocator.freePages(), "first page still holds one chunk");
        allocator.free(offsets[perPage - 1]);
        assertEquals(4, allocator.freePages());
        assertEquals(0, allocator.allocatedBytes());
        allocator.accountingCheck();

        final long run = allocator.allocate(allocator.sizeClassOf(8 * MIB));
        assertEquals(0, run, "emptied pages are reusable by a four page run");
    }

    @Test
    void shouldCarveFreshPagesLowestFirstSoAPoolTouchedFromTheLowEndIsUsedFirst()
    {
        // The Manager pre-touches the pool from offset 0 upwards: whatever the class, a page the allocator
        // takes fresh is the lowest free one, so it lies below any page the toucher has not reached.
        final SlabAllocator allocator = new SlabAllocator(16L * PAGE_BYTES);
        final int small = allocator.sizeClassOf(4 * KIB);
        final int medium = allocator.sizeClassOf(512 * KIB);
        final int run = allocator.sizeClassOf(3 * PAGE_BYTES);
        assertEquals(0, allocator.allocate(small));
        assertEquals(PAGE_BYTES, allocator.allocate(medium));
        assertEquals(2L * PAGE_BYTES, allocator.allocate(run));
        final long fifth = allocator.allocate(allocator.sizeClassOf(PAGE_BYTES));
        assertEquals(5L * PAGE_BYTES, fifth);
        assertEquals(6L * PAGE_BYTES, allocator.allocate(allocator.sizeClassOf(PAGE_BYTES)));

        allocator.free(fifth);
        assertEquals(5L * PAGE_BYTES, allocator.allocate(allocator.sizeClassOf(64 * KIB)),
            "a freed page below the frontier is taken before a fresh page above it");
        assertEquals(7L * PAGE_BYTES, allocator.allocate(run));
        allocator.accountingCheck();
    }

    @Test
    void shouldNeedContiguousFreePagesForLargeRuns()
    {
        final SlabAllocator allocator = new SlabAllocator(8L * PAGE_BYTES);
        final int pageClass = allocator.sizeClassOf(PAGE_BYTES);
        final int twoPageClass = allocator.sizeClassOf(2 * PAGE_BYTES);
        final long[] pages = new long[8];
        for (int i = 0; i < pages.length; i++)
        {
            pages[i] = allocator.allocate(pageClass);
            assertEquals((long)i * PAGE_BYTES, pages[i]);
        }
        for (int i = 1; i < pages.length; i += 2)
        {
            allocator.free(pages[i]);
        }
        assertEquals(4, allocator.freePages());

        assertEquals(NO_SPACE, allocator.allocate(twoPageClass), "four free pages, none adjacent");

        allocator.free(pages[2]);
        assertEquals(PAGE_BYTES, allocator.allocate(twoPageClass), "first fit finds pages 1 and 2");
        allocator.accountingCheck();
    }

    @Test
    void shouldCountRunTailAsSlack()
    {
        final SlabAllocator allocator = new SlabAllocator(8L * PAGE_BYTES);
        final int sizeClass = allocator.sizeClassOf(PAGE_BYTES + 1);
        final long offset = allocator.allocate(sizeClass);

        assertEquals(PAGE_BYTES + PAGE_BYTES / 4, allocator.classBytes(sizeClass));
        assertEquals(6, allocator.freePages());
        assertEquals(2L * PAGE_BYTES - allocator.classBytes(sizeClass), allocator.slackBytes());
        allocator.accountingCheck();
        allocator.free(offset);
        assertEquals(0, allocator.slackBytes());
        allocator.accountingCheck();
    }

    @Test
    void shouldRejectDoubleFreeOfChunkAndOfRun()
    {
        final SlabAllocator allocator = new SlabAllocator(8L * PAGE_BYTES);
        final long chunk = allocator.allocate(allocator.sizeClassOf(4 * KIB));
        final long other = allocator.allocate(allocator.sizeClassOf(4 * KIB));
        final long run = allocator.allocate(allocator.sizeClassOf(3 * MIB));

        allocator.free(chunk);
        assertThrows(IllegalStateException.class, () -> allocator.free(chunk));
        allocator.free(run);
        assertThrows(IllegalStateException.class, () -> allocator.free(run));
        allocator.free(other);
        assertThrows(IllegalStateException.class, () -> allocator.free(other), "page already returned");
        allocator.accountingCheck();
        assertEquals(0, allocator.allocatedBytes());
    }

    @Test
    void shouldRejectOffsetsThatAreNotChunkStarts()
    {
        final SlabAllocator allocator = new SlabAllocator(8L * PAGE_BYTES);
        final long chunk = allocator.allocate(allocator.sizeClassOf(12 * KIB));
        final long run = allocator.allocate(allocator.sizeClassOf(3 * MIB));

        assertThrows(IllegalArgumentException.class, () -> allocator.free(chunk + 4 * KIB));
        assertThrows(IllegalArgumentException.class, () -> allocator.free(run + PAGE_BYTES / 2));
        assertThrows(IllegalStateException.class, () -> allocator.free(run + PAGE_BYTES));
        assertThrows(IllegalArgumentException.class, () -> allocator.free(-1));
        assertThrows(IllegalArgumentException.class, () -> allocator.free(8L * PAGE_BYTES));
        allocator.accountingCheck();
    }

    @Test
    void shouldAnswerNoSpaceWhenPoolIsExhaustedAndRecoverAfterFree()
    {
        final SlabAllocator allocator = new SlabAllocator(2L * PAGE_BYTES);
        final int sizeClass = allocator.sizeClassOf(MIB);
        final long a = allocator.allocate(sizeClass);
        allocator.allocate(sizeClass);
        allocator.allocate(sizeClass);
        allocator.allocate(sizeClass);

        assertEquals(NO_SPACE, allocator.allocate(sizeClass));
        assertEquals(NO_SPACE, allocator.allocate(0));
        assertEquals(0, allocator.freeBytes());
        allocator.free(a);
        assertNotEquals(NO_SPACE, allocator.allocate(sizeClass));
    }

    @Test
    void shouldRejectPoolsThatAreNotWholePages()
    {
        assertThrows(IllegalArgumentException.class, () -> new SlabAllocator(PAGE_BYTES + 4096L));
        assertThrows(IllegalArgumentException.class, () -> new SlabAllocator(0));
        assertThrows(IllegalArgumentException.class, () -> new SlabAllocator(PAGE_BYTES, 1024));
    }

    private static int randomLength(final Random random)
    {
        final int kind = random.nextInt(10);
        if (kind < 6)
        {
            return 1 + random.nextInt(64 * KIB);
        }
        if (kind < 9)
        {
            return 1 + random.nextInt(2 * MIB);
        }
        return 1 + random.nextInt(8 * MIB);
    }

    private static void assertNoOverlap(final SlabAllocator allocator, final long[] live, final int liveCount)
    {
        final long[][] spans = new long[liveCount][];
        for (int i = 0; i < liveCount; i++)
        {
            spans[i] = new long[]{live[i], live[i] + allocator.classBytes(allocator.sizeClassAt(live[i]))};
        }
        Arrays.sort(spans, (x, y) -> Long.compare(x[0], y[0]));
        for (int i = 1; i < liveCount; i++)
        {
            assertTrue(spans[i - 1][1] <= spans[i][0], "overlap at " + spans[i][0]);
        }
        if (liveCount > 0)
        {
            assertTrue(spans[liveCount - 1][1] <= allocator.poolBytes());
        }
    }
}
