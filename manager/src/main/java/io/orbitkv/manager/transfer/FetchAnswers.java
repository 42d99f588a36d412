package io.orbitkv.manager.transfer;

import java.lang.foreign.MemorySegment;

import io.orbitkv.codecs.StateKeyFlyweight;
import io.orbitkv.codecs.engine.FailureReason;
import io.orbitkv.codecs.engine.KeyStatus;
import io.orbitkv.index.NamespaceTable;
import io.orbitkv.manager.catalog.CatalogRequester;
import io.orbitkv.codecs.CandidateTable;
import io.orbitkv.manager.membership.MemberRecord;
import io.orbitkv.manager.status.SystemCounters;
import io.orbitkv.manager.store.TieredStore;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * A finished fetch's answer to the engine: the rows of its delivered leading run (DRAM for a local span, PEER with the
 * source that served it), the row that says why the run ended ({@code MISS}, {@code FAILED} with its reason,
 * {@code DESTINATION_TOO_SMALL}), {@code NOT_ATTEMPTED} after it, and the value. A verified block of a READ is kept in
 * local DRAM when the admission policy says so. Single threaded (the agent that owns the fetches).
 */
final class FetchAnswers
{
    private final CatalogRequester catalog;
    private final TieredStore store;
    private final NamespaceTable namespaces;
    private final PeerAdmission admission;
    private final StateKeyFlyweight key = new StateKeyFlyweight();
    private final AtomicCounter blocksAdmitted;

    FetchAnswers(
        final CatalogRequester catalog,
        final TieredStore store,
        final NamespaceTable namespaces,
        final PeerAdmission admission,
        final SystemCounters counters)
    {
        this.catalog = catalog;
        this.store = store;
        this.namespaces = namespaces;
        this.admission = admission;
        this.blocksAdmitted = counters.get(TransferCounter.BLOCKS_ADMITTED);
    }

    /**
     * Fill the fetch's answer rows from its settled keys.
     *
     * @return the keys delivered (the leading run).
     */
    int fill(final PeerFetch fetch, final long nowMs)
    {
        final int delivered = fetch.deliveredKeys();
        final int first = fetch.firstRow;
        final CandidateTable answer = fetch.answer;
        answer.reset();
        for (int k = 0; k < delivered; k++)
        {
            final int row = first + k;
            final SourceAttempt attempt = fetch.attempt(fetch.keyAttempts[k]);
            fetch.lengths[row] = fetch.keyLengths[k];
            fetch.reasons[row] = FailureReason.NONE;
            if (attempt.local)
            {
                fetch.statuses[row] = KeyStatus.DRAM;
                continue;
            }
            fetch.statuses[row] = KeyStatus.PEER;
            final MemberRecord record = catalog.member(attempt.ownerMsb, attempt.ownerLsb);
            final int c = k * PeerFetch.MAX_CANDIDATES + Math.max(0, fetch.keyCandidates[k]);
            if (null != record)
            {
                final int owner = answer.addOwner(attempt.ownerMsb, attempt.ownerLsb, record.nodeId());
                if (owner >= 0)
                {
                    answer.addCandidate(row, owner, 0 == fetch.candidateTiers[c] ? KeyStatus.DRAM : KeyStatus.SSD,
                        fetch.candidateSequences[c], fetch.keyLengths[k]);
                }
            }
            if (PeerFetch.READ == fetch.kind && !fetch.clientGone)
            {
                admit(fetch, k, nowMs);
            }
        }
        int row = first + delivered;
        if (delivered < fetch.keyCount && row < fetch.rowCount)
        {
            final byte state = fetch.keyStates[delivered];
            final FailureReason reason = fetch.keyReasons[delivered];
            fetch.lengths[row] = 0;
            if (PeerFetch.KEY_TOO_SMALL == state)
            {
                fetch.statuses[row] = KeyStatus.DESTINATION_TOO_SMALL;
                fetch.lengths[row] = fetch.keyLengths[delivered];
            }
            else if (PeerFetch.KEY_FAILED == state || FailureReason.NONE != reason)
            {
                fetch.statuses[row] = KeyStatus.FAILED;
                fetch.reasons[row] = FailureReason.NONE == reason ? FailureReason.TRANSFER : reason;
            }
            else
            {
                fetch.statuses[row] = KeyStatus.MISS;
            }
            row++;
        }
        else if (delivered == fetch.keyCount && row < fetch.rowCount)
        {
            fetch.statuses[row] = KeyStatus.MISS;
            fetch.lengths[row] = 0;
            row++;
        }
        for (; row < fetch.rowCount; row++)
        {
            fetch.statuses[row] = KeyStatus.NOT_ATTEMPTED;
            fetch.lengths[row] = 0;
        }
        fetch.value = first + delivered;
        return delivered;
    }

    /**
     * Keep a verified peer block in local DRAM when the admission policy says so; a full pool or a key that became
     * resident meanwhile admits nothing.
     */
    private void admit(final PeerFetch fetch, final int k, final long nowMs)
    {
        final StateKeyFlyweight stateKey = fetch.key(k, key);
        if (!admission.admit(stateKey.fingerprint(), nowMs))
        {
            return;
        }
        final int namespaceId = namespaces.lookupOrRegister(fetch.namespace, 0, fetch.namespaceLength);
        if (namespaceId < 0)
        {
            return;
        }
        final int length = fetch.keyLengths[k];
        final int entryId = store.reserve(namespaceId, fetch.hashes, fetch.hashOffset(k), fetch.hashLengths[k], length);
        if (entryId < 0)
        {
            return;
        }
        final MemorySegment pool = store.pool();
        MemorySegment.copy(MemorySegment.ofAddress(fetch.destinations[k]).reinterpret(length), 0, pool,
            store.offset(entryId), length);
        store.sealFetched(entryId, fetch.keyCrcs[k]);
        blocksAdmitted.incrementRelease();
    }
}
