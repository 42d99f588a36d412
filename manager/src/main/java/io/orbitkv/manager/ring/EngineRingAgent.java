package io.orbitkv.manager.ring;

import io.orbitkv.index.NamespaceTable;
import io.orbitkv.manager.Configuration;
import io.orbitkv.manager.ManagerContext;
import io.orbitkv.manager.port.PeerPort;
import io.orbitkv.manager.status.SystemCounters;
import io.orbitkv.manager.store.TieredStore;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.EpochClock;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * The engine ring service's agent, made by {@link EngineRing#newAgent}: the single owner of the request ring, the
 * client sessions and the {@link TieredStore}. Each duty cycle reads requests (decoded by a {@link RequestAdapter},
 * handled by {@link RingRequests}), advances queued copies ({@link CopyScheduler}), drives SSD I/O and, when the
 * millisecond ticks, runs housekeeping: the consumer heartbeat engines watch, client liveness
 * ({@link ClientSessions}), a stalled request ring, gauges.
 *
 * <p>Bad input never escapes {@link #doWork()}: each refusal is answered where the sender can be identified,
 * counted by reason and recorded once in the distinct error log. Steady-state requests allocate nothing. Time
 * comes from the context's clocks, so a test can drive the agent one duty cycle at a time.
 */
public final class EngineRingAgent implements Agent
{
    private final ManyToOneRingBuffer requestRing;
    private final TieredStore store;
    private final NamespaceTable namespaces;
    private final ClientSessions sessions;
    private final CopyScheduler copies;
    private final RingRequests requests;
    private final RequestAdapter adapter;
    private final PeerPort fetcher;
    private final Rejections rejections;
    private final ErrorHandler errorHandler;
    private final EpochClock epochClock;
    private final NanoClock nanoClock;
    private final long clientTimeoutNs;
    private final long timerSlackNs;
    private final AtomicCounter leasesActive;
    private final AtomicCounter clientsAttached;
    private final AtomicCounter dataRegionFaults;
    private final AtomicCounter dutyCycles;
    private final AtomicCounter namespaceCount;

    private long nowNs;
    private long lastHousekeepingNs;
    private long lastConsumerPosition;
    private long consumerStallSinceNs;

    EngineRingAgent(final EngineRing ring)
    {
        final ManagerContext ctx = ring.ctx;
        final SystemCounters counters = ring.counters;
        this.requestRing = new ManyToOneRingBuffer(ring.sections.requestRing());
        this.store = ring.store;
        this.namespaces = ring.namespaces;
        this.fetcher = ring.peers;
        this.errorHandler = ring.errorHandler;
        this.epochClock = ctx.epochClock();
        this.nanoClock = ctx.nanoClock();
        this.clientTimeoutNs = ctx.clientTimeoutNs();
        this.timerSlackNs = ctx.agentTimerSlackNs();
        this.rejections = ring.rejections;
        this.copies = ring.copies;
        this.sessions = ring.sessions;
        this.requests = ring.requests;
        this.adapter = new RequestAdapter(requests);

        leasesActive = counters.get(RingCounter.LEASES_ACTIVE);
        clientsAttached = counters.get(RingCounter.CLIENTS_ATTACHED);
        dataRegionFaults = counters.get(RingCounter.DATA_REGION_FAULTS);
        dutyCycles = counters.get(RingCounter.DUTY_CYCLES);
        namespaceCount = counters.get(RingCounter.NAMESPACES);

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
        requests.nowNs(nowNs);
        copies.beginCycle();

        int workCount = readRequests();
        if (null != fetcher)
        {
            workCount += fetcher.doWork(nowNs / 1_000_000L);
        }
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

    public void onClose()
    {
        sessions.releaseAll(errorHandler);
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

    private int readRequests()
    {
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
        dataRegionFaults.incrementRelease();
        rejections.record(Rejection.DATA_REGION_FAULT);
        sessions.dropFaulted(session);
    }

    private int housekeeping()
    {
        final long nowMs = epochClock.time();
        requestRing.consumerHeartbeatTime(nowMs);
        final int workCount = sessions.checkLiveness(nowNs, nowMs);
        checkRequestRingStall();
        updateGauges();
        return workCount;
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
                rejections.record(Rejection.REQUEST_RING_UNBLOCKED);
            }
            consumerStallSinceNs = nowNs;
        }
    }

    private void updateGauges()
    {
        leasesActive.setRelease(sessions.leaseCount());
        clientsAttached.setRelease(sessions.attachedCount());
        namespaceCount.setRelease(namespaces.size());
        store.updateGauges();
    }

    int attachedClients()
    {
        return sessions.attachedCount();
    }
}
