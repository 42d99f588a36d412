package io.orbitkv.catalog;

import java.util.Arrays;
import java.util.Random;

import io.orbitkv.codecs.CatalogLimits;
import io.orbitkv.codecs.catalog.CatalogResponseDecoder;
import io.orbitkv.codecs.catalog.CatalogStatus;
import io.orbitkv.codecs.catalog.ColdQueryEncoder;
import io.orbitkv.codecs.catalog.ColdQueryResponseDecoder;
import io.orbitkv.codecs.catalog.Coverage;
import io.orbitkv.codecs.catalog.MessageHeaderDecoder;
import io.orbitkv.codecs.catalog.MessageHeaderEncoder;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import static io.orbitkv.catalog.JournalRecord.OP_ADD;
import static io.orbitkv.catalog.JournalRecord.TIER_DRAM;
import static io.orbitkv.catalog.JournalRecord.TIER_SSD;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ColdQueryHandlerTest
{
    private static final long LOCAL_MSB = 1;
    private static final long LOCAL_LSB = 2;
    private static final long FINGERPRINT = 77;
    private static final long OWNER_A_MSB = 10;
    private static final long OWNER_B_MSB = 20;

    private final boolean[] hosted = new boolean[CatalogLimits.SHARD_COUNT];
    private final UnsafeBuffer request = new UnsafeBuffer(new byte[128 * 1024]);
    private final UnsafeBuffer reply = new UnsafeBuffer(new byte[128 * 1024]);
    private final MessageHeaderDecoder header = new MessageHeaderDecoder();
    private CatalogDirectory directory;
    private ColdQueryHandler handler;
    private CatalogRequestValidator validator;

    private void hostAllBut(final int notHosted)
    {
        Arrays.fill(hosted, true);
        if (notHosted >= 0)
        {
            hosted[notHosted] = false;
        }
        directory = new CatalogDirectory(hosted, new HostBudget());
        validator = new CatalogRequestValidator(LOCAL_MSB, LOCAL_LSB, FINGERPRINT, hosted);
        handler = new ColdQueryHandler(validator, directory, LOCAL_MSB, LOCAL_LSB);
    }

    private int encodeQuery(final long fingerprint, final int... keys)
    {
        final int[] claims = new int[keys.length];
        for (int i = 0; i < keys.length; i++)
        {
            claims[i] = Keys.shardOf(keys[i]);
        }
        return encodeQuery(fingerprint, claims, keys);
    }

    private int encodeQuery(final long fingerprint, final int[] claims, final int... keys)
    {
        final ColdQueryEncoder encoder = new ColdQueryEncoder().wrapAndApplyHeader(request, 0, new MessageHeaderEncoder());
        encoder.route().shard((short)0).placementFingerprint(fingerprint);
        encoder.route().destinationIncarnation().msb(LOCAL_MSB).lsb(LOCAL_LSB);
        encoder.route().senderIncarnation().msb(99).lsb(98);
        encoder.sessionId(3).correlationId(42);
        final ColdQueryEncoder.KeysEncoder group = encoder.keysCount(keys.length);
        for (int i = 0; i < keys.length; i++)
        {
            group.next().shard((short)claims[i]).putKeyNamespace(Keys.NAMESPACE, 0, Keys.NAMESPACE_BYTES.length)
                .putKeyHash(Keys.hash(keys[i]), 0, Keys.HASH_LENGTH);
        }
        return MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength();
    }

    private CatalogStatus statusOf(final int replyLength)
    {
        header.wrap(reply, 0);
        assertTrue(replyLength > MessageHeaderDecoder.ENCODED_LENGTH);
        if (header.templateId() == ColdQueryResponseDecoder.TEMPLATE_ID)
        {
            return CatalogStatus.OK;
        }
        assertEquals(CatalogResponseDecoder.TEMPLATE_ID, header.templateId());
        return new CatalogResponseDecoder().wrap(reply, MessageHeaderDecoder.ENCODED_LENGTH, header.blockLength(),
            header.version()).code();
    }

    private void publish(final int owner, final long msb, final int key, final long sequence, final int tier)
    {
        directory.addOwner(owner);
        final ShardReceiver receiver = directory.receiver(owner, Keys.shardOf(key));
        receiver.admitIncarnation(msb, 0);
        assertEquals(ShardReceiver.APPLIED, receiver.onDelta(msb, 0, Keys.record(key, sequence, tier, OP_ADD, sequence)));
    }

    private int candidatesOfFirstRow()
    {
        final ColdQueryResponseDecoder response = new ColdQueryResponseDecoder().wrap(
            reply, MessageHeaderDecoder.ENCODED_LENGTH, header.blockLength(), header.version());
        return response.rows().next().candidates().count();
    }

    @Test
    void shouldTrustTheRequestersShardOnlyWhereThatShardsViewHoldsTheKey()
    {
        hostAllBut(5);
        final int key = Keys.keysOfShard(4, 1)[0];
        final int foreign = Keys.keysOfShard(5, 1)[0];
        publish(1, OWNER_A_MSB, key, 1, TIER_DRAM);

        assertEquals(CatalogStatus.OK, statusOf(handler.onFrame(request, 0, encodeQuery(FINGERPRINT, key), reply, 0)));
        assertEquals(CatalogStatus.OK, handler.lastStatus());
        assertEquals(1, candidatesOfFirstRow());
        assertEquals(0, handler.claimsCorrected());

        // A wrong but hosted shard: its views do not hold the key, so the key is hashed and answered from shard 4.
        assertEquals(CatalogStatus.OK,
            statusOf(handler.onFrame(request, 0, encodeQuery(FINGERPRINT, new int[]{ 6 }, key), reply, 0)));
        assertEquals(1, candidatesOfFirstRow());
        assertEquals(1, handler.claimsCorrected());

        // A key of a shard this host does not hold, claimed as a hosted one: refused like an unclaimed one.
        assertEquals(CatalogStatus.WRONG_DESTINATION,
            statusOf(handler.onFrame(request, 0, encodeQuery(FINGERPRINT, new int[]{ 4 }, foreign), reply, 0)));
        assertEquals(2, handler.claimsCorrected());
        assertEquals(1, handler.rejected());

        // No claim (255, an older sender) or an out-of-range one: hashed up front.
        assertEquals(CatalogStatus.OK,
            statusOf(handler.onFrame(request, 0, encodeQuery(FINGERPRINT, new int[]{ 255 }, key), reply, 0)));
        assertEquals(1, candidatesOfFirstRow());
        assertEquals(CatalogStatus.WRONG_DESTINATION,
            statusOf(handler.onFrame(request, 0, encodeQuery(FINGERPRINT, new int[]{ 16 }, foreign), reply, 0)));
        assertEquals(2, handler.claimsCorrected());
    }

    @Test
    void shouldAnswerOneRowPerKeyInRequestOrderWithCandidatesAndCoverage()
    {
        hostAllBut(-1);
        final int[] keys = Keys.keysOfShard(4, 3);
        publish(1, OWNER_A_MSB, keys[0], 1, TIER_DRAM);
        publish(1, OWNER_A_MSB, keys[2], 2, TIER_DRAM);
        publish(2, OWNER_B_MSB, keys[0], 1, TIER_SSD);
        final int length = handler.onFrame(request, 0, encodeQuery(FINGERPRINT, keys[0], keys[1], keys[2]), reply, 0);
        assertEquals(CatalogStatus.OK, statusOf(length));
        final ColdQueryResponseDecoder response = new ColdQueryResponseDecoder().wrap(
            reply, MessageHeaderDecoder.ENCODED_LENGTH, header.blockLength(), header.version());
        assertEquals(42, response.correlationId());
        assertEquals(99, response.route().destinationIncarnation().msb());
        final int[] counts = new int[3];
        int row = 0;
        for (final ColdQueryResponseDecoder.RowsDecoder rows : response.rows())
        {
            assertEquals(row, rows.rowIndex());
            assertEquals(Coverage.COMPLETE, rows.coverage());
            for (final ColdQueryResponseDecoder.RowsDecoder.CandidatesDecoder candidate : rows.candidates())
            {
                counts[row]++;
                assertTrue(candidate.generation() > 0);
                assertTrue(candidate.ownerIncarnation().msb() == OWNER_A_MSB ||
                    candidate.ownerIncarnation().msb() == OWNER_B_MSB);
            }
            row++;
        }
        assertEquals(3, row);
        assertEquals(2, counts[0]);
        assertEquals(0, counts[1]);
        assertEquals(1, counts[2]);
        assertEquals(3, handler.rowsServed());
    }

    @Test
    void shouldMarkRowsIncompleteWhileAnOwnerHasNoBaseline()
    {
        hostAllBut(-1);
        final int[] keys = Keys.keysOfShard(2, 1);
        directory.addOwner(5);
        directory.receiver(5, 2).admitIncarnation(55, 56);
        handler.onFrame(request, 0, encodeQuery(FINGERPRINT, keys[0]), reply, 0);
        final ColdQueryResponseDecoder response = new ColdQueryResponseDecoder().wrap(
            reply, MessageHeaderDecoder.ENCODED_LENGTH, new MessageHeaderDecoder().wrap(reply, 0).blockLength(), 1);
        assertEquals(Coverage.INCOMPLETE, response.rows().next().coverage());
        assertEquals(1, handler.incompleteRows());

        // Once the member view drops the owner it has nothing left to cover.
        directory.receiver(5, 2).dropMember();
        handler.onFrame(request, 0, encodeQuery(FINGERPRINT, keys[0]), reply, 0);
        final ColdQueryResponseDecoder after = new ColdQueryResponseDecoder().wrap(
            reply, MessageHeaderDecoder.ENCODED_LENGTH, new MessageHeaderDecoder().wrap(reply, 0).blockLength(), 1);
        assertEquals(Coverage.COMPLETE, after.rows().next().coverage());
    }

    @Test
    void shouldRejectAWrongFingerprintAndAKeyOfAShardNotHostedHere()
    {
        final int[] keys = Keys.keysOfShard(6, 1);
        hostAllBut(6);
        assertEquals(CatalogStatus.WRONG_FINGERPRINT, statusOf(handler.onFrame(request, 0, encodeQuery(5, 1), reply, 0)));
        assertEquals(CatalogStatus.WRONG_FINGERPRINT, handler.lastStatus(), "the status a caller counts, undecoded");
        assertEquals(CatalogStatus.WRONG_DESTINATION,
            statusOf(handler.onFrame(request, 0, encodeQuery(FINGERPRINT, keys[0]), reply, 0)));
        assertEquals(CatalogStatus.WRONG_DESTINATION, handler.lastStatus());
        assertEquals(1, validator.wrongFingerprints());
        assertEquals(1, validator.wrongDestinations());
        assertEquals(2, handler.rejected());
    }

    @Test
    void shouldAcceptExactly128KeysAndRejectOneMore()
    {
        hostAllBut(-1);
        final int[] keys = new int[CatalogLimits.MAX_COLD_QUERY_KEYS + 1];
        for (int i = 0; i < keys.length; i++)
        {
            keys[i] = i;
        }
        final int[] max = Arrays.copyOf(keys, CatalogLimits.MAX_COLD_QUERY_KEYS);
        assertEquals(CatalogStatus.OK, statusOf(handler.onFrame(request, 0, encodeQuery(FINGERPRINT, max), reply, 0)));
        assertEquals(CatalogStatus.BATCH_TOO_LARGE,
            statusOf(handler.onFrame(request, 0, encodeQuery(FINGERPRINT, keys), reply, 0)));
        assertEquals(1, validator.batchesTooLarge());
    }

    @Test
    void shouldAnswerFuzzedFramesWithoutThrowing()
    {
        hostAllBut(-1);
        final Random random = new Random(42);
        final byte[] noise = new byte[4096];
        long answered = 0;
        for (int i = 0; i < 2_000; i++)
        {
            random.nextBytes(noise);
            final UnsafeBuffer frame = new UnsafeBuffer(noise);
            if (0 == (i & 1))
            {
                // Valid header, random body: exercises the decoder rather than the header check.
                new MessageHeaderEncoder().wrap(frame, 0).blockLength(random.nextInt(80)).templateId(
                    ColdQueryEncoder.TEMPLATE_ID).schemaId(ColdQueryEncoder.SCHEMA_ID).version(1);
            }
            final int length = random.nextInt(noise.length + 1);
            assertTrue(handler.onFrame(frame, 0, length, reply, 0) > 0);
            answered++;
        }
        final int valid = encodeQuery(FINGERPRINT, 1, 2, 3);
        for (int length = 0; length < valid; length++)
        {
            assertEquals(CatalogStatus.MALFORMED, statusOf(handler.onFrame(request, 0, length, reply, 0)));
            answered++;
        }
        // A huge group count in an otherwise valid frame.
        request.putShort(MessageHeaderEncoder.ENCODED_LENGTH + ColdQueryEncoder.BLOCK_LENGTH + 2, (short)0xFFFF);
        assertEquals(CatalogStatus.BATCH_TOO_LARGE, statusOf(handler.onFrame(request, 0, valid, reply, 0)));
        request.putShort(MessageHeaderEncoder.ENCODED_LENGTH + ColdQueryEncoder.BLOCK_LENGTH + 2, (short)100);
        assertEquals(CatalogStatus.MALFORMED, statusOf(handler.onFrame(request, 0, valid, reply, 0)));
        assertEquals(2_000 + valid, answered);
        assertTrue(handler.malformedFrames() + handler.unknownTemplates() + handler.schemaMismatches() > 1_000);
    }
}
