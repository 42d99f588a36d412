package io.orbitkv.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.orbitkv.codecs.EngineRingLimits;
import io.orbitkv.codecs.engine.LookupRequestDecoder;
import io.orbitkv.codecs.engine.LookupRequestEncoder;
import io.orbitkv.codecs.engine.MessageHeaderDecoder;
import io.orbitkv.codecs.engine.MessageHeaderEncoder;
import io.orbitkv.codecs.engine.PublishRequestDecoder;
import io.orbitkv.codecs.engine.PublishRequestEncoder;
import io.orbitkv.codecs.engine.ReadRequestDecoder;
import io.orbitkv.codecs.engine.ReadRequestEncoder;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

class RequestEncodingTest
{
    private static final byte[] NAMESPACE = "model-a/tp1/fp16".getBytes(StandardCharsets.US_ASCII);

    private final UnsafeBuffer buffer = new UnsafeBuffer(new byte[EngineRingLimits.MAX_REQUEST_BYTES]);
    private final MessageHeaderEncoder headerEncoder = new MessageHeaderEncoder();
    private final MessageHeaderDecoder headerDecoder = new MessageHeaderDecoder();

    private static KeyBatch batch(final int keys, final int hashLength)
    {
        final KeyBatch batch = new KeyBatch(keys).namespace(NAMESPACE);
        final byte[] hash = new byte[hashLength];
        for (int i = 0; i < keys; i++)
        {
            hash[0] = (byte)i;
            hash[hashLength - 1] = (byte)(i >> 8);
            batch.addKey(hash, 0, hashLength, i * 4096L, 1000 + i);
        }
        return batch;
    }

    @Test
    void shouldEncodePublishThatTheGeneratedDecoderReadsBack()
    {
        final KeyBatch batch = new KeyBatch(10, 4).namespace(NAMESPACE);
        final byte[] keyHash = new byte[32];
        for (int i = 0; i < 10; i++)
        {
            keyHash[0] = (byte)i;
            batch.addKey(keyHash, 0, keyHash.length, i * 4096L, 1000 + i);
        }
        final byte[] parent = {9, 8, 7};
        batch.lineage(5, new UnsafeBuffer(parent), 0, parent.length, new int[]{0, 11, -1, 300}, 1, 3);
        final int length = RequestEncoding.publish(
            new PublishRequestEncoder(), headerEncoder, buffer, 42L, 7L, batch, 3, 8);

        headerDecoder.wrap(buffer, 0);
        assertEquals(PublishRequestDecoder.TEMPLATE_ID, headerDecoder.templateId());
        assertEquals(PublishRequestDecoder.SCHEMA_ID, headerDecoder.schemaId());
        final PublishRequestDecoder decoder = new PublishRequestDecoder().wrapAndApplyHeader(buffer, 0, headerDecoder);
        assertEquals(42L, decoder.clientId());
        assertEquals(7L, decoder.correlationId());
        final PublishRequestDecoder.BlocksDecoder blocks = decoder.blocks();
        assertEquals(5, blocks.count());
        final byte[] hash = new byte[64];
        for (int i = 3; i < 8; i++)
        {
            blocks.next();
            assertEquals(i * 4096L, blocks.offset());
            assertEquals(1000 + i, blocks.length());
            assertEquals(32, blocks.getHash(hash, 0, hash.length));
            assertEquals((byte)i, hash[0]);
            final byte[] parentHash = new byte[blocks.parentHashLength()];
            blocks.getParentHash(parentHash, 0, parentHash.length);
            final UnsafeBuffer tokens = new UnsafeBuffer(new byte[blocks.tokenIdsLength()]);
            blocks.getTokenIds(tokens, 0, tokens.capacity());
            if (5 == i)
            {
                assertArrayEquals(parent, parentHash);
                assertEquals(12, tokens.capacity());
                assertEquals(11, tokens.getInt(0, ByteOrder.LITTLE_ENDIAN));
                assertEquals(-1, tokens.getInt(4, ByteOrder.LITTLE_ENDIAN));
                assertEquals(300, tokens.getInt(8, ByteOrder.LITTLE_ENDIAN));
            }
            else
            {
                assertEquals(0, parentHash.length, "a key without lineage sends it empty");
                assertEquals(0, tokens.capacity());
            }
        }
        final byte[] ns = new byte[decoder.keyNamespaceLength()];
        decoder.getKeyNamespace(ns, 0, ns.length);
        assertArrayEquals(NAMESPACE, ns);
        assertEquals(length, MessageHeaderDecoder.ENCODED_LENGTH + decoder.encodedLength());
    }

    @Test
    void shouldEncodeLookupWithPinFlag()
    {
        final KeyBatch batch = batch(3, 64);
        final int length = RequestEncoding.lookup(
            new LookupRequestEncoder(), headerEncoder, buffer, 1L, 2L, batch, 0, 3, true, false);
        headerDecoder.wrap(buffer, 0);
        final LookupRequestDecoder decoder = new LookupRequestDecoder().wrapAndApplyHeader(buffer, 0, headerDecoder);
        assertTrue(decoder.flags().pin());
        final LookupRequestDecoder.KeysDecoder keys = decoder.keys();
        assertEquals(3, keys.count());
        for (int i = 0; i < 3; i++)
        {
            keys.next();
            assertEquals(64, keys.hashLength());
            keys.skipHash();
        }
        assertEquals(NAMESPACE.length, decoder.keyNamespaceLength());
        decoder.skipKeyNamespace();
        assertEquals(length, MessageHeaderDecoder.ENCODED_LENGTH + decoder.encodedLength());

        RequestEncoding.lookup(new LookupRequestEncoder(), headerEncoder, buffer, 1L, 3L, batch, 0, 3, false, false);
        assertFalse(new LookupRequestDecoder().wrapAndApplyHeader(buffer, 0, headerDecoder.wrap(buffer, 0)).flags().pin());
    }

