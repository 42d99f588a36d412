package io.orbitkv.ffm;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Real io_uring on real files under target/ on the work disk (never /dev/shm: tmpfs accepts O_DIRECT and
 * ignores it, so alignment errors and the block layer would never be exercised).
 */
// A broken ring blocks in io_uring_enter, where an interrupt cannot reach: time out from another thread.
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class IoUringTest
{
    private static final int MIB = 1024 * 1024;
    private static final int BLOCK_SIZE = 4096;
    private static final long WAIT_NS = TimeUnit.SECONDS.toNanos(5);

    private final CallState state = new CallState();
    private final Completions completions = new Completions(1024);
    private Arena arena;
    private Path directory;
    private long nopSum;
    private long nopRounds;

    @BeforeEach
    void before() throws IOException
    {
        arena = Arena.ofShared();
        directory = WorkDiskDirectory.create("uring-test");
    }

    @AfterEach
    void after() throws IOException
    {
        arena.close();
        WorkDiskDirectory.delete(directory);
    }

    @Test
    void shouldReportAvailabilityMatchingTheSysctl() throws IOException
    {
        final IoUring.Availability availability = IoUring.probe();
        final String disabled = Files.readString(IoUring.IO_URING_DISABLED_PATH).trim();
        if ("0".equals(disabled))
        {
            assertTrue(availability.available(), availability::reason);
            assertEquals(0, availability.errno());
            assertEquals(IoUringConstants.IORING_FEAT_SINGLE_MMAP | IoUringConstants.IORING_FEAT_NODROP,
                availability.features() & (IoUringConstants.IORING_FEAT_SINGLE_MMAP | IoUringConstants.IORING_FEAT_NODROP),
                availability::reason);
        }
        else if ("2".equals(disabled))
        {
            assertFalse(availability.available(), availability::reason);
            assertEquals(Errno.EPERM, availability.errno(), availability::reason);
        }
    }

    @Test
    void shouldFailSetupWithNativeCallExceptionNamingTheCallAndErrno()
    {
        // The kernel caps the SQ at 32768 entries unless IORING_SETUP_CLAMP is given.
        final NativeCallException ex = assertThrows(NativeCallException.class, () -> new IoUring(1 << 20, 0));
        assertEquals(Errno.EINVAL, ex.errno());
        assertTrue(ex.call().startsWith("io_uring_setup(entries=1048576"), ex::getMessage);
    }

    @ParameterizedTest
    @ValueSource(ints = {
        0,
        IoUringConstants.IORING_SETUP_SINGLE_ISSUER | IoUringConstants.IORING_SETUP_DEFER_TASKRUN,
        IoUringConstants.IORING_SETUP_COOP_TASKRUN | IoUringConstants.IORING_SETUP_SUBMIT_ALL,
        IoUringConstants.IORING_SETUP_SQPOLL })
    void shouldRoundTripNopWithUserData(final int setupFlags)
    {
        try (IoUring ring = new IoUring(4, setupFlags))
        {
            final long userData = 0xFEEDFACECAFEBEEFL;
            final int sqe = ring.nextSqe();
            assertNotEquals(IoUring.RING_FULL, sqe);
            ring.prepNop(sqe, userData);
            assertEquals(1, ring.pending());

            assertEquals(1, ring.submitAndWait(1), ring::toString);
            assertEquals(0, ring.pending());
            reapExactly(ring, 1);

            assertEquals(userData, completions.userData[0]);
            assertEquals(0, completions.res[0]);
            assertEquals(0, ring.inFlight());
        }
    }

    @Test
    void shouldWriteAndReadBackSixtyFourMebibyteBlocksWithDirectIoFromHugePageStaging() throws IOException
    {
        final int blocks = 64;
        final long bytes = (long)blocks * MIB;
        try (MappedRegion source = HugePageMemory.mapAnonymous(bytes, true);
            MappedRegion destination = HugePageMemory.mapAnonymous(bytes, true);
            IoUring ring = new IoUring(32, 0))
        {
            fillPattern(source.segment(), 0x5EED);
            final int fd = openDirect("blocks.dat");
            try
            {
                int maxBatch = runBlocks(ring, IoUringConstants.IORING_OP_WRITE, fd, source.address(), blocks, MIB, -1);
                assertEquals(ring.sqEntries(), maxBatch, "SQEs per io_uring_enter");

                final int sqe = ring.nextSqe();
                ring.prepFsync(sqe, fd, 0, 999);
                ring.submitAndWait(1, WAIT_NS);
                reapExactly(ring, 1);
                assertEquals(0, completions.res[0], "fsync");

                maxBatch = runBlocks(ring, IoUringConstants.IORING_OP_READ, fd, destination.address(), blocks, MIB, -1);
                assertEquals(ring.sqEntries(), maxBatch, "SQEs per io_uring_enter");
            }
            finally
            {
                LibC.close(state, fd);
            }

            assertEquals(bytes, Files.size(directory.resolve("blocks.dat")));
            assertEquals(-1, source.segment().mismatch(destination.segment()), "first differing byte");
        }
    }

    @Test
    void shouldWriteAndReadFixedBuffersAfterRegistration()
    {
        final int blocks = 8;
        final long bytes = (long)blocks * MIB;
        try (MappedRegion source = HugePageMemory.mapAnonymous(bytes, true);
            MappedRegion destination = HugePageMemory.mapAnonymous(bytes, true);
            IoUring ring = new IoUring(16, 0))
        {
            registerOrSkip(ring, source.segment(), destination.segment());
            assertEquals(2, ring.registeredBufferCount());
            fillPattern(source.segment(), 0xF1ED);
            final int fd = openDirect("fixed.dat");
            try
            {
                runBlocks(ring, IoUringConstants.IORING_OP_WRITE_FIXED, fd, source.address(), blocks, MIB, 0);
                runBlocks(ring, IoUringConstants.IORING_OP_READ_FIXED, fd, destination.address(), blocks, MIB, 1);
                assertEquals(-1, source.segment().mismatch(destination.segment()), "first differing byte");

                // The kernel really checks the registration: an address outside the named buffer is refused.
                final int sqe = ring.nextSqe();
                ring.prepReadFixed(sqe, fd, destination.address(), BLOCK_SIZE, 0, 7, 0);
                ring.submitAndWait(1, WAIT_NS);
                reapExactly(ring, 1);
                assertEquals(-Errno.EFAULT, completions.res[0]);

                ring.unregisterBuffers();
                assertEquals(0, ring.registeredBufferCount());
                final int afterUnregister = ring.nextSqe();
                ring.prepReadFixed(afterUnregister, fd, destination.address(), BLOCK_SIZE, 0, 8, 1);
                ring.submitAndWait(1, WAIT_NS);
                reapExactly(ring, 1);
                assertTrue(completions.res[0] < 0, () -> "READ_FIXED without registration: " + completions.res[0]);
            }
            finally
            {
                LibC.close(state, fd);
            }
        }
    }

    @Test
    void shouldThrowNamingRegisterCallWhenBufferIsNotMapped()
    {
        final MappedRegion gone = HugePageMemory.mapAnonymous(2 * MIB, false);
        final long address = gone.address();
        gone.close();
        try (IoUring ring = new IoUring(4, 0))
        {
            final NativeCallException ex = assertThrows(
                NativeCallException.class, () -> ring.registerBuffers(new long[]{ address }, new long[]{ 2 * MIB }));
            assertEquals(Errno.EFAULT, ex.errno(), ex::getMessage);
            assertTrue(ex.call().contains("IORING_REGISTER_BUFFERS"), ex::getMessage);
            assertEquals(0, ring.registeredBufferCount());
        }
    }

    @Test
    void shouldCompleteMisalignedDirectReadWithEinvalResultNotException()
    {
        try (MappedRegion buffer = HugePageMemory.mapAnonymous(2 * MIB, true);
            IoUring ring = new IoUring(8, 0))
        {
            fillPattern(buffer.segment(), 7);
            final int fd = openDirect("misaligned.dat");
            try
            {
                // Written data, not a sparse hole: a misaligned read of a hole does no I/O and succeeds.
                runBlocks(ring, IoUringConstants.IORING_OP_WRITE, fd, buffer.address(), 1, MIB, -1);

                ring.prepRead(ring.nextSqe(), fd, buffer.address() + MIB, BLOCK_SIZE, 1, 1);
                ring.prepRead(ring.nextSqe(), fd, buffer.address() + MIB + 1, BLOCK_SIZE, 0, 2);
                ring.prepRead(ring.nextSqe(), fd, buffer.address() + MIB, BLOCK_SIZE, BLOCK_SIZE, 3);
                assertEquals(3, ring.submitAndWait(3, WAIT_NS));
                reapExactly(ring, 3);

                for (int i = 0; i < 3; i++)
                {
                    final long userData = completions.userData[i];
                    final int expected = userData == 3 ? BLOCK_SIZE : -Errno.EINVAL;
                    assertEquals(expected, completions.res[i], () -> "user_data " + userData);
                }
            }
            finally
            {
                LibC.close(state, fd);
            }
        }
    }

    @Test
    void shouldReturnFromTimedWaitWhenNothingCompletes()
    {
        try (IoUring ring = new IoUring(4, IoUringConstants.IORING_SETUP_SINGLE_ISSUER |
            IoUringConstants.IORING_SETUP_DEFER_TASKRUN))
        {
            final long timeoutNs = TimeUnit.MILLISECONDS.toNanos(20);
            final long startNs = System.nanoTime();
            assertEquals(0, ring.submitAndWait(1, timeoutNs));
            final long waitedNs = System.nanoTime() - startNs;
            assertTrue(waitedNs >= timeoutNs / 2, () -> "returned after " + waitedNs + " ns: did not wait in the kernel");
            assertEquals(0, ring.pollCompletions(completions, 10));

            ring.prepNop(ring.nextSqe(), 42);
            assertEquals(1, ring.submitAndWait(1, WAIT_NS));
            reapExactly(ring, 1);
            assertEquals(42, completions.userData[0]);
        }
    }

    @Test
    void shouldReportFullSqAndRecoverAfterSubmitAndReap()
    {
        try (IoUring ring = new IoUring(8, 0))
        {
            assertEquals(8, ring.sqEntries());
            assertEquals(16, ring.cqEntries());

            assertEquals(8, prepareNops(ring, 0, 100));
            assertEquals(IoUring.RING_FULL, ring.nextSqe(), "SQ full");
            assertEquals(8, ring.pending());

            assertEquals(8, ring.submit());
            assertEquals(8, ring.inFlight());
            assertEquals(8, prepareNops(ring, 8, 100), "SQ has room again once the kernel consumed it");
            assertEquals(8, ring.submit());

            // The SQ is empty now, but every in-flight SQE still owes a CQE: the CQ bounds what is handed out.
            assertEquals(16, ring.inFlight());
            assertEquals(IoUring.RING_FULL, ring.nextSqe(), "CQ full");

            ring.submitAndWait(16, WAIT_NS);
            reapExactly(ring, 16);
            assertEquals(0, ring.inFlight());
            assertNotEquals(IoUring.RING_FULL, ring.nextSqe(), "recovered after reaping");
        }
    }

    @Test
    void shouldNeverLoseCompletionsOfBatchAsLargeAsCq()
    {
        try (IoUring ring = new IoUring(8, 0, 64))
        {
            assertEquals(64, ring.cqEntries());
            for (int round = 0; round < 5; round++)
            {
                int prepared = 0;
                while (prepared < 64)
                {
                    final int batch = prepareNops(ring, round * 1000L + prepared, 64 - prepared);
                    assertTrue(batch > 0, "no SQE although " + prepared + " of 64 prepared");
                    prepared += batch;
                    ring.submit();
                }
                assertEquals(64, ring.inFlight());
                assertEquals(IoUring.RING_FULL, ring.nextSqe());

                ring.submitAndWait(64, WAIT_NS);
                completions.count = 0;
                assertEquals(64, ring.pollCompletions(completions, 1000));
                for (int i = 0; i < 64; i++)
                {
                    assertEquals(round * 1000L + i, completions.userData[i]);
                }
                assertEquals(0, ring.cqOverflow());
                assertEquals(0, ring.sqDropped());
                assertEquals(0, ring.sqFlags() & IoUringConstants.IORING_SQ_CQ_OVERFLOW);
            }
        }
    }

    @Test
    void shouldUnmapRingsAndCloseDescriptorOnCloseAndIgnoreSecondClose() throws IOException
    {
        final IoUring ring = new IoUring(8, 0);
        final Path fdLink = Path.of("/proc/self/fd/" + ring.fd());
        assertEquals("anon_inode:[io_uring]", Files.readSymbolicLink(fdLink).toString());
        final Smaps before = Smaps.read();
        for (final long[] mapping : ring.mappings())
        {
            assertTrue(mapping[1] == 0 || before.anyIntersects(mapping[0], mapping[1]), ring::toString);
        }

        ring.close();

        assertTrue(ring.isClosed());
        assertFalse(Files.exists(fdLink, LinkOption.NOFOLLOW_LINKS) &&
            Files.readSymbolicLink(fdLink).toString().equals("anon_inode:[io_uring]"), "ring fd still open");
        final Smaps after = Smaps.read();
        for (final long[] mapping : ring.mappings())
        {
            assertFalse(mapping[1] > 0 && after.anyIntersects(mapping[0], mapping[1]), "still mapped: " + ring);
        }
        ring.close();
        assertThrows(IllegalStateException.class, () -> ring.prepNop(0, 1), "SQE array must be unusable");
    }

    @Test
    void shouldNotAllocateWhenPreparingSubmittingAndReaping()
    {
        try (IoUring ring = new IoUring(16, 0))
        {
            for (int i = 0; i < 100_000; i++)
            {
                nopSum += nopRound(ring, i);
            }
            nopRounds = 100_000;

            final long lastWindow = AllocationWindows.lastWindowBytes(
                () ->
                {
                    for (int i = 0; i < 20_000; i++)
                    {
                        nopSum += nopRound(ring, i);
                    }
                    nopRounds += 20_000;
                },
                64 * 1024);

            assertEquals(nopRounds * 16, nopSum);
            // 320k operations: anything per operation would be megabytes; allow for the measurement's own noise.
            assertTrue(lastWindow < 64 * 1024, () -> lastWindow + " bytes allocated by 320000 NOP operations");
        }
    }

    private int nopRound(final IoUring ring, final long round)
    {
        int sqe;
        int prepared = 0;
        while ((sqe = ring.nextSqe()) != IoUring.RING_FULL)
        {
            ring.prepNop(sqe, round);
            prepared++;
        }
        ring.submitAndWait(prepared, WAIT_NS);
        completions.count = 0;
        return ring.pollCompletions(completions, Integer.MAX_VALUE);
    }

    private int prepareNops(final IoUring ring, final long firstUserData, final int max)
    {
        int prepared = 0;
        int sqe;
        while (prepared < max && (sqe = ring.nextSqe()) != IoUring.RING_FULL)
        {
            ring.prepNop(sqe, firstUserData + prepared);
            prepared++;
        }
        return prepared;
    }

    /**
     * Push {@code blocks} requests of {@code blockSize} through the ring, as many per submit as it takes, and
     * check every completion transferred the whole block.
     *
     * @return the largest number of SQEs consumed by one {@code io_uring_enter}.
     */
    private int runBlocks(
        final IoUring ring,
        final int opcode,
        final int fd,
        final long bufferAddress,
        final int blocks,
        final int blockSize,
        final int bufIndex)
    {
        int next = 0;
        int done = 0;
        int maxBatch = 0;
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (done < blocks)
        {
            int sqe;
            while (next < blocks && (sqe = ring.nextSqe()) != IoUring.RING_FULL)
            {
                final long address = bufferAddress + (long)next * blockSize;
                final long fileOffset = (long)next * blockSize;
                switch (opcode)
                {
                    case IoUringConstants.IORING_OP_READ -> ring.prepRead(sqe, fd, address, blockSize, fileOffset, next);
                    case IoUringConstants.IORING_OP_WRITE -> ring.prepWrite(sqe, fd, address, blockSize, fileOffset, next);
                    case IoUringConstants.IORING_OP_READ_FIXED ->
                        ring.prepReadFixed(sqe, fd, address, blockSize, fileOffset, next, bufIndex);
                    case IoUringConstants.IORING_OP_WRITE_FIXED ->
                        ring.prepWriteFixed(sqe, fd, address, blockSize, fileOffset, next, bufIndex);
                    default -> throw new IllegalArgumentException("opcode " + opcode);
                }
                next++;
            }
            maxBatch = Math.max(maxBatch, ring.submitAndWait(1, WAIT_NS));
            completions.count = 0;
            final int reaped = ring.pollCompletions(completions, Integer.MAX_VALUE);
            for (int i = 0; i < reaped; i++)
            {
                final long block = completions.userData[i];
                assertEquals(blockSize, completions.res[i], () -> "block " + block + " opcode " + opcode);
            }
            done += reaped;
            assertTrue(System.nanoTime() < deadlineNs, () -> "timed out at " + ring);
        }
        return maxBatch;
    }

    private void reapExactly(final IoUring ring, final int expected)
    {
        completions.count = 0;
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (completions.count < expected)
        {
            ring.pollCompletions(completions, expected - completions.count);
            if (completions.count < expected)
            {
                ring.submitAndWait(1, WAIT_NS);
            }
            assertTrue(System.nanoTime() < deadlineNs, () -> "timed out at " + ring);
        }
        assertEquals(0, ring.pollCompletions(completions, 1000), "more completions than requests");
    }

    private void registerOrSkip(final IoUring ring, final MemorySegment... buffers)
    {
        try
        {
            ring.registerBuffers(buffers);
        }
        catch (final NativeCallException ex)
        {
            assumeTrue(ex.errno() != Errno.ENOMEM && ex.errno() != Errno.EPERM, ex::getMessage);
            throw ex;
        }
    }

    private int openDirect(final String name)
    {
        final MemorySegment path = arena.allocateFrom(directory.resolve(name).toString());
        final int fd = LibC.open(
            state, path, LibC.O_RDWR | LibC.O_CREAT | LibC.O_TRUNC | LibC.O_DIRECT | LibC.O_CLOEXEC, 0644);
        assertTrue(fd >= 0, () -> "open " + name + ": " + Errno.describe(state.errno()));
        return fd;
    }

    private static void fillPattern(final MemorySegment segment, final long seed)
    {
        final long words = segment.byteSize() / Long.BYTES;
        for (long i = 0; i < words; i++)
        {
            segment.set(ValueLayout.JAVA_LONG, i * Long.BYTES, (i + seed) * 0x9E3779B97F4A7C15L);
        }
    }

    private static final class Completions implements IoUring.CompletionHandler
    {
        final long[] userData;
        final int[] res;
        int count;

        Completions(final int capacity)
        {
            userData = new long[capacity];
            res = new int[capacity];
        }

        public void onCompletion(final long userData, final int res, final int flags)
        {
            this.userData[count] = userData;
            this.res[count] = res;
            count++;
        }
    }
}
