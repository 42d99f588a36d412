package io.orbitkv.index;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Random;
import java.util.zip.CRC32C;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class BlockChecksumTest
{
    private static final int REGION_BYTES = 64 * 1024 + 100;
    private static final int SMALL_WINDOW_SHIFT = 12;

    @Test
    void shouldSumRangesThatCrossWindowBoundariesLikeOneCrc32cOverTheBytes()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final byte[] bytes = randomBytes(REGION_BYTES);
            final MemorySegment region = arena.allocate(REGION_BYTES, 64);
            MemorySegment.copy(bytes, 0, region, ValueLayout.JAVA_BYTE, 0, bytes.length);
            final BlockChecksum checksum = new BlockChecksum(region, SMALL_WINDOW_SHIFT);
            final BlockChecksum oneWindow = new BlockChecksum(region);

            final int[][] ranges = {{0, REGION_BYTES}, {4095, 2}, {4096, 4096}, {100, 20_000}, {REGION_BYTES - 7, 7},
                {61_440, REGION_BYTES - 61_440}, {5, 0}};
            for (final int[] range : ranges)
            {
                final int expected = crc(bytes, range[0], range[1]);
                assertEquals(expected, checksum.compute(range[0], range[1]), () -> "range " + range[0] + "+" + range[1]);
                assertEquals(expected, oneWindow.compute(range[0], range[1]));
            }

            // A running sum fed in uneven chunks, as a copy spread over duty cycles feeds it, ends at the same value.
            final CRC32C running = new CRC32C();
            for (int offset = 0; offset < REGION_BYTES; offset += 3001)
            {
                checksum.update(running, offset, Math.min(3001, REGION_BYTES - offset));
            }
            assertEquals(crc(bytes, 0, REGION_BYTES), (int)running.getValue());
        }
    }

    @Test
    void shouldSumARangeAcrossTheOneGibViewBoundaryOfARegionLargerThanABuffer() throws IOException
    {
        // A sparse file mapped past 2 GiB: only the pages written and summed are ever touched.
        final Path dir = Files.createDirectories(Path.of("target", "checksum-tests"));
        final Path file = Files.createTempFile(dir, "region", ".bin");
        try (Arena arena = Arena.ofShared();
            FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE))
        {
            final long regionBytes = 3L << 30;
            channel.truncate(regionBytes);
            final MemorySegment region = channel.map(FileChannel.MapMode.READ_WRITE, 0, regionBytes, arena);
            final byte[] bytes = randomBytes(3 * 4096);
            final long offset = BlockChecksum.WINDOW_BYTES * 2 - 4096 - 17;
            MemorySegment.copy(bytes, 0, region, ValueLayout.JAVA_BYTE, offset, bytes.length);

            final BlockChecksum checksum = new BlockChecksum(region);
            assertEquals(regionBytes, checksum.regionBytes());
            assertEquals(crc(bytes, 0, bytes.length), checksum.compute(offset, bytes.length), "across 2 GiB");
            assertEquals(crc(bytes, 100, 5000), checksum.compute(offset + 100, 5000));
        }
        finally
        {
            Files.deleteIfExists(file);
        }
    }

    @Test
    void shouldRejectRangesOutsideTheRegion()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final BlockChecksum checksum = new BlockChecksum(arena.allocate(8192, 64), SMALL_WINDOW_SHIFT);
            assertThrows(IndexOutOfBoundsException.class, () -> checksum.compute(8000, 193));
            assertThrows(IndexOutOfBoundsException.class, () -> checksum.compute(-1, 10));
            assertThrows(IllegalArgumentException.class, () -> new BlockChecksum(arena.allocate(64), 11));
        }
    }

    @Test
    void shouldNotAllocateWhileSumming()
    {
        final com.sun.management.ThreadMXBean threads =
            (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment region = arena.allocate(REGION_BYTES, 64);
            final BlockChecksum checksum = new BlockChecksum(region, SMALL_WINDOW_SHIFT);
            final CRC32C crc = new CRC32C();
            long sink = 0;
            for (int i = 0; i < 20_000; i++)
            {
                checksum.update(crc, i % 4000, 9000);
                sink += checksum.compute(i % 100, 5000);
            }
            final Thread thread = Thread.currentThread();
            final long before = threads.getThreadAllocatedBytes(thread.threadId());
            for (int i = 0; i < 20_000; i++)
            {
                checksum.update(crc, i % 4000, 9000);
                sink += checksum.compute(i % 100, 5000);
            }
            final long allocated = threads.getThreadAllocatedBytes(thread.threadId()) - before;
            // One object per call would be >= 16 B x 40,000; the bound leaves room only for one-off bookkeeping.
            assertTrue(allocated < 4096, "allocated " + allocated + " bytes (sink " + sink + ")");
        }
    }

    private static int crc(final byte[] bytes, final int offset, final int length)
    {
        final CRC32C crc = new CRC32C();
        crc.update(bytes, offset, length);
        return (int)crc.getValue();
    }

    private static byte[] randomBytes(final int length)
    {
        final byte[] bytes = new byte[length];
        new Random(5).nextBytes(bytes);
        return bytes;
    }
}
