package io.orbitkv.manager.peer;

import java.util.ArrayList;
import java.util.Iterator;

import io.aeron.Aeron;
import io.aeron.ExclusivePublication;
import io.aeron.FragmentAssembler;
import io.aeron.Image;
import io.aeron.Subscription;
import io.orbitkv.catalog.OwnerJournal;
import io.orbitkv.codecs.catalog.CatalogStatus;
import org.agrona.DirectBuffer;
import org.agrona.ErrorHandler;
import org.agrona.collections.Long2ObjectHashMap;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentInvoker;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.agrona.concurrent.NanoClock;

/**
 * Duty cycle of the peer transport, shaped like the driver's conductor: read the clock once, service the Aeron client
 * (when it runs invoked), poll the peer subscription with a fragment limit, drain images that became available or
 * unavailable (queued by the client's callbacks, which must not create publications themselves), and on each
 * millisecond tick advance sessions waiting for a response channel and clients waiting for their connect answer.
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

    private final Aeron aeron;
    private final AgentInvoker clientInvoker;
    private final AgentInvoker driverInvoker;
    private final PeerWakeup wakeup;
    private static final long RESOLVE_TIMEOUT_NS = 10_000_000_000L;

    private final Subscription subscription;
    private final FragmentAssembler assembler;
    private final PeerAdapter adapter;
    private final PeerProxy proxy;
    private final PublicationLru publications;
    private final PeerCounters counters;
    private final ErrorHandler errorHandler;
    private final NanoClock nanoClock;
    private final String localChannel;
    private final int streamId;
    private final int localNodeIndex;
    private final long connectTimeoutMs;
    private final ManyToOneConcurrentArrayQueue<Image> availableImages =
        new ManyToOneConcurrentArrayQueue<>(IMAGE_QUEUE_CAPACITY);
    private final ManyToOneConcurrentArrayQueue<Image> unavailableImages =
        new ManyToOneConcurrentArrayQueue<>(IMAGE_QUEUE_CAPACITY);

    private final Long2ObjectHashMap<PeerSession> sessions = new Long2ObjectHashMap<>();
    private final ArrayList<PeerSession> pendingSessions = new ArrayList<>();
    private final ArrayList<PeerClient> clients = new ArrayList<>();

    private long driverWorkAtNs;
    private int driverEmptyInvokes;
    private long driverDueAtNs;
    private long offeredAtDriverRun;
    private long nextSessionId;
    private int nextClientId;
    private long nextCorrelationId;
    private long lastTickMs;
    private long nowMs;

    PeerAgent(
        final PeerTransport.Context ctx,
        final Aeron aeron,
        final AgentInvoker driverInvoker,
        final PeerCounters counters,
        final PeerWakeup wakeup)
    {
        this.wakeup = wakeup;
        this.aeron = aeron;
        this.clientInvoker = aeron.conductorAgentInvoker();
        this.driverInvoker = driverInvoker;
        this.counters = counters;
        this.errorHandler = ctx.errorHandler();
        this.nanoClock = ctx.nanoClock();
        this.streamId = ctx.streamId();
        this.localNodeIndex = ctx.localNodeIndex();
        this.connectTimeoutMs = ctx.connectTimeoutMs();
        this.proxy = new PeerProxy(
            ctx.incarnationMsb(), ctx.incarnationLsb(), ctx.placementFingerprint(), counters, ctx.maxMessageBytes());
        this.publications = new PublicationLru(aeron, streamId, ctx.publicationLruCapacity(), counters);
        this.adapter = new PeerAdapter(this, ctx.handler(), ctx.coldQueryHandler(), ctx.validator(), proxy, counters,
            ctx.errorHandler(), streamId, ctx.transferHandler());
        this.assembler = new FragmentAssembler(adapter);
        // Session ids start at a random point so ids of a restarted peer do not alias an old session's.
        this.nextSessionId = (System.nanoTime() & 0x7FFF_FFFFL) << 20;
        this.nextCorrelationId = ctx.incarnationLsb() & 0x7FFF_FFFF_0000_0000L;
        this.subscription = aeron.addSubscription(
            PeerTransport.channel(ctx.endpoint()), streamId, this::queueAvailableImage, this::queueUnavailableImage);
        this.localChannel = resolveLocalChannel(subscription, ctx.endpoint(), driverInvoker);
    }

    /**
     * The channel peers answer on: the configured one, or with port 0 the port the driver bound (ephemeral ports let
     * several Managers share a host without choosing ports).
     */
    private static String resolveLocalChannel(
        final Subscription subscription, final String endpoint, final AgentInvoker driverInvoker)
    {
        if (!endpoint.endsWith(":0"))
        {
            return PeerTransport.channel(endpoint);
        }
        final long deadlineNs = System.nanoTime() + RESOLVE_TIMEOUT_NS;
        String resolved;
        while (null == (resolved = subscription.tryResolveChannelEndpointPort()))
        {
            if (System.nanoTime() - deadlineNs > 0)
            {
                throw new IllegalStateException("the media driver did not bind " + endpoint + " in time");
            }
            if (null == driverInvoker || 0 == driverInvoker.invoke())
            {
                Thread.yield();
            }
        }
        return resolved;
    }

    /**
     * @return the endpoint peers reach this agent at (HOST:PORT, the port resolved when 0 was configured).
     */
    public String localEndpoint()
    {
        return localChannel.substring(localChannel.indexOf("endpoint=") + "endpoint=".length());
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
        final int fragments = subscription.poll(assembler, FRAGMENT_LIMIT);
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
            workCount += advanceClients(tickMs);
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
        publications.close();
        subscription.close();
    }

    /**
     * Open a session on a remote peer. The PeerConnect goes out once the publication connects; the client is active
     * when the remote answers with its session id, failed after the connect timeout or a refusal.
     */
    public PeerClient connect(
        final String remoteEndpoint, final int remoteNodeIndex, final long remoteMsb, final long remoteLsb)
    {
        final String channel = PeerTransport.channel(remoteEndpoint);
        final PeerClient client = new PeerClient(++nextClientId, channel, remoteNodeIndex, remoteMsb, remoteLsb,
            nextCorrelationId(), currentMs() + connectTimeoutMs);
        clients.add(client);
        publications.publication(channel);
        return client;
    }

    /**
     * Forget a client session (the remote left the member view or the caller is done with it). The publication stays
     * in the LRU for other sessions to the same endpoint.
     */
    public void closeClient(final PeerClient client)
    {
        client.state(PeerClient.FAILED);
        clients.remove(client);
    }

    public int clientCount()
    {
        return clients.size();
    }

    /**
     * Owner: send journal records of a shard to a catalog host from {@code fromSequence}.
     *
     * @return records sent, 0 when none or the offer failed, or {@link OwnerJournal#READ_RESYNC_REQUIRED}.
     */
    public int sendDeltaBatch(
        final PeerClient client, final int shard, final OwnerJournal journal, final long fromSequence,
        final int maxRecords)
    {
        if (!client.isActive())
        {
            return 0;
        }
        return proxy.deltaBatch(publications.publication(client.channel()), client, shard, journal, fromSequence,
            maxRecords);
    }

    /**
     * Requester: one batched cold query to a catalog host (the batching policy belongs to the caller).
     */
    public boolean sendColdQuery(
        final PeerClient client,
        final long correlationId,
        final int shard,
        final int keyCount,
        final int[] keyShards,
        final DirectBuffer[] namespaces,
        final int[] namespaceLengths,
        final DirectBuffer[] hashes,
        final int[] hashLengths)
    {
        return client.isActive() && proxy.coldQuery(publications.publication(client.channel()), client,
            correlationId, shard, keyCount, keyShards, namespaces, namespaceLengths, hashes, hashLengths);
    }

    /**
     * Owner: answer a host with a status (e.g. RESYNC_REQUIRED when a repair asks for history already dropped).
     */
    public boolean sendResponse(
        final PeerClient client, final int shard, final long correlationId, final CatalogStatus code,
        final long relevantSequence)
    {
        return client.isActive() && proxy.response(publications.publication(client.channel()),
            client.remoteIncarnationMsb(), client.remoteIncarnationLsb(), shard, client.sessionId(), correlationId, code,
            relevantSequence);
    }

    /**
     * Owner: a {@link io.orbitkv.catalog.SnapshotSink} that sends a {@link io.orbitkv.catalog.SnapshotCut}'s frames
     * of one shard to the host behind {@code client}. Allocates; create one per (host, shard) at set-up.
     */
    public PeerSnapshotSender snapshotSender(final PeerClient client, final int shard)
    {
        return new PeerSnapshotSender(this, proxy, client, shard);
    }

    /**
     * Requester: send an encoded transfer message (schema {@code io.orbitkv.codecs.transfer}) to the peer behind an
     * active client, with the same bounded retry and counting as every other send.
     *
     * @return false when the client is not active or the offer failed (counted): the caller's retry or deadline
     * recovers.
     */
    public boolean offer(final PeerClient client, final DirectBuffer buffer, final int offset, final int length)
    {
        if (!client.isActive())
        {
            counters.increment(PeerCounter.OFFERS_FAILED);
            return false;
        }
        final boolean sent = proxy.offer(publicationOrNull(client.channel()), buffer, offset, length);
        if (sent)
        {
            counters.increment(PeerCounter.TRANSFER_MESSAGES_SENT);
        }
        return sent;
    }

    /**
     * Source: answer a requester with an encoded transfer message on its session's response channel.
     *
     * @return false when the session is not active or the offer failed (counted).
     */
    public boolean offer(final PeerSession session, final DirectBuffer buffer, final int offset, final int length)
    {
        if (!session.isActive())
        {
            counters.increment(PeerCounter.OFFERS_FAILED);
            return false;
        }
        final boolean sent = proxy.offer(publicationOrNull(session.responseChannel()), buffer, offset, length);
        if (sent)
        {
            counters.increment(PeerCounter.TRANSFER_MESSAGES_SENT);
        }
        return sent;
    }

    /**
     * @return most significant half of the incarnation this agent sends as (routes name it as sender).
     */
    public long localIncarnationMsb()
    {
        return proxy.localIncarnationMsb();
    }

    /**
     * @return least significant half of the incarnation this agent sends as.
     */
    public long localIncarnationLsb()
    {
        return proxy.localIncarnationLsb();
    }

    /**
     * @return the peer transport's counters.
     */
    public PeerCounters counters()
    {
        return counters;
    }

    ExclusivePublication publication(final PeerClient client)
    {
        return publications.publication(client.channel());
    }

    /**
     * Bytes the publication to {@code client}'s peer may still take before flow control back-pressures it. A sender
     * of many frames in a row (a snapshot cut) paces itself on this instead of losing a frame to a failed offer.
     */
    public long availableWindow(final PeerClient client)
    {
        return publications.publication(client.channel()).availableWindow();
    }

    /**
     * @return the largest message this transport's publications accept.
     */
    public int maxMessageBytes()
    {
        return proxy.maxMessageBytes();
    }

    /**
     * @return records an owner may put in one delta batch with this transport's message size.
     */
    public int maxBatchRecords()
    {
        return proxy.maxBatchRecords();
    }

    /**
     * Send as a new incarnation of this runtime from now on (a re-registration). Sessions opened as the old one
     * keep its identity on the remote side; the caller closes them and connects again.
     *
     * @param msb most significant half of the new runtime UUID.
     * @param lsb least significant half.
     */
    public void localIncarnation(final long msb, final long lsb)
    {
        proxy.localIncarnation(msb, lsb);
    }

    public long nextCorrelationId()
    {
        return ++nextCorrelationId;
    }

    public int sessionCount()
    {
        return sessions.size();
    }

    int publicationCount()
    {
        return publications.size();
    }

    /**
     * Test and tooling access: a publication to any endpoint through the LRU (counts evictions like any other).
     */
    ExclusivePublication publicationTo(final String endpoint)
    {
        return publications.publication(PeerTransport.channel(endpoint));
    }

    Aeron aeron()
    {
        return aeron;
    }

    PeerSession session(final long sessionId)
    {
        return sessions.get(sessionId);
    }

    /**
     * @return the session's response publication, or null when it cannot be created (the send is then counted as
     * failed by the proxy).
     */
    ExclusivePublication publication(final PeerSession session)
    {
        return publicationOrNull(session.responseChannel());
    }

    PeerClient client(final long sessionId, final long remoteMsb, final long remoteLsb)
    {
        for (int i = 0, size = clients.size(); i < size; i++)
        {
            final PeerClient client = clients.get(i);
            if (client.isActive() && client.sessionId() == sessionId &&
                client.remoteIncarnationMsb() == remoteMsb && client.remoteIncarnationLsb() == remoteLsb)
            {
                return client;
            }
        }
        return null;
    }

    PeerClient connectingClient(final long correlationId, final long remoteMsb, final long remoteLsb)
    {
        for (int i = 0, size = clients.size(); i < size; i++)
        {
            final PeerClient client = clients.get(i);
            if (PeerClient.AWAIT_RESPONSE == client.state() && client.connectCorrelationId() == correlationId &&
                client.remoteIncarnationMsb() == remoteMsb && client.remoteIncarnationLsb() == remoteLsb)
            {
                return client;
            }
        }
        return null;
    }

    void onConnectResponse(final PeerClient client, final long sessionId, final CatalogStatus code)
    {
        if (CatalogStatus.OK == code)
        {
            client.sessionId(sessionId);
            client.state(PeerClient.ACTIVE);
        }
        else
        {
            client.state(PeerClient.FAILED);
        }
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
        if (null == publicationOrNull(responseChannel))
        {
            // The driver refused the channel a requester named (bad host or port): nobody to answer.
            sessions.remove(session.sessionId());
            counters.increment(PeerCounter.REJECTED_MALFORMED);
            return;
        }
        pendingSessions.add(session);
    }

    /**
     * A publication to a channel named by a peer, or null when the driver refuses it (logged, never thrown into the
     * duty cycle).
     */
    private ExclusivePublication publicationOrNull(final String channel)
    {
        try
        {
            return publications.publication(channel);
        }
        catch (final RuntimeException ex)
        {
            errorHandler.onError(ex);
            return null;
        }
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
            final ExclusivePublication publication = publicationOrNull(session.responseChannel());
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

    private int advanceClients(final long nowMs)
    {
        int workCount = 0;
        for (int i = 0, size = clients.size(); i < size; i++)
        {
            final PeerClient client = clients.get(i);
            final int state = client.state();
            if (PeerClient.AWAIT_PUBLICATION == state)
            {
                final ExclusivePublication publication = publications.publication(client.channel());
                if (publication.isConnected() &&
                    proxy.connect(publication, client, localNodeIndex, streamId, localChannel))
                {
                    client.state(PeerClient.AWAIT_RESPONSE);
                    workCount++;
                }
            }
            if ((PeerClient.AWAIT_PUBLICATION == client.state() || PeerClient.AWAIT_RESPONSE == client.state()) &&
                nowMs > client.connectDeadlineMs())
            {
                client.state(PeerClient.FAILED);
                counters.increment(PeerCounter.SESSIONS_TIMED_OUT);
                workCount++;
            }
        }
        return workCount;
    }

    private int drainImages()
    {
        int workCount = 0;
        while (null != availableImages.poll())
        {
            counters.increment(PeerCounter.IMAGES_AVAILABLE);
            workCount++;
        }
        while (null != unavailableImages.poll())
        {
            counters.increment(PeerCounter.IMAGES_UNAVAILABLE);
            workCount++;
        }
        return workCount;
    }

    private void queueAvailableImage(final Image image)
    {
        // Reentrancy rule: no client calls here (creating a publication throws); the agent handles it in doWork.
        availableImages.offer(image);
    }

    private void queueUnavailableImage(final Image image)
    {
        unavailableImages.offer(image);
    }
}
