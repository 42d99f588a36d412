package io.orbitkv.manager.ring;

import io.orbitkv.codecs.cnc.ClientSlot;
import io.orbitkv.codecs.cnc.CncFileDescriptor;
import io.orbitkv.manager.ManagerContext;
import io.orbitkv.manager.port.FetchHandle;
import io.orbitkv.manager.port.PeerPort;
import io.orbitkv.manager.status.SystemCounters;
import io.orbitkv.manager.store.TieredStore;
import java.io.File;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * The Manager's half of the client slot protocol over the CnC slot table, and the session of every slot:
 * attachment, liveness (client timeouts, draining after Detach, reclaim of claims that never attached) and release
 * of everything a session holds.
 */
final class ClientSessions
{
    private static final long NO_CLAIM_PID_RECLAIMING = -1L;

    private final ClientSession[] sessions;
    private final ClientSlot slot = new ClientSlot();
    private final AtomicBuffer slotTable;
    private final TieredStore store;
    private final CopyScheduler copies;
    private final Rejections rejections;
    private final File clientsDir;
    private final long clientTimeoutNs;
    private final long clientTimeoutMs;
    private final AtomicCounter clientsAttached;
    private final AtomicCounter clientTimeouts;
    private final AtomicCounter reservationsExpired;
    private final AtomicCounter reservationsAborted;
    private final AtomicCounter claimedSlotsReclaimed;
    private final PeerPort fetcher;
    private int attachedCount;

    /**
     * One session per slot, each over its response ring. Made before the copy scheduler that serves them.
     *
     * @param sections the CnC sections.
     * @return the sessions, indexed by slot.
     */
    static ClientSession[] newTable(final CncFileDescriptor.Sections sections)
    {
        final ClientSession[] table = new ClientSession[sections.maxClients()];
        for (int i = 0; i < table.length; i++)
        {
            table[i] = new ClientSession(i, sections.responseRing(i));
        }
        return table;
    }

    private final EngineFileAccess fileAccess;

    ClientSessions(
        final ManagerContext ctx,
        final ClientSession[] sessions,
        final AtomicBuffer slotTable,
        final TieredStore store,
        final CopyScheduler copies,
        final Rejections rejections,
        final SystemCounters counters,
        final PeerPort fetcher)
    {
        this.fetcher = fetcher;
        this.fileAccess = ctx.engineFileAccess();
        this.sessions = sessions;
        this.slotTable = slotTable;
        this.store = store;
        this.copies = copies;
        this.rejections = rejections;
        this.clientsDir = ctx.clientsDir();
        this.clientTimeoutNs = ctx.clientTimeoutNs();
        this.clientTimeoutMs = TimeUnit.NANOSECONDS.toMillis(ctx.clientTimeoutNs());
        clientsAttached = counters.get(RingCounter.CLIENTS_ATTACHED);
        clientTimeouts = counters.get(RingCounter.CLIENT_TIMEOUTS);
        reservationsExpired = counters.get(RingCounter.RESERVATIONS_EXPIRED);
        reservationsAborted = counters.get(RingCounter.RESERVATIONS_ABORTED);
        claimedSlotsReclaimed = counters.get(RingCounter.CLAIMED_SLOTS_RECLAIMED);
    }

    int capacity()
    {
        return sessions.length;
    }

    ClientSession session(final int slotIndex)
    {
        return sessions[slotIndex];
    }

    int attachedCount()
    {
        return attachedCount;
    }

