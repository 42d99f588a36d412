package io.orbitkv.manager.store;

import io.orbitkv.codecs.engine.KeyStatus;
import io.orbitkv.index.BlockStore;
import io.orbitkv.manager.ManagerContext;
import io.orbitkv.manager.status.SystemCounterDescriptor;
import io.orbitkv.manager.status.SystemCounters;
import java.lang.foreign.MemorySegment;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * The block store as the ring sees it: the DRAM pool and its index, and optionally the {@link SsdTier}, behind
 * {@link Residence} values. Owned by the ring agent's thread.
 *
 * <p>design: DRAM and SSD residences of one key are independent entries in two indexes; a lookup reports DRAM when
 * both exist, and evicting one never touches the other. The DRAM index is built here with the SSD tier as its
 * eviction listener, so admission on eviction needs no wiring after construction.
 */
public final class TieredStore
{
    private final BlockStore dram;
    private final MemorySegment pool;
    private final SsdTier ssd;

    private final AtomicCounter poolBytesUsed;
    private final AtomicCounter poolBytesFree;
    private final AtomicCounter poolPayloadBytes;
    private final AtomicCounter blocksResident;
    private final AtomicCounter pinsActive;
    private final AtomicCounter evictions;

    /**
     * @param ctx      concluded context: pool and index sizes.
     * @param pool     the DRAM pool's memory, {@link ManagerContext#poolBytes()} long.
     * @param ssd      the SSD tier over the same pool, or null without {@code --ssd-dir}.
     * @param counters the pool gauges.
     */
    public TieredStore(
        final ManagerContext ctx, final MemorySegment pool, final SsdTier ssd, final SystemCounters counters)
    {
        this.pool = pool;
        this.ssd = ssd;
        this.dram = new BlockStore(
            ctx.poolBytes(), ctx.maxBlockBytes(), ctx.indexBudgetBytes(), null == ssd ? BlockStore.NO_OP_LISTENER : ssd);
        poolBytesUsed = counters.get(SystemCounterDescriptor.POOL_BYTES_USED);
        poolBytesFree = counters.get(SystemCounterDescriptor.POOL_BYTES_FREE);
        poolPayloadBytes = counters.get(SystemCounterDescriptor.POOL_PAYLOAD_BYTES);
        blocksResident = counters.get(SystemCounterDescriptor.BLOCKS_RESIDENT);
        pinsActive = counters.get(SystemCounterDescriptor.PINS_ACTIVE);
        evictions = counters.get(SystemCounterDescriptor.EVICTIONS);
    }

    /**
     * The DRAM index, for start-up wiring (capacity, residency observers) before the agent starts.
     *
     * @return the DRAM index.
     */
    public BlockStore dram()
    {
        return dram;
    }

