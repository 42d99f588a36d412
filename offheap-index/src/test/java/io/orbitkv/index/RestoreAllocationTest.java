package io.orbitkv.index;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Rebuilding an allocation from recorded extents ({@link SlabAllocator#allocateAt}, {@link BlockStore#restore}) gives
 * the same accounting as the allocation it was recorded from, and refuses extents that overlap or cannot exist.
 */
class RestoreAllocationTest
{
    private static final long POOL = 64L * SlabAllocator.PAGE_BYTES;
    private static final int MAX_BLOCK = 8 * 1024 * 1024;

    @Test
    void shouldRebuildTheSameAccountingFromRecordedOffsets()
    {
        final SlabAllocator original = new SlabAllocator(POOL, MAX_BLOCK);
        final Random random = new Random(7);
        final List<long[]> live = new ArrayList<>();
        for (int i = 0; i < 3000; i++)
        {
            final int length = random.nextInt(10) == 0 ? 1 + random.nextInt(MAX_BLOCK) : 1 + random.nextInt(256 * 1024);
            final int sizeClass = original.sizeClassOf(length);
            final long offset = original.allocate(sizeClass);
            if (SlabAllocator.NO_SPACE != offset)
            {
                live.add(new long[]{sizeClass, offset});
            }
            if (!live.isEmpty() && random.nextInt(3) == 0)
            {
                original.free(live.remove(random.nextInt(live.size()))[1]);
            }
        }
        final SlabAllocator rebuilt = new SlabAllocator(POOL, MAX_BLOCK);
        for (final long[] chunk : live)
        {
            assertTrue(rebuilt.allocateAt((int)chunk[0], chunk[1]), "chunk at " + chunk[1]);
        }
        rebuilt.accountingCheck();
        assertEquals(original.allocatedBytes(), rebuilt.allocatedBytes());
        assertEquals(original.freeBytes(), rebuilt.freeBytes());
        assertEquals(original.slackBytes(), rebuilt.slackBytes());
        for (final long[] chunk : live)
        {
            assertFalse(rebuilt.allocateAt((int)chunk[0], chunk[1]), "claimed twice at " + chunk[1]);
            rebuilt.free(chunk[1]);
        }
        rebuilt.accountingCheck();
        assertEquals(POOL, rebuilt.freeBytes());
    }

    @Test
    void shouldRefuseOffsetsNoAllocationCouldHaveMade()
    {
        final SlabAllocator allocator = new SlabAllocator(POOL, MAX_BLOCK);
        final int small = allocator.sizeClassOf(4096);
        final int other = allocator.sizeClassOf(8192);
        final int large = allocator.sizeClassOf(4 * 1024 * 1024);
        assertTrue(allocator.allocateAt(small, 4096));
        assertFalse(allocator.allocateAt(other, 8192), "a page is a slab of one class");
        assertFalse(allocator.allocateAt(large, 0), "a run over a slab page");
        assertFalse(allocator.allocateAt(large, SlabAllocator.PAGE_BYTES + 4096), "a run starts at a page");
        assertFalse(allocator.allocateAt(other, 2L * SlabAllocator.PAGE_BYTES + 4096), "not a chunk boundary");
        assertFalse(allocator.allocateAt(small, POOL), "outside the pool");
        assertFalse(allocator.allocateAt(large, POOL - SlabAllocator.PAGE_BYTES), "a run past the end");
        assertTrue(allocator.allocateAt(large, 4L * SlabAllocator.PAGE_BYTES));
        assertFalse(allocator.allocateAt(small, 5L * SlabAllocator.PAGE_BYTES), "inside a run");
        allocator.accountingCheck();
    }

    @Test
    void shouldRestoreReadyEntriesWithTheirSequencesAndSealAboveThem()
    {
        final BlockStore store = new BlockStore(POOL, MAX_BLOCK, 1 << 20, BlockStore.NO_OP_LISTENER);
        final UnsafeBuffer hash = new UnsafeBuffer(new byte[32]);
        hash.putLong(0, 1);
        final int restored = store.restore(0, hash, 0, 32, 8192, 5000, 0xCAFE, 41);
        assertTrue(restored >= 0);
        assertTrue(store.isReady(restored));
        assertEquals(41, store.insertionSequence(restored));
        assertEquals(0xCAFE, store.crc32c(restored));
        assertEquals(8192, store.offset(restored));
        assertEquals(BlockStore.ALREADY_PRESENT, store.restore(0, hash, 0, 32, 16384, 5000, 1, 42));
        hash.putLong(0, 2);
        assertEquals(BlockStore.NO_SPACE, store.restore(0, hash, 0, 32, 8192, 5000, 1, 42), "extent taken");
        final int fresh = store.reserve(0, hash, 0, 32, 5000);
        store.seal(fresh, 7);
        assertEquals(42, store.insertionSequence(fresh));
        store.allocator().accountingCheck();
    }

    @Test
    void shouldEvictRestoredEntriesOldestFirstWhenRestoredNewestFirst()
    {
        final BlockStore store = new BlockStore(2L * SlabAllocator.PAGE_BYTES, MAX_BLOCK, 1 << 20, BlockStore.NO_OP_LISTENER);
        final UnsafeBuffer hash = new UnsafeBuffer(new byte[32]);
        final int perPage = SlabAllocator.PAGE_BYTES / 4096;
        for (int i = 2 * perPage - 1; i >= 0; i--)
        {
            hash.putLong(0, i);
            assertTrue(store.restore(0, hash, 0, 32, 4096L * i, 4096, i, 100 + i) >= 0);
        }
        assertEquals(100, store.insertionSequence(store.oldestEvictable()));
        hash.putLong(0, -1);
        final int fresh = store.reserve(0, hash, 0, 32, 4096);
        assertTrue(fresh >= 0);
        hash.putLong(0, 0);
        assertEquals(BlockStore.NOT_FOUND, store.find(0, hash, 0, 32), "the oldest restored entry went first");
        hash.putLong(0, 1);
        assertTrue(store.find(0, hash, 0, 32) >= 0);
    }
}
