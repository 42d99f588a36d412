package io.orbitkv.manager;

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
final class CopyOperation
{
    static final int PUBLISH = 1;
    static final int READ = 2;
    static final int NO_ENTRY = -1;

    final int[] entryIds = new int[EngineRingLimits.MAX_KEYS_PER_REQUEST];
    final long[] regionOffsets = new long[EngineRingLimits.MAX_KEYS_PER_REQUEST];
    final int[] lengths = new int[EngineRingLimits.MAX_KEYS_PER_REQUEST];
    final KeyStatus[] statuses = new KeyStatus[EngineRingLimits.MAX_KEYS_PER_REQUEST];

    int kind;
    int templateId;
    long correlationId;
    long leaseId;
    int keyCount;
    int nextKey;
    long copiedInKey;
    long completedCount;

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
    }

    void clear()
    {
        kind = 0;
        keyCount = 0;
        nextKey = 0;
    }
}
