package io.orbitkv.client;

import io.orbitkv.codecs.engine.AttachRequestEncoder;
import io.orbitkv.codecs.engine.DetachRequestEncoder;
import io.orbitkv.codecs.engine.CommitRequestEncoder;
import io.orbitkv.codecs.engine.LookupRequestEncoder;
import io.orbitkv.codecs.engine.MessageHeaderEncoder;
import io.orbitkv.codecs.engine.PrepareRequestEncoder;
import io.orbitkv.codecs.engine.PublishRequestEncoder;
import io.orbitkv.codecs.engine.ReadRequestEncoder;
import io.orbitkv.codecs.engine.ReleaseRequestEncoder;
import io.orbitkv.codecs.engine.StatusCode;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.agrona.concurrent.EpochClock;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;

/**
 * The client's side of the request exchange: encodes each request into one reusable buffer, offers it on the
 * request ring, rings the doorbell and waits for the one Response with its correlation id. Long batches are cut
 * into requests here, within the Manager's key and byte limits. It owns the attached state: a wait that finds the
 * slot taken from us or the Manager silent marks the client detached before it throws.
 *
 * <p>Confined to the thread that owns the client; nothing here allocates once the client is attached.
 */
final class ManagerRequests
{
    private static final int RESPONSE_READ_LIMIT = 16;

    private final ManagerCnc cnc;
    private final ManyToOneRingBuffer requestRing;
    private final OneToOneRingBuffer responseRing;
    private final ManagerDoorbell doorbell;
    private final String dir;
    private final long responseTimeoutNs;
    private final IdleStrategy idleStrategy;
    private final EpochClock epochClock;
    private final int maxKeysPerRequest;
    private final int maxRequestBytes;
    private final UnsafeBuffer sendBuffer;
    private final MessageHeaderEncoder headerEncoder = new MessageHeaderEncoder();
    private final AttachRequestEncoder attachEncoder = new AttachRequestEncoder();
    private final DetachRequestEncoder detachEncoder = new DetachRequestEncoder();
    private final PublishRequestEncoder publishEncoder = new PublishRequestEncoder();
    private final LookupRequestEncoder lookupEncoder = new LookupRequestEncoder();
    private final ReadRequestEncoder readEncoder = new ReadRequestEncoder();
    private final ReleaseRequestEncoder releaseEncoder = new ReleaseRequestEncoder();
    private final PrepareRequestEncoder prepareEncoder = new PrepareRequestEncoder();
    private final CommitRequestEncoder commitEncoder = new CommitRequestEncoder();
    private final ResponseHandler responseHandler = new ResponseHandler();
    private long clientId;
    private boolean attached;

    /**
     * @param cnc a mapped CnC file whose slot this client has claimed.
     * @param ctx the client's concluded context.
     */
    ManagerRequests(final ManagerCnc cnc, final EngineClient.Context ctx)
    {
        this.cnc = cnc;
        this.requestRing = cnc.requestRing();
        this.responseRing = cnc.responseRing();
        this.doorbell = cnc.doorbell();
        this.dir = ctx.dir();
        this.responseTimeoutNs = ctx.responseTimeoutNs();
        this.idleStrategy = ctx.idleStrategy();
        this.epochClock = ctx.epochClock();
        this.maxKeysPerRequest = cnc.maxKeysPerRequest();
        this.maxRequestBytes = cnc.maxRequestBytes();
        this.sendBuffer = new UnsafeBuffer(new byte[Math.max(maxRequestBytes, 512)]);
    }

    /**
     * Send the Attach for the claimed slot; a refusal or a failed wait frees the claim.
     *
     * @param pid             this process.
     * @param clientName      the client's name.
     * @param dataRegionBytes size of the data region to ask for.
     * @return the path of the data region the Manager created.
     */
    String attach(final long pid, final String clientName, final long dataRegionBytes)
    {
        final long correlationId = requestRing.nextCorrelationId();
        final byte[] name = clientName.getBytes(StandardCharsets.US_ASCII);
        attachEncoder.wrapAndApplyHeader(sendBuffer, 0, headerEncoder)
            .correlationId(correlationId)
            .slotIndex(cnc.slotIndex())
            .pid(pid)
            .dataRegionBytes(dataRegionBytes)
            .putClientName(name, 0, name.length);
        final int length = MessageHeaderEncoder.ENCODED_LENGTH + attachEncoder.encodedLength();
        final OperationResult attachResult = new OperationResult(1);
        attachResult.reset(0);
        try
        {
            sendAndAwaitUnchecked(AttachRequestEncoder.TEMPLATE_ID, length, correlationId, attachResult, 0, 0, false);
        }
        catch (final EngineClientException ex)
        {
            cnc.freeClaim(pid);
            throw ex;
        }
        if (!attachResult.isOk())
        {
            cnc.freeClaim(pid);
            throw new EngineClientException(EngineClientException.Reason.ATTACH_REJECTED, attachResult.code(),
                "Manager refused attach of '" + clientName + "' (" + dataRegionBytes + " bytes): " +
                attachResult.code() + " " + attachResult.message(), null);
        }
        clientId = responseHandler.value;
        attached = true;
        return attachResult.message();
    }

