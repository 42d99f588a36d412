package io.orbitkv.manager.ring;

import io.orbitkv.codecs.EngineRingLimits;
import io.orbitkv.index.BlockChecksum;
import io.orbitkv.manager.Configuration;
import io.orbitkv.manager.port.FetchHandle;
import io.orbitkv.manager.store.TieredStore;
import java.io.File;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import org.agrona.DirectBuffer;
import org.agrona.collections.Hashing;
import org.agrona.collections.Int2IntHashMap;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;

/**
 * The Manager's side of one client slot: liveness, the data region, leases (pinned Lookup prefixes), reserved pool
 * slots (Prepared, not yet Committed) and the queue
 * of in-flight copy operations. Everything is preallocated at start for every slot; only the data region mapping is
 * made at attach (design: allocation is allowed at attach).
 */
final class ClientSession
{
    static final int FREE = 0;
    static final int ATTACHED = 1;
    /** Detached on request: everything released, waiting for the engine to read the Detach response. */
    static final int DRAINING = 2;

    final int slotIndex;
    final AtomicBuffer responseRingBuffer;
    final OneToOneRingBuffer responseRing;

    int state = FREE;
    long clientId;
    long lastRequestNs;
    long drainDeadlineNs;
    long claimFirstSeenMs;
    long claimFirstSeenPid;

    private final byte[] name = new byte[EngineRingLimits.MAX_CLIENT_NAME_LENGTH];
    private int nameLength;

    private RegionMapping regionMapping;
    private MemorySegment region;
    private long regionBytes;
    private File regionFile;
    private byte[] regionPath;

    private BlockChecksum regionChecksum;

    private final long[] leaseIds = new long[Configuration.MAX_LEASES_PER_CLIENT];
    private final FetchHandle[] leaseFetches = new FetchHandle[Configuration.MAX_LEASES_PER_CLIENT];
    private final FetchHandle[] readFetches = new FetchHandle[MAX_PEER_READS];
    private int readFetchCount;
    private final int[] leaseStarts = new int[Configuration.MAX_LEASES_PER_CLIENT];
    private final int[] leaseCounts = new int[Configuration.MAX_LEASES_PER_CLIENT];
    private final long[] pinnedResidences = new long[Configuration.MAX_PINNED_BLOCKS_PER_CLIENT];
    private int leaseCount;
    private int pinnedCount;
    private long nextLeaseId;

    private final int[] reservedEntryIds = new int[Configuration.MAX_RESERVED_BLOCKS_PER_CLIENT];
    private final long[] reservedDeadlinesNs = new long[Configuration.MAX_RESERVED_BLOCKS_PER_CLIENT];
    private final Int2IntHashMap reservationByEntry =
        new Int2IntHashMap(2 * Configuration.MAX_RESERVED_BLOCKS_PER_CLIENT, Hashing.DEFAULT_LOAD_FACTOR, -1);
    private int reservedCount;

    private final CopyOperation[] operations = new CopyOperation[Configuration.MAX_IN_FLIGHT_PER_CLIENT];
    private int operationHead;
    private int operationCount;

    /**
     * Reads of one client that may be fetching from peers at once (their copy operations have ended).
     */
    static final int MAX_PEER_READS = Configuration.MAX_IN_FLIGHT_PER_CLIENT;

    /**
     * A lease id carries its holder's slot + 1 from this bit up, so that another client of this Manager the id was
     * handed to (an engine's scheduler pins, its worker reads) can find the lease; below it, the slot's sequence,
     * which is never reset, so an id of an earlier attachment of the slot never names a lease of a later one.
     */
    static final int LEASE_SLOT_SHIFT = 47;
    private static final long LEASE_SEQUENCE_MASK = (1L << LEASE_SLOT_SHIFT) - 1;

    ClientSession(final int slotIndex, final AtomicBuffer responseRingBuffer)
    {
        this.slotIndex = slotIndex;
        this.responseRingBuffer = responseRingBuffer;
        this.responseRing = new OneToOneRingBuffer(responseRingBuffer);
        for (int i = 0; i < operations.length; i++)
        {
            operations[i] = new CopyOperation();
        }
    }

