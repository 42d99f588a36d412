package io.orbitkv.ffm;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * One io_uring instance driven through the raw system calls ({@code io_uring_setup}, {@code io_uring_enter},
 * {@code io_uring_register}) with its SQ ring, CQ ring and SQE array mapped into this process. liburing is not
 * used: its preparation and completion helpers are {@code static inline} and cannot be called through FFM.
 *
 * <p>Single-thread owner: one thread prepares, submits and reaps; nothing here is safe to share. After
 * construction no operation allocates: SQEs are written in place, completions are handed to a
 * {@link CompletionHandler} as primitives, and errno lands in a pre-allocated {@link CallState}.
 *
 * <p>Memory ordering follows the kernel's ring protocol: SQEs are written with plain stores and published by a
 * release store of the SQ tail; the kernel's SQ head is read with acquire; the CQ tail is read with acquire
 * before the CQEs it covers and the CQ head is released once they are consumed.
 *
 * <p>Back-pressure instead of blocking: {@link #nextSqe()} returns {@link #RING_FULL} when the SQ has no free
 * entry <em>or</em> when another operation could overflow the CQ, because every submitted SQE still owes a CQE.
 * Bounding in-flight operations by the CQ size means no completion ever waits in the kernel's overflow list.
 * This requires one CQE per SQE, so {@code IOSQE_CQE_SKIP_SUCCESS} and multishot requests are not offered.
 *
 * <p>With {@code IORING_SETUP_DEFER_TASKRUN} (or {@code COOP_TASKRUN}) the kernel posts completions only when
 * the owner enters it, so poll with {@link #submitAndWait(int)} (which passes {@code IORING_ENTER_GETEVENTS},
 * also with a minimum of 0) before {@link #pollCompletions(CompletionHandler, int)}. With
 * {@code SINGLE_ISSUER} the thread that constructs the ring must be the one that submits to it.
 *
 * <p>Why one file over 700 lines: it is the binding of one kernel object, the shape liburing gives {@code struct
 * io_uring} (set-up and mapping, one {@code prep*} per opcode, submit, reap, buffer registration). Every part reads
 * and writes the same ring offsets and cached head and tail; split across classes, the memory-ordering protocol
 * above would no longer be visible in one place.
 */
@SuppressWarnings("restricted") // binding native code is this class's purpose; JVMs run with native access
public final class IoUring implements AutoCloseable
{
    /** Returned by {@link #nextSqe()} when no SQE can be handed out until something is submitted or reaped. */
    public static final int RING_FULL = -1;

    /** The sysctl that disables io_uring: 0 enabled, 1 only for a group, 2 for everyone. */
    public static final Path IO_URING_DISABLED_PATH = Path.of("/proc/sys/kernel/io_uring_disabled");

    /**
     * Receives one completion; {@code res} is the operation's result, e.g. bytes transferred, or {@code -errno}.
     * Failed I/O is reported here, never thrown.
     */
    @FunctionalInterface
    public interface CompletionHandler
    {
        /**
         * @param userData the value given when the SQE was prepared.
         * @param res      the result, negative {@code errno} on failure.
         * @param flags    {@code IORING_CQE_F_*} bits.
         */
        void onCompletion(long userData, int res, int flags);
    }

    /**
     * Whether this process can create an io_uring, and if not why, so a caller can choose its fallback backend
     * and say which one is active.
     *
     * @param available true if a ring could be created.
     * @param errno     of the failed {@code io_uring_setup}, 0 when available.
     * @param features  {@code IORING_FEAT_*} bits the kernel reports, 0 when unavailable.
     * @param reason    a sentence for logs and {@code stat} output.
     */
    public record Availability(boolean available, int errno, int features, String reason)
    {
    }

    private static final VarHandle INT = ValueLayout.JAVA_INT.varHandle();
    private static final long SQE_SIZE = 64;
    private static final int SQE_SHIFT = 6;
    private static final int CQE_SHIFT = 4;
    private static final int RING_PROT = LibC.PROT_READ | LibC.PROT_WRITE;
    private static final int RING_MAP_FLAGS = LibC.MAP_SHARED | LibC.MAP_POPULATE;
    private static final int UNSUPPORTED_SETUP_FLAGS =
        IoUringConstants.IORING_SETUP_SQE128 | IoUringConstants.IORING_SETUP_CQE32;

    private final CallState state = new CallState();
    private final int ringFd;
    private final int setupFlags;
    private final int features;
    private final int sqEntries;
    private final int cqEntries;
    private final int sqMask;
    private final int cqMask;
    private final boolean isSqPoll;

    private final long sqRingAddress;
    private final long sqRingLength;
    private final long cqRingAddress;
    private final long cqRingLength;
    private final long sqesAddress;
    private final long sqesLength;

    private final Arena arena;
    private final MemorySegment sqRing;
    private final MemorySegment cqRing;
    private final MemorySegment sqes;
    private final MemorySegment waitArg;
    private final MemorySegment waitTimeout;

    private final long sqHeadOffset;
    private final long sqTailOffset;
    private final long sqFlagsOffset;
    private final long sqDroppedOffset;
    private final long cqHeadOffset;
    private final long cqTailOffset;
    private final long cqOverflowOffset;
    private final long cqesOffset;

    private int sqeTail;
    private int sqePublished;
    private int sqHeadCache;
    private int cqHead;
    private int registeredBufferCount;
    private boolean isClosed;

    /**
     * Create a ring with {@code entries} SQEs and the kernel's default CQ size (twice the SQ).
     *
     * @param entries    SQ size, rounded up to a power of two by the kernel.
     * @param setupFlags {@code IORING_SETUP_*} bits.
     * @throws NativeCallException if the kernel refuses; {@link NativeCallException#errno()} is
     *                             {@link Errno#EPERM} or {@link Errno#ENOSYS} when io_uring is disabled or filtered.
     */
    public IoUring(final int entries, final int setupFlags)
    {
        this(entries, setupFlags, 0);
    }

    /**
     * Create a ring with {@code entries} SQEs and, when {@code cqEntries} is positive, that many CQEs
     * ({@code IORING_SETUP_CQSIZE} is then added to the flags).
     *
     * @param entries    SQ size, rounded up to a power of two by the kernel.
     * @param setupFlags {@code IORING_SETUP_*} bits; {@code SQE128} and {@code CQE32} are not supported.
     * @param cqEntries  CQ size, at least {@code entries}, or 0 for the kernel's default.
     * @throws IllegalArgumentException if a size or flag is not supported.
     * @throws NativeCallException      naming the failed call when setup or mapping fails.
     */
    public IoUring(final int entries, final int setupFlags, final int cqEntries)
    {
        if (entries <= 0)
        {
            throw new IllegalArgumentException("entries must be positive: " + entries);
        }
        if (cqEntries < 0 || (cqEntries > 0 && cqEntries < entries))
        {
            throw new IllegalArgumentException("cqEntries must be 0 or >= entries (" + entries + "): " + cqEntries);
        }
        if ((setupFlags & UNSUPPORTED_SETUP_FLAGS) != 0)
        {
            throw new IllegalArgumentException("SQE128/CQE32 rings are not supported: flags=0x" +
                Integer.toHexString(setupFlags));
        }

        final int flags = cqEntries > 0 ? setupFlags | IoUringConstants.IORING_SETUP_CQSIZE : setupFlags;
        final MemorySegment params;
        try (Arena setupArena = Arena.ofConfined())
        {
            final MemorySegment setupParams = IoUringParams.allocate(setupArena);
            IoUringParams.flags(setupParams, flags);
            IoUringParams.cq_entries(setupParams, cqEntries);
            final long fd = LibC.syscall(
                state, LibC.SYS_IO_URING_SETUP, entries, setupParams.address(), 0, 0, 0, 0);
            if (fd < 0)
            {
                final int errno = state.errno();
                throw new NativeCallException(
                    "io_uring_setup(entries=" + entries + ", flags=0x" + Integer.toHexString(flags) +
                    ", cqEntries=" + cqEntries + ")", errno, setupHint(errno));
            }
            ringFd = (int)fd;
            params = Arena.ofAuto().allocate(IoUringParams.sizeof()).copyFrom(setupParams);
        }

        this.setupFlags = flags;
        features = IoUringParams.features(params);
        sqEntries = IoUringParams.sq_entries(params);
        this.cqEntries = IoUringParams.cq_entries(params);
        isSqPoll = (flags & IoUringConstants.IORING_SETUP_SQPOLL) != 0;

        final long sqOff = IoUringParams.SQ_OFF$OFFSET;
        final long cqOff = IoUringParams.CQ_OFF$OFFSET;
        sqHeadOffset = ringOffset(params, sqOff + IoSqringOffsets.HEAD$OFFSET);
        sqTailOffset = ringOffset(params, sqOff + IoSqringOffsets.TAIL$OFFSET);
        sqFlagsOffset = ringOffset(params, sqOff + IoSqringOffsets.FLAGS$OFFSET);
        sqDroppedOffset = ringOffset(params, sqOff + IoSqringOffsets.DROPPED$OFFSET);
        final long sqArrayOffset = ringOffset(params, sqOff + IoSqringOffsets.ARRAY$OFFSET);
        final long sqMaskOffset = ringOffset(params, sqOff + IoSqringOffsets.RING_MASK$OFFSET);
        cqHeadOffset = ringOffset(params, cqOff + IoCqringOffsets.HEAD$OFFSET);
        cqTailOffset = ringOffset(params, cqOff + IoCqringOffsets.TAIL$OFFSET);
        cqOverflowOffset = ringOffset(params, cqOff + IoCqringOffsets.OVERFLOW$OFFSET);
        cqesOffset = ringOffset(params, cqOff + IoCqringOffsets.CQES$OFFSET);
        final long cqMaskOffset = ringOffset(params, cqOff + IoCqringOffsets.RING_MASK$OFFSET);

        final boolean isSingleMmap = (features & IoUringConstants.IORING_FEAT_SINGLE_MMAP) != 0;
        final long sqLength = sqArrayOffset + (long)sqEntries * Integer.BYTES;
        final long cqLength = cqesOffset + ((long)this.cqEntries << CQE_SHIFT);
        long sqAddress = LibC.MAP_FAILED;
        long cqAddress = LibC.MAP_FAILED;
        long sqesAt = LibC.MAP_FAILED;
        try
        {
            // One mapping serves both rings when the kernel lays them out in one region (5.4+).
            sqRingLength = isSingleMmap ? Math.max(sqLength, cqLength) : sqLength;
            sqAddress = mapRing(sqRingLength, IoUringConstants.IORING_OFF_SQ_RING, "IORING_OFF_SQ_RING");
            cqRingLength = isSingleMmap ? 0 : cqLength;
            cqAddress = isSingleMmap ? sqAddress :
                mapRing(cqRingLength, IoUringConstants.IORING_OFF_CQ_RING, "IORING_OFF_CQ_RING");
            sqesLength = (long)sqEntries * SQE_SIZE;
            sqesAt = mapRing(sqesLength, IoUringConstants.IORING_OFF_SQES, "IORING_OFF_SQES");
        }
        catch (final RuntimeException ex)
        {
            unmapQuietly(sqesAt, (long)sqEntries * SQE_SIZE);
            if (cqAddress != sqAddress)
            {
                unmapQuietly(cqAddress, cqLength);
            }
            unmapQuietly(sqAddress, isSingleMmap ? Math.max(sqLength, cqLength) : sqLength);
            LibC.close(state, ringFd);
            throw ex;
        }
        sqRingAddress = sqAddress;
        cqRingAddress = cqAddress;
        sqesAddress = sqesAt;

        arena = Arena.ofShared();
        sqRing = MemorySegment.ofAddress(sqRingAddress).reinterpret(sqRingLength, arena, null);
        cqRing = isSingleMmap ? sqRing : MemorySegment.ofAddress(cqRingAddress).reinterpret(cqRingLength, arena, null);
        sqes = MemorySegment.ofAddress(sqesAddress).reinterpret(sqesLength, arena, null);
        waitArg = IoUringGeteventsArg.allocate(arena);
        waitTimeout = KernelTimespec.allocate(arena);
        IoUringGeteventsArg.ts(waitArg, waitTimeout.address());
        sqMask = sqRing.get(ValueLayout.JAVA_INT, sqMaskOffset);
        cqMask = cqRing.get(ValueLayout.JAVA_INT, cqMaskOffset);

        // SQE i always sits in array slot i, so publishing is a tail store; the indirection is never used.
        for (int i = 0; i < sqEntries; i++)
        {
            sqRing.set(ValueLayout.JAVA_INT, sqArrayOffset + (long)i * Integer.BYTES, i);
        }
        sqeTail = (int)INT.getAcquire(sqRing, sqTailOffset);
        sqePublished = sqeTail;
        sqHeadCache = (int)INT.getAcquire(sqRing, sqHeadOffset);
        cqHead = (int)INT.getAcquire(cqRing, cqHeadOffset);
    }

    /**
     * Find out whether io_uring can be used here by creating and closing a one-entry ring. Allocates; call at
     * start-up to choose between this ring and a {@code FileChannel} fallback.
     *
     * @return availability, with the errno and a reason when unavailable.
     */
    public static Availability probe()
    {
        final CallState probeState = new CallState();
        try (Arena probeArena = Arena.ofConfined())
        {
            final MemorySegment params = IoUringParams.allocate(probeArena);
            final long fd = LibC.syscall(probeState, LibC.SYS_IO_URING_SETUP, 1, params.address(), 0, 0, 0, 0);
            if (fd < 0)
            {
                final int errno = probeState.errno();
                return new Availability(false, errno, 0, "io_uring_setup failed: " + Errno.describe(errno) + "; " +
                    setupHint(errno));
            }
            LibC.close(probeState, (int)fd);
            final int features = IoUringParams.features(params);
            return new Availability(true, 0, features, "io_uring available (features=0x" +
                Integer.toHexString(features) + ")");
        }
    }

    /**
     * Hand out the next free SQE, to be filled by exactly one {@code prep*} call before the next
     * {@link #submit()}. Never blocks.
     *
     * @return the SQE's index, or {@link #RING_FULL} when the SQ is full or the CQ could not take one more
     * completion; submit and reap, then retry.
     */
    public int nextSqe()
    {
        final int tail = sqeTail;
        if (tail - sqHeadCache >= sqEntries)
        {
            sqHeadCache = (int)INT.getAcquire(sqRing, sqHeadOffset);
            if (tail - sqHeadCache >= sqEntries)
            {
                return RING_FULL;
            }
        }
        if (tail - cqHead >= cqEntries)
        {
            return RING_FULL;
        }

        sqeTail = tail + 1;
        return tail & sqMask;
    }

    /**
     * Prepare a no-op, which completes with {@code res == 0}.
     *
     * @param sqe      index from {@link #nextSqe()}.
     * @param userData returned with the completion.
     */
    public void prepNop(final int sqe, final long userData)
    {
        prep(sqe, IoUringConstants.IORING_OP_NOP, -1, 0, 0, 0, userData, 0, 0);
    }

    /**
     * Prepare {@code pread(fd, buf, len, fileOffset)}.
     *
     * @param sqe        index from {@link #nextSqe()}.
     * @param fd         open file; with {@code O_DIRECT} address, length and offset must be block aligned.
     * @param bufAddress native address of the destination.
     * @param len        bytes to read.
     * @param fileOffset where to read from, or -1 for the file position.
     * @param userData   returned with the completion.
     */
    public void prepRead(
        final int sqe, final int fd, final long bufAddress, final int len, final long fileOffset, final long userData)
    {
        prep(sqe, IoUringConstants.IORING_OP_READ, fd, bufAddress, len, fileOffset, userData, 0, 0);
    }

    /**
     * Prepare {@code pwrite(fd, buf, len, fileOffset)}.
     *
     * @param sqe        index from {@link #nextSqe()}.
     * @param fd         open file; with {@code O_DIRECT} address, length and offset must be block aligned.
     * @param bufAddress native address of the source.
     * @param len        bytes to write.
     * @param fileOffset where to write to, or -1 for the file position.
     * @param userData   returned with the completion.
     */
    public void prepWrite(
        final int sqe, final int fd, final long bufAddress, final int len, final long fileOffset, final long userData)
    {
        prep(sqe, IoUringConstants.IORING_OP_WRITE, fd, bufAddress, len, fileOffset, userData, 0, 0);
    }

    /**
     * Prepare a read into a buffer registered with {@link #registerBuffers(MemorySegment...)}, which spares the
     * kernel pinning the pages on every request.
     *
     * @param sqe        index from {@link #nextSqe()}.
     * @param fd         open file.
     * @param bufAddress native address inside registered buffer {@code bufIndex}.
     * @param len        bytes to read; the range must lie inside that buffer.
     * @param fileOffset where to read from.
     * @param userData   returned with the completion.
     * @param bufIndex   index of the registered buffer.
     */
    public void prepReadFixed(
        final int sqe,
        final int fd,
        final long bufAddress,
        final int len,
        final long fileOffset,
        final long userData,
        final int bufIndex)
    {
        prep(sqe, IoUringConstants.IORING_OP_READ_FIXED, fd, bufAddress, len, fileOffset, userData, bufIndex, 0);
    }

    /**
     * Prepare a write from a buffer registered with {@link #registerBuffers(MemorySegment...)}.
     *
     * @param sqe        index from {@link #nextSqe()}.
     * @param fd         open file.
     * @param bufAddress native address inside registered buffer {@code bufIndex}.
     * @param len        bytes to write; the range must lie inside that buffer.
     * @param fileOffset where to write to.
     * @param userData   returned with the completion.
     * @param bufIndex   index of the registered buffer.
     */
    public void prepWriteFixed(
        final int sqe,
        final int fd,
        final long bufAddress,
        final int len,
        final long fileOffset,
        final long userData,
        final int bufIndex)
    {
        prep(sqe, IoUringConstants.IORING_OP_WRITE_FIXED, fd, bufAddress, len, fileOffset, userData, bufIndex, 0);
    }

    /**
     * Prepare {@code fsync(fd)}, or {@code fdatasync(fd)} with {@code IORING_FSYNC_DATASYNC}. It is not ordered
     * after writes in flight: submit it after they complete.
     *
     * @param sqe        index from {@link #nextSqe()}.
     * @param fd         open file.
     * @param fsyncFlags 0 or {@code IORING_FSYNC_DATASYNC}.
     * @param userData   returned with the completion.
     */
    public void prepFsync(final int sqe, final int fd, final int fsyncFlags, final long userData)
    {
        prep(sqe, IoUringConstants.IORING_OP_FSYNC, fd, 0, 0, 0, userData, 0, fsyncFlags);
    }

    /**
     * Publish every prepared SQE and tell the kernel about them with one {@code io_uring_enter}. Makes no system
     * call when nothing is queued.
     *
     * @return the number of SQEs the kernel consumed; 0 on {@code EAGAIN}/{@code EBUSY}/{@code EINTR}, after
     * which the SQEs stay queued for the next call.
     * @throws NativeCallException on any other failure of {@code io_uring_enter}.
     */
    public int submit()
    {
        return enter(0, 0, 0, 0);
    }

    /**
     * Like {@link #submit()}, then wait in the kernel until at least {@code minComplete} completions are
     * available. Always enters the kernel, so with {@code minComplete == 0} it flushes deferred completions
     * ({@code DEFER_TASKRUN}, {@code COOP_TASKRUN}) without waiting.
     *
     * @param minComplete completions to wait for; must not exceed {@link #inFlight()} after the submission.
     * @return the number of SQEs the kernel consumed.
     * @throws NativeCallException on a failure other than {@code EAGAIN}/{@code EBUSY}/{@code EINTR}.
     */
    public int submitAndWait(final int minComplete)
    {
        return enter(minComplete, IoUringConstants.IORING_ENTER_GETEVENTS, 0, 0);
    }

    /**
     * Like {@link #submitAndWait(int)} but waiting at most {@code timeoutNs}, so an idle duty cycle can park in
     * the kernel without risking to hang on completions that never come. Needs {@code IORING_FEAT_EXT_ARG}
     * (kernel 5.11+).
     *
     * @param minComplete completions to wait for.
     * @param timeoutNs   longest wait in nanoseconds.
     * @return the number of SQEs the kernel consumed; a timeout is not an error, completions tell what is done.
     * @throws UnsupportedOperationException without {@code IORING_FEAT_EXT_ARG}.
     * @throws NativeCallException           on a failure other than timeout, {@code EAGAIN}, {@code EBUSY} or
     *                                       {@code EINTR}.
     */
    public int submitAndWait(final int minComplete, final long timeoutNs)
    {
        if ((features & IoUringConstants.IORING_FEAT_EXT_ARG) == 0)
        {
            throw new UnsupportedOperationException("kernel lacks IORING_FEAT_EXT_ARG: no timed waits");
        }
        final long timeout = Math.max(0, timeoutNs);
        KernelTimespec.tv_sec(waitTimeout, timeout / 1_000_000_000L);
        KernelTimespec.tv_nsec(waitTimeout, timeout % 1_000_000_000L);

        return enter(
            minComplete,
            IoUringConstants.IORING_ENTER_GETEVENTS | IoUringConstants.IORING_ENTER_EXT_ARG,
            waitArg.address(),
            waitArg.byteSize());
    }

    /**
     * Hand up to {@code limit} available completions to the handler, in the order the kernel posted them,
     * without entering the kernel. A completion is consumed before its handler runs, so a handler that throws
     * loses nothing else and never sees a completion twice.
     *
     * @param handler receives each completion.
     * @param limit   most completions to take.
     * @return completions handled.
     */
    public int pollCompletions(final CompletionHandler handler, final int limit)
    {
        final int tail = (int)INT.getAcquire(cqRing, cqTailOffset);
        int head = cqHead;
        int count = 0;
        try
        {
            while (count < limit && head != tail)
            {
                final long cqe = cqesOffset + ((long)(head & cqMask) << CQE_SHIFT);
                final long userData = cqRing.get(ValueLayout.JAVA_LONG, cqe + IoUringCqe.USER_DATA$OFFSET);
                final int res = cqRing.get(ValueLayout.JAVA_INT, cqe + IoUringCqe.RES$OFFSET);
                final int flags = cqRing.get(ValueLayout.JAVA_INT, cqe + IoUringCqe.FLAGS$OFFSET);
                head++;
                count++;
                handler.onCompletion(userData, res, flags);
            }
        }
        finally
        {
            if (count > 0)
            {
                cqHead = head;
                INT.setRelease(cqRing, cqHeadOffset, head);
            }
        }

        return count;
    }

    /**
     * Register native buffers for {@code READ_FIXED}/{@code WRITE_FIXED}, buffer {@code i} being
     * {@code buffers[i]}. The pages are pinned and count against {@code RLIMIT_MEMLOCK} unless the process has
     * {@code CAP_IPC_LOCK}; allocates, for start-up.
     *
     * @param buffers native segments, each at most 1 GiB, ideally from {@link HugePageMemory}.
     * @throws NativeCallException with {@link Errno#ENOMEM} or {@link Errno#EPERM} when the memlock limit is too
     *                             low; callers fall back to {@link #prepRead}/{@link #prepWrite} then.
     */
    public void registerBuffers(final MemorySegment... buffers)
    {
        final long[] addresses = new long[buffers.length];
        final long[] lengths = new long[buffers.length];
        for (int i = 0; i < buffers.length; i++)
        {
            if (!buffers[i].isNative())
            {
                throw new IllegalArgumentException("buffer " + i + " is not native memory: " + buffers[i]);
            }
            addresses[i] = buffers[i].address();
            lengths[i] = buffers[i].byteSize();
        }
        registerBuffers(addresses, lengths);
    }

    /**
     * Register native buffers given as address and length pairs; see {@link #registerBuffers(MemorySegment...)}.
     *
     * @param addresses start of each buffer.
     * @param lengths   length of each buffer in bytes.
     * @throws NativeCallException naming the call, with a hint on the memlock limit for ENOMEM/EPERM.
     */
    public void registerBuffers(final long[] addresses, final long[] lengths)
    {
        if (addresses.length != lengths.length || addresses.length == 0)
        {
            throw new IllegalArgumentException("need as many lengths as addresses, at least one: " +
                addresses.length + " addresses, " + lengths.length + " lengths");
        }

        long totalBytes = 0;
        try (Arena registerArena = Arena.ofConfined())
        {
            final MemorySegment iovecs = registerArena.allocate(Iovec.layout(), addresses.length);
            for (int i = 0; i < addresses.length; i++)
            {
                final long iovec = i * Iovec.sizeof();
                iovecs.set(LibC.C_POINTER, iovec + Iovec.IOV_BASE$OFFSET, MemorySegment.ofAddress(addresses[i]));
                iovecs.set(LibC.C_SIZE_T, iovec + Iovec.IOV_LEN$OFFSET, lengths[i]);
                totalBytes += lengths[i];
            }

            final long result = LibC.syscall(
                state,
                LibC.SYS_IO_URING_REGISTER,
                ringFd,
                IoUringConstants.IORING_REGISTER_BUFFERS,
                iovecs.address(),
                addresses.length,
                0,
                0);
            if (result < 0)
            {
                final int errno = state.errno();
                throw new NativeCallException(
                    "io_uring_register(fd=" + ringFd + ", IORING_REGISTER_BUFFERS, " + addresses.length +
                    " buffers, " + totalBytes + " bytes)", errno, registerHint(errno));
            }
        }
        registeredBufferCount = addresses.length;
    }

    /**
     * Drop the registered buffers, e.g. before registering another set; does nothing when none are registered.
     *
     * @throws NativeCallException if the kernel refuses.
     */
    public void unregisterBuffers()
    {
        if (0 == registeredBufferCount)
        {
            return;
        }

        final long result = LibC.syscall(
            state, LibC.SYS_IO_URING_REGISTER, ringFd, IoUringConstants.IORING_UNREGISTER_BUFFERS, 0, 0, 0, 0);
        if (result < 0)
        {
            throw new NativeCallException(
                "io_uring_register(fd=" + ringFd + ", IORING_UNREGISTER_BUFFERS)", state.errno());
        }
        registeredBufferCount = 0;
    }

    /**
     * @return the number of SQ entries, a power of two.
     */
    public int sqEntries()
    {
        return sqEntries;
    }

    /**
     * @return the number of CQ entries, which also bounds {@link #inFlight()} plus {@link #pending()}.
     */
    public int cqEntries()
    {
        return cqEntries;
    }

    /**
     * @return operations submitted whose completions have not been reaped yet.
     */
    public int inFlight()
    {
        return sqePublished - cqHead;
    }

    /**
     * @return SQEs handed out by {@link #nextSqe()} and not yet submitted.
     */
    public int pending()
    {
        return sqeTail - sqePublished;
    }

    /**
     * @return the {@code IORING_FEAT_*} bits the kernel reported.
     */
    public int features()
    {
        return features;
    }

    /**
     * @return the {@code IORING_SETUP_*} bits the ring was created with.
     */
    public int setupFlags()
    {
        return setupFlags;
    }

    /**
     * @return the ring's file descriptor.
     */
    public int fd()
    {
        return ringFd;
    }

    /**
     * @return how many buffers are registered for fixed I/O.
     */
    public int registeredBufferCount()
    {
        return registeredBufferCount;
    }

    /**
     * @return true once {@link #close()} has run.
     */
    public boolean isClosed()
    {
        return isClosed;
    }

    /**
     * Unmap the rings and close the ring's descriptor, which also cancels what is in flight and releases
     * registered buffers. Later calls do nothing.
     *
     * @throws NativeCallException if {@code munmap} or {@code close} fails; everything is still attempted.
     */
    public void close()
    {
        if (isClosed)
        {
            return;
        }
        isClosed = true;
        arena.close();

        NativeCallException failure = null;
        failure = unmap(failure, sqesAddress, sqesLength);
        if (cqRingLength > 0)
        {
            failure = unmap(failure, cqRingAddress, cqRingLength);
        }
        failure = unmap(failure, sqRingAddress, sqRingLength);
        if (LibC.close(state, ringFd) != 0 && null == failure)
        {
            failure = new NativeCallException("close(io_uring fd=" + ringFd + ")", state.errno());
        }
        if (null != failure)
        {
            throw failure;
        }
    }

    public String toString()
    {
        return "IoUring{fd=" + ringFd +
            ", sqEntries=" + sqEntries +
            ", cqEntries=" + cqEntries +
            ", setupFlags=0x" + Integer.toHexString(setupFlags) +
            ", features=0x" + Integer.toHexString(features) +
            ", registeredBuffers=" + registeredBufferCount +
            ", closed=" + isClosed +
            '}';
    }

    /**
     * @return where the mappings of this ring start and how long they are: SQ ring, CQ ring (length 0 when it
     * shares the SQ ring's mapping) and SQE array; for tests that check they are gone after close.
     */
    List<long[]> mappings()
    {
        return List.of(
            new long[]{ sqRingAddress, sqRingLength },
            new long[]{ cqRingAddress, cqRingLength },
            new long[]{ sqesAddress, sqesLength });
    }

    /**
     * @return CQEs the kernel could not post because the CQ was full (with FEAT_NODROP they wait in the kernel).
     */
    int cqOverflow()
    {
        return (int)INT.getAcquire(cqRing, cqOverflowOffset);
    }

    /**
     * @return the kernel's flags word of the SQ ring, {@code IORING_SQ_*} bits.
     */
    int sqFlags()
    {
        return (int)INT.getAcquire(sqRing, sqFlagsOffset);
    }

    /**
     * @return SQEs the kernel dropped for carrying an invalid index.
     */
    int sqDropped()
    {
        return (int)INT.getAcquire(sqRing, sqDroppedOffset);
    }

    private void prep(
        final int sqe,
        final int opcode,
        final int fd,
        final long addr,
        final int len,
        final long fileOffset,
        final long userData,
        final int bufIndex,
        final int opFlags)
    {
        // Every field is written: the slot still holds the previous request, and stale unions change semantics.
        final MemorySegment s = sqes;
        final long base = (long)sqe << SQE_SHIFT;
        s.set(ValueLayout.JAVA_BYTE, base + IoUringSqe.OPCODE$OFFSET, (byte)opcode);
        s.set(ValueLayout.JAVA_BYTE, base + IoUringSqe.FLAGS$OFFSET, (byte)0);
        s.set(ValueLayout.JAVA_SHORT, base + IoUringSqe.IOPRIO$OFFSET, (short)0);
        s.set(ValueLayout.JAVA_INT, base + IoUringSqe.FD$OFFSET, fd);
        s.set(ValueLayout.JAVA_LONG, base + IoUringSqe.OFF$OFFSET, fileOffset);
        s.set(ValueLayout.JAVA_LONG, base + IoUringSqe.ADDR$OFFSET, addr);
        s.set(ValueLayout.JAVA_INT, base + IoUringSqe.LEN$OFFSET, len);
        s.set(ValueLayout.JAVA_INT, base + IoUringSqe.RW_FLAGS$OFFSET, opFlags);
        s.set(ValueLayout.JAVA_LONG, base + IoUringSqe.USER_DATA$OFFSET, userData);
        s.set(ValueLayout.JAVA_SHORT, base + IoUringSqe.BUF_INDEX$OFFSET, (short)bufIndex);
        s.set(ValueLayout.JAVA_SHORT, base + IoUringSqe.PERSONALITY$OFFSET, (short)0);
        s.set(ValueLayout.JAVA_INT, base + IoUringSqe.FILE_INDEX$OFFSET, 0);
        s.set(ValueLayout.JAVA_LONG, base + IoUringSqe.ADDR3$OFFSET, 0L);
        s.set(ValueLayout.JAVA_LONG, base + IoUringSqe.PAD2$OFFSET, 0L);
    }

    private int enter(final int minComplete, final int flags, final long arg, final long argSize)
    {
        final int tail = sqeTail;
        if (tail != sqePublished)
        {
            INT.setRelease(sqRing, sqTailOffset, tail);
            sqePublished = tail;
        }
        // Counted from the kernel's head, so SQEs left over by an interrupted or partial submit go in again.
        final int toSubmit = tail - (int)INT.getAcquire(sqRing, sqHeadOffset);

        int enterFlags = flags;
        if (isSqPoll)
        {
            // The poller consumes SQEs by itself; enter only to wake it or to wait. The full fence orders the
            // tail store before the flags load, pairing with the poller's barrier before it sleeps.
            VarHandle.fullFence();
            if ((sqFlags() & IoUringConstants.IORING_SQ_NEED_WAKEUP) != 0)
            {
                enterFlags |= IoUringConstants.IORING_ENTER_SQ_WAKEUP;
            }
            if (0 == enterFlags)
            {
                return toSubmit;
            }
        }
        else if (0 == toSubmit && 0 == flags)
        {
            return 0;
        }

        final long result = LibC.syscall(
            state, LibC.SYS_IO_URING_ENTER, ringFd, toSubmit, minComplete, enterFlags, arg, argSize);
        if (result < 0)
        {
            final int errno = state.errno();
            if (Errno.EAGAIN == errno || Errno.EBUSY == errno || Errno.EINTR == errno || Errno.ETIME == errno)
            {
                return 0;
            }
            throw new NativeCallException(
                "io_uring_enter(fd=" + ringFd + ", toSubmit=" + toSubmit + ", minComplete=" + minComplete +
                ", flags=0x" + Integer.toHexString(enterFlags) + ")", errno);
        }

        return isSqPoll ? toSubmit : (int)result;
    }

    private long mapRing(final long length, final long offset, final String name)
    {
        final MemorySegment mapped = LibC.mmap(
            state, MemorySegment.NULL, length, RING_PROT, RING_MAP_FLAGS, ringFd, offset);
        if (mapped.address() == LibC.MAP_FAILED)
        {
            throw new NativeCallException(
                "mmap(io_uring fd=" + ringFd + ", " + name + ", length=" + length + ")", state.errno());
        }
        return mapped.address();
    }

    private void unmapQuietly(final long address, final long length)
    {
        if (address != LibC.MAP_FAILED)
        {
            LibC.munmap(state, MemorySegment.ofAddress(address), length);
        }
    }

    private NativeCallException unmap(final NativeCallException failure, final long address, final long length)
    {
        if (LibC.munmap(state, MemorySegment.ofAddress(address), length) != 0 && null == failure)
        {
            return new NativeCallException(
                "munmap(io_uring ring at 0x" + Long.toHexString(address) + ", length=" + length + ")",
                state.errno());
        }
        return failure;
    }

    private static long ringOffset(final MemorySegment params, final long offset)
    {
        return Integer.toUnsignedLong(params.get(ValueLayout.JAVA_INT, offset));
    }

    private static String setupHint(final int errno)
    {
        return switch (errno)
        {
            case Errno.EPERM -> "io_uring is disabled for this process (kernel.io_uring_disabled=" +
                ioUringDisabled() + ", or a seccomp filter as in default container profiles): use the FileChannel " +
                "backend";
            case Errno.ENOSYS -> "the kernel has no io_uring or a seccomp filter hides it: use the FileChannel backend";
            case Errno.ENOMEM -> "ring memory counts against RLIMIT_MEMLOCK on kernels before 5.12: " +
                memlockLimit() + "; use fewer entries or raise the limit";
            case Errno.EINVAL -> "entries or flags not supported by this kernel";
            default -> "see io_uring_setup(2)";
        };
    }

    private static String registerHint(final int errno)
    {
        return switch (errno)
        {
            case Errno.ENOMEM, Errno.EPERM -> "registered buffers are pinned and count against RLIMIT_MEMLOCK " +
                "unless the process has CAP_IPC_LOCK (" + memlockLimit() + "); raise the limit or fall back to " +
                "non-fixed READ/WRITE";
            case Errno.EBUSY -> "buffers are already registered; unregisterBuffers() first";
            case Errno.EFAULT -> "a buffer is not mapped memory, or larger than 1 GiB";
            default -> "see io_uring_register(2)";
        };
    }

    private static String ioUringDisabled()
    {
        try
        {
            return Files.readString(IO_URING_DISABLED_PATH).trim();
        }
        catch (final IOException ex)
        {
            return "unknown";
        }
    }

    private static String memlockLimit()
    {
        try
        {
            for (final String line : Files.readAllLines(Path.of("/proc/self/limits")))
            {
                if (line.startsWith("Max locked memory"))
                {
                    return line.replaceAll("\\s+", " ").trim();
                }
            }
            return "Max locked memory unknown";
        }
        catch (final IOException ex)
        {
            return "Max locked memory unknown";
        }
    }
}
