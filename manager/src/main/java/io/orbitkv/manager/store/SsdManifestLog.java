package io.orbitkv.manager.store;

import io.orbitkv.index.BlockStore;
import io.orbitkv.index.NamespaceTable;
import io.orbitkv.manager.Configuration;
import io.orbitkv.manager.status.SystemCounters;
import java.nio.ByteOrder;
import java.util.concurrent.TimeUnit;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * The storage duty cycle's side of the SSD manifest: an observer of the SSD index that queues a record for every
 * residence sealed (its write completed: design, preparing data is not ready data) and every residence gone, for the
 * {@link SsdManifestWriter} thread. Queueing copies the record (at most about a hundred bytes) into a
 * single-producer queue and allocates nothing; the writer is woken only when it sleeps with nothing to do or a batch
 * filled up.
 *
 * <p>A record that does not fit the queue is lost and counted, and a checkpoint is asked for, which rewrites the
 * manifest from the live residences. Checkpoints are driven from here on the housekeeping tick
 * ({@link #housekeeping}): once the manifest outgrew {@code --ssd-manifest-checkpoint-bytes} and
 * {@link Configuration#SSD_MANIFEST_CHECKPOINT_GROWTH} times a checkpoint of the live set, every live residence is
 * queued as a snapshot record, {@link #SCAN_PER_TICK} index entries per tick.
 */
final class SsdManifestLog implements BlockStore.ResidencyObserver
{
    /** Index entries looked at per housekeeping tick while a checkpoint is being queued. */
    static final int SCAN_PER_TICK = 8192;
    /** Bytes one residence takes in a checkpoint, for the checkpoint decision (a 32-byte hash). */
    static final int CHECKPOINT_RECORD_BYTES = SsdManifest.FRAME_HEADER_BYTES + SsdManifest.RES_HASH + 32;
    /** Least time between the starts of two checkpoints (one the disk refused is retried after this). */
    static final long RESYNC_RETRY_NS = TimeUnit.SECONDS.toNanos(1);

    private final SsdManifestWriter writer;
    private final OneToOneRingBuffer queue;
    private final AtomicBuffer queueBuffer;
    private final NamespaceTable namespaces;
    private final BlockStore.ResidencyObserver downstream;
    private final long checkpointBytes;
    private final boolean[] announced;
    private final UnsafeBuffer nameView = new UnsafeBuffer(0, 0);
    private final AtomicCounter recordsLost;
    private boolean recording;
    private int queuedSinceSignal;
    private int scanCursor = -1;
    private boolean resyncPending;
    private long nextResyncNs;

    SsdManifestLog(
        final SsdManifestWriter writer,
        final NamespaceTable namespaces,
        final BlockStore.ResidencyObserver downstream,
        final long checkpointBytes,
        final SystemCounters counters)
    {
        this.writer = writer;
        this.queue = writer.queue();
        this.queueBuffer = queue.buffer();
        this.namespaces = namespaces;
        this.downstream = downstream;
        this.checkpointBytes = checkpointBytes;
        this.announced = new boolean[namespaces.maxNamespaces()];
        this.recordsLost = counters.get(StoreCounter.SSD_MANIFEST_RECORDS_LOST);
        this.nextResyncNs = System.nanoTime();
    }

    /**
     * Start queueing records: after recovery, whose restored residences the manifest already holds.
     */
    void startRecording()
    {
        recording = true;
    }

    public void onResident(final BlockStore store, final int entryId)
    {
        downstream.onResident(store, entryId);
        if (recording && !queueResident(SsdManifestWriter.MSG_RESIDENT, store, entryId))
        {
            lost();
        }
    }

    public void onGone(final BlockStore store, final int entryId)
    {
        downstream.onGone(store, entryId);
        if (recording && !queueRemoved(store, entryId))
        {
            lost();
        }
    }

    /**
     * On the housekeeping tick: start a checkpoint when one is due, or queue the next part of the one under way.
     *
     * @param store  the SSD index.
     * @param nowNs  the agent's clock.
     */
    void housekeeping(final BlockStore store, final long nowNs)
    {
        if (!recording)
        {
            return;
        }
        if (scanCursor >= 0)
        {
            scan(store);
            return;
        }
        if (writer.takeResyncWanted())
        {
            resyncPending = true;
        }
        final long manifestBytes = writer.manifestBytes();
        final boolean outgrown = manifestBytes > checkpointBytes &&
            manifestBytes > (long)Configuration.SSD_MANIFEST_CHECKPOINT_GROWTH * store.blockCount() * CHECKPOINT_RECORD_BYTES;
        // At most one start per RESYNC_RETRY_NS: a checkpoint the disk refuses is not retried in a loop.
        if ((outgrown || resyncPending) && nowNs - nextResyncNs >= 0 &&
            queue.write(SsdManifestWriter.MSG_CHECKPOINT_BEGIN, queueBuffer, 0, 0))
        {
            resyncPending = false;
            nextResyncNs = nowNs + RESYNC_RETRY_NS;
            scanCursor = 0;
            signal();
            scan(store);
        }
    }

    /**
     * @return whether a checkpoint is being queued.
     */
    boolean checkpointing()
    {
        return scanCursor >= 0;
    }

    private void scan(final BlockStore store)
    {
        final int capacity = store.indexCapacity();
        final int end = Math.min(capacity, scanCursor + SCAN_PER_TICK);
        for (int entry = scanCursor; entry < end; entry++)
        {
            if (store.isReady(entry) && !queueResident(SsdManifestWriter.MSG_SNAPSHOT, store, entry))
            {
                // The queue is full: carry on from this entry at the next tick.
                scanCursor = entry;
                signal();
                return;
            }
        }
        scanCursor = end;
        if (end == capacity && queue.write(SsdManifestWriter.MSG_CHECKPOINT_END, queueBuffer, 0, 0))
        {
            scanCursor = -1;
        }
        signal();
    }

    private boolean queueResident(final int type, final BlockStore store, final int entryId)
    {
        final int namespaceId = store.namespaceId(entryId);
        if (!announce(namespaceId))
        {
            return false;
        }
        final int hashLength = store.hashLength(entryId);
        final int index = queue.tryClaim(type, SsdManifest.RES_HASH + hashLength);
        if (index < 0)
        {
            return false;
        }
        final AtomicBuffer buffer = queueBuffer;
        buffer.putByte(index, SsdManifest.TYPE_RESIDENT);
        buffer.putInt(index + SsdManifest.RES_NAMESPACE, namespaceId, ByteOrder.LITTLE_ENDIAN);
        buffer.putByte(index + SsdManifest.RES_HASH_LENGTH, (byte)hashLength);
        buffer.putInt(index + SsdManifest.RES_LENGTH, store.length(entryId), ByteOrder.LITTLE_ENDIAN);
        buffer.putInt(index + SsdManifest.RES_CRC, store.crc32c(entryId), ByteOrder.LITTLE_ENDIAN);
        buffer.putLong(index + SsdManifest.RES_OFFSET, store.offset(entryId), ByteOrder.LITTLE_ENDIAN);
        buffer.putLong(index + SsdManifest.RES_SEQUENCE, store.insertionSequence(entryId), ByteOrder.LITTLE_ENDIAN);
        store.getHash(entryId, buffer, index + SsdManifest.RES_HASH);
        queue.commit(index);
        queued();
        return true;
    }

    private boolean queueRemoved(final BlockStore store, final int entryId)
    {
        final int index = queue.tryClaim(SsdManifestWriter.MSG_REMOVED, SsdManifest.REM_BYTES);
        if (index < 0)
        {
            return false;
        }
        final AtomicBuffer buffer = queueBuffer;
        buffer.putByte(index, SsdManifest.TYPE_REMOVED);
        buffer.putLong(index + SsdManifest.REM_OFFSET, store.offset(entryId), ByteOrder.LITTLE_ENDIAN);
        buffer.putLong(index + SsdManifest.REM_SEQUENCE, store.insertionSequence(entryId), ByteOrder.LITTLE_ENDIAN);
        queue.commit(index);
        queued();
        return true;
    }

    /**
     * Tell the writer a namespace's name once, before the first record that names it.
     */
    private boolean announce(final int namespaceId)
    {
        if (announced[namespaceId])
        {
            return true;
        }
        final int nameLength = namespaces.wrapNamespace(namespaceId, nameView);
        final int index = queue.tryClaim(SsdManifestWriter.MSG_NAMESPACE, SsdManifest.NS_NAME + nameLength);
        if (index < 0)
        {
            return false;
        }
        final AtomicBuffer buffer = queueBuffer;
        buffer.putByte(index, SsdManifest.TYPE_NAMESPACE);
        buffer.putInt(index + SsdManifest.NS_ID, namespaceId, ByteOrder.LITTLE_ENDIAN);
        buffer.putShort(index + SsdManifest.NS_LENGTH, (short)nameLength, ByteOrder.LITTLE_ENDIAN);
        buffer.putBytes(index + SsdManifest.NS_NAME, nameView, 0, nameLength);
        queue.commit(index);
        announced[namespaceId] = true;
        return true;
    }

    private void queued()
    {
        if (writer.signal(++queuedSinceSignal))
        {
            queuedSinceSignal = 0;
        }
    }

    private void signal()
    {
        writer.signal(Integer.MAX_VALUE);
        queuedSinceSignal = 0;
    }

    private void lost()
    {
        recordsLost.incrementRelease();
        resyncPending = true;
    }
}
