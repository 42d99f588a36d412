package io.orbitkv.transport.mooncake;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import io.orbitkv.ffm.te.TransferEngineC;
import io.orbitkv.ffm.te.TransferEngineException;
import io.orbitkv.ffm.te.TransferRequest;
import io.orbitkv.ffm.te.TransferStatusStruct;
import io.orbitkv.transport.SlotPool;
import io.orbitkv.transport.Transport;
import io.orbitkv.transport.TransportException;
import io.orbitkv.transport.TransportListener;
import io.orbitkv.transport.TransportStatus;

/**
 * A {@link Transport} over the Mooncake Transfer Engine, loaded from a user-supplied library through
 * {@link TransferEngineC}. A requester's read is a one-sided TE READ: the source Manager's engine serves it from the
 * memory it registered, without the source's agent taking part.
 *
 * <p>Consequences for the SPI: TE cannot restrict which registered bytes a peer reads, so {@link #export} only keeps
 * count and {@link #revoke} delivers nothing; {@link #canRevoke} is false and a source keeps the holds of an expired
 * session quarantined until the requester is gone. TE does not signal completions either: {@link #poll} asks the
 * engine for the state of every outstanding task, so the owning agent polls while {@link #readsInFlight} is not 0
 * and may sleep when it is.
 *
 * <p>Reads are appended to the current batch until it holds {@link Context#readsPerBatch} tasks. A batch is freed
 * once each of its tasks was polled to COMPLETED or FAILED, which is the library's condition for freeing it: a task
 * reported TIMEOUT, or whose peer was closed, stays polled in the background until then. The request and status
 * structs and the tables of outstanding reads, batches ({@link BatchTable}) and peers ({@link SegmentCache}) are
 * allocated at construction, so a read allocates nothing on the Java side.
 *
 * <p>The file passes 700 lines only by its nested {@link Context}, a settings table nested as callers name it
 * ({@code MooncakeTransport.Context}).
 */
public final class MooncakeTransport implements Transport
{
    /** Selected by {@code --transport=mooncake}. */
    public static final String NAME = "mooncake";

    /** Environment variable read when {@link Context#libraryPath} is not set. */
    public static final String LIBRARY_PATH_ENV = "ORBITKV_TE_LIBRARY";
    public static final String METADATA_CONNECTION_DEFAULT = TransferEngineC.METADATA_P2P_HANDSHAKE;
    public static final String LOCAL_SERVER_NAME_DEFAULT = "orbitkv";
    public static final String HOST_DEFAULT = "127.0.0.1";
    /** 0: the library picks a free port. */
    public static final int RPC_PORT_DEFAULT = 0;
    public static final String MEMORY_LOCATION_DEFAULT = "cpu:0";
    public static final int MAX_READS_IN_FLIGHT_DEFAULT = 256;
    public static final int READS_PER_BATCH_DEFAULT = 16;
    /** Peers whose segments stay open; the least recently used idle one is closed to open another. */
    public static final int PEER_CACHE_CAPACITY = 64;
    /** Longest endpoint (segment name) accepted, bytes. */
    public static final int MAX_ENDPOINT_BYTES = 255;
    /** How long {@link #close} keeps polling outstanding tasks so that their batches can be freed. */
    public static final long CLOSE_DRAIN_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(2);

    private static final String TCP = "tcp";
    private static final int ENDPOINT_BUFFER_BYTES = 256;

    private static final byte SLOT_FREE = 0;
    /** Submitted, outcome not yet delivered. */
    private static final byte SLOT_ACTIVE = 1;
    /** Outcome decided on the Java side (closed peer, bad argument, refused submit): delivered by the next poll. */
    private static final byte SLOT_REPORT = 2;
    /** Outcome delivered, task not yet final in the engine: polled silently so that its batch can be freed. */
    private static final byte SLOT_DRAIN = 3;

    /**
     * Settings of a {@link MooncakeTransport}; {@link #conclude} validates them before the library is touched.
     */
    public static final class Context
    {
        private Path libraryPath;
        private String metadataConnection = METADATA_CONNECTION_DEFAULT;
        private String localServerName = LOCAL_SERVER_NAME_DEFAULT;
        private String host = HOST_DEFAULT;
        private int rpcPort = RPC_PORT_DEFAULT;
        private String memoryLocation = MEMORY_LOCATION_DEFAULT;
        private int maxReadsInFlight = MAX_READS_IN_FLIGHT_DEFAULT;
        private int readsPerBatch = READS_PER_BATCH_DEFAULT;

