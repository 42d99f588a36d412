package io.orbitkv.client;

import io.orbitkv.codecs.cnc.ClientSlot;
import io.orbitkv.codecs.engine.HeartbeatRequestEncoder;
import io.orbitkv.codecs.engine.MessageHeaderEncoder;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.EpochClock;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;

/**
 * Keeps an attached client alive while its engine is idle (design: a client silent for the liveness timeout
 * is detached). It only ever offers {@code HeartbeatRequest}s on the many-to-one request ring with its own
 * encoder, so it may run on its own thread next to the thread that owns the client. It stops offering once
 * the slot no longer carries this client's id, so a client detached by timeout does not keep knocking.
 */
final class ClientHeartbeatAgent implements Agent
{
    private final ManyToOneRingBuffer requestRing;
    private final ClientSlot slot = new ClientSlot();
    private final long clientId;
    private final long intervalMs;
    private final EpochClock epochClock;
    private final UnsafeBuffer buffer = new UnsafeBuffer(new byte[64]);
    private final MessageHeaderEncoder headerEncoder = new MessageHeaderEncoder();
    private final HeartbeatRequestEncoder heartbeatEncoder = new HeartbeatRequestEncoder();
    private long lastSentMs;
    private long failedOffers;

    ClientHeartbeatAgent(
        final ManyToOneRingBuffer requestRing,
        final AtomicBuffer slotTable,
        final int slotIndex,
        final long clientId,
        final long intervalMs,
        final EpochClock epochClock)
    {
        this.requestRing = requestRing;
        slot.wrap(slotTable, slotIndex);
        this.clientId = clientId;
        this.intervalMs = intervalMs;
        this.epochClock = epochClock;
        this.lastSentMs = epochClock.time();
    }

    public int doWork()
    {
        final long nowMs = epochClock.time();
        if (nowMs - lastSentMs < intervalMs)
        {
            return 0;
        }
        lastSentMs = nowMs;
        return sendHeartbeat() ? 1 : 0;
    }

    boolean sendHeartbeat()
    {
        if (slot.clientIdVolatile() != clientId)
        {
            return false;
        }
        heartbeatEncoder.wrapAndApplyHeader(buffer, 0, headerEncoder)
            .clientId(clientId)
            .correlationId(requestRing.nextCorrelationId());
        final int length = MessageHeaderEncoder.ENCODED_LENGTH + heartbeatEncoder.encodedLength();
        if (!requestRing.write(HeartbeatRequestEncoder.TEMPLATE_ID, buffer, 0, length))
        {
            failedOffers++;
            return false;
        }
        return true;
    }

    long failedOffers()
    {
        return failedOffers;
    }

    public String roleName()
    {
        return "orbitkv-client-heartbeat";
    }
}
