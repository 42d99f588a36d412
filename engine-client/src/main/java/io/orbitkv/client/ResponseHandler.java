package io.orbitkv.client;

import io.orbitkv.codecs.engine.MessageHeaderDecoder;
import io.orbitkv.codecs.engine.ResponseDecoder;
import io.orbitkv.codecs.engine.StatusCode;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.MessageHandler;

/**
 * Decodes the one Response a client is waiting for; everything else on the ring is stale and dropped. Rows land in
 * the target {@link OperationResult} at {@code keyBase} onwards; peer owners and candidates (schema version 2) are
 * appended to it with key and owner indexes rebased onto the batch and the result. A version-1 answer reads as having
 * no owners and no candidates. The groups are walked in schema order before the message, as SBE requires.
 */
final class ResponseHandler implements MessageHandler
{
    private final MessageHeaderDecoder headerDecoder = new MessageHeaderDecoder();
    private final ResponseDecoder decoder = new ResponseDecoder();
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
        final ResponseDecoder.KeysDecoder keys = decoder.keys();
        final int count = keys.count();
        for (int i = 0; i < count; i++)
        {
            keys.next();
            if (target != null && i < keyCount)
            {
                target.key(keyBase + i, ResponseCodes.keyStatus(keys.statusRaw()), keys.length());
            }
        }
        decodePeers();
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
        final int ownerBase = null == target ? 0 : target.ownerCount();
        final ResponseDecoder.OwnersDecoder owners = decoder.owners();
        final int ownerCount = owners.count();
        for (int i = 0; i < ownerCount; i++)
        {
            owners.next();
            final int slot = null == target ? -1 : target.addOwner(owners.runtimeUuidMsb(), owners.runtimeUuidLsb());
            if (slot < 0)
            {
                owners.skipNodeId();
            }
            else
            {
                target.ownerNodeIdLength(slot, owners.getNodeId(
                    target.ownerNodeIdBytes(), target.ownerNodeIdOffset(slot), target.maxOwnerNodeIdLength()));
            }
        }

        final ResponseDecoder.CandidatesDecoder candidates = decoder.candidates();
        final int candidateCount = candidates.count();
        for (int i = 0; i < candidateCount; i++)
        {
            candidates.next();
            final int keyIndex = candidates.keyIndex();
            final int ownerIndex = candidates.ownerIndex();
            // a candidate naming a row or an owner this answer does not have is not ours to interpret: dropped
            if (null != target && keyIndex < keyCount && ownerIndex < ownerCount && ownerBase + ownerIndex < target.ownerCount())
            {
                target.addCandidate(
                    keyBase + keyIndex,
                    ownerBase + ownerIndex,
                    ResponseCodes.keyStatus(candidates.tierRaw()),
                    candidates.insertionSequence(),
                    candidates.length());
            }
        }
    }
}
