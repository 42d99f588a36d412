package io.orbitkv.manager.store;

import io.orbitkv.codecs.engine.KeyStatus;
import io.orbitkv.index.BlockChecksum;
import io.orbitkv.index.BlockStore;
import io.orbitkv.manager.ManagerContext;
import io.orbitkv.manager.status.SystemCounters;
import java.lang.foreign.MemorySegment;
import java.util.zip.CRC32C;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * The block store as the ring sees it: the DRAM pool and its index, and optionally the {@link SsdTier}, behind
 * {@link Residence} values. Owned by the ring agent's thread.
 *
 * <p>design: DRAM and SSD residences of one key are independent entries in two indexes; a lookup reports DRAM when
 * both exist, and evicting one never touches the other. The DRAM index is built here with the SSD tier as its
 * eviction listener, so admission on eviction needs no wiring after construction.
 *
 * <p>Checksums: every sealed block carries the CRC32C of its bytes (design: end to end, taken over the bytes as
 * they landed in the pool at publish). An SSD residence keeps the checksum of the DRAM entry it was written from,
 * and bytes read back from SSD are verified against it before any of them is copied on or admitted to DRAM. Sums
 * over the pool and staging go through {@link BlockChecksum} views, so they allocate nothing.
 */
public final class TieredStore
{
    /**
     * A publish copy is summed in pieces of this size, each right after it is copied, while its bytes are still in
     * cache (see {@link #copyIntoPool}).
     */
    public static final int CHECKSUM_PIECE_BYTES = 64 * 1024;

    private final BlockStore dram;
    private final MemorySegment pool;
    private final SsdTier ssd;
    private final BlockChecksum poolChecksum;
    private final BlockChecksum stagingChecksum;

    private final AtomicCounter poolBytesUsed;
    private final AtomicCounter poolBytesFree;
    private final AtomicCounter poolPayloadBytes;
    private final AtomicCounter blocksResident;
    private final AtomicCounter pinsActive;
    private final AtomicCounter evictions;
    private final AtomicCounter checksumBlocksPublished;
    private final AtomicCounter checksumBytesPublished;

