package io.orbitkv.manager;

import io.orbitkv.manager.ring.EngineFileAccess;
import io.orbitkv.manager.idle.AgentSleep;
import io.orbitkv.manager.idle.Doorbell;
import io.orbitkv.manager.idle.IdleInput;
import io.orbitkv.manager.ring.EngineRing;
import io.orbitkv.manager.ring.EngineRingAgent;
import io.orbitkv.manager.port.LineageListener;
import io.orbitkv.manager.status.CounterDescriptor;
import io.orbitkv.transport.Transport;
import io.orbitkv.manager.status.CncReader;
import io.orbitkv.manager.status.MetricsServer;
import io.orbitkv.manager.status.SystemCounterDescriptor;
import io.orbitkv.manager.status.SystemCounters;
import io.orbitkv.manager.store.PoolToucher;
import io.orbitkv.manager.store.SsdBackend;
import io.orbitkv.manager.store.SsdPersistence;
import io.orbitkv.manager.events.KvEvents;
import io.orbitkv.manager.store.SsdTier;
import io.orbitkv.manager.store.TieredStore;
import io.orbitkv.codecs.EngineRingLimits;
import io.orbitkv.codecs.cnc.CncFileDescriptor;
import io.orbitkv.ffm.HugePageMemory;
import io.orbitkv.ffm.MappedRegion;
import io.orbitkv.index.BlockIndex;
import io.orbitkv.index.BlockStore;
import io.orbitkv.index.NamespaceTable;
import io.orbitkv.manager.catalog.CatalogService;
import io.orbitkv.manager.catalog.OwnerInventory;
import io.orbitkv.manager.authority.AuthorityLog;
import io.orbitkv.manager.membership.Membership;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.MappedByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.util.UUID;
import org.agrona.BufferUtil;
import org.agrona.ErrorHandler;
import org.agrona.CloseHelper;
import org.agrona.IoUtil;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.CompositeAgent;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.errors.DistinctErrorLog;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.status.CountersManager;
import org.agrona.concurrent.status.CountersReader;

/**
 * A standalone OrbitKV Manager: the CnC file engines attach through, the DRAM pool and the agents serving them.
 *
 * <p>Start-up order matters to readers of the CnC file: the directory is checked for a live Manager (refused) or a
 * stale file (deleted), the file is created and its header filled, counters and the error log set up, the pool
 * mapped (and its pre-touch begun, see {@link PoolToucher}), the agents started, and only then the layout version is
 * written (design: the Manager writes {@code layoutVersion} last). {@link #close()} stops the pool toucher first, then
 * the agents, releases every client, unmaps and deletes the client data regions, the pool and the CnC file.
 */
public final class Manager implements AutoCloseable
{
    private final ManagerContext ctx;
    private final UUID runtimeUuid;
    private final long pid;
    private MappedByteBuffer cncBuffer;
    private CncFileDescriptor.Sections sections;
    private CountersManager countersManager;
    private SystemCounters systemCounters;
    private MappedRegion poolRegion;
    private PoolToucher poolToucher;
    private long readyMs;
    private AgentRunner agentRunner;
    private MetricsServer metricsServer;
    private KvEvents kvEvents;
    private SsdTier ssdTier;
    private MappedRegion stagingRegion;
    private MappedRegion exportStagingRegion;
    private int ssdFd = -1;
    private java.nio.file.Path ssdFile;
    private SsdPersistence ssdPersistence;
    private Membership membership;
    private AuthorityLog authorityLog;
    private CatalogService catalog;
    private Transport transport;
    private PeerSide peerSide;
    private Doorbell doorbell;
    private AgentSleep agentSleep;
    private volatile boolean closed;
    private boolean ownsDirectory;

    private Manager(final ManagerContext ctx)
    {
        this.ctx = ctx;
        this.runtimeUuid = UUID.randomUUID();
        this.pid = ProcessHandle.current().pid();
    }

    /**
     * Launch a Manager. The context is concluded here.
     *
     * @param ctx settings.
     * @return the running Manager, to close.
     * @throws IllegalStateException if a live Manager owns the directory.
     */
    public static Manager launch(final ManagerContext ctx)
    {
        ctx.conclude();
        final Manager manager = new Manager(ctx);
        try
        {
            manager.start();
        }
        catch (final Throwable ex)
        {
            try
            {
                manager.close();
            }
            catch (final Throwable suppressed)
            {
                ex.addSuppressed(suppressed);
            }
            throw ex;
        }
        return manager;
    }