        /**
         * @param libraryPath of {@code libtransfer_engine.so} ({@code --te-library}); default from
         *                    {@value #LIBRARY_PATH_ENV}.
         * @return this.
         */
        public Context libraryPath(final Path libraryPath)
        {
            this.libraryPath = libraryPath;
            return this;
        }

        /**
         * @return the library path.
         */
        public Path libraryPath()
        {
            return libraryPath;
        }

        /**
         * @param metadataConnection P2PHANDSHAKE (default), etcd://host:port, redis://host:port or
         *                           http://host:port/metadata.
         * @return this.
         */
        public Context metadataConnection(final String metadataConnection)
        {
            this.metadataConnection = metadataConnection;
            return this;
        }

        /**
         * @return the metadata connection string.
         */
        public String metadataConnection()
        {
            return metadataConnection;
        }

        /**
         * @param localServerName this engine's name with a metadata server (P2PHANDSHAKE names it "ip:port").
         * @return this.
         */
        public Context localServerName(final String localServerName)
        {
            this.localServerName = localServerName;
            return this;
        }

        /**
         * @return the local server name.
         */
        public String localServerName()
        {
            return localServerName;
        }

        /**
         * @param host the address the engine binds and announces to peers.
         * @return this.
         */
        public Context host(final String host)
        {
            this.host = host;
            return this;
        }

        /**
         * @return the host.
         */
        public String host()
        {
            return host;
        }

        /**
         * @param rpcPort the engine's handshake port, 0 to let the library pick one.
         * @return this.
         */
        public Context rpcPort(final int rpcPort)
        {
            this.rpcPort = rpcPort;
            return this;
        }

        /**
         * @return the rpc port.
         */
        public int rpcPort()
        {
            return rpcPort;
        }

        /**
         * @param memoryLocation placement passed with registered memory, e.g. "cpu:0" or "*".
         * @return this.
         */
        public Context memoryLocation(final String memoryLocation)
        {
            this.memoryLocation = memoryLocation;
            return this;
        }

        /**
         * @return the memory location.
         */
        public String memoryLocation()
        {
            return memoryLocation;
        }

        /**
         * @param maxReadsInFlight reads outstanding at once, including those still drained after delivery; a read
         *                         beyond it is refused by {@link #submitRead} (back-pressure).
         * @return this.
         */
        public Context maxReadsInFlight(final int maxReadsInFlight)
        {
            this.maxReadsInFlight = maxReadsInFlight;
            return this;
        }

        /**
         * @return the most reads outstanding at once.
         */
        public int maxReadsInFlight()
        {
            return maxReadsInFlight;
        }

        /**
         * @param readsPerBatch tasks per TE batch.
         * @return this.
         */
        public Context readsPerBatch(final int readsPerBatch)
        {
            this.readsPerBatch = readsPerBatch;
            return this;
        }

        /**
         * @return tasks per TE batch.
         */
        public int readsPerBatch()
        {
            return readsPerBatch;
        }

        /**
         * Fill defaults and validate.
         *
         * @return this.
         * @throws TransportException naming the first bad setting.
         */
        public Context conclude()
        {
            if (null == libraryPath)
            {
                final String fromEnvironment = System.getenv(LIBRARY_PATH_ENV);
                if (null == fromEnvironment || fromEnvironment.isEmpty())
                {
                    throw new TransportException(
                        "the mooncake transport needs the path of libtransfer_engine.so: --te-library PATH or " +
                        LIBRARY_PATH_ENV);
                }
                libraryPath = Path.of(fromEnvironment);
            }
            try
            {
                TransferEngineC.checkMetadataConnection(metadataConnection);
            }
            catch (final TransferEngineException ex)
            {
                throw new TransportException(ex.getMessage(), ex);
            }
            requireCString(localServerName, "local server name");
            requireCString(host, "host");
            requireCString(memoryLocation, "memory location");
            if (rpcPort < 0 || rpcPort > TransferEngineC.MAX_RPC_PORT)
            {
                throw new TransportException("rpc port out of range [0, 65535]: " + rpcPort);
            }
            if (maxReadsInFlight < 1)
            {
                throw new TransportException("max reads in flight must be at least 1: " + maxReadsInFlight);
            }
            if (readsPerBatch < 1 || readsPerBatch > maxReadsInFlight)
            {
                throw new TransportException(
                    "reads per batch must lie in [1, " + maxReadsInFlight + "]: " + readsPerBatch);
            }
            return this;
        }

