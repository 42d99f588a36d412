package io.orbitkv.manager.ring;

import io.orbitkv.manager.port.LineageListener;
import io.orbitkv.codecs.RequestFlags;
import io.orbitkv.codecs.EngineRingLimits;
import io.orbitkv.codecs.engine.AttachRequestDecoder;
import io.orbitkv.codecs.engine.DetachRequestDecoder;
import io.orbitkv.codecs.engine.KeyStatus;
import io.orbitkv.codecs.engine.LookupRequestDecoder;
import io.orbitkv.codecs.engine.MessageHeaderDecoder;
import io.orbitkv.codecs.engine.CommitRequestDecoder;
import io.orbitkv.codecs.engine.PrepareRequestDecoder;
import io.orbitkv.codecs.engine.PublishRequestDecoder;
import io.orbitkv.codecs.engine.ReadRequestDecoder;
import io.orbitkv.codecs.engine.ReleaseRequestDecoder;
import io.orbitkv.codecs.engine.StatusCode;
import io.orbitkv.index.BlockStore;
import io.orbitkv.index.NamespaceTable;
import io.orbitkv.manager.ManagerContext;
import io.orbitkv.manager.port.FetchHandle;
import io.orbitkv.manager.port.LookupHandle;
import io.orbitkv.manager.port.PeerListener;
import io.orbitkv.manager.port.PeerPort;
import io.orbitkv.manager.status.SystemCounters;
import io.orbitkv.manager.store.Residence;
import io.orbitkv.manager.store.TieredStore;
import org.agrona.DirectBuffer;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * The engine requests, called by the {@link RequestAdapter} once a frame is structurally valid: each validates the
 * whole request against the client's session and the limits, then answers at once (Attach, Detach, Lookup,
 * Release) or hands a copy to the {@link CopyScheduler} (Publish, Read). Every refusal is counted by reason and
 * answered where the sender can be identified. Steady-state requests allocate nothing.
 */
final class RingRequests implements PeerListener
{
    private final ClientSessions sessions;
    private final TieredStore store;
    private final NamespaceTable namespaces;
    private final CopyScheduler copies;
    private final ResponseProxy responseProxy;
    private final Rejections rejections;
    private final ErrorHandler errorHandler;
    private final long maxDataRegionBytes;
    private final int maxBlockBytes;
    private final boolean poolAccess;
    private final long reservationTimeoutNs;
    private final long[] scratchPoolOffsets = new long[EngineRingLimits.MAX_KEYS_PER_REQUEST];
    private final AtomicCounter requestsPrepare;
    private final AtomicCounter requestsCommit;
    private final AtomicCounter blocksReserved;
    private final AtomicCounter commitsNotReserved;
    private final AtomicCounter requestsAttach;
    private final AtomicCounter requestsDetach;
    private final AtomicCounter requestsHeartbeat;
    private final AtomicCounter requestsPublish;
    private final AtomicCounter requestsLookup;
    private final AtomicCounter requestsRead;
    private final AtomicCounter requestsRelease;
    private final AtomicCounter lookupHits;
    private final AtomicCounter lookupMisses;
    private final AtomicCounter blocksNoSpace;
    private final long[] scratchResidences = new long[EngineRingLimits.MAX_KEYS_PER_REQUEST];
    private final int[] scratchLengths = new int[EngineRingLimits.MAX_KEYS_PER_REQUEST];
    private final KeyStatus[] scratchStatuses = new KeyStatus[EngineRingLimits.MAX_KEYS_PER_REQUEST];
    private final PeerPort fetcher;
    private final LineageListener lineage;
    private long nowNs;