    private void start()
    {
        final File dir = ctx.dir();
        if (!dir.isDirectory() && !dir.mkdirs())
        {
            throw new IllegalStateException("cannot create Manager directory " + dir);
        }
        // Before any shared file exists in it: another user cannot even look up a name in the directory.
        final EngineFileAccess access = ctx.engineFileAccess();
        access.directory(dir);
        final File cncFile = ctx.cncFile();
        refuseIfLiveManager(cncFile);
        ownsDirectory = true;
        IoUtil.deleteIfExists(cncFile);
        final File clientsDir = ctx.clientsDir();
        if (clientsDir.exists())
        {
            IoUtil.delete(clientsDir, false);
        }
        if (!clientsDir.mkdirs())
        {
            throw new IllegalStateException("cannot create client data region directory " + clientsDir);
        }
        access.directory(clientsDir);

        final CncFileDescriptor.Lengths lengths = ctx.cncLengths();
        final long fileLength = CncFileDescriptor.fileLength(lengths);
        // Made and given its mode under another name, then renamed: an engine never finds a cnc.dat it may not open
        // yet (it would take that for a refusal), whatever the umask and however long the zero fill takes.
        final File newCncFile = new File(cncFile.getParentFile(), cncFile.getName() + ".new");
        IoUtil.deleteIfExists(newCncFile);
        cncBuffer = IoUtil.mapNewFile(newCncFile, fileLength, true);
        access.file(newCncFile);
        try
        {
            Files.move(newCncFile.toPath(), cncFile.toPath(), StandardCopyOption.ATOMIC_MOVE);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot rename " + newCncFile + " to " + cncFile, ex);
        }
        final long address = BufferUtil.address(cncBuffer);
        final long startTimeMs = ctx.epochClock().time();
        final org.agrona.concurrent.UnsafeBuffer header =
            new org.agrona.concurrent.UnsafeBuffer(address, CncFileDescriptor.HEADER_LENGTH);
        CncFileDescriptor.fillHeader(
            header,
            lengths,
            pid,
            startTimeMs,
            runtimeUuid.getMostSignificantBits(),
            runtimeUuid.getLeastSignificantBits(),
            ctx.clientTimeoutNs(),
            EngineRingLimits.MAX_KEYS_PER_REQUEST,
            EngineRingLimits.MAX_REQUEST_BYTES,
            ctx.maxDataRegionBytes(),
            ctx.poolBytes());
        sections = new CncFileDescriptor.Sections(address, fileLength);
        // Layout version 2 promises engines the doorbell once the version is written, whether or not the agent sleeps.
        doorbell = new Doorbell(ctx.doorbellFile());
        access.file(ctx.doorbellFile());

        countersManager = new CountersManager(
            sections.countersMetadata(), sections.countersValues(), StandardCharsets.US_ASCII);
        systemCounters = SystemCounterFamilies.allocate(countersManager);
        final DistinctErrorLog errorLog =
            new DistinctErrorLog(sections.errorLog(), ctx.epochClock(), StandardCharsets.US_ASCII);
        final ManagerErrorHandler errorHandler =
            new ManagerErrorHandler(errorLog, systemCounters.get(SystemCounterDescriptor.ERRORS), System.err);

        // design: one off-heap pool, 2 MiB aligned, MADV_HUGEPAGE before first touch. Engines that write their saves
        // straight into the pool map it too, so then it is a shared file in the Manager's directory.
        poolRegion = null == ctx.poolFile() ? HugePageMemory.mapAnonymous(ctx.poolBytes(), true) :
            HugePageMemory.mapSharedFile(ctx.poolFile().getAbsolutePath(), ctx.poolBytes(), true);
        if (null != ctx.poolFile())
        {
            access.file(ctx.poolFile());
        }
        CncFileDescriptor.poolAccess(header, null == ctx.poolFile() ? CncFileDescriptor.POOL_ACCESS_NONE :
            CncFileDescriptor.POOL_ACCESS_WRITE_RESERVED);
        // Started before the rest of start-up so a background touch is already ahead when the first publish lands.
        poolToucher = new PoolToucher(
            poolRegion,
            ctx.poolPretouch(),
            Configuration.POOL_TOUCH_CHUNK_BYTES,
            ctx.poolPretouchPauseNs(),
            systemCounters,
            errorHandler);
        poolToucher.start();
        final NamespaceTable namespaces = new NamespaceTable(ctx.maxNamespaces());
        // A clustered Manager's stores report every residence to the catalog's inventory from their constructors on.
        final OwnerInventory inventory = ctx.hasMembership() ? new OwnerInventory(
            namespaces,
            (null == ctx.ssdDir() ? 1L : 2L) * BlockIndex.capacityFor(ctx.indexBudgetBytes()),
            ctx.catalogInventoryBytes(),
            ctx.catalogJournalBytes(),
            systemCounters) : null;
        BlockStore.ResidencyObserver dramObserver =
            null == inventory ? BlockStore.NO_OP_OBSERVER : inventory.dramObserver();
        BlockStore.ResidencyObserver ssdObserver =
            null == inventory ? BlockStore.NO_OP_OBSERVER : inventory.ssdObserver();
        if (null != ctx.kvEventsEndpoint())
        {
            // Started before the stores exist: AllBlocksCleared goes out ahead of the first residency record.
            kvEvents = new KvEvents(ctx.kvEventsEndpoint(), ctx.kvEventsReplayEndpoint(), ctx.kvEventsTopic(),
                namespaces, systemCounters, errorHandler);
            dramObserver = kvEvents.dramObserver(dramObserver);
            ssdObserver = kvEvents.ssdObserver(ssdObserver);
        }
        if (null != ctx.ssdDir())
        {
            ssdTier = openSsdTier(ssdObserver, namespaces, errorHandler);
        }
        final TieredStore store = new TieredStore(ctx, poolRegion.segment(), ssdTier, systemCounters, dramObserver);

        if (null != inventory)
        {
            // The catalog shares the ring agent's thread: inventory transitions happen inside the stores that thread
            // owns, and the journal they append to is streamed from the same thread.
            // Before membership starts: its first registration is the log's first record.
            authorityLog = AuthorityLog.create(ctx.dir(), ctx.authorityLogBytes(), ctx.nodeId(), ctx.clusterName(),
                runtimeUuid, pid, ctx.nanoClock(), ctx.epochClock(), systemCounters);
            access.file(authorityLog.file());
            peerSide = new PeerSide(ctx, runtimeUuid, startTimeMs, store, ssdTier, poolRegion, namespaces, inventory,
                systemCounters, countersManager, errorHandler, authorityLog);
            transport = peerSide.transport;
            exportStagingRegion = peerSide.exportStagingRegion;
            membership = peerSide.membership;
            catalog = peerSide.catalog;
        }
        final EngineRing ring = new EngineRing(ctx, sections, store, namespaces, systemCounters, errorHandler, errorLog,
            null == peerSide ? null : peerSide.fetcher, null == kvEvents ? LineageListener.NONE : kvEvents.lineage());
        final EngineRingAgent ringAgent = ring.newAgent();
        final IdleStrategy idleStrategy = newIdleStrategy(errorHandler);

        // One agent thread for the ring and the peer side (docs/architecture.md, "Threads", says why).
        final Agent agent = null == catalog ? ringAgent : new CompositeAgent(ringAgent, catalog);
        agentRunner = new AgentRunner(idleStrategy, errorHandler, null, agent);
        AgentRunner.startOnThread(agentRunner, ctx.agentThreadFactory());
        awaitSsdStarted();

        if (ctx.metricsPort() > 0)
        {
            try
            {
                metricsServer = new MetricsServer(ctx.metricsPort(), countersManager, systemCounters);
            }
            catch (final IOException ex)
            {
                throw new UncheckedIOException("cannot serve /metrics on port " + ctx.metricsPort(), ex);
            }
        }

        readyMs = processUptimeMs();
        systemCounters.get(SystemCounterDescriptor.READY_MS).setRelease(readyMs);
        // Engines may attach from here on: local service never waits for etcd. A join that fails for good
        // (placement mismatch, node id in use, etcd unreachable for the join timeout) still fails the launch.
        CncFileDescriptor.signalReady(sections.header());
        if (null != membership)
        {
            membership.awaitJoined();
        }
    }

