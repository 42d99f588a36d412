package io.orbitkv.manager.store;

import io.orbitkv.manager.status.FixedCounter;
import io.orbitkv.manager.status.SystemCounters;

/**
 * The block store's counters: the DRAM pool and its pre-touch, evictions and pins, the SSD tier, and the checksums
 * summed at publish and verified on SSD reads.
 * <p>
 * Each has a fixed id, which {@code orbitkv stat}, /metrics and dashboards key on: never renumber or reuse one; a new
 * counter takes an id no family holds ({@link SystemCounters} lays every family out by id).
 */
public enum StoreCounter implements FixedCounter
{
    EVICTIONS(13, "Evictions", false),
    POOL_BYTES_USED(14, "Pool bytes used", true),
    POOL_BYTES_FREE(15, "Pool bytes free", true),
    BLOCKS_RESIDENT(16, "Blocks resident", true),
    PINS_ACTIVE(17, "Pins active", true),
    POOL_PAYLOAD_BYTES(42, "Pool payload bytes", true),
    SSD_BYTES_USED(46, "SSD bytes used", true),
    SSD_BYTES_FREE(47, "SSD bytes free", true),
    SSD_BLOCKS_RESIDENT(48, "SSD blocks resident", true),
    SSD_READS(49, "SSD reads", false),
    SSD_READ_BYTES(50, "SSD read bytes", false),
    SSD_WRITES(51, "SSD writes", false),
    SSD_WRITE_BYTES(52, "SSD write bytes", false),
    SSD_QUEUE_DEPTH(53, "SSD I/O in flight", true),
    SSD_IO_ERRORS(54, "SSD I/O errors (residence dropped)", false),
    SSD_BACKEND(55, "SSD backend: 0 none, 1 io_uring fixed buffers, 2 io_uring, 3 FileChannel", true),
    SSD_FALLBACK(56, "SSD fallback backend in use", true),
    SSD_ADMISSIONS(57, "SSD admissions (write completed)", false),
    SSD_ADMISSION_SKIPS(58, "SSD admissions skipped (staging, queue or space)", false),
    SSD_EVICTIONS(59, "SSD evictions", false),
    SSD_PROMOTIONS(60, "SSD promotions to DRAM", false),
    SSD_LOOKUP_HITS(61, "SSD lookup hits (keys)", false),
    SSD_ADMISSION_WAITS(89, "SSD admissions that waited for in-flight writes (back-pressure)", false),
    POOL_BYTES_TOUCHED(130, "Pool bytes touched (pre-touch progress, low offsets first)", true),
    POOL_TOUCH_MODE(131, "Pool touch mode: 0 off, 1 background, 2 blocking", true),
    POOL_TOUCH_STATE(132, "Pool touch state: 0 not started, 1 touching, 2 done, 3 stopped at close, 4 failed", true),
    POOL_TOUCH_MS(133, "Pool touch time so far (ms; final once done)", true),
    CHECKSUM_SSD_MISMATCHES(200, "Checksums: SSD reads whose bytes did not match the block's CRC32C (residence dropped)", false),
    CHECKSUM_BLOCKS_PUBLISHED(201, "Checksums: blocks checksummed at publish", false),
    CHECKSUM_BYTES_PUBLISHED(202, "Checksums: bytes checksummed at publish", false),
    CHECKSUM_BLOCKS_VERIFIED(203, "Checksums: blocks read back from SSD and verified", false),
    CHECKSUM_BYTES_VERIFIED(204, "Checksums: bytes read back from SSD and verified", false),
    SSD_DIRECT_READS(290, "SSD reads straight into an engine's data region (no staging copy)", false),
    SSD_DIRECT_READ_FAULTS(291, "SSD direct reads refused by the destination mapping (EFAULT; residence kept)", false),
    SSD_MANIFEST_RECORDS(330, "SSD manifest: records written", false),
    SSD_MANIFEST_BYTES(331, "SSD manifest: bytes written", false),
    SSD_MANIFEST_SYNCS(332, "SSD manifest: syncs (fdatasync of the SSD file, then of the manifest)", false),
    SSD_MANIFEST_WRITE_ERRORS(333, "SSD manifest: writes refused by the file system (e.g. disk full; records lost)", false),
    SSD_MANIFEST_RECORDS_LOST(334, "SSD manifest: records lost (queue to the writer full, or a refused write)", false),
    SSD_MANIFEST_CHECKPOINTS(335, "SSD manifest: checkpoints (rewritten from the live residences)", false),
    SSD_MANIFEST_FILE_BYTES(336, "SSD manifest: file size", true),
    SSD_MANIFEST_SYNC_MAX_US(337, "SSD manifest: longest sync (us)", true),
    SSD_RECOVERY_STATE(338, "SSD recovery: 0 off, 1 reading, 2 done, 3 refused (tier started empty), 4 no manifest", true),
    SSD_RECOVERY_RECORDS(339, "SSD recovery: manifest records read", true),
    SSD_RECOVERY_BYTES(340, "SSD recovery: manifest bytes read", true),
    SSD_RECOVERY_RESIDENCES(341, "SSD recovery: residences restored", true),
    SSD_RECOVERY_BLOCK_BYTES(342, "SSD recovery: block bytes restored", true),
    SSD_RECOVERY_TORN(343, "SSD recovery: torn or corrupt manifest tail records ignored", true),
    SSD_RECOVERY_DROPPED(344, "SSD recovery: records dropped (out of layout, overlapping, unknown namespace, no room)", true),
    SSD_RECOVERY_US(345, "SSD recovery: time to read the manifest and rebuild the index (us)", true),
    SSD_RECOVERY_CHECKSUM_DROPS(346, "SSD recovery: restored residences dropped on first read (checksum)", false),
    SSD_RECOVERY_VERIFIED(347, "SSD recovery: restored residences verified on first read", false),
    SSD_RECOVERY_REPLAY_US(348, "SSD recovery: of which reading and replaying the manifest (us)", true),
    SSD_RECOVERY_ORDER_US(349, "SSD recovery: of which ordering the live residences (us)", true),
    SSD_RECOVERY_INDEX_US(350, "SSD recovery: of which rebuilding the index (us)", true),
    SSD_VERIFY_STATE(351, "SSD verify scan: 0 off or nothing to verify, 1 scanning, 2 done", true),
    SSD_VERIFY_PENDING(352, "SSD verify scan: restored residences not yet verified", true),
    SSD_VERIFY_VERIFIED(353, "SSD verify scan: restored residences verified by the scan", false),
    SSD_VERIFY_DROPPED(354, "SSD verify scan: restored residences dropped by the scan (checksum or read error)", false),
    SSD_VERIFY_BYTES(355, "SSD verify scan: bytes read", false);

