package io.orbitkv.manager.ring;

import io.orbitkv.manager.Configuration;
import io.orbitkv.codecs.EngineRingLimits;
import io.orbitkv.codecs.engine.KeyStatus;

/**
 * A Publish or Read whose bytes are being copied between a client's data region and the pool, possibly across
 * several duty cycles. Preallocated per client ({@link Configuration#MAX_IN_FLIGHT_PER_CLIENT}) and reused.
 *
 * <p>Keys {@code [0, nextKey)} are finished. Keys from {@code nextKey} on with an entry id hold either a PREPARING
 * reservation (publish) or a pin (read) until they are copied, or until the client goes away and the operation is
 * cancelled.
 */
public final class CopyOperation
{
    static final int PUBLISH = 1;
    static final int READ = 2;
    public static final int NO_ENTRY = -1;

    /** Read key served from DRAM. */
    static final byte TIER_DRAM = 0;
    /** Read key served from SSD: its entry id is an SSD residence, its bytes come through staging. */
    public static final byte TIER_SSD = 1;

    /** SSD key: pinned, waiting for staging and a queue slot. */
    public static final byte SSD_NEEDS_IO = 0;
    /** SSD key: read submitted. */
    public static final byte SSD_IN_FLIGHT = 1;
    /** SSD key: bytes are in staging, to be copied into the data region. */
    public static final byte SSD_STAGED = 2;
    /** SSD key: the read failed; the residence was dropped. */
    public static final byte SSD_FAILED = 3;

    public final int[] entryIds = new int[EngineRingLimits.MAX_KEYS_PER_REQUEST];
    final long[] regionOffsets = new long[EngineRingLimits.MAX_KEYS_PER_REQUEST];
    public final int[] lengths = new int[EngineRingLimits.MAX_KEYS_PER_REQUEST];
    final KeyStatus[] statuses = new KeyStatus[EngineRingLimits.MAX_KEYS_PER_REQUEST];
    public final byte[] tiers = new byte[EngineRingLimits.MAX_KEYS_PER_REQUEST];
    public final byte[] ssdPhases = new byte[EngineRingLimits.MAX_KEYS_PER_REQUEST];
    public final long[] stagingOffsets = new long[EngineRingLimits.MAX_KEYS_PER_REQUEST];
    public final int[] commands = new int[EngineRingLimits.MAX_KEYS_PER_REQUEST];

    int kind;
    int templateId;
    long correlationId;
    long leaseId;
    public int keyCount;
    public int nextKey;
    long copiedInKey;
    long completedCount;
    int ssdKeys;
    public int nextSsdKey;

    void reset(final int kind, final int templateId, final long correlationId, final long leaseId, final int keyCount)
    {
        this.kind = kind;
        this.templateId = templateId;
        this.correlationId = correlationId;
        this.leaseId = leaseId;
        this.keyCount = keyCount;
        this.nextKey = 0;
        this.copiedInKey = 0;
        this.completedCount = 0;
        this.ssdKeys = 0;
        this.nextSsdKey = 0;
    }

    void clear()
    {
        kind = 0;
        keyCount = 0;
        nextKey = 0;
    }
}