    /**
     * Time since this JVM started, for the time-to-ready figure: the JVM's uptime, read from a monotonic clock, so a
     * step of the wall clock between the start and now does not enter it (a figure from the wall clock's start time
     * was off by the step).
     */
    private static long processUptimeMs()
    {
        return java.lang.management.ManagementFactory.getRuntimeMXBean().getUptime();
    }
    /**
     * Milliseconds from the start of this process to the moment the Manager signalled ready (engines may attach).
     * Also counter {@link SystemCounterDescriptor#READY_MS}.
     *
     * @return time to ready; only meaningful when the process was started to run this Manager.
     */
    public long readyMs()
    {
        return readyMs;
    }

    /**
     * Truncate/create the SSD file (O_DIRECT, space reserved with fallocate where the filesystem allows), map and
     * pre-fault the staging region on 2 MiB pages, and choose the backend: io_uring when the probe succeeds (or
     * required by --ssd-backend=io_uring), FileChannel otherwise.
     */
    /**
     * The agent's idle strategy: the one the context was given, else the one it names. The {@code backoff} strategy
     * is built here, once the parts it waits on exist: the peer socket's wait (a clustered Manager) and the deep
     * sleep that the doorbell, a peer's datagram or the agent's next deadline ends.
     */
    private IdleStrategy newIdleStrategy(final ErrorHandler errorHandler)
    {
        if (null != ctx.idleStrategy())
        {
            return ctx.idleStrategy();
        }
        if (!Configuration.isBackoffIdleStrategy(ctx.idleStrategyName()))
        {
            return Configuration.newIdleStrategy(ctx.idleStrategyName());
        }

        final IdleInput peerWakeup = null == catalog ? null : catalog.transport().wakeup();
        if (ctx.idleSleep())
        {
            agentSleep = new AgentSleep(
                sections.header(),
                new ManyToOneRingBuffer(sections.requestRing()),
                doorbell,
                ctx.effectiveIdleSleepMaxNs(),
                peerWakeup,
                null == peerSide ? null : peerSide::outstandingPolledWork,
                systemCounters,
                errorHandler);
        }
        return Configuration.newBackoffIdleStrategy(
            ctx.idleLingerNs(),
            ctx.idlePeerWait() ? peerWakeup : null,
            agentSleep,
            ctx.idleSleepAfterNs());
    }