    /**
     * @param ctx      concluded context: pool and index sizes.
     * @param pool     the DRAM pool's memory, {@link ManagerContext#poolBytes()} long.
     * @param ssd      the SSD tier over the same pool, or null without {@code --ssd-dir}.
     * @param counters the pool gauges.
     * @param observer told about every READY transition of the DRAM store (the catalog's inventory in a cluster), or
     *                 {@link BlockStore#NO_OP_OBSERVER}.
     */
    public TieredStore(
        final ManagerContext ctx,
        final MemorySegment pool,
        final SsdTier ssd,
        final SystemCounters counters,
        final BlockStore.ResidencyObserver observer)
    {
        this.pool = pool;
        this.ssd = ssd;
        this.dram = new BlockStore(
            ctx.poolBytes(),
            ctx.maxBlockBytes(),
            ctx.indexBudgetBytes(),
            null == ssd ? BlockStore.NO_OP_LISTENER : ssd,
            observer);
        poolBytesUsed = counters.get(StoreCounter.POOL_BYTES_USED);
        poolBytesFree = counters.get(StoreCounter.POOL_BYTES_FREE);
        poolPayloadBytes = counters.get(StoreCounter.POOL_PAYLOAD_BYTES);
        blocksResident = counters.get(StoreCounter.BLOCKS_RESIDENT);
        pinsActive = counters.get(StoreCounter.PINS_ACTIVE);
        evictions = counters.get(StoreCounter.EVICTIONS);
        checksumBlocksPublished = counters.get(StoreCounter.CHECKSUM_BLOCKS_PUBLISHED);
        checksumBytesPublished = counters.get(StoreCounter.CHECKSUM_BYTES_PUBLISHED);
        poolChecksum = new BlockChecksum(pool);
        stagingChecksum = null == ssd ? null : new BlockChecksum(ssd.staging());
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

    /**
     * The READY SSD residence of a key, whether or not DRAM holds it too: a peer names the residence it was told of.
     *
     * @return the residence, or {@link Residence#NONE} (also without an SSD tier).
     */
    public long findReadySsd(final int namespaceId, final DirectBuffer hash, final int hashOffset, final int hashLength)
    {
        if (null == ssd || namespaceId < 0)
        {
            return Residence.NONE;
        }
        final int ssdEntryId = ssd.findReady(namespaceId, hash, hashOffset, hashLength);
        return BlockStore.NOT_FOUND == ssdEntryId ? Residence.NONE : Residence.ssd(ssdEntryId);
    }

    /**
     * The residency episode of a live residence, as the catalog announced it.
     */
    public long insertionSequence(final long residence)
    {
        return Residence.isSsd(residence) ?
            ssd.insertionSequence(Residence.entryId(residence)) : dram.insertionSequence(Residence.entryId(residence));
    }

    public int length(final long residence)
    {
        return Residence.isSsd(residence) ?
            ssd.length(Residence.entryId(residence)) : dram.length(Residence.entryId(residence));
    }

    /**
     * The checksum sealed with a block, whichever tier holds it.
     *
     * @param residence a live residence.
     * @return CRC32C of the block's bytes.
     */
    public int crc32c(final long residence)
    {
        return Residence.isSsd(residence) ?
            ssd.crc32c(Residence.entryId(residence)) : dram.crc32c(Residence.entryId(residence));
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
     * Copy bytes of a publish into the pool and add them, as they landed there, to the block's running checksum.
     * design: the sum is taken over the pool's bytes, so it covers the copy too. Copy and sum alternate in
     * {@link #CHECKSUM_PIECE_BYTES} pieces, so the sum reads each piece from cache rather than from memory.
     *
     * @param src        the client's data region.
     * @param srcOffset  first byte to copy.
     * @param poolOffset where it goes in the pool.
     * @param length     bytes to copy.
     * @param crc        the block's running sum.
     */
    public void copyIntoPool(
        final MemorySegment src, final long srcOffset, final long poolOffset, final long length, final CRC32C crc)
    {
        for (long done = 0; done < length; done += CHECKSUM_PIECE_BYTES)
        {
            final long bytes = Math.min(CHECKSUM_PIECE_BYTES, length - done);
            MemorySegment.copy(src, srcOffset + done, pool, poolOffset + done, bytes);
            poolChecksum.update(crc, poolOffset + done, bytes);
        }
    }

    /**
     * The CRC32C of a range of the pool, e.g. a block a peer transfer landed there, to compare with the sum its
     * source sealed it with. On the ring agent's thread only.
     *
     * @param poolOffset first byte in the pool.
     * @param length     bytes.
     * @return the sum.
     */
    public int computePoolCrc32c(final long poolOffset, final long length)
    {
        return poolChecksum.compute(poolOffset, length);
    }

    /**
     * A block fetched from a peer, verified against its source's checksum, was copied into a PREPARING entry: make it
     * visible with that checksum (so its later SSD copy is verified against the publisher's sum too), and admit it
     * to SSD when admission is on publish. Not counted as checksummed at publish.
     *
     * @param dramEntryId the PREPARING entry the block landed in.
     * @param crc32c      the checksum it was verified against.
     */
    public void sealFetched(final int dramEntryId, final int crc32c)
    {
        dram.seal(dramEntryId, crc32c);
        if (null != ssd)
        {
            ssd.onPublished(dram, dramEntryId);
        }
    }

    /**
     * Every byte of a publish is in: make it visible, and admit it to SSD when admission is on publish.
     *
     * @param dramEntryId the PREPARING entry.
     * @param crc32c      CRC32C of its bytes as they are in the pool.
     */
    public void seal(final int dramEntryId, final int crc32c)
    {
        // design: preparing data is not ready data; visible only now that every byte is in.
        dram.seal(dramEntryId, crc32c);
        checksumBlocksPublished.incrementRelease();
        checksumBytesPublished.getAndAddRelease(dram.length(dramEntryId));
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

    /**
     * Add a range of staging to a running checksum, allocation free: a staged SSD read is summed this way, in as
     * many pieces as the copy budget allows, before any of it is copied on.
     *
     * @param crc           the running sum.
     * @param stagingOffset first byte in staging.
     * @param length        bytes to add.
     */
    public void checksumStaging(final CRC32C crc, final long stagingOffset, final long length)
    {
        stagingChecksum.update(crc, stagingOffset, length);
    }

    /**
     * Compare the sum of a staged SSD read with the checksum of its residence. On a mismatch the read is over: the
     * mismatch is counted and logged, staging and the pin are released and the residence is dropped (its bytes on
     * the device are not the block's), so the caller neither copies nor promotes anything.
     *
     * @param residence     the pinned SSD residence that was read.
     * @param stagingOffset where its bytes are in staging.
     * @param length        block length.
     * @param crc32c        CRC32C of the staged bytes.
     * @return true when the bytes are the block's; false when the read was released as corrupt.
     */
    public boolean verifySsdRead(final long residence, final long stagingOffset, final int length, final int crc32c)
    {
        return ssd.verifyRead(Residence.entryId(residence), stagingOffset, length, crc32c);
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