    @Test
    void shouldEncodeReadWithLeaseAndDestinations()
    {
        final KeyBatch batch = batch(4, 16);
        RequestEncoding.read(new ReadRequestEncoder(), headerEncoder, buffer, 5L, 6L, batch, 1, 4, 99L, false);
        headerDecoder.wrap(buffer, 0);
        final ReadRequestDecoder decoder = new ReadRequestDecoder().wrapAndApplyHeader(buffer, 0, headerDecoder);
        assertEquals(99L, decoder.leaseId());
        final ReadRequestDecoder.KeysDecoder keys = decoder.keys();
        assertEquals(3, keys.count());
        for (int i = 1; i < 4; i++)
        {
            keys.next();
            assertEquals(i * 4096L, keys.dstOffset());
            assertEquals(1000 + i, keys.dstCapacity());
            keys.skipHash();
        }
    }

    @Test
    void shouldEncodeReadWithThePeersFlag()
    {
        final KeyBatch batch = batch(4, 16);
        final int length = RequestEncoding.read(
            new ReadRequestEncoder(), headerEncoder, buffer, 5L, 6L, batch, 0, 4, 0L, true);
        headerDecoder.wrap(buffer, 0);
        assertEquals(ReadRequestEncoder.SCHEMA_VERSION, headerDecoder.version());
        assertEquals(ReadRequestEncoder.BLOCK_LENGTH, headerDecoder.blockLength());
        final ReadRequestDecoder decoder = new ReadRequestDecoder().wrapAndApplyHeader(buffer, 0, headerDecoder);
        assertTrue(decoder.flags().peers());
        assertEquals(1, decoder.flags().getRaw(), "no other bit set");
        final ReadRequestDecoder.KeysDecoder keys = decoder.keys();
        assertEquals(4, keys.count());
        for (int i = 0; i < 4; i++)
        {
            keys.next();
            assertEquals(i * 4096L, keys.dstOffset());
            keys.skipHash();
        }
        decoder.skipKeyNamespace();
        assertEquals(length, MessageHeaderDecoder.ENCODED_LENGTH + decoder.encodedLength());

        // a read without the flag, on a buffer the flagged read left dirty, clears it
        RequestEncoding.read(new ReadRequestEncoder(), headerEncoder, buffer, 5L, 7L, batch, 0, 4, 0L, false);
        final ReadRequestDecoder plain = new ReadRequestDecoder().wrapAndApplyHeader(buffer, 0, headerDecoder.wrap(buffer, 0));
        assertEquals(7L, plain.correlationId());
        assertFalse(plain.flags().peers());
        assertEquals(0, plain.flags().getRaw());
    }

    @Test
    void shouldSplitLongChainsAtTheKeyLimit()
    {
        final int keys = 2 * EngineRingLimits.MAX_KEYS_PER_REQUEST + 276;
        final KeyBatch batch = batch(keys, 32);
        final int first = RequestEncoding.lookupChunkEnd(
            batch, 0, EngineRingLimits.MAX_KEYS_PER_REQUEST, EngineRingLimits.MAX_REQUEST_BYTES);
        final int second = RequestEncoding.lookupChunkEnd(
            batch, first, EngineRingLimits.MAX_KEYS_PER_REQUEST, EngineRingLimits.MAX_REQUEST_BYTES);
        final int third = RequestEncoding.lookupChunkEnd(
            batch, second, EngineRingLimits.MAX_KEYS_PER_REQUEST, EngineRingLimits.MAX_REQUEST_BYTES);
        assertEquals(EngineRingLimits.MAX_KEYS_PER_REQUEST, first);
        assertEquals(2 * EngineRingLimits.MAX_KEYS_PER_REQUEST, second);
        assertEquals(keys, third);
    }

    @Test
    void shouldKeepWorstCaseFullRequestsUnderTheFrameLimit()
    {
        final KeyBatch batch = new KeyBatch(EngineRingLimits.MAX_KEYS_PER_REQUEST)
            .namespace(new byte[EngineRingLimits.MAX_NAMESPACE_LENGTH]);
        final byte[] hash = new byte[EngineRingLimits.MAX_HASH_LENGTH];
        for (int i = 0; i < EngineRingLimits.MAX_KEYS_PER_REQUEST; i++)
        {
            batch.addKey(hash, 0, hash.length, 0, 1);
        }
        assertEquals(EngineRingLimits.MAX_KEYS_PER_REQUEST, RequestEncoding.publishChunkEnd(
            batch, 0, EngineRingLimits.MAX_KEYS_PER_REQUEST, EngineRingLimits.MAX_REQUEST_BYTES));
        final int length = RequestEncoding.publish(
            new PublishRequestEncoder(), headerEncoder, buffer, 1, 1, batch, 0, EngineRingLimits.MAX_KEYS_PER_REQUEST);
        assertTrue(length <= EngineRingLimits.MAX_REQUEST_BYTES, "frame " + length);
    }

    @Test
    void shouldSplitByBytesWhenTheManagerAllowsSmallerFrames()
    {
        final KeyBatch batch = batch(100, 64);
        final int maxBytes = 2048;
        int start = 0;
        while (start < batch.keyCount())
        {
            final int end = RequestEncoding.readChunkEnd(batch, start, EngineRingLimits.MAX_KEYS_PER_REQUEST, maxBytes);
            final int length = RequestEncoding.read(
                new ReadRequestEncoder(), headerEncoder, buffer, 1, 1, batch, start, end, 0, false);
            assertTrue(length <= maxBytes, "frame " + length);
            assertTrue(end > start);
            start = end;
        }
    }
}
