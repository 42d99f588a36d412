package io.orbitkv.manager.store;

/**
 * Told when an SSD read submitted through {@link TieredStore#submitSsdRead} completes, on the thread that runs the
 * store's duty cycle. Implemented by whoever copies the staged bytes on (the ring's copy operations), so the store
 * knows nothing of who asked.
 */
public interface SsdReadListener
{
    /**
     * The staging offset reported for a read submitted through {@link TieredStore#submitSsdReadInto}: the bytes are
     * in the destination given at submission, and no staging is held.
     */
    long IN_DESTINATION = -1L;

    /**
     * The read of one key completed.
     *
     * @param key           the key index given at submission.
     * @param stagingOffset where the bytes are in {@link TieredStore#staging()} when {@code ok}, or
     *                      {@link #IN_DESTINATION} for a read into the reader's own memory; the caller then
     *                      owns that staging until {@link TieredStore#finishSsdRead} or
     *                      {@link TieredStore#releaseStagedRead} (which also release the pin of a direct read).
     * @param ok            false when the read failed: staging and the pin are released already and the residence
     *                      is dropped.
     */
    void onSsdReadComplete(int key, long stagingOffset, boolean ok);
}
