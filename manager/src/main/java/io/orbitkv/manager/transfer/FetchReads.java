package io.orbitkv.manager.transfer;

import io.orbitkv.codecs.engine.FailureReason;
import io.orbitkv.manager.status.SystemCounters;
import io.orbitkv.transport.Transport;
import io.orbitkv.transport.TransportStatus;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * The reads of the requester's fetches: granted keys are read through the {@link Transport} straight into their
 * destinations (a local span is copied from the pool, one block per call), and every completion is checked: a failed
 * or short read, or a block whose CRC32C differs from the one its source sealed, stops the prefix at that key (design:
 * no retry of a payload failure). The block's CRC32C is the one the transport took as the bytes landed when it
 * delivers one (the built-in transport sums on its I/O thread), else it is computed here over the destination.
 * Single threaded (the agent that owns the fetches); allocation free.
 */
final class FetchReads
{
    /** A transport read's request id: fetch index (16 bits), generation (16), key (16), attempt (16). */
    private static final int KEY_BITS = 16;
    private static final int ATTEMPT_MASK = 0xFFFF;

    private final Transport transport;
    private final ErrorHandler errorHandler;
    private final AcceptedSessions acceptedSessions;
    private final UnsafeBuffer localSource = new UnsafeBuffer(0, 0);
    private final UnsafeBuffer localDestination = new UnsafeBuffer(0, 0);
    private final AtomicCounter blocksFetched;
    private final AtomicCounter bytesFetched;
    private final AtomicCounter readFailures;
    private final AtomicCounter readTimeouts;
    private final AtomicCounter readsLost;
    private final AtomicCounter readsRefused;
    private final AtomicCounter checksumMismatches;
    private final AtomicCounter localSpanKeys;
    private final AtomicCounter checksumsFromTransport;
    private int inFlight;

    FetchReads(
        final Transport transport,
        final SystemCounters counters,
        final ErrorHandler errorHandler,
        final AcceptedSessions acceptedSessions)
    {
        this.transport = transport;
        this.errorHandler = errorHandler;
        this.acceptedSessions = acceptedSessions;
        blocksFetched = counters.get(TransferCounter.BLOCKS_FETCHED);
        bytesFetched = counters.get(TransferCounter.BYTES_FETCHED);
        readFailures = counters.get(TransferCounter.READ_FAILURES);
        readTimeouts = counters.get(TransferCounter.READ_TIMEOUTS);
        readsLost = counters.get(TransferCounter.READS_LOST);
        readsRefused = counters.get(TransferCounter.READS_REFUSED);
        checksumMismatches = counters.get(TransferCounter.CHECKSUM_MISMATCHES);
        localSpanKeys = counters.get(TransferCounter.LOCAL_SPAN_KEYS);
        checksumsFromTransport = counters.get(TransferCounter.CHECKSUMS_FROM_TRANSPORT);
    }

    /**
     * @return reads submitted to the transport and not completed yet, over every fetch.
     */
    int inFlight()
    {
        return inFlight;
    }

    /**
     * @return the keys of a granted attempt that may be read: its granted run, up to the fetch's stop.
     */
    static int readable(final PeerFetch fetch, final SourceAttempt attempt)
    {
        final int end = Math.min(attempt.firstKey + attempt.grantedKeys, fetch.stopKey);
        return Math.max(0, end - attempt.firstKey);
    }

    /**
     * Submit the reads of an attempt's granted keys not submitted yet (a local span: copy its next block).
     *
     * @return reads submitted (or blocks copied).
     */
    int submit(final PeerFetch fetch, final SourceAttempt attempt)
    {
        if (attempt.local)
        {
            return copyLocal(fetch, attempt);
        }
        int submitted = 0;
        final int end = attempt.firstKey + readable(fetch, attempt);
        for (int i = attempt.firstKey + attempt.readsSubmitted; i < end; i++)
        {
            if (PeerFetch.KEY_GRANTED != fetch.keyStates[i])
            {
                break;
            }
            final int length = fetch.keyLengths[i];
            if (length > fetch.capacities[i])
            {
                fetch.keyStates[i] = PeerFetch.KEY_TOO_SMALL;
                fetch.stopAt(i);
                break;
            }
            final long requestId = ((long)fetch.index << 48) | ((long)(fetch.generation & 0xFFFF) << 32) |
                ((long)i << KEY_BITS) | (attempt.index & ATTEMPT_MASK);
            if (!transport.submitRead(attempt.peer, attempt.transferSessionId, attempt.token, fetch.keyAddresses[i],
                fetch.destinations[i], length, requestId))
            {
                break;
            }
            fetch.keyStates[i] = PeerFetch.KEY_READING;
            attempt.readsOutstanding++;
            attempt.readsSubmitted++;
            fetch.readsInFlight++;
            inFlight++;
            submitted++;
        }
        return submitted;
    }