    RingRequests(
        final ManagerContext ctx,
        final ClientSessions sessions,
        final TieredStore store,
        final NamespaceTable namespaces,
        final CopyScheduler copies,
        final ResponseProxy responseProxy,
        final Rejections rejections,
        final SystemCounters counters,
        final ErrorHandler errorHandler,
        final PeerPort fetcher,
        final LineageListener lineage)
    {
        this.fetcher = fetcher;
        this.lineage = lineage;
        this.sessions = sessions;
        this.store = store;
        this.namespaces = namespaces;
        this.copies = copies;
        this.responseProxy = responseProxy;
        this.rejections = rejections;
        this.errorHandler = errorHandler;
        this.maxDataRegionBytes = ctx.maxDataRegionBytes();
        this.maxBlockBytes = ctx.maxBlockBytes();
        this.poolAccess = null != ctx.poolFile();
        // A reservation lives as long as a silent client would: past that, its engine is presumed gone.
        this.reservationTimeoutNs = ctx.clientTimeoutNs();
        requestsPrepare = counters.get(RingCounter.REQUESTS_PREPARE);
        requestsCommit = counters.get(RingCounter.REQUESTS_COMMIT);
        blocksReserved = counters.get(RingCounter.BLOCKS_RESERVED);
        commitsNotReserved = counters.get(RingCounter.COMMITS_NOT_RESERVED);
        requestsAttach = counters.get(RingCounter.REQUESTS_ATTACH);
        requestsDetach = counters.get(RingCounter.REQUESTS_DETACH);
        requestsHeartbeat = counters.get(RingCounter.REQUESTS_HEARTBEAT);
        requestsPublish = counters.get(RingCounter.REQUESTS_PUBLISH);
        requestsLookup = counters.get(RingCounter.REQUESTS_LOOKUP);
        requestsRead = counters.get(RingCounter.REQUESTS_READ);
        requestsRelease = counters.get(RingCounter.REQUESTS_RELEASE);
        lookupHits = counters.get(RingCounter.LOOKUP_HITS);
        lookupMisses = counters.get(RingCounter.LOOKUP_MISSES);
        blocksNoSpace = counters.get(RingCounter.REJECTED_NO_SPACE);
    }

    /**
     * The duty cycle's time, stamped on sessions as their last request.
     */
    void nowNs(final long nowNs)
    {
        this.nowNs = nowNs;
    }

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
        final ClientSession session = sessions.claimedSession(slotIndex, pid);
        if (null == session)
        {
            return;
        }

        final int templateId = AttachRequestDecoder.TEMPLATE_ID;
        if (!isPrintableAscii(buffer, nameOffset, nameLength))
        {
            rejections.answer(session, 0, correlationId, templateId, Rejection.BAD_CLIENT_NAME);
            return;
        }
        if (dataRegionBytes <= 0 || dataRegionBytes > maxDataRegionBytes)
        {
            rejections.answer(session, 0, correlationId, templateId, Rejection.DATA_REGION_SIZE);
            return;
        }
        if (sessions.nameInUse(buffer, nameOffset, nameLength))
        {
            rejections.answer(session, 0, correlationId, templateId, Rejection.NAME_IN_USE);
            return;
        }

