package io.orbitkv.manager.cli;

import io.orbitkv.index.BlockChecksum;
import io.orbitkv.manager.store.SsdManifest;
import java.io.File;
import java.io.IOException;
import java.io.PrintWriter;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.zip.CRC32C;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code orbitkv ssd}: tools for a Manager's SSD tier on disk.
 */
@Command(
    name = "ssd",
    mixinStandardHelpOptions = true,
    description = "Tools for the SSD tier on disk (of a stopped Manager).",
    subcommands = SsdCommand.Verify.class)
public final class SsdCommand implements Runnable
{
    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    public void run()
    {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    /**
     * {@code orbitkv ssd verify}: replay the manifest as a start would, read every residence it records from the SSD
     * file and compare the bytes with the recorded CRC32C. One JSON line on stdout.
     *
     * <p>Exit codes: 0 every recorded residence is intact, 1 a residence failed its checksum or lies outside the file
     * (a restart drops it on its first read), or the manifest has a torn tail, 2 no readable manifest.
     */
    @Command(
        name = "verify",
        mixinStandardHelpOptions = true,
        description = {"Check a stopped Manager's SSD tier offline: replay its manifest, read every recorded block " +
            "and compare it with its CRC32C. Prints one JSON line.",
            "Exit 0 all intact, 1 corrupt blocks or a torn manifest tail, 2 no readable manifest."})
    static final class Verify implements Callable<Integer>
    {
        private static final int MAX_BLOCK_READ_BYTES = 1 << 30;

        @CommandLine.Spec
        private CommandLine.Model.CommandSpec spec;

        @Option(names = "--dir", required = true, description = "The Manager's --ssd-dir.")
        File dir;

        @Option(names = "--name", defaultValue = "default", description = "The Manager's --name (default: ${DEFAULT-VALUE}).")
        String name;

        public Integer call() throws IOException
        {
            final PrintWriter out = spec.commandLine().getOut();
            final PrintWriter err = spec.commandLine().getErr();
            final Path ssdFile = dir.toPath().resolve("orbitkv-" + name + ".ssd");
            final Path manifest = SsdManifest.manifestOf(ssdFile);
            if (!Files.exists(manifest))
            {
                err.println("orbitkv ssd verify: no manifest at " + manifest);
                return 2;
            }
            final SsdManifest.Layout layout = SsdManifest.headerLayout(manifest);
            if (null == layout)
            {
                err.println("orbitkv ssd verify: " + manifest + " is not an SSD manifest this version reads");
                return 2;
            }
            final long startNs = System.nanoTime();
            final SsdManifest.Replay replay = new SsdManifest.Replay(
                SsdManifest.Replay.expectedFor(Files.size(manifest)), layout.ssdBytes());
            final SsdManifest.ReadResult read = SsdManifest.read(manifest, layout, replay);
            if (SsdManifest.READ_OK != read.status())
            {
                err.println("orbitkv ssd verify: manifest " + manifest + " refused: " + read.reason());
                return 2;
            }
            long intact = 0;
            long corrupt = 0;
            long outside = 0;
            long bytes = 0;
            final long fileBytes = Files.exists(ssdFile) ? Files.size(ssdFile) : 0;
            final int[] slots = replay.liveSlotsOldestFirst();
            final int maxLength = Math.min(layout.maxBlockBytes(), MAX_BLOCK_READ_BYTES);
            final ByteBuffer buffer = ByteBuffer.allocateDirect(maxLength);
            final BlockChecksum checksum = new BlockChecksum(MemorySegment.ofBuffer(buffer));
            final CRC32C crc = new CRC32C();
            try (FileChannel channel = fileBytes > 0 ? FileChannel.open(ssdFile, StandardOpenOption.READ) : null)
            {
                for (final int slot : slots)
                {
                    final long offset = replay.offset(slot);
                    final int length = replay.length(slot);
                    if (null == channel || length < 1 || length > maxLength || offset < 0 || offset + length > fileBytes)
                    {
                        outside++;
                        continue;
                    }
                    buffer.clear().limit(length);
                    long at = offset;
                    while (buffer.hasRemaining() && channel.read(buffer, at) > 0)
                    {
                        at = offset + buffer.position();
                    }
                    crc.reset();
                    checksum.update(crc, 0, buffer.position());
                    if (buffer.position() == length && (int)crc.getValue() == replay.crc32c(slot))
                    {
                        intact++;
                        bytes += length;
                    }
                    else
                    {
                        corrupt++;
                    }
                }
            }
            outside += replay.invalidOffsets();
            final double ms = (System.nanoTime() - startNs) / 1e6;
            out.println(String.format(Locale.ROOT,
                "{\"command\":\"ssd verify\",\"manifest\":\"%s\",\"ssdBytes\":%d,\"maxBlockBytes\":%d," +
                "\"manifestBytes\":%d,\"records\":%d,\"tornRecords\":%d,\"tornBytes\":%d,\"residences\":%d," +
                "\"intact\":%d,\"corrupt\":%d,\"outsideFile\":%d,\"intactBytes\":%d,\"ms\":%.1f}",
                manifest, layout.ssdBytes(), layout.maxBlockBytes(), read.bytes(), read.records(), read.tornRecords(),
                read.tornBytes(), slots.length, intact, corrupt, outside, bytes, ms));
            return corrupt + outside + read.tornRecords() == 0 ? 0 : 1;
        }
    }
}
