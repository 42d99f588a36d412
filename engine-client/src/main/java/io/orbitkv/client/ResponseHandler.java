package io.orbitkv.client;

import io.orbitkv.codecs.CandidateTable;
import io.orbitkv.codecs.EngineRingLimits;
import io.orbitkv.codecs.engine.FailureReason;
import io.orbitkv.codecs.engine.MessageHeaderDecoder;
import io.orbitkv.codecs.engine.ResponseDecoder;
import io.orbitkv.codecs.engine.StatusCode;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.MessageHandler;

/**
 * Decodes the one Response a client is waiting for; everything else on the ring is stale and dropped. Rows land in
 * the target {@link OperationResult} at {@code keyBase} onwards; peer owners and candidates (schema version 2) are
 * appended to it with key and owner indexes rebased onto the batch and the result: an owner already named by an
 * earlier answer of the batch (same runtime UUID) keeps its index. A version-1 answer reads as having no owners and
 * no candidates, an answer older than version 3 as having no failure reasons ({@code NONE}). The groups are walked in
 * schema order before the message, as SBE requires.
 */
final class ResponseHandler implements MessageHandler
{
    private final MessageHeaderDecoder headerDecoder = new MessageHeaderDecoder();
    private final ResponseDecoder decoder = new ResponseDecoder();
    /** This answer's owner index to the result's, -1 for an owner not kept; one answer names at most this many. */
    private final int[] ownerSlots = new int[EngineRingLimits.MAX_PEER_OWNERS_PER_LOOKUP];
    private long expectedCorrelationId;
    private OperationResult target;
    private int keyBase;
    private int keyCount;
    boolean received;
    StatusCode code;
    long value;
    long leaseId;

    void expect(final long correlationId, final OperationResult target, final int keyBase, final int keyCount)
    {
        expectedCorrelationId = correlationId;
        this.target = target;
        this.keyBase = keyBase;
        this.keyCount = keyCount;
        received = false;
    }

    public void onMessage(final int msgTypeId, final MutableDirectBuffer buffer, final int index, final int length)
    {
        if (received || length < MessageHeaderDecoder.ENCODED_LENGTH)
        {
            return;
        }
        headerDecoder.wrap(buffer, index);
        if (headerDecoder.schemaId() != ResponseDecoder.SCHEMA_ID ||
            headerDecoder.templateId() != ResponseDecoder.TEMPLATE_ID)
        {
            return;
        }
        decoder.wrapAndApplyHeader(buffer, index, headerDecoder);
        if (decoder.correlationId() != expectedCorrelationId)
        {
            return;
        }
        received = true;
        code = ResponseCodes.statusCode(decoder.codeRaw());
        value = decoder.value();
        leaseId = decoder.leaseId();
        final boolean hasReasons = decoder.actingVersion() >= ResponseDecoder.KeysDecoder.reasonSinceVersion();
        final ResponseDecoder.KeysDecoder keys = decoder.keys();
        final int count = keys.count();
        for (int i = 0; i < count; i++)
        {
            keys.next();
            if (target != null && i < keyCount)
            {
                final FailureReason reason = hasReasons ? ResponseCodes.failureReason(keys.reasonRaw()) : FailureReason.NONE;
                target.key(keyBase + i, ResponseCodes.keyStatus(keys.statusRaw()), keys.length(), reason);
            }
        }
        decodePeers();
        final ResponseDecoder.SlotsDecoder slots = decoder.slots();
        final int slotCount = slots.count();
        for (int i = 0; i < slotCount; i++)
        {
            slots.next();
            if (target != null && i < keyCount)
            {
                target.poolOffset(keyBase + i, slots.poolOffset());
            }
        }
        if (target != null && code != StatusCode.OK)
        {
            target.failed(code);
            target.messageLength(decoder.getMessage(target.messageBytes(), 0, target.messageBytes().length));
        }
        else if (target != null && keyCount == 0)
        {
            // attach: the message carries the data region path
            target.messageLength(decoder.getMessage(target.messageBytes(), 0, target.messageBytes().length));
        }
    }

    private void decodePeers()
    {
        final ResponseDecoder.OwnersDecoder owners = decoder.owners();
        final int ownerCount = owners.count();
        for (int i = 0; i < ownerCount; i++)
        {
            owners.next();
            if (null == target || i >= ownerSlots.length)
            {
                owners.skipNodeId();
            }
            else
            {
                ownerSlots[i] = ownerSlot(owners);
            }
        }

        final ResponseDecoder.CandidatesDecoder candidates = decoder.candidates();
        final int candidateCount = candidates.count();
        for (int i = 0; i < candidateCount; i++)
        {
            candidates.next();
            if (null == target)
            {
                continue;
            }
            final int keyIndex = candidates.keyIndex();
            final int ownerIndex = candidates.ownerIndex();
            final int owner = ownerIndex < ownerCount && ownerIndex < ownerSlots.length ? ownerSlots[ownerIndex] : -1;
            // a candidate naming a row or an owner this answer does not have (or we did not keep) is dropped, counted
            if (keyIndex < keyCount && owner >= 0)
            {
                target.candidates().addCandidate(
                    keyBase + keyIndex,
                    owner,
                    ResponseCodes.keyStatus(candidates.tierRaw()),
                    candidates.insertionSequence(),
                    candidates.length());
            }
            else
            {
                target.candidates().candidateDropped();
            }
        }
    }

    /**
     * The result's index for the owner the decoder is on, adding it when new; -1 when the result is full. Consumes
     * the entry's node id either way.
     */
    private int ownerSlot(final ResponseDecoder.OwnersDecoder owners)
    {
        final long msb = owners.runtimeUuidMsb();
        final long lsb = owners.runtimeUuidLsb();
        final CandidateTable table = target.candidates();
        final int known = table.findOwner(msb, lsb);
        if (known >= 0)
        {
            owners.skipNodeId();
            return known;
        }
        final int slot = table.addOwner(msb, lsb);
        if (slot < 0)
        {
            owners.skipNodeId();
        }
        else
        {
            table.ownerNodeIdLength(slot, owners.getNodeId(
                table.ownerNodeIdBytes(), CandidateTable.ownerNodeIdOffset(slot), EngineRingLimits.MAX_NODE_ID_LENGTH));
        }
        return slot;
    }
}
