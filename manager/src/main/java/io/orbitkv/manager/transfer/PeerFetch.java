package io.orbitkv.manager.transfer;

import io.orbitkv.codecs.CandidateTable;
import io.orbitkv.codecs.EngineRingLimits;
import io.orbitkv.codecs.StateKeyFlyweight;
import io.orbitkv.codecs.TransferLimits;
import io.orbitkv.codecs.engine.FailureReason;
import io.orbitkv.codecs.engine.KeyStatus;
import io.orbitkv.codecs.engine.ReadRequestDecoder;
import io.orbitkv.manager.port.FetchHandle;
import io.orbitkv.manager.port.PeerListener;
import org.agrona.DirectBuffer;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * One requester-side fetch of the keys that follow an engine request's local prefix: their candidates, the spans
 * planned over them, one source attempt per span (authorization, grant, reads, release) and the outcome per key.
 * Preallocated by the {@link PeerFetcher} for the protocol limits and reused; the engine ring fills the request part
 * and reads the answer part through its {@link FetchHandle}, everything else belongs to the fetcher. Nothing here allocates.
 * <p>
 * A fetch has one of two purposes. {@link #READ} restores the keys into the client's destination ranges and ends
 * with the answer. {@link #HOLD} (a Lookup with pin and peers) only authorizes: its grants stay open under the
 * client's lease until a Read of that lease turns it into a READ, or the lease is released.
 */
public final class PeerFetch implements FetchHandle
{
    /** The most peer keys one fetch carries: the peer part of one engine request. */
    public static final int MAX_KEYS = EngineRingLimits.MAX_PEER_KEYS_PER_LOOKUP;
    static final int MAX_CANDIDATES = EngineRingLimits.MAX_CANDIDATES_PER_KEY;
    /** Source attempts one fetch may make: one span per key at worst, plus the alternatives of a rejection. */
    static final int MAX_ATTEMPTS = MAX_KEYS + TransferLimits.MAX_ALTERNATIVE_ATTEMPTS;

    // Key states.
    static final byte KEY_UNPLANNED = 0;
    static final byte KEY_AUTHORIZING = 1;
    static final byte KEY_GRANTED = 2;
    static final byte KEY_READING = 3;
    static final byte KEY_DONE = 4;
    static final byte KEY_FAILED = 5;
    static final byte KEY_TOO_SMALL = 6;

    // Phases.
    static final int IDLE = 0;
    static final int DISCOVERING = 1;
    static final int AUTHORIZING = 2;
    static final int READING = 3;

    final int index;
    int generation;
    boolean active;
    int kind;
    int phase;

    // Request part, filled by the engine ring.
    long clientId;
    long correlationId;
    int templateId;
    long leaseId;
    /** Row of the request where the peer keys start (the local prefix length). */
    int firstRow;
    /** Rows of the whole request: local rows, peer rows, and the rest. */
    int rowCount;
    int keyCount;
    final UnsafeBuffer namespace = new UnsafeBuffer(new byte[EngineRingLimits.MAX_NAMESPACE_LENGTH]);
    int namespaceLength;
    final UnsafeBuffer hashes = new UnsafeBuffer(new byte[MAX_KEYS * EngineRingLimits.MAX_HASH_LENGTH]);
    final int[] hashLengths = new int[MAX_KEYS];
    final long[] destinations = new long[MAX_KEYS];
    final int[] capacities = new int[MAX_KEYS];

    // Candidates, from discovery.
    final int[] candidateCounts = new int[MAX_KEYS];
    final long[] candidateMsbs = new long[MAX_KEYS * MAX_CANDIDATES];
    final long[] candidateLsbs = new long[MAX_KEYS * MAX_CANDIDATES];
    final long[] candidateSequences = new long[MAX_KEYS * MAX_CANDIDATES];
    final int[] candidateLengths = new int[MAX_KEYS * MAX_CANDIDATES];
    final byte[] candidateTiers = new byte[MAX_KEYS * MAX_CANDIDATES];
    /** Bit c set: candidate c of the key was refused by its source. */
    final byte[] candidateRefused = new byte[MAX_KEYS];

    // Per key progress.
    final byte[] keyStates = new byte[MAX_KEYS];
    final int[] keyAttempts = new int[MAX_KEYS];
    final int[] keyCandidates = new int[MAX_KEYS];
    final long[] keyAddresses = new long[MAX_KEYS];
    final int[] keyLengths = new int[MAX_KEYS];
    final int[] keyCrcs = new int[MAX_KEYS];
    /** The pinned DRAM residence of a key served by a {@link SourceAttempt#local} attempt. */
    final long[] keyResidences = new long[MAX_KEYS];
    final FailureReason[] keyReasons = new FailureReason[MAX_KEYS];

    // Source attempts.
    final SourceAttempt[] attempts = new SourceAttempt[MAX_ATTEMPTS];
    int attemptCount;
    int alternativesUsed;
    /** The first key not yet given to a span. */
    int nextKey;
    /** Keys at or after this one are not fetched: a payload failure, a refusal without alternatives, a miss. */
    int stopKey;
    int readsInFlight;
    long deadlineMs;
    boolean localDone;
    boolean answered;
    boolean clientGone;
    /** A HOLD whose lease went away: a grant that arrives after it is released at once, not held. */
    boolean holdReleased;
    AutoCloseable orphanedRegion;
    int lookupIndex = -1;
    long regionAddress;
    io.orbitkv.index.BlockChecksum regionChecksum;

    // Answer part, read by the engine ring.
    final KeyStatus[] statuses = new KeyStatus[EngineRingLimits.MAX_KEYS_PER_REQUEST];
    final int[] lengths = new int[EngineRingLimits.MAX_KEYS_PER_REQUEST];
    final FailureReason[] reasons = new FailureReason[EngineRingLimits.MAX_KEYS_PER_REQUEST];
    final CandidateTable answer = CandidateTable.forAnswer();
    long value;

    PeerFetch(final int index)
    {
        this.index = index;
        for (int i = 0; i < attempts.length; i++)
        {
            attempts[i] = new SourceAttempt(i);
        }
    }

    /**
     * Told when this fetch has its answer; named by whoever acquired it.
     */
    PeerListener listener;

    public PeerFetch request(
        final int kind,
        final long clientId,
        final long correlationId,
        final int templateId,
        final long leaseId,
        final int firstRow,
        final int rowCount,
        final KeyStatus[] localStatuses,
        final int[] localLengths)
    {
        this.kind = kind;
        this.clientId = clientId;
        this.correlationId = correlationId;
        this.templateId = templateId;
        this.leaseId = leaseId;
        this.firstRow = firstRow;
        this.rowCount = rowCount;
        this.keyCount = 0;
        System.arraycopy(localStatuses, 0, statuses, 0, firstRow);
        System.arraycopy(localLengths, 0, lengths, 0, firstRow);
        for (int i = 0; i < rowCount; i++)
        {
            reasons[i] = FailureReason.NONE;
        }
        answer.reset();
        return this;
    }

    /**
     * The final statuses and lengths of the local rows, once the local part of a READ ended.
     */
    public void localRows(final KeyStatus[] localStatuses, final int[] localLengths)
    {
        System.arraycopy(localStatuses, 0, statuses, 0, firstRow);
        System.arraycopy(localLengths, 0, lengths, 0, firstRow);
    }

    public PeerFetch namespace(final DirectBuffer buffer, final int offset, final int length)
    {
        namespace.putBytes(0, buffer, offset, length);
        namespaceLength = length;
        return this;
    }

    /**
     * Append the next peer key; for a READ, with the absolute address and capacity of its destination.
     *
     * @return false when {@link #MAX_KEYS} keys are held already.
     */
    public boolean addKey(
        final DirectBuffer buffer, final int offset, final int length, final long destination, final int capacity)
    {
        if (keyCount == MAX_KEYS)
        {
            return false;
        }
        final int k = keyCount++;
        hashes.putBytes(k * EngineRingLimits.MAX_HASH_LENGTH, buffer, offset, length);
        hashLengths[k] = length;
        destinations[k] = destination;
        capacities[k] = capacity;
        candidateCounts[k] = 0;
        candidateRefused[k] = 0;
        keyStates[k] = KEY_UNPLANNED;
        keyAttempts[k] = -1;
        keyCandidates[k] = -1;
        keyReasons[k] = FailureReason.NONE;
        return true;
    }

    /**
     * Give a held key (from a HOLD fetch) its destination, for the Read that uses the lease.
     */
    public void destination(final int key, final long destination, final int capacity)
    {
        destinations[key] = destination;
        capacities[key] = capacity;
    }

    /**
     * The lease holding this fetch moved to another client of this Manager: its answers go to that client.
     */
    public void handOver(final long clientId)
    {
        this.clientId = clientId;
    }

    public int kind()
    {
        return kind;
    }

    public long clientId()
    {
        return clientId;
    }

    public long correlationId()
    {
        return correlationId;
    }

    public int templateId()
    {
        return templateId;
    }

    public long leaseId()
    {
        return leaseId;
    }

    public int rowCount()
    {
        return rowCount;
    }

    public int firstRow()
    {
        return firstRow;
    }

    public int keyCount()
    {
        return keyCount;
    }

    /**
     * Keys granted (HOLD) or restored (READ) as the leading run of the peer keys.
     */
    public int deliveredKeys()
    {
        int n = 0;
        final byte want = HOLD == kind ? KEY_GRANTED : KEY_DONE;
        while (n < keyCount && keyStates[n] == want)
        {
            n++;
        }
        return n;
    }

    public KeyStatus[] statuses()
    {
        return statuses;
    }

    public int[] lengths()
    {
        return lengths;
    }

    public FailureReason[] reasons()
    {
        return reasons;
    }

    public CandidateTable answer()
    {
        return answer;
    }

    /**
     * The answer's value: blocks restored (READ: local and peer) or covered by the lease (HOLD).
     */
    public long value()
    {
        return value;
    }

    /**
     * Whether peer key {@code key} has the same hash as {@code hash[offset, offset + length)}.
     */
    public boolean sameKey(final int key, final DirectBuffer hash, final int offset, final int length)
    {
        if (key >= keyCount || hashLengths[key] != length)
        {
            return false;
        }
        final int base = key * EngineRingLimits.MAX_HASH_LENGTH;
        for (int i = 0; i < length; i++)
        {
            if (hashes.getByte(base + i) != hash.getByte(offset + i))
            {
                return false;
            }
        }
        return true;
    }

    StateKeyFlyweight key(final int k, final StateKeyFlyweight key)
    {
        return key.wrap(StateKeyFlyweight.NO_NAMESPACE_ID, namespace, 0, namespaceLength, hashes,
            k * EngineRingLimits.MAX_HASH_LENGTH, hashLengths[k]);
    }

    int hashOffset(final int k)
    {
        return k * EngineRingLimits.MAX_HASH_LENGTH;
    }

    void addCandidate(
        final int k, final long msb, final long lsb, final byte tier, final long sequence, final int length)
    {
        final int c = candidateCounts[k];
        if (c == MAX_CANDIDATES)
        {
            return;
        }
        final int at = k * MAX_CANDIDATES + c;
        candidateMsbs[at] = msb;
        candidateLsbs[at] = lsb;
        candidateTiers[at] = tier;
        candidateSequences[at] = sequence;
        candidateLengths[at] = length;
        candidateCounts[k] = c + 1;
    }

    /**
     * The candidate of key {@code k} held by incarnation (msb, lsb) and not refused yet, or -1.
     */
    int candidateOf(final int k, final long msb, final long lsb)
    {
        final int base = k * MAX_CANDIDATES;
        for (int c = 0; c < candidateCounts[k]; c++)
        {
            if (0 == (candidateRefused[k] & (1 << c)) &&
                candidateMsbs[base + c] == msb && candidateLsbs[base + c] == lsb)
            {
                return c;
            }
        }
        return -1;
    }

    SourceAttempt attempt(final int i)
    {
        return attempts[i];
    }

    /**
     * Taken from the pool by a request: a new generation, nothing planned, nothing owned.
     */
    void begin(final PeerListener listener)
    {
        active = true;
        this.listener = listener;
        generation++;
        phase = IDLE;
        attemptCount = 0;
        alternativesUsed = 0;
        nextKey = 0;
        stopKey = Integer.MAX_VALUE;
        readsInFlight = 0;
        localDone = false;
        clientGone = false;
        holdReleased = false;
        orphanedRegion = null;
        regionChecksum = null;
        regionAddress = 0;
        answered = false;
        lookupIndex = -1;
    }

    /**
     * Turn a held fetch into a READ of its first {@code keys} keys for the Read that uses its lease: a new request
     * identity, the Read's local rows (copied), no answer yet.
     */
    void readHeld(
        final int keys,
        final long correlationId,
        final int firstRow,
        final int rowCount,
        final KeyStatus[] localStatuses,
        final int[] localLengths,
        final long deadlineMs)
    {
        kind = READ;
        answered = false;
        this.correlationId = correlationId;
        templateId = ReadRequestDecoder.TEMPLATE_ID;
        this.firstRow = firstRow;
        this.rowCount = rowCount;
        System.arraycopy(localStatuses, 0, statuses, 0, firstRow);
        System.arraycopy(localLengths, 0, lengths, 0, firstRow);
        for (int i = 0; i < rowCount; i++)
        {
            reasons[i] = FailureReason.NONE;
        }
        answer.reset();
        this.deadlineMs = deadlineMs;
        stopAt(keys);
        phase = READING;
    }

    /**
     * Take the candidates of the peer keys from a discovery answer whose rows start at {@code firstRow}.
     */
    void candidatesFrom(final CandidateTable table, final int firstRow)
    {
        for (int i = 0; i < table.candidateCount(); i++)
        {
            final int k = table.candidateKeyIndex(i) - firstRow;
            if (k < 0 || k >= keyCount)
            {
                continue;
            }
            final int owner = table.candidateOwnerIndex(i);
            addCandidate(k, table.ownerRuntimeUuidMsb(owner), table.ownerRuntimeUuidLsb(owner),
                KeyStatus.DRAM == table.candidateTier(i) ? (byte)0 : (byte)1,
                table.candidateInsertionSequence(i), table.candidateLength(i));
        }
    }

    /**
     * @return the first key not granted (HOLD) or not restored (READ): the end of the leading run so far.
     */
    int firstUnfinished()
    {
        final byte done = HOLD == kind ? KEY_GRANTED : KEY_DONE;
        int k = 0;
        while (k < keyCount && keyStates[k] == done)
        {
            k++;
        }
        return k;
    }

    /**
     * Whether every key before the stop is settled, no read is in flight and no authorization that could extend the
     * leading run is still out: the fetch can be answered.
     */
    boolean settled()
    {
        final int limit = Math.min(keyCount, stopKey);
        for (int k = 0; k < limit; k++)
        {
            final byte state = keyStates[k];
            if (KEY_UNPLANNED == state || KEY_AUTHORIZING == state || KEY_READING == state ||
                (READ == kind && KEY_GRANTED == state))
            {
                return false;
            }
        }
        if (readsInFlight > 0)
        {
            return false;
        }
        for (int a = 0; a < attemptCount; a++)
        {
            // A later span still waiting for its grant holds the answer only if it could extend the run.
            if (SourceAttempt.SENT == attempts[a].state && attempts[a].firstKey < limit)
            {
                return false;
            }
        }
        return true;
    }

    /**
     * @return attempts planned and not sent yet (some wait for a source's retry interval).
     */
    int attemptsToSend()
    {
        int waiting = 0;
        for (int a = 0; a < attemptCount; a++)
        {
            if (SourceAttempt.TO_SEND == attempts[a].state)
            {
                waiting++;
            }
        }
        return waiting;
    }

    /**
     * Started (its local part is over): answered within the fetch budget from now.
     */
    void started(final long deadlineMs)
    {
        this.deadlineMs = deadlineMs;
        localDone = true;
    }

    /**
     * Waiting for discovery to answer the catalog lookup in slot {@code lookupIndex}.
     */
    void discovering(final int lookupIndex)
    {
        phase = DISCOVERING;
        this.lookupIndex = lookupIndex;
    }

    /**
     * Candidates known: its spans are asked of their sources from now.
     */
    void authorizing()
    {
        phase = AUTHORIZING;
    }

    /**
     * Keys at or after {@code key} are not fetched.
     */
    void stopAt(final int key)
    {
        stopKey = Math.min(stopKey, key);
    }

    /**
     * The answer is being given: nothing more is fetched for it.
     */
    void markAnswered()
    {
        answered = true;
    }

    /**
     * The lease holding this HOLD went away: nothing more is held or answered, a grant that arrives later is released.
     */
    void letHoldGo()
    {
        stopKey = 0;
        answered = true;
        holdReleased = true;
    }

    /**
     * Its client detached: the answer is not sent, and {@code region} (may be null) is closed when the fetch ends.
     */
    void clientGone(final AutoCloseable region)
    {
        clientGone = true;
        orphanedRegion = region;
    }

    /**
     * The checksum of the client's data region at {@code address}, where a READ's destinations lie.
     */
    void destinationRegion(final long address, final io.orbitkv.index.BlockChecksum checksum)
    {
        regionAddress = address;
        regionChecksum = checksum;
    }

    /**
     * Back to the pool: the data region of a client that left meanwhile is closed, and nothing of the fetch is in use
     * until the next {@link #begin}.
     */
    void end(final ErrorHandler errorHandler)
    {
        if (null != orphanedRegion)
        {
            try
            {
                orphanedRegion.close();
            }
            catch (final Exception ex)
            {
                errorHandler.onError(ex);
            }
            orphanedRegion = null;
        }
        active = false;
        phase = IDLE;
        answered = false;
        listener = null;
    }

    /**
     * A new attempt at one source for keys [firstKey, firstKey + keyCount), to be sent from {@code notBeforeMs} on;
     * its keys are authorizing from now.
     */
    SourceAttempt newAttempt(
        final long ownerMsb,
        final long ownerLsb,
        final int firstKey,
        final int keyCount,
        final long requesterSessionId,
        final long notBeforeMs)
    {
        final SourceAttempt attempt = attempts[attemptCount++];
        attempt.begin(ownerMsb, ownerLsb, firstKey, keyCount, requesterSessionId, notBeforeMs);
        for (int i = firstKey; i < firstKey + keyCount; i++)
        {
            keyStates[i] = KEY_AUTHORIZING;
            keyAttempts[i] = attempt.index;
        }
        return attempt;
    }
}
