package io.orbitkv.manager.transfer;

import io.orbitkv.codecs.StateKey;
import io.orbitkv.codecs.TransferLimits;
import io.orbitkv.codecs.transfer.TransferAuthorizeDecoder;
import io.orbitkv.codecs.transfer.TransferStatus;
import io.orbitkv.codecs.transfer.TransferTier;
import io.orbitkv.index.BlockStore;
import io.orbitkv.index.NamespaceTable;
import io.orbitkv.manager.store.Residence;
import io.orbitkv.manager.store.TieredStore;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The checks of one authorization request, in the order docs/transfer.md gives: the frame's sanity before anything is
 * touched ({@link #checkFrame}), then each key in order against the store ({@link #checkKeys}): the residence of the
 * named tier (MISSING), its insertion sequence (STALE_SEQUENCE), its length (LENGTH_MISMATCH), for DRAM the budget
 * left in the {@link SourceHolds} (OVER_BUDGET), for SSD a copy prepared in {@link SsdExports} (else PENDING while it
 * is prepared, BACKPRESSURE without staging credit). The leading run of valid keys becomes the candidates the
 * {@link SourceAuthorizer} pins and grants; SSD keys behind a PENDING one are prepared too, so the requester's next
 * ask finds them ready. Nothing is pinned or charged here. Single threaded (the source's); allocation free.
 */
final class AuthorizeChecks
{
    private final TieredStore store;
    private final BlockStore dram;
    private final NamespaceTable namespaces;
    private final SsdExports exports;
    private final SourceHolds holds;
    private final UnsafeBuffer namespace = new UnsafeBuffer(new byte[StateKey.MAX_NAMESPACE_LENGTH]);
    private final UnsafeBuffer hashView = new UnsafeBuffer(0, 0);
    private final long[] candidateResidences = new long[TransferLimits.MAX_KEYS_PER_AUTHORIZE];
    private final int[] candidateSlots = new int[TransferLimits.MAX_KEYS_PER_AUTHORIZE];
    private int namespaceLength;
    private TransferStatus refused = TransferStatus.NOT_ATTEMPTED;
    private long charge;

    /**
     * @param exports the SSD export staging, or null when the source serves DRAM only.
     */
    AuthorizeChecks(
        final TieredStore store, final NamespaceTable namespaces, final SsdExports exports, final SourceHolds holds)
    {
        this.store = store;
        this.dram = store.dram();
        this.namespaces = namespaces;
        this.exports = exports;
        this.holds = holds;
    }

    /**
     * Judge the keys of a request whose frame {@link #checkFrame} accepted, in order, up to the first refused one.
     *
     * @return how many leading keys are valid (their candidates filled); {@link #refused()} says why the next was not.
     */
    int checkKeys(final TransferAuthorizeDecoder request)
    {
        final int namespaceId = namespaces.lookup(namespace, 0, namespaceLength);
        request.sbeRewind();
        final TransferAuthorizeDecoder.KeysDecoder keys = request.keys();
        long pendingCharge = 0;
        int valid = 0;
        TransferStatus refused = TransferStatus.NOT_ATTEMPTED;
        while (keys.hasNext())
        {
            keys.next();
            final TransferTier tier = keys.tier();
            final long insertionSequence = keys.insertionSequence();
            final int expectedBytes = keys.expectedBytes();
            final int hashLength = keys.keyHashLength();
            keys.wrapKeyHash(hashView);
            if (TransferStatus.NOT_ATTEMPTED != refused)
            {
                // After a PENDING key: only prepare the SSD keys behind it, so the next ask finds them ready.
                if (TransferTier.SSD != tier || !prepareAhead(namespaceId, hashLength, insertionSequence, expectedBytes))
                {
                    break;
                }
                continue;
            }
            if (TransferTier.SSD == tier)
            {
                final TransferStatus verdict = checkSsd(namespaceId, hashLength, insertionSequence, expectedBytes, valid);
                if (TransferStatus.OK == verdict)
                {
                    valid++;
                    continue;
                }
                refused = verdict;
                if (TransferStatus.PENDING == verdict)
                {
                    continue;
                }
                break;
            }
            final long residence = namespaceId >= 0 ?
                store.findReady(namespaceId, hashView, 0, hashLength) : Residence.NONE;
            if (!Residence.isDram(residence))
            {
                refused = TransferStatus.MISSING;
                break;
            }
            final int entryId = Residence.entryId(residence);
            if (dram.insertionSequence(entryId) != insertionSequence)
            {
                refused = TransferStatus.STALE_SEQUENCE;
                break;
            }
            if (dram.length(entryId) != expectedBytes)
            {
                refused = TransferStatus.LENGTH_MISMATCH;
                break;
            }
            // design: whole allocations are charged against --transfer-budget, not payload lengths.
            final long charge = dram.allocator().classBytes(dram.sizeClass(entryId));
            if (!holds.fits(pendingCharge, charge))
            {
                refused = TransferStatus.OVER_BUDGET;
                break;
            }
            pendingCharge += charge;
            candidateResidences[valid] = residence;
            candidateSlots[valid] = -1;
            valid++;
        }
        this.refused = refused;
        this.charge = pendingCharge;
        return valid;
    }

    /**
     * @return why the key after the valid run was refused, or NOT_ATTEMPTED when every key is valid.
     */
    TransferStatus refused()
    {
        return refused;
    }

    /**
     * @return what the valid DRAM keys charge against the transfer budget (whole allocations).
     */
    long charge()
    {
        return charge;
    }

    /**
     * @return the residence of valid key {@code i}.
     */
    long residence(final int i)
    {
        return candidateResidences[i];
    }

    /**
     * @return the export staging slot of valid key {@code i}, or -1 for a DRAM key.
     */
    int slot(final int i)
    {
        return candidateSlots[i];
    }

    /**
     * Validate the whole frame before anything is touched, and copy its namespace.
     *
     * @return the number of keys, or -1 when the frame is malformed.
     */
    int checkFrame(final TransferAuthorizeDecoder request)
    {
        try
        {
            final TransferAuthorizeDecoder.KeysDecoder keys = request.keys();
            final int count = keys.count();
            if (count < 1 || count > TransferLimits.MAX_KEYS_PER_AUTHORIZE)
            {
                return -1;
            }
            long sum = 0;
            while (keys.hasNext())
            {
                keys.next();
                final short tier = keys.tierRaw();
                final int expectedBytes = keys.expectedBytes();
                final int hashLength = keys.keyHashLength();
                if ((TransferTier.DRAM.value() != tier && TransferTier.SSD.value() != tier) || expectedBytes <= 0 ||
                    hashLength < 1 || hashLength > StateKey.MAX_HASH_LENGTH)
                {
                    return -1;
                }
                keys.skipKeyHash();
                sum += expectedBytes;
            }
            final int length = request.keyNamespaceLength();
            if (length < 1 || length > StateKey.MAX_NAMESPACE_LENGTH || request.maxBytes() != sum)
            {
                return -1;
            }
            request.getKeyNamespace(namespace, 0, length);
            namespaceLength = length;
            return count;
        }
        catch (final IndexOutOfBoundsException ex)
        {
            // A group count or a length that runs past the frame.
            return -1;
        }
    }

    /**
     * Judge a key named with its SSD residence: the residence must be live with the named episode and length; its
     * bytes are granted from export staging once prepared there. design: SSD residency is not readable memory, so a
     * residence not prepared yet is prepared now and answered PENDING, or BACKPRESSURE without staging credit; an
     * SSD tier or export staging that is absent makes it MISSING (the source never asks another peer).
     *
     * @return OK (candidate {@code valid} filled), PENDING, BACKPRESSURE, MISSING, STALE_SEQUENCE or LENGTH_MISMATCH.
     */
    private TransferStatus checkSsd(
        final int namespaceId, final int hashLength, final long insertionSequence, final int expectedBytes,
        final int valid)
    {
        final long residence = store.findReadySsd(namespaceId, hashView, 0, hashLength);
        if (Residence.isNone(residence) || null == exports)
        {
            return TransferStatus.MISSING;
        }
        if (store.insertionSequence(residence) != insertionSequence)
        {
            return TransferStatus.STALE_SEQUENCE;
        }
        if (store.length(residence) != expectedBytes)
        {
            return TransferStatus.LENGTH_MISMATCH;
        }
        final int slot = exports.find(residence, insertionSequence);
        if (slot >= 0)
        {
            if (SsdExports.READY != exports.state(slot))
            {
                return TransferStatus.PENDING;
            }
            candidateResidences[valid] = residence;
            candidateSlots[valid] = slot;
            return TransferStatus.OK;
        }
        return exports.prepare(residence, insertionSequence, expectedBytes) >= 0 ?
            TransferStatus.PENDING : TransferStatus.BACKPRESSURE;
    }

    /**
     * Start preparing an SSD key behind a PENDING one when it is valid and not prepared yet.
     *
     * @return whether to go on with the keys after it.
     */
    private boolean prepareAhead(
        final int namespaceId, final int hashLength, final long insertionSequence, final int expectedBytes)
    {
        final long residence = store.findReadySsd(namespaceId, hashView, 0, hashLength);
        if (Residence.isNone(residence) || store.insertionSequence(residence) != insertionSequence ||
            store.length(residence) != expectedBytes)
        {
            return false;
        }
        return exports.find(residence, insertionSequence) >= 0 ||
            exports.prepare(residence, insertionSequence, expectedBytes) >= 0;
    }
}
