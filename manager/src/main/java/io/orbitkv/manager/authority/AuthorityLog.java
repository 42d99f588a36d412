package io.orbitkv.manager.authority;

import io.orbitkv.manager.status.SystemCounters;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.invoke.VarHandle;
import java.nio.MappedByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.agrona.BufferUtil;
import org.agrona.IoUtil;
import org.agrona.concurrent.EpochClock;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.AtomicCounter;

import static io.orbitkv.manager.authority.AuthorityLogDescriptor.AGENT_SECTION;
import static io.orbitkv.manager.authority.AuthorityLogDescriptor.CLOSING;
import static io.orbitkv.manager.authority.AuthorityLogDescriptor.CLUSTER_LENGTH_OFFSET;
import static io.orbitkv.manager.authority.AuthorityLogDescriptor.CLUSTER_OFFSET;
import static io.orbitkv.manager.authority.AuthorityLogDescriptor.EPOCH_OFFSET;
import static io.orbitkv.manager.authority.AuthorityLogDescriptor.FENCED;
import static io.orbitkv.manager.authority.AuthorityLogDescriptor.FETCH_ACCEPTED;
import static io.orbitkv.manager.authority.AuthorityLogDescriptor.FIELDS_OFFSET;
import static io.orbitkv.manager.authority.AuthorityLogDescriptor.FILE_NAME;
import static io.orbitkv.manager.authority.AuthorityLogDescriptor.GRANT;
import static io.orbitkv.manager.authority.AuthorityLogDescriptor.HEADER_LENGTH;
import static io.orbitkv.manager.authority.AuthorityLogDescriptor.HEADER_LENGTH_OFFSET;
import static io.orbitkv.manager.authority.AuthorityLogDescriptor.INCARNATION_OFFSET;
import static io.orbitkv.manager.authority.AuthorityLogDescriptor.KEPT_LOGS;
import static io.orbitkv.manager.authority.AuthorityLogDescriptor.MAGIC;
import static io.orbitkv.manager.authority.AuthorityLogDescriptor.MAGIC_OFFSET;
import static io.orbitkv.manager.authority.AuthorityLogDescriptor.MAX_NAME_BYTES;
import static io.orbitkv.manager.authority.AuthorityLogDescriptor.MEMBERSHIP_SECTION;
import static io.orbitkv.manager.authority.AuthorityLogDescriptor.MEMBERSHIP_SHARE;
import static io.orbitkv.manager.authority.AuthorityLogDescriptor.MONO_NS_OFFSET;
import static io.orbitkv.manager.authority.AuthorityLogDescriptor.NODE_ID_LENGTH_OFFSET;
import static io.orbitkv.manager.authority.AuthorityLogDescriptor.NODE_ID_OFFSET;
import static io.orbitkv.manager.authority.AuthorityLogDescriptor.PID_OFFSET;
import static io.orbitkv.manager.authority.AuthorityLogDescriptor.PROCESS_UUID_LSB_OFFSET;
import static io.orbitkv.manager.authority.AuthorityLogDescriptor.PROCESS_UUID_MSB_OFFSET;
import static io.orbitkv.manager.authority.AuthorityLogDescriptor.RECORD_LENGTH;
import static io.orbitkv.manager.authority.AuthorityLogDescriptor.RECORD_LENGTH_OFFSET;
import static io.orbitkv.manager.authority.AuthorityLogDescriptor.REGISTERED;
import static io.orbitkv.manager.authority.AuthorityLogDescriptor.SECTIONS;
import static io.orbitkv.manager.authority.AuthorityLogDescriptor.SECTION_CAPACITY_OFFSET;
import static io.orbitkv.manager.authority.AuthorityLogDescriptor.SECTION_COUNT_OFFSET;
import static io.orbitkv.manager.authority.AuthorityLogDescriptor.SECTION_DATA_OFFSET;
import static io.orbitkv.manager.authority.AuthorityLogDescriptor.SECTION_POSITION_OFFSET;
import static io.orbitkv.manager.authority.AuthorityLogDescriptor.SEQUENCE_OFFSET;
import static io.orbitkv.manager.authority.AuthorityLogDescriptor.START_MONO_NS_OFFSET;
import static io.orbitkv.manager.authority.AuthorityLogDescriptor.START_WALL_MS_OFFSET;
import static io.orbitkv.manager.authority.AuthorityLogDescriptor.TYPE_OFFSET;
import static io.orbitkv.manager.authority.AuthorityLogDescriptor.UUID_LSB_OFFSET;
import static io.orbitkv.manager.authority.AuthorityLogDescriptor.UUID_MSB_OFFSET;
import static io.orbitkv.manager.authority.AuthorityLogDescriptor.VALIDITY;
import static io.orbitkv.manager.authority.AuthorityLogDescriptor.VERSION;
import static io.orbitkv.manager.authority.AuthorityLogDescriptor.VERSION_OFFSET;
import static io.orbitkv.manager.authority.AuthorityLogDescriptor.WALL_MS_OFFSET;
import static io.orbitkv.manager.authority.AuthorityLogDescriptor.sectionOffset;

