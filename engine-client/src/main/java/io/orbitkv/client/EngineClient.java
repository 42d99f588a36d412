package io.orbitkv.client;

import io.orbitkv.codecs.EngineRingLimits;
import io.orbitkv.codecs.cnc.ClientSlot;
import io.orbitkv.codecs.cnc.CncFileDescriptor;
import io.orbitkv.codecs.cnc.ManagerLiveness;
import io.orbitkv.codecs.engine.AttachRequestEncoder;
import io.orbitkv.codecs.engine.DetachRequestEncoder;
import io.orbitkv.codecs.engine.LookupRequestEncoder;
import io.orbitkv.codecs.engine.MessageHeaderEncoder;
import io.orbitkv.codecs.engine.PublishRequestEncoder;
import io.orbitkv.codecs.engine.ReadRequestEncoder;
import io.orbitkv.codecs.engine.ReleaseRequestEncoder;
import io.orbitkv.codecs.engine.StatusCode;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.agrona.CloseHelper;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.EpochClock;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.SleepingIdleStrategy;
import org.agrona.concurrent.SystemEpochClock;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;
import org.agrona.concurrent.status.CountersReader;

/**
 * An engine's connection to the Manager on its host over the shared-memory engine ring (docs/engine-ring.md).
 *
 * <p>{@link #connect(Context)} maps the Manager's CnC file, claims a client slot, attaches and maps the data
 * region the Manager created for this client. The engine places source blocks in {@link #dataRegion()} and
 * names them by offset in a {@link KeyBatch} for {@link #publish}; {@link #read} restores blocks into it.
 *
 * <p>Operations are synchronous: one request outstanding at a time, answered on this client's own response
 * ring. The client is confined to one thread; the only other thread is the optional daemon heartbeat thread,
 * which never touches anything but the request ring. Once sized, the steady state allocates nothing.
 *
 * <p>Failures of the connection itself (Manager gone, client detached, timeouts) throw
 * {@link EngineClientException}; the Manager's per-request answers are reported in {@link OperationResult}.
 * Bad arguments (too long namespace or hash, ranges outside the data region) throw
 * {@link IllegalArgumentException} before anything is sent.
 */
public final class EngineClient implements AutoCloseable
{
    private static final int RESPONSE_READ_LIMIT = 16;

    private final Context ctx;
    private final EpochClock epochClock;
    private final IdleStrategy idleStrategy;
    private final long pid;
    private Arena cncArena;
    private CncFileDescriptor.Sections sections;
    private ManyToOneRingBuffer requestRing;
    private OneToOneRingBuffer responseRing;
    private AtomicBuffer slotTable;
    private int slotIndex = -1;
    private final ClientSlot slot = new ClientSlot();
    private long clientId;
    private long clientLivenessMs;
    private long managerTimeoutMs;
    private int maxKeysPerRequest;
    private int maxRequestBytes;
    private Arena dataArena;
    private MemorySegment dataRegion;
    private UnsafeBuffer dataBuffer;
    private String dataRegionPath;
    private ManagerDoorbell doorbell;
    private ClientHeartbeatAgent heartbeatAgent;
    private AgentRunner heartbeatRunner;
    private boolean attached;
    private boolean closed;

    private UnsafeBuffer sendBuffer;
    private final MessageHeaderEncoder headerEncoder = new MessageHeaderEncoder();
    private final AttachRequestEncoder attachEncoder = new AttachRequestEncoder();
    private final DetachRequestEncoder detachEncoder = new DetachRequestEncoder();
    private final PublishRequestEncoder publishEncoder = new PublishRequestEncoder();
    private final LookupRequestEncoder lookupEncoder = new LookupRequestEncoder();
    private final ReadRequestEncoder readEncoder = new ReadRequestEncoder();
    private final ReleaseRequestEncoder releaseEncoder = new ReleaseRequestEncoder();
    private final ResponseHandler responseHandler = new ResponseHandler();

    private EngineClient(final Context ctx)
    {
        this.ctx = ctx;
        this.epochClock = ctx.epochClock();
        this.idleStrategy = ctx.idleStrategy();
        this.pid = ProcessHandle.current().pid();
    }

