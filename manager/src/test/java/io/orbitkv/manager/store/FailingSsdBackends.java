package io.orbitkv.manager.store;

import io.orbitkv.ffm.Errno;
import io.orbitkv.ffm.MappedRegion;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An {@link SsdBackendSupplier} for tests: it makes the product's backends and wraps each in one that fails the
 * next {@link #failNext(int) n} operations with EIO instead of handing them to the real backend. The failure comes
 * back as a completion on the next {@code process}, as a kernel error would, so the tier's own failure handling is
 * what a test exercises.
 */
public final class FailingSsdBackends implements SsdBackendSupplier
{
    private static final int NOT_OWED = 0;
    private static final int FAILED = 1;
    private static final int NO_ROOM = 2;

    private final AtomicInteger failuresOwed = new AtomicInteger();

    /**
     * Fail the next {@code count} reads or writes, whichever come first. Callable from any thread.
     */
    public void failNext(final int count)
    {
        failuresOwed.addAndGet(count);
    }

    public SsdBackend uring(final int fd, final int queueDepth, final MappedRegion staging, final PrintStream log)
    {
        return new FailingSsdBackend(DEFAULT.uring(fd, queueDepth, staging, log), queueDepth);
    }

    public SsdBackend fileChannel(final Path file, final int queueDepth, final MappedRegion staging, final String reason)
    {
        return new FailingSsdBackend(DEFAULT.fileChannel(file, queueDepth, staging, reason), queueDepth);
    }

    private boolean takeFailure()
    {
        int owed;
        do
        {
            owed = failuresOwed.get();
            if (owed <= 0)
            {
                return false;
            }
        }
        while (!failuresOwed.compareAndSet(owed, owed - 1));
        return true;
    }

    private final class FailingSsdBackend implements SsdBackend
    {
        private final SsdBackend delegate;
        private final int[] failedCommands;
        private int failedCount;

        FailingSsdBackend(final SsdBackend delegate, final int queueDepth)
        {
            this.delegate = delegate;
            failedCommands = new int[queueDepth];
        }

        public void start()
        {
            delegate.start();
        }

        public boolean read(final int command, final long fileOffset, final long stagingOffset, final int length)
        {
            final int outcome = failIfOwed(command);
            return FAILED == outcome || (NOT_OWED == outcome && delegate.read(command, fileOffset, stagingOffset, length));
        }

        public boolean readInto(final int command, final long fileOffset, final long address, final int length)
        {
            final int outcome = failIfOwed(command);
            return FAILED == outcome || (NOT_OWED == outcome && delegate.readInto(command, fileOffset, address, length));
        }

        public boolean readsIntoAnyAddress()
        {
            return delegate.readsIntoAnyAddress();
        }

        public boolean write(final int command, final long fileOffset, final long stagingOffset, final int length)
        {
            final int outcome = failIfOwed(command);
            return FAILED == outcome || (NOT_OWED == outcome && delegate.write(command, fileOffset, stagingOffset, length));
        }

        /**
         * @return {@link #FAILED} when the operation takes an owed failure, {@link #NO_ROOM} when one is owed but the
         * failed completions are full (the tier retries), {@link #NOT_OWED} otherwise.
         */
        private int failIfOwed(final int command)
        {
            if (failuresOwed.get() <= 0)
            {
                return NOT_OWED;
            }
            if (failedCount == failedCommands.length)
            {
                return NO_ROOM;
            }
            if (!takeFailure())
            {
                return NOT_OWED;
            }
            failedCommands[failedCount++] = command;
            return FAILED;
        }

        public int process(final Completions handler, final long waitNs)
        {
            final int failed = deliverFailures(handler);
            return failed + delegate.process(handler, failed > 0 ? 0 : waitNs);
        }

        private int deliverFailures(final Completions handler)
        {
            final int count = failedCount;
            for (int i = 0; i < count; i++)
            {
                handler.onIoComplete(failedCommands[i], -Errno.EIO);
            }
            failedCount = 0;
            return count;
        }

        public int inFlight()
        {
            return failedCount + delegate.inFlight();
        }

        public void drain(final Completions handler, final long timeoutNs)
        {
            deliverFailures(handler);
            delegate.drain(handler, timeoutNs);
        }

        public int kind()
        {
            return delegate.kind();
        }

        public String description()
        {
            return delegate.description();
        }

        public void close()
        {
            delegate.close();
        }
    }
}