        final long clientId;
        try
        {
            clientId = sessions.attach(session, dataRegionBytes, buffer, nameOffset, nameLength, nowNs);
        }
        catch (final Throwable ex)
        {
            errorHandler.onError(ex);
            rejections.answer(session, 0, correlationId, templateId, Rejection.DATA_REGION_CREATE_FAILED);
            return;
        }
        responseProxy.sendStatus(
            session.responseRing, clientId, correlationId, templateId, StatusCode.OK, clientId, session.regionPath());
    }

    void onDetach(final long clientId, final long correlationId)
    {
        final ClientSession session = sessions.attachedSession(clientId, nowNs);
        if (null == session)
        {
            return;
        }
        requestsDetach.incrementRelease();
        sessions.release(session);
        responseProxy.sendStatus(
            session.responseRing, clientId, correlationId, DetachRequestDecoder.TEMPLATE_ID, StatusCode.OK, 0, null);
        sessions.drain(session, nowNs);
    }

    void onHeartbeat(final long clientId)
    {
        final ClientSession session = sessions.attachedSession(clientId, nowNs);
        if (null != session)
        {
            requestsHeartbeat.incrementRelease();
        }
    }

    void onPublish(final long clientId, final long correlationId, final RequestKeys keys)
    {
        final ClientSession session = sessions.attachedSession(clientId, nowNs);
        if (null == session)
        {
            return;
        }
        requestsPublish.incrementRelease();
        final int templateId = PublishRequestDecoder.TEMPLATE_ID;

        if (session.operationQueueFull())
        {
            rejections.answer(session, clientId, correlationId, templateId, Rejection.TOO_MANY_IN_FLIGHT);
            return;
        }

        // design: validate the whole request before anything is stored.
        final CopyOperation op = session.nextFreeOperation();
        final int keyCount = keys.count();
        op.reset(CopyOperation.PUBLISH, templateId, correlationId, 0L, keyCount);
        for (int i = 0; i < keyCount; i++)
        {
            final long offset = keys.regionOffset(i);
            final int length = keys.regionLength(i);
            if (!session.inRegion(offset, length))
            {
                rejections.answer(session, clientId, correlationId, templateId, Rejection.RANGE_OUTSIDE_REGION);
                return;
            }
            if (length > maxBlockBytes)
            {
                rejections.answer(session, clientId, correlationId, templateId, Rejection.BLOCK_TOO_LARGE);
                return;
            }
            op.regionOffsets[i] = offset;
            op.lengths[i] = length;
        }

        final DirectBuffer buffer = keys.buffer();
        final int namespaceId = namespaces.lookupOrRegister(buffer, keys.namespaceOffset(), keys.namespaceLength());
        if (namespaceId < 0)
        {
            rejections.answer(session, clientId, correlationId, templateId, Rejection.NAMESPACE_LIMIT);
            return;
        }

        for (int i = 0; i < keyCount; i++)
        {
            final int entryId = store.reserve(namespaceId, buffer, keys.hashOffset(i), keys.hashLength(i), op.lengths[i]);
            if (entryId >= 0)
            {
                op.residences[i] = Residence.dram(entryId);
                op.statuses[i] = KeyStatus.STORED;
                if (keys.hasLineage(i))
                {
                    lineage.onLineage(namespaceId, buffer, keys.hashOffset(i), keys.hashLength(i), keys.parentOffset(i),
                        keys.parentLength(i), keys.tokenOffset(i), keys.tokenCount(i));
                }
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

    /**
     * Reserve a pool slot for each block that is not resident yet; the engine writes the blocks into them through its
     * mapping of the pool and then commits. A slot is never visible before its Commit sealed it.
     */
    void onPrepare(final long clientId, final long correlationId, final RequestKeys keys)
    {
        final ClientSession session = sessions.attachedSession(clientId, nowNs);
        if (null == session)
        {
            return;
        }
        requestsPrepare.incrementRelease();
        final int templateId = PrepareRequestDecoder.TEMPLATE_ID;
        if (!poolAccess)
        {
            rejections.answer(session, clientId, correlationId, templateId, Rejection.NOT_ENABLED);
            return;
        }
        final int keyCount = keys.count();
        for (int i = 0; i < keyCount; i++)
        {
            final int length = keys.regionLength(i);
            if (length < 1)
            {
                rejections.answer(session, clientId, correlationId, templateId, Rejection.BLOCK_LENGTH);
                return;
            }
            if (length > maxBlockBytes)
            {
                rejections.answer(session, clientId, correlationId, templateId, Rejection.BLOCK_TOO_LARGE);
                return;
            }
        }
        if (!session.canReserve(keyCount))
        {
            rejections.answer(session, clientId, correlationId, templateId, Rejection.RESERVATION_LIMIT);
            return;
        }
        final DirectBuffer buffer = keys.buffer();
        final int namespaceId = namespaces.lookupOrRegister(buffer, keys.namespaceOffset(), keys.namespaceLength());
        if (namespaceId < 0)
        {
            rejections.answer(session, clientId, correlationId, templateId, Rejection.NAMESPACE_LIMIT);
            return;
        }

        final long deadlineNs = nowNs + reservationTimeoutNs;
        int reserved = 0;
        for (int i = 0; i < keyCount; i++)
        {
            final int length = keys.regionLength(i);
            final int entryId = store.reserve(namespaceId, buffer, keys.hashOffset(i), keys.hashLength(i), length);
            if (entryId >= 0)
            {
                session.addReservation(entryId, deadlineNs);
                scratchStatuses[i] = KeyStatus.RESERVED;
                scratchLengths[i] = length;
                scratchPoolOffsets[i] = store.offset(entryId);
                reserved++;
            }
            else
            {
                // Resident, or being stored by someone: the engine skips it, as an idempotent publish would.
                scratchStatuses[i] = BlockStore.ALREADY_PRESENT == entryId ? KeyStatus.ALREADY_RESIDENT : KeyStatus.NO_SPACE;
                scratchLengths[i] = 0;
                scratchPoolOffsets[i] = -1;
                if (BlockStore.ALREADY_PRESENT != entryId)
                {
                    blocksNoSpace.incrementRelease();
                }
            }
        }
        blocksReserved.getAndAddRelease(reserved);
        responseProxy.sendSlots(session.responseRing, clientId, correlationId, templateId, reserved, scratchStatuses,
            scratchLengths, scratchPoolOffsets, keyCount);
    }

    /**
     * Seal the blocks this client wrote into the slots its Prepare reserved: each is summed over the pool as it is now
     * (in copy-chunk steps across duty cycles, like a Publish's copy) and then made visible. A key the client holds no
     * reservation for (never prepared, expired, or another client's) is answered {@code MISS}.
     */
    void onCommit(final long clientId, final long correlationId, final RequestKeys keys)
    {
        final ClientSession session = sessions.attachedSession(clientId, nowNs);
        if (null == session)
        {
            return;
        }
        requestsCommit.incrementRelease();
        final int templateId = CommitRequestDecoder.TEMPLATE_ID;
        if (!poolAccess)
        {
            rejections.answer(session, clientId, correlationId, templateId, Rejection.NOT_ENABLED);
            return;
        }
        if (session.operationQueueFull())
        {
            rejections.answer(session, clientId, correlationId, templateId, Rejection.TOO_MANY_IN_FLIGHT);
            return;
        }
        final DirectBuffer buffer = keys.buffer();
        final int namespaceId = namespaces.lookup(buffer, keys.namespaceOffset(), keys.namespaceLength());
        final int keyCount = keys.count();
        final CopyOperation op = session.nextFreeOperation();
        op.reset(CopyOperation.COMMIT, templateId, correlationId, 0L, keyCount);
        for (int i = 0; i < keyCount; i++)
        {
            final int entryId = namespaceId < 0 ? -1 :
                store.dram().find(namespaceId, buffer, keys.hashOffset(i), keys.hashLength(i));
            if (entryId >= 0 && session.takeReservation(entryId))
            {
                op.residences[i] = Residence.dram(entryId);
                op.statuses[i] = KeyStatus.STORED;
                op.lengths[i] = store.dram().length(entryId);
            }
            else
            {
                op.residences[i] = Residence.NONE;
                op.statuses[i] = KeyStatus.MISS;
                op.lengths[i] = 0;
                commitsNotReserved.incrementRelease();
            }
        }
        copies.start(session, op);
    }

    void onLookup(final long clientId, final long correlationId, final int flags, final RequestKeys keys)
    {
        final ClientSession session = sessions.attachedSession(clientId, nowNs);
        if (null == session)
        {
            return;
        }
        requestsLookup.incrementRelease();
        final int templateId = LookupRequestDecoder.TEMPLATE_ID;

        if (0 != (flags & ~RequestFlags.LOOKUP_KNOWN))
        {
            rejections.answer(session, clientId, correlationId, templateId, Rejection.UNKNOWN_FLAGS);
            return;
        }
        final boolean pin = 0 != (flags & RequestFlags.LOOKUP_PIN);

        final DirectBuffer buffer = keys.buffer();
        final int keyCount = keys.count();
        final int namespaceId = namespaces.lookup(buffer, keys.namespaceOffset(), keys.namespaceLength());
        int prefix = 0;
        boolean missed = false;
        for (int i = 0; i < keyCount; i++)
        {
            if (missed)
            {
                scratchStatuses[i] = KeyStatus.NOT_ATTEMPTED;
                scratchLengths[i] = 0;
                continue;
            }
            final long residence = store.findReady(namespaceId, buffer, keys.hashOffset(i), keys.hashLength(i));
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
                rejections.answer(session, clientId, correlationId, templateId, Rejection.LEASE_LIMIT);
                return;
            }
            if (!session.canLease(prefix))
            {
                rejections.answer(session, clientId, correlationId, templateId, Rejection.PINNED_BLOCK_LIMIT);
                return;
            }
            for (int i = 0; i < prefix; i++)
            {
                store.pin(scratchResidences[i]);
            }
            leaseId = session.addLease(scratchResidences, prefix);
        }

        if (missed && 0 != (flags & RequestFlags.LOOKUP_PEERS) && null != fetcher &&
            startPeerLookup(clientId, correlationId, prefix, leaseId, pin, namespaceId, keys))
        {
            // Answered by onLookupAnswered once the candidates are known or the discovery budget ran out, or by
            // onFetchAnswered once the sources of a pinned lookup granted or refused their spans.
            return;
        }
        responseProxy.sendKeys(
            session.responseRing, clientId, correlationId, templateId, prefix, leaseId, scratchStatuses, scratchLengths,
            keyCount);
    }

    /**
     * Hand the keys after the local prefix to the peer side; false when it cannot take them now (the lookup is then
     * answered locally, as without the flag).
     */
    private boolean startPeerLookup(
        final long clientId,
        final long correlationId,
        final int prefix,
        final long leaseId,
        final boolean pin,
        final int namespaceId,
        final RequestKeys keys)
    {
        final int keyCount = keys.count();
        final DirectBuffer buffer = keys.buffer();
        final LookupHandle lookup = fetcher.acquireLookup();
        if (null == lookup)
        {
            return false;
        }
        lookup.request(clientId, correlationId, leaseId, prefix, scratchStatuses, scratchLengths, keyCount)
            .namespace(buffer, keys.namespaceOffset(), keys.namespaceLength())
            .pinned(pin)
            .namespaceId(namespaceId);
        for (int i = prefix; i < keyCount; i++)
        {
            if (!lookup.addPeerKey(buffer, keys.hashOffset(i), keys.hashLength(i)))
            {
                break;
            }
        }
        fetcher.startLookup(lookup, this);
        return true;
    }

    /**
     * A peer lookup is resolved: answer the client if it is still attached (a detached client's lease is gone).
     */
    public void onLookupAnswered(final LookupHandle lookup)
    {
        final ClientSession session = sessions.lookupAttached(lookup.clientId());
        if (null == session)
        {
            return;
        }
        responseProxy.sendKeys(
            session.responseRing, lookup.clientId(), lookup.correlationId(), LookupRequestDecoder.TEMPLATE_ID,
            lookup.localPrefix(), lookup.leaseId(), lookup.statuses(), lookup.lengths(), lookup.reasons(),
            lookup.keyCount(), lookup.answer());
    }

    /**
     * A peer fetch has its answer: a Read restored its peer keys (or stopped), a pinned Lookup holds its sources.
     */
    public void onFetchAnswered(final FetchHandle fetch)
    {
        final ClientSession session = sessions.lookupAttached(fetch.clientId());
        if (FetchHandle.READ == fetch.kind())
        {
            if (null != session)
            {
                session.removePeerRead(fetch);
                responseProxy.sendKeys(session.responseRing, fetch.clientId(), fetch.correlationId(),
                    fetch.templateId(), fetch.value(), 0L, fetch.statuses(), fetch.lengths(), fetch.reasons(),
                    fetch.rowCount(), fetch.answer());
            }
            return;
        }
        if (null == session)
        {
            fetcher.release(fetch);
            return;
        }
        long leaseId = fetch.leaseId();
        long value = fetch.value();
        if (fetch.deliveredKeys() > 0)
        {
            int leaseIndex = 0 == leaseId ? -1 : session.findLease(leaseId);
            if (leaseIndex < 0 && 0 == leaseId && !session.leaseLimitReached())
            {
                leaseId = session.addLease(scratchResidences, 0);
                leaseIndex = session.findLease(leaseId);
            }
            if (leaseIndex >= 0)
            {
                session.leaseFetch(leaseIndex, fetch);
            }
            else
            {
                // No lease to hold the sources under (the limit, or the lease went meanwhile): a hint only.
                fetcher.release(fetch);
                value = fetch.firstRow();
            }
        }
        else
        {
            fetcher.release(fetch);
        }
        responseProxy.sendKeys(session.responseRing, fetch.clientId(), fetch.correlationId(), fetch.templateId(),
            value, leaseId, fetch.statuses(), fetch.lengths(), fetch.reasons(), fetch.rowCount(), fetch.answer());
    }

    void onRead(final long clientId, final long correlationId, final long leaseId, final int flags, final RequestKeys keys)
    {
        final ClientSession session = sessions.attachedSession(clientId, nowNs);
        if (null == session)
        {
            return;
        }
        requestsRead.incrementRelease();
        final int templateId = ReadRequestDecoder.TEMPLATE_ID;

        if (0 != (flags & ~RequestFlags.READ_KNOWN))
        {
            rejections.answer(session, clientId, correlationId, templateId, Rejection.UNKNOWN_FLAGS);
            return;
        }

        // A lease another client of this Manager holds and handed over (an engine's scheduler pins, its worker
        // reads): the Read takes it over once it is accepted, and releases it when it completes, as its own.
        final ClientSession leaseHolder =
            0 == leaseId || session.findLease(leaseId) >= 0 ? null : sessions.leaseHolder(leaseId, session);
        if (0 != leaseId && null == leaseHolder && session.findLease(leaseId) < 0)
        {
            rejections.answer(session, clientId, correlationId, templateId, Rejection.UNKNOWN_LEASE);
            return;
        }
        if (session.operationQueueFull())
        {
            rejections.answer(session, clientId, correlationId, templateId, Rejection.TOO_MANY_IN_FLIGHT);
            return;
        }

        final CopyOperation op = session.nextFreeOperation();
        final int keyCount = keys.count();
        op.reset(CopyOperation.READ, templateId, correlationId, leaseId, keyCount);
        for (int i = 0; i < keyCount; i++)
        {
            final long dstOffset = keys.regionOffset(i);
            if (!session.inRegion(dstOffset, keys.regionLength(i)))
            {
                rejections.answer(session, clientId, correlationId, templateId, Rejection.RANGE_OUTSIDE_REGION);
                return;
            }
            op.regionOffsets[i] = dstOffset;
        }
        if (null != leaseHolder)
        {
            final int heldIndex = leaseHolder.findLease(leaseId);
            if (session.leaseLimitReached())
            {
                rejections.answer(session, clientId, correlationId, templateId, Rejection.LEASE_LIMIT);
                return;
            }
            if (!session.canLease(leaseHolder.leaseBlocks(heldIndex)))
            {
                rejections.answer(session, clientId, correlationId, templateId, Rejection.PINNED_BLOCK_LIMIT);
                return;
            }
            final FetchHandle held = leaseHolder.leaseFetch(heldIndex);
            if (null != held)
            {
                held.handOver(clientId);
            }
            session.takeLease(leaseHolder, heldIndex);
        }

        final DirectBuffer buffer = keys.buffer();
        final int namespaceId = namespaces.lookup(buffer, keys.namespaceOffset(), keys.namespaceLength());
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
            final long residence = store.findReady(namespaceId, buffer, keys.hashOffset(i), keys.hashLength(i));
            if (Residence.isNone(residence))
            {
                op.statuses[i] = KeyStatus.MISS;
                stopped = true;
                continue;
            }
            final int length = store.length(residence);
            op.lengths[i] = length;
            if (length > keys.regionLength(i))
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
                op.direct[i] = false;
                op.ssdKeys++;
            }
        }

        if (null != fetcher)
        {
            attachPeerPart(session, op, leaseId, 0 != (flags & RequestFlags.READ_PEERS), keys);
        }
        copies.start(session, op);
    }

    /**
     * Give a Read whose local prefix ended at a MISS its peer part: the held sources of its lease when they hold
     * the following keys, else (with the peers flag) a new fetch of them. It starts once the local part ended.
     */
    private void attachPeerPart(
        final ClientSession session, final CopyOperation op, final long leaseId, final boolean peers,
        final RequestKeys keys)
    {
        int first = 0;
        while (first < op.keyCount && KeyStatus.MISS != op.statuses[first])
        {
            if (KeyStatus.NOT_ATTEMPTED == op.statuses[first] || KeyStatus.DESTINATION_TOO_SMALL == op.statuses[first])
            {
                return;
            }
            first++;
        }
        if (first == op.keyCount)
        {
            return;
        }
        final DirectBuffer buffer = keys.buffer();
        final long regionAddress = session.region().address();
        final int leaseIndex = 0 == leaseId ? -1 : session.findLease(leaseId);
        final FetchHandle held = leaseIndex < 0 ? null : session.leaseFetch(leaseIndex);
        if (null != held)
        {
            int matched = 0;
            final int heldKeys = held.deliveredKeys();
            while (matched < heldKeys && first + matched < op.keyCount &&
                held.sameKey(matched, buffer, keys.hashOffset(first + matched), keys.hashLength(first + matched)))
            {
                held.destination(matched, regionAddress + keys.regionOffset(first + matched),
                    keys.regionLength(first + matched));
                matched++;
            }
            if (matched > 0 && held.firstRow() == first)
            {
                session.leaseFetch(leaseIndex, null);
                fetcher.destinationRegion(held, regionAddress, session.regionChecksum());
                op.peerFetch = held;
                op.peerHeld = true;
                op.peerKeys = matched;
                return;
            }
        }
        if (!peers)
        {
            return;
        }
        final FetchHandle fetch = fetcher.acquireFetch(this);
        if (null == fetch)
        {
            return;
        }
        fetch.request(FetchHandle.READ, session.clientId, op.correlationId, op.templateId, 0L, first, op.keyCount,
            op.statuses, op.lengths).namespace(buffer, keys.namespaceOffset(), keys.namespaceLength());
        for (int i = first; i < op.keyCount; i++)
        {
            if (!fetch.addKey(buffer, keys.hashOffset(i), keys.hashLength(i), regionAddress + keys.regionOffset(i),
                keys.regionLength(i)))
            {
                break;
            }
        }
        fetcher.destinationRegion(fetch, regionAddress, session.regionChecksum());
        op.peerFetch = fetch;
    }

    void onRelease(final long clientId, final long correlationId, final long leaseId)
    {
        final ClientSession session = sessions.attachedSession(clientId, nowNs);
        if (null == session)
        {
            return;
        }
        requestsRelease.incrementRelease();
        final int leaseIndex = session.findLease(leaseId);
        if (leaseIndex < 0)
        {
            rejections.answer(session, clientId, correlationId, ReleaseRequestDecoder.TEMPLATE_ID, Rejection.UNKNOWN_LEASE);
            return;
        }
        final FetchHandle held = session.leaseFetch(leaseIndex);
        if (null != held)
        {
            session.leaseFetch(leaseIndex, null);
            fetcher.release(held);
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
        rejections.record(rejection);

        final int bodyOffset = MessageHeaderDecoder.ENCODED_LENGTH;
        if (AttachRequestDecoder.TEMPLATE_ID == templateId)
        {
            if (length >= bodyOffset + AttachRequestDecoder.BLOCK_LENGTH)
            {
                final long correlationId = frame.getLong(bodyOffset);
                final int slotIndex = frame.getInt(bodyOffset + 8);
                final long pid = frame.getLong(bodyOffset + 12);
                if (sessions.isClaimedBy(slotIndex, pid))
                {
                    rejections.send(sessions.session(slotIndex), 0, correlationId, templateId, rejection);
                }
            }
        }
        else if (length >= bodyOffset + 16)
        {
            // Every request but Attach starts with clientId then correlationId (schema contract).
            final long clientId = frame.getLong(bodyOffset);
            final ClientSession session = sessions.lookupAttached(clientId);
            if (null != session)
            {
                session.lastRequestNs = nowNs;
                rejections.send(session, clientId, frame.getLong(bodyOffset + 8), templateId, rejection);
            }
        }
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
}
