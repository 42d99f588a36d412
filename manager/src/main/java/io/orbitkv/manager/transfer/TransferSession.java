package io.orbitkv.manager.transfer;

import io.orbitkv.codecs.TransferLimits;
import io.orbitkv.codecs.transfer.TransferStatus;

/**
 * One source hold session: the pinned residences a grant exported, who asked for them and until when. Preallocated
 * by {@link SourceHolds} (one per slot, reused); every array holds up to
 * {@link TransferLimits#MAX_KEYS_PER_AUTHORIZE} keys. Owned by the agent thread.
 * <p>
 * States: FREE; GRANTED (pins held, readable until release or expiry); REVOKING (released or expired, the transport
 * is stopping its sends, pins held until it says none is in progress); QUARANTINED (expired on a transport that
 * cannot prove revocation: pins held and charged until the requester's incarnation leaves the member view or its
 * release says its reads ended).
 */
final class TransferSession
{
    static final int FREE = 0;
    static final int GRANTED = 1;
    static final int REVOKING = 2;
    static final int QUARANTINED = 3;

    final int slot;
    final long[] residences = new long[TransferLimits.MAX_KEYS_PER_AUTHORIZE];
    final long[] addresses = new long[TransferLimits.MAX_KEYS_PER_AUTHORIZE];
    final int[] lengths = new int[TransferLimits.MAX_KEYS_PER_AUTHORIZE];
    final int[] crcs = new int[TransferLimits.MAX_KEYS_PER_AUTHORIZE];
    /**
     * Per key, the export staging slot it was granted from (an SSD residence prepared there), or -1 for a pinned
     * DRAM residence.
     */
    final int[] stagedSlots = new int[TransferLimits.MAX_KEYS_PER_AUTHORIZE];

    int state = FREE;
    long transferSessionId;
    long lastFreedSessionId;
    long token;
    long requesterMsb;
    long requesterLsb;
    long requesterSessionId;
    long deadlineNs;
    int grantedKeys;
    int requestedKeys;
    TransferStatus refusedStatus = TransferStatus.NOT_ATTEMPTED;
    long chargedBytes;

    TransferSession(final int slot)
    {
        this.slot = slot;
    }

    boolean isFrom(final long msb, final long lsb)
    {
        return msb == requesterMsb && lsb == requesterLsb;
    }

    boolean holdsPins()
    {
        return FREE != state;
    }
}
