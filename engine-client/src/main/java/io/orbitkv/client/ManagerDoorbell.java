package io.orbitkv.client;

import io.orbitkv.codecs.cnc.CncFileDescriptor;
import java.io.IOException;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.agrona.CloseHelper;
import org.agrona.concurrent.AtomicBuffer;

/**
 * The engine's half of the doorbell protocol (docs/engine-ring.md, "Waking a sleeping Manager"): after a request is
 * committed to the request ring, {@link #wakeIfSleeping()} fences and loads the Manager's {@code agentState}; only
 * when the Manager announced it sleeps does one engine win the compare-and-set to {@code RUNG} and write one byte
 * into the Manager's doorbell FIFO. The hot path is a fence and one load.
 *
 * <p>The FIFO is opened read-write: a Linux FIFO opened so never waits for the other end, and because this process
 * then holds a reader too, a write to a dead Manager's FIFO neither raises SIGPIPE nor fails. The write cannot
 * block: at most one byte goes in per announced sleep and the Manager drains the FIFO whenever it wakes on it, so
 * the pipe never fills; a dead Manager, which announces nothing more, leaves at most one byte behind.
 * Not thread safe: one instance per thread that writes requests.
 */
public final class ManagerDoorbell implements AutoCloseable
{
    private static final byte RING_BYTE = 1;

    private final AtomicBuffer header;
    private final ByteBuffer ringByte = ByteBuffer.allocateDirect(1);
    private final FileChannel fifo;
    private long rings;
    private long failedRings;

    private ManagerDoorbell(final AtomicBuffer header, final FileChannel fifo)
    {
        this.header = header;
        this.fifo = fifo;
    }

    /**
     * Open the doorbell of the Manager whose CnC header is given.
     *
     * @param managerDir the Manager directory (holds the CnC file and the FIFO).
     * @param header     the mapped CnC header (layout version 2 or later).
     * @return the doorbell.
     * @throws IOException when the FIFO cannot be opened.
     */
    public static ManagerDoorbell open(final Path managerDir, final AtomicBuffer header) throws IOException
    {
        final FileChannel fifo = FileChannel.open(
            managerDir.resolve(CncFileDescriptor.DOORBELL_FILE_NAME), StandardOpenOption.READ, StandardOpenOption.WRITE);
        return new ManagerDoorbell(header, fifo);
    }

    /**
     * Call after a request is committed: rings the doorbell when the Manager announced that it sleeps and no other
     * engine rang for this sleep.
     *
     * @return true when this call rang.
     */
    public boolean wakeIfSleeping()
    {
        // Dekker with the Manager: our request store, then our load of its state; its state store, then its load of
        // the ring. The fence keeps the load from passing the request's commit.
        VarHandle.fullFence();
        if (CncFileDescriptor.AGENT_SLEEPING != header.getIntVolatile(CncFileDescriptor.AGENT_STATE_OFFSET) ||
            !header.compareAndSetInt(
                CncFileDescriptor.AGENT_STATE_OFFSET, CncFileDescriptor.AGENT_SLEEPING, CncFileDescriptor.AGENT_RUNG))
        {
            return false;
        }
        ring();
        return true;
    }

    /**
     * Write one byte into the FIFO whatever the Manager's state (tests, and callers that know it sleeps).
     */
    public void ring()
    {
        ringByte.clear();
        ringByte.put(0, RING_BYTE);
        try
        {
            fifo.write(ringByte);
            rings++;
        }
        catch (final IOException ex)
        {
            // A closed or broken FIFO only costs latency: the Manager's sleep ends at its timeout anyway.
            failedRings++;
        }
    }

    /**
     * @return doorbell bytes this instance wrote.
     */
    public long rings()
    {
        return rings;
    }

    /**
     * @return rings whose write failed.
     */
    public long failedRings()
    {
        return failedRings;
    }

    public void close()
    {
        CloseHelper.quietClose(fifo);
    }
}
