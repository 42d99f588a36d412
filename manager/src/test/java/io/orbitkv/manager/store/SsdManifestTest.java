package io.orbitkv.manager.store;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The manifest's format on real files: replay semantics, the torn tail at every cut, a flipped bit, and refusal of
 * other layouts.
 */
class SsdManifestTest
{
    private static final SsdManifest.Layout LAYOUT = new SsdManifest.Layout(64L << 20, 4096, 2 << 20, 4 << 20);

    @TempDir
    Path dir;

    @Test
    void shouldReplayResidencesRemovalsAndReplacements() throws IOException
    {
        final Path file = dir.resolve("m");
        try (SsdManifest.Appender appender = new SsdManifest.Appender(file, LAYOUT))
        {
            appender.namespace(0, "a".getBytes(StandardCharsets.UTF_8));
            appender.resident(0, hash(1), 0, 32, 0, 4096, 11, 1);
            appender.resident(0, hash(2), 0, 32, 8192, 5000, 22, 2);
            appender.resident(0, hash(3), 0, 32, 16384, 100, 33, 3);
            appender.removed(8192, 2);
            appender.removed(16384, 99);
            appender.resident(0, hash(4), 0, 32, 0, 4096, 44, 4);
        }
        for (final SsdManifest.Replay replay : new SsdManifest.Replay[]{
            new SsdManifest.Replay(), new SsdManifest.Replay(16, LAYOUT.ssdBytes())})
        {
            assertReplayed(file, replay);
        }
    }

    @Test
    void shouldIgnoreAndCountExtentsOutsideTheFileWithTheArrayMapping() throws IOException
    {
        final Path file = dir.resolve("m");
        try (SsdManifest.Appender appender = new SsdManifest.Appender(file, LAYOUT))
        {
            appender.namespace(0, "a".getBytes(StandardCharsets.UTF_8));
            appender.resident(0, hash(1), 0, 32, LAYOUT.ssdBytes(), 4096, 1, 1);
            appender.resident(0, hash(2), 0, 32, 100, 4096, 2, 2);
            appender.resident(0, hash(3), 0, 32, -4096, 4096, 3, 3);
            appender.resident(0, hash(4), 0, 32, 4096, 4096, 4, 4);
        }
        final SsdManifest.Replay replay = new SsdManifest.Replay(16, LAYOUT.ssdBytes());
        assertEquals(SsdManifest.READ_OK, SsdManifest.read(file, LAYOUT, replay).status());
        assertEquals(3, replay.invalidOffsets());
        assertEquals(1, replay.liveCount());
    }

    private static void assertReplayed(final Path file, final SsdManifest.Replay replay) throws IOException
    {
        final SsdManifest.ReadResult read = SsdManifest.read(file, LAYOUT, replay);
        assertEquals(SsdManifest.READ_OK, read.status());
        assertEquals(7, read.records());
        assertEquals(0, read.tornRecords());
        assertEquals(Files.size(file), read.validEnd());
        assertEquals(2, replay.liveCount(), "the removal names the residence by sequence; a later one replaces");
        final int[] slots = replay.liveSlotsOldestFirst();
        assertEquals(3, replay.sequence(slots[0]));
        assertEquals(16384, replay.offset(slots[0]));
        assertEquals(4, replay.sequence(slots[1]));
        assertEquals(44, replay.crc32c(slots[1]));
        assertEquals(99, replay.maxSequence());
        assertEquals("a", new String(replay.namespaceName(0), StandardCharsets.UTF_8));
    }

    @Test
    void shouldStopAtATornTailWhereverTheFileIsCut() throws IOException
    {
        final Path file = dir.resolve("m");
        final long[] ends = new long[5];
        try (SsdManifest.Appender appender = new SsdManifest.Appender(file, LAYOUT))
        {
            appender.namespace(0, "ns".getBytes(StandardCharsets.UTF_8));
            ends[0] = appender.size();
            for (int i = 1; i < ends.length; i++)
            {
                appender.resident(0, hash(i), 0, 32, 4096L * i, 4096, i, i);
                ends[i] = appender.size();
            }
        }
        final byte[] whole = Files.readAllBytes(file);
        for (int cut = SsdManifest.HEADER_BYTES; cut <= whole.length; cut++)
        {
            Files.write(file, java.util.Arrays.copyOf(whole, cut));
            final SsdManifest.Replay replay = new SsdManifest.Replay();
            final SsdManifest.ReadResult read = SsdManifest.read(file, LAYOUT, replay);
            int whole0 = 0;
            long validEnd = SsdManifest.HEADER_BYTES;
            for (int i = 0; i < ends.length; i++)
            {
                if (ends[i] <= cut)
                {
                    whole0 = i + 1;
                    validEnd = ends[i];
                }
            }
            assertEquals(whole0, read.records(), "cut at " + cut);
            assertEquals(validEnd, read.validEnd(), "cut at " + cut);
            assertEquals(validEnd == cut ? 0 : 1, read.tornRecords(), "cut at " + cut);
            assertEquals(Math.max(0, whole0 - 1), replay.liveCount(), "cut at " + cut);
        }
    }

