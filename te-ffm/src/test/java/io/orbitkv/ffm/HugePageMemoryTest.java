package io.orbitkv.ffm;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class HugePageMemoryTest
{
    private static final long MIB = 1024 * 1024;
    private static final long SMALL_PAGE_SIZE = 4096;
    /** epoll_pwait2 came after the syscall tables were unified: the same number on x86_64 and aarch64. */
    private static final int SYS_EPOLL_PWAIT2 = 441;

    @ParameterizedTest
    @ValueSource(longs = { 1, 4096, 2 * MIB - 1, 2 * MIB, 3 * MIB + 1, 64 * MIB })
    void shouldMapRegionAtHugePageAlignedAddressRoundedToWholeHugePages(final long bytes)
    {
        try (MappedRegion region = HugePageMemory.mapAnonymous(bytes, true))
        {
            assertEquals(0, region.address() % HugePageMemory.HUGE_PAGE_SIZE, region.toString());
            assertEquals(0, region.length() % HugePageMemory.HUGE_PAGE_SIZE, region.toString());
            assertTrue(region.length() >= bytes && region.length() - bytes < HugePageMemory.HUGE_PAGE_SIZE);
            assertEquals(region.address(), region.segment().address());
            assertEquals(region.length(), region.segment().byteSize());
        }
    }

    @Test
    void shouldMapASharedFileThatAnotherMappingOfTheFileSees() throws Exception
    {
        final java.nio.file.Path file = java.nio.file.Files.createTempFile(
            java.nio.file.Path.of("/dev/shm"), "orbitkv-shared-pool-test", ".dat");
        try (MappedRegion region = HugePageMemory.mapSharedFile(file.toString(), 3 * MIB, true);
            java.nio.channels.FileChannel channel = java.nio.channels.FileChannel.open(file,
                java.nio.file.StandardOpenOption.READ, java.nio.file.StandardOpenOption.WRITE);
            java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined())
        {
            assertEquals(0, region.address() % HugePageMemory.HUGE_PAGE_SIZE, "2 MiB aligned");
            assertEquals(4 * MIB, region.length(), "rounded up to 2 MiB");
            assertEquals(4 * MIB, channel.size(), "the file is as long as the region");
            final MemorySegment other = channel.map(java.nio.channels.FileChannel.MapMode.READ_WRITE, 0, 4 * MIB, arena);
            region.segment().set(ValueLayout.JAVA_LONG, 3 * MIB, 0x0123456789ABCDEFL);
            assertEquals(0x0123456789ABCDEFL, other.get(ValueLayout.JAVA_LONG, 3 * MIB), "the other mapping sees it");
            other.set(ValueLayout.JAVA_LONG, 8, 42L);
            assertEquals(42L, region.segment().get(ValueLayout.JAVA_LONG, 8), "and the other way round");
        }
        finally
        {
            java.nio.file.Files.deleteIfExists(file);
        }
    }

    @Test
    void shouldAlignRegionEvenWithoutHugePageAdvice()
    {
        try (MappedRegion region = HugePageMemory.mapAnonymous(5 * MIB, false))
        {
            assertEquals(0, region.address() % HugePageMemory.HUGE_PAGE_SIZE, region.toString());
            assertEquals(6 * MIB, region.length());
        }
    }

    @Test
    void shouldGiveBackReservationSlackAfterAlignedRegion()
    {
        // The spare huge page reserved for alignment always leaves slack after the region (2 MiB minus the
        // head), so the page following the region must be free again: a no-replace probe mapping succeeds there.
        final CallState state = new CallState();
        try (MappedRegion region = HugePageMemory.mapAnonymous(4 * MIB, false))
        {
            final MemorySegment probeAt = MemorySegment.ofAddress(region.address() + region.length());
            final MemorySegment probe = LibC.mmap(
                state,
                probeAt,
                SMALL_PAGE_SIZE,
                LibC.PROT_NONE,
                LibC.MAP_PRIVATE | LibC.MAP_ANONYMOUS | LibC.MAP_FIXED_NOREPLACE,
                -1,
                0);
            final int errno = state.errno();
            assertTrue(
                probe.address() == probeAt.address(),
                () -> "page after " + region + " still mapped: " + Errno.describe(errno));
            assertEquals(0, LibC.munmap(state, probe, SMALL_PAGE_SIZE));
        }
    }

    @Test
    void shouldKeepAdvisedRegionAsOneMappingOfExactlyItsRange()
    {
        try (MappedRegion region = HugePageMemory.mapAnonymous(4 * MIB, true))
        {
            assumeTrue(region.hugePageAdvised(), "madvise(MADV_HUGEPAGE) refused: mapping not distinguishable");
            final Smaps.Mapping mapping = Smaps.read().mappingContaining(region.address());
            assertNotNull(mapping, region.toString());
            assertEquals(region.address(), mapping.start(), () -> mapping.toString());
            assertEquals(region.address() + region.length(), mapping.end(), () -> mapping.toString());
            assertEquals(region.length() / 1024, mapping.sizeKb("Size"));
        }
    }

    @Test
    void shouldReadBackBytesWrittenThroughSegment()
    {
        try (MappedRegion region = HugePageMemory.mapAnonymous(3 * MIB, true))
        {
            final MemorySegment segment = region.segment();
            final long words = segment.byteSize() / Long.BYTES;
            for (long i = 0; i < words; i++)
            {
                segment.setAtIndex(ValueLayout.JAVA_LONG, i, i * 0x9E3779B97F4A7C15L);
            }
            segment.set(ValueLayout.JAVA_BYTE, segment.byteSize() - 1, (byte)0x5A);

            for (long i = 0; i < words - 1; i++)
            {
                final long index = i;
                assertEquals(i * 0x9E3779B97F4A7C15L, segment.getAtIndex(ValueLayout.JAVA_LONG, i), () -> "word " + index);
            }
            assertEquals((byte)0x5A, segment.get(ValueLayout.JAVA_BYTE, segment.byteSize() - 1));
        }
    }

    @Test
    void shouldStartZeroFilled()
    {
        try (MappedRegion region = HugePageMemory.mapAnonymous(2 * MIB, true))
        {
            final MemorySegment segment = region.segment();
            for (long offset = 0; offset < segment.byteSize(); offset += SMALL_PAGE_SIZE)
            {
                assertEquals(0L, segment.get(ValueLayout.JAVA_LONG, offset));
            }
        }
    }

    @Test
    void shouldRecordAcceptedHugePageAdviceAndKernelShouldSeeIt()
    {
        assumeFalse(
            HugePageMemory.THP_UNAVAILABLE.equals(HugePageMemory.transparentHugePageMode()),
            "kernel without transparent huge pages: MADV_HUGEPAGE is refused with EINVAL by design");

        try (MappedRegion advised = HugePageMemory.mapAnonymous(4 * MIB, true);
            MappedRegion plain = HugePageMemory.mapAnonymous(4 * MIB, false))
        {
            assertTrue(advised.hugePageAdvised(), advised.toString());
            assertEquals(0, advised.hugePageAdviceErrno());
            assertFalse(plain.hugePageAdvised(), plain.toString());

            // "hg" in VmFlags is the kernel's record of MADV_HUGEPAGE for the VMA, whatever the THP mode.
            final Smaps smaps = Smaps.read();
            assertTrue(smaps.mappingContaining(advised.address()).hasVmFlag("hg"), advised.toString());
            assertFalse(smaps.mappingContaining(plain.address()).hasVmFlag("hg"), plain.toString());
        }
    }

    @Test
    void shouldBackTouchedAdvisedRegionWithAnonHugePages()
    {
        final String mode = HugePageMemory.transparentHugePageMode();
        assumeFalse(
            "never".equals(mode) || HugePageMemory.THP_UNAVAILABLE.equals(mode),
            "transparent huge pages are '" + mode + "' in " + HugePageMemory.THP_ENABLED_PATH +
            ": no region can be backed by huge pages here");

        try (MappedRegion region = HugePageMemory.mapAnonymous(4 * MIB, true))
        {
            final MemorySegment segment = region.segment();
            for (long offset = 0; offset < segment.byteSize(); offset += SMALL_PAGE_SIZE)
            {
                segment.set(ValueLayout.JAVA_BYTE, offset, (byte)1);
            }

            final Smaps.Mapping mapping = Smaps.read().mappingContaining(region.address());
            assertNotNull(mapping, region.toString());
            // Each fault needs a free 2 MiB physical extent; demand at least one so a fragmented host still passes.
            final long anonHugeKb = mapping.sizeKb("AnonHugePages");
            assertTrue(anonHugeKb >= 2048, () -> "AnonHugePages=" + anonHugeKb + " kB for " + mapping);
        }
    }

    @Test
    void shouldLeaveTouchedUnadvisedRegionOnSmallPagesWhenModeIsMadvise()
    {
        assumeTrue(
            "madvise".equals(HugePageMemory.transparentHugePageMode()),
            "only with THP mode 'madvise' does the advice alone decide the page size");

        try (MappedRegion region = HugePageMemory.mapAnonymous(4 * MIB, false))
        {
            final MemorySegment segment = region.segment();
            for (long offset = 0; offset < segment.byteSize(); offset += SMALL_PAGE_SIZE)
            {
                segment.set(ValueLayout.JAVA_BYTE, offset, (byte)1);
            }

            final Smaps.Mapping mapping = Smaps.read().mappingContaining(region.address());
            assertEquals(0, mapping.sizeKb("AnonHugePages"), mapping.toString());
            assertEquals(4096, mapping.sizeKb("Rss"), mapping.toString());
        }
    }

    @Test
    void shouldUnmapOnCloseAndIgnoreSecondClose()
    {
        final MappedRegion region = HugePageMemory.mapAnonymous(2 * MIB, true);
        final long address = region.address();
        final long length = region.length();
        region.segment().set(ValueLayout.JAVA_LONG, 0, 42L);
        assertNotNull(Smaps.read().mappingContaining(address));

        region.close();

        assertTrue(region.isClosed());
        assertFalse(Smaps.read().anyIntersects(address, length), "range still mapped after close");
        assertThrows(IllegalStateException.class, () -> region.segment().get(ValueLayout.JAVA_LONG, 0));

        region.close();
        assertTrue(region.isClosed());
    }

    @Test
    void shouldNameCallSizeAndErrnoWhenReservationFails()
    {
        // 2^60 bytes exceeds any user address space, so mmap refuses even with MAP_NORESERVE.
        final long bytes = 1L << 60;
        final NativeCallException ex = assertThrows(
            NativeCallException.class, () -> HugePageMemory.mapAnonymous(bytes, true));

        assertEquals(Errno.ENOMEM, ex.errno());
        assertTrue(ex.getMessage().startsWith("mmap("), ex.getMessage());
        assertTrue(ex.getMessage().contains(Long.toString(bytes)), ex.getMessage());
        assertTrue(ex.getMessage().contains("ENOMEM(12) Cannot allocate memory"), ex.getMessage());
    }

    @Test
    void shouldRejectNonPositiveOrUnroundableSize()
    {
        assertThrows(IllegalArgumentException.class, () -> HugePageMemory.mapAnonymous(0, true));
        assertThrows(IllegalArgumentException.class, () -> HugePageMemory.mapAnonymous(-1, false));
        assertThrows(IllegalArgumentException.class, () -> HugePageMemory.mapAnonymous(Long.MAX_VALUE, false));
    }

    @Test
    void shouldPopulateOnlyTheGivenRangeAndKeepWhatWasWrittenThere()
    {
        try (MappedRegion region = HugePageMemory.mapAnonymous(8 * MIB, false))
        {
            final MemorySegment segment = region.segment();
            // Data already written inside the range must survive: a toucher runs while engines publish.
            segment.set(ValueLayout.JAVA_LONG, 2 * MIB + 8, 0x0123456789ABCDEFL);

            final CallState state = new CallState();
            assertEquals(0, HugePageMemory.populate(state, region, 2 * MIB, 4 * MIB));

            // The whole 4 MiB range and nothing outside it: the word written before lies inside the range.
            assertEquals(4096, Smaps.read().mappingContaining(region.address()).sizeKb("Rss"));
            assertEquals(0x0123456789ABCDEFL, segment.get(ValueLayout.JAVA_LONG, 2 * MIB + 8));
            assertEquals(0L, segment.get(ValueLayout.JAVA_LONG, 6 * MIB - 8));
        }
    }

    @Test
    void shouldReportTheErrnoOfAPopulateTheKernelRefuses()
    {
        try (MappedRegion region = HugePageMemory.mapAnonymous(2 * MIB, false))
        {
            final CallState state = new CallState();
            assertEquals(Errno.EINVAL, HugePageMemory.populate(state, region, 1, SMALL_PAGE_SIZE));
        }
    }

    @Test
    void shouldTouchEveryPageWithoutChangingItsContents()
    {
        try (MappedRegion region = HugePageMemory.mapAnonymous(4 * MIB, false))
        {
            final MemorySegment segment = region.segment();
            for (long offset = 0; offset < 2 * MIB; offset += SMALL_PAGE_SIZE)
            {
                segment.set(ValueLayout.JAVA_LONG, offset, offset ^ 0x5A5A5A5A5A5A5A5AL);
            }

            HugePageMemory.touchPreservingContents(region, 0, region.length());

            assertEquals(4096, Smaps.read().mappingContaining(region.address()).sizeKb("Rss"));
            for (long offset = 0; offset < 2 * MIB; offset += SMALL_PAGE_SIZE)
            {
                final long at = offset;
                assertEquals(offset ^ 0x5A5A5A5A5A5A5A5AL, segment.get(ValueLayout.JAVA_LONG, offset), () -> "at " + at);
            }
            assertEquals(0L, segment.get(ValueLayout.JAVA_LONG, 3 * MIB));
        }
    }

    @Test
    void shouldRefuseToUnmapARegionWhileANativeCallHoldsASliceOfIt() throws Exception
    {
        // What HugePageMemory.populate relies on: a slice of the region passed to a downcall keeps the region's arena
        // acquired until the call returns, so close fails instead of unmapping memory the kernel works on. A call
        // that blocks until told to return (epoll on a socket, the region as its event buffer) pins "during the call".
        assumeTrue(ChannelDescriptors.available(), "the JVM flags export sun.nio.ch");
        final CallState state = new CallState();
        try (java.nio.channels.DatagramChannel receiver = java.nio.channels.DatagramChannel.open();
            java.nio.channels.DatagramChannel sender = java.nio.channels.DatagramChannel.open();
            java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined())
        {
            receiver.bind(new java.net.InetSocketAddress("127.0.0.1", 0)).configureBlocking(false);
            final int epfd = LibC.epoll_create1(state, LibC.EPOLL_CLOEXEC);
            assertTrue(epfd >= 0, () -> "epoll_create1: " + Errno.describe(state.errno()));
            final MappedRegion region = HugePageMemory.mapAnonymous(2 * MIB, false);
            try
            {
                final MemorySegment interest = EpollEvent.allocateArray(arena, 1);
                EpollEvent.events(interest, LibC.EPOLLIN);
                assertEquals(0, LibC.epoll_ctl(state, epfd, LibC.EPOLL_CTL_ADD, ChannelDescriptors.fdOf(receiver), interest));

                final java.util.concurrent.atomic.AtomicInteger tid = new java.util.concurrent.atomic.AtomicInteger();
                final java.util.concurrent.atomic.AtomicInteger ready =
                    new java.util.concurrent.atomic.AtomicInteger(Integer.MIN_VALUE);
                final Thread waiting = new Thread(() ->
                {
                    tid.set(LibC.gettid());
                    ready.set(LibC.epoll_pwait2(new CallState(), epfd, region.segment().asSlice(0, EpollEvent.sizeof()), 1,
                        MemorySegment.NULL, MemorySegment.NULL));
                });
                waiting.start();
                while (!isBlockedInSyscall(tid.get(), SYS_EPOLL_PWAIT2))
                {
                    Thread.onSpinWait();
                }

                assertThrows(IllegalStateException.class, region::close);
                assertFalse(region.isClosed());

                sender.send(java.nio.ByteBuffer.wrap(new byte[]{1}), receiver.getLocalAddress());
                waiting.join();
                assertEquals(1, ready.get());
                assertEquals(LibC.EPOLLIN, EpollEvent.events(region.segment()) & LibC.EPOLLIN, "the kernel wrote the event");
                region.close();
                assertTrue(region.isClosed());
            }
            finally
            {
                region.close();
                LibC.close(state, epfd);
            }
        }
    }

    /** Whether a thread sleeps inside a syscall: /proc/self/task/TID/syscall then starts with its number. */
    private static boolean isBlockedInSyscall(final int tid, final int syscall)
    {
        if (0 == tid)
        {
            return false;
        }
        try
        {
            return java.nio.file.Files.readString(java.nio.file.Path.of("/proc/self/task/" + tid + "/syscall"))
                .startsWith(syscall + " ");
        }
        catch (final java.io.IOException ex)
        {
            throw new java.io.UncheckedIOException(ex);
        }
    }
}
