package io.orbitkv.manager;

import io.orbitkv.manager.ring.RingCounter;
import io.orbitkv.manager.status.SystemCounterDescriptor;
import io.orbitkv.manager.store.DataRegionPages;
import io.orbitkv.manager.store.FailingSsdBackends;
import io.orbitkv.codecs.engine.FailureReason;
import io.orbitkv.codecs.engine.KeyStatus;
import io.orbitkv.codecs.engine.StatusCode;
import io.orbitkv.manager.store.StoreCounter;
import java.io.File;
import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static io.orbitkv.manager.ManagerTestSupport.awaitCounter;
import static io.orbitkv.manager.ManagerTestSupport.awaitTrue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The SSD tier in-process, on a real directory under target/ (never tmpfs: it ignores O_DIRECT).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class SsdTierTest
{
    private static final String NS = "model=ssd;dtype=bf16";
    private static final int MB = 1024 * 1024;

    private File dir;
    private File ssdDir;
    private Manager manager;
    private boolean internalErrorsExpected;

    @BeforeEach
    void setUp()
    {
        dir = ManagerTestSupport.newDir();
        ssdDir = new File("target/ssd-tests/" + dir.getName()).getAbsoluteFile();
    }

    @AfterEach
    void tearDown()
    {
        try
        {
            if (null != manager && !internalErrorsExpected)
            {
                assertEquals(0, manager.counter(SystemCounterDescriptor.ERRORS),
                    () -> "unexpected internal errors:\n" + ManagerTestSupport.errorLog(manager));
            }
        }
        finally
        {
            if (null != manager)
            {
                manager.close();
            }
            ManagerTestSupport.deleteDir(dir);
            ManagerTestSupport.deleteDir(ssdDir);
        }
    }

    private ManagerContext context(final Configuration.SsdBackendChoice backend)
    {
        return ManagerTestSupport.smallContext(dir)
            .poolBytes(8L * MB)
            .maxBlockBytes(MB)
            .ssdDir(ssdDir)
            .ssdBytes(64L * MB)
            .ssdStagingBytes(8L * MB)
            .ssdQueueDepth(16)
            .ssdDirectReads(Configuration.SsdDirectReads.ON)
            .ssdBackend(backend);
    }

    private static byte[][] hashes(final int from, final int count)
    {
        final byte[][] hashes = new byte[count][];
        for (int i = 0; i < count; i++)
        {
            hashes[i] = RawRingClient.hash(from + i);
        }
        return hashes;
    }

    /** Publish blocks {@code [from, from + count)} of 1 MiB, one per request, each filled from its index. */
    private static void publish(final RawRingClient client, final int from, final int count)
    {
        for (int i = from; i < from + count; i++)
        {
            final long offset = (long)(i % 16) * MB;
            client.fill(offset, MB, 1000 + i);
            final RawRingClient.Reply reply = client.awaitReply(
                client.publish(NS, new long[]{offset}, new int[]{MB}, hashes(i, 1)));
            assertEquals(StatusCode.OK, reply.code(), reply::toString);
            assertEquals(List.of(KeyStatus.STORED), reply.statuses(), reply::toString);
        }
    }

    private static RawRingClient.Reply readAll(final RawRingClient client, final int from, final int count)
    {
        final long[] dst = new long[count];
        final int[] capacities = new int[count];
        for (int i = 0; i < count; i++)
        {
            dst[i] = (long)(16 + i) * MB;
            capacities[i] = MB;
        }
        return client.awaitReply(client.read(NS, 0, dst, capacities, hashes(from, count)));
    }

    @ParameterizedTest
    @EnumSource(value = Configuration.SsdBackendChoice.class, names = {"IO_URING", "FILECHANNEL"})
    void shouldKeepTheSsdCopyWhenTheDramCopyIsEvictedAndRestoreItByteExact(
        final Configuration.SsdBackendChoice backend)
    {
        manager = Manager.launch(context(backend));
        assertEquals(Configuration.SsdBackendChoice.IO_URING == backend ? 1 : 3,
            manager.counter(StoreCounter.SSD_BACKEND), manager::ssdDescription);
        try (RawRingClient client = new RawRingClient(manager.cncFile()))
        {
            client.attachOrFail("engine", 48L * MB);
            publish(client, 0, 16);
            // 16 MiB through an 8 MiB pool: the oldest blocks were evicted from DRAM and written to SSD.
            awaitTrue(() -> manager.counter(StoreCounter.SSD_ADMISSIONS) >= 8,
                () -> "admissions " + manager.counter(StoreCounter.SSD_ADMISSIONS));
            assertEquals(0, manager.counter(StoreCounter.SSD_ADMISSION_SKIPS));

            final RawRingClient.Reply lookup = client.awaitReply(client.lookup(NS, false, hashes(0, 16)));
            assertEquals(16, lookup.value(), lookup::toString);
            assertEquals(KeyStatus.SSD, lookup.statuses().get(0), "DRAM copy evicted, SSD copy resident");
            assertEquals(KeyStatus.DRAM, lookup.statuses().get(15));
            assertTrue(manager.counter(StoreCounter.SSD_LOOKUP_HITS) >= 8);

            final RawRingClient.Reply read = readAll(client, 0, 16);
            assertEquals(StatusCode.OK, read.code(), read::toString);
            assertEquals(16, read.value(), read::toString);
            assertEquals(KeyStatus.SSD, read.statuses().get(0));
            for (int i = 0; i < 16; i++)
            {
                assertTrue(client.matches((long)(16 + i) * MB, MB, 1000 + i), "block " + i + " byte-exact");
            }
            assertTrue(manager.counter(StoreCounter.SSD_READS) >= 8);
            assertEquals(Configuration.SsdBackendChoice.IO_URING == backend ?
                manager.counter(StoreCounter.SSD_READS) : 0, manager.counter(StoreCounter.SSD_DIRECT_READS),
                "aligned destinations are read straight into the region on io_uring, through staging on FileChannel");
            assertEquals(0, manager.counter(StoreCounter.SSD_PROMOTIONS), "promotion is off by default");

            // A lease over a prefix spanning both tiers pins both residences and releases them.
            final RawRingClient.Reply leased = client.awaitReply(client.lookup(NS, true, hashes(0, 16)));
            assertEquals(16, leased.value());
            awaitCounter(manager, StoreCounter.PINS_ACTIVE, countDram(leased));
            final RawRingClient.Reply released = client.awaitReply(client.release(leased.leaseId()));
            assertEquals(16, released.value());
            awaitCounter(manager, StoreCounter.PINS_ACTIVE, 0);
            awaitCounter(manager, StoreCounter.SSD_QUEUE_DEPTH, 0);
            assertEquals(0, manager.ssdTier().stagingBytesInUse(), "no staging leaked");
        }
    }

    private static long countDram(final RawRingClient.Reply reply)
    {
        return reply.statuses().stream().filter(s -> s == KeyStatus.DRAM).count();
    }

    @Test
    void shouldHoldEvictionsBackUntilInFlightWritesFreeStagingInsteadOfSkippingAdmissions()
    {
        // Staging for exactly one block: every further victim of one Publish must wait for the previous victim's
        // write to complete (design: the victim is written before its DRAM space is reused).
        manager = Manager.launch(context(Configuration.SsdBackendChoice.AUTO).ssdStagingBytes(MB));
        try (RawRingClient client = new RawRingClient(manager.cncFile()))
        {
            client.attachOrFail("engine", 48L * MB);
            final long[] offsets = new long[16];
            final int[] lengths = new int[16];
            for (int i = 0; i < 16; i++)
            {
                offsets[i] = (long)i * MB;
                lengths[i] = MB;
                client.fill(offsets[i], MB, 1000 + i);
            }
            // The first request fills the 8-block pool; the second evicts all eight, back to back.
            final RawRingClient.Reply fill = client.awaitReply(client.publish(NS,
                java.util.Arrays.copyOfRange(offsets, 0, 8), java.util.Arrays.copyOfRange(lengths, 0, 8), hashes(0, 8)));
            assertEquals(8, fill.value(), fill::toString);
            final RawRingClient.Reply evicting = client.awaitReply(client.publish(NS,
                java.util.Arrays.copyOfRange(offsets, 8, 16), java.util.Arrays.copyOfRange(lengths, 8, 16), hashes(8, 8)));
            assertEquals(8, evicting.value(), evicting::toString);

            awaitCounter(manager, StoreCounter.SSD_ADMISSIONS, 8);
            assertTrue(manager.counter(StoreCounter.SSD_ADMISSION_WAITS) > 0, "evictions waited for writes");
            assertEquals(0, manager.counter(StoreCounter.SSD_ADMISSION_SKIPS), "no victim lost");

            final RawRingClient.Reply read = readAll(client, 0, 8);
            assertEquals(8, read.value(), read::toString);
            for (int i = 0; i < 8; i++)
            {
                assertEquals(KeyStatus.SSD, read.statuses().get(i));
                assertTrue(client.matches((long)(16 + i) * MB, MB, 1000 + i), "block " + i + " byte-exact");
            }
        }
    }

    @Test
    void shouldEvictLeastRecentlyUsedSsdResidencesWhenTheSsdIsFull()
    {
        manager = Manager.launch(context(Configuration.SsdBackendChoice.AUTO).ssdBytes(4L * MB));
        try (RawRingClient client = new RawRingClient(manager.cncFile()))
        {
            client.attachOrFail("engine", 48L * MB);
            publish(client, 0, 20);
            // 20 blocks through an 8-block pool: blocks 0..11 were DRAM victims, each written (counters move at once).
            awaitCounter(manager, StoreCounter.SSD_ADMISSIONS, 12);
            awaitTrue(() -> manager.counter(StoreCounter.SSD_EVICTIONS) > 0,
                () -> "ssd evictions " + manager.counter(StoreCounter.SSD_EVICTIONS));
            awaitCounter(manager, StoreCounter.SSD_QUEUE_DEPTH, 0);
            assertEquals(4L * MB, manager.counter(StoreCounter.SSD_BYTES_USED) +
                manager.counter(StoreCounter.SSD_BYTES_FREE), "exact accounting against --ssd-bytes");
            assertTrue(manager.counter(StoreCounter.SSD_BLOCKS_RESIDENT) <= 4);

            final RawRingClient.Reply first = client.awaitReply(client.lookup(NS, false, hashes(0, 1)));
            assertEquals(List.of(KeyStatus.MISS), first.statuses(), "oldest SSD residence evicted");
            // The most recent DRAM victims are the newest SSD residences.
            final int newestVictim = 20 - 1 - 8;
            final RawRingClient.Reply recent = client.awaitReply(client.lookup(NS, false, hashes(newestVictim, 1)));
            assertEquals(List.of(KeyStatus.SSD), recent.statuses(), recent::toString);
            final RawRingClient.Reply read = readAll(client, newestVictim, 1);
            assertEquals(1, read.value());
            assertTrue(client.matches(16L * MB, MB, 1000 + newestVictim));
        }
    }

    @Test
    void shouldDropTheResidenceCountAndKeepServingWhenSsdIoFails()
    {
        internalErrorsExpected = true;
        final FailingSsdBackends faults = new FailingSsdBackends();
        manager = Manager.launch(context(Configuration.SsdBackendChoice.AUTO).ssdBackendSupplier(faults));
        try (RawRingClient client = new RawRingClient(manager.cncFile()))
        {
            client.attachOrFail("engine", 48L * MB);
            publish(client, 0, 8);
            // The next I/O, the write of block 0 when block 8 evicts it, fails with EIO.
            faults.failNext(1);
            publish(client, 8, 1);
            awaitCounter(manager, StoreCounter.SSD_IO_ERRORS, 1);
            awaitCounter(manager, StoreCounter.SSD_QUEUE_DEPTH, 0);
            final RawRingClient.Reply lost = client.awaitReply(client.lookup(NS, false, hashes(0, 1)));
            assertEquals(List.of(KeyStatus.MISS), lost.statuses(), "no residence recorded for a failed write");
            assertTrue(ManagerTestSupport.errorLog(manager).contains("SSD write failed"),
                ManagerTestSupport.errorLog(manager));

            publish(client, 9, 2);
            awaitCounter(manager, StoreCounter.SSD_ADMISSIONS, 2);
            final RawRingClient.Reply both = client.awaitReply(client.lookup(NS, false, hashes(1, 2)));
            assertEquals(List.of(KeyStatus.SSD, KeyStatus.SSD), both.statuses());

            // A failed read reports a failure (reason IO), ends the prefix and drops the residence.
            faults.failNext(1);
            final RawRingClient.Reply read = readAll(client, 1, 2);
            assertEquals(StatusCode.OK, read.code());
            assertEquals(0, read.value(), read::toString);
            assertEquals(List.of(KeyStatus.FAILED, KeyStatus.NOT_ATTEMPTED), read.statuses());
            assertEquals(List.of(FailureReason.IO, FailureReason.NONE), read.reasons());
            awaitCounter(manager, StoreCounter.SSD_IO_ERRORS, 2);
            final RawRingClient.Reply after = client.awaitReply(client.lookup(NS, false, hashes(1, 2)));
            assertEquals(List.of(KeyStatus.MISS, KeyStatus.NOT_ATTEMPTED), after.statuses());
            final RawRingClient.Reply second = readAll(client, 2, 1);
            assertEquals(1, second.value(), "the Manager keeps serving the other residence");
            assertTrue(client.matches(16L * MB, MB, 1000 + 2));
            awaitCounter(manager, StoreCounter.PINS_ACTIVE, 0);
            assertEquals(0, manager.ssdTier().stagingBytesInUse());
        }
    }

    @ParameterizedTest
    @EnumSource(value = Configuration.SsdBackendChoice.class, names = {"IO_URING", "FILECHANNEL"})
    void shouldAnswerFailedChecksumAndStopTheReadWhenTheBytesOnDiskAreNotTheBlocks(
        final Configuration.SsdBackendChoice backend) throws IOException
    {
        internalErrorsExpected = true;
        manager = Manager.launch(context(backend).ssdPromote(true));
        try (RawRingClient client = new RawRingClient(manager.cncFile()))
        {
            client.attachOrFail("engine", 48L * MB);
            publish(client, 0, 16);
            awaitCounter(manager, StoreCounter.SSD_ADMISSIONS, 8);
            awaitCounter(manager, StoreCounter.SSD_QUEUE_DEPTH, 0);

            // Garbage in the middle of block 1's extent, written to the real file behind the Manager's back.
            final Path file = ssdFile();
            final long extent = extentOf(file, 1000 + 1);
            try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE))
            {
                final ByteBuffer garbage = ByteBuffer.allocate(16);
                for (int i = 0; i < 16; i++)
                {
                    garbage.put((byte)(0x5A ^ i));
                }
                channel.write(garbage.flip(), extent + MB / 2 + 3);
                channel.force(true);
            }
            // The destinations of the corrupt block and the one after it hold bytes the read must not overwrite.
            client.fill(17L * MB, MB, 7);
            client.fill(18L * MB, MB, 8);

            final RawRingClient.Reply read = readAll(client, 0, 3);
            assertEquals(StatusCode.OK, read.code(), read::toString);
            assertEquals(List.of(KeyStatus.SSD, KeyStatus.FAILED, KeyStatus.NOT_ATTEMPTED), read.statuses(),
                read::toString);
            assertEquals(List.of(FailureReason.NONE, FailureReason.CHECKSUM, FailureReason.NONE), read.reasons());
            assertEquals(1, read.value(), "only the block before the corrupt one was restored");
            assertEquals(3, read.version(), "FAILED is written at the schema version that has it");
            assertTrue(client.matches(16L * MB, MB, 1000), "the intact block is byte-exact");
            assertTrue(client.matches(17L * MB, MB, 7), "no byte of the corrupt block reached the client");
            assertTrue(client.matches(18L * MB, MB, 8), "the key after it was not attempted");

            assertEquals(1, manager.counter(StoreCounter.CHECKSUM_SSD_MISMATCHES));
            assertEquals(1, manager.counter(StoreCounter.CHECKSUM_BLOCKS_VERIFIED));
            assertTrue(ManagerTestSupport.errorLog(manager).contains("SSD read checksum mismatch"),
                ManagerTestSupport.errorLog(manager));
            assertEquals(1, manager.counter(StoreCounter.SSD_PROMOTIONS), "only the intact block promoted");
            final RawRingClient.Reply lookup = client.awaitReply(client.lookup(NS, false, hashes(0, 3)));
            assertEquals(List.of(KeyStatus.DRAM, KeyStatus.MISS, KeyStatus.NOT_ATTEMPTED), lookup.statuses(),
                "the corrupt residence is dropped and nothing of it was admitted to DRAM");
            // The read of the key after the corrupt one may still be in flight: its completion releases staging.
            awaitCounter(manager, StoreCounter.SSD_QUEUE_DEPTH, 0);
            awaitCounter(manager, StoreCounter.PINS_ACTIVE, 0);
            awaitTrue(() -> 0 == manager.ssdTier().stagingBytesInUse(), () -> "staging leaked: " +
                manager.ssdTier().stagingBytesInUse());

            final RawRingClient.Reply next = client.awaitReply(client.read(
                NS, 0, new long[]{16L * MB}, new int[]{MB}, hashes(2, 1)));
            assertEquals(List.of(KeyStatus.SSD), next.statuses(), "the Manager keeps serving the other residences");
            assertTrue(client.matches(16L * MB, MB, 1002));
        }
    }

    @Test
    void shouldAnswerFailedChecksumForACorruptBlockReadStraightIntoTheRegionAndAnswerOnlyOnceLaterReadsLanded()
        throws IOException
    {
        internalErrorsExpected = true;
        manager = Manager.launch(context(Configuration.SsdBackendChoice.IO_URING));
        try (RawRingClient client = new RawRingClient(manager.cncFile()))
        {
            client.attachOrFail("engine", 48L * MB);
            publish(client, 0, 16);
            awaitCounter(manager, StoreCounter.SSD_ADMISSIONS, 8);
            awaitCounter(manager, StoreCounter.SSD_QUEUE_DEPTH, 0);
            final Path file = ssdFile();
            final long extent = extentOf(file, 1000 + 1);
            try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE))
            {
                channel.write(ByteBuffer.wrap(new byte[]{1, 2, 3, 4, 5, 6, 7, 8}), extent + MB - 8);
                channel.force(true);
            }

            final RawRingClient.Reply read = readAll(client, 0, 3);
            assertEquals(StatusCode.OK, read.code(), read::toString);
            assertEquals(List.of(KeyStatus.SSD, KeyStatus.FAILED, KeyStatus.NOT_ATTEMPTED), read.statuses(),
                read::toString);
            assertEquals(List.of(FailureReason.NONE, FailureReason.CHECKSUM, FailureReason.NONE), read.reasons());
            assertEquals(1, read.value(), "only the block before the corrupt one was restored");
            // The three reads were queued at once; the answer waited until the read behind the corrupt block had
            // landed too, so the engine may reuse every destination as soon as it has the answer.
            assertEquals(3, manager.counter(StoreCounter.SSD_DIRECT_READS), "all three read into the region");
            assertTrue(client.matches(16L * MB, MB, 1000), "the intact block is byte-exact");
            assertEquals(1, manager.counter(StoreCounter.CHECKSUM_SSD_MISMATCHES));
            assertEquals(1, manager.counter(StoreCounter.CHECKSUM_BLOCKS_VERIFIED));
            assertEquals(0, manager.ssdTier().stagingBytesInUse(), "a direct read holds no staging");
            assertTrue(ManagerTestSupport.errorLog(manager).contains("SSD read checksum mismatch"),
                ManagerTestSupport.errorLog(manager));
            final RawRingClient.Reply lookup = client.awaitReply(client.lookup(NS, false, hashes(0, 3)));
            assertEquals(List.of(KeyStatus.SSD, KeyStatus.MISS, KeyStatus.NOT_ATTEMPTED), lookup.statuses(),
                "the corrupt residence is dropped");
            awaitCounter(manager, StoreCounter.PINS_ACTIVE, 0);

            final RawRingClient.Reply next = client.awaitReply(client.read(
                NS, 0, new long[]{20L * MB}, new int[]{MB}, hashes(2, 1)));
            assertEquals(List.of(KeyStatus.SSD), next.statuses(), "the Manager keeps serving the other residences");
            assertTrue(client.matches(20L * MB, MB, 1002));
        }
    }

    @Test
    void shouldReadUnalignedDestinationsAndOddLengthsThroughStagingAndAlignedOnesStraightIntoTheRegion()
    {
        final int align = Configuration.SSD_DIRECT_READ_ALIGNMENT;
        manager = Manager.launch(context(Configuration.SsdBackendChoice.IO_URING));
        try (RawRingClient client = new RawRingClient(manager.cncFile()))
        {
            client.attachOrFail("engine", 48L * MB);
            // Block 0 is one byte short of a multiple of the alignment, block 1 exactly a multiple; the rest fill the
            // 8 MiB pool so that both are evicted to SSD.
            final int[] lengths = {MB - align + 1, MB - align};
            for (int i = 0; i < 2; i++)
            {
                client.fill((long)i * MB, lengths[i], 2000 + i);
                final RawRingClient.Reply stored = client.awaitReply(
                    client.publish(NS, new long[]{(long)i * MB}, new int[]{lengths[i]}, hashes(100 + i, 1)));
                assertEquals(List.of(KeyStatus.STORED), stored.statuses(), stored::toString);
            }
            publish(client, 0, 12);
            awaitCounter(manager, StoreCounter.SSD_QUEUE_DEPTH, 0);
            final RawRingClient.Reply onSsd = client.awaitReply(client.lookup(NS, false, hashes(100, 2)));
            assertEquals(List.of(KeyStatus.SSD, KeyStatus.SSD), onSsd.statuses(), onSsd::toString);

            // Destinations at the edge of the alignment: one below, at, one above; the odd-length block always
            // goes through staging.
            final long base = 16L * MB;
            final long[][] cases = {
                {base + align - 1, 1, 0},
                {base + align, 1, 1},
                {base + align + 1, 1, 0},
                {base + align, 0, 0},
            };
            for (final long[] c : cases)
            {
                final long dst = c[0];
                final int block = (int)c[1];
                final long directBefore = manager.counter(StoreCounter.SSD_DIRECT_READS);
                final long readsBefore = manager.counter(StoreCounter.SSD_READS);
                client.fill(dst - 1, lengths[block] + 2, 7);
                final RawRingClient.Reply read = client.awaitReply(
                    client.read(NS, 0, new long[]{dst}, new int[]{MB}, hashes(100 + block, 1)));
                assertEquals(List.of(KeyStatus.SSD), read.statuses(), () -> "dst " + dst + ": " + read);
                assertTrue(client.matches(dst, lengths[block], 2000 + block), "byte-exact at dst " + dst);
                assertTrue(client.matches(dst - 1, 1, 7), "the byte before the destination is untouched");
                assertEquals(filledByte(7, lengths[block] + 1), client.region().get(ValueLayout.JAVA_BYTE,
                    dst + lengths[block]), "the byte after the block is untouched");
                assertEquals(readsBefore + 1, manager.counter(StoreCounter.SSD_READS));
                assertEquals(directBefore + c[2], manager.counter(StoreCounter.SSD_DIRECT_READS),
                    () -> "dst " + dst + " block " + block + " direct " + c[2]);
            }
            awaitCounter(manager, StoreCounter.PINS_ACTIVE, 0);
            assertEquals(0, manager.ssdTier().stagingBytesInUse(), "no staging leaked");
        }
    }

    /** The byte {@link RawRingClient#fill} wrote with {@code seed} at {@code index} of its range. */
    private static byte filledByte(final long seed, final int index)
    {
        return (byte)((seed * 31 + index * 7 + (index >>> 8)) & 0xFF);
    }

    @Test
    void shouldAnswerFailedIoAndKeepTheResidenceWhenAClientShrankItsRegionUnderADirectRead() throws IOException
    {
        manager = Manager.launch(context(Configuration.SsdBackendChoice.IO_URING));
        try (RawRingClient saboteur = new RawRingClient(manager.cncFile());
            RawRingClient other = new RawRingClient(manager.cncFile()))
        {
            saboteur.attachOrFail("engine-saboteur", 48L * MB);
            other.attachOrFail("engine-other", 48L * MB);
            publish(saboteur, 0, 16);
            awaitCounter(manager, StoreCounter.SSD_ADMISSIONS, 8);
            awaitCounter(manager, StoreCounter.SSD_QUEUE_DEPTH, 0);

            // The engine owns its side of the mapping and can shrink the file: the kernel cannot fault in the
            // destination's pages, so the direct read fails with EFAULT. The device is fine.
            try (java.io.RandomAccessFile file = new java.io.RandomAccessFile(saboteur.regionPath(), "rw"))
            {
                file.setLength(16L * MB);
            }
            final RawRingClient.Reply read = saboteur.awaitReply(saboteur.read(
                NS, 0, new long[]{16L * MB}, new int[]{MB}, hashes(0, 1)));
            assertEquals(List.of(KeyStatus.FAILED), read.statuses(), read::toString);
            assertEquals(List.of(FailureReason.IO), read.reasons());
            assertEquals(1, manager.counter(StoreCounter.SSD_DIRECT_READ_FAULTS));
            assertEquals(0, manager.counter(StoreCounter.SSD_IO_ERRORS), "not counted as a device error");
            awaitCounter(manager, StoreCounter.PINS_ACTIVE, 0);

            final RawRingClient.Reply kept = other.awaitReply(other.read(
                NS, 0, new long[]{16L * MB}, new int[]{MB}, hashes(0, 1)));
            assertEquals(List.of(KeyStatus.SSD), kept.statuses(), "the residence was kept: " + kept);
            assertTrue(other.matches(16L * MB, MB, 1000));
        }
    }

    @Test
    void shouldReadDirectInAutoModeExactlyWhenTheDataRegionsAreOnHugePages()
    {
        manager = Manager.launch(context(Configuration.SsdBackendChoice.IO_URING)
            .ssdDirectReads(Configuration.SsdDirectReads.AUTO));
        final DataRegionPages.Verdict pages = DataRegionPages.of(new File(dir, "clients").toPath());
        assertTrue(manager.ssdDescription().contains("direct reads auto: " + (pages.huge() ? "on" : "off")),
            manager::ssdDescription);
        try (RawRingClient client = new RawRingClient(manager.cncFile()))
        {
            client.attachOrFail("engine", 48L * MB);
            publish(client, 0, 16);
            awaitCounter(manager, StoreCounter.SSD_ADMISSIONS, 8);
            final RawRingClient.Reply read = readAll(client, 0, 2);
            assertEquals(2, read.value(), read::toString);
            assertTrue(client.matches(16L * MB, MB, 1000) && client.matches(17L * MB, MB, 1001));
            assertEquals(pages.huge() ? 2 : 0, manager.counter(StoreCounter.SSD_DIRECT_READS), pages::reason);
        }
    }

    @Test
    void shouldReadEveryBlockThroughStagingWhenDirectReadsAreOff()
    {
        manager = Manager.launch(context(Configuration.SsdBackendChoice.IO_URING).ssdDirectReads(Configuration.SsdDirectReads.OFF));
        try (RawRingClient client = new RawRingClient(manager.cncFile()))
        {
            client.attachOrFail("engine", 48L * MB);
            publish(client, 0, 16);
            awaitCounter(manager, StoreCounter.SSD_ADMISSIONS, 8);
            final RawRingClient.Reply read = readAll(client, 0, 8);
            assertEquals(8, read.value(), read::toString);
            for (int i = 0; i < 8; i++)
            {
                assertEquals(KeyStatus.SSD, read.statuses().get(i));
                assertTrue(client.matches((long)(16 + i) * MB, MB, 1000 + i), "block " + i + " byte-exact");
            }
            assertEquals(8, manager.counter(StoreCounter.SSD_READS));
            assertEquals(0, manager.counter(StoreCounter.SSD_DIRECT_READS));
        }
    }

    private Path ssdFile() throws IOException
    {
        try (Stream<Path> files = Files.list(ssdDir.toPath()))
        {
            return files.filter((path) -> path.toString().endsWith(".ssd")).findFirst().orElseThrow();
        }
    }

    /**
     * The file offset of the SSD extent holding a block published from {@code seed}: the lowest 4 KiB aligned
     * offset whose first bytes are the block's (the pattern repeats inside a block, never before its start).
     */
    private static long extentOf(final Path file, final long seed) throws IOException
    {
        final byte[] expected = new byte[256];
        for (int i = 0; i < expected.length; i++)
        {
            expected[i] = (byte)((seed * 31 + i * 7 + (i >>> 8)) & 0xFF);
        }
        final ByteBuffer head = ByteBuffer.allocate(expected.length);
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ))
        {
            for (long offset = 0; offset < channel.size(); offset += Configuration.SSD_BLOCK_BYTES)
            {
                head.clear();
                channel.read(head, offset);
                if (Arrays.equals(expected, head.array()))
                {
                    return offset;
                }
            }
        }
        throw new AssertionError("block " + seed + " not found in " + file);
    }

    @Test
    void shouldPromoteAnSsdHitToDramWhenAsked()
    {
        manager = Manager.launch(context(Configuration.SsdBackendChoice.AUTO).ssdPromote(true));
        try (RawRingClient client = new RawRingClient(manager.cncFile()))
        {
            client.attachOrFail("engine", 48L * MB);
            publish(client, 0, 10);
            awaitCounter(manager, StoreCounter.SSD_ADMISSIONS, 2);
            final RawRingClient.Reply read = readAll(client, 0, 1);
            assertEquals(List.of(KeyStatus.SSD), read.statuses());
            assertTrue(client.matches(16L * MB, MB, 1000));
            assertEquals(1, manager.counter(StoreCounter.SSD_PROMOTIONS));
            final RawRingClient.Reply lookup = client.awaitReply(client.lookup(NS, false, hashes(0, 1)));
            assertEquals(List.of(KeyStatus.DRAM), lookup.statuses(), "promoted copy is in DRAM");
            final RawRingClient.Reply again = readAll(client, 0, 1);
            assertEquals(List.of(KeyStatus.DRAM), again.statuses());
            assertTrue(client.matches(16L * MB, MB, 1000));
        }
    }

    @Test
    void shouldWriteEveryPublishToSsdWithOnPublishAdmissionAndReportDramFirst()
    {
        manager = Manager.launch(context(Configuration.SsdBackendChoice.AUTO)
            .ssdAdmission(Configuration.SsdAdmission.ON_PUBLISH));
        try (RawRingClient client = new RawRingClient(manager.cncFile()))
        {
            client.attachOrFail("engine", 48L * MB);
            publish(client, 0, 3);
            awaitCounter(manager, StoreCounter.SSD_ADMISSIONS, 3);
            final RawRingClient.Reply lookup = client.awaitReply(client.lookup(NS, false, hashes(0, 3)));
            assertEquals(List.of(KeyStatus.DRAM, KeyStatus.DRAM, KeyStatus.DRAM), lookup.statuses());
            awaitCounter(manager, StoreCounter.SSD_BLOCKS_RESIDENT, 3);
        }
    }

    @Test
    void shouldAdmitNothingWhenAdmissionIsOff()
    {
        manager = Manager.launch(context(Configuration.SsdBackendChoice.AUTO)
            .ssdAdmission(Configuration.SsdAdmission.OFF));
        try (RawRingClient client = new RawRingClient(manager.cncFile()))
        {
            client.attachOrFail("engine", 48L * MB);
            publish(client, 0, 12);
            assertEquals(0, manager.counter(StoreCounter.SSD_WRITES));
            final RawRingClient.Reply lookup = client.awaitReply(client.lookup(NS, false, hashes(0, 1)));
            assertEquals(List.of(KeyStatus.MISS), lookup.statuses());
        }
    }

    @Test
    void shouldReleaseStagingAndPinsWhenAClientDetachesWithSsdReadsInFlight()
    {
        manager = Manager.launch(context(Configuration.SsdBackendChoice.IO_URING));
        try (RawRingClient client = new RawRingClient(manager.cncFile());
            RawRingClient other = new RawRingClient(manager.cncFile()))
        {
            client.attachOrFail("engine-leaving", 48L * MB);
            other.attachOrFail("engine-staying", 48L * MB);
            publish(client, 0, 16);
            awaitCounter(manager, StoreCounter.SSD_ADMISSIONS, 8);

            // The Read's SSD I/O is queued when the Detach behind it cancels the operation: the completions find
            // their operation gone and release staging and pins themselves.
            final long readsBefore = manager.counter(StoreCounter.SSD_READS);
            final long[] dst = new long[8];
            final int[] capacities = new int[8];
            for (int i = 0; i < 8; i++)
            {
                dst[i] = (long)(16 + i) * MB;
                capacities[i] = MB;
            }
            client.read(NS, 0, dst, capacities, hashes(0, 8));
            client.detach();
            awaitTrue(() -> manager.counter(StoreCounter.SSD_READS) > readsBefore, () -> "reads submitted");
            awaitCounter(manager, StoreCounter.SSD_QUEUE_DEPTH, 0);
            awaitCounter(manager, StoreCounter.PINS_ACTIVE, 0);
            awaitTrue(() -> 0 == manager.ssdTier().stagingBytesInUse(), () -> "staging released");
            assertTrue(manager.counter(RingCounter.OPERATIONS_CANCELLED) >= 1);

            final long[] otherDst = {16L * MB};
            final RawRingClient.Reply read = other.awaitReply(
                other.read(NS, 0, otherDst, new int[]{MB}, hashes(3, 1)));
            assertEquals(List.of(KeyStatus.SSD), read.statuses(), "the residences survive for other clients");
            assertTrue(other.matches(16L * MB, MB, 1000 + 3));
        }
    }
}