    private SsdTier openSsdTier(
        final BlockStore.ResidencyObserver residencyObserver,
        final NamespaceTable namespaces,
        final ManagerErrorHandler errorHandler)
    {
        final File ssdDir = ctx.ssdDir();
        if (!ssdDir.isDirectory() && !ssdDir.mkdirs())
        {
            throw new IllegalStateException("cannot create --ssd-dir " + ssdDir);
        }
        ssdFile = new File(ssdDir, "orbitkv-" + ctx.name() + ".ssd").toPath();
        try
        {
            final String type = java.nio.file.Files.getFileStore(ssdDir.toPath()).type();
            if ("tmpfs".equals(type) || "ramfs".equals(type))
            {
                System.err.println("orbitkv ssd: --ssd-dir " + ssdDir + " is on " + type + ", which accepts O_DIRECT and " +
                    "ignores it: this is memory, not an SSD tier");
            }
        }
        catch (final IOException ex)
        {
            // Only a warning is at stake.
        }
        // Read the manifest before the file is opened: only a manifest of this layout keeps the file's contents.
        ssdPersistence = SsdPersistence.open(ctx, ssdFile, systemCounters, System.err);
        final io.orbitkv.ffm.CallState state = new io.orbitkv.ffm.CallState();
        try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined())
        {
            // Without a manifest to recover from, the file is truncated: what it held is not described anywhere.
            ssdFd = io.orbitkv.ffm.LibC.open(
                state,
                arena.allocateFrom(ssdFile.toString()),
                io.orbitkv.ffm.LibC.O_RDWR | io.orbitkv.ffm.LibC.O_CREAT |
                (ssdPersistence.keepsFile() ? 0 : io.orbitkv.ffm.LibC.O_TRUNC) |
                io.orbitkv.ffm.LibC.O_DIRECT | io.orbitkv.ffm.LibC.O_CLOEXEC,
                0600);
        }
        if (ssdFd < 0)
        {
            throw new IllegalStateException("cannot open " + ssdFile + " with O_DIRECT: " +
                io.orbitkv.ffm.Errno.describe(state.errno()));
        }
        if (io.orbitkv.ffm.LibC.fallocate(state, ssdFd, 0, 0, ctx.ssdBytes()) < 0)
        {
            final int errno = state.errno();
            if (io.orbitkv.ffm.LibC.ftruncate(state, ssdFd, ctx.ssdBytes()) < 0)
            {
                throw new IllegalStateException("cannot size " + ssdFile + " to " + ctx.ssdBytes() + " bytes: " +
                    io.orbitkv.ffm.Errno.describe(state.errno()));
            }
            System.err.println("orbitkv ssd: fallocate of " + ctx.ssdBytes() + " bytes failed (" +
                io.orbitkv.ffm.Errno.describe(errno) + "); the file is sparse and writes may fail with ENOSPC " +
                "(counted as SSD I/O errors)");
        }

