package io.orbitkv.catalog;

import io.orbitkv.codecs.CatalogLimits;
import io.orbitkv.codecs.catalog.CatalogOp;
import io.orbitkv.codecs.catalog.CatalogStatus;
import io.orbitkv.codecs.catalog.ColdQueryDecoder;
import io.orbitkv.codecs.catalog.ColdQueryEncoder;
import io.orbitkv.codecs.catalog.CatalogDeltaBatchDecoder;
import io.orbitkv.codecs.catalog.CatalogDeltaBatchEncoder;
import io.orbitkv.codecs.catalog.MessageHeaderDecoder;
import io.orbitkv.codecs.catalog.MessageHeaderEncoder;
import io.orbitkv.codecs.catalog.ResidenceTier;
import io.orbitkv.index.NamespaceTable;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

class CatalogRequestValidatorTest
{
    private static final long LOCAL_MSB = 11;
    private static final long LOCAL_LSB = 12;
    private static final long FINGERPRINT = 0x5EED_F00DL;
    private static final int SHARD = 3;

    private final CatalogRequestValidator validator = new CatalogRequestValidator(
        LOCAL_MSB, LOCAL_LSB, FINGERPRINT, hosted(SHARD));

    private static boolean[] hosted(final int shard)
    {
        final boolean[] hosted = new boolean[CatalogLimits.SHARD_COUNT];
        hosted[shard] = true;
        return hosted;
    }

    @Test
    void shouldRejectWrongFingerprintAndWrongDestinationEachWithItsOwnCounter()
    {
        assertEquals(CatalogStatus.OK, validator.checkRoute(SHARD, FINGERPRINT, LOCAL_MSB, LOCAL_LSB, true));
        assertEquals(CatalogStatus.WRONG_FINGERPRINT, validator.checkRoute(SHARD, 1, LOCAL_MSB, LOCAL_LSB, true));
        assertEquals(CatalogStatus.WRONG_DESTINATION, validator.checkRoute(SHARD, FINGERPRINT, 99, LOCAL_LSB, true));
        assertEquals(CatalogStatus.WRONG_DESTINATION, validator.checkRoute(4, FINGERPRINT, LOCAL_MSB, LOCAL_LSB, true));
        assertEquals(CatalogStatus.OK, validator.checkRoute(4, FINGERPRINT, LOCAL_MSB, LOCAL_LSB, false));
        assertEquals(CatalogStatus.MALFORMED, validator.checkRoute(16, FINGERPRINT, LOCAL_MSB, LOCAL_LSB, true));
        assertEquals(1, validator.wrongFingerprints());
        assertEquals(2, validator.wrongDestinations());
        assertEquals(1, validator.malformed());
    }

    @Test
    void shouldRejectACrossShardKey()
    {
        final int inShard = Keys.keysOfShard(SHARD, 1)[0];
        final int otherShard = Keys.keysOfShard(SHARD + 1, 1)[0];
        assertEquals(CatalogStatus.OK, validator.checkKey(
            SHARD, Keys.NAMESPACE, 0, Keys.NAMESPACE_BYTES.length, Keys.hash(inShard), 0, Keys.HASH_LENGTH));
        assertEquals(CatalogStatus.CROSS_SHARD_KEY, validator.checkKey(
            SHARD, Keys.NAMESPACE, 0, Keys.NAMESPACE_BYTES.length, Keys.hash(otherShard), 0, Keys.HASH_LENGTH));
        assertEquals(1, validator.crossShardKeys());
    }

    @Test
    void shouldEnforceColdQueryLimitsAtTheirEdges()
    {
        assertEquals(CatalogStatus.OK, validator.checkColdQueryBatch(128, 64 * 1024));
        assertEquals(CatalogStatus.BATCH_TOO_LARGE, validator.checkColdQueryBatch(129, 100));
        assertEquals(CatalogStatus.BATCH_TOO_LARGE, validator.checkColdQueryBatch(1, 64 * 1024 + 1));
        assertEquals(2, validator.batchesTooLarge());
    }

