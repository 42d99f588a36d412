package io.orbitkv.client;

import io.orbitkv.codecs.engine.LookupRequestEncoder;
import io.orbitkv.codecs.engine.MessageHeaderEncoder;
import io.orbitkv.codecs.engine.PublishRequestEncoder;
import io.orbitkv.codecs.engine.ReadRequestEncoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Encodes keys {@code [start, end)} of a {@link KeyBatch} into one request frame (header included). The caller
 * has already checked that the slice fits the buffer. Stateless: the encoders are the caller's.
 */
final class RequestEncoding
{
    private RequestEncoding()
    {
    }

    static int publishChunkEnd(final KeyBatch batch, final int start, final int maxKeys, final int maxBytes)
    {
        final int fixed = MessageHeaderEncoder.ENCODED_LENGTH + PublishRequestEncoder.BLOCK_LENGTH +
            PublishRequestEncoder.BlocksEncoder.sbeHeaderSize() + PublishRequestEncoder.keyNamespaceHeaderLength();
        final int perKey = PublishRequestEncoder.BlocksEncoder.sbeBlockLength() +
            PublishRequestEncoder.BlocksEncoder.hashHeaderLength();
        return chunkEnd(batch, start, maxKeys, maxBytes, fixed + batch.namespaceLength(), perKey);
    }

    static int lookupChunkEnd(final KeyBatch batch, final int start, final int maxKeys, final int maxBytes)
    {
        final int fixed = MessageHeaderEncoder.ENCODED_LENGTH + LookupRequestEncoder.BLOCK_LENGTH +
            LookupRequestEncoder.KeysEncoder.sbeHeaderSize() + LookupRequestEncoder.keyNamespaceHeaderLength();
        final int perKey = LookupRequestEncoder.KeysEncoder.sbeBlockLength() +
            LookupRequestEncoder.KeysEncoder.hashHeaderLength();
        return chunkEnd(batch, start, maxKeys, maxBytes, fixed + batch.namespaceLength(), perKey);
    }

    static int readChunkEnd(final KeyBatch batch, final int start, final int maxKeys, final int maxBytes)
    {
        final int fixed = MessageHeaderEncoder.ENCODED_LENGTH + ReadRequestEncoder.BLOCK_LENGTH +
            ReadRequestEncoder.KeysEncoder.sbeHeaderSize() + ReadRequestEncoder.keyNamespaceHeaderLength();
        final int perKey = ReadRequestEncoder.KeysEncoder.sbeBlockLength() +
            ReadRequestEncoder.KeysEncoder.hashHeaderLength();
        return chunkEnd(batch, start, maxKeys, maxBytes, fixed + batch.namespaceLength(), perKey);
    }

    /**
     * End (exclusive) of the longest slice from {@code start} that fits both the key and the byte limit.
     */
    private static int chunkEnd(
        final KeyBatch batch, final int start, final int maxKeys, final int maxBytes, final int fixedBytes, final int perKeyBytes)
    {
        final int limit = Math.min(batch.keyCount(), start + maxKeys);
        int bytes = fixedBytes;
        int end = start;
        while (end < limit)
        {
            final int keyBytes = perKeyBytes + batch.hashLength(end);
            if (bytes + keyBytes > maxBytes)
            {
                break;
            }
            bytes += keyBytes;
            end++;
        }
        if (end == start)
        {
            throw new IllegalArgumentException("one key does not fit in a request of " + maxBytes + " bytes");
        }
        return end;
    }

    static int publish(
        final PublishRequestEncoder encoder,
        final MessageHeaderEncoder headerEncoder,
        final MutableDirectBuffer buffer,
        final long clientId,
        final long correlationId,
        final KeyBatch batch,
        final int start,
        final int end)
    {
        encoder.wrapAndApplyHeader(buffer, 0, headerEncoder)
            .clientId(clientId)
            .correlationId(correlationId);
        final PublishRequestEncoder.BlocksEncoder blocks = encoder.blocksCount(end - start);
        final DirectBuffer hashes = batch.hashBuffer();
        for (int i = start; i < end; i++)
        {
            blocks.next()
                .offset(batch.offset(i))
                .length(batch.size(i))
                .putHash(hashes, batch.hashOffset(i), batch.hashLength(i));
        }
        encoder.putKeyNamespace(batch.namespaceBuffer(), 0, batch.namespaceLength());
        return MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength();
    }

    static int lookup(
        final LookupRequestEncoder encoder,
        final MessageHeaderEncoder headerEncoder,
        final MutableDirectBuffer buffer,
        final long clientId,
        final long correlationId,
        final KeyBatch batch,
        final int start,
        final int end,
        final boolean pin)
    {
        return lookup(encoder, headerEncoder, buffer, clientId, correlationId, batch, start, end, pin, false);
    }

    static int lookup(
        final LookupRequestEncoder encoder,
        final MessageHeaderEncoder headerEncoder,
        final MutableDirectBuffer buffer,
        final long clientId,
        final long correlationId,
        final KeyBatch batch,
        final int start,
        final int end,
        final boolean pin,
        final boolean peers)
    {
        encoder.wrapAndApplyHeader(buffer, 0, headerEncoder)
            .clientId(clientId)
            .correlationId(correlationId);
        encoder.flags().clear().pin(pin).peers(peers);
        final LookupRequestEncoder.KeysEncoder keys = encoder.keysCount(end - start);
        final DirectBuffer hashes = batch.hashBuffer();
        for (int i = start; i < end; i++)
        {
            keys.next().putHash(hashes, batch.hashOffset(i), batch.hashLength(i));
        }
        encoder.putKeyNamespace(batch.namespaceBuffer(), 0, batch.namespaceLength());
        return MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength();
    }

    static int read(
        final ReadRequestEncoder encoder,
        final MessageHeaderEncoder headerEncoder,
        final MutableDirectBuffer buffer,
        final long clientId,
        final long correlationId,
        final KeyBatch batch,
        final int start,
        final int end,
        final long leaseId)
    {
        encoder.wrapAndApplyHeader(buffer, 0, headerEncoder)
            .clientId(clientId)
            .correlationId(correlationId)
            .leaseId(leaseId);
        final ReadRequestEncoder.KeysEncoder keys = encoder.keysCount(end - start);
        final DirectBuffer hashes = batch.hashBuffer();
        for (int i = start; i < end; i++)
        {
            keys.next()
                .dstOffset(batch.offset(i))
                .dstCapacity(batch.size(i))
                .putHash(hashes, batch.hashOffset(i), batch.hashLength(i));
        }
        encoder.putKeyNamespace(batch.namespaceBuffer(), 0, batch.namespaceLength());
        return MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength();
    }
}
