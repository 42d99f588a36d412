package io.orbitkv.index;

import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;

import com.sun.management.ThreadMXBean;
import io.orbitkv.codecs.CatalogLimits;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CandidateIndexTest
{
    private static final byte[] NAMESPACE_BYTES = "model=m;dtype=bf16".getBytes(StandardCharsets.US_ASCII);
    private static final UnsafeBuffer NAMESPACE = new UnsafeBuffer(NAMESPACE_BYTES);
    private static final int HASH_LENGTH = 32;
    private static final long TTL_MS = 5_000;

    private final UnsafeBuffer hash = new UnsafeBuffer(new byte[HASH_LENGTH]);
    private final CandidateSet in = new CandidateSet();
    private final CandidateSet out = new CandidateSet();

    private UnsafeBuffer hash(final int n)
    {
        hash.putInt(0, n);
        hash.putInt(4, ~n);
        return hash;
    }

    private boolean put(final CandidateIndex index, final int key, final int candidates, final long nowMs)
    {
        in.clear();
        for (int i = 0; i < candidates; i++)
        {
            in.add(i, 100 + i, 200 + i, 1000 + key * 10 + i, i & 1, 4096);
        }
        return index.put(NAMESPACE, 0, NAMESPACE_BYTES.length, hash(key), 0, HASH_LENGTH, in, nowMs);
    }

    private int get(final CandidateIndex index, final int key, final long nowMs)
    {
        return index.get(NAMESPACE, 0, NAMESPACE_BYTES.length, hash(key), 0, HASH_LENGTH, nowMs, out);
    }

    @Test
    void shouldUseTheDesignBudgetAndTtlByDefault()
    {
        final CandidateIndex index = new CandidateIndex();
        assertEquals(CatalogLimits.CANDIDATE_INDEX_BUDGET_BYTES, index.budgetBytes());
        assertEquals(CatalogLimits.CANDIDATE_TTL_MS, index.ttlMs());
        assertEquals(4, CandidateSet.CAPACITY);
    }

    @Test
    void shouldExpireAtTheTtlEdgeAndNotExtendTheTtlOnReads()
    {
        final CandidateIndex index = new CandidateIndex(1 << 20, TTL_MS, new NamespaceTable());
        put(index, 1, 2, 1_000);
        assertEquals(2, get(index, 1, 1_000));
        assertEquals(2, get(index, 1, 5_999));
        assertEquals(0, get(index, 1, 6_000));
        assertEquals(1, index.expirations());
        assertEquals(0, index.size());
        assertEquals(0, index.logicalBytes());
    }

    @Test
    void shouldRestartTheTtlWhenFreshEvidenceIsPut()
    {
        final CandidateIndex index = new CandidateIndex(1 << 20, TTL_MS, new NamespaceTable());
        put(index, 1, 1, 0);
        put(index, 1, 3, 4_000);
        assertEquals(3, get(index, 1, 8_999));
        assertEquals(0, get(index, 1, 9_000));
    }

    @Test
    void shouldNotCacheMissesAndKeepKnownEntriesWhenALookupComesBackEmpty()
    {
        final CandidateIndex index = new CandidateIndex(1 << 20, TTL_MS, new NamespaceTable());
        put(index, 1, 2, 0);
        assertFalse(put(index, 2, 0, 0));
        assertFalse(put(index, 1, 0, 0));
        assertEquals(1, index.size());
        assertEquals(2, get(index, 1, 10));
        assertEquals(0, get(index, 2, 10));
        assertEquals(2, index.emptyPutsIgnored());
        assertEquals(1, index.misses());
    }

    @Test
    void shouldEvictTheLeastRecentlyUsedEntryAtTheLogicalBudgetEdge()
    {
        final long entry = CandidateIndex.entryBytes(HASH_LENGTH, 1);
        final CandidateIndex index = new CandidateIndex(entry * 3, TTL_MS, new NamespaceTable());
        put(index, 1, 1, 0);
        put(index, 2, 1, 0);
        put(index, 3, 1, 0);
        assertEquals(entry * 3, index.logicalBytes());
        assertEquals(0, index.evictions());
        get(index, 1, 1);
        put(index, 4, 1, 2);
        assertEquals(1, index.evictions());
        assertEquals(0, get(index, 2, 3));
        assertEquals(1, get(index, 1, 3));
        assertEquals(1, get(index, 3, 3));
        assertEquals(1, get(index, 4, 3));
        assertTrue(index.logicalBytes() <= index.budgetBytes());
    }

    @Test
    void shouldRemoveOnlyTheRejectedCandidateVersion()
    {
        final CandidateIndex index = new CandidateIndex(1 << 20, TTL_MS, new NamespaceTable());
        put(index, 7, 3, 0);
        final long before = index.logicalBytes();
        assertTrue(index.removeCandidate(NAMESPACE, 0, NAMESPACE_BYTES.length, hash(7), 0, HASH_LENGTH, 101, 201, 1071));
        assertFalse(index.removeCandidate(NAMESPACE, 0, NAMESPACE_BYTES.length, hash(7), 0, HASH_LENGTH, 101, 201, 1071));
        assertFalse(index.removeCandidate(NAMESPACE, 0, NAMESPACE_BYTES.length, hash(7), 0, HASH_LENGTH, 100, 200, 9999));
        assertEquals(before - CandidateIndex.CANDIDATE_BYTES, index.logicalBytes());
        assertEquals(2, get(index, 7, 1));
        assertEquals(1070, out.insertionSequence(0));
        assertEquals(1072, out.insertionSequence(1));
        index.removeCandidate(NAMESPACE, 0, NAMESPACE_BYTES.length, hash(7), 0, HASH_LENGTH, 100, 200, 1070);
        index.removeCandidate(NAMESPACE, 0, NAMESPACE_BYTES.length, hash(7), 0, HASH_LENGTH, 102, 202, 1072);
        assertEquals(0, index.size());
        assertEquals(0, index.logicalBytes());
    }

    @Test
    void shouldNotAllocateOnGetAndPutOnceWarm()
    {
        final CandidateIndex index = new CandidateIndex(64 * 1024, TTL_MS, new NamespaceTable());
        final ThreadMXBean threads = (ThreadMXBean)ManagementFactory.getThreadMXBean();
        for (int i = 0; i < 20_000; i++)
        {
            put(index, i, 1 + (i & 3), i);
            get(index, i - 3, i);
        }
        final long before = threads.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < 100_000; i++)
        {
            put(index, i, 1 + (i & 3), i);
            get(index, i - 3, i);
        }
        final long allocated = threads.getCurrentThreadAllocatedBytes() - before;
        assertTrue(allocated < 1024, "allocated " + allocated);
        assertTrue(index.evictions() > 0);
    }
}
