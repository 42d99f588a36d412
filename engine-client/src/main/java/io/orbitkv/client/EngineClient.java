package io.orbitkv.client;

import io.orbitkv.codecs.EngineRingLimits;
import io.orbitkv.codecs.engine.StatusCode;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.TimeUnit;
import org.agrona.CloseHelper;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.EpochClock;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.SleepingIdleStrategy;
import org.agrona.concurrent.SystemEpochClock;
import org.agrona.concurrent.UnsafeBuffer;
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
 *
 * <p>This class is the facade and the owner of the data region and the heartbeat; the mapped CnC file, its
 * liveness checks and the slot claim are {@link ManagerCnc}'s, and encoding, sending and awaiting each request is
 * {@link ManagerRequests}'s.
 *
 * <p>The file passes 700 lines only by its nested {@link Context}, the client's settings table, nested as callers
 * name it ({@code EngineClient.Context}).
 */
public final class EngineClient implements AutoCloseable
{
    private final Context ctx;
    private final EpochClock epochClock;
    private final long pid;
    private ManagerCnc cnc;
    private ManagerRequests requests;
    private Arena dataArena;
    private MemorySegment dataRegion;
    private UnsafeBuffer dataBuffer;
    private String dataRegionPath;
    private ManagerPool pool;
    private ClientHeartbeatAgent heartbeatAgent;
    private AgentRunner heartbeatRunner;
    private boolean closed;

    private EngineClient(final Context ctx)
    {
        this.ctx = ctx;
        this.epochClock = ctx.epochClock();
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
        return requests.publish(batch, result);
    }

    /**
     * Zero-copy save, first half: reserve a slot in the Manager's pool for each key not yet resident (each key's size
     * is its block length; offsets are ignored). Write block {@code i} into {@link #pool()} at
     * {@link OperationResult#poolOffset(int)}, then {@link #commit(KeyBatch, OperationResult)}: nothing is visible
     * before. A key already resident (or being stored) is {@code ALREADY_RESIDENT} without a slot, so the engine skips
     * it; {@code NO_SPACE} when the pool is full. A slot not committed within the client liveness timeout, or when
     * this client goes, is reclaimed.
     *
     * @param batch  namespace, hashes and block lengths.
     * @param result per-key {@code RESERVED}/{@code ALREADY_RESIDENT}/{@code NO_SPACE} with slot offsets; value =
     *               slots reserved.
     * @return result, for chaining.
     * @throws IllegalStateException when the Manager gives engines no pool access.
     */
    public OperationResult prepare(final KeyBatch batch, final OperationResult result)
    {
        checkUsable();
        checkPool();
        batch.checkReadyToSend();
        result.reset(batch.keyCount());
        return requests.prepare(batch, result);
    }

    /**
     * Zero-copy save, second half: seal the blocks written into the slots this client's Prepare reserved. The Manager
     * sums each block as it lies in the pool and makes it visible. A key without a reservation of this client is
     * answered {@code MISS}.
     *
     * @param batch  namespace and hashes.
     * @param result per-key {@code STORED} or {@code MISS}; value = blocks sealed.
     * @return result, for chaining.
     */
    public OperationResult commit(final KeyBatch batch, final OperationResult result)
    {
        checkUsable();
        checkPool();
        batch.checkReadyToSend();
        result.reset(batch.keyCount());
        return requests.commit(batch, result);
    }

    /**
     * The Manager's pool, mapped read-write, where a Prepare's slots are; null when the Manager gives engines no pool
     * access ({@code --engine-pool-access none}). Invalid after {@link #close()}.
     *
     * @return the mapped pool, or null.
     */
    public MemorySegment pool()
    {
        return null == pool ? null : pool.segment();
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
        return requests.lookup(batch, pin, peers, result);
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
        return requests.release(leaseId);
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
        if (heartbeatRunner != null || !attached())
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
        return heartbeatRunner == null && attached() && heartbeatAgent.sendHeartbeat();
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
            if (requests != null)
            {
                requests.detach();
            }
        }
        finally
        {
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
        return requests.clientId();
    }

    public int slotIndex()
    {
        return cnc.slotIndex();
    }

    /**
     * Keys per request the client splits batches into: the smaller of the Manager's and the protocol's limit.
     *
     * @return keys per request.
     */
    public int maxKeysPerRequest()
    {
        return cnc.maxKeysPerRequest();
    }

    public long clientLivenessMs()
    {
        return cnc.clientLivenessMs();
    }

    /**
     * The Manager's counters, readable while the client is open.
     *
     * @return a reader over the CnC file's counters.
     */
    public CountersReader countersReader()
    {
        return cnc.countersReader();
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
        return null == cnc ? 0 : cnc.doorbell().rings();
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
        return requests.read(batch, leases, leaseId, peers, result);
    }

    private boolean attached()
    {
        return requests != null && requests.isAttached();
    }

    private void checkPool()
    {
        if (null == pool)
        {
            throw new IllegalStateException("the Manager gives engines no pool access (--engine-pool-access none)");
        }
    }

    private void checkUsable()
    {
        if (closed || !attached())
        {
            throw new EngineClientException(EngineClientException.Reason.CLOSED,
                closed ? "client closed" : "client no longer attached");
        }
    }

    private void attach()
    {
        final long attachDeadlineNs = System.nanoTime() + ctx.attachTimeoutNs();
        cnc = ManagerCnc.map(ctx.dir(), ctx.attachTimeoutNs(), attachDeadlineNs);
        cnc.awaitFreshManager(attachDeadlineNs, epochClock);
        cnc.claimSlot(pid, epochClock.time());
        requests = new ManagerRequests(cnc, ctx);
        dataRegionPath = requests.attach(pid, ctx.clientName(), ctx.dataRegionBytes());
        mapDataRegion();
        if (cnc.poolWritable())
        {
            pool = ManagerPool.map(cnc.poolFile());
        }
        heartbeatAgent = new ClientHeartbeatAgent(
            cnc.requestRing(), cnc.slotTable(), cnc.slotIndex(), requests.clientId(), heartbeatIntervalMs(), epochClock);
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
        return Math.max(1, Math.min(1000, cnc.clientLivenessMs() / 5));
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
        closed = true;
        if (dataArena != null)
        {
            dataArena.close();
            dataArena = null;
        }
        CloseHelper.quietClose(pool);
        pool = null;
        CloseHelper.quietClose(cnc);
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