    @Test
    void shouldCarryAColdQueryOfTheMaximumKeysThroughTheSbeCodec()
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[128 * 1024]);
        final ColdQueryEncoder encoder = new ColdQueryEncoder().wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder());
        encoder.route().shard((short)SHARD).placementFingerprint(FINGERPRINT);
        encoder.route().destinationIncarnation().msb(LOCAL_MSB).lsb(LOCAL_LSB);
        encoder.sessionId(5).correlationId(6);
        final ColdQueryEncoder.KeysEncoder keys = encoder.keysCount(CatalogLimits.MAX_COLD_QUERY_KEYS);
        for (int i = 0; i < CatalogLimits.MAX_COLD_QUERY_KEYS; i++)
        {
            keys.next().putKeyNamespace(Keys.NAMESPACE, 0, Keys.NAMESPACE_BYTES.length).putKeyHash(Keys.hash(i), 0, 32);
        }

        final MessageHeaderDecoder header = new MessageHeaderDecoder().wrap(buffer, 0);
        final ColdQueryDecoder decoder = new ColdQueryDecoder().wrap(
            buffer, MessageHeaderDecoder.ENCODED_LENGTH, header.blockLength(), header.version());
        assertEquals(CatalogStatus.OK, validator.checkRoute(decoder.route().shard(), decoder.route().placementFingerprint(),
            decoder.route().destinationIncarnation().msb(), decoder.route().destinationIncarnation().lsb(), true));
        long keyBytes = 0;
        int count = 0;
        for (final ColdQueryDecoder.KeysDecoder key : decoder.keys())
        {
            keyBytes += key.keyNamespaceLength();
            key.skipKeyNamespace();
            keyBytes += key.keyHashLength();
            key.skipKeyHash();
            count++;
        }
        assertEquals(CatalogStatus.OK, validator.checkColdQueryBatch(count, keyBytes));
        assertEquals(6, decoder.correlationId());
    }

    @Test
    void shouldApplyADeltaBatchDecodedFromSbeToAShardReceiver()
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[4096]);
        final CatalogDeltaBatchEncoder encoder =
            new CatalogDeltaBatchEncoder().wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder());
        encoder.route().shard((short)0).placementFingerprint(FINGERPRINT);
        encoder.route().senderIncarnation().msb(1).lsb(2);
        encoder.sessionId(1).firstSequence(1);
        final CatalogDeltaBatchEncoder.RecordsEncoder records = encoder.recordsCount(2);
        for (int i = 0; i < 2; i++)
        {
            records.next().tier(ResidenceTier.DRAM).op(i == 0 ? CatalogOp.ADD : CatalogOp.REMOVE).generation(1)
                .insertionSequence(10).byteSize(4096)
                .putKeyNamespace(Keys.NAMESPACE, 0, Keys.NAMESPACE_BYTES.length).putKeyHash(Keys.hash(1), 0, 32);
        }

        final ShardReceiver receiver = new ShardReceiver(0, 0, new HostBudget(), new NamespaceTable());
        final MessageHeaderDecoder header = new MessageHeaderDecoder().wrap(buffer, 0);
        final CatalogDeltaBatchDecoder decoder = new CatalogDeltaBatchDecoder().wrap(
            buffer, MessageHeaderDecoder.ENCODED_LENGTH, header.blockLength(), header.version());
        final long msb = decoder.route().senderIncarnation().msb();
        final long lsb = decoder.route().senderIncarnation().lsb();
        receiver.admitIncarnation(msb, lsb);
        long sequence = decoder.firstSequence();
        final JournalRecord record = new JournalRecord();
        final UnsafeBuffer namespace = new UnsafeBuffer(new byte[256]);
        final UnsafeBuffer hash = new UnsafeBuffer(new byte[64]);
        for (final CatalogDeltaBatchDecoder.RecordsDecoder r : decoder.records())
        {
            final int tier = r.tier().value();
            final int op = r.op().value();
            final long generation = r.generation();
            final long insertionSequence = r.insertionSequence();
            final int byteSize = (int)r.byteSize();
            final int namespaceLength = r.getKeyNamespace(namespace, 0, 256);
            final int hashLength = r.getKeyHash(hash, 0, 64);
            record.key(namespace, 0, namespaceLength, hash, 0, hashLength)
                .set(sequence++, tier, op, generation, insertionSequence, byteSize);
            assertEquals(ShardReceiver.APPLIED, receiver.onDelta(msb, lsb, record));
        }
        assertEquals(2, receiver.contiguousSequence());
        assertEquals(0, receiver.viewSize());
    }
}