    /**
     * Send a Detach when the Manager can still answer and the slot still holds us; a failure to answer is ignored
     * because the Manager detaches a silent client by liveness timeout anyway. The client is detached afterwards.
     */
    void detach()
    {
        try
        {
            if (attached && cnc.managerAlive(epochClock) && cnc.ownsSlot(clientId))
            {
                final long correlationId = requestRing.nextCorrelationId();
                detachEncoder.wrapAndApplyHeader(sendBuffer, 0, headerEncoder)
                    .clientId(clientId)
                    .correlationId(correlationId);
                final int length = MessageHeaderEncoder.ENCODED_LENGTH + detachEncoder.encodedLength();
                sendAndAwaitUnchecked(DetachRequestEncoder.TEMPLATE_ID, length, correlationId, null, 0, 0, false);
            }
        }
        catch (final EngineClientException ignore)
        {
            // design: a Manager that cannot answer detaches us by liveness timeout anyway
        }
        finally
        {
            attached = false;
        }
    }

    OperationResult publish(final KeyBatch batch, final OperationResult result)
    {
        return sendStoreChunks(PublishRequestEncoder.TEMPLATE_ID, batch, result);
    }

    OperationResult prepare(final KeyBatch batch, final OperationResult result)
    {
        return sendStoreChunks(PrepareRequestEncoder.TEMPLATE_ID, batch, result);
    }

    OperationResult commit(final KeyBatch batch, final OperationResult result)
    {
        return sendStoreChunks(CommitRequestEncoder.TEMPLATE_ID, batch, result);
    }

    /**
     * Publish, Prepare or Commit the batch in as many requests as the limits need, each answered before the next is
     * sent; stops at the first request that is not answered OK. The values of the answers add up in {@code result}.
     */
    private OperationResult sendStoreChunks(final int templateId, final KeyBatch batch, final OperationResult result)
    {
        final int keyCount = batch.keyCount();
        int start = 0;
        while (start < keyCount)
        {
            final long correlationId = requestRing.nextCorrelationId();
            final int end;
            final int length;
            switch (templateId)
            {
                case PublishRequestEncoder.TEMPLATE_ID:
                    end = RequestEncoding.publishChunkEnd(batch, start, maxKeysPerRequest, maxRequestBytes);
                    length = RequestEncoding.publish(
                        publishEncoder, headerEncoder, sendBuffer, clientId, correlationId, batch, start, end);
                    break;
                case PrepareRequestEncoder.TEMPLATE_ID:
                    end = RequestEncoding.prepareChunkEnd(batch, start, maxKeysPerRequest, maxRequestBytes);
                    length = RequestEncoding.prepare(
                        prepareEncoder, headerEncoder, sendBuffer, clientId, correlationId, batch, start, end);
                    break;
                case CommitRequestEncoder.TEMPLATE_ID:
                    end = RequestEncoding.commitChunkEnd(batch, start, maxKeysPerRequest, maxRequestBytes);
                    length = RequestEncoding.commit(
                        commitEncoder, headerEncoder, sendBuffer, clientId, correlationId, batch, start, end);
                    break;
                default:
                    throw new IllegalArgumentException("not a store request: template " + templateId);
            }
            sendAndAwait(templateId, length, correlationId, result, start, end - start);
            if (!result.isOk())
            {
                break;
            }
            result.addValue(responseHandler.value);
            start = end;
        }
        return result;
    }

    OperationResult lookup(final KeyBatch batch, final boolean pin, final boolean peers, final OperationResult result)
    {
        final int keyCount = batch.keyCount();
        int start = 0;
        while (start < keyCount)
        {
            final int end = RequestEncoding.lookupChunkEnd(batch, start, maxKeysPerRequest, maxRequestBytes);
            final long correlationId = requestRing.nextCorrelationId();
            final int length = RequestEncoding.lookup(
                lookupEncoder, headerEncoder, sendBuffer, clientId, correlationId, batch, start, end, pin, peers);
            sendAndAwait(LookupRequestEncoder.TEMPLATE_ID, length, correlationId, result, start, end - start);
            if (!result.isOk())
            {
                break;
            }
            final long prefix = responseHandler.value;
            result.addValue(prefix);
            if (pin)
            {
                result.addLease(responseHandler.leaseId);
            }
            if (prefix < end - start)
            {
                break;
            }
            start = end;
        }
        return result;
    }

