package io.orbitkv.jmh.uring;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import io.orbitkv.ffm.CallState;
import io.orbitkv.ffm.Errno;
import io.orbitkv.ffm.HugePageMemory;
import io.orbitkv.ffm.IoUring;
import io.orbitkv.ffm.LibC;
import io.orbitkv.ffm.MappedRegion;
import org.openjdk.jmh.annotations.AuxCounters;
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

/**
 * 4 KiB random O_DIRECT reads at a constant queue depth from a 1 GiB file, the shape fio measures with
 * {@code --ioengine=io_uring --direct=1 --rw=randread --bs=4k --iodepth=32}; compare {@code reads} per second
 * with fio run on the same directory in the same session (the virtual disk varies run to run).
 *
 * <p>The directory comes from {@code -Dorbitkv.bench.dir} (default jmh-benches/target); never tmpfs, which
 * ignores O_DIRECT.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
@State(Scope.Thread)
public class UringRandomReadBenchmark
{
    private static final long FILE_BYTES = 1L << 30;
    private static final int READ_BYTES = 4096;
    private static final int FILL_BYTES = 2 * 1024 * 1024;
    private static final long BLOCKS = FILE_BYTES / READ_BYTES;

    @Param({ "32" })
    int queueDepth;

    @Param({ "false", "true" })
    boolean fixedBuffers;

    private final CallState state = new CallState();
    private final Reaper reaper = new Reaper();
    private MappedRegion buffers;
    private IoUring ring;
    private int fd = -1;
    private long random = 0x9E3779B97F4A7C15L;

    /**
     * Completed reads, reported by JMH as an operations-per-second counter next to the invocation rate.
     */
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    @State(Scope.Thread)
    public static class Reads
    {
        public long reads;
        public long errors;
    }

    private static final class Reaper implements IoUring.CompletionHandler
    {
        int[] freeSlots;
        int freeCount;
        long completed;
        long failed;
        int firstFailure;

        public void onCompletion(final long userData, final int res, final int flags)
        {
            if (res != READ_BYTES)
            {
                if (0 == failed)
                {
                    firstFailure = res;
                }
                failed++;
            }
            completed++;
            freeSlots[freeCount++] = (int)userData;
        }
    }

    @Setup(Level.Trial)
    public void setUp() throws IOException
    {
        final Path directory = Files.createDirectories(
            Path.of(System.getProperty("orbitkv.bench.dir", "jmh-benches/target")));
        final Path file = directory.resolve("uring-randread.dat");
        buffers = HugePageMemory.mapAnonymous(FILL_BYTES, true);
        ring = new IoUring(Math.max(queueDepth, 8), 0);
        try (Arena arena = Arena.ofConfined())
        {
            fd = LibC.open(state, arena.allocateFrom(file.toString()),
                LibC.O_RDWR | LibC.O_CREAT | LibC.O_DIRECT | LibC.O_CLOEXEC, 0644);
        }
        if (fd < 0)
        {
            throw new IOException("open " + file + ": " + Errno.describe(state.errno()));
        }
        if (Files.size(file) != FILE_BYTES)
        {
            fill();
        }
        if (fixedBuffers)
        {
            ring.registerBuffers(buffers.segment());
        }

        reaper.freeSlots = new int[queueDepth];
        for (int i = 0; i < queueDepth; i++)
        {
            reaper.freeSlots[i] = i;
        }
        reaper.freeCount = queueDepth;
    }

    @TearDown(Level.Trial)
    public void tearDown()
    {
        if (reaper.failed > 0)
        {
            System.out.println("first failed read: res=" + reaper.firstFailure + " (" + reaper.failed + " failed)");
        }
        ring.close();
        LibC.close(state, fd);
        buffers.close();
    }

    @Benchmark
    public long randomRead(final Reads reads)
    {
        final Reaper r = reaper;
        final long base = buffers.address();
        while (r.freeCount > 0)
        {
            final int sqe = ring.nextSqe();
            if (IoUring.RING_FULL == sqe)
            {
                break;
            }
            final int slot = r.freeSlots[--r.freeCount];
            final long fileOffset = nextBlock() * READ_BYTES;
            final long address = base + (long)slot * READ_BYTES;
            if (fixedBuffers)
            {
                ring.prepReadFixed(sqe, fd, address, READ_BYTES, fileOffset, slot, 0);
            }
            else
            {
                ring.prepRead(sqe, fd, address, READ_BYTES, fileOffset, slot);
            }
        }
        ring.submitAndWait(1);

        final long before = r.completed;
        final long failedBefore = r.failed;
        ring.pollCompletions(r, queueDepth);
        reads.reads += r.completed - before;
        reads.errors += r.failed - failedBefore;
        return r.completed;
    }

    private long nextBlock()
    {
        long x = random;
        x ^= x << 13;
        x ^= x >>> 7;
        x ^= x << 17;
        random = x;
        return (x >>> 1) % BLOCKS;
    }

    private void fill()
    {
        final MemorySegment segment = buffers.segment();
        for (long i = 0; i < FILL_BYTES; i += Long.BYTES)
        {
            segment.set(ValueLayout.JAVA_LONG, i, i * 0x9E3779B97F4A7C15L);
        }
        final long chunks = FILE_BYTES / FILL_BYTES;
        long next = 0;
        long done = 0;
        final long[] completions = new long[1];
        final IoUring.CompletionHandler handler = (userData, res, flags) ->
        {
            if (res != FILL_BYTES)
            {
                throw new IllegalStateException("fill write " + userData + ": res=" + res);
            }
            completions[0]++;
        };
        while (done < chunks)
        {
            int sqe;
            while (next < chunks && (sqe = ring.nextSqe()) != IoUring.RING_FULL)
            {
                ring.prepWrite(sqe, fd, buffers.address(), FILL_BYTES, next * FILL_BYTES, next);
                next++;
            }
            ring.submitAndWait(1);
            done += ring.pollCompletions(handler, Integer.MAX_VALUE);
        }
        if (LibC.fsync(state, fd) != 0)
        {
            throw new IllegalStateException("fsync: " + Errno.describe(state.errno()));
        }
    }
}
