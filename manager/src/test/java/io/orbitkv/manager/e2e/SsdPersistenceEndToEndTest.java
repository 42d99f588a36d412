package io.orbitkv.manager.e2e;

import io.orbitkv.client.EngineClient;
import io.orbitkv.client.KeyBatch;
import io.orbitkv.client.OperationResult;
import io.orbitkv.codecs.engine.FailureReason;
import io.orbitkv.codecs.engine.KeyStatus;
import io.orbitkv.manager.cli.BlockChain;
import io.orbitkv.manager.store.SsdManifest;
import io.orbitkv.manager.store.StoreCounter;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A restart keeps the SSD tier: Managers as separate processes over an SSD directory under target/ (a real disk),
 * stopped with SIGTERM or SIGKILL and started again on the same directories. After every restart each key of every
 * chain published so far is read on its own from a client in this JVM: it is restored byte-exact or absent, never
 * wrong.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class SsdPersistenceEndToEndTest
{
    private static final long CLIENT_TIMEOUT_MS = 90_000;
    private static final long READY_NS = TimeUnit.SECONDS.toNanos(60);
    private static final String NAMESPACE = "model-p";
    private static final int MIN_BLOCK = 4096;
    private static final int MAX_BLOCK = 32 * 1024;
    /** Rounds of the kill -9 test in the suite; {@code -Dorbitkv.test.ssd.kill.rounds=20} for the long run. */
    private static final int KILL_ROUNDS = Integer.getInteger("orbitkv.test.ssd.kill.rounds", 5);
    private static final String RESTORED = "SSD recovery: residences restored";
    private static final String VERIFY_STATE = "SSD verify scan: 0 off or nothing to verify, 1 scanning, 2 done";
    private static final String VERIFY_PENDING = "SSD verify scan: restored residences not yet verified";
    private static final String STATE = "SSD recovery: 0 off, 1 reading, 2 done, 3 refused (tier started empty), 4 no manifest";

    @RegisterExtension
    final OrbitKvProcesses processes = OrbitKvProcesses.perTest();

    private Path ssdDir;
    private Path mountPoint;
    private Path loopImage;

    @BeforeEach
    void before() throws Exception
    {
        ssdDir = Files.createDirectories(
            Paths.get("target", "ssd-persist-e2e", UUID.randomUUID().toString()).toAbsolutePath());
    }

    @AfterEach
    void after() throws Exception
    {
        processes.close();
        if (null != mountPoint)
        {
            run("umount", mountPoint.toString());
        }
        if (null != loopImage)
        {
            Files.deleteIfExists(loopImage);
        }
        try (Stream<Path> paths = Files.walk(ssdDir))
        {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    @Test
    void shouldRestoreEverySsdBlockByteExactAfterSigterm() throws Exception
    {
        // Without the verification scan: every restored residence is verified by its first read here.
        final String[] manager = verifyOff(managerArgs("512m"));
        processes.startManager(manager);
        assertEquals(4, processes.counter(STATE), "a first start finds no manifest");
        final BlockChain chain = publish(21, 3000);
        awaitWritesSettled();
        final long onSsd = processes.counter("SSD blocks resident");
        assertTrue(onSsd > 1000, "blocks on SSD " + onSsd);
        assertEquals(0, processes.counter("SSD manifest: records lost (queue to the writer full, or a refused write)"));

        stop(false);
        restart(manager);
        assertEquals(2, processes.counter(STATE));
        assertEquals(onSsd, processes.counter(RESTORED));
        assertEquals(0, processes.counter("SSD recovery: torn or corrupt manifest tail records ignored"));
        assertEquals(0, processes.counter("Blocks resident"), "DRAM starts empty");
        assertEquals(onSsd, processes.counter("SSD blocks resident"));
        assertEquals(StoreCounter.SSD_VERIFY_OFF, processes.counter(VERIFY_STATE));
        assertEquals(onSsd, processes.counter(VERIFY_PENDING));

        final Probe probe = probe(chain);
        assertEquals(0, probe.mismatches, probe.toString());
        assertEquals(onSsd, probe.fromSsd, probe.toString());
        assertEquals(0, probe.fromDram + probe.failed, probe.toString());
        assertEquals(onSsd, processes.counter("SSD recovery: restored residences verified on first read"));

        // The restored residences are in the new manifest too: a second restart finds the same set.
        stop(false);
        final OrbitKvProcesses.ClientRun verify = processes.runCommand(CLIENT_TIMEOUT_MS, "ssd", "verify", "--dir",
            ssdDir.toString());
        assertEquals(0, verify.exitCode(), verify.stdout());
        assertEquals(onSsd, verify.json().get("intact").asLong(), verify.stdout());
        restart(manager);
        assertEquals(onSsd, processes.counter(RESTORED));
        assertEquals(onSsd, probe(chain).fromSsd);
    }

    @Test
    void shouldNeverServeAWrongByteAfterKillNineUnderPublishLoad() throws Exception
    {
        final long seed = Long.getLong("orbitkv.test.ssd.kill.seed", 2029);
        final Random random = new Random(seed);
        // A small checkpoint threshold: checkpoints run (and get killed) during the rounds too.
        final String[] manager = concat(managerArgs("1g"), "--ssd-manifest-checkpoint-bytes", "1m");
        final List<BlockChain> chains = new ArrayList<>();
        processes.startManager(manager);
        long totalLost = 0;
        for (int round = 0; round < KILL_ROUNDS; round++)
        {
            final BlockChain chain = new BlockChain(100 + round, 2500, MIN_BLOCK, MAX_BLOCK);
            chains.add(chain);
            final long restoredAtStart = processes.counter(RESTORED);
            final OrbitKvProcesses.Started publisher = processes.startClient(chainArgs("publish", chain));
            // Kill at a seeded moment of the publish: after a seeded number of SSD admissions of this round.
            final long admissionsBefore = processes.counter("SSD admissions (write completed)");
            final long target = admissionsBefore + 50 + random.nextInt(1200);
            final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            long seen = admissionsBefore;
            while (seen < target && publisher.process().isAlive() && System.nanoTime() - deadlineNs < 0)
            {
                java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(200));
                seen = processes.counter("SSD admissions (write completed)");
            }
            final long residentAtKill = processes.counter("SSD blocks resident");
            processes.managerProcess().destroyForcibly();
            assertTrue(processes.managerProcess().waitFor(30, TimeUnit.SECONDS));
            // The dead process's counters stay in its CnC file: the residences READY at the kill are exactly those
            // restored at its start plus the writes it completed, less its evictions (a 1 GiB tier: none).
            final long readyAtKill = restoredAtStart + processes.counter("SSD admissions (write completed)") -
                processes.counter("SSD evictions");
            publisher.process().destroyForcibly();
            publisher.process().waitFor(30, TimeUnit.SECONDS);

            restart(manager);
            final long restored = processes.counter(RESTORED);
            long fromSsd = 0;
            for (final BlockChain c : chains)
            {
                final Probe probe = probe(c);
                assertEquals(0, probe.mismatches, "round " + round + " chain " + c.seed() + ": " + probe);
                assertEquals(0, probe.fromDram, "DRAM starts empty");
                fromSsd += probe.fromSsd;
            }
            final long checksumDrops = processes.counter("SSD recovery: restored residences dropped on first read (checksum)") +
                processes.counter("SSD verify scan: restored residences dropped by the scan (checksum or read error)");
            assertEquals(restored, fromSsd + checksumDrops, "every restored residence is served or dropped");
            // READY at the kill less what came back: the records the writer had not written.
            final long lost = Math.max(0, readyAtKill - restored);
            totalLost += lost;
            System.out.println("kill -9 round " + round + " (seed " + seed + "): ready at kill " + readyAtKill +
                " (resident, writes in flight included, >= " + residentAtKill + "), restored " + restored +
                ", dropped on read " + checksumDrops + ", lost " + lost);
            // kill -9 loses what the writer had not yet written: at most a sync batch, whatever the policy's timer.
            assertTrue(lost <= 2L * io.orbitkv.manager.Configuration.SSD_MANIFEST_SYNC_BATCH_RECORDS,
                "round " + round + ": lost " + lost + " of " + readyAtKill);
        }
        System.out.println("kill -9: " + KILL_ROUNDS + " rounds, seed " + seed + ", lost " + totalLost + " in all");
    }

    @Test
    void shouldDetectBitRotAndATruncatedManifestAndNeverServeThem() throws Exception
    {
        // Without the verification scan: the rot is found by the reads below.
        final String[] manager = verifyOff(managerArgs("512m"));
        processes.startManager(manager);
        final BlockChain chain = publish(31, 2000);
        awaitWritesSettled();
        final long onSsd = processes.counter("SSD blocks resident");
        stop(false);

        final Path ssdFile = ssdDir.resolve("orbitkv-default.ssd");
        final Path manifest = SsdManifest.manifestOf(ssdFile);
        final SsdManifest.Replay replay = new SsdManifest.Replay();
        final SsdManifest.ReadResult read = SsdManifest.read(manifest, SsdManifest.headerLayout(manifest), replay);
        assertEquals(onSsd, replay.liveCount());
        final int[] slots = replay.liveSlotsOldestFirst();
        final int rotten = 5;
        try (FileChannel channel = FileChannel.open(ssdFile, StandardOpenOption.WRITE))
        {
            for (int i = 0; i < rotten; i++)
            {
                final long offset = replay.offset(slots[i * 97 % slots.length]);
                channel.write(ByteBuffer.wrap(new byte[]{(byte)0xA5, 0x5A, 0x00, (byte)0xFF}), offset + 100);
            }
        }
        // The last record loses its last byte: a torn append.
        try (FileChannel channel = FileChannel.open(manifest, StandardOpenOption.WRITE))
        {
            channel.truncate(read.validEnd() - 1);
        }
        final OrbitKvProcesses.ClientRun verify = processes.runCommand(CLIENT_TIMEOUT_MS, "ssd", "verify", "--dir",
            ssdDir.toString());
        assertEquals(1, verify.exitCode(), verify.stdout());
        assertEquals(rotten, verify.json().get("corrupt").asLong(), verify.stdout());
        assertEquals(1, verify.json().get("tornRecords").asLong(), verify.stdout());

        restart(manager);
        assertEquals(1, processes.counter("SSD recovery: torn or corrupt manifest tail records ignored"));
        final long restored = processes.counter(RESTORED);
        assertTrue(restored >= onSsd - 1 && restored <= onSsd, "restored " + restored + " of " + onSsd);
        final Probe probe = probe(chain);
        assertEquals(0, probe.mismatches, probe.toString());
        assertEquals(rotten, probe.failed, probe.toString());
        assertEquals(rotten, probe.failedChecksum, probe.toString());
        assertEquals(restored - rotten, probe.fromSsd, probe.toString());
        assertEquals(rotten, processes.counter("SSD recovery: restored residences dropped on first read (checksum)"));
        assertEquals(rotten, processes.counter(
            "Checksums: SSD reads whose bytes did not match the block's CRC32C (residence dropped)"));
        // Dropped for good: read again, they are absent.
        final Probe again = probe(chain);
        assertEquals(0, again.failed + again.mismatches, again.toString());
        assertEquals(restored - rotten, again.fromSsd);
    }

    @Test
    void shouldRefuseAManifestOfAnotherLayoutAndStartEmpty() throws Exception
    {
        processes.startManager(managerArgs("512m"));
        final BlockChain chain = publish(41, 2500);
        awaitWritesSettled();
        assertTrue(processes.counter("SSD blocks resident") > 300, processes.counters("SSD"));
        stop(false);

        final Path manifest = SsdManifest.manifestOf(ssdDir.resolve("orbitkv-default.ssd"));
        final byte[] original = Files.readAllBytes(manifest);
        restart(managerArgs("256m"));
        assertEquals(3, processes.counter(STATE));
        assertEquals(0, processes.counter("SSD blocks resident"));
        assertTrue(managerErr().contains("refused: written for --ssd-bytes 536870912, this Manager has 268435456; " +
            "the SSD tier starts empty"), managerErr());
        Probe probe = probe(chain);
        assertEquals(0, probe.fromSsd + probe.mismatches + probe.failed, probe.toString());
        stop(false);

        // Another version of the format: refused the same way, never misread.
        original[SsdManifestTestAccess.VERSION_OFFSET] = 9;
        final java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
        crc.update(original, 0, SsdManifestTestAccess.CRC_OFFSET);
        ByteBuffer.wrap(original).order(java.nio.ByteOrder.LITTLE_ENDIAN)
            .putInt(SsdManifestTestAccess.CRC_OFFSET, (int)crc.getValue());
        Files.write(manifest, original);
        restart(managerArgs("512m"));
        assertEquals(3, processes.counter(STATE));
        assertTrue(managerErr().contains("refused: layout version 9, this Manager reads version 1"), managerErr());
        probe = probe(chain);
        assertEquals(0, probe.fromSsd + probe.mismatches + probe.failed, probe.toString());
        stop(false);

        // A foreign file.
        Files.writeString(manifest, "not a manifest at all, but long enough to hold a header of sixty-four bytes...");
        restart(managerArgs("512m"));
        assertEquals(3, processes.counter(STATE));
        assertTrue(managerErr().contains("not an OrbitKV SSD manifest"), managerErr());
    }

    @Test
    void shouldRefuseAndCountManifestWritesOnAFullDiskAndStayConsistent() throws Exception
    {
        Assumptions.assumeTrue(mountSmallFileSystem(), "needs root to loop-mount an ext4 image");
        final Path dir = mountPoint.resolve("ssd");
        Files.createDirectories(dir);
        final String[] manager = {"--pool-bytes", "32m", "--ssd-dir", dir.toString(), "--ssd-bytes", "64m",
            "--ssd-staging-bytes", "32m", "--ssd-manifest-checkpoint-bytes", "1m"};
        processes.startManager(manager);
        // Fill the file system but for a few KiB: the manifest's next writes find no room.
        final Path filler = mountPoint.resolve("filler");
        fillUpTo(filler, 8 * 1024);
        final BlockChain chain = publish(51, 2500);
        awaitWritesSettled();
        final long errors = processes.counter(
            "SSD manifest: writes refused by the file system (e.g. disk full; records lost)");
        assertTrue(errors > 0, processes.counters("SSD"));
        assertTrue(processes.counter("SSD manifest: records lost (queue to the writer full, or a refused write)") > 0);
        // The tier itself still serves every SSD block.
        final long onSsd = processes.counter("SSD blocks resident");
        final Probe live = probe(chain);
        assertEquals(0, live.mismatches + live.failed, live.toString());
        assertTrue(live.fromSsd >= onSsd, live + " on SSD " + onSsd);

        // Room again: the checkpoint asked for after the loss rewrites the manifest from the live residences.
        Files.delete(filler);
        final long checkpoints = processes.awaitCounter("SSD manifest: checkpoints (rewritten from the live residences)",
            1, TimeUnit.SECONDS.toNanos(30));
        assertTrue(checkpoints >= 1, processes.counters("SSD"));
        stop(false);
        restart(manager);
        assertEquals(onSsd, processes.counter(RESTORED));
        final Probe probe = probe(chain);
        assertEquals(0, probe.mismatches + probe.failed, probe.toString());
        assertEquals(onSsd, probe.fromSsd, probe.toString());
    }

    // ---------------------------------------------------------------------------------------------------------------

    @Test
    void shouldDropBitRotNoReadTouchesInTheBackgroundBeforeAnyRead() throws Exception
    {
        final String[] manager = managerArgs("512m");
        processes.startManager(manager);
        final BlockChain chain = publish(41, 2000);
        awaitWritesSettled();
        final long onSsd = processes.counter("SSD blocks resident");
        stop(false);

        final Path ssdFile = ssdDir.resolve("orbitkv-default.ssd");
        final Path manifest = SsdManifest.manifestOf(ssdFile);
        final SsdManifest.Replay replay = new SsdManifest.Replay();
        SsdManifest.read(manifest, SsdManifest.headerLayout(manifest), replay);
        assertEquals(onSsd, replay.liveCount());
        final int[] slots = replay.liveSlotsOldestFirst();
        final int rotten = 7;
        try (FileChannel channel = FileChannel.open(ssdFile, StandardOpenOption.READ, StandardOpenOption.WRITE))
        {
            for (int i = 0; i < rotten; i++)
            {
                // One flipped byte somewhere in the block: the scan must find it without any reader.
                final int slot = slots[(i * 131 + 17) % slots.length];
                final long at = replay.offset(slot) + (i * 997L) % replay.length(slot);
                final ByteBuffer one = ByteBuffer.allocate(1);
                channel.read(one, at);
                one.put(0, (byte)~one.get(0)).rewind();
                channel.write(one, at);
            }
        }

        restart(manager);
        assertEquals(onSsd, processes.counter(RESTORED));
        // No client reads anything: the scan alone runs through the restored residences, then stops.
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (StoreCounter.SSD_VERIFY_DONE != processes.counter(VERIFY_STATE))
        {
            assertTrue(System.nanoTime() - deadlineNs < 0, "scan not done: " +
                processes.counter(VERIFY_PENDING) + " pending, state " + processes.counter(VERIFY_STATE));
            java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
        }
        assertEquals(0, processes.counter(VERIFY_PENDING));
        assertEquals(rotten, processes.counter(
            "SSD verify scan: restored residences dropped by the scan (checksum or read error)"));
        assertEquals(onSsd - rotten, processes.counter("SSD verify scan: restored residences verified by the scan"));
        assertTrue(processes.counter("SSD verify scan: bytes read") >= onSsd * MIN_BLOCK);
        assertEquals(0, processes.counter("SSD recovery: restored residences dropped on first read (checksum)"));
        assertEquals(onSsd - rotten, processes.counter("SSD blocks resident"));

        // The rotten residences are gone before any read: readers find them absent, never FAILED, never wrong.
        final Probe probe = probe(chain);
        assertEquals(0, probe.mismatches, probe.toString());
        assertEquals(0, probe.failed, probe.toString());
        assertEquals(onSsd - rotten, probe.fromSsd, probe.toString());
        assertEquals(0, processes.counter("SSD recovery: restored residences verified on first read"));
    }

    private static String[] verifyOff(final String[] args)
    {
        final String[] all = java.util.Arrays.copyOf(args, args.length + 2);
        all[args.length] = "--ssd-verify-restored";
        all[args.length + 1] = "off";
        return all;
    }

    private String[] managerArgs(final String ssdBytes)
    {
        return new String[]{"--pool-bytes", "32m", "--ssd-dir", ssdDir.toString(), "--ssd-bytes", ssdBytes,
            "--ssd-staging-bytes", "64m"};
    }

    private BlockChain publish(final long seed, final int blocks) throws Exception
    {
        final BlockChain chain = new BlockChain(seed, blocks, MIN_BLOCK, MAX_BLOCK);
        final OrbitKvProcesses.ClientRun publish = processes.runClient(CLIENT_TIMEOUT_MS, chainArgs("publish", chain));
        assertEquals(0, publish.exitCode(), publish.stdout());
        // A publish window may find the pool pinned full for a few blocks; those are simply absent later.
        assertTrue(publish.json().get("stored").asInt() >= blocks * 9 / 10, publish.stdout());
        return chain;
    }

    private static String[] chainArgs(final String command, final BlockChain chain)
    {
        return new String[]{command, "--namespace", NAMESPACE, "--seed", Long.toString(chain.seed()), "--blocks",
            Integer.toString(chain.blockCount()), "--min-block-bytes", Integer.toString(chain.minBlockBytes()),
            "--block-bytes", Integer.toString(chain.maxBlockBytes()), "--no-keys"};
    }

    /**
     * Wait until no SSD I/O is in flight and admissions stopped moving (gauges move on the 1 ms housekeeping tick),
     * and the manifest writer has written every record made so far.
     */
    private void awaitWritesSettled()
    {
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        long lastAdmissions = -1;
        long lastRecords = -1;
        while (System.nanoTime() - deadlineNs < 0)
        {
            final long admissions = processes.counter("SSD admissions (write completed)");
            final long records = processes.counter("SSD manifest: records written") +
                processes.counter("SSD manifest: records lost (queue to the writer full, or a refused write)");
            if (admissions == lastAdmissions && records == lastRecords && 0 == processes.counter("SSD I/O in flight"))
            {
                return;
            }
            lastAdmissions = admissions;
            lastRecords = records;
            java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
        }
    }

    private void stop(final boolean kill) throws Exception
    {
        final Process manager = processes.managerProcess();
        if (kill)
        {
            manager.destroyForcibly();
        }
        else
        {
            manager.destroy();
        }
        assertTrue(manager.waitFor(60, TimeUnit.SECONDS), "Manager did not stop");
    }

    private void restart(final String[] args) throws Exception
    {
        // A killed Manager leaves its CnC file, ready: the wait below must see the new one.
        Files.deleteIfExists(processes.dir.resolve(io.orbitkv.codecs.cnc.CncFileDescriptor.CNC_FILE_NAME));
        processes.launchManager(args);
        processes.awaitReady(READY_NS);
    }

    private String managerErr() throws IOException
    {
        final StringBuilder all = new StringBuilder();
        try (Stream<Path> logs = Files.list(Paths.get("target", "e2e-logs")))
        {
            for (final Path log : (Iterable<Path>)logs.filter(
                p -> p.getFileName().toString().startsWith(processes.dir.getFileName() + "-") &&
                p.getFileName().toString().endsWith("-manager.err")).sorted()::iterator)
            {
                all.append(Files.readString(log, StandardCharsets.UTF_8));
            }
        }
        return all.append(processes.managerOutput()).toString();
    }

    /** What reading every key of a chain on its own found. */
    record Probe(int fromSsd, int fromDram, int absent, int failed, int failedChecksum, int mismatches)
    {
    }

    /**
     * Read each key of a chain in a request of its own and verify every restored byte.
     */
    private Probe probe(final BlockChain chain)
    {
        int fromSsd = 0;
        int fromDram = 0;
        int absent = 0;
        int failed = 0;
        int failedChecksum = 0;
        int mismatches = 0;
        try (EngineClient client = EngineClient.connect(new EngineClient.Context()
            .dir(processes.dir.toString())
            .clientName("probe-" + chain.seed())
            .dataRegionBytes(chain.maxBlockBytes())
            .attachTimeoutNs(TimeUnit.SECONDS.toNanos(30))
            .responseTimeoutNs(TimeUnit.SECONDS.toNanos(30))))
        {
            final KeyBatch batch = new KeyBatch(1).namespace(NAMESPACE.getBytes(StandardCharsets.UTF_8));
            final OperationResult result = new OperationResult(1);
            for (int i = 0; i < chain.blockCount(); i++)
            {
                batch.clear();
                batch.addKey(chain.hashes(), chain.hashOffset(i), BlockChain.HASH_LENGTH, 0, chain.blockLength(i));
                client.dataBuffer().setMemory(0, chain.blockLength(i), (byte)0);
                client.read(batch, 0, result);
                final KeyStatus status = result.status(0);
                if (KeyStatus.SSD == status || KeyStatus.DRAM == status)
                {
                    if (KeyStatus.SSD == status)
                    {
                        fromSsd++;
                    }
                    else
                    {
                        fromDram++;
                    }
                    if (result.length(0) != chain.blockLength(i) || !chain.verify(i, client.dataBuffer(), 0, result.length(0)))
                    {
                        mismatches++;
                    }
                }
                else if (KeyStatus.FAILED == status)
                {
                    failed++;
                    if (FailureReason.CHECKSUM == result.reason(0))
                    {
                        failedChecksum++;
                    }
                }
                else
                {
                    absent++;
                }
            }
        }
        return new Probe(fromSsd, fromDram, absent, failed, failedChecksum, mismatches);
    }

    private boolean mountSmallFileSystem() throws Exception
    {
        if (!"root".equals(System.getProperty("user.name")))
        {
            return false;
        }
        loopImage = ssdDir.resolve("fs.img");
        try (RandomAccessFile image = new RandomAccessFile(loopImage.toFile(), "rw"))
        {
            image.setLength(96L << 20);
        }
        final Path point = Files.createDirectories(ssdDir.resolve("mnt"));
        if (0 != run("mkfs.ext4", "-q", "-F", "-O", "^has_journal", loopImage.toString()) ||
            0 != run("mount", "-o", "loop", loopImage.toString(), point.toString()))
        {
            return false;
        }
        mountPoint = point;
        return true;
    }

    /**
     * Write a file until the file system is full, then give back {@code leaveBytes}.
     */
    private static void fillUpTo(final Path filler, final int leaveBytes) throws IOException
    {
        final ByteBuffer chunk = ByteBuffer.allocate(64 * 1024);
        long written = 0;
        try (FileChannel channel = FileChannel.open(filler, StandardOpenOption.CREATE, StandardOpenOption.WRITE))
        {
            try
            {
                while (true)
                {
                    chunk.clear();
                    written += channel.write(chunk, written);
                    channel.force(false);
                }
            }
            catch (final IOException full)
            {
                // No space left.
            }
            channel.truncate(Math.max(0, written - leaveBytes));
            channel.force(false);
        }
    }

    private static int run(final String... command) throws Exception
    {
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        process.getInputStream().readAllBytes();
        return process.waitFor(60, TimeUnit.SECONDS) ? process.exitValue() : -1;
    }

    private static String[] concat(final String[] first, final String... rest)
    {
        final String[] all = new String[first.length + rest.length];
        System.arraycopy(first, 0, all, 0, first.length);
        System.arraycopy(rest, 0, all, first.length, rest.length);
        return all;
    }

    /** The manifest header's version field, for a test that writes another version. */
    static final class SsdManifestTestAccess
    {
        static final int VERSION_OFFSET = 8;
        static final int CRC_OFFSET = 56;
    }
}
