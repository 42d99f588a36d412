package io.orbitkv.bench;

import io.orbitkv.codecs.engine.KeyStatus;
import io.orbitkv.codecs.engine.LookupRequestEncoder;
import io.orbitkv.codecs.engine.MessageHeaderEncoder;
import io.orbitkv.codecs.engine.ResponseEncoder;
import io.orbitkv.codecs.engine.StatusCode;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The ring frame sizes of a Lookup and of its answer, encoded with the engine ring's own codecs, so that the bare-ring
 * anchor of a many-key Lookup moves as many bytes each way as the Lookup does.
 *
 * @param requestBytes the Lookup request frame: header, fixed block, one hash per key, namespace.
 * @param replyBytes   its answer: header, fixed block, one row per key, no peer owners or candidates, no message.
 */
record LookupFrames(int requestBytes, int replyBytes)
{
    /**
     * @param keys       keys of the Lookup.
     * @param hashBytes  bytes of each key's hash.
     * @param namespace  the namespace bytes.
     * @return the two frame sizes.
     */
    static LookupFrames of(final int keys, final int hashBytes, final byte[] namespace)
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[64 * 1024]);
        final MessageHeaderEncoder header = new MessageHeaderEncoder();
        final LookupRequestEncoder request = new LookupRequestEncoder().wrapAndApplyHeader(buffer, 0, header);
        request.clientId(1).correlationId(1);
        final LookupRequestEncoder.KeysEncoder rows = request.keysCount(keys);
        final byte[] hash = new byte[hashBytes];
        for (int k = 0; k < keys; k++)
        {
            rows.next().putHash(hash, 0, hash.length);
        }
        request.putKeyNamespace(namespace, 0, namespace.length);
        final int requestBytes = MessageHeaderEncoder.ENCODED_LENGTH + request.encodedLength();

        final ResponseEncoder response = new ResponseEncoder().wrapAndApplyHeader(buffer, 0, header);
        response.clientId(1).correlationId(1).requestTemplateId(LookupRequestEncoder.TEMPLATE_ID).code(StatusCode.OK)
            .value(keys).leaseId(0);
        final ResponseEncoder.KeysEncoder answers = response.keysCount(keys);
        for (int k = 0; k < keys; k++)
        {
            answers.next().status(KeyStatus.DRAM).length(4096);
        }
        response.ownersCount(0);
        response.candidatesCount(0);
        response.message("");
        return new LookupFrames(requestBytes, MessageHeaderEncoder.ENCODED_LENGTH + response.encodedLength());
    }
}