    /**
     * Attach to the Manager whose CnC file is in {@link Context#dir()}.
     *
     * @param ctx configuration; concluded here.
     * @return an attached client.
     * @throws EngineClientException when there is no live Manager, no free slot, or the Manager refuses.
     */
    public static EngineClient connect(final Context ctx)
    {
        ctx.conclude();
        final EngineClient client = new EngineClient(ctx);
        try
        {
            client.attach();
            return client;
        }
        catch (final RuntimeException ex)
        {
            client.closeResources();
            throw ex;
        }
    }

    /**
     * Publish the blocks of a batch: each key's range of the data region is copied into the Manager's pool.
     * Every request of a long batch is sent even if some keys get {@code NO_SPACE}; a non-OK code stops.
     *
     * @param batch  namespace, hashes and source ranges.
     * @param result per-key {@code STORED}/{@code ALREADY_RESIDENT}/{@code NO_SPACE}; value = blocks stored.
     * @return result, for chaining.
     */
    public OperationResult publish(final KeyBatch batch, final OperationResult result)
    {
        checkUsable();
        batch.checkReadyToSend();
        batch.checkRangesWithin(dataRegion.byteSize());
        result.reset(batch.keyCount());
        final int keyCount = batch.keyCount();
        int start = 0;
        while (start < keyCount)
        {
            final int end = RequestEncoding.publishChunkEnd(batch, start, maxKeysPerRequest, maxRequestBytes);
            final long correlationId = requestRing.nextCorrelationId();
            final int length = encodePublish(batch, start, end, correlationId);
            sendAndAwait(PublishRequestEncoder.TEMPLATE_ID, length, correlationId, result, start, end - start);
            if (!result.isOk())
            {
                break;
            }
            result.addValue(responseHandler.value);
            start = end;
        }
        return result;
    }

    /**
     * Longest resident prefix of the batch's chain, with the tier of each key up to the first miss. A long
     * chain is sent as several requests and stops after the first request whose prefix is short.
     *
     * @param batch  namespace and hashes.
     * @param pin    pin the resident prefix under one lease per request (see {@link OperationResult#leaseId(int)});
     *               the caller consumes the leases with {@link #read(KeyBatch, OperationResult, OperationResult)}
     *               or {@link #release(OperationResult)}.
     * @param result per-key tier, {@code MISS}, then {@code NOT_ATTEMPTED}; value = prefix length.
     * @return result, for chaining.
     */
    public OperationResult lookup(final KeyBatch batch, final boolean pin, final OperationResult result)
    {
        return lookup(batch, pin, false, result);
    }

