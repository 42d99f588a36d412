package io.orbitkv.manager.transfer;

import io.orbitkv.codecs.TransferLimits;
import io.orbitkv.manager.peer.PeerClient;

/**
 * One span of keys asked of one source: its authorization, its grant and its release.
 */
final class SourceAttempt
{
    static final int FREE = 0;
    static final int TO_SEND = 1;
    static final int SENT = 2;
    static final int GRANTED = 3;
    static final int REFUSED = 4;
    static final int RELEASING = 5;
    static final int DONE = 6;

    final int index;
    int state;
    long ownerMsb;
    long ownerLsb;
    int firstKey;
    int keyCount;
    int grantedKeys;
    long correlationId;
    long requesterSessionId;
    long transferSessionId;
    long token;
    int peer = -1;
    int readsOutstanding;
    int readsSubmitted;
    int releaseAttempts;
    PeerClient client;
    long deadlineMs;
    /** A TO_SEND attempt is not sent before this time (a source asked to be asked again later). */
    long notBeforeMs;
    boolean abandoned;
    /**
     * Served by this Manager's own DRAM (keys after a peer span that it holds itself): pinned when planned,
     * copied into the destinations, unpinned on release; no message is sent for it.
     */
    boolean local;
    /** A block read under this session was accepted and recorded as such (once per session). */
    boolean accepted;

    SourceAttempt(final int index)
    {
        this.index = index;
    }

    void begin(
        final long ownerMsb,
        final long ownerLsb,
        final int firstKey,
        final int keyCount,
        final long requesterSessionId,
        final long notBeforeMs)
    {
        state = TO_SEND;
        this.ownerMsb = ownerMsb;
        this.ownerLsb = ownerLsb;
        this.firstKey = firstKey;
        this.keyCount = keyCount;
        grantedKeys = 0;
        correlationId = 0;
        this.requesterSessionId = requesterSessionId;
        transferSessionId = 0;
        token = 0;
        peer = -1;
        readsOutstanding = 0;
        readsSubmitted = 0;
        releaseAttempts = 0;
        deadlineMs = notBeforeMs + TransferLimits.AUTHORIZE_TIMEOUT_MS;
        this.notBeforeMs = notBeforeMs;
        client = null;
        local = false;
        accepted = false;
    }

    /**
     * The source said "not yet": the same keys are asked of it again from {@code notBeforeMs}, as a new session.
     */
    void askAgain(final long requesterSessionId, final long notBeforeMs)
    {
        state = TO_SEND;
        this.requesterSessionId = requesterSessionId;
        correlationId = 0;
        client = null;
        accepted = false;
        this.notBeforeMs = notBeforeMs;
        deadlineMs = notBeforeMs + TransferLimits.AUTHORIZE_TIMEOUT_MS;
    }
}
