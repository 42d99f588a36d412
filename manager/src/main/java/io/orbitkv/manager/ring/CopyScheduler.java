package io.orbitkv.manager.ring;

import io.orbitkv.codecs.engine.FailureReason;
import io.orbitkv.codecs.engine.KeyStatus;
import io.orbitkv.manager.port.FetchHandle;
import io.orbitkv.manager.port.PeerPort;
import io.orbitkv.manager.status.SystemCounters;
import io.orbitkv.manager.store.Residence;
import io.orbitkv.manager.store.TieredStore;
import java.lang.foreign.MemorySegment;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * Copies the bytes of Publish and Read operations between client data regions and the store, at most
 * {@code --copy-chunk-bytes} per duty cycle so that one large request never stalls other clients' lookups.
 * Operations are FIFO per client and clients are served round robin.
 *
 * <p>A copy may fault (a client shrank its data region file under the mapping): the session copied last is then
 * known through {@link #copyingSession()}, so the agent can drop that client alone.
 */
final class CopyScheduler
{
    private final TieredStore store;
    private final ClientSession[] sessions;
    private final ResponseProxy responseProxy;
    private final int copyChunkBytes;
    private final AtomicCounter blocksPublished;
    private final AtomicCounter bytesPublished;
    private final AtomicCounter blocksRead;
    private final AtomicCounter bytesRead;
    private final AtomicCounter operationsCancelled;

    private final PeerPort fetcher;
    private ClientSession copyingSession;
    private CopyOperation unqueuedOperation;
    private long copyBudget;
    private int roundRobinCursor;
    private int queuedOperations;

    CopyScheduler(
        final TieredStore store,
        final ClientSession[] sessions,
        final ResponseProxy responseProxy,
        final int copyChunkBytes,
        final SystemCounters counters,
        final PeerPort fetcher)
    {
        this.fetcher = fetcher;
        this.store = store;
        this.sessions = sessions;
        this.responseProxy = responseProxy;
        this.copyChunkBytes = copyChunkBytes;
        blocksPublished = counters.get(RingCounter.BLOCKS_PUBLISHED);
        bytesPublished = counters.get(RingCounter.BYTES_PUBLISHED);
        blocksRead = counters.get(RingCounter.BLOCKS_READ);
        bytesRead = counters.get(RingCounter.BYTES_READ);
        operationsCancelled = counters.get(RingCounter.OPERATIONS_CANCELLED);
    }

    /**
     * A new duty cycle: a fresh copy budget.
     */
    void beginCycle()
    {
        copyBudget = copyChunkBytes;
    }

    /**
     * Forget which session was copied last, once no copy can fault any more.
     */
    void endCopies()
    {
        copyingSession = null;
        unqueuedOperation = null;
    }

    boolean hasQueued()
    {
        return queuedOperations > 0;
    }

    boolean hasBudget()
    {
        return copyBudget > 0;
    }

    /**
     * The session whose data region was copied last, or null.
     */
    ClientSession copyingSession()
    {
        return copyingSession;
    }

    /**
     * A copy faulted before its operation was queued: give back what the operation holds.
     */
    void cancelUnqueued()
    {
        if (null != unqueuedOperation)
        {
            cancel(unqueuedOperation);
            unqueuedOperation.clear();
            unqueuedOperation = null;
        }
    }

    /**
     * Start a validated operation: copied at once when the client has nothing queued and the budget suffices,
     * otherwise queued behind the client's other operations.
     */
    void start(final ClientSession session, final CopyOperation op)
    {
        // FIFO per client: a new operation waits behind the client's queued ones.
        if (!session.hasOperations())
        {
            copyingSession = session;
            unqueuedOperation = op;
            if (progress(session, op))
            {
                complete(session, op);
                op.clear();
                return;
            }
        }
        unqueuedOperation = null;
        session.enqueue();
        queuedOperations++;
    }

    /**
     * Copy queued operations round robin until the budget is spent.
     *
     * @return work done.
     */
    int copyQueued()
    {
        int workCount = 0;
        final int count = sessions.length;
        final int start = roundRobinCursor;
        for (int n = 0; n < count && copyBudget > 0; n++)
        {
            final ClientSession session = sessions[(start + n) % count];
            if (session.hasOperations())
            {
                final CopyOperation op = session.headOperation();
                workCount++;
                copyingSession = session;
                if (progress(session, op))
                {
                    complete(session, op);
                    session.dequeue();
                    queuedOperations--;
                }
            }
        }
        roundRobinCursor = (start + 1) % count;
        return workCount;
    }

    /**
     * The client goes away: cancel its queued operations, releasing what they hold.
     */
    void cancelQueued(final ClientSession session)
    {
        while (session.hasOperations())
        {
            cancel(session.headOperation());
            session.dequeue();
            queuedOperations--;
        }
    }

    /**
     * Copy as much of the operation as this duty cycle's budget allows.
     *
     * @return true when every key is done.
     */
    private boolean progress(final ClientSession session, final CopyOperation op)
    {
        final MemorySegment region = session.region();
        if (op.ssdKeys > 0)
        {
            submitSsdReads(op);
        }
        while (op.nextKey < op.keyCount)
        {
            final int i = op.nextKey;
            final long residence = op.residences[i];
            if (Residence.isNone(residence))
            {
                op.nextKey++;
                continue;
            }
            if (copyBudget <= 0)
            {
                return false;
            }

            if (Residence.isSsd(residence))
            {
                final byte phase = op.ssdPhases[i];
                if (CopyOperation.SSD_FAILED == phase)
                {
                    failSsdKey(op, i, KeyStatus.FAILED, FailureReason.IO);
                    return true;
                }
                if (CopyOperation.SSD_STAGED != phase)
                {
                    return false;
                }
                final int length = op.lengths[i];
                if (op.verifiedInKey < length)
                {
                    // design: SSD bytes are verified against the block's checksum before any is copied on.
                    final long verified = op.verifiedInKey;
                    final long bytes = Math.min(length - verified, copyBudget);
                    store.checksumStaging(op.crc, op.stagingOffsets[i] + verified, bytes);
                    copyBudget -= bytes;
                    op.verifiedInKey = verified + bytes;
                    if (op.verifiedInKey == length &&
                        !store.verifySsdRead(residence, op.stagingOffsets[i], length, (int)op.crc.getValue()))
                    {
                        failSsdKey(op, i, KeyStatus.FAILED, FailureReason.CHECKSUM);
                        return true;
                    }
                    continue;
                }
                final long copied = op.copiedInKey;
                final long bytes = Math.min(length - copied, copyBudget);
                MemorySegment.copy(
                    store.staging(), op.stagingOffsets[i] + copied, region, op.regionOffsets[i] + copied, bytes);
                copyBudget -= bytes;
                op.copiedInKey = copied + bytes;
                if (op.copiedInKey == length)
                {
                    store.finishSsdRead(residence, op.stagingOffsets[i], length);
                    blocksRead.incrementRelease();
                    bytesRead.getAndAddRelease(length);
                    finishKey(op, i);
                }
                continue;
            }

            final int entryId = Residence.entryId(residence);
            final int length = op.lengths[i];
            final long copied = op.copiedInKey;
            final long bytes = Math.min(length - copied, copyBudget);
            final long poolOffset = store.offset(entryId) + copied;
            final long regionOffset = op.regionOffsets[i] + copied;
            if (CopyOperation.PUBLISH == op.kind)
            {
                store.copyIntoPool(region, regionOffset, poolOffset, bytes, op.crc);
            }
            else
            {
                MemorySegment.copy(store.pool(), poolOffset, region, regionOffset, bytes);
            }
            copyBudget -= bytes;
            op.copiedInKey = copied + bytes;

            if (op.copiedInKey == length)
            {
                if (CopyOperation.PUBLISH == op.kind)
                {
                    store.seal(entryId, (int)op.crc.getValue());
                    blocksPublished.incrementRelease();
                    bytesPublished.getAndAddRelease(length);
                }
                else
                {
                    store.finishDramRead(entryId);
                    blocksRead.incrementRelease();
                    bytesRead.getAndAddRelease(length);
                }
                finishKey(op, i);
            }
        }
        return true;
    }

    private static void finishKey(final CopyOperation op, final int key)
    {
        op.residences[key] = Residence.NONE;
        op.completedCount++;
        op.copiedInKey = 0;
        op.verifiedInKey = 0;
        op.crc.reset();
        op.nextKey++;
    }

    /**
     * Queue reads for the operation's SSD keys that have none yet, in key order, while staging and commands last.
     */
    private void submitSsdReads(final CopyOperation op)
    {
        for (int i = Math.max(op.nextKey, op.nextSsdKey); i < op.keyCount; i++)
        {
            final long residence = op.residences[i];
            if (!Residence.isSsd(residence) || CopyOperation.SSD_NEEDS_IO != op.ssdPhases[i])
            {
                continue;
            }
            final int command = store.submitSsdRead(residence, op.lengths[i], op, i);
            if (command < 0)
            {
                op.nextSsdKey = i;
                return;
            }
            op.commands[i] = command;
            op.ssdPhases[i] = CopyOperation.SSD_IN_FLIGHT;
        }
        op.nextSsdKey = op.keyCount;
    }

    /**
     * An SSD read failed or its bytes did not match the block's checksum (either way staging, the pin and the
     * residence are already released): the key is answered FAILED with the reason, which ends the restored prefix,
     * so the keys after it are released and not attempted.
     */
    private void failSsdKey(final CopyOperation op, final int key, final KeyStatus status, final FailureReason reason)
    {
        op.statuses[key] = status;
        op.reasons[key] = reason;
        op.lengths[key] = 0;
        op.residences[key] = Residence.NONE;
        op.copiedInKey = 0;
        for (int i = key + 1; i < op.keyCount; i++)
        {
            releaseReadKey(op, i);
            op.statuses[i] = KeyStatus.NOT_ATTEMPTED;
            op.lengths[i] = 0;
        }
        op.nextKey = op.keyCount;
    }

    private void releaseReadKey(final CopyOperation op, final int key)
    {
        final long residence = op.residences[key];
        if (Residence.isNone(residence))
        {
            return;
        }
        if (Residence.isSsd(residence))
        {
            switch (op.ssdPhases[key])
            {
                case CopyOperation.SSD_NEEDS_IO:
                    store.unpin(residence);
                    break;

                case CopyOperation.SSD_IN_FLIGHT:
                    // The kernel may still be writing into staging: the completion releases it.
                    store.orphanSsdRead(op.commands[key]);
                    break;

                case CopyOperation.SSD_STAGED:
                    store.releaseStagedRead(residence, op.stagingOffsets[key]);
                    break;

                default:
                    break;
            }
        }
        else
        {
            store.unpin(residence);
        }
        op.residences[key] = Residence.NONE;
    }

    private void complete(final ClientSession session, final CopyOperation op)
    {
        if (CopyOperation.READ == op.kind && 0 != op.leaseId)
        {
            // design: a Read carrying a lease releases it once the read completes.
            final int leaseIndex = session.findLease(op.leaseId);
            if (leaseIndex >= 0)
            {
                final FetchHandle held = session.leaseFetch(leaseIndex);
                if (null != held && held != op.peerFetch)
                {
                    session.leaseFetch(leaseIndex, null);
                    fetcher.release(held);
                }
                session.removeLease(leaseIndex, store);
            }
        }
        if (null != op.peerFetch && startPeerPart(session, op))
        {
            // Answered by the fetch once its peer keys are restored or the prefix stopped.
            return;
        }
        responseProxy.sendKeys(
            session.responseRing,
            session.clientId,
            op.correlationId,
            op.templateId,
            op.completedCount,
            0L,
            op.statuses,
            op.lengths,
            op.reasons,
            op.keyCount,
            null);
    }

    /**
     * The local part of a Read ended: start its peer part if the local part restored every key before it.
     *
     * @return true when the peer part answers the Read.
     */
    private boolean startPeerPart(final ClientSession session, final CopyOperation op)
    {
        final FetchHandle fetch = op.peerFetch;
        op.peerFetch = null;
        if (op.completedCount != fetch.firstRow() || !session.canAddPeerRead())
        {
            dropPeerPart(op, fetch);
            return false;
        }
        session.addPeerRead(fetch);
        if (op.peerHeld)
        {
            fetcher.readHeld(fetch, op.peerKeys, op.correlationId, fetch.firstRow(), op.keyCount, op.statuses,
                op.lengths);
        }
        else
        {
            fetch.localRows(op.statuses, op.lengths);
            fetcher.start(fetch);
        }
        return true;
    }

    private void dropPeerPart(final CopyOperation op, final FetchHandle fetch)
    {
        if (op.peerHeld)
        {
            fetcher.release(fetch);
        }
        else
        {
            fetcher.discard(fetch);
        }
    }

    private void cancel(final CopyOperation op)
    {
        if (null != op.peerFetch)
        {
            dropPeerPart(op, op.peerFetch);
            op.peerFetch = null;
        }
        for (int i = op.nextKey; i < op.keyCount; i++)
        {
            final long residence = op.residences[i];
            if (!Residence.isNone(residence))
            {
                if (CopyOperation.PUBLISH == op.kind)
                {
                    store.abort(Residence.entryId(residence));
                    op.residences[i] = Residence.NONE;
                }
                else
                {
                    releaseReadKey(op, i);
                }
            }
        }
        operationsCancelled.incrementRelease();
    }
}
