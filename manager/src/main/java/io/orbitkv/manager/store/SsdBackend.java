package io.orbitkv.manager.store;

import io.orbitkv.manager.Configuration;

/**
 * The I/O path of the SSD tier: O_DIRECT reads and writes between the staging region and the tier's file. Every
 * call comes from the thread that runs the storage duty cycle; {@link #start()} and {@link #drain(long)} too, so a
 * ring set up with {@code SINGLE_ISSUER} is only ever entered by its issuer.
 *
 * <p>Offsets and lengths are multiples of {@link Configuration#SSD_BLOCK_BYTES}; staging offsets are relative to
 * the staging region. An operation that cannot be queued right now returns false: the caller keeps it and retries
 * (back-pressure, no unbounded queue). Completions report bytes transferred or {@code -errno}.
 */
public interface SsdBackend extends AutoCloseable
{
    /** Gauge value of {@link StoreCounter#SSD_BACKEND} for io_uring with registered staging. */
    int KIND_IO_URING_FIXED = 1;
    /** Gauge value for io_uring with plain (non-registered) buffers. */
    int KIND_IO_URING = 2;
    /** Gauge value for the FileChannel fallback. */
    int KIND_FILECHANNEL = 3;

    /**
     * Receives one finished operation.
     */
    @FunctionalInterface
    interface Completions
    {
        /**
         * @param command the command index given when the operation was queued.
         * @param result  bytes transferred, or {@code -errno}.
         */
        void onIoComplete(int command, int result);
    }

    /**
     * Set up per-thread state (the ring) on the storage thread.
     */
    void start();

    /**
     * @param command       returned with the completion.
     * @param fileOffset    where to read from.
     * @param stagingOffset where to read to.
     * @param length        bytes.
     * @return false when no room now.
     */
    boolean read(int command, long fileOffset, long stagingOffset, int length);

    /**
     * Read into memory outside staging (a client's data region), for backends that {@link #readsIntoAnyAddress()}.
     *
     * @param command    returned with the completion.
     * @param fileOffset where to read from.
     * @param address    where to read to: an absolute address, {@link Configuration#SSD_BLOCK_BYTES} aligned, whose
     *                   mapping the caller keeps until the completion was handled.
     * @param length     bytes.
     * @return false when no room now.
     */
    boolean readInto(int command, long fileOffset, long address, int length);

    /**
     * @return whether {@link #readInto} is supported.
     */
    boolean readsIntoAnyAddress();

    /**
     * @param command       returned with the completion.
     * @param fileOffset    where to write to.
     * @param stagingOffset where to write from.
     * @param length        bytes.
     * @return false when no room now.
     */
    boolean write(int command, long fileOffset, long stagingOffset, int length);

    /**
     * Submit everything queued (one system call for the batch) and hand finished operations to the handler.
     *
     * @param handler receives completions.
     * @param waitNs  when positive and operations are in flight, wait up to this long for at least one.
     * @return operations submitted plus completions handled.
     */
    int process(Completions handler, long waitNs);

    /**
     * @return operations queued or submitted whose completion has not been handled.
     */
    int inFlight();

    /**
     * Wait for every in-flight operation, handing completions to the handler, before staging memory goes away.
     *
     * @param handler receives completions.
     * @param timeoutNs longest wait.
     */
    void drain(Completions handler, long timeoutNs);

    /**
     * @return one of the {@code KIND_*} values.
     */
    int kind();

    /**
     * @return a sentence for the start banner and logs.
     */
    String description();

    /**
     * Release the ring or channel; the file and staging belong to the caller.
     */
    void close();
}
