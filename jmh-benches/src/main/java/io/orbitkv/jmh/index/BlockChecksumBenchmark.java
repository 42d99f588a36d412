package io.orbitkv.jmh.index;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.Collection;
import java.util.Locale;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.zip.CRC32C;

import io.orbitkv.index.BlockChecksum;
import io.orbitkv.jmh.BenchMain;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.results.format.ResultFormatType;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;

/**
 * What the publish checksum costs: copying a block from off-heap memory into an off-heap pool (the anchor, what
 * Publish did before checksums), the same copy followed by a CRC32C over the bytes just landed, the copy and sum
 * interleaved in pieces of 16, 32 (what Publish does), 64 and 256 KiB, the source summed before each piece is copied,
 * the copy with the sum handed to a second thread ({@link BackgroundSums}: the design that moves the sum off the
 * agent, measured and not taken), the copy through libc's {@code memcpy} with and without the sum, the sum alone from
 * memory and from cache, and the sum through a new buffer view per
 * call (the allocating way the pool's {@link BlockChecksum} views avoid). Blocks rotate through 64 MiB regions so
 * that they come from memory, not from the cache the previous operation left warm.
 * <p>
 * {@link #main} runs them in one JVM fork per block size and prints each one's time as a ratio to the copy.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class BlockChecksumBenchmark
{
    private static final long REGION_BYTES = 64L << 20;
    private static final int PIECE_BYTES = 64 * 1024;
    private static final MethodHandle MEMCPY = Linker.nativeLinker().downcallHandle(
        Linker.nativeLinker().defaultLookup().find("memcpy").orElseThrow(),
        FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG),
        Linker.Option.critical(false));

    /**
     * Source and pool regions, a block size and the slot the next operation uses.
     */
    @State(Scope.Thread)
    public static class Regions
    {
        /** Block length in bytes. */
        @Param({"262144", "2097152"})
        public int blockBytes;

        Arena arena;
        MemorySegment source;
        MemorySegment pool;
        BlockChecksum poolChecksum;
        BlockChecksum sourceChecksum;
        BackgroundSums background;
        final CRC32C crc = new CRC32C();
        int slots;
        int cursor;

        /**
         * Map and fill both regions.
         */
        @Setup(Level.Trial)
        public void setup()
        {
            arena = Arena.ofShared();
            source = arena.allocate(REGION_BYTES, 4096);
            pool = arena.allocate(REGION_BYTES, 4096);
            for (long i = 0; i < REGION_BYTES; i += Long.BYTES)
            {
                source.set(ValueLayout.JAVA_LONG_UNALIGNED, i, i * 0x9E3779B97F4A7C15L);
            }
            pool.fill((byte)1);
            poolChecksum = new BlockChecksum(pool);
            sourceChecksum = new BlockChecksum(source);
            background = new BackgroundSums(pool);
            slots = (int)(REGION_BYTES / blockBytes);
        }

        /**
         * Unmap.
         */
        @TearDown(Level.Trial)
        public void tearDown() throws InterruptedException
        {
            background.close();
            arena.close();
        }

        long nextOffset()
        {
            final int slot = cursor;
            cursor = slot + 1 == slots ? 0 : slot + 1;
            return (long)slot * blockBytes;
        }
    }

    /**
     * The anchor: copy one block into the pool.
     *
     * @param state regions.
     * @return a byte of the copy.
     */
    @Benchmark
    public byte copy(final Regions state)
    {
        final long offset = state.nextOffset();
        MemorySegment.copy(state.source, offset, state.pool, offset, state.blockBytes);
        return state.pool.get(ValueLayout.JAVA_BYTE, offset);
    }

    /**
     * Publish's path: copy one block into the pool, then sum the pool's bytes through its preallocated views.
     *
     * @param state regions.
     * @return the sum.
     */
    @Benchmark
    public long copyThenCrc32c(final Regions state)
    {
        final long offset = state.nextOffset();
        MemorySegment.copy(state.source, offset, state.pool, offset, state.blockBytes);
        final CRC32C crc = state.crc;
        crc.reset();
        state.poolChecksum.update(crc, offset, state.blockBytes);
        return crc.getValue();
    }

    /**
     * Copy and sum in 64 KiB pieces, each piece summed while it is still in cache.
     *
     * @param state regions.
     * @return the sum.
     */
    @Benchmark
    public long copyAndCrc32cPer64KiB(final Regions state)
    {
        final long offset = state.nextOffset();
        final CRC32C crc = state.crc;
        crc.reset();
        for (long done = 0; done < state.blockBytes; done += PIECE_BYTES)
        {
            final long bytes = Math.min(PIECE_BYTES, state.blockBytes - done);
            MemorySegment.copy(state.source, offset + done, state.pool, offset + done, bytes);
            state.poolChecksum.update(crc, offset + done, bytes);
        }
        return crc.getValue();
    }

    /**
     * The copy through libc's {@code memcpy} (a critical downcall on raw addresses) instead of
     * {@code MemorySegment.copy}.
     *
     * @param state regions.
     * @return a byte of the copy.
     * @throws Throwable if the downcall fails.
     */
    @Benchmark
    public byte memcpy(final Regions state) throws Throwable
    {
        final long offset = state.nextOffset();
        final long ignored = (long)MEMCPY.invokeExact(
            state.pool.address() + offset, state.source.address() + offset, (long)state.blockBytes);
        return state.pool.get(ValueLayout.JAVA_BYTE, offset);
    }

    /**
     * Copy through libc's {@code memcpy} and sum, in 64 KiB pieces.
     *
     * @param state regions.
     * @return the sum.
     * @throws Throwable if the downcall fails.
     */
    @Benchmark
    public long memcpyAndCrc32cPer64KiB(final Regions state) throws Throwable
    {
        final long offset = state.nextOffset();
        final CRC32C crc = state.crc;
        crc.reset();
        final long pool = state.pool.address();
        final long source = state.source.address();
        for (long done = 0; done < state.blockBytes; done += PIECE_BYTES)
        {
            final long bytes = Math.min(PIECE_BYTES, state.blockBytes - done);
            final long ignored = (long)MEMCPY.invokeExact(pool + offset + done, source + offset + done, bytes);
            state.poolChecksum.update(crc, offset + done, bytes);
        }
        return crc.getValue();
    }

    /**
     * Copy and sum in 16 KiB pieces.
     *
     * @param state regions.
     * @return the sum.
     */
    @Benchmark
    public long copyAndCrc32cPer16KiB(final Regions state)
    {
        return copyAndSumInPieces(state, 16 * 1024);
    }

    /**
     * Copy and sum in 32 KiB pieces.
     *
     * @param state regions.
     * @return the sum.
     */
    @Benchmark
    public long copyAndCrc32cPer32KiB(final Regions state)
    {
        return copyAndSumInPieces(state, 32 * 1024);
    }

    /**
     * Copy and sum in 256 KiB pieces.
     *
     * @param state regions.
     * @return the sum.
     */
    @Benchmark
    public long copyAndCrc32cPer256KiB(final Regions state)
    {
        return copyAndSumInPieces(state, 256 * 1024);
    }

    /**
     * Sum each piece of the source first (pulling it into cache), then copy it from cache: the same bytes summed,
     * in the other order.
     *
     * @param state regions.
     * @return the sum.
     */
    @Benchmark
    public long crc32cSourceThenCopyPer32KiB(final Regions state)
    {
        final long offset = state.nextOffset();
        final CRC32C crc = state.crc;
        crc.reset();
        for (long done = 0; done < state.blockBytes; done += 32 * 1024)
        {
            final long bytes = Math.min(32 * 1024, state.blockBytes - done);
            state.sourceChecksum.update(crc, offset + done, bytes);
            MemorySegment.copy(state.source, offset + done, state.pool, offset + done, bytes);
        }
        return crc.getValue();
    }

    /**
     * The sum alone of a block already in cache (the same block every time, 256 KiB at most): the sum's own speed,
     * with no memory traffic.
     *
     * @param state regions.
     * @return the sum.
     */
    @Benchmark
    public long crc32cHot(final Regions state)
    {
        final CRC32C crc = state.crc;
        crc.reset();
        state.poolChecksum.update(crc, 0, Math.min(state.blockBytes, 256 * 1024));
        return crc.getValue();
    }

    private static long copyAndSumInPieces(final Regions state, final int pieceBytes)
    {
        final long offset = state.nextOffset();
        final CRC32C crc = state.crc;
        crc.reset();
        for (long done = 0; done < state.blockBytes; done += pieceBytes)
        {
            final long bytes = Math.min(pieceBytes, state.blockBytes - done);
            MemorySegment.copy(state.source, offset + done, state.pool, offset + done, bytes);
            state.poolChecksum.update(crc, offset + done, bytes);
        }
        return crc.getValue();
    }

    /**
     * Copy the block here and hand its sum to a second thread, so this thread goes on copying the next block while
     * the last one is summed (waiting only when {@link BackgroundSums#SLOTS} sums are outstanding). Time per block is
     * the copying thread's, in the steady state.
     *
     * @param state regions.
     * @return the sums finished so far, xored.
     */
    @Benchmark
    public int copyWithBackgroundCrc32c(final Regions state)
    {
        final long offset = state.nextOffset();
        MemorySegment.copy(state.source, offset, state.pool, offset, state.blockBytes);
        final BackgroundSums background = state.background;
        while (!background.submit(offset, state.blockBytes))
        {
            if (0 == background.drain())
            {
                Thread.onSpinWait();
            }
        }
        background.drain();
        return background.sums;
    }

    /**
     * The sum alone, of a block in the pool.
     *
     * @param state regions.
     * @return the sum.
     */
    @Benchmark
    public long crc32cOnly(final Regions state)
    {
        final long offset = state.nextOffset();
        final CRC32C crc = state.crc;
        crc.reset();
        state.poolChecksum.update(crc, offset, state.blockBytes);
        return crc.getValue();
    }

    /**
     * The sum through a new slice and buffer view per call: what the preallocated views avoid (see its B/op).
     *
     * @param state regions.
     * @return the sum.
     */
    @Benchmark
    public long crc32cNewViewPerCall(final Regions state)
    {
        final long offset = state.nextOffset();
        final CRC32C crc = state.crc;
        crc.reset();
        crc.update(state.pool.asSlice(offset, state.blockBytes).asByteBuffer());
        return crc.getValue();
    }

    /**
     * Run every benchmark of this class and print each one's time per block as a ratio to {@link #copy} at the same
     * block size, from the same run.
     *
     * @param args optional: the JSON result file, then a regular expression of the benchmark methods to run (the
     *             copy anchor always runs), then the number of measurement iterations.
     * @throws Exception if JMH fails.
     */
    public static void main(final String[] args) throws Exception
    {
        final String methods = args.length > 1 ? "(copy|" + args[1] + ")" : "";
        final ChainedOptionsBuilder options = new OptionsBuilder()
            .include(BlockChecksumBenchmark.class.getName() + "\\." + methods + (methods.isEmpty() ? "" : "$"))
            .addProfiler("gc")
            .jvmArgsAppend(BenchMain.jvmFlags().split(" "));
        if (args.length > 0)
        {
            options.result(args[0]).resultFormat(ResultFormatType.JSON);
        }
        if (args.length > 2)
        {
            options.measurementIterations(Integer.parseInt(args[2]));
        }
        final Collection<RunResult> results = new Runner(options.build()).run();

        final TreeMap<String, TreeMap<String, Double>> byBlock = new TreeMap<>();
        for (final RunResult result : results)
        {
            final String block = result.getParams().getParam("blockBytes");
            final String name = result.getParams().getBenchmark();
            byBlock.computeIfAbsent(block, (k) -> new TreeMap<>())
                .put(name.substring(name.lastIndexOf('.') + 1), result.getPrimaryResult().getScore());
        }
        System.out.println();
        System.out.println("Ratio of time per block to the copy anchor, same run:");
        for (final var entry : byBlock.entrySet())
        {
            final int blockBytes = Integer.parseInt(entry.getKey());
            final double copyUs = entry.getValue().get("copy");
            for (final var bench : entry.getValue().entrySet())
            {
                final double us = bench.getValue();
                System.out.println(String.format(Locale.ROOT, "  block %7d B  %-22s %9.2f us/op  %6.2f GB/s  %5.2fx copy",
                    blockBytes, bench.getKey(), us, blockBytes / us / 1e3, us / copyUs));
            }
        }
    }

    /**
     * Sums ranges of a region on a thread of its own: a ring of {@link #SLOTS} jobs from one submitter, summed in
     * order, the thread parked while the ring is empty. Allocates nothing per job.
     */
    static final class BackgroundSums
    {
        static final int SLOTS = 16;

        private final long[] offsets = new long[SLOTS];
        private final long[] lengths = new long[SLOTS];
        private final int[] results = new int[SLOTS];
        private final AtomicLong submitted = new AtomicLong();
        private final AtomicLong completed = new AtomicLong();
        private final Thread thread;
        private volatile boolean parking;
        private volatile boolean running = true;
        private long drained;
        int sums;

        BackgroundSums(final MemorySegment region)
        {
            thread = new Thread(() -> run(new BlockChecksum(region)), "jmh-background-crc32c");
            thread.setDaemon(true);
            thread.start();
        }

        boolean submit(final long offset, final long length)
        {
            final long next = submitted.get();
            if (next - drained == SLOTS)
            {
                return false;
            }
            final int slot = (int)(next % SLOTS);
            offsets[slot] = offset;
            lengths[slot] = length;
            submitted.set(next + 1);
            if (parking)
            {
                LockSupport.unpark(thread);
            }
            return true;
        }

        int drain()
        {
            final long done = completed.get();
            int count = 0;
            while (drained < done)
            {
                sums ^= results[(int)(drained % SLOTS)];
                drained++;
                count++;
            }
            return count;
        }

        void close() throws InterruptedException
        {
            running = false;
            LockSupport.unpark(thread);
            thread.join();
        }

        private void run(final BlockChecksum checksum)
        {
            final CRC32C crc = new CRC32C();
            long next = 0;
            while (running)
            {
                if (next < submitted.get())
                {
                    final int slot = (int)(next % SLOTS);
                    crc.reset();
                    checksum.update(crc, offsets[slot], lengths[slot]);
                    results[slot] = (int)crc.getValue();
                    completed.set(++next);
                    continue;
                }
                parking = true;
                if (next == submitted.get() && running)
                {
                    LockSupport.park(this);
                }
                parking = false;
            }
        }
    }
}