    boolean isAttached()
    {
        return ATTACHED == state;
    }

    void name(final DirectBuffer buffer, final int offset, final int length)
    {
        buffer.getBytes(offset, name, 0, length);
        nameLength = length;
    }

    boolean hasName(final DirectBuffer buffer, final int offset, final int length)
    {
        if (length != nameLength)
        {
            return false;
        }
        for (int i = 0; i < length; i++)
        {
            if (name[i] != buffer.getByte(offset + i))
            {
                return false;
            }
        }
        return true;
    }

    String nameAsString()
    {
        return new String(name, 0, nameLength, StandardCharsets.US_ASCII);
    }

    /**
     * Create the sparse data region file and map it. Slow path, at attach only.
     *
     * @param file  path of the region.
     * @param bytes its size.
     * @throws IOException if the file cannot be created or mapped.
     */
    void mapRegion(final File file, final long bytes) throws IOException
    {
        final Arena arena = Arena.ofShared();
        try (RandomAccessFile raf = new RandomAccessFile(file, "rw"); FileChannel channel = raf.getChannel())
        {
            raf.setLength(bytes);
            region = channel.map(FileChannel.MapMode.READ_WRITE, 0, bytes, arena);
        }
        catch (final IOException | RuntimeException ex)
        {
            arena.close();
            if (!file.delete() && file.exists())
            {
                ex.addSuppressed(new IOException("could not delete " + file));
            }
            throw ex;
        }
        regionMapping = new RegionMapping(arena);
        regionChecksum = new BlockChecksum(region);
        regionBytes = bytes;
        regionFile = file;
        regionPath = file.getAbsolutePath().getBytes(StandardCharsets.US_ASCII);
    }

    /**
     * Unmap (once no I/O still holds the mapping, see {@link #regionMapping()}) and delete the data region, if any.
     */
    void unmapRegion()
    {
        if (null != regionMapping)
        {
            regionMapping.close();
            regionMapping = null;
            region = null;
            regionChecksum = null;
            regionBytes = 0;
        }
        if (null != regionFile)
        {
            if (!regionFile.delete() && regionFile.exists())
            {
                regionFile.deleteOnExit();
            }
            regionFile = null;
            regionPath = null;
        }
    }

    MemorySegment region()
    {
        return region;
    }

    /**
     * Checksums ranges of the data region (restored peer blocks) without a view per block, whatever its size.
     */
    BlockChecksum regionChecksum()
    {
        return regionChecksum;
    }

    /**
     * The data region's mapping, for I/O that may outlive the session: such I/O takes a {@link RegionMapping#hold()}
     * and closes it when done, and the region is unmapped by the last holder ({@link #unmapRegion()} closes the
     * session's own).
     *
     * @return the mapping, or null when none is mapped.
     */
    RegionMapping regionMapping()
    {
        return regionMapping;
    }

    long regionBytes()
    {
        return regionBytes;
    }

    byte[] regionPath()
    {
        return regionPath;
    }

