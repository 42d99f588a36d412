package io.orbitkv.ffm;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/**
 * Anonymous memory placed for transparent huge pages: 2 MiB aligned and advised {@code MADV_HUGEPAGE} before
 * its first touch. I/O staging buffers live here because the block layer merges O_DIRECT requests across a
 * huge page but splits them at every 4 KiB page (see notes/io-uring-and-limits.md), and {@code Arena.allocate}
 * would zero, and so fault in, small pages before any advice could apply.
 */
public final class HugePageMemory
{
    /** Size of a PMD-mapped transparent huge page on x86_64 and on aarch64 with 4 KiB base pages. */
    public static final long HUGE_PAGE_SIZE = 2L * 1024 * 1024;

    /** Where the kernel publishes the system-wide THP mode, e.g. {@code "always [madvise] never"}. */
    public static final Path THP_ENABLED_PATH = Path.of("/sys/kernel/mm/transparent_hugepage/enabled");

    /** Reported by {@link #transparentHugePageMode()} when the kernel has no THP support. */
    public static final String THP_UNAVAILABLE = "unavailable";

    private HugePageMemory()
    {
    }

    /**
     * Map private, anonymous, read-write memory of at least {@code bytes}, starting on a
     * {@link #HUGE_PAGE_SIZE} boundary and rounded up to a whole number of huge pages. No memory is committed
     * until touched ({@code MAP_NORESERVE}).
     *
     * <p>With {@code hugePages} the region is advised {@code MADV_HUGEPAGE} before anything touches it. A
     * refusal with {@code EINVAL} (kernel without THP) is recorded in the region rather than thrown, as the
     * memory is still usable with small pages.
     *
     * @param bytes     wanted length, positive.
     * @param hugePages whether to ask for transparent huge pages.
     * @return the mapped region, to be closed by the caller.
     * @throws IllegalArgumentException if bytes is not positive or too large to round up.
     * @throws NativeCallException      naming the failed call, the size and the errno.
     */
    public static MappedRegion mapAnonymous(final long bytes, final boolean hugePages)
    {
        if (bytes <= 0 || bytes > Long.MAX_VALUE - 2 * HUGE_PAGE_SIZE)
        {
            throw new IllegalArgumentException("bytes must be in (0, " + (Long.MAX_VALUE - 2 * HUGE_PAGE_SIZE) +
                "]: " + bytes);
        }

        final long length = alignUp(bytes, HUGE_PAGE_SIZE);
        // One spare huge page guarantees an aligned start inside the reservation; the slack is unmapped below.
        final long reserveLength = length + HUGE_PAGE_SIZE;
        final CallState state = new CallState();

        final MemorySegment reserved = LibC.mmap(
            state,
            MemorySegment.NULL,
            reserveLength,
            LibC.PROT_READ | LibC.PROT_WRITE,
            LibC.MAP_PRIVATE | LibC.MAP_ANONYMOUS | LibC.MAP_NORESERVE,
            -1,
            0);
        final long reservedAddress = reserved.address();
        if (reservedAddress == LibC.MAP_FAILED)
        {
            throw new NativeCallException(
                "mmap(length=" + reserveLength + " for " + bytes + " bytes requested, MAP_PRIVATE|MAP_ANONYMOUS|" +
                "MAP_NORESERVE)", state.errno());
        }

        final long address = alignUp(reservedAddress, HUGE_PAGE_SIZE);
        final long headLength = address - reservedAddress;
        final long tailLength = reserveLength - headLength - length;
        unmapSlack(state, reservedAddress, reserveLength, reservedAddress, headLength);
        unmapSlack(state, reservedAddress, reserveLength, address + length, tailLength);

        boolean hugePageAdvised = false;
        int hugePageAdviceErrno = 0;
        if (hugePages)
        {
            if (LibC.madvise(state, MemorySegment.ofAddress(address), length, LibC.MADV_HUGEPAGE) == 0)
            {
                hugePageAdvised = true;
            }
            else
            {
                hugePageAdviceErrno = state.errno();
                if (hugePageAdviceErrno != Errno.EINVAL)
                {
                    LibC.munmap(state, MemorySegment.ofAddress(address), length);
                    throw new NativeCallException(
                        "madvise(address=0x" + Long.toHexString(address) + ", length=" + length + ", MADV_HUGEPAGE)",
                        hugePageAdviceErrno);
                }
            }
        }

        return new MappedRegion(address, length, hugePageAdvised, hugePageAdviceErrno);
    }

    /**
     * Fault every page of a region in now, so that first use does not pay for page faults and huge-page
     * compaction (with THP in {@code madvise} mode the kernel may compact memory synchronously on such a fault).
     * Uses {@code MADV_POPULATE_WRITE} (Linux 5.14+) and falls back to writing one byte per 4 KiB page.
     *
     * @param region a region mapped by {@link #mapAnonymous(long, boolean)} and not yet in use.
     * @return true if the kernel populated it, false if the page-by-page fallback ran.
     */
    public static boolean prefault(final MappedRegion region)
    {
        final CallState state = new CallState();
        if (LibC.madvise(state, MemorySegment.ofAddress(region.address()), region.length(), LibC.MADV_POPULATE_WRITE) == 0)
        {
            return true;
        }
        final MemorySegment segment = region.segment();
        for (long offset = 0; offset < region.length(); offset += 4096)
        {
            segment.set(java.lang.foreign.ValueLayout.JAVA_BYTE, offset, (byte)0);
        }
        return false;
    }

    /**
     * The system-wide transparent huge page mode, the bracketed word of {@link #THP_ENABLED_PATH}: one of
     * {@code "always"}, {@code "madvise"}, {@code "never"}, or {@link #THP_UNAVAILABLE} without THP support.
     * With {@code "never"} advice is accepted yet no huge pages are ever used.
     *
     * @return the active mode.
     */
    public static String transparentHugePageMode()
    {
        try
        {
            final String modes = Files.readString(THP_ENABLED_PATH);
            final int start = modes.indexOf('[');
            final int end = modes.indexOf(']', start + 1);
            return start >= 0 && end > start ? modes.substring(start + 1, end) : modes.trim();
        }
        catch (final NoSuchFileException ex)
        {
            return THP_UNAVAILABLE;
        }
        catch (final IOException ex)
        {
            throw new IllegalStateException("cannot read " + THP_ENABLED_PATH, ex);
        }
    }

    static long alignUp(final long value, final long alignment)
    {
        return (value + alignment - 1) & -alignment;
    }

    private static void unmapSlack(
        final CallState state,
        final long reservedAddress,
        final long reserveLength,
        final long slackAddress,
        final long slackLength)
    {
        if (slackLength > 0 && LibC.munmap(state, MemorySegment.ofAddress(slackAddress), slackLength) != 0)
        {
            final int errno = state.errno();
            // Best effort to leave nothing behind; the trimming failure is what gets reported.
            LibC.munmap(state, MemorySegment.ofAddress(reservedAddress), reserveLength);
            throw new NativeCallException(
                "munmap(address=0x" + Long.toHexString(slackAddress) + ", length=" + slackLength +
                ") trimming a " + reserveLength + " byte reservation", errno);
        }
    }
}
