package io.orbitkv.index;

import io.orbitkv.codecs.CatalogLimits;
import io.orbitkv.codecs.StateKeyFlyweight;
import org.agrona.BufferUtil;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Requester-side index of positive discovery hints: StateKey to up to four candidates, off-heap, LRU inside a logical
 * byte budget (default {@link CatalogLimits#CANDIDATE_INDEX_BUDGET_BYTES}) with a fixed TTL (default
 * {@link CatalogLimits#CANDIDATE_TTL_MS}).
 * <p>
 * Rules from the design ("Implemented discovery behavior"):
 * <ul>
 *     <li>reads do not extend the TTL: expiry counts from the put that delivered the evidence; a hit only refreshes
 *     LRU recency;</li>
 *     <li>misses are not cached: a put with no candidates stores nothing and leaves an existing entry alone (an empty
 *     row is not proof of absence), so a failed lookup keeps any already-known prefix;</li>
 *     <li>a source rejection removes only the attempted candidate versions ({@link #removeCandidate}).</li>
 * </ul>
 * Logical bytes of an entry = {@link #ENTRY_OVERHEAD_BYTES} + hash length + {@link #CANDIDATE_BYTES} per candidate;
 * namespaces are interned once in a {@link NamespaceTable}. The physical table holds as many entries as the smallest
 * logical entry allows, so the logical budget is what binds. Single threaded (the peer agent owns it); get and put
 * allocate nothing. The clock is passed in (milliseconds), so tests control time.
 */
public final class CandidateIndex
{
    /**
     * Logical bytes charged per entry besides its hash and candidates (record header, slot, LRU links).
     */
    public static final int ENTRY_OVERHEAD_BYTES = 64;

    /**
     * Bytes of one stored candidate: node int, tier int, UUID 16, insertion sequence 8, byte size 8.
     */
    public static final int CANDIDATE_BYTES = 40;

    private static final int NODE_OFFSET = 0;
    private static final int TIER_OFFSET = 4;
    private static final int MSB_OFFSET = 8;
    private static final int LSB_OFFSET = 16;
    private static final int SEQUENCE_OFFSET = 24;
    private static final int SIZE_OFFSET = 32;
    private static final int ENTRY_CANDIDATE_BYTES = CANDIDATE_BYTES * CandidateSet.CAPACITY;

    private final long budgetBytes;
    private final long ttlMs;
    private final NamespaceTable namespaces;
    private final BlockIndex index;
    private final UnsafeBuffer candidates;

    private int lruHead = BlockIndex.NULL_ID;
    private int lruTail = BlockIndex.NULL_ID;
    private long logicalBytes;

    private long hits;
    private long misses;
    private long expirations;
    private long evictions;
    private long puts;
    private long emptyPutsIgnored;
    private long candidateRemovals;
    private long namespaceLimitRejections;
    private long oversizeRejections;

    /**
     * Index with the design's budget and TTL.
     */
    public CandidateIndex()
    {
        this(CatalogLimits.CANDIDATE_INDEX_BUDGET_BYTES, CatalogLimits.CANDIDATE_TTL_MS, new NamespaceTable());
    }

    /**
     * @param budgetBytes logical byte budget.
     * @param ttlMs       lifetime of evidence from its put.
     * @param namespaces  namespace interning table.
     */
    public CandidateIndex(final long budgetBytes, final long ttlMs, final NamespaceTable namespaces)
    {
        if (budgetBytes < ENTRY_OVERHEAD_BYTES + 1 + CANDIDATE_BYTES || ttlMs <= 0)
        {
            throw new IllegalArgumentException("budget too small or ttl not positive: " + budgetBytes + ", " + ttlMs);
        }
        this.budgetBytes = budgetBytes;
        this.ttlMs = ttlMs;
        this.namespaces = namespaces;
        final int maxEntries = (int)Math.min(BlockIndex.MAX_CAPACITY, budgetBytes / (ENTRY_OVERHEAD_BYTES + 1 + CANDIDATE_BYTES));
        index = new BlockIndex(CatalogRecordTable.budgetFor(maxEntries));
        candidates = new UnsafeBuffer(BufferUtil.allocateDirectAligned(index.capacity() * ENTRY_CANDIDATE_BYTES, 64));
    }

    /**
     * Logical bytes an entry with this hash length and candidate count is charged.
     */
    public static long entryBytes(final int hashLength, final int candidateCount)
    {
        return ENTRY_OVERHEAD_BYTES + hashLength + (long)candidateCount * CANDIDATE_BYTES;
    }

    /**
     * {@link #put(DirectBuffer, int, int, DirectBuffer, int, int, CandidateSet, long)} for a key in a flyweight (its
     * namespace id is not used: this index keeps its own namespace table).
     */
    public boolean put(final StateKeyFlyweight key, final CandidateSet set, final long nowMs)
    {
        return put(key.namespaceBuffer(), key.namespaceOffset(), key.namespaceLength(), key.hashBuffer(),
            key.hashOffset(), key.hashLength(), set, nowMs);
    }

    /**
     * {@link #get(DirectBuffer, int, int, DirectBuffer, int, int, long, CandidateSet)} for a key in a flyweight (its
     * namespace id is not used: this index keeps its own namespace table).
     */
    public int get(final StateKeyFlyweight key, final long nowMs, final CandidateSet out)
    {
        return get(key.namespaceBuffer(), key.namespaceOffset(), key.namespaceLength(), key.hashBuffer(),
            key.hashOffset(), key.hashLength(), nowMs, out);
    }

    /**
     * Store fresh evidence for a key, replacing what was known for it and restarting its TTL.
     *
     * @return true when stored; false when the set was empty (misses are not cached) or the namespace limit was hit.
     */
    public boolean put(
        final DirectBuffer namespace,
        final int namespaceOffset,
        final int namespaceLength,
        final DirectBuffer hash,
        final int hashOffset,
        final int hashLength,
        final CandidateSet set,
        final long nowMs)
    {
        if (0 == set.count)
        {
            emptyPutsIgnored++;
            return false;
        }
        final int namespaceId = namespaces.lookupOrRegister(namespace, namespaceOffset, namespaceLength);
        if (namespaceId < 0)
        {
            namespaceLimitRejections++;
            return false;
        }
        int id = index.find(namespaceId, hash, hashOffset, hashLength);
        if (id >= 0)
        {
            unlink(id);
            logicalBytes -= index.length(id);
            index.remove(id);
        }
        final long bytes = entryBytes(hashLength, set.count);
        if (bytes > budgetBytes)
        {
            oversizeRejections++;
            return false;
        }
        while (lruTail != BlockIndex.NULL_ID && (logicalBytes + bytes > budgetBytes || index.isFull()))
        {
            evictions++;
            removeEntry(lruTail);
        }
        id = index.insert(namespaceId, hash, hashOffset, hashLength);
        index.state(id, BlockIndex.STATE_READY);
        index.length(id, (int)bytes);
        index.accessStamp(id, nowMs);
        index.pinCount(id, set.count);
        final int base = id * ENTRY_CANDIDATE_BYTES;
        for (int i = 0; i < set.count; i++)
        {
            final int at = base + i * CANDIDATE_BYTES;
            candidates.putInt(at + NODE_OFFSET, set.ownerNode[i]);
            candidates.putInt(at + TIER_OFFSET, set.tier[i]);
            candidates.putLong(at + MSB_OFFSET, set.incarnationMsb[i]);
            candidates.putLong(at + LSB_OFFSET, set.incarnationLsb[i]);
            candidates.putLong(at + SEQUENCE_OFFSET, set.insertionSequence[i]);
            candidates.putLong(at + SIZE_OFFSET, set.byteSize[i]);
        }
        linkHead(id);
        logicalBytes += bytes;
        puts++;
        return true;
    }

    /**
     * Candidates known for a key. A hit refreshes LRU recency but not the TTL; an expired entry is removed.
     *
     * @return candidates copied into {@code out}; 0 on a miss.
     */
    public int get(
        final DirectBuffer namespace,
        final int namespaceOffset,
        final int namespaceLength,
        final DirectBuffer hash,
        final int hashOffset,
        final int hashLength,
        final long nowMs,
        final CandidateSet out)
    {
        out.clear();
        final int id = find(namespace, namespaceOffset, namespaceLength, hash, hashOffset, hashLength);
        if (id < 0)
        {
            misses++;
            return 0;
        }
        if (nowMs - index.accessStamp(id) >= ttlMs)
        {
            expirations++;
            misses++;
            removeEntry(id);
            return 0;
        }
        final int count = index.pinCount(id);
        final int base = id * ENTRY_CANDIDATE_BYTES;
        for (int i = 0; i < count; i++)
        {
            final int at = base + i * CANDIDATE_BYTES;
            out.add(
                candidates.getInt(at + NODE_OFFSET),
                candidates.getLong(at + MSB_OFFSET),
                candidates.getLong(at + LSB_OFFSET),
                candidates.getLong(at + SEQUENCE_OFFSET),
                candidates.getInt(at + TIER_OFFSET),
                candidates.getLong(at + SIZE_OFFSET));
        }
        unlink(id);
        linkHead(id);
        hits++;
        return count;
    }

    /**
     * Remove one candidate version of a key (a source rejected it); other candidates of the key stay.
     *
     * @return true when that exact version was present and removed.
     */
    public boolean removeCandidate(
        final DirectBuffer namespace,
        final int namespaceOffset,
        final int namespaceLength,
        final DirectBuffer hash,
        final int hashOffset,
        final int hashLength,
        final long incarnationMsb,
        final long incarnationLsb,
        final long insertionSequence)
    {
        final int id = find(namespace, namespaceOffset, namespaceLength, hash, hashOffset, hashLength);
        if (id < 0)
        {
            return false;
        }
        final int count = index.pinCount(id);
        final int base = id * ENTRY_CANDIDATE_BYTES;
        for (int i = 0; i < count; i++)
        {
            final int at = base + i * CANDIDATE_BYTES;
            if (candidates.getLong(at + MSB_OFFSET) == incarnationMsb &&
                candidates.getLong(at + LSB_OFFSET) == incarnationLsb &&
                candidates.getLong(at + SEQUENCE_OFFSET) == insertionSequence)
            {
                candidateRemovals++;
                if (1 == count)
                {
                    removeEntry(id);
                    return true;
                }
                final int last = base + (count - 1) * CANDIDATE_BYTES;
                if (at != last)
                {
                    candidates.putBytes(at, candidates, last, CANDIDATE_BYTES);
                }
                index.pinCount(id, count - 1);
                index.length(id, index.length(id) - CANDIDATE_BYTES);
                logicalBytes -= CANDIDATE_BYTES;
                return true;
            }
        }
        return false;
    }

    public int size()
    {
        return index.size();
    }

    public long logicalBytes()
    {
        return logicalBytes;
    }

    public long budgetBytes()
    {
        return budgetBytes;
    }

    public long ttlMs()
    {
        return ttlMs;
    }

    public long hits()
    {
        return hits;
    }

    public long misses()
    {
        return misses;
    }

    public long expirations()
    {
        return expirations;
    }

    public long evictions()
    {
        return evictions;
    }

    public long puts()
    {
        return puts;
    }

    public long emptyPutsIgnored()
    {
        return emptyPutsIgnored;
    }

    public long candidateRemovals()
    {
        return candidateRemovals;
    }

    public long namespaceLimitRejections()
    {
        return namespaceLimitRejections;
    }

    /**
     * @return puts refused because one entry alone exceeds the logical budget.
     */
    public long oversizeRejections()
    {
        return oversizeRejections;
    }

    private int find(
        final DirectBuffer namespace,
        final int namespaceOffset,
        final int namespaceLength,
        final DirectBuffer hash,
        final int hashOffset,
        final int hashLength)
    {
        final int namespaceId = namespaces.lookup(namespace, namespaceOffset, namespaceLength);
        if (namespaceId < 0)
        {
            return BlockIndex.NOT_FOUND;
        }
        return index.find(namespaceId, hash, hashOffset, hashLength);
    }

    private void removeEntry(final int id)
    {
        unlink(id);
        logicalBytes -= index.length(id);
        index.remove(id);
    }

    private void linkHead(final int id)
    {
        index.lruPrev(id, BlockIndex.NULL_ID);
        index.lruNext(id, lruHead);
        if (lruHead != BlockIndex.NULL_ID)
        {
            index.lruPrev(lruHead, id);
        }
        lruHead = id;
        if (lruTail == BlockIndex.NULL_ID)
        {
            lruTail = id;
        }
    }

    private void unlink(final int id)
    {
        final int prev = index.lruPrev(id);
        final int next = index.lruNext(id);
        if (prev != BlockIndex.NULL_ID)
        {
            index.lruNext(prev, next);
        }
        else
        {
            lruHead = next;
        }
        if (next != BlockIndex.NULL_ID)
        {
            index.lruPrev(next, prev);
        }
        else
        {
            lruTail = prev;
        }
        index.lruPrev(id, BlockIndex.NULL_ID);
        index.lruNext(id, BlockIndex.NULL_ID);
    }
}