    /**
     * Copy the next key of a local span from the pool into its destination: one block per call, so a long span is
     * spread over duty cycles like the engine ring's own copies.
     */
    private int copyLocal(final PeerFetch fetch, final SourceAttempt attempt)
    {
        final int i = attempt.firstKey + attempt.readsSubmitted;
        if (i >= attempt.firstKey + readable(fetch, attempt) || PeerFetch.KEY_GRANTED != fetch.keyStates[i])
        {
            return 0;
        }
        final int length = fetch.keyLengths[i];
        if (length > fetch.capacities[i])
        {
            fetch.keyStates[i] = PeerFetch.KEY_TOO_SMALL;
            fetch.stopAt(i);
            return 1;
        }
        localSource.wrap(fetch.keyAddresses[i], length);
        localDestination.wrap(fetch.destinations[i], length);
        localDestination.putBytes(0, localSource, 0, length);
        fetch.keyStates[i] = PeerFetch.KEY_DONE;
        attempt.readsSubmitted++;
        localSpanKeys.incrementRelease();
        return 1;
    }

    /**
     * A transport read completed: settle its key.
     *
     * @param summed  the transport summed the bytes as they landed: {@code crc32c} is their CRC32C.
     * @param crc32c  the transport's sum when {@code summed}.
     * @return the fetch the read belonged to, or null for a read nobody waits for (a fetch reused since).
     */
    PeerFetch complete(
        final PeerFetch[] fetches,
        final long requestId,
        final int status,
        final long bytes,
        final boolean summed,
        final int crc32c)
    {
        final int fetchIndex = (int)(requestId >>> 48);
        final int generation = (int)((requestId >>> 32) & 0xFFFF);
        final int k = (int)((requestId >>> KEY_BITS) & 0xFFFF);
        final int attemptIndex = (int)(requestId & ATTEMPT_MASK);
        if (fetchIndex >= fetches.length)
        {
            return null;
        }
        final PeerFetch fetch = fetches[fetchIndex];
        if (!fetch.active || (fetch.generation & 0xFFFF) != generation || k >= fetch.keyCount ||
            attemptIndex >= fetch.attemptCount || PeerFetch.KEY_READING != fetch.keyStates[k])
        {
            return null;
        }
        final SourceAttempt attempt = fetch.attempt(attemptIndex);
        attempt.readsOutstanding--;
        fetch.readsInFlight--;
        inFlight--;
        final int length = fetch.keyLengths[k];
        if (TransportStatus.OK != status)
        {
            // A peer that does not answer in time, a connection that dies with its source, a session the source
            // revoked (partition, paused, killed or restarted source): outcomes of the network and of other
            // processes, counted by kind, not internal errors; the key fails and the prefix stops.
            readFailures.incrementRelease();
            (TransportStatus.TIMEOUT == status ? readTimeouts : TransportStatus.REJECTED == status ? readsRefused :
                readsLost).incrementRelease();
            fail(fetch, k, FailureReason.TRANSFER);
        }
        else if (bytes != length)
        {
            // The transport said every byte landed, and it did not: ours to look at.
            readFailures.incrementRelease();
            errorHandler.onError(new IllegalStateException("peer read " + TransportStatus.name(status) + ": key " + k +
                " of fetch " + fetch.correlationId + ", " + bytes + " of " + length + " bytes"));
            fail(fetch, k, FailureReason.TRANSFER);
        }
        else if (fetch.clientGone)
        {
            fetch.keyStates[k] = PeerFetch.KEY_DONE;
        }
        else if ((summed ? crc32c : checksum(fetch, k, length)) != fetch.keyCrcs[k])
        {
            checksumMismatches.incrementRelease();
            errorHandler.onError(new IllegalStateException("peer block failed its CRC32C check: key " + k +
                " of fetch " + fetch.correlationId + ", " + length + " bytes"));
            fail(fetch, k, FailureReason.CHECKSUM);
        }
        else
        {
            fetch.keyStates[k] = PeerFetch.KEY_DONE;
            if (!attempt.accepted)
            {
                attempt.accepted = true;
                acceptedSessions.accepted(attempt.ownerMsb, attempt.ownerLsb, attempt.requesterSessionId,
                    attempt.transferSessionId, k, length);
            }
            if (summed)
            {
                checksumsFromTransport.incrementRelease();
            }
            blocksFetched.incrementRelease();
            bytesFetched.getAndAddRelease(length);
        }
        return fetch;
    }

    private static void fail(final PeerFetch fetch, final int k, final FailureReason reason)
    {
        fetch.keyStates[k] = PeerFetch.KEY_FAILED;
        fetch.keyReasons[k] = reason;
        // design: a payload failure stops the prefix there, with no retry.
        fetch.stopAt(k);
    }

    private static int checksum(final PeerFetch fetch, final int k, final int length)
    {
        return fetch.regionChecksum.compute(fetch.destinations[k] - fetch.regionAddress, length);
    }
}
