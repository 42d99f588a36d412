package io.orbitkv.index;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.zip.CRC32C;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import static io.orbitkv.index.BlockStore.ALREADY_PRESENT;
import static io.orbitkv.index.BlockStore.NOT_FOUND;
import static io.orbitkv.index.BlockStore.NO_OP_LISTENER;
import static io.orbitkv.index.BlockStore.NO_SPACE;
import static io.orbitkv.index.BlockStore.TOO_LARGE;
import static io.orbitkv.index.SlabAllocator.PAGE_BYTES;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class BlockStoreTest
{
    private static final int KIB = 1024;
    private static final int MIB = 1024 * 1024;
    private static final int NS = 3;
    private static final int HASH_LENGTH = 32;
    private static final long INDEX_BUDGET = 1024 * 1024;

    private final UnsafeBuffer key = new UnsafeBuffer(new byte[64]);

    @Test
    void shouldTreatRepublishOfTheSameKeyAsIdempotent()
    {
        final BlockStore store = new BlockStore(4L * PAGE_BYTES, 8 * MIB, INDEX_BUDGET, NO_OP_LISTENER);
        final int id = reserve(store, 1, 100 * KIB);
        final long allocated = store.allocatedBytes();

        assertEquals(ALREADY_PRESENT, reserve(store, 1, 100 * KIB), "while preparing");
        store.seal(id);
        assertEquals(ALREADY_PRESENT, reserve(store, 1, 100 * KIB), "once ready");
        assertEquals(ALREADY_PRESENT, reserve(store, 1, 7 * KIB), "length does not make a new key");

        assertEquals(1, store.blockCount());
        assertEquals(allocated, store.allocatedBytes());
        assertEquals(100 * KIB, store.payloadBytes());
    }

    @Test
    void shouldTreatPreparingEntryAsMissUntilSealed()
    {
        final BlockStore store = new BlockStore(4L * PAGE_BYTES, 8 * MIB, INDEX_BUDGET, NO_OP_LISTENER);
        final int id = reserve(store, 1, 10 * KIB);

        assertEquals(id, store.find(NS, key(1), 0, HASH_LENGTH));
        assertFalse(store.isReady(id));
        assertEquals(NOT_FOUND, store.findReady(NS, key(1), 0, HASH_LENGTH));
        assertEquals(0, store.insertionSequence(id));

        store.seal(id);
        assertTrue(store.isReady(id));
        assertEquals(id, store.findReady(NS, key(1), 0, HASH_LENGTH));
        assertThrows(IllegalStateException.class, () -> store.seal(id));
        assertThrows(IllegalStateException.class, () -> store.abort(id));
    }

    @Test
    void shouldAssignIncreasingInsertionSequenceInSealOrder()
    {
        final BlockStore store = new BlockStore(4L * PAGE_BYTES, 8 * MIB, INDEX_BUDGET, NO_OP_LISTENER);
        final int a = reserve(store, 1, 4 * KIB);
        final int b = reserve(store, 2, 4 * KIB);
        store.seal(b);
        store.seal(a);

        assertTrue(store.insertionSequence(a) > store.insertionSequence(b));
        assertTrue(store.insertionSequence(b) > 0);
    }

    @Test
    void shouldFreeSpaceOnAbort()
    {
        final BlockStore store = new BlockStore(4L * PAGE_BYTES, 8 * MIB, INDEX_BUDGET, NO_OP_LISTENER);
        final int id = reserve(store, 1, 3 * MIB);
        assertEquals(3L * MIB, store.allocatedBytes());

        store.abort(id);
        assertEquals(0, store.allocatedBytes());
        assertEquals(0, store.payloadBytes());
        assertEquals(0, store.blockCount());
        assertEquals(NOT_FOUND, store.find(NS, key(1), 0, HASH_LENGTH));
        assertTrue(reserve(store, 1, 3 * MIB) >= 0, "the key can be published again");
        store.allocator().accountingCheck();
    }

    @Test
    void shouldRejectLengthsOutsideOneToMaxBlockBytes()
    {
        final BlockStore store = new BlockStore(4L * PAGE_BYTES, 2 * MIB, INDEX_BUDGET, NO_OP_LISTENER);

        assertEquals(TOO_LARGE, reserve(store, 1, 2 * MIB + 1));
        assertEquals(TOO_LARGE, reserve(store, 1, 0));
        assertEquals(TOO_LARGE, reserve(store, 1, -1));
        assertTrue(reserve(store, 1, 2 * MIB) >= 0);
    }

    @Test
    void shouldEvictLeastRecentlyUsedAndLetTouchSaveABlock()
    {
        final BlockStore store = new BlockStore(2L * PAGE_BYTES, 8 * MIB, INDEX_BUDGET, NO_OP_LISTENER);
        final int[] ids = new int[4];
        for (int i = 0; i < 4; i++)
        {
            ids[i] = publish(store, i, MIB);
        }
        store.touch(ids[0]);

        publish(store, 10, MIB);
        assertEquals(NOT_FOUND, store.find(NS, key(1), 0, HASH_LENGTH), "oldest untouched goes first");
        assertNotEquals(NOT_FOUND, store.find(NS, key(0), 0, HASH_LENGTH), "touch moved it to MRU");

        publish(store, 11, MIB);
        assertEquals(NOT_FOUND, store.find(NS, key(2), 0, HASH_LENGTH));
        publish(store, 12, MIB);
        assertEquals(NOT_FOUND, store.find(NS, key(3), 0, HASH_LENGTH));
        publish(store, 13, MIB);
        assertEquals(NOT_FOUND, store.find(NS, key(0), 0, HASH_LENGTH), "touched block is evicted last");
        assertEquals(4, store.evictions());
        assertEquals(4, store.blockCount());
    }

    @Test
    void shouldNeverEvictPinnedOrPreparingBlocksUnderPressure()
    {
        final BlockStore store = new BlockStore(4L * PAGE_BYTES, 8 * MIB, INDEX_BUDGET, NO_OP_LISTENER);
        final int preparing = reserve(store, 1, MIB);
        final int pinned = publish(store, 2, MIB);
        store.pin(pinned);

        for (int i = 100; i < 400; i++)
        {
            final int length = (i % 3 == 0) ? 3 * MIB : (i % 3 == 1) ? 700 * KIB : 64 * KIB;
            assertTrue(publish(store, i, length) >= 0, "round " + i);
        }

        assertTrue(store.evictions() > 100);
        assertEquals(preparing, store.find(NS, key(1), 0, HASH_LENGTH));
        assertFalse(store.isReady(preparing));
        assertEquals(pinned, store.find(NS, key(2), 0, HASH_LENGTH));
        assertTrue(store.isReady(pinned));
        assertEquals(1, store.pinnedBlocks());
        store.allocator().accountingCheck();
    }

    @Test
    void shouldAnswerNoSpaceWhenEveryBlockIsPinnedOrPreparing()
    {
        final BlockStore store = new BlockStore(2L * PAGE_BYTES, 8 * MIB, INDEX_BUDGET, NO_OP_LISTENER);
        final int a = publish(store, 1, MIB);
        final int b = publish(store, 2, MIB);
        reserve(store, 3, MIB);
        final int d = publish(store, 4, MIB);
        store.pin(a);
        store.pin(b);
        store.pin(b);
        store.pin(d);

        assertEquals(NO_SPACE, reserve(store, 5, MIB));
        assertEquals(NO_SPACE, reserve(store, 6, 4 * KIB));
        assertEquals(NO_SPACE, reserve(store, 7, 3 * MIB));
        assertEquals(0, store.evictions());
        assertEquals(3, store.pinnedBlocks());
        assertFalse(store.remove(a), "pinned blocks cannot be removed");

        store.unpin(b);
        assertEquals(NO_SPACE, reserve(store, 5, MIB), "b still holds one pin");
        store.unpin(b);
        assertTrue(reserve(store, 5, MIB) >= 0);
        assertEquals(NOT_FOUND, store.find(NS, key(2), 0, HASH_LENGTH));
        assertEquals(1, store.evictions());
    }

    @Test
    void shouldRejectUnpinBelowZero()
    {
        final BlockStore store = new BlockStore(2L * PAGE_BYTES, 8 * MIB, INDEX_BUDGET, NO_OP_LISTENER);
        final int id = publish(store, 1, MIB);
        store.pin(id);
        store.unpin(id);

        assertThrows(IllegalStateException.class, () -> store.unpin(id));
        assertEquals(0, store.pinCount(id));
        assertEquals(0, store.pinnedBlocks());
    }

    @Test
    void shouldPutUnpinnedBlockAtMostRecentEnd()
    {
        final BlockStore store = new BlockStore(2L * PAGE_BYTES, 8 * MIB, INDEX_BUDGET, NO_OP_LISTENER);
        final int a = publish(store, 1, MIB);
        publish(store, 2, MIB);
        publish(store, 3, MIB);
        publish(store, 4, MIB);
        store.pin(a);
        store.unpin(a);

        publish(store, 5, MIB);
        assertTrue(store.isReady(a));
        assertEquals(NOT_FOUND, store.find(NS, key(2), 0, HASH_LENGTH));
    }

    @Test
    void shouldCallEvictionListenerWithReadableKeyBeforeRemoval()
    {
        final List<String> events = new ArrayList<>();
        final UnsafeBuffer copy = new UnsafeBuffer(new byte[64]);
        final BlockStore.EvictionListener listener = (store, entryId) ->
        {
            final int length = store.hashLength(entryId);
            store.getHash(entryId, copy, 0);
            final boolean stillIndexed = store.find(store.namespaceId(entryId), copy, 0, length) == entryId;
            events.add(store.namespaceId(entryId) + "/" + copy.getByte(0) + "/" + length + "/" +
                store.offset(entryId) + "/" + store.length(entryId) + "/" + stillIndexed);
        };
        final BlockStore store = new BlockStore(PAGE_BYTES, 8 * MIB, INDEX_BUDGET, listener);
        final int first = publish(store, 1, MIB);
        final long firstOffset = store.offset(first);
        final byte firstByte = key(1).getByte(0);
        publish(store, 2, MIB);

        publish(store, 3, MIB);

        assertEquals(List.of(NS + "/" + firstByte + "/" + HASH_LENGTH + "/" + firstOffset + "/" + MIB + "/true"), events);
        assertEquals(NOT_FOUND, store.find(NS, key(1), 0, HASH_LENGTH));
    }

    @Test
    void shouldEvictOldestBlockWhenIndexIsFullWithoutGrowing()
    {
        final long budget = 4096;
        final BlockStore store = new BlockStore(8L * PAGE_BYTES, 8 * MIB, budget, NO_OP_LISTENER);
        final int capacity = store.indexCapacity();
        assertEquals(BlockIndex.capacityFor(budget), capacity);
        for (int i = 0; i < capacity; i++)
        {
            publish(store, i, 4 * KIB);
        }
        assertEquals(0, store.evictions());

        publish(store, capacity, 4 * KIB);

        assertEquals(1, store.evictions());
        assertEquals(capacity, store.blockCount());
        assertEquals(capacity, store.indexCapacity());
        assertEquals(NOT_FOUND, store.find(NS, key(0), 0, HASH_LENGTH));
        assertNotEquals(NOT_FOUND, store.find(NS, key(capacity), 0, HASH_LENGTH));
    }

    @Test
    void shouldAnswerNoSpaceWhenIndexIsFullOfPinnedBlocks()
    {
        final BlockStore store = new BlockStore(8L * PAGE_BYTES, 8 * MIB, 4096, NO_OP_LISTENER);
        for (int i = 0; i < store.indexCapacity(); i++)
        {
            store.pin(publish(store, i, 4 * KIB));
        }

        assertEquals(NO_SPACE, reserve(store, 1000, 4 * KIB));
        assertEquals(0, store.evictions());
        store.allocator().accountingCheck();
    }

    @Test
    void shouldKeepMixedBlockSizesSideBySide()
    {
        final BlockStore store = new BlockStore(16L * PAGE_BYTES, 8 * MIB, INDEX_BUDGET, NO_OP_LISTENER);
        final int[] lengths = {1, 4 * KIB, 5000, 100 * KIB, MIB, 2 * MIB, 2 * MIB + 1, 5 * MIB, 8 * MIB};
        final int[] ids = new int[lengths.length];
        long payload = 0;
        for (int i = 0; i < lengths.length; i++)
        {
            ids[i] = publish(store, i, lengths[i]);
            payload += lengths[i];
        }

        assertEquals(0, store.evictions());
        assertEquals(payload, store.payloadBytes());
        assertEquals(lengths.length, store.blockCount());
        final long[][] spans = new long[lengths.length][];
        for (int i = 0; i < lengths.length; i++)
        {
            assertEquals(lengths[i], store.length(ids[i]));
            spans[i] = new long[]{store.offset(ids[i]), store.offset(ids[i]) + lengths[i]};
        }
        Arrays.sort(spans, (x, y) -> Long.compare(x[0], y[0]));
        for (int i = 1; i < spans.length; i++)
        {
            assertTrue(spans[i - 1][1] <= spans[i][0], "blocks overlap");
        }
        store.allocator().accountingCheck();
    }

    @Test
    void shouldEvictGloballyOldestSmallBlocksToAssembleALargeRun()
    {
        final BlockStore store = new BlockStore(4L * PAGE_BYTES, 8 * MIB, INDEX_BUDGET, NO_OP_LISTENER);
        for (int i = 0; i < 4 * 32; i++)
        {
            publish(store, i, 64 * KIB);
        }
        assertEquals(0, store.freeBytes());

        final int big = publish(store, 1000, 4 * MIB);

        assertTrue(big >= 0);
        assertEquals(64, store.evictions(), "two whole slab pages of the oldest blocks");
        assertEquals(NOT_FOUND, store.find(NS, key(63), 0, HASH_LENGTH));
        assertNotEquals(NOT_FOUND, store.find(NS, key(64), 0, HASH_LENGTH));
        store.allocator().accountingCheck();
    }

    @Test
    void shouldPreferEvictingTheSameSizeClass()
    {
        final BlockStore store = new BlockStore(2L * PAGE_BYTES, 8 * MIB, INDEX_BUDGET, NO_OP_LISTENER);
        final int small = publish(store, 1, 64 * KIB);
        publish(store, 2, 700 * KIB);
        publish(store, 3, 700 * KIB);
        for (int i = 10; i < 10 + 31; i++)
        {
            publish(store, i, 64 * KIB);
        }
        assertEquals(0, store.freeBytes(), "one full 64 KiB slab and one full 768 KiB slab");

        publish(store, 50, 700 * KIB);

        assertEquals(1, store.evictions());
        assertTrue(store.isReady(small), "an older block of another class survives");
        assertEquals(NOT_FOUND, store.find(NS, key(2), 0, HASH_LENGTH));
    }

    @Test
    void shouldAnswerNoSpaceOnceTheEvictionBoundIsSpentWithoutFreeingAPage()
    {
        final int pages = 16;
        final int perPage = PAGE_BYTES / (4 * KIB);
        final BlockStore store = new BlockStore((long)pages * PAGE_BYTES, 8 * MIB, 2L * MIB, NO_OP_LISTENER);
        final int[] ids = new int[pages * perPage];
        for (int i = 0; i < ids.length; i++)
        {
            ids[i] = publish(store, i, 4 * KIB);
        }
        for (int slot = 0; slot < perPage; slot++)
        {
            for (int page = 0; page < pages; page++)
            {
                store.touch(ids[page * perPage + slot]);
            }
        }
        assertEquals(0, store.freeBytes());

        assertEquals(NO_SPACE, reserve(store, 100_000, 16 * KIB), "LRU order spreads victims over every page");
        assertEquals(BlockStore.MAX_EVICTIONS_PER_RESERVE, store.evictions());
        assertEquals(0, store.allocator().freePages());
        store.allocator().accountingCheck();

        assertTrue(reserve(store, 100_001, 16 * KIB) >= 0, "the next reservation continues where the last stopped");
    }

    @Test
    void shouldRemoveOnlyUnpinnedReadyEntries()
    {
        final BlockStore store = new BlockStore(2L * PAGE_BYTES, 8 * MIB, INDEX_BUDGET, NO_OP_LISTENER);
        final int preparing = reserve(store, 1, MIB);
        final int ready = publish(store, 2, MIB);

        assertFalse(store.remove(preparing));
        assertTrue(store.remove(ready));
        assertFalse(store.remove(ready));
        assertEquals(1, store.blockCount());
        assertEquals(MIB, store.payloadBytes());
        assertEquals(0, store.evictions());
    }

    @Test
    void shouldKeepGaugesConsistentUnderRandomChurn()
    {
        final BlockStore store = new BlockStore(32L * PAGE_BYTES, 8 * MIB, 64 * 1024, NO_OP_LISTENER);
        final Random random = new Random(11);
        final int keySpace = 5000;

        for (int op = 0; op < 30_000; op++)
        {
            final int k = random.nextInt(keySpace);
            final int found = store.find(NS, key(k), 0, HASH_LENGTH);
            if (NOT_FOUND == found)
            {
                final int length = random.nextInt(10) == 0 ? 1 + random.nextInt(6 * MIB) : 1 + random.nextInt(256 * KIB);
                final int id = reserve(store, k, length);
                if (id >= 0)
                {
                    if (random.nextInt(20) == 0)
                    {
                        store.abort(id);
                    }
                    else
                    {
                        store.seal(id);
                    }
                }
            }
            else if (random.nextInt(4) == 0)
            {
                store.remove(found);
            }
            else
            {
                store.touch(found);
            }
        }

        store.allocator().accountingCheck();
        assertTrue(store.evictions() > 0);
        assertEquals(store.poolBytes(),
            store.allocatedBytes() + store.freeBytes() + store.allocator().slackBytes());
        assertEquals(store.blockCount(), store.allocator().liveChunks());
        assertTrue(store.payloadBytes() <= store.allocatedBytes());
    }

    private int publish(final BlockStore store, final int seed, final int length)
    {
        final int id = reserve(store, seed, length);
        if (id >= 0)
        {
            store.seal(id);
        }
        return id;
    }

    @Test
    void shouldReportEverySealAndEveryReleaseOfAReadyEntryButNoAbort()
    {
        final List<String> events = new ArrayList<>();
        final BlockStore.ResidencyObserver observer = new BlockStore.ResidencyObserver()
        {
            public void onResident(final BlockStore s, final int entryId)
            {
                assertTrue(s.isReady(entryId));
                events.add("resident " + s.insertionSequence(entryId));
            }

            public void onGone(final BlockStore s, final int entryId)
            {
                assertTrue(s.isReady(entryId), "still readable while reported");
                events.add("gone " + s.insertionSequence(entryId));
            }
        };
        final BlockStore store = new BlockStore(4L * PAGE_BYTES, 8 * MIB, INDEX_BUDGET, NO_OP_LISTENER, observer);

        final int aborted = reserve(store, 1, 100 * KIB);
        store.abort(aborted);
        assertEquals(List.of(), events, "a PREPARING entry was never announced");

        final int removed = reserve(store, 2, 100 * KIB);
        store.seal(removed);
        assertTrue(store.remove(removed));
        assertEquals(List.of("resident 1", "gone 1"), events);

        // Fill the pool with 2 MiB blocks until the oldest is evicted: its release is reported before its space goes.
        events.clear();
        for (int seed = 10; store.evictions() == 0; seed++)
        {
            final int id = reserve(store, seed, 2 * MIB);
            assertTrue(id >= 0);
            store.seal(id);
        }
        assertEquals("gone 2", events.get(events.size() - 2), events::toString);
        assertEquals(1, events.stream().filter((e) -> e.startsWith("gone")).count());
    }

    @Test
    void shouldSealEachBlockWithTheCrc32cOfTheBytesItsOffsetHolds()
    {
        final BlockStore store = new BlockStore(4L * PAGE_BYTES, 8 * MIB, INDEX_BUDGET, NO_OP_LISTENER);
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment pool = arena.allocate(store.poolBytes(), 4096);
            final BlockChecksum checksum = new BlockChecksum(pool);
            final int[] ids = new int[3];
            final byte[][] published = new byte[3][];
            final Random random = new Random(11);
            for (int k = 0; k < ids.length; k++)
            {
                final int length = (k + 1) * 300 * KIB + k;
                published[k] = new byte[length];
                random.nextBytes(published[k]);
                ids[k] = reserve(store, 40 + k, length);
                MemorySegment.copy(published[k], 0, pool, ValueLayout.JAVA_BYTE, store.offset(ids[k]), length);
                assertEquals(0, store.crc32c(ids[k]), "no checksum before seal");
                store.seal(ids[k], checksum.compute(store.offset(ids[k]), length));
            }
            for (int k = 0; k < ids.length; k++)
            {
                final byte[] read = new byte[store.length(ids[k])];
                MemorySegment.copy(pool, ValueLayout.JAVA_BYTE, store.offset(ids[k]), read, 0, read.length);
                assertArrayEquals(published[k], read, "byte-exact");
                final CRC32C expected = new CRC32C();
                expected.update(published[k]);
                assertEquals((int)expected.getValue(), store.crc32c(ids[k]), "sealed sum is the CRC32C of the bytes");
            }
        }
    }

    @Test
    void shouldKeepAChecksumRecordedWhilePreparingAndForgetItWhenTheEntryIsReused()
    {
        final BlockStore store = new BlockStore(4L * PAGE_BYTES, 8 * MIB, INDEX_BUDGET, NO_OP_LISTENER);
        final int id = reserve(store, 1, 10 * KIB);
        store.crc32c(id, 0xCAFEBABE);
        store.seal(id);
        assertEquals(0xCAFEBABE, store.crc32c(id), "seal without a sum keeps the recorded one");
        assertThrows(IllegalStateException.class, () -> store.crc32c(id, 1), "a sealed block's sum never changes");

        assertTrue(store.remove(id));
        final int reused = reserve(store, 2, 10 * KIB);
        assertEquals(id, reused, "the freed entry is reused");
        assertEquals(0, store.crc32c(reused), "a new entry starts without the old block's sum");
        store.seal(reused, 0x12345678);
        assertEquals(0x12345678, store.crc32c(reused));
    }

    private int reserve(final BlockStore store, final int seed, final int length)
    {
        return store.reserve(NS, key(seed), 0, HASH_LENGTH, length);
    }

    private UnsafeBuffer key(final int seed)
    {
        for (int i = 0; i < HASH_LENGTH; i += 4)
        {
            key.putInt(i, seed * 31 + i * 0x01000193);
        }
        return key;
    }

    @Test
    void shouldDeriveDistinctKeysFromDistinctSeeds()
    {
        final byte[] a = new byte[HASH_LENGTH];
        final byte[] b = new byte[HASH_LENGTH];
        key(1).getBytes(0, a);
        key(2).getBytes(0, b);
        assertFalse(Arrays.equals(a, b));
        key(1).getBytes(0, b);
        assertArrayEquals(a, b);
    }
}
