package io.orbitkv.manager.ring;

import io.orbitkv.manager.Configuration;
import io.orbitkv.manager.ManagerContext;
import io.orbitkv.manager.status.SystemCounterDescriptor;
import io.orbitkv.manager.status.SystemCounters;
import io.orbitkv.manager.store.Residence;
import io.orbitkv.manager.store.TieredStore;
import io.orbitkv.codecs.EngineRingLimits;
import io.orbitkv.codecs.cnc.CncFileDescriptor;
import io.orbitkv.codecs.engine.AttachRequestDecoder;
import io.orbitkv.codecs.engine.DetachRequestDecoder;
import io.orbitkv.codecs.engine.KeyStatus;
import io.orbitkv.codecs.engine.LookupRequestDecoder;
import io.orbitkv.codecs.engine.MessageHeaderDecoder;
import io.orbitkv.codecs.engine.PublishRequestDecoder;
import io.orbitkv.codecs.engine.ReadRequestDecoder;
import io.orbitkv.codecs.engine.ReleaseRequestDecoder;
import io.orbitkv.codecs.engine.StatusCode;
import io.orbitkv.index.BlockStore;
import io.orbitkv.index.NamespaceTable;
import io.orbitkv.manager.catalog.CatalogService;
import io.orbitkv.manager.catalog.LookupAnswerSink;
import io.orbitkv.manager.catalog.PendingLookup;
import java.io.File;
import java.util.concurrent.TimeUnit;
import org.agrona.DirectBuffer;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.EpochClock;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.errors.DistinctErrorLog;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * The engine ring service: the single owner of the request ring, the client sessions, the DRAM pool and its index.
 * Engines' requests are decoded by a {@link RequestAdapter} and answered through a {@link ResponseProxy}; block
 * bytes are copied between client data regions and the pool in chunks of at most {@code --copy-chunk-bytes} per
 * duty cycle, so one large request never stalls other clients' lookups.
 *
 * <p>Bad input never escapes {@link #doWork()}: each refusal is answered where the sender can be identified,
 * counted by reason and recorded once in the distinct error log. Steady-state requests allocate nothing.
 */
public final class EngineRingAgent implements Agent, LookupAnswerSink
{
    private static final long NO_CLAIM_PID_RECLAIMING = -1L;

    private final ManyToOneRingBuffer requestRing;
    private final AtomicBuffer slotTable;
    private final ClientSession[] sessions;
    private final TieredStore store;
    private final NamespaceTable namespaces;
    private final RequestAdapter adapter;
    private final ResponseProxy responseProxy;
    private final CopyScheduler copies;
    private final ErrorHandler errorHandler;
    private final DistinctErrorLog errorLog;
    private final EpochClock epochClock;
    private final NanoClock nanoClock;
    private final File clientsDir;
    private final long clientTimeoutNs;
    private final long clientTimeoutMs;
    private final long maxDataRegionBytes;
    private final int maxBlockBytes;
    private final long timerSlackNs;
    private final RequestRejectedException[] rejections;

    private final AtomicCounter[] rejectionCounters;
    private final AtomicCounter requestsAttach;
    private final AtomicCounter requestsDetach;
    private final AtomicCounter requestsHeartbeat;
    private final AtomicCounter requestsPublish;
    private final AtomicCounter requestsLookup;
    private final AtomicCounter requestsRead;
    private final AtomicCounter requestsRelease;
    private final AtomicCounter lookupHits;
    private final AtomicCounter lookupMisses;
    private final AtomicCounter leasesActive;
    private final AtomicCounter clientsAttached;
    private final AtomicCounter clientTimeouts;
    private final AtomicCounter dataRegionFaults;
    private final AtomicCounter blocksNoSpace;
    private final AtomicCounter claimedSlotsReclaimed;
    private final AtomicCounter dutyCycles;
    private final AtomicCounter namespaceCount;

    private CatalogService catalog;
    private final int[] scratchHashOffsets = new int[EngineRingLimits.MAX_KEYS_PER_REQUEST];
    private final int[] scratchHashLengths = new int[EngineRingLimits.MAX_KEYS_PER_REQUEST];
    private final int[] scratchCapacities = new int[EngineRingLimits.MAX_KEYS_PER_REQUEST];
    private final long[] scratchResidences = new long[EngineRingLimits.MAX_KEYS_PER_REQUEST];
    private final int[] scratchLengths = new int[EngineRingLimits.MAX_KEYS_PER_REQUEST];
    private final KeyStatus[] scratchStatuses = new KeyStatus[EngineRingLimits.MAX_KEYS_PER_REQUEST];

    private long nowNs;
    private long lastHousekeepingNs;
    private long lastConsumerPosition;
    private long consumerStallSinceNs;
    private int attachedCount;

    public EngineRingAgent(
        final ManagerContext ctx,
        final CncFileDescriptor.Sections sections,
        final TieredStore store,
        final NamespaceTable namespaces,
        final SystemCounters counters,
        final ErrorHandler errorHandler,
        final DistinctErrorLog errorLog)
    {
        this.store = store;
        this.requestRing = new ManyToOneRingBuffer(sections.requestRing());
        this.slotTable = sections.slotTable();
        this.namespaces = namespaces;
        this.errorHandler = errorHandler;
        this.errorLog = errorLog;
        this.epochClock = ctx.epochClock();
        this.nanoClock = ctx.nanoClock();
        this.clientsDir = ctx.clientsDir();
        this.clientTimeoutNs = ctx.clientTimeoutNs();
        this.clientTimeoutMs = TimeUnit.NANOSECONDS.toMillis(ctx.clientTimeoutNs());
        this.maxDataRegionBytes = ctx.maxDataRegionBytes();
        this.maxBlockBytes = ctx.maxBlockBytes();
        this.timerSlackNs = ctx.agentTimerSlackNs();

        sessions = new ClientSession[sections.maxClients()];
        for (int i = 0; i < sessions.length; i++)
        {
            sessions[i] = new ClientSession(i, sections.responseRing(i));
        }

        final Rejection[] reasons = Rejection.values();
        rejections = new RequestRejectedException[reasons.length];
        rejectionCounters = new AtomicCounter[reasons.length];
        for (final Rejection reason : reasons)
        {
            rejections[reason.ordinal()] = new RequestRejectedException(reason);
            rejectionCounters[reason.ordinal()] = counters.get(SystemCounterDescriptor.rejection(reason.code()));
        }

        requestsAttach = counters.get(SystemCounterDescriptor.REQUESTS_ATTACH);
        requestsDetach = counters.get(SystemCounterDescriptor.REQUESTS_DETACH);
        requestsHeartbeat = counters.get(SystemCounterDescriptor.REQUESTS_HEARTBEAT);
        requestsPublish = counters.get(SystemCounterDescriptor.REQUESTS_PUBLISH);
        requestsLookup = counters.get(SystemCounterDescriptor.REQUESTS_LOOKUP);
        requestsRead = counters.get(SystemCounterDescriptor.REQUESTS_READ);
        requestsRelease = counters.get(SystemCounterDescriptor.REQUESTS_RELEASE);
        lookupHits = counters.get(SystemCounterDescriptor.LOOKUP_HITS);
        lookupMisses = counters.get(SystemCounterDescriptor.LOOKUP_MISSES);
        leasesActive = counters.get(SystemCounterDescriptor.LEASES_ACTIVE);
        clientsAttached = counters.get(SystemCounterDescriptor.CLIENTS_ATTACHED);
        clientTimeouts = counters.get(SystemCounterDescriptor.CLIENT_TIMEOUTS);
        dataRegionFaults = counters.get(SystemCounterDescriptor.DATA_REGION_FAULTS);
        blocksNoSpace = counters.get(SystemCounterDescriptor.REJECTED_NO_SPACE);
        claimedSlotsReclaimed = counters.get(SystemCounterDescriptor.CLAIMED_SLOTS_RECLAIMED);
        dutyCycles = counters.get(SystemCounterDescriptor.DUTY_CYCLES);
        namespaceCount = counters.get(SystemCounterDescriptor.NAMESPACES);

        adapter = new RequestAdapter(this);
        responseProxy = new ResponseProxy(counters.get(SystemCounterDescriptor.RESPONSES_DROPPED));
        copies = new CopyScheduler(store, sessions, responseProxy, ctx.copyChunkBytes(), counters);

        nowNs = nanoClock.nanoTime();
        lastHousekeepingNs = nowNs;
        consumerStallSinceNs = nowNs;
        requestRing.consumerHeartbeatTime(epochClock.time());
        updateGauges();
    }

    public String roleName()
    {
        return "orbitkv-engine-ring";
    }

    public void onStart()
    {
        if (timerSlackNs > 0)
        {
            final io.orbitkv.ffm.CallState state = new io.orbitkv.ffm.CallState();
            if (0 != io.orbitkv.ffm.LibC.prctl(state, io.orbitkv.ffm.LibC.PR_SET_TIMERSLACK, timerSlackNs, 0, 0, 0))
            {
                // Only latency is at stake: parks end as late as the kernel's default slack lets them.
                errorHandler.onError(new IllegalStateException("cannot set the agent thread's timer slack to " +
                    timerSlackNs + " ns: " + io.orbitkv.ffm.Errno.describe(state.errno())));
            }
        }
        store.onStart();
    }

    public int doWork()
    {
        nowNs = nanoClock.nanoTime();
        copies.beginCycle();
        int workCount = 0;

        try
        {
            workCount += requestRing.read(adapter, Configuration.REQUESTS_PER_CYCLE);
        }
        catch (final InternalError ex)
        {
            onCopyFault(ex);
            workCount++;
        }
        catch (final Throwable ex)
        {
            // design: a bad message never takes the Manager down; the ring has consumed the frame already.
            errorHandler.onError(ex);
            workCount++;
        }
        copies.endCopies();

        if (copies.hasQueued())
        {
            workCount += copyQueued();
        }

        if (store.hasIoOutstanding())
        {
            // design: with nothing else to do, wait briefly in the kernel for SSD completions instead of parking.
            final int ioWork = store.doIoWork(0 == workCount ? Configuration.SSD_IDLE_WAIT_NS : 0);
            // While I/O is outstanding the thread waits in io_uring_enter, never in the idle strategy's longer parks.
            workCount += ioWork > 0 || !store.hasIoOutstanding() ? ioWork : 1;
            if (ioWork > 0 && copies.hasQueued() && copies.hasBudget())
            {
                workCount += copyQueued();
            }
        }

        if (nowNs - lastHousekeepingNs >= Configuration.HOUSEKEEPING_INTERVAL_NS)
        {
            lastHousekeepingNs = nowNs;
            workCount += housekeeping();
        }

        dutyCycles.incrementRelease();
        return workCount;
    }

    private int copyQueued()
    {
        int workCount;
        try
        {
            workCount = copies.copyQueued();
        }
        catch (final InternalError ex)
        {
            onCopyFault(ex);
            workCount = 1;
        }
        copies.endCopies();
        return workCount;
    }

    public void onClose()
    {
        for (final ClientSession session : sessions)
        {
            if (ClientSession.FREE != session.state)
            {
                try
                {
                    releaseSession(session);
                }
                catch (final Throwable ex)
                {
                    errorHandler.onError(ex);
                }
            }
        }
        try
        {
            store.onClose();
        }
        catch (final Throwable ex)
        {
            errorHandler.onError(ex);
        }
        updateGauges();
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Requests, called by the RequestAdapter once the frame is structurally valid.

    void onAttach(
        final long correlationId,
        final int slotIndex,
        final long pid,
        final long dataRegionBytes,
        final DirectBuffer buffer,
        final int nameOffset,
        final int nameLength)
    {
        requestsAttach.incrementRelease();
        if (slotIndex < 0 || slotIndex >= sessions.length)
        {
            reject(Rejection.SLOT_NOT_CLAIMED);
            return;
        }
        final int slotOffset = CncFileDescriptor.Sections.slotOffset(slotIndex);
        if (pid <= 0 || slotTable.getLongVolatile(slotOffset + CncFileDescriptor.SLOT_CLAIM_PID_OFFSET) != pid)
        {
            // design: no ring to answer on; the slot belongs to someone else or to nobody.
            reject(Rejection.SLOT_NOT_CLAIMED);
            return;
        }
        final ClientSession session = sessions[slotIndex];
        if (ClientSession.FREE != session.state)
        {
            reject(Rejection.SLOT_ALREADY_ATTACHED);
            return;
        }

        final int templateId = AttachRequestDecoder.TEMPLATE_ID;
        if (!isPrintableAscii(buffer, nameOffset, nameLength))
        {
            rejectTo(session, 0, correlationId, templateId, Rejection.BAD_CLIENT_NAME);
            return;
        }
        if (dataRegionBytes <= 0 || dataRegionBytes > maxDataRegionBytes)
        {
            rejectTo(session, 0, correlationId, templateId, Rejection.DATA_REGION_SIZE);
            return;
        }
        for (final ClientSession other : sessions)
        {
            if (other.isAttached() && other.hasName(buffer, nameOffset, nameLength))
            {
                rejectTo(session, 0, correlationId, templateId, Rejection.NAME_IN_USE);
                return;
            }
        }

        final int generation = slotTable.getInt(slotOffset + CncFileDescriptor.SLOT_GENERATION_OFFSET) + 1;
        final long clientId = ((long)generation << 32) | slotIndex;
        final File regionFile = new File(clientsDir, slotIndex + "-" + generation + ".data");
        try
        {
            session.mapRegion(regionFile, dataRegionBytes);
        }
        catch (final Throwable ex)
        {
            errorHandler.onError(ex);
            rejectTo(session, 0, correlationId, templateId, Rejection.DATA_REGION_CREATE_FAILED);
            return;
        }

        session.name(buffer, nameOffset, nameLength);
        session.clientId = clientId;
        session.lastRequestNs = nowNs;
        session.state = ClientSession.ATTACHED;
        attachedCount++;

        slotTable.putInt(slotOffset + CncFileDescriptor.SLOT_GENERATION_OFFSET, generation);
        slotTable.putLong(slotOffset + CncFileDescriptor.SLOT_CLIENT_ID_OFFSET, clientId);
        slotTable.putIntRelease(slotOffset + CncFileDescriptor.SLOT_STATE_OFFSET, CncFileDescriptor.SLOT_ATTACHED);
        clientsAttached.setRelease(attachedCount);

        responseProxy.sendStatus(
            session.responseRing, clientId, correlationId, templateId, StatusCode.OK, clientId, session.regionPath());
    }

    void onDetach(final long clientId, final long correlationId)
    {
        final ClientSession session = attachedSession(clientId);
        if (null == session)
        {
            return;
        }
        requestsDetach.incrementRelease();
        releaseSession(session);
        responseProxy.sendStatus(
            session.responseRing, clientId, correlationId, DetachRequestDecoder.TEMPLATE_ID, StatusCode.OK, 0, null);

        // design: the slot is freed (ring zeroed) only once the engine has read this response, or after the timeout.
        session.state = ClientSession.DRAINING;
        session.drainDeadlineNs = nowNs + clientTimeoutNs;
    }

    void onHeartbeat(final long clientId)
    {
        final ClientSession session = attachedSession(clientId);
        if (null != session)
        {
            requestsHeartbeat.incrementRelease();
        }
    }

    void onPublish(
        final PublishRequestDecoder decoder,
        final int keyCount,
        final DirectBuffer buffer,
        final int namespaceOffset,
        final int namespaceLength)
    {
        final long clientId = decoder.clientId();
        final long correlationId = decoder.correlationId();
        final ClientSession session = attachedSession(clientId);
        if (null == session)
        {
            return;
        }
        requestsPublish.incrementRelease();
        final int templateId = PublishRequestDecoder.TEMPLATE_ID;

        if (session.operationQueueFull())
        {
            rejectTo(session, clientId, correlationId, templateId, Rejection.TOO_MANY_IN_FLIGHT);
            return;
        }

        // design: validate the whole request before anything is stored.
        final CopyOperation op = session.nextFreeOperation();
        op.reset(CopyOperation.PUBLISH, templateId, correlationId, 0L, keyCount);
        final PublishRequestDecoder.BlocksDecoder blocks = decoder.blocks();
        for (int i = 0; i < keyCount; i++)
        {
            blocks.next();
            final long offset = blocks.offset();
            final int length = blocks.length();
            scratchHashLengths[i] = blocks.hashLength();
            scratchHashOffsets[i] = decoder.limit() + RequestAdapter.HASH_LENGTH_HEADER;
            blocks.skipHash();
            if (!session.inRegion(offset, length))
            {
                rejectTo(session, clientId, correlationId, templateId, Rejection.RANGE_OUTSIDE_REGION);
                return;
            }
            if (length > maxBlockBytes)
            {
                rejectTo(session, clientId, correlationId, templateId, Rejection.BLOCK_TOO_LARGE);
                return;
            }
            op.regionOffsets[i] = offset;
            op.lengths[i] = length;
        }

        final int namespaceId = namespaces.lookupOrRegister(buffer, namespaceOffset, namespaceLength);
        if (namespaceId < 0)
        {
            rejectTo(session, clientId, correlationId, templateId, Rejection.NAMESPACE_LIMIT);
            return;
        }

        for (int i = 0; i < keyCount; i++)
        {
            final int entryId = store.reserve(
                namespaceId, buffer, scratchHashOffsets[i], scratchHashLengths[i], op.lengths[i]);
            if (entryId >= 0)
            {
                op.residences[i] = Residence.dram(entryId);
                op.statuses[i] = KeyStatus.STORED;
            }
            else if (BlockStore.ALREADY_PRESENT == entryId)
            {
                // design: idempotent re-publish; nothing copied, nothing stored twice.
                op.residences[i] = Residence.NONE;
                op.statuses[i] = KeyStatus.ALREADY_RESIDENT;
            }
            else
            {
                op.residences[i] = Residence.NONE;
                op.statuses[i] = KeyStatus.NO_SPACE;
                op.lengths[i] = 0;
                blocksNoSpace.incrementRelease();
            }
        }

        copies.start(session, op);
    }

    void onLookup(
        final LookupRequestDecoder decoder,
        final int keyCount,
        final DirectBuffer buffer,
        final int namespaceOffset,
        final int namespaceLength)
    {
        final long clientId = decoder.clientId();
        final long correlationId = decoder.correlationId();
        final ClientSession session = attachedSession(clientId);
        if (null == session)
        {
            return;
        }
        requestsLookup.incrementRelease();
        final int templateId = LookupRequestDecoder.TEMPLATE_ID;

        final int flags = decoder.flags().getRaw() & 0xFF;
        if (0 != (flags & ~(Configuration.LOOKUP_FLAG_PIN | Configuration.LOOKUP_FLAG_PEERS)))
        {
            rejectTo(session, clientId, correlationId, templateId, Rejection.UNKNOWN_FLAGS);
            return;
        }
        final boolean pin = 0 != (flags & Configuration.LOOKUP_FLAG_PIN);

        final int namespaceId = namespaces.lookup(buffer, namespaceOffset, namespaceLength);
        final LookupRequestDecoder.KeysDecoder keys = decoder.keys();
        int prefix = 0;
        boolean missed = false;
        for (int i = 0; i < keyCount; i++)
        {
            keys.next();
            final int hashLength = keys.hashLength();
            final int hashOffset = decoder.limit() + RequestAdapter.HASH_LENGTH_HEADER;
            keys.skipHash();
            scratchHashOffsets[i] = hashOffset;
            scratchHashLengths[i] = hashLength;
            if (missed)
            {
                scratchStatuses[i] = KeyStatus.NOT_ATTEMPTED;
                scratchLengths[i] = 0;
                continue;
            }
            final long residence = store.findReady(namespaceId, buffer, hashOffset, hashLength);
            if (Residence.isNone(residence))
            {
                scratchStatuses[i] = KeyStatus.MISS;
                scratchLengths[i] = 0;
                missed = true;
                continue;
            }
            // design: the tier is reported per key.
            scratchStatuses[i] = TieredStore.status(residence);
            scratchLengths[i] = store.length(residence);
            scratchResidences[prefix++] = residence;
            if (Residence.isSsd(residence))
            {
                store.countSsdLookupHit();
            }
        }
        lookupHits.getAndAddRelease(prefix);
        if (missed)
        {
            lookupMisses.incrementRelease();
        }

        long leaseId = 0;
        if (pin && prefix > 0)
        {
            if (session.leaseLimitReached())
            {
                rejectTo(session, clientId, correlationId, templateId, Rejection.LEASE_LIMIT);
                return;
            }
            if (!session.canLease(prefix))
            {
                rejectTo(session, clientId, correlationId, templateId, Rejection.PINNED_BLOCK_LIMIT);
                return;
            }
            for (int i = 0; i < prefix; i++)
            {
                store.pin(scratchResidences[i]);
            }
            leaseId = session.addLease(scratchResidences, prefix);
        }

        if (missed && 0 != (flags & Configuration.LOOKUP_FLAG_PEERS) && null != catalog &&
            startPeerLookup(clientId, correlationId, prefix, leaseId, keyCount, buffer, namespaceOffset, namespaceLength))
        {
            // Answered by answer(PendingLookup) once the candidates are known or the discovery budget ran out.
            return;
        }
        responseProxy.sendKeys(
            session.responseRing, clientId, correlationId, templateId, prefix, leaseId, scratchStatuses, scratchLengths,
            keyCount);
    }

    /**
     * Hand the keys after the local prefix to the catalog's discovery; false when it cannot take them now (the
     * lookup is then answered locally, as without the flag).
     */
    private boolean startPeerLookup(
        final long clientId,
        final long correlationId,
        final int prefix,
        final long leaseId,
        final int keyCount,
        final DirectBuffer buffer,
        final int namespaceOffset,
        final int namespaceLength)
    {
        final PendingLookup lookup = catalog.acquireLookup();
        if (null == lookup)
        {
            return false;
        }
        lookup.request(clientId, correlationId, leaseId, prefix, scratchStatuses, scratchLengths, keyCount)
            .namespace(buffer, namespaceOffset, namespaceLength);
        for (int i = prefix; i < keyCount; i++)
        {
            if (!lookup.addPeerKey(buffer, scratchHashOffsets[i], scratchHashLengths[i]))
            {
                break;
            }
        }
        catalog.startLookup(lookup);
        return true;
    }

    /**
     * A peer lookup is resolved: answer the client if it is still attached (a detached client's lease is gone).
     */
    public void answer(final PendingLookup lookup)
    {
        final ClientSession session = lookupAttached(lookup.clientId());
        if (null == session)
        {
            return;
        }
        responseProxy.sendKeys(
            session.responseRing, lookup.clientId(), lookup.correlationId(), LookupRequestDecoder.TEMPLATE_ID,
            lookup.localPrefix(), lookup.leaseId(), lookup.statuses(), lookup.lengths(), lookup.keyCount(),
            lookup.answer());
    }

    /**
     * Serve Lookup requests with the peers flag through the cluster catalog (set before the agent starts).
     */
    public void catalog(final CatalogService catalog)
    {
        this.catalog = catalog;
    }

    void onRead(
        final ReadRequestDecoder decoder,
        final int keyCount,
        final DirectBuffer buffer,
        final int namespaceOffset,
        final int namespaceLength)
    {
        final long clientId = decoder.clientId();
        final long correlationId = decoder.correlationId();
        final ClientSession session = attachedSession(clientId);
        if (null == session)
        {
            return;
        }
        requestsRead.incrementRelease();
        final int templateId = ReadRequestDecoder.TEMPLATE_ID;

        final long leaseId = decoder.leaseId();
        if (0 != leaseId && session.findLease(leaseId) < 0)
        {
            rejectTo(session, clientId, correlationId, templateId, Rejection.UNKNOWN_LEASE);
            return;
        }
        if (session.operationQueueFull())
        {
            rejectTo(session, clientId, correlationId, templateId, Rejection.TOO_MANY_IN_FLIGHT);
            return;
        }

        final CopyOperation op = session.nextFreeOperation();
        op.reset(CopyOperation.READ, templateId, correlationId, leaseId, keyCount);
        final ReadRequestDecoder.KeysDecoder keys = decoder.keys();
        for (int i = 0; i < keyCount; i++)
        {
            keys.next();
            final long dstOffset = keys.dstOffset();
            final int dstCapacity = keys.dstCapacity();
            scratchHashLengths[i] = keys.hashLength();
            scratchHashOffsets[i] = decoder.limit() + RequestAdapter.HASH_LENGTH_HEADER;
            keys.skipHash();
            if (!session.inRegion(dstOffset, dstCapacity))
            {
                rejectTo(session, clientId, correlationId, templateId, Rejection.RANGE_OUTSIDE_REGION);
                return;
            }
            op.regionOffsets[i] = dstOffset;
            scratchCapacities[i] = dstCapacity;
        }

        final int namespaceId = namespaces.lookup(buffer, namespaceOffset, namespaceLength);
        boolean stopped = false;
        for (int i = 0; i < keyCount; i++)
        {
            op.residences[i] = Residence.NONE;
            op.lengths[i] = 0;
            if (stopped)
            {
                op.statuses[i] = KeyStatus.NOT_ATTEMPTED;
                continue;
            }
            final long residence = store.findReady(namespaceId, buffer, scratchHashOffsets[i], scratchHashLengths[i]);
            if (Residence.isNone(residence))
            {
                op.statuses[i] = KeyStatus.MISS;
                stopped = true;
                continue;
            }
            final int length = store.length(residence);
            op.lengths[i] = length;
            if (length > scratchCapacities[i])
            {
                op.statuses[i] = KeyStatus.DESTINATION_TOO_SMALL;
                stopped = true;
                continue;
            }
            // design: blocks being read are pinned until their bytes reached the client, so neither tier evicts them.
            store.pin(residence);
            op.residences[i] = residence;
            op.statuses[i] = TieredStore.status(residence);
            if (Residence.isSsd(residence))
            {
                op.ssdPhases[i] = CopyOperation.SSD_NEEDS_IO;
                op.ssdKeys++;
            }
        }

        copies.start(session, op);
    }

    void onRelease(final long clientId, final long correlationId, final long leaseId)
    {
        final ClientSession session = attachedSession(clientId);
        if (null == session)
        {
            return;
        }
        requestsRelease.incrementRelease();
        final int leaseIndex = session.findLease(leaseId);
        if (leaseIndex < 0)
        {
            rejectTo(session, clientId, correlationId, ReleaseRequestDecoder.TEMPLATE_ID, Rejection.UNKNOWN_LEASE);
            return;
        }
        final int unpinned = session.removeLease(leaseIndex, store);
        responseProxy.sendStatus(
            session.responseRing, clientId, correlationId, ReleaseRequestDecoder.TEMPLATE_ID, StatusCode.OK, unpinned, null);
    }

    /**
     * A frame that failed header or structural checks. Answered only if the frame names an attached client (or, for
     * Attach, a slot claimed by the pid in it), so a forged frame can never write into someone else's ring.
     */
    void onBadFrame(final Rejection rejection, final int templateId, final DirectBuffer frame, final int length)
    {
        reject(rejection);

        final int bodyOffset = MessageHeaderDecoder.ENCODED_LENGTH;
        if (AttachRequestDecoder.TEMPLATE_ID == templateId)
        {
            if (length >= bodyOffset + AttachRequestDecoder.BLOCK_LENGTH)
            {
                final long correlationId = frame.getLong(bodyOffset);
                final int slotIndex = frame.getInt(bodyOffset + 8);
                final long pid = frame.getLong(bodyOffset + 12);
                if (slotIndex >= 0 && slotIndex < sessions.length && pid > 0 &&
                    ClientSession.FREE == sessions[slotIndex].state &&
                    slotTable.getLongVolatile(
                        CncFileDescriptor.Sections.slotOffset(slotIndex) + CncFileDescriptor.SLOT_CLAIM_PID_OFFSET) == pid)
                {
                    sendRejection(sessions[slotIndex], 0, correlationId, templateId, rejection);
                }
            }
        }
        else if (length >= bodyOffset + 16)
        {
            // Every request but Attach starts with clientId then correlationId (schema contract).
            final long clientId = frame.getLong(bodyOffset);
            final ClientSession session = lookupAttached(clientId);
            if (null != session)
            {
                session.lastRequestNs = nowNs;
                sendRejection(session, clientId, frame.getLong(bodyOffset + 8), templateId, rejection);
            }
        }
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Sessions and housekeeping

    private int housekeeping()
    {
        final long nowMs = epochClock.time();
        requestRing.consumerHeartbeatTime(nowMs);
        int workCount = 0;

        for (final ClientSession session : sessions)
        {
            switch (session.state)
            {
                case ClientSession.ATTACHED:
                    if (nowNs - session.lastRequestNs > clientTimeoutNs)
                    {
                        clientTimeouts.incrementRelease();
                        releaseSession(session);
                        freeSlot(session);
                        workCount++;
                    }
                    break;

                case ClientSession.DRAINING:
                    if (session.responseRing.consumerPosition() == session.responseRing.producerPosition() ||
                        nowNs - session.drainDeadlineNs > 0)
                    {
                        freeSlot(session);
                        workCount++;
                    }
                    break;

                default:
                    workCount += checkClaimedSlot(session, nowMs);
                    break;
            }
        }

        checkRequestRingStall();
        updateGauges();
        return workCount;
    }

    /**
     * A slot claimed by an engine that never attached (it died while attaching) is reclaimed after the client
     * liveness timeout counted from its claim time.
     */
    private int checkClaimedSlot(final ClientSession session, final long nowMs)
    {
        final int slotOffset = CncFileDescriptor.Sections.slotOffset(session.slotIndex);
        final long pid = slotTable.getLongVolatile(slotOffset + CncFileDescriptor.SLOT_CLAIM_PID_OFFSET);
        if (pid <= 0)
        {
            session.claimFirstSeenPid = 0;
            session.claimFirstSeenMs = 0;
            return 0;
        }
        if (session.claimFirstSeenPid != pid)
        {
            session.claimFirstSeenPid = pid;
            session.claimFirstSeenMs = nowMs;
        }
        final long claimTimeMs = slotTable.getLongVolatile(slotOffset + CncFileDescriptor.SLOT_CLAIM_TIME_MS_OFFSET);
        final long sinceMs = Math.max(claimTimeMs, session.claimFirstSeenMs);
        if (nowMs - sinceMs <= clientTimeoutMs)
        {
            return 0;
        }
        // Fence the slot off from new claimants while it is reset, then hand it back.
        if (!slotTable.compareAndSetLong(slotOffset + CncFileDescriptor.SLOT_CLAIM_PID_OFFSET, pid, NO_CLAIM_PID_RECLAIMING))
        {
            return 0;
        }
        resetSlot(session, slotOffset);
        claimedSlotsReclaimed.incrementRelease();
        return 1;
    }

    /**
     * An engine that died between claiming space in the request ring and committing it blocks the ring; unblock it
     * once the consumer has been stuck behind it for the client liveness timeout.
     */
    private void checkRequestRingStall()
    {
        final long consumerPosition = requestRing.consumerPosition();
        if (consumerPosition != lastConsumerPosition || requestRing.producerPosition() == consumerPosition)
        {
            lastConsumerPosition = consumerPosition;
            consumerStallSinceNs = nowNs;
        }
        else if (nowNs - consumerStallSinceNs > clientTimeoutNs)
        {
            if (requestRing.unblock())
            {
                reject(Rejection.REQUEST_RING_UNBLOCKED);
            }
            consumerStallSinceNs = nowNs;
        }
    }

    /**
     * The JVM reports SIGBUS on a mapping whose file shrank as an {@link InternalError} raised at a safepoint poll
     * shortly after the faulting copy, so it is attributed to the session copied last. The data region is the
     * engine's to break, not ours: drop that client and keep serving everyone else.
     */
    private void onCopyFault(final InternalError ex)
    {
        final ClientSession session = copies.copyingSession();
        if (null == session || ClientSession.ATTACHED != session.state)
        {
            errorHandler.onError(ex);
            return;
        }
        copies.cancelUnqueued();
        onDataRegionFault(session);
    }

    private void onDataRegionFault(final ClientSession session)
    {
        dataRegionFaults.incrementRelease();
        reject(Rejection.DATA_REGION_FAULT);
        releaseSession(session);
        freeSlot(session);
    }

    private void releaseSession(final ClientSession session)
    {
        copies.cancelQueued(session);
        session.removeAllLeases(store);
        session.unmapRegion();
        if (ClientSession.ATTACHED == session.state)
        {
            attachedCount--;
            clientsAttached.setRelease(attachedCount);
        }
    }

    private void freeSlot(final ClientSession session)
    {
        final int slotOffset = CncFileDescriptor.Sections.slotOffset(session.slotIndex);
        resetSlot(session, slotOffset);
    }

    private void resetSlot(final ClientSession session, final int slotOffset)
    {
        // design: the response ring is reset before claimPid = 0, so a new claimant always finds an empty ring.
        final AtomicBuffer ring = session.responseRingBuffer;
        ring.setMemory(0, ring.capacity(), (byte)0);
        slotTable.putLong(slotOffset + CncFileDescriptor.SLOT_CLIENT_ID_OFFSET, 0L);
        slotTable.putLong(slotOffset + CncFileDescriptor.SLOT_CLAIM_TIME_MS_OFFSET, 0L);
        slotTable.putIntRelease(slotOffset + CncFileDescriptor.SLOT_STATE_OFFSET, CncFileDescriptor.SLOT_FREE);
        slotTable.putLongRelease(slotOffset + CncFileDescriptor.SLOT_CLAIM_PID_OFFSET, 0L);
        session.reset();
    }

    private void updateGauges()
    {
        int leases = 0;
        for (final ClientSession session : sessions)
        {
            leases += session.leaseCount();
        }
        leasesActive.setRelease(leases);
        clientsAttached.setRelease(attachedCount);
        namespaceCount.setRelease(namespaces.size());
        store.updateGauges();
    }

    private ClientSession lookupAttached(final long clientId)
    {
        final long slot = clientId & 0xFFFF_FFFFL;
        if (slot >= sessions.length)
        {
            return null;
        }
        final ClientSession session = sessions[(int)slot];
        return session.isAttached() && session.clientId == clientId ? session : null;
    }

    /**
     * The attached session of a client id, refreshing its liveness; or null after counting the request as coming
     * from an unknown client (design: never write into a ring that belongs to someone else).
     */
    private ClientSession attachedSession(final long clientId)
    {
        final ClientSession session = lookupAttached(clientId);
        if (null == session)
        {
            reject(Rejection.STALE_CLIENT);
            return null;
        }
        session.lastRequestNs = nowNs;
        return session;
    }

    private void reject(final Rejection rejection)
    {
        rejectionCounters[rejection.ordinal()].incrementRelease();
        errorLog.record(rejections[rejection.ordinal()]);
    }

    private void rejectTo(
        final ClientSession session,
        final long clientId,
        final long correlationId,
        final int templateId,
        final Rejection rejection)
    {
        reject(rejection);
        sendRejection(session, clientId, correlationId, templateId, rejection);
    }

    private void sendRejection(
        final ClientSession session,
        final long clientId,
        final long correlationId,
        final int templateId,
        final Rejection rejection)
    {
        responseProxy.sendStatus(
            session.responseRing, clientId, correlationId, templateId, rejection.code(), 0, rejection.bytes());
    }

    private static boolean isPrintableAscii(final DirectBuffer buffer, final int offset, final int length)
    {
        if (length < 1 || length > EngineRingLimits.MAX_CLIENT_NAME_LENGTH)
        {
            return false;
        }
        for (int i = 0; i < length; i++)
        {
            final byte b = buffer.getByte(offset + i);
            if (b < 0x21 || b > 0x7E)
            {
                return false;
            }
        }
        return true;
    }

    // ---------------------------------------------------------------------------------------------------------------
    // For tests and the Manager.

    int attachedClients()
    {
        return attachedCount;
    }
}
