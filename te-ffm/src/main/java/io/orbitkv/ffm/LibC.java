package io.orbitkv.ffm;

import java.lang.foreign.AddressLayout;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * Hand-written bindings, in the shape jextract generates, for the parts of {@code <unistd.h>},
 * {@code <sys/mman.h>}, {@code <sys/stat.h>} (mkfifo), {@code <fcntl.h>}, {@code <sys/syscall.h>},
 * {@code <sys/prctl.h>}, {@code <sys/epoll.h>}, {@code <sys/resource.h>} and {@code <string.h>} that OrbitKV needs on
 * Linux x86_64 and aarch64 (LP64).
 *
 * <p>Every function has a holder class with its {@link FunctionDescriptor}, symbol and {@link MethodHandle}, so
 * that a handle is linked the first time its function is called, and a static wrapper calling it with
 * {@code invokeExact}. Functions that report failure through {@code errno} capture it into a caller-owned
 * {@link CallState}: the wrappers allocate nothing, so they are usable on hot paths. Return values keep C's
 * convention ({@code -1} or {@link #MAP_FAILED} on failure); deciding what a failure means is the caller's job.
 *
 * <p>Macro values are checked against the system headers by a compiled C harness in the tests.
 *
 * <p>Why one file over 700 lines: it is a binding of one C library in jextract's shape, a constant per macro and a
 * holder plus a wrapper per function, read against the headers it names; splitting it by header would only scatter
 * the constants the harness checks and the force-inline command in the parent pom ({@code LibC::*}) that keeps the
 * wrappers allocation-free.
 */
@SuppressWarnings("restricted") // binding native code is this class's purpose; JVMs run with native access
public final class LibC
{
    public static final ValueLayout.OfByte C_CHAR = ValueLayout.JAVA_BYTE;
    public static final ValueLayout.OfInt C_INT = ValueLayout.JAVA_INT;
    public static final ValueLayout.OfLong C_LONG = ValueLayout.JAVA_LONG;
    public static final ValueLayout.OfLong C_SIZE_T = ValueLayout.JAVA_LONG;
    public static final ValueLayout.OfLong C_OFF_T = ValueLayout.JAVA_LONG;
    public static final ValueLayout.OfInt C_PID_T = ValueLayout.JAVA_INT;
    public static final ValueLayout.OfInt C_MODE_T = ValueLayout.JAVA_INT;
    public static final AddressLayout C_POINTER = ValueLayout.ADDRESS;

    // <sys/mman.h>: identical on x86_64 and aarch64 (asm-generic values).
    public static final int PROT_NONE = 0x0;
    public static final int PROT_READ = 0x1;
    public static final int PROT_WRITE = 0x2;
    public static final int MAP_SHARED = 0x01;
    public static final int MAP_PRIVATE = 0x02;
    public static final int MAP_FIXED = 0x10;
    public static final int MAP_ANONYMOUS = 0x20;
    public static final int MAP_NORESERVE = 0x4000;
    /** Prefaults the mapping: never combine with {@link #MADV_HUGEPAGE}, which must precede the first touch. */
    public static final int MAP_POPULATE = 0x8000;
    public static final int MAP_HUGETLB = 0x40000;
    public static final int MAP_FIXED_NOREPLACE = 0x100000;
    /** {@code (void *) -1}, compare with {@link MemorySegment#address()} of what {@link #mmap} returns. */
    public static final long MAP_FAILED = -1L;
    public static final int MADV_NORMAL = 0;
    public static final int MADV_WILLNEED = 3;
    public static final int MADV_DONTNEED = 4;
    public static final int MADV_HUGEPAGE = 14;
    public static final int MADV_NOHUGEPAGE = 15;
    public static final int MADV_POPULATE_WRITE = 23;

    // <fcntl.h>: O_DIRECT and O_DIRECTORY swap values between x86_64 and aarch64.
    private static final boolean AARCH64 = "aarch64".equals(System.getProperty("os.arch"));
    public static final int O_RDONLY = 0;
    public static final int O_WRONLY = 1;
    public static final int O_RDWR = 2;
    public static final int O_CREAT = 0100;
    public static final int O_EXCL = 0200;
    public static final int O_TRUNC = 01000;
    public static final int O_DSYNC = 010000;
    public static final int O_DIRECT = AARCH64 ? 0200000 : 040000;
    public static final int O_DIRECTORY = AARCH64 ? 040000 : 0200000;
    public static final int O_CLOEXEC = 02000000;
    public static final int O_NONBLOCK = 04000;
    public static final int FALLOC_FL_KEEP_SIZE = 0x01;
    public static final int FALLOC_FL_PUNCH_HOLE = 0x02;

    // <sys/syscall.h>: io_uring came after the syscall tables were unified, so these hold on every arch.
    public static final long SYS_IO_URING_SETUP = 425;
    public static final long SYS_IO_URING_ENTER = 426;
    public static final long SYS_IO_URING_REGISTER = 427;

    // <sys/prctl.h>: the calling thread's timer slack, in nanoseconds.
    public static final int PR_SET_TIMERSLACK = 29;
    public static final int PR_GET_TIMERSLACK = 30;

    // <sys/resource.h>: on Linux a thread id given as the PRIO_PROCESS target sets that one thread's nice value.
    public static final int PRIO_PROCESS = 0;

    // <sys/epoll.h>: identical on x86_64 and aarch64. EPOLLET is bit 31, negative as a Java int.
    public static final int EPOLL_CLOEXEC = 02000000;
    public static final int EPOLL_CTL_ADD = 1;
    public static final int EPOLL_CTL_DEL = 2;
    public static final int EPOLLIN = 0x001;
    public static final int EPOLLET = 1 << 31;
    public static final int EPOLL_CTL_MOD = 3;
    public static final int EPOLLOUT = 0x004;
    public static final int EPOLLERR = 0x008;
    public static final int EPOLLHUP = 0x010;
    public static final int EPOLLRDHUP = 0x2000;

    // <sys/eventfd.h> and <sys/socket.h>: identical on x86_64 and aarch64.
    public static final int EFD_NONBLOCK = 04000;
    public static final int EFD_CLOEXEC = 02000000;
    public static final int MSG_DONTWAIT = 0x40;
    public static final int MSG_NOSIGNAL = 0x4000;

    private static final Linker LINKER = Linker.nativeLinker();
    private static final SymbolLookup SYMBOL_LOOKUP = LINKER.defaultLookup();
    private static final Linker.Option CAPTURE_ERRNO = Linker.Option.captureCallState("errno");

    private LibC()
    {
    }

    private static final class mmap
    {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(
            C_POINTER, C_POINTER, C_SIZE_T, C_INT, C_INT, C_INT, C_OFF_T);
        static final MemorySegment ADDR = SYMBOL_LOOKUP.findOrThrow("mmap");
        static final MethodHandle HANDLE = LINKER.downcallHandle(ADDR, DESC, CAPTURE_ERRNO);
    }

    /**
     * {@code void *mmap(void *addr, size_t length, int prot, int flags, int fd, off_t offset)}.
     *
     * @param state  receives {@code errno} on failure.
     * @param addr   hint or fixed address, {@link MemorySegment#NULL} to let the kernel choose.
     * @param length of the mapping in bytes.
     * @param prot   {@code PROT_*} bits.
     * @param flags  {@code MAP_*} bits.
     * @param fd     file to map, {@code -1} for anonymous mappings.
     * @param offset into the file, a multiple of the page size.
     * @return a zero-length segment at the mapped address, {@link #MAP_FAILED} as its address on failure.
     */
    public static MemorySegment mmap(
        final CallState state,
        final MemorySegment addr,
        final long length,
        final int prot,
        final int flags,
        final int fd,
        final long offset)
    {
        try
        {
            return (MemorySegment)mmap.HANDLE.invokeExact(state.segment(), addr, length, prot, flags, fd, offset);
        }
        catch (final Throwable ex)
        {
            throw rethrow(ex);
        }
    }

    private static final class munmap
    {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_POINTER, C_SIZE_T);
        static final MemorySegment ADDR = SYMBOL_LOOKUP.findOrThrow("munmap");
        static final MethodHandle HANDLE = LINKER.downcallHandle(ADDR, DESC, CAPTURE_ERRNO);
    }

    /**
     * {@code int munmap(void *addr, size_t length)}.
     *
     * @param state  receives {@code errno} on failure.
     * @param addr   page-aligned start of the range.
     * @param length of the range in bytes.
     * @return 0 on success, -1 on failure.
     */
    public static int munmap(final CallState state, final MemorySegment addr, final long length)
    {
        try
        {
            return (int)munmap.HANDLE.invokeExact(state.segment(), addr, length);
        }
        catch (final Throwable ex)
        {
            throw rethrow(ex);
        }
    }

    private static final class madvise
    {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_POINTER, C_SIZE_T, C_INT);
        static final MemorySegment ADDR = SYMBOL_LOOKUP.findOrThrow("madvise");
        static final MethodHandle HANDLE = LINKER.downcallHandle(ADDR, DESC, CAPTURE_ERRNO);
    }

    /**
     * {@code int madvise(void *addr, size_t length, int advice)}.
     *
     * @param state  receives {@code errno} on failure.
     * @param addr   page-aligned start of the range.
     * @param length of the range in bytes.
     * @param advice one of {@code MADV_*}.
     * @return 0 on success, -1 on failure.
     */
    public static int madvise(final CallState state, final MemorySegment addr, final long length, final int advice)
    {
        try
        {
            return (int)madvise.HANDLE.invokeExact(state.segment(), addr, length, advice);
        }
        catch (final Throwable ex)
        {
            throw rethrow(ex);
        }
    }

    private static final class open
    {
        // open is variadic: the mode travels in the variadic part, which matters to the calling convention.
        static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_POINTER, C_INT, C_MODE_T);
        static final MemorySegment ADDR = SYMBOL_LOOKUP.findOrThrow("open");
        static final MethodHandle HANDLE = LINKER.downcallHandle(
            ADDR, DESC, Linker.Option.firstVariadicArg(2), CAPTURE_ERRNO);
    }

    /**
     * {@code int open(const char *path, int flags, ... /* mode_t mode *}{@code /)}.
     *
     * @param state receives {@code errno} on failure.
     * @param path  NUL-terminated path, e.g. from {@code Arena.allocateFrom(String)}.
     * @param flags {@code O_*} bits.
     * @param mode  permission bits used with {@link #O_CREAT}, ignored otherwise.
     * @return a file descriptor, or -1 on failure.
     */
    public static int open(final CallState state, final MemorySegment path, final int flags, final int mode)
    {
        try
        {
            return (int)open.HANDLE.invokeExact(state.segment(), path, flags, mode);
        }
        catch (final Throwable ex)
        {
            throw rethrow(ex);
        }
    }

    private static final class close
    {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_INT);
        static final MemorySegment ADDR = SYMBOL_LOOKUP.findOrThrow("close");
        static final MethodHandle HANDLE = LINKER.downcallHandle(ADDR, DESC, CAPTURE_ERRNO);
    }

    /**
     * {@code int close(int fd)}.
     *
     * @param state receives {@code errno} on failure.
     * @param fd    to close.
     * @return 0 on success, -1 on failure.
     */
    public static int close(final CallState state, final int fd)
    {
        try
        {
            return (int)close.HANDLE.invokeExact(state.segment(), fd);
        }
        catch (final Throwable ex)
        {
            throw rethrow(ex);
        }
    }

    private static final class ftruncate
    {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_INT, C_OFF_T);
        static final MemorySegment ADDR = SYMBOL_LOOKUP.findOrThrow("ftruncate");
        static final MethodHandle HANDLE = LINKER.downcallHandle(ADDR, DESC, CAPTURE_ERRNO);
    }

    /**
     * {@code int ftruncate(int fd, off_t length)}.
     *
     * @param state  receives {@code errno} on failure.
     * @param fd     open for writing.
     * @param length new file length in bytes.
     * @return 0 on success, -1 on failure.
     */
    public static int ftruncate(final CallState state, final int fd, final long length)
    {
        try
        {
            return (int)ftruncate.HANDLE.invokeExact(state.segment(), fd, length);
        }
        catch (final Throwable ex)
        {
            throw rethrow(ex);
        }
    }

    private static final class fallocate
    {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_INT, C_INT, C_OFF_T, C_OFF_T);
        static final MemorySegment ADDR = SYMBOL_LOOKUP.findOrThrow("fallocate");
        static final MethodHandle HANDLE = LINKER.downcallHandle(ADDR, DESC, CAPTURE_ERRNO);
    }

    /**
     * {@code int fallocate(int fd, int mode, off_t offset, off_t len)}.
     *
     * @param state  receives {@code errno} on failure.
     * @param fd     open for writing.
     * @param mode   0 to allocate and extend, or {@code FALLOC_FL_*} bits.
     * @param offset of the range in bytes.
     * @param length of the range in bytes.
     * @return 0 on success, -1 on failure ({@link Errno#EOPNOTSUPP} on file systems without support).
     */
    public static int fallocate(final CallState state, final int fd, final int mode, final long offset, final long length)
    {
        try
        {
            return (int)fallocate.HANDLE.invokeExact(state.segment(), fd, mode, offset, length);
        }
        catch (final Throwable ex)
        {
            throw rethrow(ex);
        }
    }

    private static final class fsync
    {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_INT);
        static final MemorySegment ADDR = SYMBOL_LOOKUP.findOrThrow("fsync");
        static final MethodHandle HANDLE = LINKER.downcallHandle(ADDR, DESC, CAPTURE_ERRNO);
    }

    /**
     * {@code int fsync(int fd)}.
     *
     * @param state receives {@code errno} on failure.
     * @param fd    to flush to stable storage.
     * @return 0 on success, -1 on failure.
     */
    public static int fsync(final CallState state, final int fd)
    {
        try
        {
            return (int)fsync.HANDLE.invokeExact(state.segment(), fd);
        }
        catch (final Throwable ex)
        {
            throw rethrow(ex);
        }
    }

    private static final class syscall
    {
        // glibc's syscall(2) always loads six argument registers, so one six-argument shape serves every call;
        // every variadic argument is passed as a full long so no register keeps stale upper bits.
        static final FunctionDescriptor DESC = FunctionDescriptor.of(
            C_LONG, C_LONG, C_LONG, C_LONG, C_LONG, C_LONG, C_LONG, C_LONG);
        static final MemorySegment ADDR = SYMBOL_LOOKUP.findOrThrow("syscall");
        static final MethodHandle HANDLE = LINKER.downcallHandle(
            ADDR, DESC, Linker.Option.firstVariadicArg(1), CAPTURE_ERRNO);
    }

    /**
     * {@code long syscall(long number, ...)} with six arguments; unused ones should be 0. Pointers are passed as
     * {@link MemorySegment#address()}, so the caller keeps the memory alive for the duration of the call.
     *
     * @param state  receives {@code errno} on failure.
     * @param number {@code SYS_*} number.
     * @param arg1   first argument.
     * @param arg2   second argument.
     * @param arg3   third argument.
     * @param arg4   fourth argument.
     * @param arg5   fifth argument.
     * @param arg6   sixth argument.
     * @return the system call's result, -1 on failure.
     */
    public static long syscall(
        final CallState state,
        final long number,
        final long arg1,
        final long arg2,
        final long arg3,
        final long arg4,
        final long arg5,
        final long arg6)
    {
        try
        {
            return (long)syscall.HANDLE.invokeExact(state.segment(), number, arg1, arg2, arg3, arg4, arg5, arg6);
        }
        catch (final Throwable ex)
        {
            throw rethrow(ex);
        }
    }

    private static final class prctl
    {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_INT, C_LONG, C_LONG, C_LONG, C_LONG);
        static final MemorySegment ADDR = SYMBOL_LOOKUP.findOrThrow("prctl");
        static final MethodHandle HANDLE = LINKER.downcallHandle(
            ADDR, DESC, Linker.Option.firstVariadicArg(1), CAPTURE_ERRNO);
    }

    /**
     * {@code int prctl(int option, ...)}, called with four {@code unsigned long} arguments (the kernel reads as many
     * as the option needs).
     *
     * @param state  receives {@code errno} on failure.
     * @param option a {@code PR_*} option.
     * @return the option's result (0 for setters), -1 on failure.
     */
    public static int prctl(
        final CallState state, final int option, final long arg2, final long arg3, final long arg4, final long arg5)
    {
        try
        {
            return (int)prctl.HANDLE.invokeExact(state.segment(), option, arg2, arg3, arg4, arg5);
        }
        catch (final Throwable ex)
        {
            throw rethrow(ex);
        }
    }

    private static final class gettid
    {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(C_PID_T);
        static final MemorySegment ADDR = SYMBOL_LOOKUP.findOrThrow("gettid");
        static final MethodHandle HANDLE = LINKER.downcallHandle(ADDR, DESC);
    }

    /**
     * {@code pid_t gettid(void)}: the kernel's id of the calling thread (glibc 2.30+).
     *
     * @return the thread id; the call cannot fail.
     */
    public static int gettid()
    {
        try
        {
            return (int)gettid.HANDLE.invokeExact();
        }
        catch (final Throwable ex)
        {
            throw rethrow(ex);
        }
    }

    private static final class setpriority
    {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_INT, C_INT, C_INT);
        static final MemorySegment ADDR = SYMBOL_LOOKUP.findOrThrow("setpriority");
        static final MethodHandle HANDLE = LINKER.downcallHandle(ADDR, DESC, CAPTURE_ERRNO);
    }

    /**
     * {@code int setpriority(int which, id_t who, int prio)}. With {@link #PRIO_PROCESS} and a thread id from
     * {@link #gettid()} it sets the nice value of that thread alone (Linux). Raising one's own nice value needs no
     * privilege; lowering it does.
     *
     * @param state receives {@code errno} on failure.
     * @param which {@link #PRIO_PROCESS}.
     * @param who   a process or thread id, 0 for the calling thread.
     * @param prio  nice value, -20 (favoured) to 19 (least favoured).
     * @return 0 on success, -1 on failure.
     */
    public static int setpriority(final CallState state, final int which, final int who, final int prio)
    {
        try
        {
            return (int)setpriority.HANDLE.invokeExact(state.segment(), which, who, prio);
        }
        catch (final Throwable ex)
        {
            throw rethrow(ex);
        }
    }

    private static final class epoll_create1
    {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_INT);
        static final MemorySegment ADDR = SYMBOL_LOOKUP.findOrThrow("epoll_create1");
        static final MethodHandle HANDLE = LINKER.downcallHandle(ADDR, DESC, CAPTURE_ERRNO);
    }

    /**
     * {@code int epoll_create1(int flags)}.
     *
     * @param state receives {@code errno} on failure.
     * @param flags 0 or {@link #EPOLL_CLOEXEC}.
     * @return the epoll file descriptor, -1 on failure.
     */
    public static int epoll_create1(final CallState state, final int flags)
    {
        try
        {
            return (int)epoll_create1.HANDLE.invokeExact(state.segment(), flags);
        }
        catch (final Throwable ex)
        {
            throw rethrow(ex);
        }
    }

    private static final class epoll_ctl
    {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_INT, C_INT, C_INT, C_POINTER);
        static final MemorySegment ADDR = SYMBOL_LOOKUP.findOrThrow("epoll_ctl");
        static final MethodHandle HANDLE = LINKER.downcallHandle(ADDR, DESC, CAPTURE_ERRNO);
    }

    /**
     * {@code int epoll_ctl(int epfd, int op, int fd, struct epoll_event *event)}.
     *
     * @param state receives {@code errno} on failure.
     * @param epfd  the epoll instance.
     * @param op    {@link #EPOLL_CTL_ADD} or {@link #EPOLL_CTL_DEL}.
     * @param fd    the watched file descriptor.
     * @param event an {@link EpollEvent} (ignored for DEL).
     * @return 0 on success, -1 on failure.
     */
    public static int epoll_ctl(
        final CallState state, final int epfd, final int op, final int fd, final MemorySegment event)
    {
        try
        {
            return (int)epoll_ctl.HANDLE.invokeExact(state.segment(), epfd, op, fd, event);
        }
        catch (final Throwable ex)
        {
            throw rethrow(ex);
        }
    }

    private static final class epoll_pwait2
    {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(
            C_INT, C_INT, C_POINTER, C_INT, C_POINTER, C_POINTER);
        static final MemorySegment ADDR = SYMBOL_LOOKUP.findOrThrow("epoll_pwait2");
        static final MethodHandle HANDLE = LINKER.downcallHandle(ADDR, DESC, CAPTURE_ERRNO);
    }

    /**
     * {@code int epoll_pwait2(int epfd, struct epoll_event *events, int maxevents, const struct timespec *timeout,
     * const sigset_t *sigmask)} (glibc 2.35, Linux 5.11): epoll_wait with a nanosecond timeout. Linking the handle
     * throws on an older glibc; callers that can do without it catch that.
     *
     * @param state     receives {@code errno} on failure.
     * @param epfd      the epoll instance.
     * @param events    room for {@code maxevents} {@link EpollEvent}s.
     * @param maxevents at least 1.
     * @param timeout   a {@link KernelTimespec} (the same layout as {@code struct timespec} on LP64), or NULL to
     *                  wait without a limit.
     * @param sigmask   NULL to keep the thread's signal mask.
     * @return the number of ready descriptors (0 on timeout), -1 on failure ({@code EINTR} included).
     */
    public static int epoll_pwait2(
        final CallState state,
        final int epfd,
        final MemorySegment events,
        final int maxevents,
        final MemorySegment timeout,
        final MemorySegment sigmask)
    {
        try
        {
            return (int)epoll_pwait2.HANDLE.invokeExact(state.segment(), epfd, events, maxevents, timeout, sigmask);
        }
        catch (final Throwable ex)
        {
            throw rethrow(ex);
        }
    }

    private static final class read
    {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(C_LONG, C_INT, C_POINTER, C_SIZE_T);
        static final MemorySegment ADDR = SYMBOL_LOOKUP.findOrThrow("read");
        static final MethodHandle HANDLE = LINKER.downcallHandle(ADDR, DESC, CAPTURE_ERRNO);
    }

    /**
     * {@code ssize_t read(int fd, void *buf, size_t count)}.
     *
     * @param state receives {@code errno} on failure.
     * @param fd    to read from.
     * @param buf   at least {@code count} bytes.
     * @param count most bytes to read.
     * @return bytes read, 0 at end of file, -1 on failure ({@code EAGAIN} on an empty non-blocking descriptor).
     */
    public static long read(final CallState state, final int fd, final MemorySegment buf, final long count)
    {
        try
        {
            return (long)read.HANDLE.invokeExact(state.segment(), fd, buf, count);
        }
        catch (final Throwable ex)
        {
            throw rethrow(ex);
        }
    }

    private static final class write
    {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(C_LONG, C_INT, C_POINTER, C_SIZE_T);
        static final MemorySegment ADDR = SYMBOL_LOOKUP.findOrThrow("write");
        static final MethodHandle HANDLE = LINKER.downcallHandle(ADDR, DESC, CAPTURE_ERRNO);
    }

    /**
     * {@code ssize_t write(int fd, const void *buf, size_t count)}.
     *
     * @param state receives {@code errno} on failure.
     * @param fd    to write to.
     * @param buf   at least {@code count} bytes.
     * @param count bytes to write.
     * @return bytes written, -1 on failure ({@code EAGAIN} when a non-blocking pipe is full).
     */
    public static long write(final CallState state, final int fd, final MemorySegment buf, final long count)
    {
        try
        {
            return (long)write.HANDLE.invokeExact(state.segment(), fd, buf, count);
        }
        catch (final Throwable ex)
        {
            throw rethrow(ex);
        }
    }

    private static final class writeNoErrno
    {
        static final MemorySegment ADDR = SYMBOL_LOOKUP.findOrThrow("write");
        static final MethodHandle HANDLE = LINKER.downcallHandle(ADDR, write.DESC);
    }

    /**
     * {@code write(2)} without capturing {@code errno}, for callers that only need to know whether it wrote (waking a
     * thread through an eventfd or a pipe): no call state is touched, so nothing can be left to allocate on the path.
     *
     * @param fd    to write to.
     * @param buf   at least {@code count} bytes.
     * @param count bytes to write.
     * @return bytes written, or -1 on failure (the reason is not kept).
     */
    public static long writeNoErrno(final int fd, final MemorySegment buf, final long count)
    {
        try
        {
            return (long)writeNoErrno.HANDLE.invokeExact(fd, buf, count);
        }
        catch (final Throwable ex)
        {
            throw rethrow(ex);
        }
    }

    private static final class send
    {
        // The buffer is passed as a raw address (a long in an integer register, as a pointer is on LP64) so that a
        // caller sending from an absolute address builds no segment per call.
        static final FunctionDescriptor DESC = FunctionDescriptor.of(C_LONG, C_INT, C_LONG, C_SIZE_T, C_INT);
        static final MemorySegment ADDR = SYMBOL_LOOKUP.findOrThrow("send");
        static final MethodHandle HANDLE = LINKER.downcallHandle(ADDR, DESC, CAPTURE_ERRNO);
    }

    /**
     * {@code ssize_t send(int sockfd, const void *buf, size_t len, int flags)} with the buffer given as an address.
     * The caller keeps the memory alive for the duration of the call.
     *
     * @param state   receives {@code errno} on failure.
     * @param fd      a connected socket.
     * @param address of the first byte to send.
     * @param length  bytes to send.
     * @param flags   {@code MSG_*} bits, e.g. {@link #MSG_NOSIGNAL}.
     * @return bytes sent, -1 on failure ({@code EAGAIN} when a non-blocking socket's buffer is full).
     */
    public static long send(final CallState state, final int fd, final long address, final long length, final int flags)
    {
        try
        {
            return (long)send.HANDLE.invokeExact(state.segment(), fd, address, length, flags);
        }
        catch (final Throwable ex)
        {
            throw rethrow(ex);
        }
    }

    private static final class recv
    {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(C_LONG, C_INT, C_LONG, C_SIZE_T, C_INT);
        static final MemorySegment ADDR = SYMBOL_LOOKUP.findOrThrow("recv");
        static final MethodHandle HANDLE = LINKER.downcallHandle(ADDR, DESC, CAPTURE_ERRNO);
    }

    /**
     * {@code ssize_t recv(int sockfd, void *buf, size_t len, int flags)} with the buffer given as an address.
     * The caller keeps the memory alive for the duration of the call.
     *
     * @param state   receives {@code errno} on failure.
     * @param fd      a connected socket.
     * @param address of the first byte to fill.
     * @param length  most bytes to receive.
     * @param flags   {@code MSG_*} bits.
     * @return bytes received, 0 when the peer has shut down, -1 on failure ({@code EAGAIN} when nothing is there).
     */
    public static long recv(final CallState state, final int fd, final long address, final long length, final int flags)
    {
        try
        {
            return (long)recv.HANDLE.invokeExact(state.segment(), fd, address, length, flags);
        }
        catch (final Throwable ex)
        {
            throw rethrow(ex);
        }
    }

    private static final class sendmsg
    {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(C_LONG, C_INT, C_POINTER, C_INT);
        static final MemorySegment ADDR = SYMBOL_LOOKUP.findOrThrow("sendmsg");
        static final MethodHandle HANDLE = LINKER.downcallHandle(ADDR, DESC, CAPTURE_ERRNO);
    }

    /**
     * {@code ssize_t sendmsg(int sockfd, const struct msghdr *msg, int flags)}: a gathering send of the
     * {@link Iovec}s a {@link MsgHdr} names.
     *
     * @param state receives {@code errno} on failure.
     * @param fd    a connected socket.
     * @param msg   a {@link MsgHdr}.
     * @param flags {@code MSG_*} bits, e.g. {@link #MSG_NOSIGNAL}.
     * @return bytes sent, -1 on failure ({@code EAGAIN} when a non-blocking socket's buffer is full).
     */
    public static long sendmsg(final CallState state, final int fd, final MemorySegment msg, final int flags)
    {
        try
        {
            return (long)sendmsg.HANDLE.invokeExact(state.segment(), fd, msg, flags);
        }
        catch (final Throwable ex)
        {
            throw rethrow(ex);
        }
    }

    private static final class eventfd
    {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_INT, C_INT);
        static final MemorySegment ADDR = SYMBOL_LOOKUP.findOrThrow("eventfd");
        static final MethodHandle HANDLE = LINKER.downcallHandle(ADDR, DESC, CAPTURE_ERRNO);
    }

    /**
     * {@code int eventfd(unsigned int initval, int flags)}.
     *
     * @param state   receives {@code errno} on failure.
     * @param initval the counter's first value.
     * @param flags   {@link #EFD_NONBLOCK}, {@link #EFD_CLOEXEC}.
     * @return the descriptor, -1 on failure.
     */
    public static int eventfd(final CallState state, final int initval, final int flags)
    {
        try
        {
            return (int)eventfd.HANDLE.invokeExact(state.segment(), initval, flags);
        }
        catch (final Throwable ex)
        {
            throw rethrow(ex);
        }
    }

    private static final class mkfifo
    {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_POINTER, C_MODE_T);
        static final MemorySegment ADDR = SYMBOL_LOOKUP.findOrThrow("mkfifo");
        static final MethodHandle HANDLE = LINKER.downcallHandle(ADDR, DESC, CAPTURE_ERRNO);
    }

    /**
     * {@code int mkfifo(const char *path, mode_t mode)}.
     *
     * @param state receives {@code errno} on failure.
     * @param path  NUL-terminated path of the new FIFO.
     * @param mode  permission bits (less the process umask).
     * @return 0 on success, -1 on failure ({@code EEXIST} when the path exists).
     */
    public static int mkfifo(final CallState state, final MemorySegment path, final int mode)
    {
        try
        {
            return (int)mkfifo.HANDLE.invokeExact(state.segment(), path, mode);
        }
        catch (final Throwable ex)
        {
            throw rethrow(ex);
        }
    }

    private static final class getpid
    {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(C_PID_T);
        static final MemorySegment ADDR = SYMBOL_LOOKUP.findOrThrow("getpid");
        static final MethodHandle HANDLE = LINKER.downcallHandle(ADDR, DESC);
    }

    /**
     * {@code pid_t getpid(void)}, which cannot fail.
     *
     * @return the calling process's id.
     */
    public static int getpid()
    {
        try
        {
            return (int)getpid.HANDLE.invokeExact();
        }
        catch (final Throwable ex)
        {
            throw rethrow(ex);
        }
    }

    private static final class strerror
    {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(C_POINTER, C_INT);
        static final MemorySegment ADDR = SYMBOL_LOOKUP.findOrThrow("strerror");
        static final MethodHandle HANDLE = LINKER.downcallHandle(ADDR, DESC);
    }

    /**
     * {@code char *strerror(int errnum)}. glibc returns a static string for known values and a thread-local
     * buffer for unknown ones, so the result is safe to read on the calling thread until its next call.
     *
     * @param errnum an {@code errno} value.
     * @return a zero-length segment at the NUL-terminated message.
     */
    public static MemorySegment strerror(final int errnum)
    {
        try
        {
            return (MemorySegment)strerror.HANDLE.invokeExact(errnum);
        }
        catch (final Throwable ex)
        {
            throw rethrow(ex);
        }
    }

    /**
     * {@link #strerror(int)} copied into a Java string; allocates, so for error paths only.
     *
     * @param errnum an {@code errno} value.
     * @return libc's description of the value.
     */
    public static String strerrorString(final int errnum)
    {
        final MemorySegment message = strerror(errnum);
        if (MemorySegment.NULL.equals(message))
        {
            return "Unknown error " + errnum;
        }

        // Restricted but bounded: glibc's messages are short, a stray pointer still stops at 1 KiB.
        return message.reinterpret(1024).getString(0);
    }

    private static RuntimeException rethrow(final Throwable ex)
    {
        // invokeExact declares Throwable; what a downcall can really throw is unchecked (e.g. a closed arena).
        if (ex instanceof RuntimeException runtimeException)
        {
            return runtimeException;
        }
        if (ex instanceof Error error)
        {
            throw error;
        }
        return new IllegalStateException("unexpected checked exception from a downcall", ex);
    }
}
