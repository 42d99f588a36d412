package io.orbitkv.jmh.index;

import java.util.concurrent.TimeUnit;

import io.orbitkv.index.BlockStore;
import org.agrona.collections.Hashing;
import org.agrona.collections.Long2LongHashMap;
import org.agrona.concurrent.UnsafeBuffer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Lookup and publish costs of the DRAM tier's block store with 32-byte hashes, on a store whose index is about 87%
 * full (long probe clusters are the realistic case), and on a full pool where every publish evicts.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(1)
public class BlockIndexBenchmark
{
    private static final int HASH_LENGTH = 32;
    private static final int NAMESPACE_ID = 1;
    private static final int BLOCK_BYTES = 16 * 1024;
    private static final int KEY_COUNT = 1 << 17;
    private static final int KEY_MASK = KEY_COUNT - 1;

    /**
     * A store holding {@link #KEY_COUNT} ready blocks, with disjoint key sets for misses and publish churn.
     */
    @State(Scope.Thread)
    public static class FullishStore
    {
        BlockStore store;
        UnsafeBuffer hitKeys;
        UnsafeBuffer missKeys;
        UnsafeBuffer churnKeys;
        int cursor;

        /**
         * Build and fill the store.
         */
        @Setup
        public void setup()
        {
            store = new BlockStore(4L << 30, 64 << 20, 20L << 20, BlockStore.NO_OP_LISTENER);
            hitKeys = keys(1);
            missKeys = keys(2);
            churnKeys = keys(3);
            for (int i = 0; i < KEY_COUNT; i++)
            {
                final int id = store.reserve(NAMESPACE_ID, hitKeys, i * HASH_LENGTH, HASH_LENGTH, BLOCK_BYTES);
                if (id < 0)
                {
                    throw new IllegalStateException("setup reserve failed: " + id);
                }
                store.seal(id);
            }
        }
    }

    /**
     * A pool holding as many blocks as it fits, so every publish evicts the least recently used block.
     */
    @State(Scope.Thread)
    public static class FullPool
    {
        BlockStore store;
        UnsafeBuffer keys;
        int cursor;

        /**
         * Build and fill the store.
         */
        @Setup
        public void setup()
        {
            store = new BlockStore(256L << 20, 64 << 20, 8L << 20, BlockStore.NO_OP_LISTENER);
            keys = keys(4);
            while (store.evictions() == 0)
            {
                final int slot = cursor++ & KEY_MASK;
                final int id = store.reserve(NAMESPACE_ID, keys, slot * HASH_LENGTH, HASH_LENGTH, BLOCK_BYTES);
                store.seal(id);
            }
        }
    }

    /**
     * Anchor: Agrona's on-heap {@code Long2LongHashMap} holding as many entries, probed in the same order with the
     * first 8 bytes of each hash as the key. It shows what a primitive hash probe costs on this machine; the block
     * index also compares every byte of a 32-byte key and its namespace, off-heap.
     */
    @State(Scope.Thread)
    public static class AnchorMap
    {
        Long2LongHashMap map;
        UnsafeBuffer hitKeys;
        int cursor;

        /**
         * Build and fill the map.
         */
        @Setup
        public void setup()
        {
            map = new Long2LongHashMap(KEY_COUNT * 2, Hashing.DEFAULT_LOAD_FACTOR, -1);
            hitKeys = keys(1);
            for (int i = 0; i < KEY_COUNT; i++)
            {
                map.put(hitKeys.getLong(i * HASH_LENGTH), i);
            }
        }
    }

    /**
     * @param state map and keys.
     * @return value found.
     */
    @Benchmark
    public long anchorLong2LongGetHit(final AnchorMap state)
    {
        final int slot = state.cursor++ & KEY_MASK;
        return state.map.get(state.hitKeys.getLong(slot * HASH_LENGTH));
    }

    /**
     * @param state store and keys.
     * @return id found.
     */
    @Benchmark
    public int findHit(final FullishStore state)
    {
        final int slot = state.cursor++ & KEY_MASK;
        return state.store.find(NAMESPACE_ID, state.hitKeys, slot * HASH_LENGTH, HASH_LENGTH);
    }

    /**
     * @param state store and keys.
     * @return NOT_FOUND.
     */
    @Benchmark
    public int findMiss(final FullishStore state)
    {
        final int slot = state.cursor++ & KEY_MASK;
        return state.store.find(NAMESPACE_ID, state.missKeys, slot * HASH_LENGTH, HASH_LENGTH);
    }

    /**
     * Publish a new block and drop it again, leaving the store as it was.
     *
     * @param state store and keys.
     * @return id used.
     */
    @Benchmark
    public int reserveSealRemove(final FullishStore state)
    {
        final BlockStore store = state.store;
        final int slot = state.cursor++ & KEY_MASK;
        final int id = store.reserve(NAMESPACE_ID, state.churnKeys, slot * HASH_LENGTH, HASH_LENGTH, BLOCK_BYTES);
        store.seal(id);
        store.remove(id);
        return id;
    }

    /**
     * Publish a new block into a full pool: find miss, evict the LRU block, allocate, insert, seal.
     *
     * @param state store and keys.
     * @return id used.
     */
    @Benchmark
    public int reserveSealEvicting(final FullPool state)
    {
        final BlockStore store = state.store;
        final int slot = state.cursor++ & KEY_MASK;
        final int id = store.reserve(NAMESPACE_ID, state.keys, slot * HASH_LENGTH, HASH_LENGTH, BLOCK_BYTES);
        store.seal(id);
        return id;
    }

    static UnsafeBuffer keys(final int seed)
    {
        final UnsafeBuffer keys = new UnsafeBuffer(new byte[KEY_COUNT * HASH_LENGTH]);
        long state = 0x9E3779B97F4A7C15L * seed + 0x632BE59BD9B4E019L;
        for (int offset = 0; offset < keys.capacity(); offset += Long.BYTES)
        {
            state += 0x9E3779B97F4A7C15L;
            long z = state;
            z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
            z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
            keys.putLong(offset, z ^ (z >>> 31));
        }
        return keys;
    }
}
