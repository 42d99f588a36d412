package io.orbitkv.manager.transfer;

import java.lang.foreign.MemorySegment;
import java.util.zip.CRC32C;

import io.orbitkv.codecs.TransferLimits;
import io.orbitkv.index.SlabAllocator;
import io.orbitkv.manager.status.SystemCounters;
import io.orbitkv.manager.store.Residence;
import io.orbitkv.manager.store.SsdReadListener;
import io.orbitkv.manager.store.TieredStore;
import org.agrona.collections.Int2IntHashMap;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * Export staging for SSD-only residences: a region registered with the transport, in which a source prepares the
 * blocks a peer asked for from its own SSD so a grant can export them like pinned DRAM. Its bytes are the staging
 * credits of remote SSD reads, separate from the DRAM transfer budget. A preparation pins the SSD residence, reads it
 * through the SSD tier's own staging, verifies its CRC32C there (a mismatch or an I/O error drops the residence, as a
 * local read would), copies it here and unpins: the residence may then be evicted while its prepared copy waits.
 * <p>
 * A prepared copy is named by (SSD entry, insertion sequence); grants claim it (several sessions may), the last
 * release frees it. One nobody claims within {@link TransferLimits#STAGED_UNCLAIMED_TTL_MS} is freed (counted). A
 * preparation in flight cannot be cancelled: its credit returns only when its read has ended. The source never reads
 * from another peer to prepare a block.
 * <p>
 * Single threaded (the agent that owns the store); allocation free once constructed.
 */
final class SsdExports implements SsdReadListener
{
    /**
     * {@link #prepare} found no staging credit or slot, or the SSD tier had no I/O staging or command for the read
     * now: the requester should ask again later.
     */
    static final int NO_CREDIT = -1;

    static final int FREE = 0;
    static final int READING = 1;
    static final int READY = 2;

    private static final int MISSING_VALUE = -1;

    private final TieredStore store;
    private final MemorySegment region;
    private final long regionAddress;
    private final SlabAllocator credits;
    private final long unclaimedTtlNs;
    private final Int2IntHashMap slotBySsdEntry;
    private final int[] states;
    private final int[] ssdEntries;
    private final long[] sequences;
    private final long[] residences;
    private final long[] offsets;
    private final int[] lengths;
    private final int[] crcs;
    private final int[] claims;
    private final boolean[] claimed;
    private final long[] deadlinesNs;
    private final int[] freeSlots;
    private final CRC32C crc = new CRC32C();

    private final AtomicCounter prepares;
    private final AtomicCounter prepareFailures;
    private final AtomicCounter unclaimedExpired;
    private final AtomicCounter stagedBytes;

    private int freeCount;
    private int unclaimed;
    private long nowNs;
    private long nextExpiryNs = Long.MAX_VALUE;

    /**
     * @param store          the tiered store (with an SSD tier) this thread owns.
     * @param region         the export staging region, registered with the transport by the caller.
     * @param maxBlockBytes  the largest block a preparation must hold.
     * @param unclaimedTtlNs how long a prepared copy waits for a grant.
     * @param counters       the system counters.
     */
    SsdExports(
        final TieredStore store,
        final MemorySegment region,
        final int maxBlockBytes,
        final long unclaimedTtlNs,
        final SystemCounters counters)
    {
        this.store = store;
        this.region = region;
        this.regionAddress = region.address();
        this.credits = new SlabAllocator(region.byteSize(), maxBlockBytes);
        this.unclaimedTtlNs = unclaimedTtlNs;
        final int slots = (int)Math.min(TransferLimits.MAX_STAGED_BLOCKS, region.byteSize() / SlabAllocator.MIN_CLASS_BYTES);
        this.slotBySsdEntry = new Int2IntHashMap(slots * 2, 0.65f, MISSING_VALUE);
        this.states = new int[slots];
        this.ssdEntries = new int[slots];
        this.sequences = new long[slots];
        this.residences = new long[slots];
        this.offsets = new long[slots];
        this.lengths = new int[slots];
        this.crcs = new int[slots];
        this.claims = new int[slots];
        this.claimed = new boolean[slots];
        this.deadlinesNs = new long[slots];
        this.freeSlots = new int[slots];
        for (int i = 0; i < slots; i++)
        {
            freeSlots[i] = slots - 1 - i;
        }
        this.freeCount = slots;
        prepares = counters.get(TransferCounter.SOURCE_SSD_PREPARES);
        prepareFailures = counters.get(TransferCounter.SOURCE_SSD_PREPARE_FAILURES);
        unclaimedExpired = counters.get(TransferCounter.SOURCE_SSD_UNCLAIMED_EXPIRED);
        stagedBytes = counters.get(TransferCounter.SOURCE_SSD_STAGED_BYTES);
    }

    /**
     * The slot holding or preparing this residency episode of an SSD entry.
     *
     * @return the slot, or -1. A slot of an older episode of the same entry is freed here when nobody claims it.
     */
    int find(final long ssdResidence, final long insertionSequence)
    {
        final int entry = Residence.entryId(ssdResidence);
        final int slot = slotBySsdEntry.get(entry);
        if (MISSING_VALUE == slot)
        {
            return -1;
        }
        if (sequences[slot] == insertionSequence)
        {
            return slot;
        }
        if (READY == states[slot] && 0 == claims[slot])
        {
            // The entry holds another block now; the copy of its former one is of no use.
            free(slot);
        }
        return -1;
    }

    int state(final int slot)
    {
        return states[slot];
    }

    /**
     * Start preparing a live SSD residence whose sequence and length the caller checked.
     *
     * @return the slot (READING) or {@link #NO_CREDIT}.
     */
    int prepare(final long ssdResidence, final long insertionSequence, final int length)
    {
        final int entry = Residence.entryId(ssdResidence);
        if (0 == freeCount || MISSING_VALUE != slotBySsdEntry.get(entry))
        {
            // An entry's slot of another episode still claimed: its credit is not ours to reuse yet.
            return NO_CREDIT;
        }
        final int sizeClass = credits.sizeClassOf(length);
        if (sizeClass < 0)
        {
            return NO_CREDIT;
        }
        final long offset = credits.allocate(sizeClass);
        if (SlabAllocator.NO_SPACE == offset)
        {
            return NO_CREDIT;
        }
        final int slot = freeSlots[--freeCount];
        // The SSD tier reads only a pinned residence; the pin goes once its bytes are here.
        store.pin(ssdResidence);
        if (store.submitSsdRead(ssdResidence, length, this, slot) < 0)
        {
            store.unpin(ssdResidence);
            credits.free(offset);
            freeSlots[freeCount++] = slot;
            return NO_CREDIT;
        }
        states[slot] = READING;
        ssdEntries[slot] = entry;
        sequences[slot] = insertionSequence;
        residences[slot] = ssdResidence;
        offsets[slot] = offset;
        lengths[slot] = length;
        crcs[slot] = store.crc32c(ssdResidence);
        claims[slot] = 0;
        claimed[slot] = false;
        slotBySsdEntry.put(entry, slot);
        prepares.incrementRelease();
        stagedBytes.setRelease(credits.allocatedBytes());
        return slot;
    }

    public void onSsdReadComplete(final int slot, final long stagingOffset, final boolean ok)
    {
        final long residence = residences[slot];
        final int length = lengths[slot];
        if (!ok)
        {
            // The SSD tier released its staging and the pin, and dropped the residence.
            prepareFailures.incrementRelease();
            free(slot);
            return;
        }
        crc.reset();
        store.checksumStaging(crc, stagingOffset, length);
        if (!store.verifySsdRead(residence, stagingOffset, length, (int)crc.getValue()))
        {
            // Counted, logged and dropped by the SSD tier; staging and the pin are released.
            prepareFailures.incrementRelease();
            free(slot);
            return;
        }
        MemorySegment.copy(store.staging(), stagingOffset, region, offsets[slot], length);
        store.releaseStagedRead(residence, stagingOffset);
        states[slot] = READY;
        deadlinesNs[slot] = nowNs + unclaimedTtlNs;
        nextExpiryNs = Math.min(nextExpiryNs, deadlinesNs[slot]);
        unclaimed++;
    }

    /**
     * A grant exports a READY copy.
     */
    void claim(final int slot)
    {
        if (!claimed[slot])
        {
            claimed[slot] = true;
            unclaimed--;
        }
        claims[slot]++;
    }

    /**
     * A session that claimed the copy ended (released, revoked or its requester gone): the last one frees it.
     */
    void release(final int slot)
    {
        if (--claims[slot] <= 0)
        {
            free(slot);
        }
    }

    long address(final int slot)
    {
        return regionAddress + offsets[slot];
    }

    int length(final int slot)
    {
        return lengths[slot];
    }

    int crc32c(final int slot)
    {
        return crcs[slot];
    }

    /**
     * Free prepared copies nobody claimed in time.
     *
     * @return copies freed.
     */
    int doWork(final long nowNs)
    {
        this.nowNs = nowNs;
        if (0 == unclaimed || nowNs - nextExpiryNs < 0)
        {
            return 0;
        }
        int freed = 0;
        long next = Long.MAX_VALUE;
        for (int slot = 0; slot < states.length; slot++)
        {
            if (READY != states[slot] || claimed[slot])
            {
                continue;
            }
            if (nowNs - deadlinesNs[slot] >= 0)
            {
                unclaimedExpired.incrementRelease();
                free(slot);
                freed++;
            }
            else
            {
                next = Math.min(next, deadlinesNs[slot]);
            }
        }
        nextExpiryNs = next;
        return freed;
    }

    private void free(final int slot)
    {
        if (FREE == states[slot])
        {
            return;
        }
        if (READY == states[slot] && !claimed[slot])
        {
            unclaimed--;
        }
        states[slot] = FREE;
        claims[slot] = 0;
        claimed[slot] = false;
        slotBySsdEntry.remove(ssdEntries[slot]);
        credits.free(offsets[slot]);
        freeSlots[freeCount++] = slot;
        stagedBytes.setRelease(credits.allocatedBytes());
    }
}