        private static void requireCString(final String value, final String name)
        {
            if (null == value || value.isEmpty() || value.indexOf('\0') >= 0)
            {
                throw new TransportException(name + " must be a non-empty string without NUL: '" + value + "'");
            }
        }
    }

    private final Context ctx;
    private final Arena arena;
    private final TransferEngineC te;
    private final MemorySegment engine;
    private final String localEndpoint;
    private final MemorySegment location;
    private final MemorySegment request;
    private final MemorySegment status;
    private final MemorySegment endpointBuffer;
    private final SegmentCache peers;
    private final BatchTable batches;

    // Outstanding reads; activeSlots[0, activeCount) lists the slots in use.
    private final byte[] slotState;
    private final long[] slotRequestId;
    private final int[] slotBatch;
    private final int[] slotTask;
    private final int[] slotPeer;
    private final int[] slotLength;
    private final int[] slotReportStatus;
    private final int[] activeSlots;
    private int activeCount;
    private final SlotPool freeSlots;
    private int readsInFlight;

    private long[] registeredAddresses = new long[8];
    private int registeredCount;
    private long exportedSessions;
    private long revokedSessions;
    private long backPressureCount;
    private long invalidReadCount;
    private long submitFailureCount;
    private boolean closed;

    /**
     * Load the library, create an engine, install TE's TCP transport and read the local segment name.
     *
     * @param ctx settings, concluded here.
     * @throws TransportException when the library, the engine or the transport cannot be set up.
     */
    public MooncakeTransport(final Context ctx)
    {
        this.ctx = ctx.conclude();
        arena = Arena.ofShared();
        final TransferEngineC loaded;
        try
        {
            loaded = TransferEngineC.load(ctx.libraryPath(), arena);
        }
        catch (final TransferEngineException ex)
        {
            arena.close();
            throw new TransportException(ex.getMessage(), ex);
        }
        catch (final RuntimeException ex)
        {
            arena.close();
            throw ex;
        }
        te = loaded;
        MemorySegment created = MemorySegment.NULL;
        try
        {
            created = te.createTransferEngine(
                arena.allocateFrom(ctx.metadataConnection()),
                arena.allocateFrom(ctx.localServerName()),
                arena.allocateFrom(ctx.host()),
                ctx.rpcPort(),
                0);
            if (0 == created.address())
            {
                throw new TransportException("createTransferEngine failed (metadata " + ctx.metadataConnection() +
                    ", host " + ctx.host() + ", rpc port " + ctx.rpcPort() + ")");
            }
            // auto_discover = 0 installs nothing: without "tcp" every submit would be refused.
            if (0 == te.installTransport(created, arena.allocateFrom(TCP), MemorySegment.NULL).address())
            {
                throw new TransportException("installTransport(\"tcp\") failed");
            }
            endpointBuffer = arena.allocate(ENDPOINT_BUFFER_BYTES);
            final int rc = te.getLocalIpAndPort(created, endpointBuffer, ENDPOINT_BUFFER_BYTES);
            if (0 != rc)
            {
                throw new TransportException("getLocalIpAndPort failed: " + TransferEngineC.describe(rc));
            }
            localEndpoint = endpointBuffer.getString(0);
        }
        catch (final RuntimeException ex)
        {
            if (0 != created.address())
            {
                te.destroyTransferEngine(created);
            }
            arena.close();
            throw ex;
        }
        engine = created;
        location = arena.allocateFrom(ctx.memoryLocation());
        request = TransferRequest.allocate(arena);
        status = TransferStatusStruct.allocate(arena);
        peers = new SegmentCache(te, engine, endpointBuffer);

        final int slots = ctx.maxReadsInFlight();
        slotState = new byte[slots];
        slotRequestId = new long[slots];
        slotBatch = new int[slots];
        slotTask = new int[slots];
        slotPeer = new int[slots];
        slotLength = new int[slots];
        slotReportStatus = new int[slots];
        activeSlots = new int[slots];
        freeSlots = new SlotPool(slots);
        batches = new BatchTable(te, engine, slots, ctx.readsPerBatch());
    }

    /**
     * {@inheritDoc}
     */
    public String name()
    {
        return NAME;
    }

    /**
     * @return the TE segment name of this engine, from {@code getLocalIpAndPort} ("ip:port").
     */
    public String localEndpoint()
    {
        return localEndpoint;
    }

