package io.orbitkv.manager.store;

import io.orbitkv.index.BlockChecksum;
import io.orbitkv.index.BlockIndex;
import io.orbitkv.index.NamespaceTable;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.zip.CRC32C;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.collections.Long2LongHashMap;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The on-disk format of the SSD tier's manifest, the file {@code orbitkv-<name>.ssd.manifest} beside the tier's
 * file, and its reader.
 *
 * <p>A header of {@link #HEADER_BYTES} names the format ({@link #MAGIC}, {@link #LAYOUT_VERSION}), the layout of the
 * SSD file it describes (its size, the O_DIRECT granule, the allocator's page size and largest block, which fix
 * where extents can lie) and the version of the namespace records, and ends with its own CRC32C. Records follow,
 * appended in the order the storage duty cycle made them, each framed as {@code [u32 body length][u32 CRC32C of
 * the body][body]}, little endian:
 * <ul>
 *     <li>{@link #TYPE_NAMESPACE}: a file-local namespace id and the namespace's name (the namespace table's entry);
 *     records of this file name namespaces by these ids, never by the Manager's own ids, which a restart renumbers.
 *     </li>
 *     <li>{@link #TYPE_RESIDENT}: an SSD residence whose write completed: namespace, hash, extent offset in the SSD
 *     file, block length, the block's CRC32C sealed at publish, and its insertion sequence.</li>
 *     <li>{@link #TYPE_REMOVED}: the residence at an extent with that insertion sequence is gone.</li>
 * </ul>
 * A reader replays records in order until the first frame that is short, out of bounds or fails its checksum: that
 * and everything after it is a torn tail (a crash during an append), ignored and counted.
 */
public final class SsdManifest
{
    /** "OKVSSDMF", little endian. */
    public static final long MAGIC = 0x464D_4453_5356_4B4FL;
    /** Version of the header and record layout; a manifest of another version is refused. */
    public static final int LAYOUT_VERSION = 1;
    /** Version of the namespace records; a manifest of another version is refused. */
    public static final int NAMESPACE_TABLE_VERSION = 1;
    public static final int HEADER_BYTES = 64;
    public static final int FRAME_HEADER_BYTES = 8;
    /** Longest record body; a frame claiming more is torn. */
    public static final int MAX_BODY_BYTES = 512;
    /** Most namespaces one manifest names. */
    public static final int MAX_FILE_NAMESPACES = 1 << 16;

    public static final byte TYPE_NAMESPACE = 1;
    public static final byte TYPE_RESIDENT = 2;
    public static final byte TYPE_REMOVED = 3;

    static final int H_MAGIC = 0;
    static final int H_VERSION = 8;
    static final int H_HEADER_BYTES = 12;
    static final int H_SSD_BYTES = 16;
    static final int H_BLOCK_BYTES = 24;
    static final int H_PAGE_BYTES = 28;
    static final int H_MAX_BLOCK_BYTES = 32;
    static final int H_NAMESPACE_VERSION = 36;
    static final int H_CREATED_MS = 40;
    static final int H_CRC = 56;

    // Body of a RESIDENT record (and of the queue message it is made from).
    static final int RES_NAMESPACE = 1;
    static final int RES_HASH_LENGTH = 5;
    static final int RES_LENGTH = 6;
    static final int RES_CRC = 10;
    static final int RES_OFFSET = 14;
    static final int RES_SEQUENCE = 22;
    static final int RES_HASH = 30;
    static final int RES_MAX_BYTES = RES_HASH + BlockIndex.MAX_HASH_BYTES;
    // Body of a REMOVED record.
    static final int REM_OFFSET = 1;
    static final int REM_SEQUENCE = 9;
    static final int REM_BYTES = 17;
    // Body of a NAMESPACE record.
    static final int NS_ID = 1;
    static final int NS_LENGTH = 5;
    static final int NS_NAME = 7;
    static final int NS_MAX_BYTES = NS_NAME + NamespaceTable.MAX_NAMESPACE_BYTES;

    private static final int READ_CHUNK_BYTES = 4 << 20;

    private SsdManifest()
    {
    }

    /**
     * What fixes where extents lie in the SSD file: a manifest written for another layout cannot be read.
     *
     * @param ssdBytes      size of the SSD file.
     * @param blockBytes    O_DIRECT granule.
     * @param pageBytes     allocator page.
     * @param maxBlockBytes largest block (fixes the allocator's size classes).
     */
    public record Layout(long ssdBytes, int blockBytes, int pageBytes, int maxBlockBytes)
    {
    }

    /**
     * @param ssdFile the SSD tier's file.
     * @return its manifest.
     */
    public static Path manifestOf(final Path ssdFile)
    {
        return ssdFile.resolveSibling(ssdFile.getFileName() + ".manifest");
    }

    /**
     * @param manifest a manifest.
     * @return the file a checkpoint is written to before it replaces the manifest.
     */
    public static Path checkpointOf(final Path manifest)
    {
        return manifest.resolveSibling(manifest.getFileName() + ".checkpoint");
    }

    static void writeHeader(final MutableDirectBuffer buffer, final int offset, final Layout layout, final long createdMs)
    {
        buffer.setMemory(offset, HEADER_BYTES, (byte)0);
        buffer.putLong(offset + H_MAGIC, MAGIC, ByteOrder.LITTLE_ENDIAN);
        buffer.putInt(offset + H_VERSION, LAYOUT_VERSION, ByteOrder.LITTLE_ENDIAN);
        buffer.putInt(offset + H_HEADER_BYTES, HEADER_BYTES, ByteOrder.LITTLE_ENDIAN);
        buffer.putLong(offset + H_SSD_BYTES, layout.ssdBytes(), ByteOrder.LITTLE_ENDIAN);
        buffer.putInt(offset + H_BLOCK_BYTES, layout.blockBytes(), ByteOrder.LITTLE_ENDIAN);
        buffer.putInt(offset + H_PAGE_BYTES, layout.pageBytes(), ByteOrder.LITTLE_ENDIAN);
        buffer.putInt(offset + H_MAX_BLOCK_BYTES, layout.maxBlockBytes(), ByteOrder.LITTLE_ENDIAN);
        buffer.putInt(offset + H_NAMESPACE_VERSION, NAMESPACE_TABLE_VERSION, ByteOrder.LITTLE_ENDIAN);
        buffer.putLong(offset + H_CREATED_MS, createdMs, ByteOrder.LITTLE_ENDIAN);
        buffer.putInt(offset + H_CRC, crc32c(buffer, offset, H_CRC), ByteOrder.LITTLE_ENDIAN);
    }

    /**
     * @return null when the header is a manifest of {@code expected}'s layout, else why it is refused.
     */
    static String checkHeader(final DirectBuffer buffer, final int offset, final int available, final Layout expected)
    {
        if (available < HEADER_BYTES)
        {
            return "shorter (" + available + " bytes) than a manifest header";
        }
        if (buffer.getLong(offset + H_MAGIC, ByteOrder.LITTLE_ENDIAN) != MAGIC)
        {
            return "not an OrbitKV SSD manifest (magic)";
        }
        if (buffer.getInt(offset + H_CRC, ByteOrder.LITTLE_ENDIAN) != crc32c(buffer, offset, H_CRC))
        {
            return "header checksum mismatch";
        }
        final int version = buffer.getInt(offset + H_VERSION, ByteOrder.LITTLE_ENDIAN);
        if (version != LAYOUT_VERSION || buffer.getInt(offset + H_HEADER_BYTES, ByteOrder.LITTLE_ENDIAN) != HEADER_BYTES)
        {
            return "layout version " + version + ", this Manager reads version " + LAYOUT_VERSION;
        }
        final int nsVersion = buffer.getInt(offset + H_NAMESPACE_VERSION, ByteOrder.LITTLE_ENDIAN);
        if (nsVersion != NAMESPACE_TABLE_VERSION)
        {
            return "namespace table version " + nsVersion + ", this Manager reads version " + NAMESPACE_TABLE_VERSION;
        }
        final long ssdBytes = buffer.getLong(offset + H_SSD_BYTES, ByteOrder.LITTLE_ENDIAN);
        if (ssdBytes != expected.ssdBytes())
        {
            return "written for --ssd-bytes " + ssdBytes + ", this Manager has " + expected.ssdBytes();
        }
        final int blockBytes = buffer.getInt(offset + H_BLOCK_BYTES, ByteOrder.LITTLE_ENDIAN);
        final int pageBytes = buffer.getInt(offset + H_PAGE_BYTES, ByteOrder.LITTLE_ENDIAN);
        if (blockBytes != expected.blockBytes() || pageBytes != expected.pageBytes())
        {
            return "written for " + blockBytes + "-byte blocks in " + pageBytes + "-byte pages, this Manager uses " +
                expected.blockBytes() + " in " + expected.pageBytes();
        }
        final int maxBlockBytes = buffer.getInt(offset + H_MAX_BLOCK_BYTES, ByteOrder.LITTLE_ENDIAN);
        if (maxBlockBytes != expected.maxBlockBytes())
        {
            return "written for --max-block-bytes " + maxBlockBytes + ", this Manager has " + expected.maxBlockBytes();
        }
        return null;
    }

    /**
     * The layout a manifest's header names, for tools that read a tier offline.
     *
     * @param file a manifest.
     * @return its layout, or null when the file has no valid header of this version.
     * @throws IOException when the file cannot be read.
     */
    public static Layout headerLayout(final Path file) throws IOException
    {
        final byte[] bytes = new byte[HEADER_BYTES];
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ))
        {
            final ByteBuffer buffer = ByteBuffer.wrap(bytes);
            while (buffer.hasRemaining() && channel.read(buffer) >= 0)
            {
                // Reads the header.
            }
            if (buffer.hasRemaining())
            {
                return null;
            }
        }
        final UnsafeBuffer view = new UnsafeBuffer(bytes);
        final Layout named = new Layout(
            view.getLong(H_SSD_BYTES, ByteOrder.LITTLE_ENDIAN),
            view.getInt(H_BLOCK_BYTES, ByteOrder.LITTLE_ENDIAN),
            view.getInt(H_PAGE_BYTES, ByteOrder.LITTLE_ENDIAN),
            view.getInt(H_MAX_BLOCK_BYTES, ByteOrder.LITTLE_ENDIAN));
        return null == checkHeader(view, 0, HEADER_BYTES, named) ? named : null;
    }

    static int crc32c(final DirectBuffer buffer, final int offset, final int length)
    {
        final byte[] bytes = new byte[length];
        buffer.getBytes(offset, bytes);
        final CRC32C crc = new CRC32C();
        crc.update(bytes);
        return (int)crc.getValue();
    }

    /**
     * Writes a manifest record by record, for tools and benchmarks that need one of a given size (the Manager's own
     * appends go through its writer thread). Not synced until {@link #close()}.
     */
    public static final class Appender implements AutoCloseable
    {
        private final FileChannel channel;
        private final ByteBuffer buffer = ByteBuffer.allocateDirect(READ_CHUNK_BYTES).order(ByteOrder.LITTLE_ENDIAN);
        private final UnsafeBuffer view = new UnsafeBuffer(buffer);
        private final BlockChecksum checksum = new BlockChecksum(MemorySegment.ofBuffer(buffer));
        private final CRC32C crc = new CRC32C();
        private long size;
        private int position;

        /**
         * @param file   created or truncated.
         * @param layout written into the header.
         * @throws IOException when the file cannot be created.
         */
        public Appender(final Path file, final Layout layout) throws IOException
        {
            channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                StandardOpenOption.WRITE);
            writeHeader(view, 0, layout, System.currentTimeMillis());
            position = HEADER_BYTES;
        }

        public void namespace(final int fileNamespaceId, final byte[] name) throws IOException
        {
            final int body = reserve();
            view.putByte(body, TYPE_NAMESPACE);
            view.putInt(body + NS_ID, fileNamespaceId, ByteOrder.LITTLE_ENDIAN);
            view.putShort(body + NS_LENGTH, (short)name.length, ByteOrder.LITTLE_ENDIAN);
            view.putBytes(body + NS_NAME, name);
            seal(body, NS_NAME + name.length);
        }

        public void resident(
            final int fileNamespaceId,
            final DirectBuffer hash,
            final int hashOffset,
            final int hashLength,
            final long fileOffset,
            final int length,
            final int crc32c,
            final long insertionSequence) throws IOException
        {
            final int body = reserve();
            view.putByte(body, TYPE_RESIDENT);
            view.putInt(body + RES_NAMESPACE, fileNamespaceId, ByteOrder.LITTLE_ENDIAN);
            view.putByte(body + RES_HASH_LENGTH, (byte)hashLength);
            view.putInt(body + RES_LENGTH, length, ByteOrder.LITTLE_ENDIAN);
            view.putInt(body + RES_CRC, crc32c, ByteOrder.LITTLE_ENDIAN);
            view.putLong(body + RES_OFFSET, fileOffset, ByteOrder.LITTLE_ENDIAN);
            view.putLong(body + RES_SEQUENCE, insertionSequence, ByteOrder.LITTLE_ENDIAN);
            view.putBytes(body + RES_HASH, hash, hashOffset, hashLength);
            seal(body, RES_HASH + hashLength);
        }

        public void removed(final long fileOffset, final long insertionSequence) throws IOException
        {
            final int body = reserve();
            view.putByte(body, TYPE_REMOVED);
            view.putLong(body + REM_OFFSET, fileOffset, ByteOrder.LITTLE_ENDIAN);
            view.putLong(body + REM_SEQUENCE, insertionSequence, ByteOrder.LITTLE_ENDIAN);
            seal(body, REM_BYTES);
        }

        private int reserve() throws IOException
        {
            if (position + FRAME_HEADER_BYTES + MAX_BODY_BYTES > buffer.capacity())
            {
                flush();
            }
            return position + FRAME_HEADER_BYTES;
        }

        private void seal(final int body, final int length)
        {
            crc.reset();
            checksum.update(crc, body, length);
            view.putInt(body - FRAME_HEADER_BYTES, length, ByteOrder.LITTLE_ENDIAN);
            view.putInt(body - 4, (int)crc.getValue(), ByteOrder.LITTLE_ENDIAN);
            position = body + length;
        }

        private void flush() throws IOException
        {
            buffer.clear().limit(position);
            while (buffer.hasRemaining())
            {
                size += channel.write(buffer, size);
            }
            position = 0;
        }

        /**
         * @return bytes written so far, buffered ones included.
         */
        public long size()
        {
            return size + position;
        }

        public void close() throws IOException
        {
            flush();
            channel.force(false);
            channel.close();
        }
    }

    /**
     * Receives the records of a manifest in file order.
     */
    public interface Visitor
    {
        void onNamespace(int fileNamespaceId, DirectBuffer name, int offset, int length);

        void onResident(
            int fileNamespaceId,
            DirectBuffer hash,
            int hashOffset,
            int hashLength,
            long fileOffset,
            int length,
            int crc32c,
            long insertionSequence);

        void onRemoved(long fileOffset, long insertionSequence);
    }

    /**
     * What reading a manifest found.
     *
     * @param status      {@link #READ_OK}, {@link #READ_MISSING} or {@link #READ_REFUSED}.
     * @param reason      why it was refused, or null.
     * @param records     valid records replayed.
     * @param bytes       bytes of the file read.
     * @param validEnd    end of the last valid record: appends continue there.
     * @param tornRecords 1 when a torn or corrupt frame ended the replay before the end of the file, else 0.
     * @param tornBytes   bytes from it to the end of the file, ignored.
     */
    public record ReadResult(int status, String reason, long records, long bytes, long validEnd, long tornRecords,
        long tornBytes)
    {
    }

    public static final int READ_OK = 0;
    public static final int READ_MISSING = 1;
    public static final int READ_REFUSED = 2;

    /**
     * Replay a manifest: check its header against {@code expected}, then hand each valid record to the visitor until
     * the end of the file or the first torn frame.
     *
     * @param file     the manifest.
     * @param expected the layout the caller's SSD file has.
     * @param visitor  receives records.
     * @return what was found.
     * @throws IOException when the file cannot be read.
     */
    public static ReadResult read(final Path file, final Layout expected, final Visitor visitor) throws IOException
    {
        if (!Files.exists(file))
        {
            return new ReadResult(READ_MISSING, "no manifest", 0, 0, 0, 0, 0);
        }
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ))
        {
            final long size = channel.size();
            final ByteBuffer chunk = ByteBuffer.allocateDirect(READ_CHUNK_BYTES).order(ByteOrder.LITTLE_ENDIAN);
            final UnsafeBuffer view = new UnsafeBuffer(chunk);
            final BlockChecksum checksum = new BlockChecksum(MemorySegment.ofBuffer(chunk));
            final CRC32C crc = new CRC32C();
            readFully(channel, chunk, 0);
            chunk.flip();
            final String refusal = checkHeader(view, 0, chunk.limit(), expected);
            if (null != refusal)
            {
                return new ReadResult(READ_REFUSED, refusal, 0, chunk.limit(), 0, 0, 0);
            }
            long records = 0;
            long chunkStart = 0;
            int position = HEADER_BYTES;
            boolean torn = false;
            while (true)
            {
                final int available = chunk.limit() - position;
                if (available < FRAME_HEADER_BYTES || available < FRAME_HEADER_BYTES + bodyLength(view, position))
                {
                    // Refill: keep the partial frame, read on after it.
                    final long nextStart = chunkStart + position;
                    if (nextStart + available >= size)
                    {
                        torn = available > 0;
                        break;
                    }
                    chunk.position(position);
                    chunk.compact();
                    chunkStart = nextStart;
                    position = 0;
                    readFully(channel, chunk, chunkStart + chunk.position());
                    chunk.flip();
                    if (chunk.limit() == available)
                    {
                        torn = available > 0;
                        break;
                    }
                    continue;
                }
                final int length = bodyLength(view, position);
                if (length < 1 || length > MAX_BODY_BYTES)
                {
                    torn = true;
                    break;
                }
                final int body = position + FRAME_HEADER_BYTES;
                crc.reset();
                checksum.update(crc, body, length);
                if ((int)crc.getValue() != view.getInt(position + 4, ByteOrder.LITTLE_ENDIAN) ||
                    !dispatch(view, body, length, visitor))
                {
                    torn = true;
                    break;
                }
                records++;
                position = body + length;
            }
            final long validEnd = chunkStart + position;
            return new ReadResult(READ_OK, null, records, size, validEnd, torn ? 1 : 0, size - validEnd);
        }
    }

    private static int bodyLength(final DirectBuffer view, final int position)
    {
        final int length = view.getInt(position, ByteOrder.LITTLE_ENDIAN);
        return length < 0 || length > MAX_BODY_BYTES ? 0 : length;
    }

    private static void readFully(final FileChannel channel, final ByteBuffer buffer, final long position)
        throws IOException
    {
        long at = position;
        while (buffer.hasRemaining())
        {
            final int read = channel.read(buffer, at);
            if (read < 0)
            {
                return;
            }
            at += read;
        }
    }

    /**
     * @return false when the body is not a well-formed record (treated as torn).
     */
    private static boolean dispatch(final DirectBuffer view, final int body, final int length, final Visitor visitor)
    {
        final byte type = view.getByte(body);
        switch (type)
        {
            case TYPE_NAMESPACE ->
            {
                if (length < NS_NAME)
                {
                    return false;
                }
                final int nameLength = view.getShort(body + NS_LENGTH, ByteOrder.LITTLE_ENDIAN) & 0xFFFF;
                if (length != NS_NAME + nameLength || nameLength < 1 || nameLength > NamespaceTable.MAX_NAMESPACE_BYTES)
                {
                    return false;
                }
                visitor.onNamespace(view.getInt(body + NS_ID, ByteOrder.LITTLE_ENDIAN), view, body + NS_NAME, nameLength);
                return true;
            }
            case TYPE_RESIDENT ->
            {
                if (length < RES_HASH)
                {
                    return false;
                }
                final int hashLength = view.getByte(body + RES_HASH_LENGTH) & 0xFF;
                if (length != RES_HASH + hashLength || hashLength < 1 || hashLength > BlockIndex.MAX_HASH_BYTES)
                {
                    return false;
                }
                visitor.onResident(
                    view.getInt(body + RES_NAMESPACE, ByteOrder.LITTLE_ENDIAN),
                    view,
                    body + RES_HASH,
                    hashLength,
                    view.getLong(body + RES_OFFSET, ByteOrder.LITTLE_ENDIAN),
                    view.getInt(body + RES_LENGTH, ByteOrder.LITTLE_ENDIAN),
                    view.getInt(body + RES_CRC, ByteOrder.LITTLE_ENDIAN),
                    view.getLong(body + RES_SEQUENCE, ByteOrder.LITTLE_ENDIAN));
                return true;
            }
            case TYPE_REMOVED ->
            {
                if (length != REM_BYTES)
                {
                    return false;
                }
                visitor.onRemoved(
                    view.getLong(body + REM_OFFSET, ByteOrder.LITTLE_ENDIAN),
                    view.getLong(body + REM_SEQUENCE, ByteOrder.LITTLE_ENDIAN));
                return true;
            }
            default ->
            {
                return false;
            }
        }
    }

    /**
     * The live residences a manifest describes once replayed: a residence recorded at an extent replaces whatever
     * was recorded there before, a removal drops the residence at its extent if it carries the removal's sequence.
     * Also the namespace names by file-local id and the highest insertion sequence seen.
     */
    public static final class Replay implements Visitor
    {
        /** Most residences a replay sizes its tables for up front; more grow them. */
        public static final int MAX_EXPECTED = 1 << 24;

        /** Extents of a tier up to this many 4 KiB granules are mapped by a plain array, larger ones by a hash map. */
        public static final long DIRECT_MAP_MAX_GRANULES = 1L << 24;
        private static final int GRANULE_SHIFT = 12;

        private final Long2LongHashMap slotByOffset;
        private final int[] slotByGranule;
        private int liveCount;
        private long invalidOffsets;
        private byte[][] names = new byte[16][];
        private int namespaceCount;
        private int[] namespace;
        private int[] hashLength;
        private byte[] hash;
        private long[] offset;
        private int[] length;
        private int[] crc;
        private long[] sequence;
        private boolean[] live;
        private int[] freeSlots = new int[1024];
        private int freeCount;
        private int slotCount;
        private long maxSequence;
        private long badNamespaces;

        /**
         * A replay sized for a small manifest.
         */
        public Replay()
        {
            this(1024);
        }

        /**
         * @param expected residences expected (e.g. the manifest's size over a record's), so that replaying needs no
         *                 rehash; at most {@link #MAX_EXPECTED} is used.
         */
        public Replay(final long expected)
        {
            this(expected, 0);
        }

        /**
         * @param expected residences expected, as for {@link #Replay(long)}.
         * @param ssdBytes size of the SSD file whose extents the manifest names: up to
         *                 {@link #DIRECT_MAP_MAX_GRANULES} 4 KiB granules, extents are mapped by a plain array (a record
         *                 naming an offset that is not a granule inside the file is then ignored and counted,
         *                 {@link #invalidOffsets()}); 0 for a hash map.
         */
        public Replay(final long expected, final long ssdBytes)
        {
            final int capacity = (int)Math.max(1024, Math.min(expected, MAX_EXPECTED));
            final long granules = ssdBytes >>> GRANULE_SHIFT;
            if (granules > 0 && granules <= DIRECT_MAP_MAX_GRANULES)
            {
                slotByGranule = new int[(int)granules];
                java.util.Arrays.fill(slotByGranule, -1);
                slotByOffset = null;
            }
            else
            {
                slotByGranule = null;
                slotByOffset = new Long2LongHashMap(capacity * 2, 0.65f, -1);
            }
            namespace = new int[capacity];
            hashLength = new int[capacity];
            hash = new byte[capacity * BlockIndex.MAX_HASH_BYTES];
            offset = new long[capacity];
            length = new int[capacity];
            crc = new int[capacity];
            sequence = new long[capacity];
            live = new boolean[capacity];
        }

        /**
         * @param manifestBytes size of a manifest.
         * @return residences it can hold at most (every record a residence with a 32-byte hash).
         */
        public static long expectedFor(final long manifestBytes)
        {
            return manifestBytes / (FRAME_HEADER_BYTES + RES_HASH + 32);
        }

        public void onNamespace(final int fileNamespaceId, final DirectBuffer name, final int nameOffset, final int nameLength)
        {
            if (fileNamespaceId < 0 || fileNamespaceId >= MAX_FILE_NAMESPACES)
            {
                badNamespaces++;
                return;
            }
            if (fileNamespaceId >= names.length)
            {
                names = java.util.Arrays.copyOf(names, Math.max(names.length * 2, fileNamespaceId + 1));
            }
            final byte[] bytes = new byte[nameLength];
            name.getBytes(nameOffset, bytes);
            names[fileNamespaceId] = bytes;
            namespaceCount = Math.max(namespaceCount, fileNamespaceId + 1);
        }

        public void onResident(
            final int fileNamespaceId,
            final DirectBuffer hashBuffer,
            final int hashOffset,
            final int hashBytes,
            final long fileOffset,
            final int blockLength,
            final int crc32c,
            final long insertionSequence)
        {
            maxSequence = Math.max(maxSequence, insertionSequence);
            int slot;
            if (null != slotByGranule)
            {
                final int granule = granuleOf(fileOffset);
                if (granule < 0)
                {
                    invalidOffsets++;
                    return;
                }
                slot = slotByGranule[granule];
                if (slot < 0)
                {
                    slot = takeSlot();
                    slotByGranule[granule] = slot;
                    liveCount++;
                }
            }
            else
            {
                slot = takeSlot();
                final int earlier = (int)slotByOffset.put(fileOffset, slot);
                if (earlier >= 0)
                {
                    // A residence replaces an earlier one at its extent: keep the earlier slot.
                    slotByOffset.put(fileOffset, earlier);
                    freeSlot(slot);
                    slot = earlier;
                }
                else
                {
                    liveCount++;
                }
            }
            namespace[slot] = fileNamespaceId;
            hashLength[slot] = hashBytes;
            hashBuffer.getBytes(hashOffset, hash, slot * BlockIndex.MAX_HASH_BYTES, hashBytes);
            offset[slot] = fileOffset;
            length[slot] = blockLength;
            crc[slot] = crc32c;
            sequence[slot] = insertionSequence;
        }

        public void onRemoved(final long fileOffset, final long insertionSequence)
        {
            maxSequence = Math.max(maxSequence, insertionSequence);
            if (null != slotByGranule)
            {
                final int granule = granuleOf(fileOffset);
                final int slot = granule < 0 ? -1 : slotByGranule[granule];
                if (slot >= 0 && sequence[slot] == insertionSequence)
                {
                    slotByGranule[granule] = -1;
                    freeSlot(slot);
                    liveCount--;
                }
                return;
            }
            final int slot = (int)slotByOffset.get(fileOffset);
            if (slot >= 0 && sequence[slot] == insertionSequence)
            {
                slotByOffset.remove(fileOffset);
                freeSlot(slot);
                liveCount--;
            }
        }

        private int granuleOf(final long fileOffset)
        {
            final long granule = fileOffset >>> GRANULE_SHIFT;
            return fileOffset < 0 || (fileOffset & ((1 << GRANULE_SHIFT) - 1)) != 0 || granule >= slotByGranule.length ?
                -1 : (int)granule;
        }

        /**
         * @return records ignored because their extent is not a 4 KiB granule of the file (array mapping only).
         */
        public long invalidOffsets()
        {
            return invalidOffsets;
        }

        private void freeSlot(final int slot)
        {
            live[slot] = false;
            if (freeCount == freeSlots.length)
            {
                freeSlots = java.util.Arrays.copyOf(freeSlots, freeCount * 2);
            }
            freeSlots[freeCount++] = slot;
        }

        private int takeSlot()
        {
            if (freeCount > 0)
            {
                final int slot = freeSlots[--freeCount];
                live[slot] = true;
                return slot;
            }
            if (slotCount == offset.length)
            {
                final int capacity = slotCount * 2;
                namespace = java.util.Arrays.copyOf(namespace, capacity);
                hashLength = java.util.Arrays.copyOf(hashLength, capacity);
                hash = java.util.Arrays.copyOf(hash, capacity * BlockIndex.MAX_HASH_BYTES);
                offset = java.util.Arrays.copyOf(offset, capacity);
                length = java.util.Arrays.copyOf(length, capacity);
                crc = java.util.Arrays.copyOf(crc, capacity);
                sequence = java.util.Arrays.copyOf(sequence, capacity);
                live = java.util.Arrays.copyOf(live, capacity);
            }
            live[slotCount] = true;
            return slotCount++;
        }

        /**
         * @return live residences, oldest insertion first (so that restoring them in this order rebuilds the LRU
         * order), as slot numbers for the accessors below.
         */
        public int[] liveSlotsOldestFirst()
        {
            // Slots in the order they were first taken: the manifest's order, which is insertion order unless a
            // checkpoint's snapshot or a reused slot intervened. Sorted only when it is not.
            final int[] slots = new int[liveCount];
            int count = 0;
            boolean ordered = true;
            long previous = Long.MIN_VALUE;
            for (int slot = 0; slot < slotCount; slot++)
            {
                if (live[slot])
                {
                    slots[count++] = slot;
                    ordered &= sequence[slot] > previous;
                    previous = sequence[slot];
                }
            }
            if (!ordered)
            {
                sortBySequence(slots);
            }
            return slots;
        }

        private void sortBySequence(final int[] slots)
        {
            final int live = slots.length;
            if (maxSequence < (1L << 39) && slotCount <= (1 << 24))
            {
                // Live sequences are distinct: sorting (sequence, slot) packed in one long sorts by sequence.
                final long[] packed = new long[live];
                for (int k = 0; k < live; k++)
                {
                    packed[k] = (sequence[slots[k]] << 24) | slots[k];
                }
                java.util.Arrays.sort(packed);
                for (int k = 0; k < live; k++)
                {
                    slots[k] = (int)(packed[k] & ((1 << 24) - 1));
                }
                return;
            }
            final Integer[] boxed = new Integer[live];
            for (int k = 0; k < live; k++)
            {
                boxed[k] = slots[k];
            }
            java.util.Arrays.sort(boxed, (a, b) -> Long.compare(sequence[a], sequence[b]));
            for (int k = 0; k < live; k++)
            {
                slots[k] = boxed[k];
            }
        }

        public int liveCount()
        {
            return liveCount;
        }

        public long maxSequence()
        {
            return maxSequence;
        }

        public int namespaceCount()
        {
            return namespaceCount;
        }

        /**
         * @return the name of a file-local namespace id, or null when the manifest never named it.
         */
        public byte[] namespaceName(final int fileNamespaceId)
        {
            return fileNamespaceId >= 0 && fileNamespaceId < names.length ? names[fileNamespaceId] : null;
        }

        public int namespace(final int slot)
        {
            return namespace[slot];
        }

        public int hashLength(final int slot)
        {
            return hashLength[slot];
        }

        /**
         * @return every slot's hash bytes, slot {@code s} at {@link #hashOffset(int) hashOffset(s)}; read only.
         */
        public byte[] hashes()
        {
            return hash;
        }

        public int hashOffset(final int slot)
        {
            return slot * BlockIndex.MAX_HASH_BYTES;
        }

        public void hash(final int slot, final MutableDirectBuffer dst, final int dstOffset)
        {
            dst.putBytes(dstOffset, hash, slot * BlockIndex.MAX_HASH_BYTES, hashLength[slot]);
        }

        public long offset(final int slot)
        {
            return offset[slot];
        }

        public int length(final int slot)
        {
            return length[slot];
        }

        public int crc32c(final int slot)
        {
            return crc[slot];
        }

        public long sequence(final int slot)
        {
            return sequence[slot];
        }
    }
}
