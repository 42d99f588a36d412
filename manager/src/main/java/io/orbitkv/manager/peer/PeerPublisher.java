package io.orbitkv.manager.peer;

import java.util.ArrayList;

import io.aeron.ExclusivePublication;
import io.orbitkv.codecs.catalog.CatalogStatus;
import org.agrona.DirectBuffer;
import org.agrona.ErrorHandler;
import org.agrona.collections.Long2ObjectHashMap;
import org.agrona.concurrent.NanoClock;

/**
 * The sending half of the peer transport: the publications to peers (a bounded {@link PublicationLru}), the
 * {@link PeerProxy} that encodes the session protocol and offers every message with a bounded retry, the client
 * sessions this peer opened on others and the sessions requesters opened on this peer (the {@link PeerSessions} frame
 * handlers find senders among). What the catalog and the transfers send is encoded by their own proxies and offered
 * here as bytes. It exists as soon as the transport is bound, before anything that receives frames, so the parts that send
 * (owner streams, discovery, the transfer source and requester) take it in their constructors and the
 * {@link PeerAgent} that delivers frames to them is built after them. Single threaded: the thread that runs the
 * peer agent.
 */
public final class PeerPublisher implements PeerSessions
{
    private final PeerProxy proxy;
    private final PublicationLru publications;
    private final PeerCounters counters;
    private final ErrorHandler errorHandler;
    private final NanoClock nanoClock;
    private final String localChannel;
    private final int streamId;
    private final int localNodeIndex;
    private final long connectTimeoutMs;
    private final ArrayList<PeerClient> clients = new ArrayList<>();
    private final Long2ObjectHashMap<PeerSession> sessions = new Long2ObjectHashMap<>();
    private int nextClientId;
    private long nextCorrelationId;
    private long nowMs;
    private PeerSourceFilter sourceFilter = new PeerSourceFilter();

    PeerPublisher(
        final PeerTransport.Context ctx,
        final PublicationLru publications,
        final PeerCounters counters,
        final String localChannel,
        final FrameAuth signer)
    {
        this.publications = publications;
        this.counters = counters;
        this.localChannel = localChannel;
        this.errorHandler = ctx.errorHandler();
        this.nanoClock = ctx.nanoClock();
        this.streamId = ctx.streamId();
        this.localNodeIndex = ctx.localNodeIndex();
        this.connectTimeoutMs = ctx.connectTimeoutMs();
        this.proxy = new PeerProxy(
            ctx.incarnationMsb(), ctx.incarnationLsb(), ctx.placementFingerprint(), counters, ctx.maxMessageBytes(),
            signer);
        this.nextCorrelationId = ctx.incarnationLsb() & 0x7FFF_FFFF_0000_0000L;
    }

    /**
     * @return the endpoint peers reach this transport at (HOST:PORT, the port resolved when 0 was configured).
     */
    public String localEndpoint()
    {
        return localChannel.substring(localChannel.indexOf("endpoint=") + "endpoint=".length());
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
     * Send a message encoded by one of the catalog's proxies to the peer behind {@code client} with the bounded
     * retry. Counted in the transport's bytes and offer counters only; the caller checked the client is active.
     *
     * @return false when the offer failed (counted).
     */
    public boolean send(final PeerClient client, final DirectBuffer buffer, final int offset, final int length)
    {
        return proxy.offer(publications.publication(client.channel()), buffer, offset, length);
    }

    /**
     * Answer on a session's response channel with a message encoded elsewhere (a catalog answer or refusal, a
     * transfer refusal given before any handler saw the request), with the bounded retry. Counted in the transport's
     * bytes and offer counters only; a response channel the driver refuses fails the offer (counted).
     *
     * @return false when the offer failed (counted).
     */
    public boolean send(final PeerSession session, final DirectBuffer buffer, final int offset, final int length)
    {
        return proxy.offer(publicationOrNull(session.responseChannel()), buffer, offset, length);
    }

    /**
     * @return the placement fingerprint routes this peer sends carry.
     */
    public long placementFingerprint()
    {
        return proxy.placementFingerprint();
    }

    /**
     * Send routes under another placement generation from now on (the catalog follows the member view's placement).
     * Owner thread only.
     *
     * @param fingerprint the route fingerprint of the newest generation this Manager knows.
     */
    public void placementFingerprint(final long fingerprint)
    {
        proxy.placementFingerprint(fingerprint);
    }

    /**
     * @return most significant half of the incarnation this peer sends as (routes name it as sender).
     */
    public long localIncarnationMsb()
    {
        return proxy.localIncarnationMsb();
    }

    /**
     * @return least significant half of the incarnation this peer sends as.
     */
    public long localIncarnationLsb()
    {
        return proxy.localIncarnationLsb();
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

    void sourceFilter(final PeerSourceFilter sourceFilter)
    {
        this.sourceFilter = sourceFilter;
    }

    /**
     * @return which hosts the peer socket hears (the member view sets it).
     */
    public PeerSourceFilter sourceFilter()
    {
        return sourceFilter;
    }

    public long nextCorrelationId()
    {
        return ++nextCorrelationId;
    }

    /**
     * @return where the transport logs errors (malformed frames included).
     */
    public ErrorHandler errorHandler()
    {
        return errorHandler;
    }

    /**
     * @return the peer transport's counters.
     */
    public PeerCounters counters()
    {
        return counters;
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

    PeerProxy proxy()
    {
        return proxy;
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

    /**
     * A publication to a channel named by a peer, or null when the driver refuses it (logged, never thrown into the
     * duty cycle).
     */
    ExclusivePublication publicationOrNull(final String channel)
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

    public PeerSession session(final long sessionId)
    {
        return sessions.get(sessionId);
    }

    /**
     * @return the sessions requesters opened on this peer, by id (the agent's to change).
     */
    Long2ObjectHashMap<PeerSession> sessions()
    {
        return sessions;
    }

    public PeerClient client(final long sessionId, final long remoteMsb, final long remoteLsb)
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

    /**
     * On the agent's millisecond tick: send the PeerConnect of clients whose publication connected, and fail those
     * past their connect deadline.
     */
    int advanceClients(final long nowMs)
    {
        this.nowMs = nowMs;
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

    void close()
    {
        publications.close();
    }

    private long currentMs()
    {
        return 0 != nowMs ? nowMs : nanoClock.nanoTime() / 1_000_000L;
    }
}
