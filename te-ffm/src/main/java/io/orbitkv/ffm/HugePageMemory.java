package io.orbitkv.ffm;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
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

    /** The base page size on x86_64 and on aarch64 kernels built with 4 KiB pages. */
    public static final long SMALL_PAGE_SIZE = 4096;

    /** Reported by {@link #transparentHugePageMode()} when the kernel has no THP support. */
    public static final String THP_UNAVAILABLE = "unavailable";

    private static final VarHandle LONG_HANDLE = ValueLayout.JAVA_LONG.varHandle();

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

        final int hugePageAdviceErrno = hugePages ? adviseHugePages(state, address, length) : 0;
        final boolean hugePageAdvised = hugePages && 0 == hugePageAdviceErrno;
        if (hugePages && !hugePageAdvised && hugePageAdviceErrno != Errno.EINVAL)
        {
            LibC.munmap(state, MemorySegment.ofAddress(address), length);
            throw new NativeCallException(
                "madvise(address=0x" + Long.toHexString(address) + ", length=" + length + ", MADV_HUGEPAGE)",
                hugePageAdviceErrno);
        }

        return new MappedRegion(address, length, hugePageAdvised, hugePageAdviceErrno);
    }

    /**
     * Map a new shared file of at least {@code bytes} (rounded up to {@link #HUGE_PAGE_SIZE}) read-write at a
     * 2 MiB-aligned address, so that other processes can map the same memory: the file is created (or truncated) with
     * mode 0600 and sized sparse; its pages are allocated as they are touched. With {@code hugePages} the mapping is
     * advised {@code MADV_HUGEPAGE}, which takes effect only where the kernel allows huge pages for shared memory
     * ({@code /sys/kernel/mm/transparent_hugepage/shmem_enabled}); a refusal is recorded, not thrown.
     *
     * @param path      the file, on tmpfs for memory.
     * @param bytes     wanted length, positive.
     * @param hugePages whether to ask for transparent huge pages.
     * @return the mapped region, to be closed by the caller (the file stays until the caller deletes it).
     * @throws NativeCallException naming the failed call and the errno.
     */
    public static MappedRegion mapSharedFile(final String path, final long bytes, final boolean hugePages)
    {
        if (bytes <= 0 || bytes > Long.MAX_VALUE - 2 * HUGE_PAGE_SIZE)
        {
            throw new IllegalArgumentException("bytes must be in (0, " + (Long.MAX_VALUE - 2 * HUGE_PAGE_SIZE) +
                "]: " + bytes);
        }
        final long length = alignUp(bytes, HUGE_PAGE_SIZE);
        final CallState state = new CallState();
        final int fd;
        try (Arena arena = Arena.ofConfined())
        {
            fd = LibC.open(state, arena.allocateFrom(path),
                LibC.O_RDWR | LibC.O_CREAT | LibC.O_TRUNC | LibC.O_CLOEXEC, 0600);
        }
        if (fd < 0)
        {
            throw new NativeCallException("open(" + path + ", O_RDWR|O_CREAT|O_TRUNC)", state.errno());
        }
        try
        {
            if (LibC.ftruncate(state, fd, length) != 0)
            {
                throw new NativeCallException("ftruncate(" + path + ", " + length + ")", state.errno());
            }
            // An aligned reservation first, then the file mapped over its aligned part.
            final long reserveLength = length + HUGE_PAGE_SIZE;
            final MemorySegment reserved = LibC.mmap(state, MemorySegment.NULL, reserveLength, LibC.PROT_NONE,
                LibC.MAP_PRIVATE | LibC.MAP_ANONYMOUS | LibC.MAP_NORESERVE, -1, 0);
            final long reservedAddress = reserved.address();
            if (reservedAddress == LibC.MAP_FAILED)
            {
                throw new NativeCallException("mmap(length=" + reserveLength + ", PROT_NONE reservation)",
                    state.errno());
            }
            final long address = alignUp(reservedAddress, HUGE_PAGE_SIZE);
            final MemorySegment mapped = LibC.mmap(state, MemorySegment.ofAddress(address), length,
                LibC.PROT_READ | LibC.PROT_WRITE, LibC.MAP_SHARED | LibC.MAP_FIXED, fd, 0);
            if (mapped.address() == LibC.MAP_FAILED)
            {
                final int errno = state.errno();
                LibC.munmap(state, reserved, reserveLength);
                throw new NativeCallException("mmap(" + path + ", length=" + length + ", MAP_SHARED|MAP_FIXED)", errno);
            }
            final long headLength = address - reservedAddress;
            unmapSlack(state, reservedAddress, reserveLength, reservedAddress, headLength);
            unmapSlack(state, reservedAddress, reserveLength, address + length, reserveLength - headLength - length);
            final int hugePageAdviceErrno = hugePages ? adviseHugePages(state, address, length) : 0;
            return new MappedRegion(address, length, hugePages && 0 == hugePageAdviceErrno, hugePageAdviceErrno);
        }
        finally
        {
            LibC.close(state, fd);
        }
    }

    /**
     * Fault every page of a region in now, so that first use does not pay for page faults and huge-page
     * compaction (with THP in {@code madvise} mode the kernel may compact memory synchronously on such a fault).
     * Uses {@code MADV_POPULATE_WRITE} (Linux 5.14+) and falls back to {@link #touchPreservingContents}.
     *
     * @param region a region mapped by {@link #mapAnonymous(long, boolean)}.
     * @return true if the kernel populated it, false if the page-by-page fallback ran.
     */
    public static boolean prefault(final MappedRegion region)
    {
        final CallState state = new CallState();
        if (0 == populate(state, region, 0, region.length()))
        {
            return true;
        }
        touchPreservingContents(region, 0, region.length());
        return false;
    }

    /**
     * Fault {@code [offset, offset + length)} of a region in for writing with {@code MADV_POPULATE_WRITE}. The
     * kernel takes the same write faults a store would but writes nothing, so this is safe while other threads
     * already read and write the range: it changes when their faults happen, never what they see.
     *
     * <p>The range is passed as a slice of {@link MappedRegion#segment()}, which keeps the region's arena acquired
     * for the duration of the call: a concurrent {@link MappedRegion#close()} then fails rather than unmapping
     * memory the kernel is populating.
     *
     * @param state  receives {@code errno} on failure.
     * @param region a region mapped by {@link #mapAnonymous(long, boolean)}.
     * @param offset start of the range, a multiple of the 4 KiB page size.
     * @param length of the range in bytes, a multiple of the 4 KiB page size.
     * @return 0 once populated, else the {@code errno}: {@link Errno#EINVAL} from a kernel before 5.14, which does
     * not know the advice; {@link Errno#ENOMEM} when memory ran out; {@link Errno#EINTR} when a signal arrived.
     */
    public static int populate(final CallState state, final MappedRegion region, final long offset, final long length)
    {
        final MemorySegment range = region.segment().asSlice(offset, length);
        return 0 == LibC.madvise(state, range, length, LibC.MADV_POPULATE_WRITE) ? 0 : state.errno();
    }

    /**
     * Fault {@code [offset, offset + length)} of a region in from Java, for kernels without
     * {@code MADV_POPULATE_WRITE}: one atomic add of zero per 4 KiB page. An atomic read-modify-write is a write
     * access, so the page is faulted in writable, and it cannot lose a value another thread stores into the same
     * word at the same time, as a plain store of zero would.
     *
     * @param region a region mapped by {@link #mapAnonymous(long, boolean)}.
     * @param offset start of the range, a multiple of 8.
     * @param length of the range in bytes.
     */
    public static void touchPreservingContents(final MappedRegion region, final long offset, final long length)
    {
        final MemorySegment segment = region.segment();
        final long end = offset + length;
        for (long position = offset; position < end; position += SMALL_PAGE_SIZE)
        {
            LONG_HANDLE.getAndAdd(segment, position, 0L);
        }
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

    /**
     * @return 0 when the range was advised {@code MADV_HUGEPAGE}, else the errno of the refusal.
     */
    private static int adviseHugePages(final CallState state, final long address, final long length)
    {
        return LibC.madvise(state, MemorySegment.ofAddress(address), length, LibC.MADV_HUGEPAGE) == 0 ? 0 : state.errno();
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