        stagingRegion = HugePageMemory.mapAnonymous(ctx.ssdStagingBytes(), true);
        HugePageMemory.prefault(stagingRegion);

        final SsdBackend backend;
        final Configuration.SsdBackendChoice choice = ctx.ssdBackend();
        if (Configuration.SsdBackendChoice.FILECHANNEL == choice)
        {
            backend = ctx.ssdBackendSupplier().fileChannel(
                ssdFile, ctx.ssdQueueDepth(), stagingRegion, "forced by --ssd-backend");
        }
        else
        {
            final io.orbitkv.ffm.IoUring.Availability availability = io.orbitkv.ffm.IoUring.probe();
            if (availability.available())
            {
                backend = ctx.ssdBackendSupplier().uring(ssdFd, ctx.ssdQueueDepth(), stagingRegion, System.err);
            }
            else if (Configuration.SsdBackendChoice.IO_URING == choice)
            {
                throw new IllegalStateException("--ssd-backend=io_uring but " + availability.reason());
            }
            else
            {
                backend = ctx.ssdBackendSupplier().fileChannel(
                    ssdFile, ctx.ssdQueueDepth(), stagingRegion, "io_uring unavailable: " + availability.reason());
            }
        }
        return ssdPersistence.newTier(backend, stagingRegion, poolRegion.segment(), residencyObserver, namespaces,
            errorHandler);
    }

    private void awaitSsdStarted()
    {
        if (null == ssdTier)
        {
            return;
        }
        final long deadlineNs = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
        while (!ssdTier.isStarted())
        {
            if (System.nanoTime() - deadlineNs > 0 || agentRunner.isClosed())
            {
                throw new IllegalStateException("SSD tier did not start on the storage thread");
            }
            Thread.onSpinWait();
            Thread.yield();
        }
    }

    /**
     * @return the SSD tier's backend and file, or "off".
     */
    public String ssdDescription()
    {
        if (null == ssdTier)
        {
            return "off (no --ssd-dir)";
        }
        return ssdTier.description() + ", file " + ssdFile + ", " + ctx.ssdBytes() + " bytes, admission " +
            ctx.ssdAdmission().name().toLowerCase(java.util.Locale.ROOT).replace('_', '-') +
            (ctx.ssdPromote() ? ", promote on hit" : "") + ", staging " + ctx.ssdStagingBytes() + " bytes, direct reads " +
            ssdTier.directReadsDescription();
    }

    /**
     * The KV-event stream for routers, or null when {@code --kv-events-endpoint} is unset.
     *
     * @return the stream.
     */
    public KvEvents kvEvents()
    {
        return kvEvents;
    }

    SsdTier ssdTier()
    {
        return ssdTier;
    }

    /**
     * The distributed catalog service, or null for a standalone Manager.
     *
     * @return the catalog.
     */
    public CatalogService catalog()
    {
        return catalog;
    }

    /**
     * Cluster membership, or null for a standalone Manager.
     *
     * @return the membership.
     */
    public Membership membership()
    {
        return membership;
    }

    private void refuseIfLiveManager(final File cncFile)
    {
        if (!cncFile.exists())
        {
            return;
        }
        try (CncReader reader = CncReader.map(cncFile))
        {
            if (reader.isManagerAlive(ctx.epochClock().time()))
            {
                throw new IllegalStateException("a live Manager (pid " + reader.managerPid() + ", started at " +
                    java.time.Instant.ofEpochMilli(reader.startTimeMs()) + ", heartbeat " +
                    (ctx.epochClock().time() - reader.managerHeartbeatMs()) + " ms ago) owns " + ctx.dir() +
                    "; stop it first or choose another --dir/--name");
            }
        }
        catch (final IllegalStateException ex)
        {
            if (ex.getMessage().startsWith("a live Manager"))
            {
                throw ex;
            }
            // Unreadable leftovers are stale by definition: deleted below.
        }
    }

    public ManagerContext context()
    {
        return ctx;
    }

    public UUID runtimeUuid()
    {
        return runtimeUuid;
    }

    public File cncFile()
    {
        return ctx.cncFile();
    }

    /**
     * The Manager's counters, readable from any thread.
     *
     * @return counters reader over the CnC counters section.
     */
    public CountersReader countersReader()
    {
        return countersManager;
    }

    /**
     * Current value of one system counter.
     *
     * @param descriptor the counter.
     * @return its value.
     */
    public long counter(final CounterDescriptor descriptor)
    {
        return countersManager.getCounterValue(descriptor.fixedId());
    }

    /**
     * Port of the metrics endpoint, or 0 when disabled.
     *
     * @return the bound port.
     */
    public int metricsPort()
    {
        return null == metricsServer ? 0 : metricsServer.port();
    }

    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        // First: the toucher competes for CPU with everything that closes after it, and must end before the unmap.
        if (null != poolToucher && !poolToucher.close())
        {
            System.err.println("orbitkv manager: the pool toucher did not stop within " +
                java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(Configuration.POOL_TOUCH_STOP_TIMEOUT_NS) +
                " ms; the pool stays mapped until the process exits");
            poolRegion = null;
        }
        CloseHelper.quietClose(membership);
        CloseHelper.quietClose(metricsServer);
        if (null != doorbell)
        {
            // A sleeping agent sees that its runner stopped only when it wakes. Rung, it parks for --idle-sleep-after
            // before it sleeps again, long enough to see the stop; otherwise closing waits out one sleep.
            doorbell.ring();
        }
        CloseHelper.close(agentRunner);
        // After the agent and the membership, its writers; the file stays for readers.
        CloseHelper.quietClose(authorityLog);
        // After the agent: its last completions queued their records; they are written and synced before the exit.
        CloseHelper.quietClose(ssdPersistence);
        // After the agent: it is the ring's only writer, and what it queued still goes out.
        CloseHelper.quietClose(kvEvents);
        CloseHelper.quietClose(agentSleep);
        // Before the pool is unmapped: the transport's own threads read from it and write into client regions.
        CloseHelper.quietClose(transport);
        CloseHelper.quietClose(catalog);
        CloseHelper.quietClose(poolRegion);
        CloseHelper.quietClose(stagingRegion);
        CloseHelper.quietClose(exportStagingRegion);
        if (ssdFd >= 0)
        {
            io.orbitkv.ffm.LibC.close(new io.orbitkv.ffm.CallState(), ssdFd);
            ssdFd = -1;
            try
            {
                // Without a manifest nothing describes the file: its space goes back at exit.
                if (null == ssdPersistence || !ssdPersistence.keepsFileAtStop())
                {
                    java.nio.file.Files.deleteIfExists(ssdFile);
                }
            }
            catch (final IOException ex)
            {
                System.err.println("orbitkv ssd: cannot delete " + ssdFile + ": " + ex);
            }
        }
        if (null != cncBuffer)
        {
            IoUtil.unmap(cncBuffer);
            cncBuffer = null;
        }
        CloseHelper.quietClose(doorbell);
        if (null != ctx.poolFile())
        {
            // Engines still mapping it keep their pages; the name goes so that nothing new maps a dead pool.
            IoUtil.deleteIfExists(ctx.poolFile());
        }
        if (ownsDirectory)
        {
            IoUtil.deleteIfExists(ctx.cncFile());
            final File clientsDir = ctx.clientsDir();
            if (clientsDir.exists())
            {
                IoUtil.delete(clientsDir, true);
            }
        }
    }

    public String toString()
    {
        return "Manager{pid=" + pid + ", runtimeUuid=" + runtimeUuid + ", dir=" + ctx.dir() + '}';
    }
}
