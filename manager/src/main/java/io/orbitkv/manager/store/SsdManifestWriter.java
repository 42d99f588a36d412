package io.orbitkv.manager.store;

import io.orbitkv.index.BlockChecksum;
import io.orbitkv.manager.Configuration;
import io.orbitkv.manager.status.SystemCounters;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.zip.CRC32C;
import org.agrona.BufferUtil;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.MessageHandler;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * The thread that appends the SSD manifest: it takes the records the storage duty cycle queued
 * ({@link SsdManifestLog}), frames and checksums them, writes them to the manifest and makes them durable by the
 * policy of {@code --ssd-manifest-sync}: first an fdatasync of the SSD file (the completed O_DIRECT writes the
 * records describe, and the extent conversions of a preallocated file), then of the manifest. So the agent thread
 * never waits for a write or a sync; it only copies a record of at most a hundred bytes into a queue.
 *
 * <p>The syncs run on a second thread ({@code orbitkv-ssd-manifest-sync}): while one is outstanding, the writer keeps
 * writing what the agent queues (at least every {@link #DRAIN_INTERVAL_NS}), so a record reaches the file (and so
 * survives a kill of the process, if not a power loss) within about a millisecond of being queued however long the
 * device takes to sync. The next sync starts when the one outstanding is done and the policy calls for it; records
 * written meanwhile wait for it.
 *
 * <p>Checkpoints: between a {@link #MSG_CHECKPOINT_BEGIN} and a {@link #MSG_CHECKPOINT_END} the agent queues a
 * snapshot of every live residence ({@link #MSG_SNAPSHOT}) among its ordinary records. The writer puts the snapshot
 * and every ordinary record in a new file and keeps appending ordinary records to the manifest too; at the end it
 * syncs the new file and renames it over the manifest. Replaying the new file gives the live set, because every
 * change after a residence was snapshotted follows its snapshot record in the file. A crash before the rename
 * leaves the old manifest, complete; the stray file is removed at the next start.
 *
 * <p>Errors: a write the file system refuses (a full disk) loses the records of that write (counted); the manifest
 * is cut back to its last whole record and the agent is asked for a checkpoint ({@link #resyncWanted()}), which
 * rewrites the manifest from the live residences once the disk takes it.
 */
final class SsdManifestWriter implements Runnable, AutoCloseable
{
    static final int MSG_NAMESPACE = 1;
    static final int MSG_RESIDENT = 2;
    static final int MSG_REMOVED = 3;
    static final int MSG_CHECKPOINT_BEGIN = 4;
    static final int MSG_SNAPSHOT = 5;
    static final int MSG_CHECKPOINT_END = 6;

    static final int STATE_RUNNING = 0;
    static final int STATE_TIMED = 1;
    static final int STATE_IDLE = 2;

    /** An idle writer (nothing queued, nothing unsynced) parks this long at most between looks at its queue. */
    private static final long IDLE_PARK_NS = TimeUnit.SECONDS.toNanos(1);
    /** While records wait for their sync, the queue is written out at least this often. */
    static final long DRAIN_INTERVAL_NS = TimeUnit.MILLISECONDS.toNanos(1);
    /** Bytes of framed records collected before one write system call. */
    private static final int WRITE_BUFFER_BYTES = 1 << 20;
    private static final int MESSAGES_PER_READ = 4096;
    private static final long CLOSE_TIMEOUT_MS = 30_000;

    private final OneToOneRingBuffer queue;
    private final Path manifest;
    private final Path checkpointFile;
    private final Path ssdFile;
    private final SsdManifest.Layout layout;
    private final Configuration.SsdManifestSync policy;
    private final PrintStream log;
    private final byte[][] names;
    private final Target current;
    private final Target next;
    private final CRC32C crc = new CRC32C();
    private final UnsafeBuffer frameView = new UnsafeBuffer(0, 0);
    private final MessageHandler handler = this::onMessage;
    private FileChannel dataChannel;
    private boolean checkpointing;
    private long unsyncedRecords;
    private long firstUnsyncedNs;
    /** Syncs asked of the sync thread; written by the writer only. */
    private volatile long syncsRequested;
    /** Syncs the sync thread finished; written by it only. */
    private volatile long syncsDone;
    /** The manifest channel the requested sync covers (the writer swaps channels only with no sync outstanding). */
    private volatile FileChannel syncChannel;
    private volatile boolean syncerRunning = true;
    private Thread syncer;

    private final AtomicCounter records;
    private final AtomicCounter bytes;
    private final AtomicCounter syncs;
    private final AtomicCounter writeErrors;
    private final AtomicCounter recordsLost;
    private final AtomicCounter checkpoints;
    private final AtomicCounter fileBytes;
    private final AtomicCounter syncMaxUs;

    private volatile int state = STATE_RUNNING;
    private volatile boolean running = true;
    private volatile boolean resyncWanted;
    private volatile long manifestBytes;
    private Thread thread;

    /**
     * One file being appended: its channel, a buffer of framed records not yet written, and the file's own namespace
     * ids.
     */
    private static final class Target
    {
        final ByteBuffer buffer = ByteBuffer.allocateDirect(WRITE_BUFFER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
        final UnsafeBuffer view = new UnsafeBuffer(buffer);
        final BlockChecksum checksum = new BlockChecksum(MemorySegment.ofBuffer(buffer));
        final int[] fileNamespaceOf;
        FileChannel channel;
        Path path;
        long size;
        int position;
        long pendingRecords;
        int nextFileNamespace;

        Target(final int maxNamespaces)
        {
            fileNamespaceOf = new int[maxNamespaces];
            Arrays.fill(fileNamespaceOf, -1);
        }
    }

    /**
     * @param manifest          the manifest, which {@link #openAppend} or {@link #openFresh} opens.
     * @param ssdFile           the SSD tier's file, synced before the manifest.
     * @param layout            the layout written into a fresh manifest's header.
     * @param policy            when to sync.
     * @param maxNamespaces     bound on the Manager's namespace ids.
     * @param counters          the manifest counters.
     * @param log               start-up and error messages.
     */
    SsdManifestWriter(
        final Path manifest,
        final Path ssdFile,
        final SsdManifest.Layout layout,
        final Configuration.SsdManifestSync policy,
        final int maxNamespaces,
        final SystemCounters counters,
        final PrintStream log)
    {
        this.manifest = manifest;
        this.checkpointFile = SsdManifest.checkpointOf(manifest);
        this.ssdFile = ssdFile;
        this.layout = layout;
        this.policy = policy;
        this.log = log;
        this.names = new byte[maxNamespaces][];
        this.current = new Target(maxNamespaces);
        this.next = new Target(maxNamespaces);
        this.queue = new OneToOneRingBuffer(new UnsafeBuffer(BufferUtil.allocateDirectAligned(
            Configuration.SSD_MANIFEST_QUEUE_BYTES + RingBufferDescriptor.TRAILER_LENGTH, 64)));
        records = counters.get(StoreCounter.SSD_MANIFEST_RECORDS);
        bytes = counters.get(StoreCounter.SSD_MANIFEST_BYTES);
        syncs = counters.get(StoreCounter.SSD_MANIFEST_SYNCS);
        writeErrors = counters.get(StoreCounter.SSD_MANIFEST_WRITE_ERRORS);
        recordsLost = counters.get(StoreCounter.SSD_MANIFEST_RECORDS_LOST);
        checkpoints = counters.get(StoreCounter.SSD_MANIFEST_CHECKPOINTS);
        fileBytes = counters.get(StoreCounter.SSD_MANIFEST_FILE_BYTES);
        syncMaxUs = counters.get(StoreCounter.SSD_MANIFEST_SYNC_MAX_US);
    }

    /**
     * Continue the manifest a recovery read: cut it back to its last valid record and append after it.
     *
     * @param validEnd        end of the last valid record.
     * @param fileNamespaceOf the file's namespace id of each Manager namespace id recovered, or -1.
     * @param nextFileNamespace the first file namespace id not in the file.
     */
    void openAppend(final long validEnd, final int[] fileNamespaceOf, final int nextFileNamespace) throws IOException
    {
        deleteStrayCheckpoint();
        current.channel = FileChannel.open(manifest, StandardOpenOption.READ, StandardOpenOption.WRITE);
        current.path = manifest;
        current.channel.truncate(validEnd);
        current.channel.force(false);
        current.size = validEnd;
        System.arraycopy(fileNamespaceOf, 0, current.fileNamespaceOf, 0,
            Math.min(fileNamespaceOf.length, current.fileNamespaceOf.length));
        current.nextFileNamespace = nextFileNamespace;
        openData();
    }

    /**
     * Start a new, empty manifest (replacing any other) and make its header durable.
     */
    void openFresh() throws IOException
    {
        deleteStrayCheckpoint();
        current.channel = FileChannel.open(manifest, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
            StandardOpenOption.READ, StandardOpenOption.WRITE);
        current.path = manifest;
        current.size = 0;
        SsdManifest.writeHeader(current.view, 0, layout, System.currentTimeMillis());
        current.position = SsdManifest.HEADER_BYTES;
        flush(current);
        current.channel.force(false);
        syncDirectory();
        openData();
    }

    private void openData() throws IOException
    {
        dataChannel = FileChannel.open(ssdFile, StandardOpenOption.WRITE);
        manifestBytes = current.size;
        fileBytes.setRelease(current.size);
    }

    private void deleteStrayCheckpoint() throws IOException
    {
        Files.deleteIfExists(checkpointFile);
    }

    void start()
    {
        thread = new Thread(this, "orbitkv-ssd-manifest");
        thread.setDaemon(true);
        syncer = new Thread(this::runSyncs, "orbitkv-ssd-manifest-sync");
        syncer.setDaemon(true);
        syncer.start();
        thread.start();
    }

    private void runSyncs()
    {
        long done = syncsDone;
        while (syncerRunning)
        {
            final long requested = syncsRequested;
            if (requested == done)
            {
                LockSupport.parkNanos(IDLE_PARK_NS);
                continue;
            }
            syncFiles(syncChannel);
            done = requested;
            syncsDone = done;
            LockSupport.unpark(thread);
        }
    }

    OneToOneRingBuffer queue()
    {
        return queue;
    }

    Configuration.SsdManifestSync policy()
    {
        return policy;
    }

    /**
     * Called by the agent after it queued records: wake the writer when it waits for no reason any more.
     *
     * @param queuedSinceSignal records queued since the last call that returned true.
     * @return true when the writer was woken.
     */
    boolean signal(final int queuedSinceSignal)
    {
        // Pairs with the writer's store of its state before it looks at the queue a last time.
        VarHandle.fullFence();
        final int s = state;
        if (STATE_IDLE == s ||
            (STATE_TIMED == s && (queuedSinceSignal >= Configuration.SSD_MANIFEST_SYNC_BATCH_RECORDS ||
            Configuration.SsdManifestSync.ALWAYS == policy)))
        {
            LockSupport.unpark(thread);
            return true;
        }
        return false;
    }

    /**
     * @return the manifest's size, for the agent's checkpoint decision.
     */
    long manifestBytes()
    {
        return manifestBytes;
    }

    /**
     * @return true once (then false until the next failure) when records were lost and only a checkpoint repairs
     * the manifest.
     */
    boolean takeResyncWanted()
    {
        if (resyncWanted)
        {
            resyncWanted = false;
            return true;
        }
        return false;
    }

    public void run()
    {
        try
        {
            while (running)
            {
                final int read = queue.read(handler, MESSAGES_PER_READ);
                if (read == MESSAGES_PER_READ)
                {
                    continue;
                }
                flushAll();
                maybeSync(System.nanoTime());
                if (0 == read)
                {
                    park();
                }
            }
            while (queue.read(handler, MESSAGES_PER_READ) > 0)
            {
                // Drain what the agent queued before it stopped.
            }
            flushAll();
            awaitSync();
            if (unsyncedRecords > 0)
            {
                // A clean stop leaves a durable manifest whatever the policy.
                syncFiles(current.channel);
                unsyncedRecords = 0;
            }
        }
        catch (final Throwable ex)
        {
            log.println("orbitkv ssd: the manifest writer stopped: " + ex);
        }
        finally
        {
            stopSyncer();
            abortCheckpoint();
            closeQuietly(current.channel);
            closeQuietly(dataChannel);
        }
    }

    private boolean syncOutstanding()
    {
        return syncsRequested != syncsDone;
    }

    /**
     * Wait for the outstanding sync, if any (before the manifest's channel changes, and at the stop).
     */
    private void awaitSync()
    {
        while (syncOutstanding() && syncer.isAlive())
        {
            LockSupport.parkNanos(DRAIN_INTERVAL_NS);
        }
    }

    private void stopSyncer()
    {
        syncerRunning = false;
        if (null != syncer)
        {
            LockSupport.unpark(syncer);
            try
            {
                syncer.join(CLOSE_TIMEOUT_MS);
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void park()
    {
        final boolean timed = syncOutstanding() ||
            (Configuration.SsdManifestSync.NONE != policy && unsyncedRecords > 0);
        state = timed ? STATE_TIMED : STATE_IDLE;
        VarHandle.fullFence();
        if (queue.size() == 0 && running)
        {
            // While records wait for their sync, what the agent queues is written every DRAIN_INTERVAL_NS: a
            // written record survives the process (kill -9) even before it is synced.
            final long parkNs = !timed ? IDLE_PARK_NS : unsyncedRecords > 0 && !syncOutstanding() ?
                Math.max(1, Math.min(DRAIN_INTERVAL_NS,
                firstUnsyncedNs + Configuration.SSD_MANIFEST_SYNC_BATCH_NS - System.nanoTime())) : DRAIN_INTERVAL_NS;
            LockSupport.parkNanos(parkNs);
        }
        state = STATE_RUNNING;
    }

    private void maybeSync(final long nowNs)
    {
        if (0 == unsyncedRecords || syncOutstanding())
        {
            return;
        }
        final boolean due = switch (policy)
        {
            case ALWAYS -> true;
            case BATCH -> unsyncedRecords >= Configuration.SSD_MANIFEST_SYNC_BATCH_RECORDS ||
                nowNs - firstUnsyncedNs >= Configuration.SSD_MANIFEST_SYNC_BATCH_NS;
            default -> false;
        };
        if (due)
        {
            // Hand the sync to the sync thread and keep writing: what is written from here on waits for the next.
            unsyncedRecords = 0;
            firstUnsyncedNs = 0;
            syncChannel = current.channel;
            syncsRequested = syncsRequested + 1;
            LockSupport.unpark(syncer);
        }
    }

    private void syncFiles(final FileChannel manifestChannel)
    {
        final long startNs = System.nanoTime();
        try
        {
            // The blocks first: a durable record must never name bytes that are not.
            dataChannel.force(false);
            manifestChannel.force(false);
            syncs.incrementRelease();
        }
        catch (final IOException ex)
        {
            // Atomic: the writer counts its refused writes in the same counter.
            writeErrors.increment();
            log.println("orbitkv ssd: manifest sync failed: " + ex);
        }
        final long us = (System.nanoTime() - startNs) / 1000;
        if (us > syncMaxUs.get())
        {
            syncMaxUs.setRelease(us);
        }
    }

    @SuppressWarnings("checkstyle:MethodLength")
    private void onMessage(final int type, final MutableDirectBuffer buffer, final int index, final int length)
    {
        switch (type)
        {
            case MSG_NAMESPACE ->
            {
                final int id = buffer.getInt(index + SsdManifest.NS_ID, ByteOrder.LITTLE_ENDIAN);
                final int nameLength = buffer.getShort(index + SsdManifest.NS_LENGTH, ByteOrder.LITTLE_ENDIAN) & 0xFFFF;
                final byte[] name = new byte[nameLength];
                buffer.getBytes(index + SsdManifest.NS_NAME, name);
                if (id >= 0 && id < names.length)
                {
                    names[id] = name;
                }
            }
            case MSG_RESIDENT ->
            {
                appendResident(current, buffer, index, length);
                if (checkpointing)
                {
                    appendResident(next, buffer, index, length);
                }
            }
            case MSG_REMOVED ->
            {
                appendCopy(current, buffer, index, length);
                if (checkpointing)
                {
                    appendCopy(next, buffer, index, length);
                }
            }
            case MSG_CHECKPOINT_BEGIN -> beginCheckpoint();
            case MSG_SNAPSHOT ->
            {
                if (checkpointing)
                {
                    appendResident(next, buffer, index, length);
                }
            }
            case MSG_CHECKPOINT_END -> endCheckpoint();
            default -> recordsLost.incrementRelease();
        }
    }

    private void appendResident(final Target target, final MutableDirectBuffer buffer, final int index, final int length)
    {
        final int agentNamespace = buffer.getInt(index + SsdManifest.RES_NAMESPACE, ByteOrder.LITTLE_ENDIAN);
        final int fileNamespace = fileNamespace(target, agentNamespace);
        if (fileNamespace < 0)
        {
            recordsLost.incrementRelease();
            return;
        }
        final int body = reserveFrame(target);
        target.view.putBytes(body, buffer, index, length);
        target.view.putByte(body, SsdManifest.TYPE_RESIDENT);
        target.view.putInt(body + SsdManifest.RES_NAMESPACE, fileNamespace, ByteOrder.LITTLE_ENDIAN);
        sealFrame(target, body, length);
    }

    private void appendCopy(final Target target, final DirectBuffer buffer, final int index, final int length)
    {
        final int body = reserveFrame(target);
        target.view.putBytes(body, buffer, index, length);
        sealFrame(target, body, length);
    }

    private int fileNamespace(final Target target, final int agentNamespace)
    {
        if (agentNamespace < 0 || agentNamespace >= names.length)
        {
            return -1;
        }
        final int known = target.fileNamespaceOf[agentNamespace];
        if (known >= 0)
        {
            return known;
        }
        final byte[] name = names[agentNamespace];
        if (null == name || target.nextFileNamespace >= SsdManifest.MAX_FILE_NAMESPACES)
        {
            return -1;
        }
        final int id = target.nextFileNamespace++;
        final int body = reserveFrame(target);
        target.view.putByte(body, SsdManifest.TYPE_NAMESPACE);
        target.view.putInt(body + SsdManifest.NS_ID, id, ByteOrder.LITTLE_ENDIAN);
        target.view.putShort(body + SsdManifest.NS_LENGTH, (short)name.length, ByteOrder.LITTLE_ENDIAN);
        target.view.putBytes(body + SsdManifest.NS_NAME, name);
        sealFrame(target, body, SsdManifest.NS_NAME + name.length);
        target.fileNamespaceOf[agentNamespace] = id;
        return id;
    }

    private int reserveFrame(final Target target)
    {
        if (target.position + SsdManifest.FRAME_HEADER_BYTES + SsdManifest.MAX_BODY_BYTES > WRITE_BUFFER_BYTES)
        {
            flush(target);
        }
        return target.position + SsdManifest.FRAME_HEADER_BYTES;
    }

    private void sealFrame(final Target target, final int body, final int length)
    {
        crc.reset();
        target.checksum.update(crc, body, length);
        final int frame = body - SsdManifest.FRAME_HEADER_BYTES;
        target.view.putInt(frame, length, ByteOrder.LITTLE_ENDIAN);
        target.view.putInt(frame + 4, (int)crc.getValue(), ByteOrder.LITTLE_ENDIAN);
        target.position = body + length;
        target.pendingRecords++;
    }

    private void flushAll()
    {
        flush(current);
        if (checkpointing)
        {
            flush(next);
        }
    }

    /**
     * Write a target's buffered frames at the end of its file. On a refused write the frames are lost (counted) and
     * the file is cut back to its last whole record.
     */
    private void flush(final Target target)
    {
        if (0 == target.position || null == target.channel)
        {
            target.position = 0;
            target.pendingRecords = 0;
            return;
        }
        final ByteBuffer buffer = target.buffer;
        buffer.clear().limit(target.position);
        long at = target.size;
        try
        {
            while (buffer.hasRemaining())
            {
                at += target.channel.write(buffer, at);
            }
            target.size = at;
            if (target == current)
            {
                records.getAndAddRelease(target.pendingRecords);
                bytes.getAndAddRelease(target.position);
                if (0 == unsyncedRecords)
                {
                    firstUnsyncedNs = System.nanoTime();
                }
                unsyncedRecords += target.pendingRecords;
                manifestBytes = target.size;
                fileBytes.setRelease(target.size);
            }
        }
        catch (final IOException ex)
        {
            writeErrors.increment();
            log.println("orbitkv ssd: manifest write of " + target.position + " bytes to " + target.path +
                " refused (" + ex.getMessage() + ")" + (target == current ?
                "; " + target.pendingRecords + " records lost, a checkpoint will rewrite the manifest" :
                "; checkpoint abandoned"));
            try
            {
                target.channel.truncate(target.size);
            }
            catch (final IOException truncateFailure)
            {
                // The torn tail is found and cut by the next start's framing check.
            }
            if (target == current)
            {
                recordsLost.getAndAddRelease(target.pendingRecords);
                resyncWanted = true;
            }
            else
            {
                target.position = 0;
                target.pendingRecords = 0;
                abortCheckpoint();
                resyncWanted = true;
            }
        }
        target.position = 0;
        target.pendingRecords = 0;
    }

    private void beginCheckpoint()
    {
        abortCheckpoint();
        try
        {
            next.channel = FileChannel.open(checkpointFile, StandardOpenOption.CREATE,
                StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.READ, StandardOpenOption.WRITE);
            next.path = checkpointFile;
            next.size = 0;
            next.position = 0;
            next.pendingRecords = 0;
            Arrays.fill(next.fileNamespaceOf, -1);
            next.nextFileNamespace = 0;
            SsdManifest.writeHeader(next.view, 0, layout, System.currentTimeMillis());
            next.position = SsdManifest.HEADER_BYTES;
            checkpointing = true;
        }
        catch (final IOException ex)
        {
            writeErrors.increment();
            log.println("orbitkv ssd: cannot start a manifest checkpoint: " + ex);
            abortCheckpoint();
            resyncWanted = true;
        }
    }

    private void endCheckpoint()
    {
        if (!checkpointing)
        {
            return;
        }
        flush(next);
        if (!checkpointing)
        {
            return;
        }
        // The outstanding sync (if any) covers the channel about to be closed: let it finish first.
        awaitSync();
        try
        {
            dataChannel.force(false);
            next.channel.force(false);
            Files.move(checkpointFile, manifest, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            syncDirectory();
        }
        catch (final IOException ex)
        {
            writeErrors.increment();
            log.println("orbitkv ssd: manifest checkpoint failed: " + ex);
            abortCheckpoint();
            resyncWanted = true;
            return;
        }
        // The new file is the manifest: what was appended to the old one is in it too.
        closeQuietly(current.channel);
        current.channel = next.channel;
        current.size = next.size;
        current.position = 0;
        current.pendingRecords = 0;
        System.arraycopy(next.fileNamespaceOf, 0, current.fileNamespaceOf, 0, current.fileNamespaceOf.length);
        current.nextFileNamespace = next.nextFileNamespace;
        next.channel = null;
        checkpointing = false;
        unsyncedRecords = 0;
        firstUnsyncedNs = 0;
        manifestBytes = current.size;
        fileBytes.setRelease(current.size);
        checkpoints.incrementRelease();
    }

    private void abortCheckpoint()
    {
        checkpointing = false;
        if (null != next.channel)
        {
            closeQuietly(next.channel);
            next.channel = null;
            try
            {
                Files.deleteIfExists(checkpointFile);
            }
            catch (final IOException ex)
            {
                // Removed at the next start.
            }
        }
        next.position = 0;
        next.pendingRecords = 0;
    }

    private void syncDirectory() throws IOException
    {
        try (FileChannel dir = FileChannel.open(manifest.getParent(), StandardOpenOption.READ))
        {
            dir.force(true);
        }
    }

    private static void closeQuietly(final FileChannel channel)
    {
        if (null != channel)
        {
            try
            {
                channel.close();
            }
            catch (final IOException ex)
            {
                // Closing only.
            }
        }
    }

    /**
     * Stop after writing (and syncing) everything queued so far. Call once the agent stopped queueing.
     */
    public void close()
    {
        running = false;
        if (null == thread)
        {
            closeQuietly(current.channel);
            closeQuietly(dataChannel);
            return;
        }
        LockSupport.unpark(thread);
        try
        {
            thread.join(CLOSE_TIMEOUT_MS);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        if (thread.isAlive())
        {
            log.println("orbitkv ssd: the manifest writer did not finish within " + CLOSE_TIMEOUT_MS + " ms");
        }
    }
}