/**
 * A bounded, append-only record of this Manager's authority: its registrations, validity deadlines and fences, the
 * grants it made as a source and the sessions whose bytes it accepted as a requester, each with the monotonic and the
 * wall clock. A memory-mapped file in the Manager's directory ({@link AuthorityLogDescriptor}), so it can be read
 * while the Manager runs and after it was killed, by a checker that orders the logs of every Manager on the host by
 * their shared monotonic clock.
 *
 * <p>Two rings, one writer each: the membership threads write theirs under this object's lock (a few records a
 * minute); the agent thread writes the other without a lock or an allocation. A full ring wraps over its oldest
 * records, which are counted. A record is published by its sequence and then the section's position, both stored
 * with release semantics; a reader takes a record only when its sequence matches before and after reading it.
 */
public final class AuthorityLog implements AutoCloseable
{
    /** Smallest log: the header and a few records per section. */
    public static final long MIN_BYTES = HEADER_LENGTH + 64L * RECORD_LENGTH * MEMBERSHIP_SHARE;
    /** Largest log. */
    public static final long MAX_BYTES = 1L << 30;
    /**
     * A validity extension is written when it moves the deadline at least this far past the last one written, or
     * when the last one written is nearer than this to now; otherwise it is only counted.
     */
    public static final long VALIDITY_COALESCE_NS = TimeUnit.SECONDS.toNanos(2);

    private final File file;
    private final NanoClock nanoClock;
    private final EpochClock epochClock;
    private final MappedByteBuffer mapped;
    private final UnsafeBuffer buffer;
    private final long[] dataOffset = new long[SECTIONS];
    private final long[] capacity = new long[SECTIONS];
    private final long[] position = new long[SECTIONS];
    private final AtomicCounter records;
    private final AtomicCounter overwritten;
    private final AtomicCounter coalesced;
    private final AtomicCounter grants;
    private final AtomicCounter accepts;
    private long validityIncarnationMsb;
    private long validityIncarnationLsb;
    private long lastValidityNs;
    private volatile boolean closed;

    private AuthorityLog(
        final File file,
        final long bytes,
        final String nodeId,
        final String clusterName,
        final UUID processUuid,
        final long pid,
        final NanoClock nanoClock,
        final EpochClock epochClock,
        final SystemCounters counters)
    {
        this.file = file;
        this.nanoClock = nanoClock;
        this.epochClock = epochClock;
        final long recordsInAll = (bytes - HEADER_LENGTH) / RECORD_LENGTH;
        capacity[MEMBERSHIP_SECTION] = recordsInAll / MEMBERSHIP_SHARE;
        capacity[AGENT_SECTION] = recordsInAll - capacity[MEMBERSHIP_SECTION];
        dataOffset[MEMBERSHIP_SECTION] = HEADER_LENGTH;
        dataOffset[AGENT_SECTION] = HEADER_LENGTH + capacity[MEMBERSHIP_SECTION] * RECORD_LENGTH;
        final long length = HEADER_LENGTH + recordsInAll * RECORD_LENGTH;
        this.mapped = IoUtil.mapNewFile(file, length, true);
        this.buffer = new UnsafeBuffer(BufferUtil.address(mapped), (int)length);
        this.records = counters.get(AuthorityCounter.RECORDS);
        this.overwritten = counters.get(AuthorityCounter.OVERWRITTEN);
        this.coalesced = counters.get(AuthorityCounter.VALIDITY_COALESCED);
        this.grants = counters.get(AuthorityCounter.GRANTS);
        this.accepts = counters.get(AuthorityCounter.ACCEPTS);

        buffer.putInt(VERSION_OFFSET, VERSION);
        buffer.putInt(HEADER_LENGTH_OFFSET, HEADER_LENGTH);
        buffer.putInt(RECORD_LENGTH_OFFSET, RECORD_LENGTH);
        buffer.putLong(PID_OFFSET, pid);
        buffer.putLong(START_WALL_MS_OFFSET, epochClock.time());
        buffer.putLong(START_MONO_NS_OFFSET, nanoClock.nanoTime());
        buffer.putLong(PROCESS_UUID_MSB_OFFSET, processUuid.getMostSignificantBits());
        buffer.putLong(PROCESS_UUID_LSB_OFFSET, processUuid.getLeastSignificantBits());
        buffer.putInt(SECTION_COUNT_OFFSET, SECTIONS);
        putName(NODE_ID_LENGTH_OFFSET, NODE_ID_OFFSET, nodeId);
        putName(CLUSTER_LENGTH_OFFSET, CLUSTER_OFFSET, clusterName);
        for (int s = 0; s < SECTIONS; s++)
        {
            buffer.putLong(sectionOffset(s) + SECTION_DATA_OFFSET, dataOffset[s]);
            buffer.putLong(sectionOffset(s) + SECTION_CAPACITY_OFFSET, capacity[s]);
            buffer.putLong(sectionOffset(s) + SECTION_POSITION_OFFSET, 0);
        }
        // Last: a reader that sees the magic sees a complete header.
        buffer.putIntOrdered(MAGIC_OFFSET, MAGIC);
    }

