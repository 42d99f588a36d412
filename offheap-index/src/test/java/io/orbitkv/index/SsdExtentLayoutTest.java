package io.orbitkv.index;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Manager's SSD tier keeps residences in a {@link BlockStore} whose offsets are file offsets. O_DIRECT needs
 * every extent 4 KiB aligned and at least as long as the block rounded up to 4 KiB, and the tier's byte counters
 * must account exactly against {@code --ssd-bytes}, through eviction churn.
 */
class SsdExtentLayoutTest
{
    private static final int BLOCK = 4096;
    private static final long SSD_BYTES = 64L * SlabAllocator.PAGE_BYTES;
    private static final int MAX_BLOCK = 8 * 1024 * 1024;

    @Test
    void shouldHandOutFourKibAlignedExtentsCoveringTheRoundedLengthWithExactAccounting()
    {
        final List<Integer> evicted = new ArrayList<>();
        final BlockStore store = new BlockStore(SSD_BYTES, MAX_BLOCK, 1 << 20, (s, id) -> evicted.add(id));
        final UnsafeBuffer key = new UnsafeBuffer(new byte[32]);
        final Random random = new Random(42);
        long sealedBytes = 0;
        for (int i = 0; i < 20_000; i++)
        {
            key.putLong(0, i);
            key.putLong(8, ~i);
            final int length = 1 + random.nextInt(random.nextBoolean() ? 64 * 1024 : MAX_BLOCK);
            final int id = store.reserve(1, key, 0, 32, length);
            assertTrue(id >= 0, "reserve " + i + " -> " + id);
            final long offset = store.offset(id);
            final int classBytes = store.allocator().classBytes(store.sizeClass(id));
            final int ioLength = (length + BLOCK - 1) & -BLOCK;
            assertEquals(0, offset % BLOCK, "extent offset 4 KiB aligned");
            assertEquals(0, classBytes % BLOCK, "extent length a 4 KiB multiple");
            assertTrue(classBytes >= ioLength, "extent holds the rounded I/O length");
            assertTrue(offset + ioLength <= SSD_BYTES, "extent inside the file");
            store.seal(id);
            sealedBytes += length;
            final SlabAllocator allocator = store.allocator();
            assertEquals(SSD_BYTES, allocator.allocatedBytes() + allocator.freeBytes() + allocator.slackBytes(),
                "allocated + free + slack == ssd bytes");
        }
        assertTrue(store.evictions() > 0, "churn evicted least recently used residences");
        assertEquals(store.evictions(), evicted.size());
        assertTrue(store.payloadBytes() <= store.allocatedBytes());
        assertTrue(sealedBytes > SSD_BYTES);
        store.allocator().accountingCheck();
    }
}
