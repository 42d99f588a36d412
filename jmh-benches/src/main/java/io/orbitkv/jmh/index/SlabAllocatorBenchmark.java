package io.orbitkv.jmh.index;

import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import io.orbitkv.index.SlabAllocator;
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
 * Allocate/free pairs of the slab allocator: a steady-state churn of mixed sizes over a half-full pool, a small class
 * on a partly used slab, and a four-page run.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(1)
public class SlabAllocatorBenchmark
{
    private static final int RING = 1 << 12;
    private static final int RING_MASK = RING - 1;

    /**
     * A 4 GiB pool with a ring of live mixed-size chunks, oldest freed first.
     */
    @State(Scope.Thread)
    public static class Churn
    {
        SlabAllocator allocator;
        long[] live;
        int[] classes;
        int cursor;
        int smallClass;
        int runClass;

        /**
         * Fill the ring.
         */
        @Setup
        public void setup()
        {
            allocator = new SlabAllocator(4L << 30);
            live = new long[RING];
            classes = new int[RING];
            final SplittableRandom random = new SplittableRandom(17);
            for (int i = 0; i < RING; i++)
            {
                final int length = random.nextInt(8) == 0 ? 1 + random.nextInt(2 << 20) : 1 + random.nextInt(256 << 10);
                classes[i] = allocator.sizeClassOf(length);
                live[i] = allocator.allocate(classes[i]);
            }
            smallClass = allocator.sizeClassOf(16 << 10);
            runClass = allocator.sizeClassOf(8 << 20);
            allocator.allocate(smallClass);
        }
    }

    /**
     * @param state allocator and ring.
     * @return offset allocated.
     */
    @Benchmark
    public long mixedChurn(final Churn state)
    {
        final int slot = state.cursor++ & RING_MASK;
        final SlabAllocator allocator = state.allocator;
        final long old = state.live[slot];
        if (SlabAllocator.NO_SPACE != old)
        {
            allocator.free(old);
        }
        final long offset = allocator.allocate(state.classes[(slot * 7) & RING_MASK]);
        state.live[slot] = offset;
        return offset;
    }

    /**
     * @param state allocator.
     * @return offset allocated.
     */
    @Benchmark
    public long allocateFreeSmall(final Churn state)
    {
        final long offset = state.allocator.allocate(state.smallClass);
        state.allocator.free(offset);
        return offset;
    }

    /**
     * @param state allocator.
     * @return offset allocated.
     */
    @Benchmark
    public long allocateFreeRun(final Churn state)
    {
        final long offset = state.allocator.allocate(state.runClass);
        state.allocator.free(offset);
        return offset;
    }
}
