package io.orbitkv.manager.store;

import com.sun.nio.file.ExtendedOpenOption;
import io.orbitkv.ffm.Errno;
import io.orbitkv.ffm.MappedRegion;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The fallback I/O path where io_uring is unavailable (EPERM/ENOSYS from seccomp, {@code io_uring_disabled}) or
 * forced by {@code --ssd-backend=filechannel}: positional FileChannel I/O with {@code ExtendedOpenOption.DIRECT}.
 * Each operation runs synchronously when queued and its completion is handed over on the next
 * {@link #process(Completions, long)}, so the storage code above sees the same asynchronous contract.
 *
 * <p>One ByteBuffer view over the staging region is re-windowed with position/limit per operation, so nothing is
 * allocated per I/O.
 */
public final class FileChannelSsdBackend implements SsdBackend
{
    private final FileChannel channel;
    private final ByteBuffer stagingView;
    private final int[] doneCommands;
    private final int[] doneResults;
    private final String reason;
    private int doneCount;

    public FileChannelSsdBackend(final Path file, final int queueDepth, final MappedRegion staging, final String reason)
    {
        try
        {
            channel = FileChannel.open(
                file, StandardOpenOption.READ, StandardOpenOption.WRITE, ExtendedOpenOption.DIRECT);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot open " + file + " with O_DIRECT", ex);
        }
        stagingView = staging.segment().asByteBuffer();
        doneCommands = new int[queueDepth];
        doneResults = new int[queueDepth];
        this.reason = reason;
    }

    public void start()
    {
    }

    public boolean read(final int command, final long fileOffset, final long stagingOffset, final int length)
    {
        return transfer(command, fileOffset, stagingOffset, length, false);
    }

    /**
     * Not supported: a channel reads into a ByteBuffer, and a view over each destination would be an allocation per
     * read. Reads go through staging on this backend.
     */
    public boolean readInto(final int command, final long fileOffset, final long address, final int length)
    {
        throw new UnsupportedOperationException("the FileChannel backend reads through staging only");
    }

    public boolean readsIntoAnyAddress()
    {
        return false;
    }

    public boolean write(final int command, final long fileOffset, final long stagingOffset, final int length)
    {
        return transfer(command, fileOffset, stagingOffset, length, true);
    }

    private boolean transfer(
        final int command,
        final long fileOffset,
        final long stagingOffset,
        final int length,
        final boolean isWrite)
    {
        if (doneCount == doneCommands.length)
        {
            return false;
        }
        int result;
        try
        {
            stagingView.limit((int)stagingOffset + length).position((int)stagingOffset);
            long position = fileOffset;
            while (stagingView.hasRemaining())
            {
                final int n = isWrite ? channel.write(stagingView, position) : channel.read(stagingView, position);
                if (n <= 0)
                {
                    break;
                }
                position += n;
            }
            result = (int)(position - fileOffset);
        }
        catch (final IOException ex)
        {
            result = -Errno.EIO;
        }
        finally
        {
            stagingView.clear();
        }
        doneCommands[doneCount] = command;
        doneResults[doneCount] = result;
        doneCount++;
        return true;
    }

    public int process(final Completions handler, final long waitNs)
    {
        final int count = doneCount;
        for (int i = 0; i < count; i++)
        {
            handler.onIoComplete(doneCommands[i], doneResults[i]);
        }
        doneCount = 0;
        return count;
    }

    public int inFlight()
    {
        return doneCount;
    }

    public void drain(final Completions handler, final long timeoutNs)
    {
        process(handler, 0);
    }

    public int kind()
    {
        return KIND_FILECHANNEL;
    }

    public String description()
    {
        return "FileChannel with ExtendedOpenOption.DIRECT (" + reason + ")";
    }

    public void close()
    {
        try
        {
            channel.close();
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }
}
