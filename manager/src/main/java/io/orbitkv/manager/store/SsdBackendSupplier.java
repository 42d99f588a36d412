package io.orbitkv.manager.store;

import io.orbitkv.ffm.MappedRegion;
import java.io.PrintStream;
import java.nio.file.Path;

/**
 * Makes the SSD tier's backends. The Manager's context holds one ({@link #DEFAULT} unless set), so that a test can
 * hand the tier a backend that fails on demand without any test hook in the product's I/O path.
 */
public interface SsdBackendSupplier
{
    /** The product's backends, as they are. */
    SsdBackendSupplier DEFAULT = new SsdBackendSupplier()
    {
        public SsdBackend uring(final int fd, final int queueDepth, final MappedRegion staging, final PrintStream log)
        {
            return new UringSsdBackend(fd, queueDepth, staging, log);
        }

        public SsdBackend fileChannel(
            final Path file, final int queueDepth, final MappedRegion staging, final String reason)
        {
            return new FileChannelSsdBackend(file, queueDepth, staging, reason);
        }
    };

    /**
     * @param fd         the tier's file, opened with O_DIRECT.
     * @param queueDepth operations in flight.
     * @param staging    the staging region, registered with the ring where the limits allow.
     * @param log        where set-up warnings go.
     * @return an io_uring backend.
     */
    SsdBackend uring(int fd, int queueDepth, MappedRegion staging, PrintStream log);

    /**
     * @param file       the tier's file, opened here with O_DIRECT.
     * @param queueDepth operations queued at most.
     * @param staging    the staging region.
     * @param reason     why this fallback is used, for the description.
     * @return a FileChannel backend.
     */
    SsdBackend fileChannel(Path file, int queueDepth, MappedRegion staging, String reason);
}