    /**
     * Lookup as {@link #lookup(KeyBatch, boolean, OperationResult)}, optionally asking the Manager to look past its
     * local prefix in the cluster catalog: keys found on other Managers are answered {@code PEER} with candidate
     * copies (see {@link OperationResult#candidateCount()}). Without {@code pin} this is a hint: up to
     * {@code MAX_CANDIDATES_PER_KEY} candidates per key and {@code value} stays the local prefix length. With
     * {@code pin} (schema version 3) the leases also hold a source copy on a peer for each {@code PEER} key, whose
     * one candidate is that source, and {@code value} counts every block the leases cover (local and held); a
     * {@link #read(KeyBatch, OperationResult, boolean, OperationResult)} with the peers flag restores them all, and
     * {@link #release(OperationResult)} frees both sides. A standalone Manager answers exactly as a local lookup.
     *
     * @param batch  namespace and hashes.
     * @param pin    pin the resident prefix (and with {@code peers} the peer sources) under one lease per request.
     * @param peers  set the Lookup {@code peers} flag (schema version 2).
     * @param result per-key tier, {@code MISS} or {@code PEER}, then {@code NOT_ATTEMPTED}, plus peer candidates.
     * @return result, for chaining.
     */
    public OperationResult lookup(final KeyBatch batch, final boolean pin, final boolean peers, final OperationResult result)
    {
        checkUsable();
        batch.checkReadyToSend();
        result.reset(batch.keyCount());
        final int keyCount = batch.keyCount();
        int start = 0;
        while (start < keyCount)
        {
            final int end = RequestEncoding.lookupChunkEnd(batch, start, maxKeysPerRequest, maxRequestBytes);
            final long correlationId = requestRing.nextCorrelationId();
            final int length = encodeLookup(batch, start, end, pin, peers, correlationId);
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
     * Restore the leading resident blocks of the batch into the data region, each at its key's offset with at
     * most its key's capacity bytes. Stops at the first miss (or too small destination), across requests too.
     *
     * @param batch   namespace, hashes and destination ranges.
     * @param leaseId a lease from a pinned lookup to release once the first request completes, or 0.
     * @param result  per-key {@code DRAM}/{@code MISS}/{@code DESTINATION_TOO_SMALL}/{@code NOT_ATTEMPTED} with
     *                lengths; value = blocks restored.
     * @return result, for chaining.
     */
    public OperationResult read(final KeyBatch batch, final long leaseId, final OperationResult result)
    {
        return read(batch, null, leaseId, false, result);
    }

    /**
     * Restore blocks as {@link #read(KeyBatch, long, OperationResult)}, optionally letting the Manager fetch the keys
     * after its local prefix from peer Managers that hold them (schema version 3, Read {@code peers} flag). A key
     * fetched from a peer is answered {@code PEER} with its length, its source is its one candidate (see
     * {@link OperationResult#candidateCount()}); a key that could not be delivered intact is {@code FAILED} with
     * {@link OperationResult#reason(int)}, and the read stops there as at a miss. A standalone Manager answers as a
     * local read.
     *
     * @param batch   namespace, hashes and destination ranges.
     * @param leaseId a lease from a pinned lookup to release once the first request completes, or 0.
     * @param peers   set the Read {@code peers} flag.
     * @param result  per-key {@code DRAM}/{@code SSD}/{@code PEER}/{@code MISS}/{@code FAILED}/{@code NOT_ATTEMPTED}
     *                with lengths; value = blocks restored, local and from peers.
     * @return result, for chaining.
     */
    public OperationResult read(final KeyBatch batch, final long leaseId, final boolean peers, final OperationResult result)
    {
        return read(batch, null, leaseId, peers, result);
    }

    /**
     * Restore blocks as {@link #read(KeyBatch, long, OperationResult)}, consuming the leases of a pinned
     * lookup over the same batch: request {@code i} carries lease {@code i}, and leases of requests that are
     * never sent (the read stopped early) are released here.
     *
     * @param batch  namespace, hashes and destination ranges.
     * @param leases the result of a pinned {@link #lookup} over the same batch.
     * @param result per-key outcome; value = blocks restored.
     * @return result, for chaining.
     */
    public OperationResult read(final KeyBatch batch, final OperationResult leases, final OperationResult result)
    {
        return read(batch, leases, false, result);
    }

    /**
     * Restore blocks as {@link #read(KeyBatch, OperationResult, OperationResult)}, optionally with the Read
     * {@code peers} flag (see {@link #read(KeyBatch, long, boolean, OperationResult)}): the leases of a Lookup with
     * the pin and peers flags also hold the peer copies of its {@code PEER} keys, and this read restores them.
     *
     * @param batch  namespace, hashes and destination ranges.
     * @param leases the result of a pinned {@link #lookup} over the same batch.
     * @param peers  set the Read {@code peers} flag.
     * @param result per-key outcome; value = blocks restored, local and from peers.
     * @return result, for chaining.
     */
    public OperationResult read(
        final KeyBatch batch, final OperationResult leases, final boolean peers, final OperationResult result)
    {
        if (leases == result)
        {
            throw new IllegalArgumentException("leases and result must be distinct objects");
        }
        return read(batch, leases, 0, peers, result);
    }

    /**
     * Unpin a lease from a pinned lookup.
     *
     * @param leaseId the lease.
     * @return OK, or {@code UNKNOWN_LEASE} when this client does not hold it (harmless).
     */
    public StatusCode release(final long leaseId)
    {
        checkUsable();
        final long correlationId = requestRing.nextCorrelationId();
        releaseEncoder.wrapAndApplyHeader(sendBuffer, 0, headerEncoder)
            .clientId(clientId)
            .correlationId(correlationId)
            .leaseId(leaseId);
        final int length = MessageHeaderEncoder.ENCODED_LENGTH + releaseEncoder.encodedLength();
        sendAndAwait(ReleaseRequestEncoder.TEMPLATE_ID, length, correlationId, null, 0, 0);
        return responseHandler.code;
    }

    /**
     * Release every lease a pinned lookup holds.
     *
     * @param leases the result of a pinned lookup.
     * @return number of leases the Manager released.
     */
    public int release(final OperationResult leases)
    {
        int released = 0;
        for (int i = 0; i < leases.leaseCount(); i++)
        {
            final long leaseId = leases.leaseId(i);
            if (leaseId != 0 && release(leaseId) == StatusCode.OK)
            {
                released++;
            }
        }
        return released;
    }

    /**
     * Offer a heartbeat when one is due; for engines that run the client without the heartbeat thread
     * ({@link Context#heartbeatThread(boolean)} false) and call this from their own duty cycle.
     *
     * @return 1 if a heartbeat was sent, else 0.
     */
    public int doWork()
    {
        if (heartbeatRunner != null || !attached)
        {
            return 0;
        }
        return heartbeatAgent.doWork();
    }

    /**
     * Offer one heartbeat now (invoker mode only; with the heartbeat thread it does nothing).
     *
     * @return true if it was offered.
     */
    public boolean sendHeartbeat()
    {
        return heartbeatRunner == null && attached && heartbeatAgent.sendHeartbeat();
    }

    /**
     * Detach from the Manager: it releases this client's leases and data region and frees the slot. Unmaps
     * everything. Safe to call more than once; a dead Manager is not waited for.
     */
    public void detach()
    {
        close();
    }

    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        CloseHelper.quietClose(heartbeatRunner);
        heartbeatRunner = null;
        try
        {
            if (attached && managerAlive() && ownsSlot())
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
            closeResources();
        }
    }

    public boolean isClosed()
    {
        return closed;
    }

    /**
     * The data region shared with the Manager; invalid after {@link #close()}.
     *
     * @return the mapped region.
     */
    public MemorySegment dataRegion()
    {
        return dataRegion;
    }

    /**
     * The data region as an Agrona buffer, for regions up to 2 GiB.
     *
     * @return a buffer over the mapped region.
     */
    public UnsafeBuffer dataBuffer()
    {
        if (dataBuffer == null)
        {
            throw new IllegalStateException("data region of " + dataRegion.byteSize() + " bytes is too large for a buffer");
        }
        return dataBuffer;
    }

    public long dataRegionBytes()
    {
        return dataRegion.byteSize();
    }

    public String dataRegionPath()
    {
        return dataRegionPath;
    }

    public long clientId()
    {
        return clientId;
    }

    public int slotIndex()
    {
        return slotIndex;
    }

    /**
     * Keys per request the client splits batches into: the smaller of the Manager's and the protocol's limit.
     *
     * @return keys per request.
     */
    public int maxKeysPerRequest()
    {
        return maxKeysPerRequest;
    }

    public long clientLivenessMs()
    {
        return clientLivenessMs;
    }

    /**
     * The Manager's counters, readable while the client is open.
     *
     * @return a reader over the CnC file's counters.
     */
    public CountersReader countersReader()
    {
        return new CountersReader(sections.countersMetadata(), sections.countersValues());
    }

    public Context context()
    {
        return ctx;
    }

    /**
     * Heartbeats the heartbeat agent could not offer because the request ring was full.
     *
     * @return count of failed heartbeat offers.
     */
    public long failedHeartbeatOffers()
    {
        return heartbeatAgent == null ? 0 : heartbeatAgent.failedOffers();
    }

    /**
     * Times this client rang the Manager's doorbell: requests sent while the Manager slept.
     *
     * @return doorbell bytes written.
     */
    public long doorbellRings()
    {
        return null == doorbell ? 0 : doorbell.rings();
    }

    private OperationResult read(
        final KeyBatch batch,
        final OperationResult leases,
        final long leaseId,
        final boolean peers,
        final OperationResult result)
    {
        checkUsable();
        batch.checkReadyToSend();
        batch.checkRangesWithin(dataRegion.byteSize());
        result.reset(batch.keyCount());
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
                final int length = encodeRead(batch, start, end, requestLeaseId, peers, correlationId);
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
                        sendRelease(unused);
                    }
                }
            }
        }
        return result;
    }

    private void sendRelease(final long leaseId)
    {
        final long correlationId = requestRing.nextCorrelationId();
        releaseEncoder.wrapAndApplyHeader(sendBuffer, 0, headerEncoder)
            .clientId(clientId)
            .correlationId(correlationId)
            .leaseId(leaseId);
        final int length = MessageHeaderEncoder.ENCODED_LENGTH + releaseEncoder.encodedLength();
        sendAndAwait(ReleaseRequestEncoder.TEMPLATE_ID, length, correlationId, null, 0, 0);
    }

    int encodePublish(final KeyBatch batch, final int start, final int end, final long correlationId)
    {
        return RequestEncoding.publish(
            publishEncoder, headerEncoder, sendBuffer, clientId, correlationId, batch, start, end);
    }

    int encodeLookup(
        final KeyBatch batch, final int start, final int end, final boolean pin, final boolean peers, final long correlationId)
    {
        return RequestEncoding.lookup(
            lookupEncoder, headerEncoder, sendBuffer, clientId, correlationId, batch, start, end, pin, peers);
    }

    int encodeRead(
        final KeyBatch batch, final int start, final int end, final long leaseId, final boolean peers, final long correlationId)
    {
        return RequestEncoding.read(
            readEncoder, headerEncoder, sendBuffer, clientId, correlationId, batch, start, end, leaseId, peers);
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
        final long deadlineNs = System.nanoTime() + ctx.responseTimeoutNs();
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
        if (checkSlot && attached && !ownsSlot())
        {
            attached = false;
            throw new EngineClientException(EngineClientException.Reason.DETACHED,
                "slot " + slotIndex + " no longer holds client " + clientId + " (detached by the Manager)");
        }
        if (!managerAlive())
        {
            attached = false;
            throw new EngineClientException(EngineClientException.Reason.MANAGER_DIED,
                "Manager heartbeat older than " + managerTimeoutMs + " ms in " + ctx.dir());
        }
        if (System.nanoTime() - deadlineNs > 0)
        {
            throw new EngineClientException(EngineClientException.Reason.TIMEOUT,
                waitingFor + " within " + TimeUnit.NANOSECONDS.toMillis(ctx.responseTimeoutNs()) + " ms");
        }
    }

    private boolean managerAlive()
    {
        // The heartbeat half of the shared rule: an engine may not see the Manager's pid (another pid namespace).
        return ManagerLiveness.isHeartbeatFresh(requestRing.consumerHeartbeatTime(), epochClock.time(), managerTimeoutMs);
    }

    private boolean ownsSlot()
    {
        return slot.isAttachedAs(clientId);
    }

    private void checkUsable()
    {
        if (closed || !attached)
        {
            throw new EngineClientException(EngineClientException.Reason.CLOSED,
                closed ? "client closed" : "client no longer attached");
        }
    }

    private void attach()
    {
        final long attachDeadlineNs = System.nanoTime() + ctx.attachTimeoutNs();
        mapCnc(attachDeadlineNs);
        awaitFreshManager(attachDeadlineNs);
        claimSlot();

        final long correlationId = requestRing.nextCorrelationId();
        final byte[] name = ctx.clientName().getBytes(StandardCharsets.US_ASCII);
        attachEncoder.wrapAndApplyHeader(sendBuffer, 0, headerEncoder)
            .correlationId(correlationId)
            .slotIndex(slotIndex)
            .pid(pid)
            .dataRegionBytes(ctx.dataRegionBytes())
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
            freeClaim();
            throw ex;
        }
        if (!attachResult.isOk())
        {
            freeClaim();
            throw new EngineClientException(EngineClientException.Reason.ATTACH_REJECTED, attachResult.code(),
                "Manager refused attach of '" + ctx.clientName() + "' (" + ctx.dataRegionBytes() + " bytes): " +
                attachResult.code() + " " + attachResult.message(), null);
        }

        clientId = responseHandler.value;
        dataRegionPath = attachResult.message();
        attached = true;
        mapDataRegion();
        heartbeatAgent = new ClientHeartbeatAgent(
            requestRing, slotTable, slotIndex, clientId, heartbeatIntervalMs(), epochClock);
        if (ctx.heartbeatThread())
        {
            heartbeatRunner = new AgentRunner(
                new SleepingIdleStrategy(TimeUnit.MILLISECONDS.toNanos(Math.max(1, heartbeatIntervalMs() / 4))),
                Throwable::printStackTrace,
                null,
                heartbeatAgent);
            AgentRunner.startOnThread(heartbeatRunner, runnable ->
            {
                final Thread thread = new Thread(runnable, "orbitkv-client-heartbeat-" + ctx.clientName());
                thread.setDaemon(true);
                return thread;
            });
        }
    }

    private long heartbeatIntervalMs()
    {
        if (ctx.heartbeatIntervalNs() > 0)
        {
            return Math.max(1, TimeUnit.NANOSECONDS.toMillis(ctx.heartbeatIntervalNs()));
        }
        return Math.max(1, Math.min(1000, clientLivenessMs / 5));
    }

    private void mapCnc(final long deadlineNs)
    {
        final Path cncFile = Paths.get(ctx.dir(), CncFileDescriptor.CNC_FILE_NAME);
        String lastProblem = "no " + cncFile;
        while (true)
        {
            try
            {
                final long size = Files.size(cncFile);
                if (size >= CncFileDescriptor.HEADER_LENGTH)
                {
                    final Arena arena = Arena.ofShared();
                    final MemorySegment segment;
                    try (FileChannel channel = FileChannel.open(cncFile, StandardOpenOption.READ, StandardOpenOption.WRITE))
                    {
                        segment = channel.map(FileChannel.MapMode.READ_WRITE, 0, size, arena);
                    }
                    catch (final IOException | RuntimeException ex)
                    {
                        arena.close();
                        throw ex;
                    }
                    final UnsafeBuffer header = new UnsafeBuffer(segment.address(), CncFileDescriptor.HEADER_LENGTH);
                    final int version = CncFileDescriptor.layoutVersion(header);
                    if (version == CncFileDescriptor.LAYOUT_VERSION)
                    {
                        cncArena = arena;
                        wrapSections(segment);
                        openDoorbell(cncFile.getParent());
                        return;
                    }
                    arena.close();
                    if (version != 0)
                    {
                        throw new EngineClientException(EngineClientException.Reason.INCOMPATIBLE_LAYOUT,
                            cncFile + " has layout version " + version + ", this client understands " +
                            CncFileDescriptor.LAYOUT_VERSION);
                    }
                    lastProblem = cncFile + " not ready (layout version 0)";
                }
                else
                {
                    lastProblem = cncFile + " shorter than its header";
                }
            }
            catch (final NoSuchFileException ex)
            {
                lastProblem = "no " + cncFile;
            }
            catch (final IOException ex)
            {
                lastProblem = cncFile + ": " + ex;
            }
            if (System.nanoTime() - deadlineNs > 0)
            {
                throw new EngineClientException(EngineClientException.Reason.NO_MANAGER,
                    "no Manager ready within " + TimeUnit.NANOSECONDS.toMillis(ctx.attachTimeoutNs()) + " ms: " +
                    lastProblem);
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
    }

    private void wrapSections(final MemorySegment segment)
    {
        sections = new CncFileDescriptor.Sections(segment.address(), segment.byteSize());
        final AtomicBuffer header = sections.header();
        clientLivenessMs = TimeUnit.NANOSECONDS.toMillis(header.getLong(CncFileDescriptor.CLIENT_LIVENESS_NS_OFFSET));
        managerTimeoutMs = ManagerLiveness.timeoutMs(header);
        final int headerMaxKeys = header.getInt(CncFileDescriptor.MAX_KEYS_PER_REQUEST_OFFSET);
        maxKeysPerRequest = headerMaxKeys > 0 ?
            Math.min(headerMaxKeys, EngineRingLimits.MAX_KEYS_PER_REQUEST) : EngineRingLimits.MAX_KEYS_PER_REQUEST;
        requestRing = new ManyToOneRingBuffer(sections.requestRing());
        final int headerMaxBytes = header.getInt(CncFileDescriptor.MAX_REQUEST_BYTES_OFFSET);
        maxRequestBytes = Math.min(
            headerMaxBytes > 0 ? Math.min(headerMaxBytes, EngineRingLimits.MAX_REQUEST_BYTES) :
            EngineRingLimits.MAX_REQUEST_BYTES,
            requestRing.maxMsgLength());
        sendBuffer = new UnsafeBuffer(new byte[Math.max(maxRequestBytes, 512)]);
        slotTable = sections.slotTable();
    }

    private void openDoorbell(final Path managerDir)
    {
        try
        {
            doorbell = ManagerDoorbell.open(managerDir, sections.header());
        }
        catch (final IOException ex)
        {
            throw new EngineClientException(EngineClientException.Reason.NO_MANAGER,
                "cannot open the Manager's doorbell in " + managerDir + ": " + ex);
        }
    }

    private void awaitFreshManager(final long deadlineNs)
    {
        final long managerPid = sections.header().getLong(CncFileDescriptor.MANAGER_PID_OFFSET);
        while (!managerAlive())
        {
            // A stale Manager whose process has ended will not come back: no need to wait for the deadline.
            final boolean processGone = managerPid > 0 && !ManagerLiveness.isProcessAlive(managerPid);
            if (processGone || System.nanoTime() - deadlineNs > 0)
            {
                throw new EngineClientException(EngineClientException.Reason.STALE_MANAGER,
                    "Manager in " + ctx.dir() + " (pid " + managerPid + (processGone ? ", not running" : "") +
                    ") has not updated its heartbeat for " +
                    (epochClock.time() - requestRing.consumerHeartbeatTime()) + " ms (limit " + managerTimeoutMs + " ms)");
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
    }

    private void claimSlot()
    {
        final int maxClients = sections.maxClients();
        for (int i = 0; i < maxClients; i++)
        {
            if (slot.wrap(slotTable, i).tryClaim(pid, epochClock.time()))
            {
                slotIndex = i;
                responseRing = new OneToOneRingBuffer(sections.responseRing(i));
                return;
            }
        }
        throw new EngineClientException(EngineClientException.Reason.NO_FREE_SLOT,
            "all " + maxClients + " client slots of " + ctx.dir() + " are claimed");
    }

    private void freeClaim()
    {
        if (slotIndex < 0)
        {
            return;
        }
        // design: only an unattached claim is ours to free; an attached slot belongs to the Manager
        slot.freeClaim(pid);
        slotIndex = -1;
    }

    private void mapDataRegion()
    {
        final Path path = Paths.get(dataRegionPath);
        final Arena arena = Arena.ofShared();
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE))
        {
            final long size = Math.min(channel.size(), ctx.dataRegionBytes());
            if (size < ctx.dataRegionBytes())
            {
                throw new IllegalStateException("data region " + path + " has " + channel.size() + " bytes, asked for " +
                    ctx.dataRegionBytes());
            }
            dataRegion = channel.map(FileChannel.MapMode.READ_WRITE, 0, size, arena);
            dataArena = arena;
        }
        catch (final IOException | RuntimeException ex)
        {
            arena.close();
            throw new EngineClientException(EngineClientException.Reason.ATTACH_REJECTED, null,
                "cannot map data region " + path + ": " + ex, ex);
        }
        if (dataRegion.byteSize() <= Integer.MAX_VALUE)
        {
            dataBuffer = new UnsafeBuffer(dataRegion.address(), (int)dataRegion.byteSize());
        }
    }

    private void closeResources()
    {
        CloseHelper.quietClose(heartbeatRunner);
        heartbeatRunner = null;
        CloseHelper.quietClose(doorbell);
        closed = true;
        if (dataArena != null)
        {
            dataArena.close();
            dataArena = null;
        }
        if (cncArena != null)
        {
            cncArena.close();
            cncArena = null;
        }
    }

    /**
     * Configuration of an {@link EngineClient}. Defaults come from system properties where named.
     */
    public static final class Context
    {
        /** System property for the Manager directory. */
        public static final String DIR_PROP_NAME = "orbitkv.dir";
        public static final String DIR_DEFAULT = "/dev/shm/orbitkv/default";
        public static final long DATA_REGION_BYTES_DEFAULT = 64L * 1024 * 1024;
        public static final long ATTACH_TIMEOUT_NS_DEFAULT = TimeUnit.SECONDS.toNanos(10);
        public static final long RESPONSE_TIMEOUT_NS_DEFAULT = TimeUnit.SECONDS.toNanos(10);

        private boolean concluded;
        private String dir = System.getProperty(DIR_PROP_NAME, DIR_DEFAULT);
        private String clientName;
        private long dataRegionBytes = DATA_REGION_BYTES_DEFAULT;
        private long attachTimeoutNs = ATTACH_TIMEOUT_NS_DEFAULT;
        private long responseTimeoutNs = RESPONSE_TIMEOUT_NS_DEFAULT;
        private long heartbeatIntervalNs;
        private boolean heartbeatThread = true;
        private IdleStrategy idleStrategy;
        private EpochClock epochClock;

        /**
         * Validate and fill defaults; called by {@link EngineClient#connect(Context)}.
         *
         * @return this.
         */
        public Context conclude()
        {
            if (concluded)
            {
                throw new IllegalStateException("context already concluded (one Context per client)");
            }
            concluded = true;
            if (dir == null || dir.isEmpty())
            {
                throw new IllegalArgumentException("dir must be set");
            }
            if (clientName == null)
            {
                clientName = "engine-" + ProcessHandle.current().pid();
            }
            if (clientName.isEmpty() || clientName.length() > EngineRingLimits.MAX_CLIENT_NAME_LENGTH ||
                !StandardCharsets.US_ASCII.newEncoder().canEncode(clientName))
            {
                throw new IllegalArgumentException(
                    "clientName must be 1.." + EngineRingLimits.MAX_CLIENT_NAME_LENGTH + " ASCII characters: " + clientName);
            }
            if (dataRegionBytes <= 0)
            {
                throw new IllegalArgumentException("dataRegionBytes must be > 0: " + dataRegionBytes);
            }
            if (attachTimeoutNs <= 0 || responseTimeoutNs <= 0)
            {
                throw new IllegalArgumentException("timeouts must be > 0");
            }
            if (idleStrategy == null)
            {
                idleStrategy = new ResponseWaitIdleStrategy(ResponseWaitIdleStrategy.DEFAULT_YIELD_WINDOW_NS);
            }
            if (epochClock == null)
            {
                epochClock = SystemEpochClock.INSTANCE;
            }
            return this;
        }

        public Context dir(final String dir)
        {
            this.dir = dir;
            return this;
        }

        public String dir()
        {
            return dir;
        }

        public Context clientName(final String clientName)
        {
            this.clientName = clientName;
            return this;
        }

        public String clientName()
        {
            return clientName;
        }

        /**
         * Size of the data region the Manager creates for this client.
         *
         * @param dataRegionBytes bytes, at most the Manager's {@code --max-data-region-bytes}.
         * @return this.
         */
        public Context dataRegionBytes(final long dataRegionBytes)
        {
            this.dataRegionBytes = dataRegionBytes;
            return this;
        }

        public long dataRegionBytes()
        {
            return dataRegionBytes;
        }

        /**
         * How long {@link EngineClient#connect(Context)} waits for a ready Manager and its Attach answer.
         *
         * @param timeoutNs nanoseconds.
         * @return this.
         */
        public Context attachTimeoutNs(final long timeoutNs)
        {
            this.attachTimeoutNs = timeoutNs;
            return this;
        }

        public long attachTimeoutNs()
        {
            return attachTimeoutNs;
        }

        /**
         * How long one request waits for its Response (a dead Manager or a detach is noticed sooner).
         *
         * @param timeoutNs nanoseconds.
         * @return this.
         */
        public Context responseTimeoutNs(final long timeoutNs)
        {
            this.responseTimeoutNs = timeoutNs;
            return this;
        }

        public long responseTimeoutNs()
        {
            return responseTimeoutNs;
        }

        /**
         * Heartbeat period; 0 (default) derives it from the Manager's client liveness timeout (a fifth, at most 1 s).
         *
         * @param intervalNs nanoseconds.
         * @return this.
         */
        public Context heartbeatIntervalNs(final long intervalNs)
        {
            this.heartbeatIntervalNs = intervalNs;
            return this;
        }

        public long heartbeatIntervalNs()
        {
            return heartbeatIntervalNs;
        }

        /**
         * Run a daemon thread that heartbeats while the engine is idle (default). Without it the engine calls
         * {@link EngineClient#doWork()} from its own loop.
         *
         * @param heartbeatThread true to run the thread.
         * @return this.
         */
        public Context heartbeatThread(final boolean heartbeatThread)
        {
            this.heartbeatThread = heartbeatThread;
            return this;
        }

        public boolean heartbeatThread()
        {
            return heartbeatThread;
        }

        /**
         * Idle strategy while waiting for a response; default {@link ResponseWaitIdleStrategy} with its 200 us yield
         * window.
         *
         * @param idleStrategy strategy, owned by this client.
         * @return this.
         */
        public Context idleStrategy(final IdleStrategy idleStrategy)
        {
            this.idleStrategy = idleStrategy;
            return this;
        }

        public IdleStrategy idleStrategy()
        {
            return idleStrategy;
        }

        public Context epochClock(final EpochClock epochClock)
        {
            this.epochClock = epochClock;
            return this;
        }

        public EpochClock epochClock()
        {
            return epochClock;
        }
    }
}
