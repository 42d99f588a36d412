package io.orbitkv.ffm;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class LibCTest
{
    private static final long MIB = 1024 * 1024;

    private final CallState state = new CallState();
    private Arena arena;
    private Path directory;
    private long errnoSum;
    private long rounds;

    @BeforeEach
    void before() throws IOException
    {
        arena = Arena.ofConfined();
        directory = WorkDiskDirectory.create("libc-test");
    }

    @AfterEach
    void after() throws IOException
    {
        arena.close();
        WorkDiskDirectory.delete(directory);
    }

    @Test
    void shouldCaptureEbadfWhenClosingInvalidDescriptor()
    {
        assertEquals(-1, LibC.close(state, -1));
        assertEquals(Errno.EBADF, state.errno());
        assertEquals(9, state.errno());
    }

    @Test
    void shouldCaptureEinvalWhenUnmappingMisalignedAddress()
    {
        assertEquals(-1, LibC.munmap(state, MemorySegment.ofAddress(4096 + 1), 4096));
        assertEquals(Errno.EINVAL, state.errno());
    }

    @Test
    void shouldCaptureErrnoOfLatestFailureOnly()
    {
        assertEquals(-1, LibC.close(state, -1));
        assertEquals(-1, LibC.munmap(state, MemorySegment.ofAddress(1), 4096));
        assertEquals(Errno.EINVAL, state.errno());
        state.reset();
        assertEquals(0, state.errno());
    }

    @Test
    void shouldCaptureEnoentWhenOpeningMissingFile()
    {
        final MemorySegment path = arena.allocateFrom(directory.resolve("missing").toString());
        assertEquals(-1, LibC.open(state, path, LibC.O_RDONLY, 0));
        assertEquals(Errno.ENOENT, state.errno());
    }

    @Test
    void shouldCreateSizeAllocateSyncAndCloseFileUnderTarget() throws IOException
    {
        final Path file = directory.resolve("segment.dat");
        final MemorySegment path = arena.allocateFrom(file.toString());

        final int fd = LibC.open(state, path, LibC.O_RDWR | LibC.O_CREAT | LibC.O_EXCL | LibC.O_CLOEXEC, 0600);
        assertTrue(fd >= 0, () -> "open: " + Errno.describe(state.errno()));
        // The mode travels in open's variadic part; 0600 survives any usual umask.
        assertEquals(0600, (int)Files.getAttribute(file, "unix:mode") & 0777);

        assertEquals(0, LibC.ftruncate(state, fd, MIB), () -> "ftruncate: " + Errno.describe(state.errno()));
        assertEquals(MIB, Files.size(file));

        assertEquals(0, LibC.fallocate(state, fd, 0, 0, 8 * MIB), () -> "fallocate: " + Errno.describe(state.errno()));
        assertEquals(8 * MIB, Files.size(file));

        // KEEP_SIZE reserves blocks past the end without moving it.
        assertEquals(0, LibC.fallocate(state, fd, LibC.FALLOC_FL_KEEP_SIZE, 8 * MIB, 8 * MIB));
        assertEquals(8 * MIB, Files.size(file));

        assertEquals(0, LibC.fsync(state, fd), () -> "fsync: " + Errno.describe(state.errno()));
        assertEquals(0, LibC.close(state, fd));

        assertEquals(-1, LibC.fsync(state, fd));
        assertEquals(Errno.EBADF, state.errno());
    }

    @Test
    void shouldCaptureEexistWhenExclusiveCreateFindsFile() throws IOException
    {
        final Path file = Files.createFile(directory.resolve("taken.dat"));
        final MemorySegment path = arena.allocateFrom(file.toString());
        assertEquals(-1, LibC.open(state, path, LibC.O_RDWR | LibC.O_CREAT | LibC.O_EXCL, 0600));
        assertEquals(Errno.EEXIST, state.errno());
    }

    @Test
    void shouldOpenWithDirectIoOnWorkDisk() throws IOException
    {
        final Path file = Files.createFile(directory.resolve("direct.dat"));
        final MemorySegment path = arena.allocateFrom(file.toString());
        final int fd = LibC.open(state, path, LibC.O_RDWR | LibC.O_DIRECT, 0);
        assertTrue(fd >= 0, () -> "open(O_DIRECT): " + Errno.describe(state.errno()));
        assertEquals(0, LibC.close(state, fd));
    }

    @Test
    void shouldReturnPidOfThisProcess()
    {
        assertEquals(ProcessHandle.current().pid(), LibC.getpid());
    }

    @Test
    void shouldSetTheCallingThreadsTimerSlackOnly() throws Exception
    {
        final long[] seen = new long[2];
        final Thread thread = new Thread(() ->
        {
            final CallState own = new CallState();
            seen[0] = LibC.prctl(own, LibC.PR_SET_TIMERSLACK, 1_234, 0, 0, 0);
            seen[1] = LibC.prctl(own, LibC.PR_GET_TIMERSLACK, 0, 0, 0, 0);
        });
        final int before = LibC.prctl(state, LibC.PR_GET_TIMERSLACK, 0, 0, 0, 0);
        thread.start();
        thread.join();
        assertEquals(0, seen[0]);
        assertEquals(1_234, seen[1]);
        assertEquals(before, LibC.prctl(state, LibC.PR_GET_TIMERSLACK, 0, 0, 0, 0), "another thread's slack changed");
        assertEquals(-1, LibC.prctl(state, -1, 0, 0, 0, 0));
        assertEquals(Errno.EINVAL, state.errno());
    }

    @Test
    void shouldLowerTheNiceValueOfTheCallingThreadOnly() throws Exception
    {
        final int[] seen = new int[3];
        final Thread thread = new Thread(() ->
        {
            final CallState own = new CallState();
            seen[0] = LibC.gettid();
            seen[1] = LibC.setpriority(own, LibC.PRIO_PROCESS, seen[0], 19);
            seen[2] = niceOf(seen[0]);
        });
        final int tid = LibC.gettid();
        final int before = niceOf(tid);
        thread.start();
        thread.join();
        assertTrue(seen[0] > 0 && seen[0] != tid, "thread ids " + seen[0] + " and " + tid);
        assertEquals(0, seen[1]);
        assertEquals(19, seen[2]);
        assertEquals(before, niceOf(tid), "the calling thread's nice value changed");
        assertEquals(-1, LibC.setpriority(state, -1, 0, 0));
        assertEquals(Errno.EINVAL, state.errno());
    }

    /** Field 19 of /proc/PID/task/TID/stat; the command name before it is in parentheses and may hold spaces. */
    private static int niceOf(final int tid)
    {
        try
        {
            final String stat = Files.readString(Path.of("/proc/self/task/" + tid + "/stat"));
            final String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return Integer.parseInt(fields[19 - 3]);
        }
        catch (final IOException ex)
        {
            throw new java.io.UncheckedIOException(ex);
        }
    }

    @Test
    void shouldWaitForADatagramWithEpollOnTheChannelsDescriptor() throws IOException
    {
        assertTrue(ChannelDescriptors.available(), "the JVM flags export sun.nio.ch");
        try (java.nio.channels.DatagramChannel receiver = java.nio.channels.DatagramChannel.open();
            java.nio.channels.DatagramChannel sender = java.nio.channels.DatagramChannel.open())
        {
            receiver.bind(new java.net.InetSocketAddress("127.0.0.1", 0)).configureBlocking(false);
            final int fd = ChannelDescriptors.fdOf(receiver);
            assertTrue(fd > 2, "descriptor " + fd);
            final int epfd = LibC.epoll_create1(state, LibC.EPOLL_CLOEXEC);
            assertTrue(epfd >= 0, () -> "epoll_create1: " + Errno.describe(state.errno()));
            try
            {
                final MemorySegment event = EpollEvent.allocateArray(arena, 1);
                EpollEvent.events(event, LibC.EPOLLIN | LibC.EPOLLET);
                EpollEvent.data(event, 0x1234_5678_9ABCL);
                assertEquals(0, LibC.epoll_ctl(state, epfd, LibC.EPOLL_CTL_ADD, fd, event));
                final MemorySegment timeout = KernelTimespec.allocate(arena);
                KernelTimespec.tv_nsec(timeout, 2_000_000L);
                final MemorySegment ready = EpollEvent.allocateArray(arena, 4);

                // Nothing sent: the wait ends at its timeout, not before.
                final long start = System.nanoTime();
                assertEquals(0, LibC.epoll_pwait2(state, epfd, ready, 4, timeout, MemorySegment.NULL));
                assertTrue(System.nanoTime() - start >= 2_000_000L);

                sender.send(java.nio.ByteBuffer.wrap(new byte[]{1, 2, 3}), receiver.getLocalAddress());
                KernelTimespec.tv_sec(timeout, 10);
                assertEquals(1, LibC.epoll_pwait2(state, epfd, ready, 4, timeout, MemorySegment.NULL));
                assertEquals(LibC.EPOLLIN, EpollEvent.events(ready) & LibC.EPOLLIN);
                assertEquals(0x1234_5678_9ABCL, EpollEvent.data(ready));

                // Edge triggered: the unread datagram does not report again until another arrives.
                KernelTimespec.tv_sec(timeout, 0);
                assertEquals(0, LibC.epoll_pwait2(state, epfd, ready, 4, timeout, MemorySegment.NULL));

                assertEquals(0, LibC.epoll_ctl(state, epfd, LibC.EPOLL_CTL_DEL, fd, event));
                assertEquals(-1, LibC.epoll_ctl(state, epfd, LibC.EPOLL_CTL_DEL, fd, event));
                assertEquals(Errno.ENOENT, state.errno());
            }
            finally
            {
                LibC.close(state, epfd);
            }
        }
    }

    @Test
    void shouldPassBytesThroughAFifoOpenedReadWriteWithoutBlocking()
    {
        final MemorySegment path = arena.allocateFrom(directory.resolve("fifo").toString());
        assertEquals(0, LibC.mkfifo(state, path, 0600), () -> "mkfifo: " + Errno.describe(state.errno()));
        assertEquals(-1, LibC.mkfifo(state, path, 0600));
        assertEquals(Errno.EEXIST, state.errno());

        // O_RDWR never waits for a peer to open the other end (Linux), and O_NONBLOCK turns an empty read into EAGAIN.
        final int fd = LibC.open(state, path, LibC.O_RDWR | LibC.O_NONBLOCK | LibC.O_CLOEXEC, 0);
        assertTrue(fd >= 0, () -> "open: " + Errno.describe(state.errno()));
        try
        {
            final MemorySegment buf = arena.allocate(16);
            assertEquals(-1, LibC.read(state, fd, buf, buf.byteSize()));
            assertEquals(Errno.EAGAIN, state.errno());
            buf.set(ValueLayout.JAVA_BYTE, 0, (byte)7);
            assertEquals(1, LibC.write(state, fd, buf, 1));
            assertEquals(1, LibC.write(state, fd, buf, 1));
            buf.set(ValueLayout.JAVA_BYTE, 0, (byte)0);
            assertEquals(2, LibC.read(state, fd, buf, buf.byteSize()));
            assertEquals(7, buf.get(ValueLayout.JAVA_BYTE, 0));
            assertEquals(-1, LibC.read(state, fd, buf, buf.byteSize()));
            assertEquals(Errno.EAGAIN, state.errno());
        }
        finally
        {
            LibC.close(state, fd);
        }
    }

    @Test
    void shouldCaptureEinvalFromRawSyscallWithInvalidArguments()
    {
        // io_uring_setup(0 entries) is rejected before anything is set up; the params must still be readable.
        final MemorySegment params = arena.allocate(120);
        final long result = LibC.syscall(state, LibC.SYS_IO_URING_SETUP, 0, params.address(), 0, 0, 0, 0);
        assertEquals(-1, result);
        assertEquals(Errno.EINVAL, state.errno());
    }

    @Test
    void shouldCreateIoUringThroughRawSyscall()
    {
        final MemorySegment params = arena.allocate(120);
        final long fd = LibC.syscall(state, LibC.SYS_IO_URING_SETUP, 4, params.address(), 0, 0, 0, 0);
        assumeFalse(
            fd < 0 && (state.errno() == Errno.EPERM || state.errno() == Errno.ENOSYS),
            "io_uring blocked here (seccomp or io_uring_disabled): " + Errno.describe(state.errno()));
        assertTrue(fd >= 0, () -> "io_uring_setup: " + Errno.describe(state.errno()));
        try
        {
            // struct io_uring_params: sq_entries at 0, cq_entries at 4, filled in by the kernel.
            assertEquals(4, params.get(LibC.C_INT, 0));
            assertEquals(8, params.get(LibC.C_INT, 4));
        }
        finally
        {
            assertEquals(0, LibC.close(state, (int)fd));
        }
    }

    @Test
    void shouldDescribeErrnoWithNameNumberAndLibcText()
    {
        assertEquals("Bad file descriptor", LibC.strerrorString(Errno.EBADF));
        assertEquals("EBADF(9) Bad file descriptor", Errno.describe(Errno.EBADF));
        assertEquals("EINVAL(22) Invalid argument", Errno.describe(Errno.EINVAL));
        assertEquals("errno(4242) Unknown error 4242", Errno.describe(4242));
    }

    @Test
    void shouldNotAllocateWhenCapturingErrnoOfFailingCalls()
    {
        final MemorySegment misaligned = MemorySegment.ofAddress(1);
        for (int i = 0; i < 200_000; i++)
        {
            errnoSum += failingCalls(misaligned);
        }
        rounds = 200_000;

        final long lastWindow = AllocationWindows.lastWindowBytes(
            () ->
            {
                for (int i = 0; i < 100_000; i++)
                {
                    errnoSum += failingCalls(misaligned);
                }
                rounds += 100_000;
            },
            64 * 1024);

        assertEquals(rounds * (Errno.EBADF + Errno.EINVAL), errnoSum);
        // 200k calls: anything per call would be megabytes; allow for the measurement's own noise.
        assertTrue(lastWindow < 64 * 1024, () -> lastWindow + " bytes allocated by 200000 failing calls");
    }

    private int failingCalls(final MemorySegment misaligned)
    {
        LibC.close(state, -1);
        final int closeErrno = state.errno();
        LibC.munmap(state, misaligned, 4096);
        return closeErrno + state.errno();
    }

    @Test
    void shouldLinkEveryBindingEagerlyWithoutError()
    {
        // A wrong symbol name or descriptor only shows when a holder first initialises; touch them all.
        assertFalse(LibC.getpid() <= 0);
        assertEquals(-1, LibC.madvise(state, MemorySegment.ofAddress(1), 4096, LibC.MADV_NORMAL));
        assertEquals(Errno.EINVAL, state.errno());
        assertEquals(-1, LibC.ftruncate(state, -1, 0));
        assertEquals(Errno.EBADF, state.errno());
        assertEquals(-1, LibC.fallocate(state, -1, 0, 0, 1));
        assertEquals(Errno.EBADF, state.errno());
        final MemorySegment mapping = LibC.mmap(
            state, MemorySegment.NULL, 4096, LibC.PROT_READ, LibC.MAP_PRIVATE | LibC.MAP_ANONYMOUS, -1, 0);
        assertTrue(mapping.address() != LibC.MAP_FAILED, () -> "mmap: " + Errno.describe(state.errno()));
        assertEquals(0, LibC.munmap(state, mapping, 4096));
    }
}