    /**
     * @return false: TE peers read registered memory one-sidedly, so no revocation can be proven.
     */
    public boolean canRevoke()
    {
        return false;
    }

    /**
     * {@inheritDoc}
     */
    public void registerMemory(final long address, final long length)
    {
        ensureOpen();
        if (0 == address || length <= 0)
        {
            throw new TransportException("cannot register address " + address + " length " + length);
        }
        final int rc = te.registerLocalMemory(engine, address, length, location, 1);
        if (0 != rc)
        {
            throw new TransportException("registerLocalMemory(0x" + Long.toHexString(address) + ", " + length +
                ") failed: " + TransferEngineC.describe(rc));
        }
        if (registeredCount == registeredAddresses.length)
        {
            registeredAddresses = Arrays.copyOf(registeredAddresses, registeredCount * 2);
        }
        registeredAddresses[registeredCount++] = address;
    }

    /**
     * {@inheritDoc}
     */
    public void unregisterMemory(final long address)
    {
        ensureOpen();
        final int rc = te.unregisterLocalMemory(engine, address);
        for (int i = 0; i < registeredCount; i++)
        {
            if (registeredAddresses[i] == address)
            {
                registeredAddresses[i] = registeredAddresses[--registeredCount];
                break;
            }
        }
        if (0 != rc)
        {
            throw new TransportException(
                "unregisterLocalMemory(0x" + Long.toHexString(address) + ") failed: " + TransferEngineC.describe(rc));
        }
    }

    /**
     * TE serves any registered byte to any peer: nothing can be restricted, so this only counts the session.
     *
     * @return true.
     */
    public boolean export(final long sessionId, final long token, final long[] addresses, final int[] lengths, final int count)
    {
        exportedSessions++;
        return true;
    }

    /**
     * Delivers nothing, since {@link #canRevoke} is false: the source quarantines the session's holds instead.
     */
    public void revoke(final long sessionId)
    {
        revokedSessions++;
    }

    /**
     * Open (or find in the cache of {@value #PEER_CACHE_CAPACITY}) the TE segment named {@code endpoint}.
     *
     * @return a handle {@code >= 0}, -1 when the endpoint is malformed, cannot be opened, or every cached peer has
     * reads outstanding.
     */
    public int peer(final CharSequence endpoint)
    {
        ensureOpen();
        final int index = peers.acquire(endpoint);
        if (-1 == index)
        {
            return -1;
        }
        return peers.handle(index);
    }

    /**
     * {@inheritDoc} Reads in flight are delivered as {@link TransportStatus#CLOSED} by the next poll.
     */
    public void closePeer(final int peer)
    {
        final int index = closed ? -1 : peers.liveIndex(peer);
        if (-1 == index)
        {
            return;
        }
        for (int i = 0; i < activeCount; i++)
        {
            final int slot = activeSlots[i];
            if (slotPeer[slot] == index && SLOT_ACTIVE == slotState[slot])
            {
                slotState[slot] = SLOT_REPORT;
                slotReportStatus[slot] = TransportStatus.CLOSED;
            }
        }
        forgetPeer(index);
    }

    /**
     * Append a TE READ of {@code length} bytes at the peer's absolute address {@code remoteAddress} into
     * {@code localAddress} to the current batch. The session and token are not sent: TE has no place for them.
     *
     * @return false when {@link Context#maxReadsInFlight} reads are outstanding or no batch could be allocated.
     */
    public boolean submitRead(
        final int peer,
        final long sessionId,
        final long token,
        final long remoteAddress,
        final long localAddress,
        final int length,
        final long requestId)
    {
        if (closed || 0 == freeSlots.available())
        {
            backPressureCount++;
            return false;
        }

        final int index = peers.liveIndex(peer);
        if (-1 == index)
        {
            report(requestId, -1, TransportStatus.CLOSED);
            return true;
        }
        if (0 == remoteAddress || 0 == localAddress || length <= 0)
        {
            invalidReadCount++;
            report(requestId, index, TransportStatus.FAILED);
            return true;
        }

        final int batch = batches.current();
        if (-1 == batch)
        {
            backPressureCount++;
            return false;
        }

        TransferRequest.opcode(request, TransferEngineC.OPCODE_READ);
        TransferRequest.source(request, localAddress);
        TransferRequest.target_id(request, peers.segment(index));
        TransferRequest.file_id(request, 0);
        TransferRequest.target_offset(request, remoteAddress);
        TransferRequest.length(request, length);
        final int rc = te.submitTransfer(engine, batches.id(batch), request, 1);
        if (TransferEngineC.RC_OK != rc)
        {
            submitFailureCount++;
            batches.abandon(batch);
            report(requestId, index, TransportStatus.FAILED);
            return true;
        }

        final int slot = freeSlots.take();
        slotState[slot] = SLOT_ACTIVE;
        slotRequestId[slot] = requestId;
        slotBatch[slot] = batch;
        slotTask[slot] = batches.addTask(batch);
        slotPeer[slot] = index;
        slotLength[slot] = length;
        activeSlots[activeCount++] = slot;
        peers.readStarted(index);
        readsInFlight++;
        return true;
    }