    public boolean hasSsd()
    {
        return null != ssd;
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Lifecycle and duty cycle, on the ring agent's thread.

    public void onStart()
    {
        if (null != ssd)
        {
            ssd.onStart();
        }
    }

    public void onClose()
    {
        if (null != ssd)
        {
            ssd.onClose();
        }
    }

    public boolean hasIoOutstanding()
    {
        return null != ssd && ssd.hasIoOutstanding();
    }

    /**
     * Submit queued SSD commands and handle their completions.
     *
     * @param waitNs when positive, wait up to this long in the kernel for a first completion.
     * @return work done.
     */
    public int doIoWork(final long waitNs)
    {
        return null == ssd ? 0 : ssd.doWork(waitNs);
    }

    public void updateGauges()
    {
        poolBytesUsed.setRelease(dram.allocatedBytes());
        poolBytesFree.setRelease(dram.freeBytes());
        poolPayloadBytes.setRelease(dram.payloadBytes());
        blocksResident.setRelease(dram.blockCount());
        pinsActive.setRelease(dram.pinnedBlocks());
        evictions.setRelease(dram.evictions());
        if (null != ssd)
        {
            ssd.updateGauges();
        }
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Lookup, one place for the DRAM-then-SSD order.

    /**
     * The READY residence of a key, DRAM first (design: DRAM wins when both residences exist; PREPARING data is
     * not ready data; lookup never changes LRU order).
     *
     * @param namespaceId registered namespace, or negative when the namespace is unknown.
     * @param hash        buffer holding the hash.
     * @param hashOffset  offset of the hash.
     * @param hashLength  its length.
     * @return the residence, or {@link Residence#NONE}.
     */
    public long findReady(final int namespaceId, final DirectBuffer hash, final int hashOffset, final int hashLength)
    {
        if (namespaceId < 0)
        {
            return Residence.NONE;
        }
        final int entryId = dram.findReady(namespaceId, hash, hashOffset, hashLength);
        if (BlockStore.NOT_FOUND != entryId)
        {
            return Residence.dram(entryId);
        }
        if (null != ssd)
        {
            final int ssdEntryId = ssd.findReady(namespaceId, hash, hashOffset, hashLength);
            if (BlockStore.NOT_FOUND != ssdEntryId)
            {
                return Residence.ssd(ssdEntryId);
            }
        }
        return Residence.NONE;
    }

    public int length(final long residence)
    {
        return Residence.isSsd(residence) ?
            ssd.length(Residence.entryId(residence)) : dram.length(Residence.entryId(residence));
    }

    /**
     * @return the CRC32C of the block as sealed by its publisher.
     */
    public int crc32c(final long residence)
    {
        return 0; // placeholder until block checksums land
    }

    public static KeyStatus status(final long residence)
    {
        return Residence.isSsd(residence) ? KeyStatus.SSD : KeyStatus.DRAM;
    }

    /**
     * A lookup answered a key from SSD.
     */
    public void countSsdLookupHit()
    {
        ssd.countLookupHit();
    }

    /**
     * Pin a residence so its tier cannot evict it (design: pinned blocks are never evicted).
     */
    public void pin(final long residence)
    {
        if (Residence.isSsd(residence))
        {
            ssd.pin(Residence.entryId(residence));
        }
        else
        {
            dram.pin(Residence.entryId(residence));
        }
    }

    public void unpin(final long residence)
    {
        if (Residence.isSsd(residence))
        {
            ssd.unpin(Residence.entryId(residence));
        }
        else
        {
            dram.unpin(Residence.entryId(residence));
        }
    }

    // ---------------------------------------------------------------------------------------------------------------
    // DRAM copies: publish into the pool, read out of it.

    public MemorySegment pool()
    {
        return pool;
    }

    /**
     * Reserve a PREPARING DRAM entry for a publish.
     *
     * @return the entry id, {@link BlockStore#ALREADY_PRESENT} or {@link BlockStore#NO_SPACE}.
     */
    public int reserve(
        final int namespaceId, final DirectBuffer hash, final int hashOffset, final int hashLength, final int length)
    {
        return dram.reserve(namespaceId, hash, hashOffset, hashLength, length);
    }

    public long offset(final int dramEntryId)
    {
        return dram.offset(dramEntryId);
    }

    /**
     * Every byte of a publish is in: make it visible, and admit it to SSD when admission is on publish.
     */
    public void seal(final int dramEntryId)
    {
        // design: preparing data is not ready data; visible only now that every byte is in.
        dram.seal(dramEntryId);
        if (null != ssd)
        {
            ssd.onPublished(dram, dramEntryId);
        }
    }

    public void abort(final int dramEntryId)
    {
        dram.abort(dramEntryId);
    }

    /**
     * Every byte of a DRAM read reached the reader: the block is used, its pin goes.
     */
    public void finishDramRead(final int dramEntryId)
    {
        dram.touch(dramEntryId);
        dram.unpin(dramEntryId);
    }

    // ---------------------------------------------------------------------------------------------------------------
    // SSD reads: a pinned residence is read into staging, copied on by the reader, then released.

    public MemorySegment staging()
    {
        return ssd.staging();
    }

    /**
     * @return the command id, or a negative value when staging or commands are exhausted (retry next duty cycle).
     * @see SsdTier#submitRead(int, int, SsdReadListener, int)
     */
    public int submitSsdRead(final long residence, final int length, final SsdReadListener listener, final int key)
    {
        return ssd.submitRead(Residence.entryId(residence), length, listener, key);
    }

    public void finishSsdRead(final long residence, final long stagingOffset, final int length)
    {
        ssd.finishRead(dram, Residence.entryId(residence), stagingOffset, length);
    }

    public void orphanSsdRead(final int command)
    {
        ssd.orphanRead(command);
    }

    public void releaseStagedRead(final long residence, final long stagingOffset)
    {
        ssd.releaseStaged(Residence.entryId(residence), stagingOffset);
    }
}