    int leaseCount()
    {
        int leases = 0;
        for (final ClientSession session : sessions)
        {
            leases += session.leaseCount();
        }
        return leases;
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Attach

    /**
     * The free session of a slot claimed by {@code pid}, or null after counting why not (design: no ring to answer
     * on when the slot belongs to someone else or to nobody).
     */
    ClientSession claimedSession(final int slotIndex, final long pid)
    {
        if (slotIndex < 0 || slotIndex >= sessions.length || pid <= 0 ||
            slot.wrap(slotTable, slotIndex).claimPidVolatile() != pid)
        {
            rejections.record(Rejection.SLOT_NOT_CLAIMED);
            return null;
        }
        final ClientSession session = sessions[slotIndex];
        if (ClientSession.FREE != session.state)
        {
            rejections.record(Rejection.SLOT_ALREADY_ATTACHED);
            return null;
        }
        return session;
    }

    /**
     * Whether a forged or malformed Attach may be answered through this slot: free, and claimed by its pid.
     */
    boolean isClaimedBy(final int slotIndex, final long pid)
    {
        return slotIndex >= 0 && slotIndex < sessions.length && pid > 0 &&
            ClientSession.FREE == sessions[slotIndex].state && slot.wrap(slotTable, slotIndex).claimPidVolatile() == pid;
    }

    boolean nameInUse(final DirectBuffer buffer, final int offset, final int length)
    {
        for (final ClientSession other : sessions)
        {
            if (other.isAttached() && other.hasName(buffer, offset, length))
            {
                return true;
            }
        }
        return false;
    }

    /**
     * Map the data region and attach the session, then publish the attachment in the slot. Slow path.
     *
     * @return the new client id.
     * @throws IOException when the data region cannot be created.
     */
    long attach(
        final ClientSession session,
        final long dataRegionBytes,
        final DirectBuffer buffer,
        final int nameOffset,
        final int nameLength,
        final long nowNs) throws IOException
    {
        slot.wrap(slotTable, session.slotIndex);
        final int generation = slot.generation() + 1;
        final long clientId = ((long)generation << 32) | session.slotIndex;
        final File regionFile = new File(clientsDir, session.slotIndex + "-" + generation + ".data");
        session.mapRegion(regionFile, dataRegionBytes);
        try
        {
            fileAccess.file(regionFile);
        }
        catch (final IllegalStateException ex)
        {
            session.unmapRegion();
            throw new IOException(ex.getMessage(), ex);
        }
        if (null != fetcher)
        {
            fetcher.registerDestination(session.region().address(), dataRegionBytes);
        }

        session.name(buffer, nameOffset, nameLength);
        session.clientId = clientId;
        session.lastRequestNs = nowNs;
        session.state = ClientSession.ATTACHED;
        attachedCount++;

        slot.attach(generation, clientId);
        clientsAttached.setRelease(attachedCount);
        return clientId;
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Requests of attached clients

    ClientSession lookupAttached(final long clientId)
    {
        final long slotIndex = clientId & 0xFFFF_FFFFL;
        if (slotIndex >= sessions.length)
        {
            return null;
        }
        final ClientSession session = sessions[(int)slotIndex];
        return session.isAttached() && session.clientId == clientId ? session : null;
    }

    /**
     * The attached session, other than {@code reader}, holding a lease its client handed to {@code reader}'s; or null.
     */
    ClientSession leaseHolder(final long leaseId, final ClientSession reader)
    {
        final int slotIndex = ClientSession.leaseSlot(leaseId);
        if (slotIndex < 0 || slotIndex >= sessions.length || slotIndex == reader.slotIndex)
        {
            return null;
        }
        final ClientSession holder = sessions[slotIndex];
        return holder.isAttached() && holder.findLease(leaseId) >= 0 ? holder : null;
    }

    /**
     * The attached session of a client id, refreshing its liveness; or null after counting the request as coming
     * from an unknown client (design: never write into a ring that belongs to someone else).
     */
    ClientSession attachedSession(final long clientId, final long nowNs)
    {
        final ClientSession session = lookupAttached(clientId);
        if (null == session)
        {
            rejections.record(Rejection.STALE_CLIENT);
            return null;
        }
        session.lastRequestNs = nowNs;
        return session;
    }

    /**
     * Detached on request and released already: its slot is freed once the engine has read the Detach response or
     * after the timeout (design: the ring is zeroed only then).
     */
    void drain(final ClientSession session, final long nowNs)
    {
        session.state = ClientSession.DRAINING;
        session.drainDeadlineNs = nowNs + clientTimeoutNs;
    }

    /**
     * The client broke its data region: drop it and keep serving everyone else.
     */
    void dropFaulted(final ClientSession session)
    {
        release(session);
        freeSlot(session);
    }

    /**
     * Give back everything a session holds: queued copies, leases, the data region.
     */
    void release(final ClientSession session)
    {
        copies.cancelQueued(session);
        if (null != fetcher)
        {
            releasePeerWork(session);
        }
        session.removeAllLeases(store);
        reservationsAborted.getAndAddRelease(session.abortAllReservations(store));
        session.unmapRegion();
        if (ClientSession.ATTACHED == session.state)
        {
            attachedCount--;
            clientsAttached.setRelease(attachedCount);
        }
    }

    /**
     * A departing client's peer work: its held sources are released, and reads still fetching into its data region
     * keep the region mapped until the last of them ended (each holds the mapping).
     */
    private void releasePeerWork(final ClientSession session)
    {
        for (int i = 0; i < session.leaseCount(); i++)
        {
            final FetchHandle held = session.leaseFetch(i);
            if (null != held)
            {
                session.leaseFetch(i, null);
                fetcher.release(held);
            }
        }
        final int reads = session.peerReadCount();
        if (reads > 0)
        {
            final MemorySegment region = session.region();
            if (null != region)
            {
                fetcher.unregisterDestination(region.address());
            }
            final RegionMapping mapping = session.regionMapping();
            for (int i = reads - 1; i >= 0; i--)
            {
                final FetchHandle fetch = session.peerRead(i);
                session.removePeerRead(fetch);
                fetcher.clientGone(fetch, null == mapping ? null : mapping.hold());
            }
        }
        else if (null != session.region())
        {
            fetcher.unregisterDestination(session.region().address());
        }
    }

    /**
     * Release every session still in use, at close.
     *
     * @param errorHandler told of a session that could not be released; the others still are.
     */
    void releaseAll(final org.agrona.ErrorHandler errorHandler)
    {
        for (final ClientSession session : sessions)
        {
            if (ClientSession.FREE != session.state)
            {
                try
                {
                    release(session);
                }
                catch (final Throwable ex)
                {
                    errorHandler.onError(ex);
                }
            }
        }
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Liveness, from housekeeping

    /**
     * Time out silent clients, free drained slots and reclaim claims that never attached.
     *
     * @return work done.
     */
    int checkLiveness(final long nowNs, final long nowMs)
    {
        int workCount = 0;
        for (final ClientSession session : sessions)
        {
            switch (session.state)
            {
                case ClientSession.ATTACHED:
                    if (session.reservedCount() > 0)
                    {
                        final int expired = session.expireReservations(store, nowNs);
                        reservationsExpired.getAndAddRelease(expired);
                        workCount += expired;
                    }
                    if (nowNs - session.lastRequestNs > clientTimeoutNs)
                    {
                        clientTimeouts.incrementRelease();
                        release(session);
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
        return workCount;
    }

    /**
     * A slot claimed by an engine that never attached (it died while attaching) is reclaimed after the client
     * liveness timeout counted from its claim time.
     */
    private int checkClaimedSlot(final ClientSession session, final long nowMs)
    {
        slot.wrap(slotTable, session.slotIndex);
        final long pid = slot.claimPidVolatile();
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
        final long sinceMs = Math.max(slot.claimTimeMsVolatile(), session.claimFirstSeenMs);
        if (nowMs - sinceMs <= clientTimeoutMs)
        {
            return 0;
        }
        // Fence the slot off from new claimants while it is reset, then hand it back.
        if (!slot.fenceClaim(pid, NO_CLAIM_PID_RECLAIMING))
        {
            return 0;
        }
        resetSlot(session);
        claimedSlotsReclaimed.incrementRelease();
        return 1;
    }

    private void freeSlot(final ClientSession session)
    {
        slot.wrap(slotTable, session.slotIndex);
        resetSlot(session);
    }

    private void resetSlot(final ClientSession session)
    {
        // design: the response ring is reset before claimPid = 0, so a new claimant always finds an empty ring.
        final AtomicBuffer ring = session.responseRingBuffer;
        ring.setMemory(0, ring.capacity(), (byte)0);
        slot.reset();
        session.reset();
    }
}