    /**
     * Whether {@code [offset, offset + length)} lies inside the data region, overflow-safe.
     *
     * @param offset start.
     * @param length bytes, at least 1.
     * @return true if inside.
     */
    boolean inRegion(final long offset, final long length)
    {
        return offset >= 0 && length > 0 && length <= regionBytes && offset <= regionBytes - length;
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Reservations: pool slots a Prepare handed out, each until its Commit, its deadline or the client's end

    int reservedCount()
    {
        return reservedCount;
    }

    boolean canReserve(final int blocks)
    {
        return reservedCount + blocks <= reservedEntryIds.length;
    }

    void addReservation(final int entryId, final long deadlineNs)
    {
        reservedEntryIds[reservedCount] = entryId;
        reservedDeadlinesNs[reservedCount] = deadlineNs;
        reservationByEntry.put(entryId, reservedCount);
        reservedCount++;
    }

    /**
     * Hand a reservation over to its Commit.
     *
     * @param entryId the pool entry.
     * @return true when this client held it reserved (it no longer does), false when not.
     */
    boolean takeReservation(final int entryId)
    {
        final int index = reservationByEntry.remove(entryId);
        if (index < 0)
        {
            return false;
        }
        removeReservationAt(index);
        return true;
    }

    /**
     * Abort the reservations whose deadline passed: their slots go back to the pool, never having been visible.
     *
     * @return how many.
     */
    int expireReservations(final TieredStore store, final long nowNs)
    {
        int expired = 0;
        for (int i = reservedCount - 1; i >= 0; i--)
        {
            if (nowNs - reservedDeadlinesNs[i] > 0)
            {
                final int entryId = reservedEntryIds[i];
                reservationByEntry.remove(entryId);
                removeReservationAt(i);
                store.abort(entryId);
                expired++;
            }
        }
        return expired;
    }

    /**
     * The client goes: every slot it still holds reserved goes back to the pool.
     *
     * @return how many.
     */
    int abortAllReservations(final TieredStore store)
    {
        final int count = reservedCount;
        for (int i = 0; i < count; i++)
        {
            store.abort(reservedEntryIds[i]);
        }
        reservationByEntry.clear();
        reservedCount = 0;
        return count;
    }

    private void removeReservationAt(final int index)
    {
        final int last = reservedCount - 1;
        if (index != last)
        {
            reservedEntryIds[index] = reservedEntryIds[last];
            reservedDeadlinesNs[index] = reservedDeadlinesNs[last];
            reservationByEntry.put(reservedEntryIds[index], index);
        }
        reservedCount = last;
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Leases

    int leaseCount()
    {
        return leaseCount;
    }

    int pinnedCount()
    {
        return pinnedCount;
    }

    boolean canLease(final int blocks)
    {
        return leaseCount < leaseIds.length && pinnedCount + blocks <= pinnedResidences.length;
    }

    boolean leaseLimitReached()
    {
        return leaseCount >= leaseIds.length;
    }

    /**
     * Record a lease over residences the caller has pinned already.
     *
     * @param residences pinned residences.
     * @param count      how many.
     * @return the new lease id, never 0.
     */
    long addLease(final long[] residences, final int count)
    {
        nextLeaseId = (nextLeaseId + 1) & LEASE_SEQUENCE_MASK;
        final long leaseId = ((long)(slotIndex + 1) << LEASE_SLOT_SHIFT) | nextLeaseId;
        leaseIds[leaseCount] = leaseId;
        leaseFetches[leaseCount] = null;
        leaseStarts[leaseCount] = pinnedCount;
        leaseCounts[leaseCount] = count;
        System.arraycopy(residences, 0, pinnedResidences, pinnedCount, count);
        pinnedCount += count;
        leaseCount++;
        return leaseId;
    }

    /**
     * @return the slot of the client a lease id was made for, or -1 when it names none.
     */
    static int leaseSlot(final long leaseId)
    {
        return leaseId <= 0 ? -1 : (int)(leaseId >>> LEASE_SLOT_SHIFT) - 1;
    }

    int leaseBlocks(final int leaseIndex)
    {
        return leaseCounts[leaseIndex];
    }

    /**
     * Take over a lease another client handed to this one, with its pins and held peer sources, under the same id;
     * the caller checked {@link #canLease(int)}. Nothing is unpinned, so the blocks stay held throughout.
     *
     * @param holder     the session holding it.
     * @param leaseIndex its index in the holder.
     */
    void takeLease(final ClientSession holder, final int leaseIndex)
    {
        final int start = holder.leaseStarts[leaseIndex];
        final int count = holder.leaseCounts[leaseIndex];
        leaseIds[leaseCount] = holder.leaseIds[leaseIndex];
        leaseFetches[leaseCount] = holder.leaseFetches[leaseIndex];
        leaseStarts[leaseCount] = pinnedCount;
        leaseCounts[leaseCount] = count;
        System.arraycopy(holder.pinnedResidences, start, pinnedResidences, pinnedCount, count);
        pinnedCount += count;
        leaseCount++;
        holder.forgetLease(leaseIndex);
    }

    int findLease(final long leaseId)
    {
        for (int i = 0; i < leaseCount; i++)
        {
            if (leaseIds[i] == leaseId)
            {
                return i;
            }
        }
        return -1;
    }

    /**
     * Remove a lease, unpinning each of its residences.
     *
     * @param leaseIndex from {@link #findLease(long)}.
     * @param store      holds the pins.
     * @return number of residences unpinned.
     */
    int removeLease(final int leaseIndex, final TieredStore store)
    {
        final int start = leaseStarts[leaseIndex];
        final int count = leaseCounts[leaseIndex];
        for (int i = start; i < start + count; i++)
        {
            store.unpin(pinnedResidences[i]);
        }
        forgetLease(leaseIndex);
        return count;
    }

    private void forgetLease(final int leaseIndex)
    {
        final int start = leaseStarts[leaseIndex];
        final int count = leaseCounts[leaseIndex];
        // Compact: leases are few and small, and release is not the lookup path.
        final int tail = pinnedCount - (start + count);
        System.arraycopy(pinnedResidences, start + count, pinnedResidences, start, tail);
        pinnedCount -= count;
        for (int i = leaseIndex + 1; i < leaseCount; i++)
        {
            leaseIds[i - 1] = leaseIds[i];
            leaseFetches[i - 1] = leaseFetches[i];
            leaseStarts[i - 1] = leaseStarts[i] - count;
            leaseCounts[i - 1] = leaseCounts[i];
        }
        leaseCount--;
    }

    /**
     * @return the peer holds (a HOLD fetch) of a lease, or null.
     */
    FetchHandle leaseFetch(final int leaseIndex)
    {
        return leaseFetches[leaseIndex];
    }

    void leaseFetch(final int leaseIndex, final FetchHandle fetch)
    {
        leaseFetches[leaseIndex] = fetch;
    }

    boolean canAddPeerRead()
    {
        return readFetchCount < readFetches.length;
    }

    void addPeerRead(final FetchHandle fetch)
    {
        readFetches[readFetchCount++] = fetch;
    }

    void removePeerRead(final FetchHandle fetch)
    {
        for (int i = 0; i < readFetchCount; i++)
        {
            if (readFetches[i] == fetch)
            {
                readFetches[i] = readFetches[--readFetchCount];
                readFetches[readFetchCount] = null;
                return;
            }
        }
    }

    int peerReadCount()
    {
        return readFetchCount;
    }

    FetchHandle peerRead(final int i)
    {
        return readFetches[i];
    }

    int removeAllLeases(final TieredStore store)
    {
        final int count = pinnedCount;
        for (int i = 0; i < pinnedCount; i++)
        {
            store.unpin(pinnedResidences[i]);
        }
        pinnedCount = 0;
        leaseCount = 0;
        return count;
    }

    // ---------------------------------------------------------------------------------------------------------------
    // In-flight operations, FIFO per client.

    boolean hasOperations()
    {
        return operationCount > 0;
    }

    boolean operationQueueFull()
    {
        return operationCount == operations.length;
    }

    /**
     * The slot the next operation will occupy; call {@link #enqueue()} once it is filled in.
     *
     * @return a free operation.
     */
    CopyOperation nextFreeOperation()
    {
        return operations[(operationHead + operationCount) % operations.length];
    }

    void enqueue()
    {
        operationCount++;
    }

    CopyOperation headOperation()
    {
        return operations[operationHead];
    }

    void dequeue()
    {
        operations[operationHead].clear();
        operationHead = (operationHead + 1) % operations.length;
        operationCount--;
    }

    int operationCount()
    {
        return operationCount;
    }

    void reset()
    {
        state = FREE;
        clientId = 0;
        lastRequestNs = 0;
        drainDeadlineNs = 0;
        nameLength = 0;
        leaseCount = 0;
        readFetchCount = 0;
        pinnedCount = 0;
        operationHead = 0;
        operationCount = 0;
        claimFirstSeenMs = 0;
        claimFirstSeenPid = 0;
    }
}