    @Test
    void shouldStopAtARecordWhoseBytesChanged() throws IOException
    {
        final Path file = dir.resolve("m");
        long secondEnd;
        try (SsdManifest.Appender appender = new SsdManifest.Appender(file, LAYOUT))
        {
            appender.namespace(0, "ns".getBytes(StandardCharsets.UTF_8));
            appender.resident(0, hash(1), 0, 32, 0, 4096, 1, 1);
            secondEnd = appender.size();
            appender.resident(0, hash(2), 0, 32, 4096, 4096, 2, 2);
            appender.resident(0, hash(3), 0, 32, 8192, 4096, 3, 3);
        }
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE))
        {
            final ByteBuffer one = ByteBuffer.allocate(1);
            final long at = secondEnd + SsdManifest.FRAME_HEADER_BYTES + SsdManifest.RES_OFFSET;
            channel.read(one, at);
            one.put(0, (byte)(one.get(0) ^ 0x10)).rewind();
            channel.write(one, at);
        }
        final SsdManifest.Replay replay = new SsdManifest.Replay();
        final SsdManifest.ReadResult read = SsdManifest.read(file, LAYOUT, replay);
        assertEquals(2, read.records());
        assertEquals(1, read.tornRecords());
        assertEquals(secondEnd, read.validEnd());
        assertEquals(1, replay.liveCount(), "nothing after the changed record is believed");
    }

    @Test
    void shouldRefuseOtherLayoutsWithTheirReason() throws IOException
    {
        final Path file = dir.resolve("m");
        try (SsdManifest.Appender appender = new SsdManifest.Appender(file, LAYOUT))
        {
            appender.namespace(0, "ns".getBytes(StandardCharsets.UTF_8));
        }
        assertRefused(file, new SsdManifest.Layout(32L << 20, 4096, 2 << 20, 4 << 20), "written for --ssd-bytes 67108864");
        assertRefused(file, new SsdManifest.Layout(64L << 20, 512, 2 << 20, 4 << 20), "written for 4096-byte blocks");
        assertRefused(file, new SsdManifest.Layout(64L << 20, 4096, 2 << 20, 8 << 20),
            "written for --max-block-bytes 4194304");
        final byte[] bytes = Files.readAllBytes(file);
        bytes[SsdManifest.H_VERSION] = 2;
        Files.write(file, bytes);
        assertRefused(file, LAYOUT, "header checksum mismatch");
        final java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
        crc.update(bytes, 0, SsdManifest.H_CRC);
        ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).putInt(SsdManifest.H_CRC, (int)crc.getValue());
        Files.write(file, bytes);
        assertRefused(file, LAYOUT, "layout version 2, this Manager reads version 1");
        assertNull(SsdManifest.headerLayout(file));
        Files.writeString(file, "x".repeat(100));
        assertRefused(file, LAYOUT, "not an OrbitKV SSD manifest");
        Files.writeString(file, "short");
        assertRefused(file, LAYOUT, "shorter (5 bytes) than a manifest header");
        assertEquals(SsdManifest.READ_MISSING, SsdManifest.read(dir.resolve("none"), LAYOUT, new SsdManifest.Replay())
            .status());
    }

    private static void assertRefused(final Path file, final SsdManifest.Layout layout, final String reason)
        throws IOException
    {
        final SsdManifest.Replay replay = new SsdManifest.Replay();
        final SsdManifest.ReadResult read = SsdManifest.read(file, layout, replay);
        assertEquals(SsdManifest.READ_REFUSED, read.status(), read.toString());
        assertTrue(read.reason().contains(reason), read.reason());
        assertEquals(0, replay.liveCount());
    }

    private static UnsafeBuffer hash(final int value)
    {
        final UnsafeBuffer hash = new UnsafeBuffer(new byte[32]);
        hash.putInt(0, value);
        hash.putInt(28, ~value);
        return hash;
    }
}
