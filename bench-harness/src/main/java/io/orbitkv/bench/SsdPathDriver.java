package io.orbitkv.bench;

import io.orbitkv.ffm.CallState;
import io.orbitkv.ffm.Errno;
import io.orbitkv.ffm.HugePageMemory;
import io.orbitkv.ffm.LibC;
import io.orbitkv.ffm.MappedRegion;
import io.orbitkv.manager.store.SsdBackend;
import io.orbitkv.manager.store.UringSsdBackend;
import java.lang.foreign.Arena;
import java.nio.file.Path;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The Manager's SSD I/O path without the engine ring, for {@code orbitkv bench ssd}: the Manager's own io_uring
 * backend ({@link UringSsdBackend}) over THP staging registered as a fixed buffer and an O_DIRECT file, as the
 * Manager sets them up, driven at a fixed queue depth so it can be compared with fio on the same file, block size
 * and depth.
 */
final class SsdPathDriver implements AutoCloseable, SsdBackend.Completions
{
    private static final long WAIT_NS = 1_000_000L;

    private final int fd;
    private final int queueDepth;
    private final int blockBytes;
    private final MappedRegion staging;
    private final SsdBackend backend;
    private final int[] freeSlots;
    private int freeCount;
    private long completedBytes;
    private int failures;

    /**
     * @param file       an existing file of at least the sizes used, opened here with O_DIRECT (not truncated).
     * @param queueDepth operations in flight.
     * @param blockBytes size of each operation, a multiple of 4 KiB.
     */
    SsdPathDriver(final Path file, final int queueDepth, final int blockBytes)
    {
        this.queueDepth = queueDepth;
        this.blockBytes = blockBytes;
        final CallState state = new CallState();
        try (Arena arena = Arena.ofConfined())
        {
            fd = LibC.open(state, arena.allocateFrom(file.toString()),
                LibC.O_RDWR | LibC.O_CREAT | LibC.O_DIRECT | LibC.O_CLOEXEC, 0600);
        }
        if (fd < 0)
        {
            throw new IllegalStateException("cannot open " + file + " with O_DIRECT: " + Errno.describe(state.errno()));
        }
        final long stagingBytes = Math.max(HugePageMemory.HUGE_PAGE_SIZE,
            ((long)queueDepth * blockBytes + HugePageMemory.HUGE_PAGE_SIZE - 1) & -HugePageMemory.HUGE_PAGE_SIZE);
        staging = HugePageMemory.mapAnonymous(stagingBytes, true);
        HugePageMemory.prefault(staging);
        for (long i = 0; i < stagingBytes; i += 8)
        {
            staging.segment().set(java.lang.foreign.ValueLayout.JAVA_LONG, i, i * 0x9E3779B97F4A7C15L);
        }
        backend = new UringSsdBackend(fd, queueDepth, staging, System.err);
        backend.start();
        freeSlots = new int[queueDepth];
    }

    /**
     * @return the backend's description (fixed buffers or not).
     */
    public String description()
    {
        return backend.description();
    }

    /**
     * Write or read {@code totalBytes} sequentially from offset 0 with {@code queueDepth} operations in flight.
     *
     * @param write      true to write.
     * @param totalBytes bytes, a multiple of the block size.
     * @return bytes per second.
     */
    public double sequential(final boolean write, final long totalBytes)
    {
        reset();
        final long startNs = System.nanoTime();
        long nextOffset = 0;
        while (completedBytes < totalBytes)
        {
            while (freeCount > 0 && nextOffset < totalBytes)
            {
                final int slot = freeSlots[--freeCount];
                final long stagingOffset = (long)slot * blockBytes;
                final boolean queued = write ?
                    backend.write(slot, nextOffset, stagingOffset, blockBytes) :
                    backend.read(slot, nextOffset, stagingOffset, blockBytes);
                if (!queued)
                {
                    freeCount++;
                    break;
                }
                nextOffset += blockBytes;
            }
            backend.process(this, WAIT_NS);
        }
        final long elapsedNs = System.nanoTime() - startNs;
        checkFailures();
        return totalBytes * 1e9 / elapsedNs;
    }

    /**
     * Read random block-aligned offsets of {@code [0, fileBytes)} for {@code durationNs}.
     *
     * @param fileBytes  span of the file to read from.
     * @param durationNs how long.
     * @return operations per second.
     */
    public double randomReads(final long fileBytes, final long durationNs)
    {
        reset();
        final ThreadLocalRandom random = ThreadLocalRandom.current();
        final long blocks = fileBytes / blockBytes;
        final long startNs = System.nanoTime();
        long nowNs = startNs;
        while (nowNs - startNs < durationNs)
        {
            while (freeCount > 0)
            {
                final int slot = freeSlots[--freeCount];
                if (!backend.read(slot, random.nextLong(blocks) * blockBytes, (long)slot * blockBytes, blockBytes))
                {
                    freeCount++;
                    break;
                }
            }
            backend.process(this, WAIT_NS);
            nowNs = System.nanoTime();
        }
        final long elapsedNs = System.nanoTime() - startNs;
        final double ops = completedBytes / (double)blockBytes;
        backend.drain(this, 10_000_000_000L);
        checkFailures();
        return ops * 1e9 / elapsedNs;
    }

    public void onIoComplete(final int command, final int result)
    {
        if (result != blockBytes)
        {
            failures++;
        }
        else
        {
            completedBytes += result;
        }
        freeSlots[freeCount++] = command;
    }

    private void reset()
    {
        completedBytes = 0;
        failures = 0;
        freeCount = 0;
        for (int i = queueDepth - 1; i >= 0; i--)
        {
            freeSlots[freeCount++] = i;
        }
    }

    private void checkFailures()
    {
        if (failures > 0)
        {
            throw new IllegalStateException(failures + " I/Os failed or were short");
        }
    }

    public void close()
    {
        backend.drain(this, 10_000_000_000L);
        backend.close();
        staging.close();
        LibC.close(new CallState(), fd);
    }
}