    /**
     * {@inheritDoc} Asks the engine for the state of each outstanding task; a batch is freed as soon as each of its
     * tasks was polled to a final state.
     */
    public int poll(final TransportListener listener, final int limit)
    {
        if (closed)
        {
            return 0; // the engine is destroyed: no downcall may reach it
        }
        int delivered = 0;
        int i = 0;
        // A listener may close the transport: no downcall after that.
        while (!closed && i < activeCount && delivered < limit)
        {
            final int slot = activeSlots[i];
            final byte state = slotState[slot];
            if (SLOT_REPORT == state)
            {
                readsInFlight--;
                delivered++;
                final int reportBatch = slotBatch[slot];
                final long requestId = slotRequestId[slot];
                final int outcome = slotReportStatus[slot];
                if (-1 == reportBatch || taskFinal(slot))
                {
                    release(i, slot);
                    if (-1 != reportBatch)
                    {
                        batches.releaseIfDone(reportBatch);
                    }
                }
                else
                {
                    slotState[slot] = SLOT_DRAIN;
                    i++;
                }
                listener.onReadComplete(requestId, outcome, 0);
                continue;
            }

            final int batch = slotBatch[slot];
            final int rc = te.getTransferStatus(engine, batches.id(batch), slotTask[slot], status);
            final int taskStatus = TransferEngineC.RC_OK == rc ? TransferStatusStruct.status(status) : -1;
            if (TransferEngineC.STATUS_COMPLETED == taskStatus || TransferEngineC.STATUS_FAILED == taskStatus ||
                -1 == taskStatus)
            {
                batches.taskFinal(batch);
                if (SLOT_ACTIVE == state)
                {
                    readsInFlight--;
                    delivered++;
                    final boolean ok = TransferEngineC.STATUS_COMPLETED == taskStatus;
                    final long bytes = ok ? slotLength[slot] : (-1 == taskStatus ? 0 :
                        TransferStatusStruct.transferred_bytes(status));
                    final long requestId = slotRequestId[slot];
                    release(i, slot);
                    batches.releaseIfDone(batch);
                    listener.onReadComplete(requestId, ok ? TransportStatus.OK : TransportStatus.FAILED, bytes);
                }
                else
                {
                    release(i, slot);
                    batches.releaseIfDone(batch);
                }
                continue;
            }
            if (SLOT_ACTIVE == state && (TransferEngineC.STATUS_TIMEOUT == taskStatus ||
                TransferEngineC.STATUS_CANCELED == taskStatus || TransferEngineC.STATUS_INVALID == taskStatus))
            {
                // Not final for the library: the batch stays until the task reaches COMPLETED or FAILED.
                slotState[slot] = SLOT_DRAIN;
                readsInFlight--;
                delivered++;
                listener.onReadComplete(
                    slotRequestId[slot],
                    TransferEngineC.STATUS_TIMEOUT == taskStatus ? TransportStatus.TIMEOUT : TransportStatus.FAILED,
                    TransferStatusStruct.transferred_bytes(status));
            }
            i++;
        }
        return delivered;
    }

    /**
     * {@inheritDoc}
     */
    public int readsInFlight()
    {
        return readsInFlight;
    }

    /**
     * @return reads whose outcome was delivered but whose TE task is not final yet (they still hold a slot).
     */
    public int readsDraining()
    {
        return activeCount - readsInFlight;
    }

    /**
     * @return TE batches allocated and not yet freed.
     */
    public int batchesInUse()
    {
        return batches.inUse();
    }

    /**
     * @return sessions passed to {@link #export}.
     */
    public long exportedSessions()
    {
        return exportedSessions;
    }