    /**
     * Create the log in a directory, keeping the previous ones ({@value AuthorityLogDescriptor#KEPT_LOGS}, the
     * newest as authority.1.log).
     *
     * @param dir         the Manager's directory.
     * @param bytes       file size: {@link #MIN_BYTES} to {@link #MAX_BYTES}.
     * @param nodeId      this Manager's node id.
     * @param clusterName its cluster.
     * @param processUuid the process's runtime UUID (the CnC file's).
     * @param pid         this process.
     * @param nanoClock   the Manager's nano clock (CLOCK_MONOTONIC when it is the system's).
     * @param epochClock  the wall clock.
     * @param counters    where the log's counters live.
     * @return the log, to close after every writer stopped.
     */
    public static AuthorityLog create(
        final File dir,
        final long bytes,
        final String nodeId,
        final String clusterName,
        final UUID processUuid,
        final long pid,
        final NanoClock nanoClock,
        final EpochClock epochClock,
        final SystemCounters counters)
    {
        if (bytes < MIN_BYTES || bytes > MAX_BYTES)
        {
            throw new IllegalArgumentException("authority log size must be between " + MIN_BYTES + " and " + MAX_BYTES +
                " bytes: " + bytes);
        }
        final File file = new File(dir, FILE_NAME);
        keepPrevious(dir, file);
        return new AuthorityLog(file, bytes, nodeId, clusterName, processUuid, pid, nanoClock, epochClock, counters);
    }

    /**
     * Name of the {@code n}th earlier log.
     *
     * @param n 1 for the newest earlier one.
     * @return file name.
     */
    public static String keptName(final int n)
    {
        return "authority." + n + ".log";
    }

    private static void keepPrevious(final File dir, final File current)
    {
        if (!current.exists())
        {
            return;
        }
        try
        {
            Files.deleteIfExists(new File(dir, keptName(KEPT_LOGS)).toPath());
            for (int n = KEPT_LOGS - 1; n >= 1; n--)
            {
                final File older = new File(dir, keptName(n));
                if (older.exists())
                {
                    Files.move(older.toPath(), new File(dir, keptName(n + 1)).toPath(), StandardCopyOption.REPLACE_EXISTING);
                }
            }
            Files.move(current.toPath(), new File(dir, keptName(1)).toPath(), StandardCopyOption.REPLACE_EXISTING);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot keep the previous authority log " + current, ex);
        }
    }

    private void putName(final int lengthOffset, final int offset, final String name)
    {
        final byte[] bytes = null == name ? new byte[0] : name.getBytes(StandardCharsets.UTF_8);
        final int length = Math.min(bytes.length, MAX_NAME_BYTES);
        buffer.putInt(lengthOffset, length);
        buffer.putBytes(offset, bytes, 0, length);
    }

    /**
     * @return the file.
     */
    public File file()
    {
        return file;
    }

