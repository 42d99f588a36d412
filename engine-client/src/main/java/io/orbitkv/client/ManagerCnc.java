package io.orbitkv.client;

import io.orbitkv.codecs.EngineRingLimits;
import io.orbitkv.codecs.cnc.ClientSlot;
import io.orbitkv.codecs.cnc.CncFileDescriptor;
import io.orbitkv.codecs.cnc.ManagerLiveness;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.agrona.CloseHelper;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.EpochClock;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;
import org.agrona.concurrent.status.CountersReader;

/**
 * The Manager's CnC file as one client sees it: mapped once the Manager has written a layout this client
 * understands, with the limits its header announces, the request ring, the doorbell, the client slot this
 * client claimed and that slot's response ring. It also answers the two liveness questions a waiting client
 * asks: is the Manager still beating, and does our slot still hold us.
 */
final class ManagerCnc implements AutoCloseable
{
    private final String dir;
    private final Arena arena;
    private final CncFileDescriptor.Sections sections;
    private final ManyToOneRingBuffer requestRing;
    private final AtomicBuffer slotTable;
    private final long clientLivenessMs;
    private final long managerTimeoutMs;
    private final int maxKeysPerRequest;
    private final int maxRequestBytes;
    private final ClientSlot slot = new ClientSlot();
    private ManagerDoorbell doorbell;
    private OneToOneRingBuffer responseRing;
    private int slotIndex = -1;
    private boolean closed;

    private ManagerCnc(final String dir, final Arena arena, final MemorySegment segment)
    {
        this.dir = dir;
        this.arena = arena;
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
        slotTable = sections.slotTable();
    }

    /**
     * Map the CnC file in {@code dir}, retrying until the Manager has written a layout version or the deadline passes.
     *
     * @param dir             the Manager directory.
     * @param attachTimeoutNs the whole attach timeout, for the message.
     * @param deadlineNs      {@link System#nanoTime()} deadline.
     * @return the mapped file with its doorbell open.
     */
    static ManagerCnc map(final String dir, final long attachTimeoutNs, final long deadlineNs)
    {
        final Path cncFile = Paths.get(dir, CncFileDescriptor.CNC_FILE_NAME);
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
                    final int version = CncFileDescriptor.layoutVersion(
                        new UnsafeBuffer(segment.address(), CncFileDescriptor.HEADER_LENGTH));
                    if (version == CncFileDescriptor.LAYOUT_VERSION)
                    {
                        final ManagerCnc cnc = new ManagerCnc(dir, arena, segment);
                        cnc.openDoorbell(cncFile.getParent());
                        return cnc;
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
            catch (final AccessDeniedException ex)
            {
                // A Manager is there but its files are not this user's: waiting would not change that.
                throw new EngineClientException(EngineClientException.Reason.ATTACH_REJECTED, null,
                    "permission denied on " + cncFile + ": the Manager's files are its user's only; run the engine " +
                    "as that user, or start the Manager with --engine-group G and run the engine in group G", ex);
            }
            catch (final IOException ex)
            {
                lastProblem = cncFile + ": " + ex;
            }
            if (System.nanoTime() - deadlineNs > 0)
            {
                throw new EngineClientException(EngineClientException.Reason.NO_MANAGER,
                    "no Manager ready within " + TimeUnit.NANOSECONDS.toMillis(attachTimeoutNs) + " ms: " +
                    lastProblem);
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
    }

    private void openDoorbell(final Path managerDir)
    {
        try
        {
            doorbell = ManagerDoorbell.open(managerDir, sections.header());
        }
        catch (final IOException ex)
        {
            arena.close();
            throw new EngineClientException(EngineClientException.Reason.NO_MANAGER,
                "cannot open the Manager's doorbell in " + managerDir + ": " + ex);
        }
    }

    /**
     * Wait until the Manager's heartbeat is fresh; give up at the deadline, or at once when its process has ended.
     *
     * @param deadlineNs {@link System#nanoTime()} deadline.
     * @param epochClock the client's clock.
     */
    void awaitFreshManager(final long deadlineNs, final EpochClock epochClock)
    {
        final long managerPid = sections.header().getLong(CncFileDescriptor.MANAGER_PID_OFFSET);
        while (!managerAlive(epochClock))
        {
            // A stale Manager whose process has ended will not come back: no need to wait for the deadline.
            final boolean processGone = managerPid > 0 && !ManagerLiveness.isProcessAlive(managerPid);
            if (processGone || System.nanoTime() - deadlineNs > 0)
            {
                throw new EngineClientException(EngineClientException.Reason.STALE_MANAGER,
                    "Manager in " + dir + " (pid " + managerPid + (processGone ? ", not running" : "") +
                    ") has not updated its heartbeat for " +
                    (epochClock.time() - requestRing.consumerHeartbeatTime()) + " ms (limit " + managerTimeoutMs + " ms)");
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
    }

    boolean managerAlive(final EpochClock epochClock)
    {
        // The heartbeat half of the shared rule: an engine may not see the Manager's pid (another pid namespace).
        return ManagerLiveness.isHeartbeatFresh(requestRing.consumerHeartbeatTime(), epochClock.time(), managerTimeoutMs);
    }

    /**
     * Claim the first free client slot for this process and wrap its response ring.
     *
     * @param pid   this process.
     * @param nowMs the claim time.
     */
    void claimSlot(final long pid, final long nowMs)
    {
        final int maxClients = sections.maxClients();
        for (int i = 0; i < maxClients; i++)
        {
            if (slot.wrap(slotTable, i).tryClaim(pid, nowMs))
            {
                slotIndex = i;
                responseRing = new OneToOneRingBuffer(sections.responseRing(i));
                return;
            }
        }
        throw new EngineClientException(EngineClientException.Reason.NO_FREE_SLOT,
            "all " + maxClients + " client slots of " + dir + " are claimed");
    }

    void freeClaim(final long pid)
    {
        if (slotIndex < 0)
        {
            return;
        }
        // design: only an unattached claim is ours to free; an attached slot belongs to the Manager
        slot.freeClaim(pid);
        slotIndex = -1;
    }

    boolean ownsSlot(final long clientId)
    {
        return slot.isAttachedAs(clientId);
    }

    int slotIndex()
    {
        return slotIndex;
    }

    ManyToOneRingBuffer requestRing()
    {
        return requestRing;
    }

    OneToOneRingBuffer responseRing()
    {
        return responseRing;
    }

    AtomicBuffer slotTable()
    {
        return slotTable;
    }

    ManagerDoorbell doorbell()
    {
        return doorbell;
    }

    long clientLivenessMs()
    {
        return clientLivenessMs;
    }

    long managerTimeoutMs()
    {
        return managerTimeoutMs;
    }

    /**
     * @return whether the Manager lets engines map its pool ({@link CncFileDescriptor#POOL_ACCESS_WRITE_RESERVED}).
     */
    boolean poolWritable()
    {
        return CncFileDescriptor.POOL_ACCESS_WRITE_RESERVED == CncFileDescriptor.poolAccess(sections.header());
    }

    /**
     * @return the pool's shared file in the Manager's directory.
     */
    Path poolFile()
    {
        return Path.of(dir, CncFileDescriptor.POOL_FILE_NAME);
    }

    int maxKeysPerRequest()
    {
        return maxKeysPerRequest;
    }

    int maxRequestBytes()
    {
        return maxRequestBytes;
    }

    CountersReader countersReader()
    {
        return new CountersReader(sections.countersMetadata(), sections.countersValues());
    }

    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        CloseHelper.quietClose(doorbell);
        arena.close();
    }
}