    /** {@link #SSD_VERIFY_STATE}: off, or nothing was recovered. */
    public static final int SSD_VERIFY_OFF = 0;
    /** {@link #SSD_VERIFY_STATE}: recovered residences are being verified. */
    public static final int SSD_VERIFY_SCANNING = 1;
    /** {@link #SSD_VERIFY_STATE}: every recovered residence was verified (by the scan or a read), dropped or gone. */
    public static final int SSD_VERIFY_DONE = 2;

    /** {@link #SSD_RECOVERY_STATE}: no SSD tier, or {@code --ssd-recover off}. */
    public static final int SSD_RECOVERY_OFF = 0;
    /** {@link #SSD_RECOVERY_STATE}: reading the manifest. */
    public static final int SSD_RECOVERY_READING = 1;
    /** {@link #SSD_RECOVERY_STATE}: the index holds what the manifest recorded. */
    public static final int SSD_RECOVERY_DONE = 2;
    /** {@link #SSD_RECOVERY_STATE}: the manifest was refused (another layout); the tier started empty. */
    public static final int SSD_RECOVERY_REFUSED = 3;
    /** {@link #SSD_RECOVERY_STATE}: there was no manifest; the tier started empty. */
    public static final int SSD_RECOVERY_NO_MANIFEST = 4;

    /** {@link #POOL_TOUCH_STATE}: no touch has begun (also the state of mode off). */
    public static final int POOL_TOUCH_NOT_STARTED = 0;
    /** {@link #POOL_TOUCH_STATE}: the toucher is working through the pool. */
    public static final int POOL_TOUCH_TOUCHING = 1;
    /** {@link #POOL_TOUCH_STATE}: every byte of the pool is populated. */
    public static final int POOL_TOUCH_DONE = 2;
    /** {@link #POOL_TOUCH_STATE}: the Manager closed before the touch ended. */
    public static final int POOL_TOUCH_STOPPED = 3;
    /** {@link #POOL_TOUCH_STATE}: the kernel refused to populate (reason in the error log). */
    public static final int POOL_TOUCH_FAILED = 4;

    private final Spec spec;

    StoreCounter(final int id, final String label, final boolean gauge)
    {
        this.spec = new Spec(id, label, gauge);
    }

    public Spec spec()
    {
        return spec;
    }
}