    /**
     * @param section a section.
     * @return its capacity in records.
     */
    public long capacity(final int section)
    {
        return capacity[section];
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Membership threads.

    /**
     * A new incarnation registered.
     *
     * @param incarnation   its number.
     * @param epoch         its epoch.
     * @param uuidMsb       its runtime UUID.
     * @param uuidLsb       its runtime UUID.
     * @param leaseId       its lease.
     * @param ttlSecs       the lease's TTL.
     * @param validUntilNs  its validity deadline.
     * @param previousCause the fence cause code that ended the previous incarnation, 0 for the first.
     */
    public synchronized void registered(
        final int incarnation,
        final long epoch,
        final long uuidMsb,
        final long uuidLsb,
        final long leaseId,
        final long ttlSecs,
        final long validUntilNs,
        final int previousCause)
    {
        validityIncarnationMsb = uuidMsb;
        validityIncarnationLsb = uuidLsb;
        lastValidityNs = validUntilNs;
        append(MEMBERSHIP_SECTION, REGISTERED, incarnation, epoch, uuidMsb, uuidLsb, nanoClock.nanoTime(),
            leaseId, ttlSecs, validUntilNs, previousCause, 0, 0, 0);
    }

    /**
     * The validity deadline was extended: written when it moved at least {@link #VALIDITY_COALESCE_NS} past the last
     * one written or that one is within {@link #VALIDITY_COALESCE_NS} of now, else counted as coalesced.
     *
     * @param incarnation  the incarnation's number.
     * @param epoch        its epoch.
     * @param uuidMsb      its runtime UUID.
     * @param uuidLsb      its runtime UUID.
     * @param validUntilNs the new deadline.
     * @param sentNs       when the acknowledged keepalive was sent.
     */
    public synchronized void validity(
        final int incarnation,
        final long epoch,
        final long uuidMsb,
        final long uuidLsb,
        final long validUntilNs,
        final long sentNs)
    {
        final long nowNs = nanoClock.nanoTime();
        final boolean sameIncarnation = uuidMsb == validityIncarnationMsb && uuidLsb == validityIncarnationLsb;
        if (sameIncarnation &&
            validUntilNs - lastValidityNs < VALIDITY_COALESCE_NS &&
            lastValidityNs - nowNs >= VALIDITY_COALESCE_NS)
        {
            coalesced.incrementRelease();
            return;
        }
        validityIncarnationMsb = uuidMsb;
        validityIncarnationLsb = uuidLsb;
        lastValidityNs = validUntilNs;
        append(MEMBERSHIP_SECTION, VALIDITY, incarnation, epoch, uuidMsb, uuidLsb, nowNs,
            validUntilNs, sentNs, 0, 0, 0, 0, 0);
    }

    /**
     * An incarnation was fenced; call after the fence latched.
     *
     * @param incarnation  its number.
     * @param epoch        its epoch.
     * @param uuidMsb      its runtime UUID.
     * @param uuidLsb      its runtime UUID.
     * @param causeCode    the fence cause's code.
     * @param validUntilNs its validity deadline at this moment.
     */
    public synchronized void fenced(
        final int incarnation,
        final long epoch,
        final long uuidMsb,
        final long uuidLsb,
        final int causeCode,
        final long validUntilNs)
    {
        append(MEMBERSHIP_SECTION, FENCED, incarnation, epoch, uuidMsb, uuidLsb, nanoClock.nanoTime(),
            causeCode, validUntilNs, 0, 0, 0, 0, 0);
    }

    /**
     * The membership is closing: call once remote work is disabled.
     *
     * @param incarnation  the current incarnation's number (0 before the first).
     * @param epoch        its epoch.
     * @param uuidMsb      its runtime UUID.
     * @param uuidLsb      its runtime UUID.
     * @param validUntilNs its validity deadline.
     */
    public synchronized void closing(
        final int incarnation, final long epoch, final long uuidMsb, final long uuidLsb, final long validUntilNs)
    {
        append(MEMBERSHIP_SECTION, CLOSING, incarnation, epoch, uuidMsb, uuidLsb, nanoClock.nanoTime(),
            validUntilNs, 0, 0, 0, 0, 0, 0);
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Agent thread: no lock, no allocation.

    /**
     * A grant was made (source side; agent thread).
     *
     * @param incarnation       the granting incarnation's number.
     * @param epoch             its epoch.
     * @param uuidMsb           its runtime UUID.
     * @param uuidLsb           its runtime UUID.
     * @param decidedNs         when the grant was decided (the time its registration was checked at).
     * @param validUntilNs      its validity deadline then.
     * @param requesterMsb      requester incarnation's runtime UUID.
     * @param requesterLsb      requester incarnation's runtime UUID.
     * @param requesterSessionId the requester's session id.
     * @param transferSessionId the transfer session.
     * @param keys              keys granted.
     * @param bytes             bytes charged.
     */
    public void granted(
        final int incarnation,
        final long epoch,
        final long uuidMsb,
        final long uuidLsb,
        final long decidedNs,
        final long validUntilNs,
        final long requesterMsb,
        final long requesterLsb,
        final long requesterSessionId,
        final long transferSessionId,
        final int keys,
        final long bytes)
    {
        append(AGENT_SECTION, GRANT, incarnation, epoch, uuidMsb, uuidLsb, decidedNs,
            requesterMsb, requesterLsb, requesterSessionId, transferSessionId, validUntilNs, keys, bytes);
        grants.incrementRelease();
    }

    /**
     * The first block of a granted session was accepted (requester side; agent thread).
     *
     * @param incarnation       this Manager's incarnation number.
     * @param epoch             its epoch.
     * @param uuidMsb           its runtime UUID.
     * @param uuidLsb           its runtime UUID.
     * @param sourceMsb         source incarnation's runtime UUID.
     * @param sourceLsb         source incarnation's runtime UUID.
     * @param requesterSessionId this requester's session id.
     * @param transferSessionId the source's transfer session.
     * @param keyIndex          the key's index in its fetch.
     * @param bytes             its bytes.
     */
    public void accepted(
        final int incarnation,
        final long epoch,
        final long uuidMsb,
        final long uuidLsb,
        final long sourceMsb,
        final long sourceLsb,
        final long requesterSessionId,
        final long transferSessionId,
        final int keyIndex,
        final long bytes)
    {
        append(AGENT_SECTION, FETCH_ACCEPTED, incarnation, epoch, uuidMsb, uuidLsb, nanoClock.nanoTime(),
            sourceMsb, sourceLsb, requesterSessionId, transferSessionId, keyIndex, bytes, 0);
        accepts.incrementRelease();
    }

    private void append(
        final int section,
        final int type,
        final int incarnation,
        final long epoch,
        final long uuidMsb,
        final long uuidLsb,
        final long monoNs,
        final long f0,
        final long f1,
        final long f2,
        final long f3,
        final long f4,
        final long f5,
        final long f6)
    {
        if (closed)
        {
            return;
        }
        final long index = position[section];
        final long cap = capacity[section];
        final int offset = (int)(dataOffset[section] + (index % cap) * RECORD_LENGTH);
        buffer.putLongOrdered(offset + SEQUENCE_OFFSET, -(index + 1));
        VarHandle.storeStoreFence();
        buffer.putInt(offset + TYPE_OFFSET, type);
        buffer.putInt(offset + INCARNATION_OFFSET, incarnation);
        buffer.putLong(offset + MONO_NS_OFFSET, monoNs);
        buffer.putLong(offset + WALL_MS_OFFSET, epochClock.time());
        buffer.putLong(offset + EPOCH_OFFSET, epoch);
        buffer.putLong(offset + UUID_MSB_OFFSET, uuidMsb);
        buffer.putLong(offset + UUID_LSB_OFFSET, uuidLsb);
        buffer.putLong(offset + FIELDS_OFFSET, f0);
        buffer.putLong(offset + FIELDS_OFFSET + 8, f1);
        buffer.putLong(offset + FIELDS_OFFSET + 16, f2);
        buffer.putLong(offset + FIELDS_OFFSET + 24, f3);
        buffer.putLong(offset + FIELDS_OFFSET + 32, f4);
        buffer.putLong(offset + FIELDS_OFFSET + 40, f5);
        buffer.putLong(offset + FIELDS_OFFSET + 48, f6);
        buffer.putLong(offset + FIELDS_OFFSET + 56, 0);
        buffer.putLong(offset + FIELDS_OFFSET + 64, 0);
        buffer.putLongOrdered(offset + SEQUENCE_OFFSET, index + 1);
        position[section] = index + 1;
        buffer.putLongOrdered(sectionOffset(section) + SECTION_POSITION_OFFSET, index + 1);
        records.incrementRelease();
        if (index >= cap)
        {
            overwritten.incrementRelease();
        }
    }

    /**
     * Unmap the file (it stays for readers): after every writer stopped. Writes after this are dropped.
     */
    public void close()
    {
        synchronized (this)
        {
            if (closed)
            {
                return;
            }
            closed = true;
        }
        mapped.force();
        IoUtil.unmap(mapped);
    }
}
