package io.orbitkv.client;

import io.orbitkv.codecs.engine.CommitRequestEncoder;
import io.orbitkv.codecs.engine.LookupRequestEncoder;
import io.orbitkv.codecs.engine.MessageHeaderEncoder;
import io.orbitkv.codecs.engine.PrepareRequestEncoder;
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
    /** Bytes of a publish request besides its keys and its namespace bytes. */
    private static final int PUBLISH_FIXED_BYTES = MessageHeaderEncoder.ENCODED_LENGTH +
        PublishRequestEncoder.BLOCK_LENGTH + PublishRequestEncoder.BlocksEncoder.sbeHeaderSize() +
        PublishRequestEncoder.keyNamespaceHeaderLength();
    /** Bytes of one publish key besides its hash bytes. */
    private static final int PUBLISH_KEY_BYTES = PublishRequestEncoder.BlocksEncoder.sbeBlockLength() +
        PublishRequestEncoder.BlocksEncoder.hashHeaderLength() + PublishRequestEncoder.BlocksEncoder.parentHashHeaderLength() +
        PublishRequestEncoder.BlocksEncoder.tokenIdsHeaderLength();
    private static final int LOOKUP_FIXED_BYTES = MessageHeaderEncoder.ENCODED_LENGTH +
        LookupRequestEncoder.BLOCK_LENGTH + LookupRequestEncoder.KeysEncoder.sbeHeaderSize() +
        LookupRequestEncoder.keyNamespaceHeaderLength();
    private static final int LOOKUP_KEY_BYTES = LookupRequestEncoder.KeysEncoder.sbeBlockLength() +
        LookupRequestEncoder.KeysEncoder.hashHeaderLength();
    private static final int READ_FIXED_BYTES = MessageHeaderEncoder.ENCODED_LENGTH +
        ReadRequestEncoder.BLOCK_LENGTH + ReadRequestEncoder.KeysEncoder.sbeHeaderSize() +
        ReadRequestEncoder.keyNamespaceHeaderLength();
    private static final int READ_KEY_BYTES = ReadRequestEncoder.KeysEncoder.sbeBlockLength() +
        ReadRequestEncoder.KeysEncoder.hashHeaderLength();

    private static final int PREPARE_FIXED_BYTES = MessageHeaderEncoder.ENCODED_LENGTH +
        PrepareRequestEncoder.BLOCK_LENGTH + PrepareRequestEncoder.BlocksEncoder.sbeHeaderSize() +
        PrepareRequestEncoder.keyNamespaceHeaderLength();
    private static final int PREPARE_KEY_BYTES = PrepareRequestEncoder.BlocksEncoder.sbeBlockLength() +
        PrepareRequestEncoder.BlocksEncoder.hashHeaderLength();
    private static final int COMMIT_FIXED_BYTES = MessageHeaderEncoder.ENCODED_LENGTH +
        CommitRequestEncoder.BLOCK_LENGTH + CommitRequestEncoder.KeysEncoder.sbeHeaderSize() +
        CommitRequestEncoder.keyNamespaceHeaderLength();
    private static final int COMMIT_KEY_BYTES = CommitRequestEncoder.KeysEncoder.sbeBlockLength() +
        CommitRequestEncoder.KeysEncoder.hashHeaderLength();

    private RequestEncoding()
    {
    }

    static int publishChunkEnd(final KeyBatch batch, final int start, final int maxKeys, final int maxBytes)
    {
        return chunkEnd(batch, start, maxKeys, maxBytes, PUBLISH_FIXED_BYTES, PUBLISH_KEY_BYTES, true);
    }

    static int lookupChunkEnd(final KeyBatch batch, final int start, final int maxKeys, final int maxBytes)
    {
        return chunkEnd(batch, start, maxKeys, maxBytes, LOOKUP_FIXED_BYTES, LOOKUP_KEY_BYTES, false);
    }

    static int prepareChunkEnd(final KeyBatch batch, final int start, final int maxKeys, final int maxBytes)
    {
        return chunkEnd(batch, start, maxKeys, maxBytes, PREPARE_FIXED_BYTES, PREPARE_KEY_BYTES, false);
    }

    static int commitChunkEnd(final KeyBatch batch, final int start, final int maxKeys, final int maxBytes)
    {
        return chunkEnd(batch, start, maxKeys, maxBytes, COMMIT_FIXED_BYTES, COMMIT_KEY_BYTES, false);
    }

    static int readChunkEnd(final KeyBatch batch, final int start, final int maxKeys, final int maxBytes)
    {
        return chunkEnd(batch, start, maxKeys, maxBytes, READ_FIXED_BYTES, READ_KEY_BYTES, false);
    }

    /**
     * End (exclusive) of the longest slice from {@code start} that fits both the key and the byte limit; a request
     * takes {@code fixedBytes} plus the namespace, and each key {@code perKeyBytes} plus its hash (and its lineage).
     */
    private static int chunkEnd(
        final KeyBatch batch,
        final int start,
        final int maxKeys,
        final int maxBytes,
        final int fixedBytes,
        final int perKeyBytes,
        final boolean lineage)
    {
        final int limit = Math.min(batch.keyCount(), start + maxKeys);
        int bytes = fixedBytes + batch.namespaceLength();
        int end = start;
        while (end < limit)
        {
            final int keyBytes = perKeyBytes + batch.hashLength(end) +
                (lineage ? batch.parentLength(end) + batch.tokenCount(end) * Integer.BYTES : 0);
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
            // Every entry writes both lineage fields, empty when the key has none: the decoder walks them all.
            blocks.next()
                .offset(batch.offset(i))
                .length(batch.size(i))
                .putHash(hashes, batch.hashOffset(i), batch.hashLength(i))
                .putParentHash(batch.parentBuffer(), batch.parentOffset(i), batch.parentLength(i))
                .putTokenIds(batch.tokenBuffer(), batch.tokenOffset(i), batch.tokenCount(i) * Integer.BYTES);
        }
        encoder.putKeyNamespace(batch.namespaceBuffer(), 0, batch.namespaceLength());
        return MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength();
    }

    /** A Prepare of keys {@code [start, end)}: each key's size is the length of the block to reserve a slot for. */
    static int prepare(
        final PrepareRequestEncoder encoder,
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
        final PrepareRequestEncoder.BlocksEncoder blocks = encoder.blocksCount(end - start);
        final DirectBuffer hashes = batch.hashBuffer();
        for (int i = start; i < end; i++)
        {
            blocks.next().length(batch.size(i)).putHash(hashes, batch.hashOffset(i), batch.hashLength(i));
        }
        encoder.putKeyNamespace(batch.namespaceBuffer(), 0, batch.namespaceLength());
        return MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength();
    }

    static int commit(
        final CommitRequestEncoder encoder,
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
        final CommitRequestEncoder.KeysEncoder keys = encoder.keysCount(end - start);
        final DirectBuffer hashes = batch.hashBuffer();
        for (int i = start; i < end; i++)
        {
            keys.next().putHash(hashes, batch.hashOffset(i), batch.hashLength(i));
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
        final long leaseId,
        final boolean peers)
    {
        encoder.wrapAndApplyHeader(buffer, 0, headerEncoder)
            .clientId(clientId)
            .correlationId(correlationId)
            .leaseId(leaseId);
        encoder.flags().clear().peers(peers);
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
