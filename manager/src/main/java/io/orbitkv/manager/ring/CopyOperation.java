package io.orbitkv.manager.ring;

import io.orbitkv.codecs.EngineRingLimits;
import io.orbitkv.codecs.engine.FailureReason;
import io.orbitkv.codecs.engine.KeyStatus;
import io.orbitkv.manager.Configuration;
import io.orbitkv.manager.port.FetchHandle;
import io.orbitkv.manager.store.Residence;
import io.orbitkv.manager.store.SsdReadListener;
import java.util.Arrays;
import java.util.zip.CRC32C;

/**
 * A Publish or Read whose bytes are being copied between a client's data region and the pool, possibly across
 * several duty cycles. Preallocated per client ({@link Configuration#MAX_IN_FLIGHT_PER_CLIENT}) and reused.
 *
 * <p>Keys {@code [0, nextKey)} are finished. Keys from {@code nextKey} on with a residence hold either a PREPARING
 * DRAM reservation (publish) or a pin of either tier (read) until they are copied, or until the client goes away and
 * the operation is cancelled. An SSD key's bytes come through staging: its phase says how far its read got.
 * {@link #crc} is the running CRC32C of the key being copied: of the bytes landed in the pool (publish), or of the
 * staged bytes verified so far (SSD read, {@link #verifiedInKey}).
 */
final class CopyOperation implements SsdReadListener
{
    static final int PUBLISH = 1;
    static final int READ = 2;

    /** SSD key: pinned, waiting for staging and a queue slot. */
    static final byte SSD_NEEDS_IO = 0;
    /** SSD key: read submitted. */
    static final byte SSD_IN_FLIGHT = 1;
    /** SSD key: bytes are in staging, to be copied into the data region. */
    static final byte SSD_STAGED = 2;
    /** SSD key: the read failed; the residence was dropped. */
    static final byte SSD_FAILED = 3;

    /** Per key: what it holds, or {@link Residence#NONE} once done or when it holds nothing. */
    final long[] residences = new long[EngineRingLimits.MAX_KEYS_PER_REQUEST];
    final long[] regionOffsets = new long[EngineRingLimits.MAX_KEYS_PER_REQUEST];
    final int[] lengths = new int[EngineRingLimits.MAX_KEYS_PER_REQUEST];
    final KeyStatus[] statuses = new KeyStatus[EngineRingLimits.MAX_KEYS_PER_REQUEST];
    final FailureReason[] reasons = new FailureReason[EngineRingLimits.MAX_KEYS_PER_REQUEST];
    final byte[] ssdPhases = new byte[EngineRingLimits.MAX_KEYS_PER_REQUEST];
    final long[] stagingOffsets = new long[EngineRingLimits.MAX_KEYS_PER_REQUEST];
    final int[] commands = new int[EngineRingLimits.MAX_KEYS_PER_REQUEST];
    final CRC32C crc = new CRC32C();

    int kind;
    int templateId;
    long correlationId;
    long leaseId;
    int keyCount;
    int nextKey;
    long copiedInKey;
    long verifiedInKey;
    long completedCount;
    int ssdKeys;
    int nextSsdKey;
    /** A Read's peer part, started once the local part ended (null when the read stays local). */
    FetchHandle peerFetch;
    /** The peer part is a lease's held fetch; {@link #peerKeys} of its keys are read. */
    boolean peerHeld;
    int peerKeys;

    void reset(final int kind, final int templateId, final long correlationId, final long leaseId, final int keyCount)
    {
        this.kind = kind;
        this.templateId = templateId;
        this.correlationId = correlationId;
        this.leaseId = leaseId;
        this.keyCount = keyCount;
        this.nextKey = 0;
        this.copiedInKey = 0;
        this.verifiedInKey = 0;
        this.crc.reset();
        Arrays.fill(reasons, 0, keyCount, FailureReason.NONE);
        this.completedCount = 0;
        this.ssdKeys = 0;
        this.nextSsdKey = 0;
        this.peerFetch = null;
        this.peerHeld = false;
        this.peerKeys = 0;
    }

    void clear()
    {
        kind = 0;
        keyCount = 0;
        nextKey = 0;
        peerFetch = null;
        peerHeld = false;
    }

    public void onSsdReadComplete(final int key, final long stagingOffset, final boolean ok)
    {
        stagingOffsets[key] = stagingOffset;
        ssdPhases[key] = ok ? SSD_STAGED : SSD_FAILED;
    }
}