    /**
     * Restore the batch request by request; request {@code i} carries lease {@code i} of {@code leases} when given,
     * else the first request carries {@code leaseId}. Leases of requests never sent are released before returning.
     */
    OperationResult read(
        final KeyBatch batch,
        final OperationResult leases,
        final long leaseId,
        final boolean peers,
        final OperationResult result)
    {
        final int keyCount = batch.keyCount();
        int request = 0;
        int start = 0;
        try
        {
            while (start < keyCount)
            {
                final int end = RequestEncoding.readChunkEnd(batch, start, maxKeysPerRequest, maxRequestBytes);
                final long requestLeaseId = leases != null ?
                    (request < leases.leaseCount() ? leases.leaseId(request) : 0) :
                    (request == 0 ? leaseId : 0);
                final long correlationId = requestRing.nextCorrelationId();
                final int length = RequestEncoding.read(
                    readEncoder, headerEncoder, sendBuffer, clientId, correlationId, batch, start, end, requestLeaseId,
                    peers);
                request++;
                sendAndAwait(ReadRequestEncoder.TEMPLATE_ID, length, correlationId, result, start, end - start);
                if (!result.isOk())
                {
                    break;
                }
                final long restored = responseHandler.value;
                result.addValue(restored);
                if (restored < end - start)
                {
                    break;
                }
                start = end;
            }
        }
        finally
        {
            if (leases != null && attached)
            {
                // design: a read consumes the lookup's leases; those never carried by a request are released here
                for (int i = request; i < leases.leaseCount(); i++)
                {
                    final long unused = leases.leaseId(i);
                    if (unused != 0)
                    {
                        release(unused);
                    }
                }
            }
        }
        return result;
    }

    StatusCode release(final long leaseId)
    {
        final long correlationId = requestRing.nextCorrelationId();
        releaseEncoder.wrapAndApplyHeader(sendBuffer, 0, headerEncoder)
            .clientId(clientId)
            .correlationId(correlationId)
            .leaseId(leaseId);
        final int length = MessageHeaderEncoder.ENCODED_LENGTH + releaseEncoder.encodedLength();
        sendAndAwait(ReleaseRequestEncoder.TEMPLATE_ID, length, correlationId, null, 0, 0);
        return responseHandler.code;
    }

    boolean isAttached()
    {
        return attached;
    }

    long clientId()
    {
        return clientId;
    }

    private void sendAndAwait(
        final int templateId,
        final int length,
        final long correlationId,
        final OperationResult result,
        final int keyBase,
        final int keyCount)
    {
        sendAndAwaitUnchecked(templateId, length, correlationId, result, keyBase, keyCount, true);
        if (result != null)
        {
            result.requestSent();
        }
    }

    private void sendAndAwaitUnchecked(
        final int templateId,
        final int length,
        final long correlationId,
        final OperationResult result,
        final int keyBase,
        final int keyCount,
        final boolean checkSlot)
    {
        final long deadlineNs = System.nanoTime() + responseTimeoutNs;
        idleStrategy.reset();
        while (!requestRing.write(templateId, sendBuffer, 0, length))
        {
            checkWaitConditions(deadlineNs, checkSlot, "request ring full");
            idleStrategy.idle();
        }
        doorbell.wakeIfSleeping();

        responseHandler.expect(correlationId, result, keyBase, keyCount);
        idleStrategy.reset();
        while (true)
        {
            final int read = responseRing.read(responseHandler, RESPONSE_READ_LIMIT);
            if (responseHandler.received)
            {
                return;
            }
            if (read == 0)
            {
                checkWaitConditions(deadlineNs, checkSlot, "no response");
            }
            idleStrategy.idle(read);
        }
    }

    private void checkWaitConditions(final long deadlineNs, final boolean checkSlot, final String waitingFor)
    {
        if (checkSlot && attached && !cnc.ownsSlot(clientId))
        {
            attached = false;
            throw new EngineClientException(EngineClientException.Reason.DETACHED,
                "slot " + cnc.slotIndex() + " no longer holds client " + clientId + " (detached by the Manager)");
        }
        if (!cnc.managerAlive(epochClock))
        {
            attached = false;
            throw new EngineClientException(EngineClientException.Reason.MANAGER_DIED,
                "Manager heartbeat older than " + cnc.managerTimeoutMs() + " ms in " + dir);
        }
        if (System.nanoTime() - deadlineNs > 0)
        {
            throw new EngineClientException(EngineClientException.Reason.TIMEOUT,
                waitingFor + " within " + TimeUnit.NANOSECONDS.toMillis(responseTimeoutNs) + " ms");
        }
    }
}