    /**
     * @return sessions passed to {@link #revoke}.
     */
    public long revokedSessions()
    {
        return revokedSessions;
    }

    /**
     * @return reads refused by {@link #submitRead} for lack of a slot or a batch.
     */
    public long backPressureCount()
    {
        return backPressureCount;
    }

    /**
     * @return reads failed for a zero address or a non-positive length.
     */
    public long invalidReadCount()
    {
        return invalidReadCount;
    }

    /**
     * @return reads the library refused at submit.
     */
    public long submitFailureCount()
    {
        return submitFailureCount;
    }

    /**
     * @return endpoints that were malformed or could not be opened.
     */
    public long peerOpenFailureCount()
    {
        return peers.openFailureCount();
    }

    /**
     * @return endpoints refused because each of the {@value #PEER_CACHE_CAPACITY} cached peers had reads outstanding.
     */
    public long peerCacheFullCount()
    {
        return peers.cacheFullCount();
    }

    /**
     * @return idle peers closed to make room for another.
     */
    public long peerEvictionCount()
    {
        return peers.evictionCount();
    }

    /**
     * @return batches the library refused to free although every task was polled final.
     */
    public long batchFreeFailureCount()
    {
        return batches.freeFailureCount();
    }

    /**
     * {@inheritDoc} Outstanding tasks are polled for up to {@link #CLOSE_DRAIN_TIMEOUT_NS} so that their batches are
     * freed, their outcomes are not delivered; then memory is unregistered and the engine destroyed.
     */
    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        final long deadlineNs = System.nanoTime() + CLOSE_DRAIN_TIMEOUT_NS;
        while (activeCount > 0 && System.nanoTime() - deadlineNs < 0)
        {
            drainOnce();
            if (activeCount > 0)
            {
                LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(100));
            }
        }
        batches.releaseCurrentIfDone();
        for (int i = 0; i < registeredCount; i++)
        {
            te.unregisterLocalMemory(engine, registeredAddresses[i]);
        }
        registeredCount = 0;
        te.destroyTransferEngine(engine);
        arena.close();
    }

    private void drainOnce()
    {
        int i = 0;
        while (i < activeCount)
        {
            final int slot = activeSlots[i];
            if (-1 == slotBatch[slot])
            {
                release(i, slot);
                continue;
            }
            if (taskFinal(slot))
            {
                final int batch = slotBatch[slot];
                release(i, slot);
                batches.releaseIfDone(batch);
                continue;
            }
            i++;
        }
        readsInFlight = 0;
    }

    /** Polls the slot's task once; true (and the batch's final count raised) when the library sees it final. */
    private boolean taskFinal(final int slot)
    {
        final int batch = slotBatch[slot];
        final int rc = te.getTransferStatus(engine, batches.id(batch), slotTask[slot], status);
        final int taskStatus = TransferStatusStruct.status(status);
        if (TransferEngineC.RC_OK != rc || TransferEngineC.STATUS_COMPLETED == taskStatus ||
            TransferEngineC.STATUS_FAILED == taskStatus)
        {
            batches.taskFinal(batch);
            return true;
        }
        return false;
    }

    private void report(final long requestId, final int peerIndex, final int outcome)
    {
        final int slot = freeSlots.take();
        slotState[slot] = SLOT_REPORT;
        slotRequestId[slot] = requestId;
        slotBatch[slot] = -1;
        slotTask[slot] = -1;
        slotPeer[slot] = peerIndex;
        slotLength[slot] = 0;
        slotReportStatus[slot] = outcome;
        activeSlots[activeCount++] = slot;
        if (-1 != peerIndex)
        {
            peers.readStarted(peerIndex);
        }
        readsInFlight++;
    }

    private void release(final int activeIndex, final int slot)
    {
        final int peerIndex = slotPeer[slot];
        if (-1 != peerIndex)
        {
            peers.readEnded(peerIndex);
        }
        slotState[slot] = SLOT_FREE;
        activeSlots[activeIndex] = activeSlots[--activeCount];
        freeSlots.release(slot);
    }

    private void forgetPeer(final int index)
    {
        peers.close(index);
        for (int i = 0; i < activeCount; i++)
        {
            final int slot = activeSlots[i];
            if (slotPeer[slot] == index)
            {
                slotPeer[slot] = -1;
            }
        }
    }

    private void ensureOpen()
    {
        if (closed)
        {
            throw new TransportException("mooncake transport is closed");
        }
    }
}
