package io.orbitkv.index;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Placement policy of the DRAM tier: which blocks live in the pool, where, and which go when room is needed. The
 * Manager maps the pool and copies bytes; this class only hands out offsets and keeps the books.
 * <p>
 * Lifecycle of an entry: {@link #reserve} creates it PREPARING with space allocated, {@link #seal} makes it READY, or
 * {@link #abort} drops it. design: preparing data is not ready data, so lookups must treat PREPARING as a miss
 * ({@link #findReady} does). Only READY entries with no pins are evictable: each size class keeps an LRU list of
 * exactly those entries, ordered by a logical access stamp, and an entry leaves its list while pinned.
 * <p>
 * Room for a reservation is found in this order:
 * <ol>
 *     <li>a free chunk of the class, else a free page (slab classes) or a run of free pages (large classes);</li>
 *     <li>evict the least recently used block of the same class: its space fits the new block exactly;</li>
 *     <li>evict the globally least recently used block, whatever its class, until a page or run frees up.</li>
 * </ol>
 * Evictions per reservation are bounded by {@link #MAX_EVICTIONS_PER_RESERVE}; past that the reservation answers
 * {@link #NO_SPACE} rather than flushing the pool for one block whose run cannot be assembled. A full index is handled
 * the same way: the globally oldest block is evicted, design: the index never grows.
 * <p>
 * Single threaded (the Manager's ring agent owns it) and allocation free after construction.
 */
public final class BlockStore
{
    /**
     * Notified just before an entry is evicted, while its key, offset and length are still readable.
     */
    @FunctionalInterface
    public interface EvictionListener
    {
        /**
         * @param store   the store evicting the entry; must not be mutated from inside the callback.
         * @param entryId the entry about to be removed.
         */
        void onEvict(BlockStore store, int entryId);
    }

    /**
     * A listener that ignores evictions.
     */
    public static final EvictionListener NO_OP_LISTENER = (store, entryId) -> {};

    /**
     * Told about every transition of a READY residence, whatever path caused it: the catalog inventory hangs off this
     * so that no admission, replacement, eviction or cleanup path can forget to report one.
     */
    public interface ResidencyObserver
    {
        /**
         * An entry was sealed: its data is complete and it is findable.
         *
         * @param store   the store; must not be mutated from inside the callback.
         * @param entryId the sealed entry.
         */
        void onResident(BlockStore store, int entryId);

        /**
         * A READY entry is about to be released (eviction or removal); its key is still readable.
         *
         * @param store   the store; must not be mutated from inside the callback.
         * @param entryId the entry about to go.
         */
        void onGone(BlockStore store, int entryId);
    }

    /**
     * An observer that ignores every transition.
     */
    public static final ResidencyObserver NO_OP_OBSERVER = new ResidencyObserver()
    {
        public void onResident(final BlockStore store, final int entryId)
        {
        }

        public void onGone(final BlockStore store, final int entryId)
        {
        }
    };

    /**
     * Key absent (or, for {@link #findReady}, not yet sealed).
     */
    public static final int NOT_FOUND = -1;

    /**
     * The key is already stored, READY or PREPARING: re-publishing is idempotent and stores nothing twice.
     */
    public static final int ALREADY_PRESENT = -2;

    /**
     * No space could be found, even after evicting every block the policy allows.
     */
    public static final int NO_SPACE = -3;

    /**
     * Length is not positive or above the largest block.
     */
    public static final int TOO_LARGE = -4;

    /**
     * Bound on evictions performed by one {@link #reserve} call.
     */
    public static final int MAX_EVICTIONS_PER_RESERVE = 4096;

    private static final int NULL_ID = BlockIndex.NULL_ID;

    private final SlabAllocator allocator;
    private final BlockIndex index;
    private final EvictionListener listener;
    private final ResidencyObserver observer;
    private final int[] lruHead;
    private final int[] lruTail;

    private long sequence;
    private long accessClock;
    private long restoreClock;
    private long payloadBytes;
    private int pinnedBlocks;
    private long evictions;

    /**
     * @param poolBytes        size of the pool, a positive multiple of {@link SlabAllocator#PAGE_BYTES}.
     * @param maxBlockBytes    largest block accepted.
     * @param indexBudgetBytes bytes for the index; fixes the maximum block count.
     * @param listener         told about each eviction, may be {@link #NO_OP_LISTENER}.
     */
    public BlockStore(
        final long poolBytes, final int maxBlockBytes, final long indexBudgetBytes, final EvictionListener listener)
    {
        this(poolBytes, maxBlockBytes, indexBudgetBytes, listener, NO_OP_OBSERVER);
    }

    /**
     * @param poolBytes        size of the pool, a positive multiple of {@link SlabAllocator#PAGE_BYTES}.
     * @param maxBlockBytes    largest block accepted.
     * @param indexBudgetBytes bytes for the index; fixes the maximum block count.
     * @param listener         told about each eviction, may be {@link #NO_OP_LISTENER}.
     * @param observer         told about every READY transition, may be {@link #NO_OP_OBSERVER}.
     */
    public BlockStore(
        final long poolBytes,
        final int maxBlockBytes,
        final long indexBudgetBytes,
        final EvictionListener listener,
        final ResidencyObserver observer)
    {
        if (null == listener)
        {
            throw new NullPointerException("listener");
        }
        if (null == observer)
        {
            throw new NullPointerException("observer");
        }
        this.observer = observer;
        this.allocator = new SlabAllocator(poolBytes, maxBlockBytes);
        this.index = new BlockIndex(indexBudgetBytes);
        this.listener = listener;
        final int classCount = allocator.sizeClassCount();
        lruHead = new int[classCount];
        lruTail = new int[classCount];
        for (int i = 0; i < classCount; i++)
        {
            lruHead[i] = NULL_ID;
            lruTail[i] = NULL_ID;
        }
    }

    /**
     * @param namespaceId namespace of the key.
     * @param hash        buffer holding the hash bytes.
     * @param hashOffset  offset of the hash.
     * @param hashLength  1..{@link BlockIndex#MAX_HASH_BYTES}.
     * @return the entry id (READY or PREPARING, see {@link #isReady}), or {@link #NOT_FOUND}.
     */
    public int find(final int namespaceId, final DirectBuffer hash, final int hashOffset, final int hashLength)
    {
        return index.find(namespaceId, hash, hashOffset, hashLength);
    }

    /**
     * Lookup for readers: PREPARING entries are a miss.
     *
     * @param namespaceId namespace of the key.
     * @param hash        buffer holding the hash bytes.
     * @param hashOffset  offset of the hash.
     * @param hashLength  1..{@link BlockIndex#MAX_HASH_BYTES}.
     * @return the id of a READY entry, or {@link #NOT_FOUND}.
     */
    public int findReady(final int namespaceId, final DirectBuffer hash, final int hashOffset, final int hashLength)
    {
        final int id = index.find(namespaceId, hash, hashOffset, hashLength);
        return NOT_FOUND != id && BlockIndex.STATE_READY == index.state(id) ? id : NOT_FOUND;
    }

    /**
     * @param entryId entry id.
     * @return true if the entry is live and sealed.
     */
    public boolean isReady(final int entryId)
    {
        return index.isLive(entryId) && BlockIndex.STATE_READY == index.state(entryId);
    }

    /**
     * Reserve space for a new block, evicting as described in the class comment.
     *
     * @param namespaceId namespace of the key.
     * @param hash        buffer holding the hash bytes.
     * @param hashOffset  offset of the hash.
     * @param hashLength  1..{@link BlockIndex#MAX_HASH_BYTES}.
     * @param length      block length in bytes.
     * @return a PREPARING entry id, or {@link #ALREADY_PRESENT}, {@link #NO_SPACE} or {@link #TOO_LARGE}.
     */
    public int reserve(
        final int namespaceId, final DirectBuffer hash, final int hashOffset, final int hashLength, final int length)
    {
        final int sizeClass = allocator.sizeClassOf(length);
        if (sizeClass < 0)
        {
            return TOO_LARGE;
        }
        if (NOT_FOUND != index.find(namespaceId, hash, hashOffset, hashLength))
        {
            return ALREADY_PRESENT;
        }

        int evictionBudget = MAX_EVICTIONS_PER_RESERVE;
        while (index.isFull())
        {
            if (0 == evictionBudget-- || !evictOldest())
            {
                return NO_SPACE;
            }
        }

        long offset = allocator.allocate(sizeClass);
        if (SlabAllocator.NO_SPACE == offset)
        {
            if (evictionBudget > 0 && NULL_ID != lruHead[sizeClass])
            {
                evictionBudget--;
                evict(lruHead[sizeClass]);
                offset = allocator.allocate(sizeClass);
            }
            while (SlabAllocator.NO_SPACE == offset)
            {
                if (0 == evictionBudget-- || !evictOldest())
                {
                    return NO_SPACE;
                }
                offset = allocator.allocate(sizeClass);
            }
        }

        final int id = index.insert(namespaceId, hash, hashOffset, hashLength);
        index.poolOffset(id, offset);
        index.length(id, length);
        index.sizeClass(id, sizeClass);
        payloadBytes += length;

        return id;
    }

    /**
     * Put back a READY entry whose space and key were recorded, e.g. an SSD residence found in the tier's manifest
     * after a restart: the extent at {@code offset} is claimed (it must be free and lie where the allocator could
     * have put a block of this length), the entry is sealed with the recorded checksum and insertion sequence, goes
     * to the MRU end and is reported to the observer like a seal. Later seals take sequences above every restored
     * one. Never evicts.
     *
     * @param namespaceId       namespace of the key.
     * @param hash              buffer holding the hash bytes.
     * @param hashOffset        offset of the hash.
     * @param hashLength        1..{@link BlockIndex#MAX_HASH_BYTES}.
     * @param offset            where the block's space starts.
     * @param length            block length in bytes.
     * @param crc32c            the block's checksum.
     * @param insertionSequence the sequence it was sealed with.
     * @return the entry id, or {@link #ALREADY_PRESENT}, {@link #NO_SPACE} (the index is full or the extent is not
     * free) or {@link #TOO_LARGE}.
     */
    public int restore(
        final int namespaceId,
        final DirectBuffer hash,
        final int hashOffset,
        final int hashLength,
        final long offset,
        final int length,
        final int crc32c,
        final long insertionSequence)
    {
        final int sizeClass = allocator.sizeClassOf(length);
        if (sizeClass < 0)
        {
            return TOO_LARGE;
        }
        final int id = index.insertIfAbsent(namespaceId, hash, hashOffset, hashLength);
        if (BlockIndex.PRESENT == id)
        {
            return ALREADY_PRESENT;
        }
        if (id < 0)
        {
            return NO_SPACE;
        }
        if (!allocator.allocateAt(sizeClass, offset))
        {
            index.remove(id);
            return NO_SPACE;
        }
        index.poolOffset(id, offset);
        index.length(id, length);
        index.sizeClass(id, sizeClass);
        payloadBytes += length;
        index.crc32c(id, crc32c);
        index.state(id, BlockIndex.STATE_READY);
        index.insertionSequence(id, insertionSequence);
        sequence = Math.max(sequence, insertionSequence);
        index.accessStamp(id, --restoreClock);
        linkLeastRecent(id);
        observer.onResident(this, id);
        return id;
    }

    /**
     * Load the index slot a key would take, ahead of its {@link #restore}: a caller restoring many keys touches a
     * handful of them first so that their cache misses overlap instead of being paid one after the other.
     *
     * @return a value for the caller to keep (fold it into a sum), so the load is not optimised away.
     */
    public long touch(final int namespaceId, final DirectBuffer hash, final int hashOffset, final int hashLength)
    {
        return index.touch(namespaceId, hash, hashOffset, hashLength);
    }

    /**
     * Make later seals take sequences above {@code insertionSequence}, e.g. one a removed residence had.
     *
     * @param insertionSequence a sequence used before.
     */
    public void sequenceAtLeast(final long insertionSequence)
    {
        sequence = Math.max(sequence, insertionSequence);
    }

    /**
     * Publish a PREPARING entry with the checksum recorded so far ({@link #crc32c(int, int)}, else 0).
     *
     * @param entryId a PREPARING entry.
     * @see #seal(int, int)
     */
    public void seal(final int entryId)
    {
        seal(entryId, index.crc32c(entryId));
    }

    /**
     * Publish a PREPARING entry: it becomes READY with the CRC32C of its bytes, takes the next insertion sequence
     * and goes to the MRU end. design: every sealed block carries its checksum, so a copy of it read back from any
     * tier or peer can be verified before it is delivered.
     *
     * @param entryId a PREPARING entry.
     * @param crc32c  CRC32C of the block's bytes as they are in the store.
     */
    public void seal(final int entryId, final int crc32c)
    {
        checkState(entryId, BlockIndex.STATE_PREPARING);
        index.crc32c(entryId, crc32c);
        index.state(entryId, BlockIndex.STATE_READY);
        index.insertionSequence(entryId, ++sequence);
        index.accessStamp(entryId, ++accessClock);
        if (0 == index.pinCount(entryId))
        {
            linkMostRecent(entryId);
        }
        observer.onResident(this, entryId);
    }

    /**
     * Drop a PREPARING entry and free its space.
     *
     * @param entryId a PREPARING entry.
     */
    public void abort(final int entryId)
    {
        checkState(entryId, BlockIndex.STATE_PREPARING);
        if (index.pinCount(entryId) > 0)
        {
            pinnedBlocks--;
        }
        release(entryId);
    }

    /**
     * Remove an unpinned READY entry, e.g. on explicit invalidation.
     *
     * @param entryId entry id.
     * @return true if removed, false if the entry is not live, not READY or pinned.
     */
    public boolean remove(final int entryId)
    {
        if (!isReady(entryId) || index.pinCount(entryId) > 0)
        {
            return false;
        }
        observer.onGone(this, entryId);
        unlink(entryId);
        release(entryId);
        return true;
    }

    /**
     * Protect an entry from eviction and removal, e.g. while a reader copies it. Pins nest.
     *
     * @param entryId a live entry.
     */
    public void pin(final int entryId)
    {
        checkLive(entryId);
        final int pins = index.pinCount(entryId);
        if (0 == pins)
        {
            pinnedBlocks++;
            if (BlockIndex.STATE_READY == index.state(entryId))
            {
                // design: pinned blocks are never evicted, so they leave the LRU list rather than being skipped.
                unlink(entryId);
            }
        }
        index.pinCount(entryId, pins + 1);
    }

    /**
     * Release one pin. The last unpin of a READY entry puts it at the MRU end: it was just used.
     *
     * @param entryId a pinned entry.
     * @throws IllegalStateException if the entry has no pin.
     */
    public void unpin(final int entryId)
    {
        checkLive(entryId);
        final int pins = index.pinCount(entryId);
        if (pins <= 0)
        {
            throw new IllegalStateException("entry " + entryId + " is not pinned");
        }
        index.pinCount(entryId, pins - 1);
        if (1 == pins)
        {
            pinnedBlocks--;
            if (BlockIndex.STATE_READY == index.state(entryId))
            {
                index.accessStamp(entryId, ++accessClock);
                linkMostRecent(entryId);
            }
        }
    }

    /**
     * Record a read hit: the entry becomes the most recently used.
     *
     * @param entryId a live entry; PREPARING entries are ignored.
     */
    public void touch(final int entryId)
    {
        checkLive(entryId);
        if (BlockIndex.STATE_READY != index.state(entryId))
        {
            return;
        }
        index.accessStamp(entryId, ++accessClock);
        if (0 == index.pinCount(entryId))
        {
            unlink(entryId);
            linkMostRecent(entryId);
        }
    }

    /**
     * @param entryId entry id.
     * @return number of outstanding pins.
     */
    public int pinCount(final int entryId)
    {
        return index.pinCount(entryId);
    }

    /**
     * @param entryId entry id.
     * @return offset of the block in the pool.
     */
    public long offset(final int entryId)
    {
        return index.poolOffset(entryId);
    }

    /**
     * @param entryId entry id.
     * @return block length in bytes.
     */
    public int length(final int entryId)
    {
        return index.length(entryId);
    }

    /**
     * @param entryId entry id.
     * @return size class of the block's space.
     */
    public int sizeClass(final int entryId)
    {
        return index.sizeClass(entryId);
    }

    /**
     * @param entryId entry id.
     * @return namespace id of the key.
     */
    public int namespaceId(final int entryId)
    {
        return index.namespaceId(entryId);
    }

    /**
     * @param entryId entry id.
     * @return number of hash bytes in the key.
     */
    public int hashLength(final int entryId)
    {
        return index.hashLength(entryId);
    }

    /**
     * @param entryId   entry id.
     * @param dst       destination of the hash bytes.
     * @param dstOffset offset in {@code dst}.
     */
    public void getHash(final int entryId, final MutableDirectBuffer dst, final int dstOffset)
    {
        index.getHash(entryId, dst, dstOffset);
    }

    /**
     * @param entryId entry id.
     * @return sequence assigned by {@link #seal}, increasing across the store's life; 0 while PREPARING.
     */
    public long insertionSequence(final int entryId)
    {
        return index.insertionSequence(entryId);
    }

    /**
     * @param entryId entry id.
     * @return CRC32C of the block's bytes: given at {@link #seal(int, int)} or recorded before it; 0 until then.
     */
    public int crc32c(final int entryId)
    {
        return index.crc32c(entryId);
    }

    /**
     * Record the checksum of a PREPARING entry whose bytes are known before they land, e.g. a copy of a block
     * already sealed elsewhere; {@link #seal(int)} keeps it.
     *
     * @param entryId a PREPARING entry.
     * @param crc32c  CRC32C of the block's bytes.
     */
    public void crc32c(final int entryId, final int crc32c)
    {
        checkState(entryId, BlockIndex.STATE_PREPARING);
        index.crc32c(entryId, crc32c);
    }

    /**
     * @return live entries, PREPARING included.
     */
    public int blockCount()
    {
        return index.size();
    }

    /**
     * @return size of the pool.
     */
    public long poolBytes()
    {
        return allocator.poolBytes();
    }

    /**
     * @return largest block accepted.
     */
    public int maxBlockBytes()
    {
        return allocator.maxBlockBytes();
    }

    /**
     * @return bytes held by live entries, counted in whole size classes.
     */
    public long allocatedBytes()
    {
        return allocator.allocatedBytes();
    }

    /**
     * @return bytes still available without eviction.
     */
    public long freeBytes()
    {
        return allocator.freeBytes();
    }

    /**
     * @return sum of the lengths of live entries, PREPARING included.
     */
    public long payloadBytes()
    {
        return payloadBytes;
    }

    /**
     * @return entries with at least one pin.
     */
    public int pinnedBlocks()
    {
        return pinnedBlocks;
    }

    /**
     * @return entries evicted since construction.
     */
    public long evictions()
    {
        return evictions;
    }

    /**
     * @return maximum number of entries.
     */
    public int indexCapacity()
    {
        return index.capacity();
    }

    /**
     * @return the allocator, for gauges and diagnostics; do not allocate or free through it.
     */
    public SlabAllocator allocator()
    {
        return allocator;
    }

    /**
     * @return the index, for gauges and diagnostics; do not insert or remove through it.
     */
    public BlockIndex index()
    {
        return index;
    }

    /**
     * The entry the policy would evict next if no same-class block helps: the least recently used unpinned READY
     * entry over all classes.
     *
     * @return entry id or {@link #NOT_FOUND} if nothing is evictable.
     */
    public int oldestEvictable()
    {
        int oldest = NULL_ID;
        long oldestStamp = Long.MAX_VALUE;
        final int[] heads = lruHead;
        for (int i = 0; i < heads.length; i++)
        {
            final int head = heads[i];
            if (NULL_ID != head)
            {
                final long stamp = index.accessStamp(head);
                if (stamp < oldestStamp)
                {
                    oldestStamp = stamp;
                    oldest = head;
                }
            }
        }
        return oldest;
    }

    private boolean evictOldest()
    {
        final int victim = oldestEvictable();
        if (NULL_ID == victim)
        {
            return false;
        }
        evict(victim);
        return true;
    }

    private void evict(final int entryId)
    {
        listener.onEvict(this, entryId);
        observer.onGone(this, entryId);
        unlink(entryId);
        release(entryId);
        evictions++;
    }

    private void release(final int entryId)
    {
        allocator.free(index.poolOffset(entryId));
        payloadBytes -= index.length(entryId);
        index.remove(entryId);
    }

    private void linkMostRecent(final int entryId)
    {
        final int sizeClass = index.sizeClass(entryId);
        final int tail = lruTail[sizeClass];
        index.lruPrev(entryId, tail);
        index.lruNext(entryId, NULL_ID);
        if (NULL_ID == tail)
        {
            lruHead[sizeClass] = entryId;
        }
        else
        {
            index.lruNext(tail, entryId);
        }
        lruTail[sizeClass] = entryId;
    }

    private void linkLeastRecent(final int entryId)
    {
        final int sizeClass = index.sizeClass(entryId);
        final int head = lruHead[sizeClass];
        index.lruPrev(entryId, NULL_ID);
        index.lruNext(entryId, head);
        if (NULL_ID == head)
        {
            lruTail[sizeClass] = entryId;
        }
        else
        {
            index.lruPrev(head, entryId);
        }
        lruHead[sizeClass] = entryId;
    }

    private void unlink(final int entryId)
    {
        final int sizeClass = index.sizeClass(entryId);
        final int prev = index.lruPrev(entryId);
        final int next = index.lruNext(entryId);
        if (NULL_ID == prev)
        {
            lruHead[sizeClass] = next;
        }
        else
        {
            index.lruNext(prev, next);
        }
        if (NULL_ID == next)
        {
            lruTail[sizeClass] = prev;
        }
        else
        {
            index.lruPrev(next, prev);
        }
        index.lruPrev(entryId, NULL_ID);
        index.lruNext(entryId, NULL_ID);
    }

    private void checkLive(final int entryId)
    {
        if (!index.isLive(entryId))
        {
            throw new IllegalStateException("entry not in use: " + entryId);
        }
    }

    private void checkState(final int entryId, final byte expected)
    {
        checkLive(entryId);
        if (expected != index.state(entryId))
        {
            throw new IllegalStateException(
                "entry " + entryId + " is in state " + index.state(entryId) + ", expected " + expected);
        }
    }
}
