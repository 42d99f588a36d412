package io.orbitkv.manager.status;

import io.orbitkv.codecs.cnc.CncFileDescriptor;
import io.orbitkv.codecs.cnc.ManagerLiveness;
import java.io.File;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import org.agrona.BufferUtil;
import org.agrona.IoUtil;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.errors.ErrorConsumer;
import org.agrona.concurrent.errors.ErrorLogReader;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;
import org.agrona.concurrent.status.CountersReader;

/**
 * A read-only view of a Manager's CnC file from any process: header facts, Manager liveness, counters and the
 * distinct error log. Used by {@code orbitkv stat}, the metrics endpoint and the start-up check for a live Manager.
 */
public final class CncReader implements AutoCloseable
{
    private final File cncFile;
    private final MappedByteBuffer mapped;
    private final UnsafeBuffer header;
    private final UnsafeBuffer whole;
    private CncFileDescriptor.Sections sections;
    private CountersReader countersReader;

    private CncReader(final File cncFile, final MappedByteBuffer mapped)
    {
        this.cncFile = cncFile;
        this.mapped = mapped;
        this.header = new UnsafeBuffer(mapped, 0, Math.min(mapped.capacity(), CncFileDescriptor.HEADER_LENGTH));
        this.whole = new UnsafeBuffer(mapped);
    }

    /**
     * Map an existing CnC file read-only. The header may still be incomplete: see {@link #isReady()}.
     *
     * @param cncFile path of {@code cnc.dat}.
     * @return a reader to close.
     * @throws IllegalStateException if there is no such file or it is too short to be a CnC file.
     */
    public static CncReader map(final File cncFile)
    {
        if (!cncFile.isFile())
        {
            throw new IllegalStateException("no Manager CnC file at " + cncFile.getAbsolutePath() +
                " (is a Manager running with this --dir/--name?)");
        }
        final MappedByteBuffer mapped = IoUtil.mapExistingFile(cncFile, FileChannel.MapMode.READ_ONLY, "cnc");
        if (mapped.capacity() < CncFileDescriptor.HEADER_LENGTH)
        {
            IoUtil.unmap(mapped);
            throw new IllegalStateException("not a CnC file (too short): " + cncFile.getAbsolutePath());
        }
        return new CncReader(cncFile, mapped);
    }

    /**
     * Map a CnC file only once its Manager has finished writing it: for callers polling for a Manager to come up.
     *
     * @param cncFile path of {@code cnc.dat}.
     * @return a ready reader to close, or null while the file is absent, short or still being written.
     */
    public static CncReader mapIfReady(final File cncFile)
    {
        if (!cncFile.isFile() || cncFile.length() < CncFileDescriptor.HEADER_LENGTH)
        {
            return null;
        }
        final CncReader reader = map(cncFile);
        if (reader.isReady())
        {
            return reader;
        }
        reader.close();
        return null;
    }

    public File cncFile()
    {
        return cncFile;
    }

    public int layoutVersion()
    {
        return header.getIntVolatile(CncFileDescriptor.LAYOUT_VERSION_OFFSET);
    }

    /**
     * Whether the Manager has finished writing the file in the layout this reader understands.
     *
     * @return true if every section may be read.
     */
    public boolean isReady()
    {
        return CncFileDescriptor.LAYOUT_VERSION == layoutVersion();
    }

    public long managerPid()
    {
        return header.getLong(CncFileDescriptor.MANAGER_PID_OFFSET);
    }

    public long startTimeMs()
    {
        return header.getLong(CncFileDescriptor.START_TIME_MS_OFFSET);
    }

    public UUID runtimeUuid()
    {
        return new UUID(
            header.getLong(CncFileDescriptor.RUNTIME_UUID_MSB_OFFSET), header.getLong(CncFileDescriptor.RUNTIME_UUID_LSB_OFFSET));
    }

    public long clientLivenessNs()
    {
        return header.getLong(CncFileDescriptor.CLIENT_LIVENESS_NS_OFFSET);
    }

    public long poolBytes()
    {
        return header.getLong(CncFileDescriptor.POOL_BYTES_OFFSET);
    }

    public int maxClients()
    {
        return header.getInt(CncFileDescriptor.MAX_CLIENTS_OFFSET);
    }

    public long maxDataRegionBytes()
    {
        return header.getLong(CncFileDescriptor.MAX_DATA_REGION_BYTES_OFFSET);
    }

    /**
     * The Manager's heartbeat: the request ring's consumer heartbeat, epoch ms.
     *
     * @return heartbeat time, 0 if the header is not complete.
     */
    public long managerHeartbeatMs()
    {
        final int requestRingLength = header.getInt(CncFileDescriptor.REQUEST_RING_LENGTH_OFFSET);
        final long heartbeatOffset = ManagerLiveness.heartbeatOffset(requestRingLength);
        if (requestRingLength <= RingBufferDescriptor.TRAILER_LENGTH || heartbeatOffset + 8 > mapped.capacity())
        {
            return 0;
        }
        return whole.getLongVolatile((int)heartbeatOffset);
    }

    /**
     * Whether a Manager process owns this file and is alive, by {@link ManagerLiveness#isAlive}: its pid exists and
     * its heartbeat (before the file is ready: its start time) is no older than the liveness timeout.
     *
     * @param nowMs current epoch time.
     * @return true if a live Manager owns the file.
     */
    public boolean isManagerAlive(final long nowMs)
    {
        return ManagerLiveness.isAlive(header, managerHeartbeatMs(), nowMs);
    }

    private CncFileDescriptor.Sections sections()
    {
        if (null == sections)
        {
            if (!isReady())
            {
                throw new IllegalStateException("CnC file not ready (layout version " + layoutVersion() + ", expected " +
                    CncFileDescriptor.LAYOUT_VERSION + "): " + cncFile.getAbsolutePath());
            }
            sections = new CncFileDescriptor.Sections(BufferUtil.address(mapped), mapped.capacity());
        }
        return sections;
    }

    /**
     * The Manager's counters. Requires {@link #isReady()}.
     *
     * @return a counters reader over the mapped file.
     */
    public CountersReader countersReader()
    {
        if (null == countersReader)
        {
            final CncFileDescriptor.Sections s = sections();
            countersReader = new CountersReader(s.countersMetadata(), s.countersValues(), StandardCharsets.US_ASCII);
        }
        return countersReader;
    }

    /**
     * Read the distinct error log.
     *
     * @param consumer of each distinct error.
     * @return number of distinct errors.
     */
    public int readErrors(final ErrorConsumer consumer)
    {
        final AtomicBuffer errorLog = sections().errorLog();
        return ErrorLogReader.read(errorLog, consumer);
    }

    public void close()
    {
        IoUtil.unmap(mapped);
    }
}
