package io.orbitkv.manager.peer;

import java.util.ArrayList;
import java.util.Iterator;

import io.aeron.ExclusivePublication;
import io.aeron.FragmentAssembler;
import io.aeron.Image;
import io.aeron.Subscription;
import io.aeron.logbuffer.Header;
import io.orbitkv.codecs.catalog.CatalogStatus;
import org.agrona.DirectBuffer;
import org.agrona.collections.Long2ObjectHashMap;
import org.agrona.collections.LongHashSet;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentInvoker;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * Duty cycle of the peer transport, shaped like the driver's conductor: read the clock once, service the Aeron client
 * (when it runs invoked), poll the peer subscription with a fragment limit, drain images that became available or
 * unavailable (queued by the client's callbacks, which must not create publications themselves), and on each
 * millisecond tick advance sessions waiting for a response channel and the {@link PeerPublisher}'s clients waiting
 * for their connect answer. Made once by {@link PeerTransport#newAgent} with the frame handlers of the schemas its
 * {@link PeerAdapter} does not decode; sending is the publisher's, which also keeps the session table.
 * <p>
 * Sessions follow the archive's control protocol: a requester's PeerConnect names its response channel; this agent
 * creates (or reuses from the {@link PublicationLru}) a publication to it, and once connected answers with a
 * CatalogResponse carrying the session id it assigned. Every later request carries that session id. Mode agnostic:
 * dedicated, composite or invoked. The public methods must be called on the agent's thread.
 */
public final class PeerAgent implements Agent
{
    /**
     * Fragments per poll: bounds the time one duty cycle spends on inbound traffic.
     */
    static final int FRAGMENT_LIMIT = 32;

    /**
     * Driver duty cycles run back to back while they find work: the driver receives one datagram per endpoint and
     * sends a couple per publication in each cycle, so a 16-fragment frame would otherwise take 16 agent cycles.
     */
    static final int DRIVER_INVOKE_LIMIT = 16;

    /**
     * After the driver last found work (a datagram in or out), it runs in every duty cycle for this long: traffic
     * comes in bursts (a batch's fragments, a query's answers) and each cycle of delay is a hop's latency.
     */
    static final long DRIVER_HOT_WINDOW_NS = 1_000_000L;

    /**
     * Within the hot window, driver cycles that find nothing are allowed this many times in a row before the driver
     * drops to the quiet interval: an agent spinning idle would otherwise spend its whole hot window on empty polls.
     */
    static final int DRIVER_HOT_EMPTY_LIMIT = 8;

    /**
     * Outside the hot window the driver runs at most this often. Every driver cycle polls its sockets (a few system
     * calls, ~10 us here), so running it in every cycle of an agent busy with engine rings would spend the thread on
     * empty polls; this bounds the first datagram's wait after a quiet spell instead.
     */
    static final long DRIVER_QUIET_INTERVAL_NS = 100_000L;

    /**
     * Queued image events beyond this are dropped (the count is only observability).
     */
    static final int IMAGE_QUEUE_CAPACITY = 1024;

    /**
     * Sessions this peer serves at once: one per (requester, response channel) in the member view of at most 4,096
     * members. A requester reconnecting replaces its previous session; beyond the bound a connect is refused.
     */
    static final int MAX_SESSIONS = 4096;

    private final AgentInvoker clientInvoker;
    private final AgentInvoker driverInvoker;
    private final PeerWakeup wakeup;
    private final Subscription subscription;
    private final FragmentAssembler assembler;
    private final ImagePollErrors pollErrors;
    private final PeerAdapter adapter;
    private final PeerPublisher publisher;
    private final PeerProxy proxy;
    private final PeerCounters counters;
    private final NanoClock nanoClock;
    private final long connectTimeoutMs;
    private final ManyToOneConcurrentArrayQueue<Image> availableImages;
    private final ManyToOneConcurrentArrayQueue<Image> unavailableImages;
    private final int termLength;
    private final AtomicCounter imagesRejected;
    private final AtomicCounter imagePollErrors;
    private final LongHashSet rejectedImages = new LongHashSet();
    private int imageRoundRobin;

    private final Long2ObjectHashMap<PeerSession> sessions;
    private final ArrayList<PeerSession> pendingSessions = new ArrayList<>();

    private long driverWorkAtNs;
    private int driverEmptyInvokes;
    private long driverDueAtNs;
    private long offeredAtDriverRun;
    private long nextSessionId;
    private long lastTickMs;
    private long nowMs;

    PeerAgent(
        final PeerTransport.Context ctx,
        final PeerTransport.Media media,
        final RouteValidator routes,
        final PeerFrameHandler... frameHandlers)
    {
        this.wakeup = media.wakeup;
        this.clientInvoker = media.aeron.conductorAgentInvoker();
        this.driverInvoker = media.driverInvoker;
        this.counters = media.counters;
        this.publisher = media.publisher;
        this.proxy = publisher.proxy();
        this.subscription = media.subscription;
        this.availableImages = media.availableImages;
        this.unavailableImages = media.unavailableImages;
        this.nanoClock = ctx.nanoClock();
        this.connectTimeoutMs = ctx.connectTimeoutMs();
        this.sessions = publisher.sessions();
        this.termLength = ctx.termLength();
        this.imagesRejected = ctx.systemCounters().get(PeerGuardCounter.IMAGES_REJECTED);
        this.imagePollErrors = ctx.systemCounters().get(PeerGuardCounter.IMAGE_POLL_ERRORS);
        this.adapter =
            new PeerAdapter(this, publisher, routes, counters, ctx.errorHandler(), ctx.streamId(), media.verifier,
                frameHandlers);
        this.pollErrors = media.pollErrors;
        this.assembler = new FragmentAssembler(this::deliver);
        // Session ids start at a random point so ids of a restarted peer do not alias an old session's.
        this.nextSessionId = (System.nanoTime() & 0x7FFF_FFFFL) << 20;
    }

    public String roleName()
    {
        return "orbitkv-peer";
    }

    public int doWork()
    {
        final long nowNs = nanoClock.nanoTime();
        int workCount = 0;
        // A datagram that ended the agent's idle wait is read now, and messages offered since the last driver cycle
        // (a cold query sent while handling an engine lookup, a delta batch) leave now, not when the quiet interval
        // is up.
        if (wakeup.takeDatagramSignal() || proxy.offeredMessages() != offeredAtDriverRun ||
            (nowNs - driverWorkAtNs < DRIVER_HOT_WINDOW_NS && driverEmptyInvokes < DRIVER_HOT_EMPTY_LIMIT) ||
            nowNs - driverDueAtNs >= 0)
        {
            workCount += invokeDriver();
        }
        if (null != clientInvoker)
        {
            workCount += clientInvoker.invoke();
        }
        adapter.nowNs(nowNs);
        final long offeredBefore = proxy.offeredMessages();
        final int fragments = pollImages();
        workCount += fragments;
        if (proxy.offeredMessages() != offeredBefore)
        {
            // Answers to what was just handled leave in this cycle rather than the next (one driver cycle sends
            // them; the next duty cycle drains whatever else there is). Nothing offered, nothing to send early: an
            // empty driver cycle is a few system calls.
            workCount += runDriver(1);
        }
        workCount += drainImages();
        final long tickMs = nowNs / 1_000_000L;
        if (tickMs != lastTickMs)
        {
            lastTickMs = tickMs;
            nowMs = tickMs;
            workCount += advanceSessions(tickMs);
            workCount += publisher.advanceClients(tickMs);
        }
        return workCount;
    }

    /**
     * Run the embedded driver (when it is invoked rather than on its own thread) until it runs out of work or
     * {@link #DRIVER_INVOKE_LIMIT} cycles: sends what was offered since, receives what arrived. Callers that offer
     * after {@link #doWork()} in the same duty cycle call this to send without waiting for the next one.
     *
     * @return the driver's work count.
     */
    public int invokeDriver()
    {
        return runDriver(DRIVER_INVOKE_LIMIT);
    }

    private int runDriver(final int maxCycles)
    {
        if (null == driverInvoker)
        {
            return 0;
        }
        int workCount = 0;
        offeredAtDriverRun = proxy.offeredMessages();
        for (int i = 0; i < maxCycles; i++)
        {
            final int work = driverInvoker.invoke();
            if (0 == work)
            {
                break;
            }
            workCount += work;
        }
        final long nowNs = nanoClock.nanoTime();
        driverDueAtNs = nowNs + DRIVER_QUIET_INTERVAL_NS;
        if (workCount > 0)
        {
            driverWorkAtNs = nowNs;
            driverEmptyInvokes = 0;
        }
        else
        {
            driverEmptyInvokes++;
        }
        return workCount;
    }

    public void onClose()
    {
        publisher.close();
        subscription.close();
    }

    /**
     * @return the sending half, whose clients and publications this agent's tick advances.
     */
    public PeerPublisher publisher()
    {
        return publisher;
    }

    public int sessionCount()
    {
        return sessions.size();
    }

    PeerSession session(final long sessionId)
    {
        return sessions.get(sessionId);
    }

    void openSession(
        final long correlationId,
        final int requesterNodeIndex,
        final long requesterMsb,
        final long requesterLsb,
        final String responseChannel,
        final CatalogStatus connectStatus)
    {
        if (pendingSessions.size() >= MAX_SESSIONS)
        {
            // Connects whose response channel has not connected yet are bounded too; this one is not even answered.
            counters.increment(PeerCounter.SESSIONS_REFUSED);
            return;
        }
        CatalogStatus status = connectStatus;
        if (CatalogStatus.OK == status)
        {
            closeSessionsOf(requesterMsb, requesterLsb, responseChannel);
            if (sessions.size() >= MAX_SESSIONS)
            {
                counters.increment(PeerCounter.SESSIONS_REFUSED);
                status = CatalogStatus.ERROR;
            }
        }
        final PeerSession session = new PeerSession(++nextSessionId, correlationId, requesterNodeIndex, requesterMsb,
            requesterLsb, responseChannel, currentMs() + connectTimeoutMs, status);
        if (CatalogStatus.OK == status)
        {
            sessions.put(session.sessionId(), session);
        }
        if (null == publisher.publicationOrNull(responseChannel))
        {
            // The driver refused the channel a requester named (bad host or port): nobody to answer.
            sessions.remove(session.sessionId());
            counters.increment(PeerCounter.REJECTED_MALFORMED);
            return;
        }
        pendingSessions.add(session);
    }

    private void closeSessionsOf(final long requesterMsb, final long requesterLsb, final String responseChannel)
    {
        final Iterator<PeerSession> it = sessions.values().iterator();
        while (it.hasNext())
        {
            final PeerSession existing = it.next();
            if (existing.isFrom(requesterMsb, requesterLsb) && existing.responseChannel().equals(responseChannel))
            {
                existing.state(PeerSession.CLOSED);
                it.remove();
                pendingSessions.remove(existing);
            }
        }
    }

    private long currentMs()
    {
        return 0 != nowMs ? nowMs : nanoClock.nanoTime() / 1_000_000L;
    }

    private int advanceSessions(final long nowMs)
    {
        int workCount = 0;
        for (int i = pendingSessions.size() - 1; i >= 0; i--)
        {
            final PeerSession session = pendingSessions.get(i);
            final ExclusivePublication publication = publisher.publicationOrNull(session.responseChannel());
            if (null != publication && publication.isConnected())
            {
                final CatalogStatus status = session.connectStatus();
                if (proxy.response(publication, session.requesterIncarnationMsb(), session.requesterIncarnationLsb(),
                    0, session.sessionId(), session.connectCorrelationId(), status, -1))
                {
                    if (CatalogStatus.OK == status)
                    {
                        session.state(PeerSession.ACTIVE);
                        counters.increment(PeerCounter.SESSIONS_OPENED);
                    }
                    else
                    {
                        session.state(PeerSession.CLOSED);
                    }
                    pendingSessions.remove(i);
                    workCount++;
                }
            }
            else if (nowMs > session.connectDeadlineMs())
            {
                session.state(PeerSession.CLOSED);
                sessions.remove(session.sessionId());
                pendingSessions.remove(i);
                counters.increment(PeerCounter.SESSIONS_TIMED_OUT);
                workCount++;
            }
        }
        return workCount;
    }

    /**
     * Poll the subscription's images one by one (round robin from a rotating start, as the subscription would), up to
     * {@link #FRAGMENT_LIMIT} fragments in all. An image whose poll failed reading it ({@link ImagePollErrors}: not
     * an exception of the frame handler, which is logged as before) is rejected (the driver tells its sender) and no
     * longer read, the failure counted, not logged: whatever a sender wrote that no reader can read would otherwise
     * fail every duty cycle until the image timed out.
     */
    private int pollImages()
    {
        final int imageCount = subscription.imageCount();
        if (0 == imageCount)
        {
            return 0;
        }
        int fragments = 0;
        int start = imageRoundRobin++;
        if (start >= imageCount)
        {
            start = 0;
            imageRoundRobin = 1;
        }
        for (int i = 0; i < imageCount && fragments < FRAGMENT_LIMIT; i++)
        {
            final Image image = subscription.imageAtIndex((start + i) % imageCount);
            if (rejectedImages.contains(image.correlationId()))
            {
                continue;
            }
            boolean failed;
            try
            {
                fragments += image.poll(assembler, FRAGMENT_LIMIT - fragments);
                failed = pollErrors.takeImageFailed();
            }
            catch (final RuntimeException ex)
            {
                // Aeron hands exceptions to the subscription's error handler; should one escape, the image failed.
                pollErrors.takeImageFailed();
                failed = true;
            }
            if (failed)
            {
                imagePollErrors.incrementRelease();
                reject(image, "unreadable frame in the image");
            }
        }
        return fragments;
    }

    private void deliver(final DirectBuffer buffer, final int offset, final int length, final Header header)
    {
        try
        {
            adapter.onFragment(buffer, offset, length, header);
        }
        catch (final RuntimeException | Error ex)
        {
            // The poll hands it to the subscription's error handler, which logs it as the handler's.
            pollErrors.handlerThrew();
            throw ex;
        }
    }

    private void reject(final Image image, final String reason)
    {
        rejectedImages.add(image.correlationId());
        imagesRejected.incrementRelease();
        assembler.freeSessionBuffer(image.sessionId());
        try
        {
            image.reject(reason);
        }
        catch (final RuntimeException ignore)
        {
            // Closed meanwhile: it is skipped until it is gone either way.
        }
    }

    private int drainImages()
    {
        int workCount = 0;
        Image image;
        while (null != (image = availableImages.poll()))
        {
            counters.increment(PeerCounter.IMAGES_AVAILABLE);
            if (image.termBufferLength() != termLength && !rejectedImages.contains(image.correlationId()))
            {
                // The peer socket's guard admits no other term length; should one get through, it is not read.
                reject(image, "term length is not the peer transport's");
            }
            workCount++;
        }
        while (null != (image = unavailableImages.poll()))
        {
            counters.increment(PeerCounter.IMAGES_UNAVAILABLE);
            rejectedImages.remove(image.correlationId());
            workCount++;
        }
        return workCount;
    }
}
