package io.orbitkv.manager.store;

import io.orbitkv.manager.Configuration;
import io.orbitkv.manager.ManagerContext;
import io.orbitkv.manager.status.SystemCounters;
import io.orbitkv.index.BlockChecksum;
import io.orbitkv.index.BlockIndex;
import io.orbitkv.index.BlockStore;
import io.orbitkv.index.NamespaceTable;
import io.orbitkv.index.SlabAllocator;
import io.orbitkv.ffm.MappedRegion;
import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.zip.CRC32C;
import org.agrona.BitUtil;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * The SSD tier: an index of SSD residences, the staging region every byte to or from the SSD goes through, and a
 * bounded table of I/O commands driven through an {@link SsdBackend}. One half of the {@link TieredStore}, which
 * is its only caller: run by the engine ring agent's duty cycle on the ring agent's thread, it shares the DRAM
 * index with that agent, so no state crosses threads (see docs/ssd-tier.md for why storage is a component of that
 * agent rather than an agent of its own). The DRAM index is never held here: the tiered store passes it in.
 *
 * <p>Residences: SSD copies live in their own {@link BlockStore} over file offsets. Its allocator's size classes
 * are 4 KiB multiples carved from 2 MiB pages, so each extent is 4 KiB aligned and I/O lengths round up to 4 KiB
 * within the extent; accounting is exact against {@code --ssd-bytes}. A residence is PREPARING while its write is in
 * flight and becomes READY only when the write completed with every byte (design: publish SSD evidence only after
 * the write has completed successfully). DRAM and SSD residences of one key are independent entries in two
 * indexes: evicting one never touches the other.
 *
 * <p>Checksums: a residence is reserved with the CRC32C of the DRAM entry it copies, and keeps it. A read is verified
 * by its reader against {@link #crc32c(int)} ({@link #verifyRead}); a mismatch drops the residence like an I/O error.
 *
 * <p>Back-pressure: staging, commands and the queue depth are fixed at start. An admission that finds no staging,
 * no command or no SSD room is skipped and counted (never blocks a Publish); a Read that finds none waits in its
 * operation queue and retries on the next duty cycle.
 */
public final class SsdTier implements BlockStore.EvictionListener, SsdBackend.Completions
{
    /** {@link #submitRead} found no staging or no free command: retry on a later duty cycle. */
    static final int NO_COMMAND = -1;

    private static final byte CMD_FREE = 0;
    private static final byte CMD_WRITE = 1;
    private static final byte CMD_READ = 2;
    private static final byte CMD_READ_DIRECT = 3;
    private static final int BLOCK = Configuration.SSD_BLOCK_BYTES;
    private static final long DRAIN_TIMEOUT_NS = 10_000_000_000L;

    private final BlockStore residences;
    private final SlabAllocator stagingAllocator;
    private final MappedRegion stagingRegion;
    private final MemorySegment staging;
    private final Path file;
    private final int queueDepth;
    private final Configuration.SsdAdmission admission;
    private final boolean promote;
    private final boolean directReadsWanted;
    private final String directReadsReason;
    private boolean directReads;
    private final ErrorHandler errorHandler;
    private final PrintStream log;
    private final UnsafeBuffer admitHash = new UnsafeBuffer(new byte[BlockIndex.MAX_HASH_BYTES]);
    private final UnsafeBuffer promoteHash = new UnsafeBuffer(new byte[BlockIndex.MAX_HASH_BYTES]);

    private final byte[] cmdKind;
    private final int[] cmdEntry;
    private final long[] cmdStagingOffset;
    private final long[] cmdAddress;
    private final AutoCloseable[] cmdDestinationHold;
    private final long[] cmdFileOffset;
    private final int[] cmdIoLength;
    private final SsdReadListener[] cmdListener;
    private final int[] cmdKey;
    private final boolean[] cmdOrphaned;
    private final int[] freeCommands;
    private int freeCommandCount;
    private final int[] pendingCommands;
    private long pendingHead;
    private long pendingTail;

    private final AtomicCounter bytesUsed;
    private final AtomicCounter bytesFree;
    private final AtomicCounter blocksResident;
    private final AtomicCounter reads;
    private final AtomicCounter readBytes;
    private final AtomicCounter writes;
    private final AtomicCounter writeBytes;
    private final AtomicCounter queueDepthGauge;
    private final AtomicCounter ioErrors;
    private final AtomicCounter backendGauge;
    private final AtomicCounter fallbackGauge;
    private final AtomicCounter admissions;
    private final AtomicCounter admissionSkips;
    private final AtomicCounter admissionWaits;
    private int writesInFlight;
    private long admitStagingOffset;
    private int admitEntry;
    private final AtomicCounter evictions;
    private final AtomicCounter promotions;
    private final AtomicCounter lookupHits;
    private final AtomicCounter checksumMismatches;
    private final AtomicCounter checksumBlocksVerified;
    private final AtomicCounter checksumBytesVerified;
    private final AtomicCounter directReadCount;
    private final AtomicCounter directReadFaults;

    private final AtomicCounter recoveryChecksumDrops;
    private final AtomicCounter recoveryVerified;
    private final SsdManifestLog manifestLog;
    private final boolean[] restoredUnverified;
    private final long ssdBytes;
    private final int maxBlockBytes;
    /** Residences whose index slots are loaded together before they are restored one by one. */
    private static final int RESTORE_BATCH = 16;
    /** Keeps the loads of the index slots before a restore from being optimised away. */
    private long restoreTouchSum;
    private long restoreOrderNs;
    private long restoreIndexNs;

    /** Entry ids the verification scan looks at per housekeeping tick at most (skipping is cheap, not free). */
    private static final int VERIFY_IDS_PER_TICK = 1 << 16;
    private final boolean verifyRestored;
    private final BlockChecksum verifyChecksum;
    private final CRC32C verifyCrc = new CRC32C();
    private final SsdReadListener verifyListener = this::onVerifyReadComplete;
    private final int[] verifyEntryOfKey = new int[Configuration.SSD_VERIFY_MAX_IN_FLIGHT];
    private final int[] verifyLengthOfKey = new int[Configuration.SSD_VERIFY_MAX_IN_FLIGHT];
    private final boolean[] verifyKeyBusy = new boolean[Configuration.SSD_VERIFY_MAX_IN_FLIGHT];
    private final AtomicCounter verifyState;
    private final AtomicCounter verifyPendingGauge;
    private final AtomicCounter verifyVerified;
    private final AtomicCounter verifyDropped;
    private final AtomicCounter verifyBytes;
    private int verifyCursor;
    private int verifyLimit;
    private int verifyInFlight;
    private long verifyPending;
    private long verifyBudgetBytes;
    private long verifyLastNs;
    private int commandCapacity;
    private boolean closing;

    private final MemorySegment pool;
    private final SsdBackendSupplier backendSupplier;
    private SsdBackend backend;
    private volatile boolean started;
    private volatile String description;

    public SsdTier(
        final ManagerContext ctx,
        final Path file,
        final SsdBackend backend,
        final MappedRegion stagingRegion,
        final MemorySegment pool,
        final SystemCounters counters,
        final BlockStore.ResidencyObserver residencyObserver,
        final ErrorHandler errorHandler,
        final PrintStream log)
    {
        this(ctx, file, backend, stagingRegion, pool, counters, residencyObserver, null, errorHandler, log);
    }

    /**
     * @param manifestLog records every residence sealed and gone in the tier's manifest (it passes each transition on
     *                    to {@code residencyObserver}, which it wraps); null without a manifest.
     */
    SsdTier(
        final ManagerContext ctx,
        final Path file,
        final SsdBackend backend,
        final MappedRegion stagingRegion,
        final MemorySegment pool,
        final SystemCounters counters,
        final BlockStore.ResidencyObserver residencyObserver,
        final SsdManifestLog manifestLog,
        final ErrorHandler errorHandler,
        final PrintStream log)
    {
        this.manifestLog = manifestLog;
        this.file = file;
        this.backend = backend;
        this.backendSupplier = ctx.ssdBackendSupplier();
        this.stagingRegion = stagingRegion;
        this.staging = stagingRegion.segment();
        this.pool = pool;
        this.queueDepth = ctx.ssdQueueDepth();
        this.admission = ctx.ssdAdmission();
        this.promote = ctx.ssdPromote();
        // A promoted block is copied from where it was read and verified; staging is out of the client's reach,
        // its data region is not. So promotion keeps every read in staging.
        final Configuration.SsdDirectReads directMode = ctx.ssdDirectReads();
        if (promote || Configuration.SsdDirectReads.OFF == directMode)
        {
            this.directReadsWanted = false;
            this.directReadsReason = promote ? "off (--ssd-promote reads through staging)" : "off";
        }
        else if (Configuration.SsdDirectReads.ON == directMode)
        {
            this.directReadsWanted = true;
            this.directReadsReason = "on";
        }
        else
        {
            final DataRegionPages.Verdict pages = DataRegionPages.of(ctx.clientsDir().toPath());
            this.directReadsWanted = pages.huge();
            this.directReadsReason = "auto: " + (pages.huge() ? "on, data regions on 2 MiB pages (" :
                "off, data regions on 4 KiB pages (") + pages.reason() + ")";
        }
        this.directReads = directReadsWanted && backend.readsIntoAnyAddress();
        this.errorHandler = errorHandler;
        this.log = log;
        // Residences are reported to the observer (the catalog's inventory) when sealed, once their write completed,
        // and when gone, on eviction or I/O error.
        this.residences = new BlockStore(ctx.ssdBytes(), ctx.maxBlockBytes(), ctx.indexBudgetBytes(),
            BlockStore.NO_OP_LISTENER, null == manifestLog ? residencyObserver : manifestLog);
        this.ssdBytes = ctx.ssdBytes();
        this.maxBlockBytes = ctx.maxBlockBytes();
        this.restoredUnverified = new boolean[residences.indexCapacity()];
        this.stagingAllocator = new SlabAllocator(ctx.ssdStagingBytes(), ctx.maxBlockBytes());
        this.description = backend.description();

        // One command per 4 KiB of staging at most: staging, not the command table, is what bounds admissions.
        commandCapacity = BitUtil.findNextPositivePowerOfTwo(
            (int)Math.max(4L * queueDepth, ctx.ssdStagingBytes() / BLOCK));
        cmdKind = new byte[commandCapacity];
        cmdEntry = new int[commandCapacity];
        cmdStagingOffset = new long[commandCapacity];
        cmdAddress = new long[commandCapacity];
        cmdDestinationHold = new AutoCloseable[commandCapacity];
        cmdFileOffset = new long[commandCapacity];
        cmdIoLength = new int[commandCapacity];
        cmdListener = new SsdReadListener[commandCapacity];
        cmdKey = new int[commandCapacity];
        cmdOrphaned = new boolean[commandCapacity];
        freeCommands = new int[commandCapacity];
        pendingCommands = new int[commandCapacity];
        for (int i = 0; i < commandCapacity; i++)
        {
            freeCommands[i] = commandCapacity - 1 - i;
        }
        freeCommandCount = commandCapacity;

        bytesUsed = counters.get(StoreCounter.SSD_BYTES_USED);
        bytesFree = counters.get(StoreCounter.SSD_BYTES_FREE);
        blocksResident = counters.get(StoreCounter.SSD_BLOCKS_RESIDENT);
        reads = counters.get(StoreCounter.SSD_READS);
        readBytes = counters.get(StoreCounter.SSD_READ_BYTES);
        writes = counters.get(StoreCounter.SSD_WRITES);
        writeBytes = counters.get(StoreCounter.SSD_WRITE_BYTES);
        queueDepthGauge = counters.get(StoreCounter.SSD_QUEUE_DEPTH);
        ioErrors = counters.get(StoreCounter.SSD_IO_ERRORS);
        backendGauge = counters.get(StoreCounter.SSD_BACKEND);
        fallbackGauge = counters.get(StoreCounter.SSD_FALLBACK);
        admissions = counters.get(StoreCounter.SSD_ADMISSIONS);
        admissionSkips = counters.get(StoreCounter.SSD_ADMISSION_SKIPS);
        admissionWaits = counters.get(StoreCounter.SSD_ADMISSION_WAITS);
        evictions = counters.get(StoreCounter.SSD_EVICTIONS);
        promotions = counters.get(StoreCounter.SSD_PROMOTIONS);
        lookupHits = counters.get(StoreCounter.SSD_LOOKUP_HITS);
        checksumMismatches = counters.get(StoreCounter.CHECKSUM_SSD_MISMATCHES);
        checksumBlocksVerified = counters.get(StoreCounter.CHECKSUM_BLOCKS_VERIFIED);
        checksumBytesVerified = counters.get(StoreCounter.CHECKSUM_BYTES_VERIFIED);
        directReadCount = counters.get(StoreCounter.SSD_DIRECT_READS);
        directReadFaults = counters.get(StoreCounter.SSD_DIRECT_READ_FAULTS);
        recoveryChecksumDrops = counters.get(StoreCounter.SSD_RECOVERY_CHECKSUM_DROPS);
        recoveryVerified = counters.get(StoreCounter.SSD_RECOVERY_VERIFIED);
        verifyRestored = ctx.ssdVerifyRestored();
        verifyChecksum = new BlockChecksum(staging);
        verifyState = counters.get(StoreCounter.SSD_VERIFY_STATE);
        verifyPendingGauge = counters.get(StoreCounter.SSD_VERIFY_PENDING);
        verifyVerified = counters.get(StoreCounter.SSD_VERIFY_VERIFIED);
        verifyDropped = counters.get(StoreCounter.SSD_VERIFY_DROPPED);
        verifyBytes = counters.get(StoreCounter.SSD_VERIFY_BYTES);
        fallbackGauge.setRelease(SsdBackend.KIND_FILECHANNEL == backend.kind() ? 1 : 0);
        updateGauges();
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Lifecycle, on the storage thread.

    void onStart()
    {
        try
        {
            backend.start();
        }
        catch (final RuntimeException ex)
        {
            // The probe said yes but this thread's ring was refused: keep serving on the fallback.
            log.println("orbitkv ssd: io_uring setup failed on the storage thread (" + ex.getMessage() +
                "); falling back to FileChannel");
            backend.close();
            backend = backendSupplier.fileChannel(file, queueDepth, stagingRegion, "io_uring refused: " + ex.getMessage());
            backend.start();
        }
        description = backend.description();
        directReads = directReadsWanted && backend.readsIntoAnyAddress();
        backendGauge.setRelease(backend.kind());
        fallbackGauge.setRelease(SsdBackend.KIND_FILECHANNEL == backend.kind() ? 1 : 0);
        started = true;
    }

    void onClose()
    {
        // No verification read may be queued once the backend is closed (the gauges are updated after this).
        closing = true;
        // design: staging must outlive every I/O the kernel may still be doing into it.
        backend.drain(this, DRAIN_TIMEOUT_NS);
        backend.close();
    }

    public boolean isStarted()
    {
        return started;
    }

    public String description()
    {
        return description;
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Duty cycle

    /**
     * Submit queued commands (many per system call) and handle completions.
     *
     * @param waitNs when positive and I/O is in flight, wait up to this long in the kernel for a first completion
     *               (the caller passes 0 when it has other work).
     * @return work done.
     */
    int doWork(final long waitNs)
    {
        int workCount = 0;
        final int mask = pendingCommands.length - 1;
        while (pendingTail != pendingHead)
        {
            final int cmd = pendingCommands[(int)pendingHead & mask];
            final byte kind = cmdKind[cmd];
            final boolean queued;
            if (CMD_WRITE == kind)
            {
                queued = backend.write(cmd, cmdFileOffset[cmd], cmdStagingOffset[cmd], cmdIoLength[cmd]);
            }
            else if (CMD_READ == kind)
            {
                queued = backend.read(cmd, cmdFileOffset[cmd], cmdStagingOffset[cmd], cmdIoLength[cmd]);
            }
            else
            {
                queued = backend.readInto(cmd, cmdFileOffset[cmd], cmdAddress[cmd], cmdIoLength[cmd]);
            }
            if (!queued)
            {
                break;
            }
            pendingHead++;
            workCount++;
        }
        workCount += backend.process(this, waitNs);
        return workCount;
    }

    boolean hasIoOutstanding()
    {
        return pendingTail != pendingHead || backend.inFlight() > 0;
    }

    public void onIoComplete(final int cmd, final int result)
    {
        final int entry = cmdEntry[cmd];
        final boolean ok = result == cmdIoLength[cmd];
        if (CMD_WRITE == cmdKind[cmd])
        {
            writesInFlight--;
            if (ok)
            {
                residences.seal(entry);
                writes.incrementRelease();
                writeBytes.getAndAddRelease(result);
                admissions.incrementRelease();
            }
            else
            {
                residences.abort(entry);
                onIoError("write", cmd, result);
            }
            stagingAllocator.free(cmdStagingOffset[cmd]);
        }
        else if (CMD_READ_DIRECT == cmdKind[cmd])
        {
            onDirectReadComplete(cmd, entry, result, ok);
        }
        else
        {
            if (ok)
            {
                reads.incrementRelease();
                readBytes.getAndAddRelease(result);
            }
            else
            {
                onIoError("read", cmd, result);
            }
            if (cmdOrphaned[cmd])
            {
                stagingAllocator.free(cmdStagingOffset[cmd]);
                residences.unpin(entry);
                if (!ok)
                {
                    residences.remove(entry);
                }
            }
            else
            {
                if (!ok)
                {
                    stagingAllocator.free(cmdStagingOffset[cmd]);
                    residences.unpin(entry);
                    // design: a residence whose I/O failed is dropped; a concurrent reader's pin keeps it until then.
                    residences.remove(entry);
                }
                cmdListener[cmd].onSsdReadComplete(cmdKey[cmd], cmdStagingOffset[cmd], ok);
            }
        }
        releaseCommand(cmd);
    }

    /**
     * A read into a client's data region ended. The pages were the client's: EFAULT means its mapping refused them
     * (the client shrank its region file), not that the device failed, so the residence is kept.
     */
    private void onDirectReadComplete(final int cmd, final int entry, final int result, final boolean ok)
    {
        final boolean destinationFault = -io.orbitkv.ffm.Errno.EFAULT == result;
        if (ok)
        {
            reads.incrementRelease();
            readBytes.getAndAddRelease(result);
            directReadCount.incrementRelease();
        }
        else if (destinationFault)
        {
            directReadFaults.incrementRelease();
        }
        else
        {
            onIoError("read", cmd, result);
        }
        if (!ok || cmdOrphaned[cmd])
        {
            residences.unpin(entry);
            if (!ok && !destinationFault)
            {
                // design: a residence whose I/O failed is dropped; a concurrent reader's pin keeps it until then.
                residences.remove(entry);
            }
        }
        if (cmdOrphaned[cmd])
        {
            // The reader went away while the kernel wrote into its region: only now may the mapping go.
            closeDestinationHold(cmd);
        }
        else
        {
            cmdListener[cmd].onSsdReadComplete(cmdKey[cmd], SsdReadListener.IN_DESTINATION, ok);
        }
    }

    private void closeDestinationHold(final int cmd)
    {
        final AutoCloseable hold = cmdDestinationHold[cmd];
        cmdDestinationHold[cmd] = null;
        if (null != hold)
        {
            try
            {
                hold.close();
            }
            catch (final Exception ex)
            {
                errorHandler.onError(ex);
            }
        }
    }

    private void onIoError(final String what, final int cmd, final int result)
    {
        ioErrors.incrementRelease();
        errorHandler.onError(new SsdIoException(
            "SSD " + what + " failed at file offset " + cmdFileOffset[cmd] + " length " + cmdIoLength[cmd] + ": " +
            (result < 0 ? io.orbitkv.ffm.Errno.describe(-result) : "short transfer of " + result + " bytes") +
            "; residence dropped"));
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Admission

    /**
     * The DRAM tier is about to reuse this entry's space.
     */
    public void onEvict(final BlockStore store, final int entryId)
    {
        if (Configuration.SsdAdmission.ON_EVICT == admission)
        {
            admit(store, entryId);
        }
    }

    /**
     * A DRAM entry was just sealed.
     */
    void onPublished(final BlockStore dram, final int dramEntryId)
    {
        if (Configuration.SsdAdmission.ON_PUBLISH == admission)
        {
            admit(dram, dramEntryId);
        }
    }

    private void admit(final BlockStore dram, final int dramEntryId)
    {
        final int namespaceId = dram.namespaceId(dramEntryId);
        final int hashLength = dram.hashLength(dramEntryId);
        dram.getHash(dramEntryId, admitHash, 0);
        if (BlockStore.NOT_FOUND != residences.find(namespaceId, admitHash, 0, hashLength))
        {
            return;
        }
        final int length = dram.length(dramEntryId);
        if (!reserveForAdmission(namespaceId, hashLength, length))
        {
            admissionSkips.incrementRelease();
            return;
        }
        final long stagingOffset = admitStagingOffset;
        final int entry = admitEntry;
        clearRestored(entry);
        residences.crc32c(entry, dram.crc32c(dramEntryId));
        // design: the victim's bytes are copied out before its DRAM space is reused.
        MemorySegment.copy(pool, dram.offset(dramEntryId), staging, stagingOffset, length);
        final int cmd = takeCommand();
        cmdKind[cmd] = CMD_WRITE;
        writesInFlight++;
        cmdEntry[cmd] = entry;
        cmdStagingOffset[cmd] = stagingOffset;
        cmdFileOffset[cmd] = residences.offset(entry);
        cmdIoLength[cmd] = ioLength(length);
        enqueue(cmd);
    }

    /**
     * Staging, a command and an SSD extent for a victim's copy, left in {@link #admitStagingOffset} and
     * {@link #admitEntry}. When staging, commands or SSD room (in-flight residences cannot be evicted) are all held
     * by writes still in flight, the eviction waits for their completions (design: a DRAM victim is written before
     * its space is reused; back-pressure instead of unbounded queues): the disk's write rate then bounds the
     * eviction rate. The wait is bounded by {@link Configuration#SSD_ADMISSION_WAIT_NS}; past it, or with no write
     * in flight to wait for, the admission is skipped.
     *
     * @return true when everything was reserved.
     */
    private boolean reserveForAdmission(final int namespaceId, final int hashLength, final int length)
    {
        long deadlineNs = 0;
        while (true)
        {
            if (0 != freeCommandCount)
            {
                final long stagingOffset = allocateStaging(length);
                if (SlabAllocator.NO_SPACE != stagingOffset)
                {
                    // design: SSD full -> the least recently used SSD residences go; pinned and in-flight ones never do.
                    final int entry = residences.reserve(namespaceId, admitHash, 0, hashLength, length);
                    if (entry >= 0)
                    {
                        admitStagingOffset = stagingOffset;
                        admitEntry = entry;
                        return true;
                    }
                    stagingAllocator.free(stagingOffset);
                    if (BlockStore.NO_SPACE != entry)
                    {
                        return false;
                    }
                }
            }
            if (0 == writesInFlight)
            {
                return false;
            }
            final long nowNs = System.nanoTime();
            if (0 == deadlineNs)
            {
                deadlineNs = nowNs + Configuration.SSD_ADMISSION_WAIT_NS;
                admissionWaits.incrementRelease();
            }
            else if (nowNs - deadlineNs > 0)
            {
                return false;
            }
            // Completions of writes free staging and commands and seal residences; nothing here re-enters the DRAM
            // store.
            doWork(Configuration.SSD_ADMISSION_WAIT_SLICE_NS);
        }
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Reads, called through the tiered store for keys not in DRAM.

    int findReady(final int namespaceId, final org.agrona.DirectBuffer hash, final int hashOffset, final int hashLength)
    {
        return residences.findReady(namespaceId, hash, hashOffset, hashLength);
    }

    int length(final int entry)
    {
        return residences.length(entry);
    }

    int crc32c(final int entry)
    {
        return residences.crc32c(entry);
    }

    long insertionSequence(final int entry)
    {
        return residences.insertionSequence(entry);
    }

    void pin(final int entry)
    {
        residences.pin(entry);
    }

    void unpin(final int entry)
    {
        residences.unpin(entry);
    }

    void countLookupHit()
    {
        lookupHits.incrementRelease();
    }

    /**
     * Queue the read of a pinned residence into staging, if staging and a command are free.
     *
     * @param entry    the pinned residence.
     * @param length   its block length.
     * @param listener told once the read completed.
     * @param key      handed back to the listener.
     * @return the command, for {@link #orphanRead(int)}; or {@link #NO_COMMAND} to retry later.
     */
    int submitRead(final int entry, final int length, final SsdReadListener listener, final int key)
    {
        if (0 == freeCommandCount)
        {
            return NO_COMMAND;
        }
        final long stagingOffset = allocateStaging(length);
        if (SlabAllocator.NO_SPACE == stagingOffset)
        {
            return NO_COMMAND;
        }
        final int cmd = takeCommand();
        cmdKind[cmd] = CMD_READ;
        cmdEntry[cmd] = entry;
        cmdStagingOffset[cmd] = stagingOffset;
        cmdFileOffset[cmd] = residences.offset(entry);
        cmdIoLength[cmd] = ioLength(length);
        cmdListener[cmd] = listener;
        cmdKey[cmd] = key;
        enqueue(cmd);
        return cmd;
    }

    /**
     * @return whether {@link #submitReadInto} may be used: direct reads are on, promotion is off and the backend reads
     * into any address.
     */
    boolean readsDirect()
    {
        return directReads;
    }

    /**
     * @return whether and why SSD reads go straight into data regions, for the start banner.
     */
    public String directReadsDescription()
    {
        return directReadsWanted && !directReads ? "off (the backend reads through staging only)" : directReadsReason;
    }

    /**
     * Queue the read of a pinned residence straight into memory outside staging (a client's data region), if a
     * command is free. The listener is told {@link SsdReadListener#IN_DESTINATION} as the staging offset.
     *
     * @param entry    the pinned residence, whose length is a multiple of {@link Configuration#SSD_BLOCK_BYTES}.
     * @param length   its block length.
     * @param address  the destination, {@link Configuration#SSD_DIRECT_READ_ALIGNMENT} aligned; its mapping must
     *                 stay until the completion (see {@link #orphanRead(int, AutoCloseable)}).
     * @param listener told once the read completed.
     * @param key      handed back to the listener.
     * @return the command; or {@link #NO_COMMAND} to retry later.
     */
    int submitReadInto(
        final int entry, final int length, final long address, final SsdReadListener listener, final int key)
    {
        if (0 == freeCommandCount)
        {
            return NO_COMMAND;
        }
        final int cmd = takeCommand();
        cmdKind[cmd] = CMD_READ_DIRECT;
        cmdEntry[cmd] = entry;
        cmdStagingOffset[cmd] = SsdReadListener.IN_DESTINATION;
        cmdAddress[cmd] = address;
        cmdFileOffset[cmd] = residences.offset(entry);
        cmdIoLength[cmd] = ioLength(length);
        cmdListener[cmd] = listener;
        cmdKey[cmd] = key;
        enqueue(cmd);
        return cmd;
    }

    MemorySegment staging()
    {
        return staging;
    }

    /**
     * A staged read was summed by its reader: keep it when the sum is the residence's, else release it as corrupt.
     *
     * @return true when the bytes match.
     */
    boolean verifyRead(final int entry, final long stagingOffset, final int length, final int crc32c)
    {
        final int expected = residences.crc32c(entry);
        final boolean restored = clearRestored(entry);
        if (expected == crc32c)
        {
            checksumBlocksVerified.incrementRelease();
            checksumBytesVerified.getAndAddRelease(length);
            if (restored)
            {
                recoveryVerified.incrementRelease();
            }
            return true;
        }
        checksumMismatches.incrementRelease();
        if (restored)
        {
            // design: a residence recovered from the manifest whose bytes fail their checksum is dropped, never served.
            recoveryChecksumDrops.incrementRelease();
        }
        final long fileOffset = residences.offset(entry);
        freeStaging(stagingOffset);
        residences.unpin(entry);
        // design: a residence whose bytes are corrupt is dropped; a concurrent reader's pin keeps it until then.
        residences.remove(entry);
        errorHandler.onError(new SsdChecksumException(
            "SSD read checksum mismatch at file offset " + fileOffset + " length " + length + ": expected crc32c " +
            Integer.toHexString(expected) + ", read " + Integer.toHexString(crc32c) + "; residence dropped"));
        return false;
    }

    /**
     * Every byte of a staged read reached its reader: release staging and the pin, promote if asked.
     */
    void finishRead(final BlockStore dram, final int entry, final long stagingOffset, final int length)
    {
        if (promote && SsdReadListener.IN_DESTINATION != stagingOffset)
        {
            promote(dram, entry, stagingOffset, length);
        }
        freeStaging(stagingOffset);
        residences.touch(entry);
        residences.unpin(entry);
    }

    private void promote(final BlockStore dram, final int entry, final long stagingOffset, final int length)
    {
        final int namespaceId = residences.namespaceId(entry);
        final int hashLength = residences.hashLength(entry);
        residences.getHash(entry, promoteHash, 0);
        final int dramEntry = dram.reserve(namespaceId, promoteHash, 0, hashLength, length);
        if (dramEntry >= 0)
        {
            MemorySegment.copy(staging, stagingOffset, pool, dram.offset(dramEntry), length);
            dram.seal(dramEntry, residences.crc32c(entry));
            promotions.incrementRelease();
        }
    }

    /**
     * A reader gave up on a read still in flight: the kernel may still be writing into staging, so the completion
     * releases staging and the pin, and tells no one.
     */
    void orphanRead(final int cmd)
    {
        cmdOrphaned[cmd] = true;
    }

    /**
     * A reader gave up on a read still in flight into its own memory: the kernel may still be writing there, so the
     * completion releases the pin and then closes {@code destinationHold} (which keeps the mapping alive until then).
     */
    void orphanRead(final int cmd, final AutoCloseable destinationHold)
    {
        cmdOrphaned[cmd] = true;
        cmdDestinationHold[cmd] = destinationHold;
    }

    /**
     * A reader gave up on a staged read before copying it all.
     */
    void releaseStaged(final int entry, final long stagingOffset)
    {
        freeStaging(stagingOffset);
        residences.unpin(entry);
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Gauges, tests

    void updateGauges()
    {
        // Used includes extent tail slack, so used + free is exactly --ssd-bytes.
        bytesUsed.setRelease(residences.poolBytes() - residences.freeBytes());
        bytesFree.setRelease(residences.freeBytes());
        blocksResident.setRelease(residences.blockCount());
        queueDepthGauge.setRelease(backend.inFlight() + (pendingTail - pendingHead));
        evictions.setRelease(residences.evictions());
        final long nowNs = System.nanoTime();
        if (null != manifestLog)
        {
            manifestLog.housekeeping(residences, nowNs);
        }
        verifyTick(nowNs);
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Verification scan of recovered residences, on the housekeeping tick.

    /**
     * Clear an entry's mark of a recovered residence not yet verified.
     *
     * @return whether it was marked.
     */
    private boolean clearRestored(final int entry)
    {
        if (restoredUnverified[entry])
        {
            restoredUnverified[entry] = false;
            verifyPending--;
            verifyPendingGauge.setRelease(verifyPending);
            return true;
        }
        return false;
    }

    /**
     * Queue reads of recovered residences not yet verified, in entry order: at most
     * {@link Configuration#SSD_VERIFY_MAX_IN_FLIGHT} in flight, at most {@link Configuration#SSD_VERIFY_BYTES_PER_SECOND},
     * and only while more than half the commands are free (readers and writers come first). Once past the last
     * recovered entry the scan is done and costs nothing more.
     */
    private void verifyTick(final long nowNs)
    {
        if (closing || !started)
        {
            return;
        }
        if (verifyCursor >= verifyLimit)
        {
            if (0 == verifyInFlight && StoreCounter.SSD_VERIFY_SCANNING == verifyState.get())
            {
                verifyState.setRelease(StoreCounter.SSD_VERIFY_DONE);
            }
            return;
        }
        final long burst = Math.max(maxBlockBytes, Configuration.SSD_VERIFY_BYTES_PER_SECOND / 100);
        verifyBudgetBytes = Math.min(burst,
            verifyBudgetBytes + (nowNs - verifyLastNs) * Configuration.SSD_VERIFY_BYTES_PER_SECOND / 1_000_000_000L);
        verifyLastNs = nowNs;
        final int end = (int)Math.min(verifyLimit, (long)verifyCursor + VERIFY_IDS_PER_TICK);
        while (verifyCursor < end && verifyInFlight < Configuration.SSD_VERIFY_MAX_IN_FLIGHT && verifyBudgetBytes > 0 &&
            freeCommandCount > commandCapacity / 2)
        {
            final int entry = verifyCursor;
            if (!restoredUnverified[entry])
            {
                verifyCursor++;
                continue;
            }
            if (!residences.isReady(entry))
            {
                // Gone (evicted or dropped) before the scan came to it.
                clearRestored(entry);
                verifyCursor++;
                continue;
            }
            int key = 0;
            while (verifyKeyBusy[key])
            {
                key++;
            }
            final int length = residences.length(entry);
            residences.pin(entry);
            if (NO_COMMAND == submitRead(entry, length, verifyListener, key))
            {
                // No staging or command free now: the next tick tries again.
                residences.unpin(entry);
                break;
            }
            verifyKeyBusy[key] = true;
            verifyEntryOfKey[key] = entry;
            verifyLengthOfKey[key] = length;
            verifyInFlight++;
            verifyBudgetBytes -= ioLength(length);
            verifyCursor++;
        }
    }

    private void onVerifyReadComplete(final int key, final long stagingOffset, final boolean ok)
    {
        final int entry = verifyEntryOfKey[key];
        final int length = verifyLengthOfKey[key];
        verifyKeyBusy[key] = false;
        verifyInFlight--;
        if (!ok)
        {
            // Staging and the pin are released and the residence dropped already.
            clearRestored(entry);
            verifyDropped.incrementRelease();
            return;
        }
        verifyBytes.getAndAddRelease(ioLength(length));
        if (!clearRestored(entry))
        {
            // A reader verified it meanwhile.
            releaseStaged(entry, stagingOffset);
            return;
        }
        verifyCrc.reset();
        verifyChecksum.update(verifyCrc, stagingOffset, length);
        if (verifyRead(entry, stagingOffset, length, (int)verifyCrc.getValue()))
        {
            verifyVerified.incrementRelease();
            releaseStaged(entry, stagingOffset);
        }
        else
        {
            // Dropped by verifyRead (staging and the pin released): no reader will be served these bytes.
            verifyDropped.incrementRelease();
        }
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Recovery, on the launching thread before the agent starts.

    /**
     * Put back the residences a manifest recorded, newest first (so a newer extent wins over an older one it
     * overlaps, and the LRU order is the recorded one). Their bytes are not read here: each is verified against its
     * checksum on its first read, and dropped if it fails. A residence is refused (counted by the caller as dropped)
     * when its extent lies outside this tier's layout, overlaps a newer one, its namespace is not named in the
     * manifest or cannot be registered, or the index is full.
     *
     * @param replay          the manifest replayed.
     * @param namespaces      the Manager's namespace table, where the manifest's namespaces are registered.
     * @param fileNamespaceOf filled: the manifest's namespace id of each Manager namespace id restored, else -1.
     * @return residences restored in the low 32 bits, residences dropped in the high 32 bits.
     */
    long restore(final SsdManifest.Replay replay, final NamespaceTable namespaces, final int[] fileNamespaceOf)
    {
        final int[] managerNamespaceOf = new int[replay.namespaceCount()];
        java.util.Arrays.fill(managerNamespaceOf, Integer.MIN_VALUE);
        final long orderStartNs = System.nanoTime();
        final int[] slots = replay.liveSlotsOldestFirst();
        final long indexStartNs = System.nanoTime();
        restoreOrderNs = indexStartNs - orderStartNs;
        final UnsafeBuffer hashes = new UnsafeBuffer(replay.hashes());
        long restoredCount = 0;
        long dropped = 0;
        long touched = 0;
        for (int batchEnd = slots.length; batchEnd > 0; batchEnd -= RESTORE_BATCH)
        {
            final int batchStart = Math.max(0, batchEnd - RESTORE_BATCH);
            // Load the index slots of the batch first: their cache misses overlap instead of adding up.
            for (int i = batchEnd - 1; i >= batchStart; i--)
            {
                final int slot = slots[i];
                final int namespaceId = managerNamespace(replay, slot, namespaces, managerNamespaceOf, fileNamespaceOf);
                if (namespaceId >= 0)
                {
                    touched += residences.touch(namespaceId, hashes, replay.hashOffset(slot), replay.hashLength(slot));
                }
            }
            for (int i = batchEnd - 1; i >= batchStart; i--)
            {
                final int slot = slots[i];
                final int namespaceId = managerNamespace(replay, slot, namespaces, managerNamespaceOf, fileNamespaceOf);
                final long offset = replay.offset(slot);
                final int length = replay.length(slot);
                if (namespaceId < 0 || length < 1 || length > maxBlockBytes || offset < 0 || (offset & (BLOCK - 1)) != 0 ||
                    offset + ioLength(length) > ssdBytes)
                {
                    dropped++;
                    continue;
                }
                final int entry = residences.restore(namespaceId, hashes, replay.hashOffset(slot), replay.hashLength(slot),
                    offset, length, replay.crc32c(slot), replay.sequence(slot));
                if (entry < 0)
                {
                    dropped++;
                    continue;
                }
                restoredUnverified[entry] = true;
                verifyLimit = Math.max(verifyLimit, entry + 1);
                restoredCount++;
            }
        }
        restoreTouchSum = touched;
        restoreIndexNs = System.nanoTime() - indexStartNs;
        verifyPending = restoredCount;
        verifyPendingGauge.setRelease(verifyPending);
        if (!verifyRestored || 0 == restoredCount)
        {
            verifyLimit = 0;
        }
        else
        {
            verifyState.setRelease(StoreCounter.SSD_VERIFY_SCANNING);
            verifyLastNs = System.nanoTime();
        }
        residences.sequenceAtLeast(replay.maxSequence());
        updateGauges();
        return (dropped << 32) | restoredCount;
    }

    private static int managerNamespace(
        final SsdManifest.Replay replay,
        final int slot,
        final NamespaceTable namespaces,
        final int[] managerNamespaceOf,
        final int[] fileNamespaceOf)
    {
        final int fileNamespace = replay.namespace(slot);
        if (fileNamespace < 0 || fileNamespace >= managerNamespaceOf.length)
        {
            return -1;
        }
        int namespaceId = managerNamespaceOf[fileNamespace];
        if (Integer.MIN_VALUE == namespaceId)
        {
            final byte[] name = replay.namespaceName(fileNamespace);
            namespaceId = null == name ? -1 : namespaces.lookupOrRegister(new UnsafeBuffer(name), 0, name.length);
            managerNamespaceOf[fileNamespace] = namespaceId;
            if (namespaceId >= 0 && namespaceId < fileNamespaceOf.length)
            {
                fileNamespaceOf[namespaceId] = fileNamespace;
            }
        }
        return namespaceId;
    }

    /**
     * @return time the last {@link #restore} spent ordering the live residences, then rebuilding the index (ns).
     */
    long restoreOrderNs()
    {
        return restoreOrderNs;
    }

    long restoreIndexNs()
    {
        return restoreIndexNs;
    }

    /**
     * @return payload bytes of the residences in the tier.
     */
    long payloadBytes()
    {
        return residences.payloadBytes();
    }

    BlockStore residences()
    {
        return residences;
    }

    public long stagingBytesInUse()
    {
        return stagingAllocator.allocatedBytes();
    }

    private long allocateStaging(final int length)
    {
        final int sizeClass = stagingAllocator.sizeClassOf(ioLength(length));
        return sizeClass < 0 ? SlabAllocator.NO_SPACE : stagingAllocator.allocate(sizeClass);
    }

    private void freeStaging(final long stagingOffset)
    {
        if (SsdReadListener.IN_DESTINATION != stagingOffset)
        {
            stagingAllocator.free(stagingOffset);
        }
    }

    private static int ioLength(final int length)
    {
        return (length + BLOCK - 1) & -BLOCK;
    }

    private int takeCommand()
    {
        return freeCommands[--freeCommandCount];
    }

    private void releaseCommand(final int cmd)
    {
        cmdKind[cmd] = CMD_FREE;
        cmdListener[cmd] = null;
        cmdOrphaned[cmd] = false;
        cmdDestinationHold[cmd] = null;
        freeCommands[freeCommandCount++] = cmd;
    }

    private void enqueue(final int cmd)
    {
        // Never overflows: every queued command was taken from the free list, whose size is the queue's capacity.
        pendingCommands[(int)pendingTail & (pendingCommands.length - 1)] = cmd;
        pendingTail++;
    }

    /**
     * Bytes read back from the SSD that are not the block that was written; recorded in the distinct error log.
     */
    static final class SsdChecksumException extends RuntimeException
    {
        private static final long serialVersionUID = 1L;

        SsdChecksumException(final String message)
        {
            super(message, null, false, false);
        }
    }

    /**
     * An SSD I/O that failed; recorded in the distinct error log.
     */
    static final class SsdIoException extends RuntimeException
    {
        private static final long serialVersionUID = 1L;

        SsdIoException(final String message)
        {
            super(message, null, false, false);
        }
    }
}
