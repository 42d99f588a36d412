package io.orbitkv.manager.peer;

import io.aeron.ExclusivePublication;
import io.aeron.Publication;
import io.orbitkv.catalog.JournalReader;
import io.orbitkv.catalog.JournalRecord;
import io.orbitkv.catalog.OwnerJournal;
import io.orbitkv.codecs.StateKey;
import io.orbitkv.codecs.catalog.CatalogAckEncoder;
import io.orbitkv.codecs.catalog.CatalogDeltaBatchEncoder;
import io.orbitkv.codecs.catalog.CatalogOp;
import io.orbitkv.codecs.catalog.CatalogResponseEncoder;
import io.orbitkv.codecs.catalog.CatalogStatus;
import io.orbitkv.codecs.catalog.ColdQueryEncoder;
import io.orbitkv.codecs.catalog.GapRepairRequestEncoder;
import io.orbitkv.codecs.catalog.MessageHeaderEncoder;
import io.orbitkv.codecs.catalog.PeerConnectEncoder;
import io.orbitkv.codecs.catalog.ResidenceTier;
import io.orbitkv.codecs.catalog.RouteEncoder;
import io.orbitkv.codecs.transfer.TransferGrantEncoder;
import io.orbitkv.codecs.transfer.TransferReleaseAckEncoder;
import io.orbitkv.codecs.transfer.TransferRouteEncoder;
import io.orbitkv.codecs.transfer.TransferStatus;
import org.agrona.BufferUtil;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Encodes catalog messages with reusable encoders into one preallocated buffer and offers them with a bounded retry:
 * a back-pressured or admin-action offer is counted and retried at most {@link #MAX_OFFER_ATTEMPTS} times; a
 * publication that is not connected or closed fails at once. A failed offer is never fatal: the protocol recovers by
 * gap repair, session reconnect or the requester's query budget. Single threaded (the peer agent); allocation free.
 */
final class PeerProxy
{
    /**
     * Bound on offer attempts per message (design: back-pressure is counted, never waited out on the agent).
     */
    static final int MAX_OFFER_ATTEMPTS = 3;

    /**
     * Records per delta batch or snapshot page an owner sends; a host accepts up to
     * {@link io.orbitkv.catalog.SnapshotCut#DEFAULT_MAX_INTERVAL_RECORDS} in a SnapshotEnd interval.
     */
    static final int MAX_DELTA_BATCH_RECORDS = 256;

    /**
     * Encoded bytes of the largest possible delta record: fixed fields, then 256 namespace and 64 hash bytes with
     * their length prefixes.
     */
    static final int MAX_RECORD_ENCODED_BYTES = CatalogDeltaBatchEncoder.RecordsEncoder.sbeBlockLength() +
        CatalogDeltaBatchEncoder.RecordsEncoder.keyNamespaceHeaderLength() + StateKey.MAX_NAMESPACE_LENGTH +
        CatalogDeltaBatchEncoder.RecordsEncoder.keyHashHeaderLength() + StateKey.MAX_HASH_LENGTH;

    private static final int BATCH_OVERHEAD_BYTES = MessageHeaderEncoder.ENCODED_LENGTH +
        CatalogDeltaBatchEncoder.BLOCK_LENGTH + CatalogDeltaBatchEncoder.RecordsEncoder.sbeHeaderSize();

    private long localIncarnationMsb;
    private long localIncarnationLsb;
    private final long placementFingerprint;
    private final PeerCounters counters;
    private final int maxBatchRecords;
    private final UnsafeBuffer buffer;
    private final UnsafeBuffer empty = new UnsafeBuffer(new byte[0]);
    private long offeredMessages;

    private final MessageHeaderEncoder headerEncoder = new MessageHeaderEncoder();
    private final PeerConnectEncoder connectEncoder = new PeerConnectEncoder();
    private final CatalogResponseEncoder responseEncoder = new CatalogResponseEncoder();
    private final CatalogAckEncoder ackEncoder = new CatalogAckEncoder();
    private final GapRepairRequestEncoder repairEncoder = new GapRepairRequestEncoder();
    private final CatalogDeltaBatchEncoder batchEncoder = new CatalogDeltaBatchEncoder();
    private final ColdQueryEncoder queryEncoder = new ColdQueryEncoder();
    private final BatchRecordWriter batchRecordWriter = new BatchRecordWriter();
    private final io.orbitkv.codecs.transfer.MessageHeaderEncoder transferHeaderEncoder =
        new io.orbitkv.codecs.transfer.MessageHeaderEncoder();
    private final TransferGrantEncoder grantEncoder = new TransferGrantEncoder();
    private final TransferReleaseAckEncoder releaseAckEncoder = new TransferReleaseAckEncoder();

    PeerProxy(
        final long localIncarnationMsb,
        final long localIncarnationLsb,
        final long placementFingerprint,
        final PeerCounters counters,
        final int maxMessageBytes)
    {
        this.buffer = new UnsafeBuffer(BufferUtil.allocateDirectAligned(maxMessageBytes, 64));
        this.maxBatchRecords =
            Math.min(MAX_DELTA_BATCH_RECORDS, (maxMessageBytes - BATCH_OVERHEAD_BYTES) / MAX_RECORD_ENCODED_BYTES);
        if (maxBatchRecords < 1)
        {
            throw new IllegalArgumentException("message size cannot hold one delta record: " + maxMessageBytes);
        }
        this.localIncarnationMsb = localIncarnationMsb;
        this.localIncarnationLsb = localIncarnationLsb;
        this.placementFingerprint = placementFingerprint;
        this.counters = counters;
    }

    /**
     * Speak for a new incarnation of this runtime (a re-registration): routes are judged against, and sent from,
     * the new one; the old one's are refused from now on. Owner thread only.
     *
     * @param msb most significant half of the new runtime UUID.
     * @param lsb least significant half.
     */
    void localIncarnation(final long msb, final long lsb)
    {
        localIncarnationMsb = msb;
        localIncarnationLsb = lsb;
    }

    long localIncarnationMsb()
    {
        return localIncarnationMsb;
    }

    long localIncarnationLsb()
    {
        return localIncarnationLsb;
    }

    /**
     * A TransferGrant refusing an authorization the adapter rejected before any handler saw it (a wrong destination
     * incarnation): no session, no keys, no endpoint.
     */
    boolean transferRefusal(
        final ExclusivePublication publication,
        final PeerSession session,
        final long correlationId,
        final long requesterSessionId,
        final TransferStatus status)
    {
        grantEncoder.wrapAndApplyHeader(buffer, 0, transferHeaderEncoder);
        transferRoute(grantEncoder.route(), session);
        grantEncoder
            .peerSessionId(session.sessionId())
            .correlationId(correlationId)
            .requesterSessionId(requesterSessionId)
            .status(status)
            .transferSessionId(0)
            .token(0)
            .ttlMs(0)
            .grantedKeys(0);
        grantEncoder.keysCount(0);
        grantEncoder.putTransportEndpoint(empty, 0, 0);
        grantEncoder.putMessage(empty, 0, 0);
        return offer(publication, buffer, 0,
            io.orbitkv.codecs.transfer.MessageHeaderEncoder.ENCODED_LENGTH + grantEncoder.encodedLength());
    }

    /**
     * A TransferReleaseAck the adapter answers by itself (a release addressed to another incarnation).
     */
    boolean transferReleaseAck(
        final ExclusivePublication publication,
        final PeerSession session,
        final long correlationId,
        final long transferSessionId,
        final TransferStatus status)
    {
        releaseAckEncoder.wrapAndApplyHeader(buffer, 0, transferHeaderEncoder);
        transferRoute(releaseAckEncoder.route(), session);
        releaseAckEncoder
            .peerSessionId(session.sessionId())
            .correlationId(correlationId)
            .transferSessionId(transferSessionId)
            .status(status);
        return offer(publication, buffer, 0,
            io.orbitkv.codecs.transfer.MessageHeaderEncoder.ENCODED_LENGTH + releaseAckEncoder.encodedLength());
    }

    private void transferRoute(final TransferRouteEncoder route, final PeerSession session)
    {
        route.destinationIncarnation()
            .msb(session.requesterIncarnationMsb())
            .lsb(session.requesterIncarnationLsb());
        route.senderIncarnation().msb(localIncarnationMsb).lsb(localIncarnationLsb);
    }

    boolean connect(
        final ExclusivePublication publication,
        final PeerClient client,
        final int localNodeIndex,
        final int responseStreamId,
        final String responseChannel)
    {
        connectEncoder.wrapAndApplyHeader(buffer, 0, headerEncoder);
        route(connectEncoder.route(), 0, client.remoteIncarnationMsb(), client.remoteIncarnationLsb());
        connectEncoder
            .correlationId(client.connectCorrelationId())
            .requesterNodeIndex(localNodeIndex)
            .responseStreamId(responseStreamId)
            .responseChannel(responseChannel);
        return offer(publication, buffer, 0, MessageHeaderEncoder.ENCODED_LENGTH + connectEncoder.encodedLength());
    }

    boolean response(
        final ExclusivePublication publication,
        final long destinationMsb,
        final long destinationLsb,
        final int shard,
        final long sessionId,
        final long correlationId,
        final CatalogStatus code,
        final long relevantSequence)
    {
        responseEncoder.wrapAndApplyHeader(buffer, 0, headerEncoder);
        route(responseEncoder.route(), shard, destinationMsb, destinationLsb);
        responseEncoder.sessionId(sessionId).correlationId(correlationId).code(code).relevantSequence(relevantSequence);
        responseEncoder.putErrorMessage(empty, 0, 0);
        final boolean sent =
            offer(publication, buffer, 0, MessageHeaderEncoder.ENCODED_LENGTH + responseEncoder.encodedLength());
        if (sent)
        {
            counters.increment(PeerCounter.RESPONSES_SENT);
        }
        return sent;
    }

    boolean ack(final ExclusivePublication publication, final PeerSession session, final int shard, final long sequence)
    {
        ackEncoder.wrapAndApplyHeader(buffer, 0, headerEncoder);
        route(ackEncoder.route(), shard, session.requesterIncarnationMsb(), session.requesterIncarnationLsb());
        ackEncoder.sessionId(session.sessionId()).contiguousSequence(sequence);
        return offer(publication, buffer, 0, MessageHeaderEncoder.ENCODED_LENGTH + ackEncoder.encodedLength());
    }

    boolean gapRepair(
        final ExclusivePublication publication,
        final PeerSession session,
        final int shard,
        final long correlationId,
        final long fromSequence,
        final long toSequence)
    {
        repairEncoder.wrapAndApplyHeader(buffer, 0, headerEncoder);
        route(repairEncoder.route(), shard, session.requesterIncarnationMsb(), session.requesterIncarnationLsb());
        repairEncoder.sessionId(session.sessionId())
            .correlationId(correlationId)
            .fromSequence(fromSequence)
            .toSequence(toSequence);
        return offer(publication, buffer, 0, MessageHeaderEncoder.ENCODED_LENGTH + repairEncoder.encodedLength());
    }

    /**
     * Encode retained journal records of a shard from {@code fromSequence} (at most {@code maxRecords}, capped at
     * {@link #MAX_DELTA_BATCH_RECORDS} and at what the largest records would need in one message) into one batch
     * and offer it.
     *
     * @return records sent, 0 when nothing is pending or the offer failed, or
     * {@link OwnerJournal#READ_RESYNC_REQUIRED} when the journal no longer holds {@code fromSequence}.
     */
    int deltaBatch(
        final ExclusivePublication publication,
        final PeerClient client,
        final int shard,
        final OwnerJournal journal,
        final long fromSequence,
        final int maxRecords)
    {
        if (fromSequence < journal.oldestRetainedSequence(shard))
        {
            return OwnerJournal.READ_RESYNC_REQUIRED;
        }
        final long pending = journal.lastSequence(shard) - fromSequence + 1;
        final int count = (int)Math.min(Math.min(maxRecords, maxBatchRecords), Math.max(0, pending));
        if (count <= 0)
        {
            return 0;
        }
        batchEncoder.wrapAndApplyHeader(buffer, 0, headerEncoder);
        route(batchEncoder.route(), shard, client.remoteIncarnationMsb(), client.remoteIncarnationLsb());
        batchEncoder.sessionId(client.sessionId()).firstSequence(fromSequence);
        batchRecordWriter.records = batchEncoder.recordsCount(count);
        final int read = journal.read(shard, fromSequence, count, batchRecordWriter);
        batchRecordWriter.records = null;
        if (read != count)
        {
            return OwnerJournal.READ_RESYNC_REQUIRED;
        }
        final boolean sent =
            offer(publication, buffer, 0, MessageHeaderEncoder.ENCODED_LENGTH + batchEncoder.encodedLength());
        return sent ? count : 0;
    }

    boolean coldQuery(
        final ExclusivePublication publication,
        final PeerClient client,
        final long correlationId,
        final int shard,
        final int keyCount,
        final int[] keyShards,
        final DirectBuffer[] namespaces,
        final int[] namespaceLengths,
        final DirectBuffer[] hashes,
        final int[] hashLengths)
    {
        queryEncoder.wrapAndApplyHeader(buffer, 0, headerEncoder);
        route(queryEncoder.route(), shard, client.remoteIncarnationMsb(), client.remoteIncarnationLsb());
        queryEncoder.sessionId(client.sessionId()).correlationId(correlationId);
        final ColdQueryEncoder.KeysEncoder keys = queryEncoder.keysCount(keyCount);
        for (int i = 0; i < keyCount; i++)
        {
            keys.next()
                .shard((short)keyShards[i])
                .putKeyNamespace(namespaces[i], 0, namespaceLengths[i])
                .putKeyHash(hashes[i], 0, hashLengths[i]);
        }
        return offer(publication, buffer, 0, MessageHeaderEncoder.ENCODED_LENGTH + queryEncoder.encodedLength());
    }

    /**
     * Offer an encoded message with the bounded retry; counts back-pressure, failures and bytes sent.
     */
    boolean offer(final Publication publication, final DirectBuffer message, final int offset, final int length)
    {
        if (null == publication)
        {
            counters.increment(PeerCounter.OFFERS_FAILED);
            return false;
        }
        for (int attempt = 0; attempt < MAX_OFFER_ATTEMPTS; attempt++)
        {
            final long result = publication.offer(message, offset, length);
            if (result > 0)
            {
                offeredMessages++;
                counters.add(PeerCounter.METADATA_BYTES_SENT, length);
                return true;
            }
            if (Publication.BACK_PRESSURED == result || Publication.ADMIN_ACTION == result)
            {
                counters.increment(PeerCounter.OFFERS_BACK_PRESSURED);
                continue;
            }
            break;
        }
        counters.increment(PeerCounter.OFFERS_FAILED);
        return false;
    }

    /**
     * @return messages offered so far (the agent runs the driver after handling fragments only when this moved).
     */
    long offeredMessages()
    {
        return offeredMessages;
    }

    int maxMessageBytes()
    {
        return buffer.capacity();
    }

    int maxBatchRecords()
    {
        return maxBatchRecords;
    }

    UnsafeBuffer buffer()
    {
        return buffer;
    }

    void route(final RouteEncoder route, final int shard, final long destinationMsb, final long destinationLsb)
    {
        route.shard((short)shard).placementFingerprint(placementFingerprint);
        route.destinationIncarnation().msb(destinationMsb).lsb(destinationLsb);
        route.senderIncarnation().msb(localIncarnationMsb).lsb(localIncarnationLsb);
    }

    /**
     * Appends journal records to the batch being encoded; a preallocated reader so journal reads allocate nothing.
     */
    private static final class BatchRecordWriter implements JournalReader
    {
        private CatalogDeltaBatchEncoder.RecordsEncoder records;

        public void onRecord(final JournalRecord record)
        {
            records.next()
                .tier(JournalRecord.TIER_DRAM == record.tier() ? ResidenceTier.DRAM : ResidenceTier.SSD)
                .op(JournalRecord.OP_ADD == record.op() ? CatalogOp.ADD : CatalogOp.REMOVE)
                .generation(record.generation())
                .insertionSequence(record.insertionSequence())
                .byteSize(record.byteSize())
                .putKeyNamespace(record.namespace(), 0, record.namespaceLength())
                .putKeyHash(record.hash(), 0, record.hashLength());
        }
    }
}
