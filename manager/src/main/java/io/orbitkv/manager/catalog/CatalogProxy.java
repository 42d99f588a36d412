package io.orbitkv.manager.catalog;

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
import io.orbitkv.codecs.catalog.ResidenceTier;
import io.orbitkv.codecs.catalog.RouteEncoder;
import io.orbitkv.manager.peer.PeerClient;
import io.orbitkv.manager.peer.PeerCounter;
import io.orbitkv.manager.peer.PeerCounters;
import io.orbitkv.manager.peer.PeerPublisher;
import io.orbitkv.manager.peer.PeerSession;
import org.agrona.BufferUtil;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Encodes the catalog's messages with reusable encoders into one preallocated buffer and offers them through the
 * {@link PeerPublisher} (its bounded retry, its byte and offer counters): an owner's delta batches and answers, a
 * requester's cold queries, a host's acks, gap repair requests, cold query replies and refusals, and the
 * {@link SnapshotSender}s of snapshot cuts. Routes carry the publisher's placement fingerprint and the incarnation it
 * sends as. A failed offer is never fatal: the protocol recovers by gap repair, session reconnect or the requester's
 * query budget. Single threaded (the peer agent's); allocation free after construction.
 */
public final class CatalogProxy implements ColdQuerySender
{
    /**
     * Records per delta batch or snapshot page an owner sends; a host accepts up to
     * {@link io.orbitkv.catalog.SnapshotCut#DEFAULT_MAX_INTERVAL_RECORDS} in a SnapshotEnd interval.
     */
    public static final int MAX_DELTA_BATCH_RECORDS = 256;

    /**
     * Encoded bytes of the largest possible delta record: fixed fields, then 256 namespace and 64 hash bytes with
     * their length prefixes.
     */
    static final int MAX_RECORD_ENCODED_BYTES = CatalogDeltaBatchEncoder.RecordsEncoder.sbeBlockLength() +
        CatalogDeltaBatchEncoder.RecordsEncoder.keyNamespaceHeaderLength() + StateKey.MAX_NAMESPACE_LENGTH +
        CatalogDeltaBatchEncoder.RecordsEncoder.keyHashHeaderLength() + StateKey.MAX_HASH_LENGTH;

    private static final int BATCH_OVERHEAD_BYTES = MessageHeaderEncoder.ENCODED_LENGTH +
        CatalogDeltaBatchEncoder.BLOCK_LENGTH + CatalogDeltaBatchEncoder.RecordsEncoder.sbeHeaderSize();

    private final PeerPublisher publisher;
    private final PeerCounters counters;
    private final int maxBatchRecords;
    private final UnsafeBuffer buffer;
    private final UnsafeBuffer empty = new UnsafeBuffer(new byte[0]);

    private final MessageHeaderEncoder headerEncoder = new MessageHeaderEncoder();
    private final CatalogResponseEncoder responseEncoder = new CatalogResponseEncoder();
    private final CatalogAckEncoder ackEncoder = new CatalogAckEncoder();
    private final GapRepairRequestEncoder repairEncoder = new GapRepairRequestEncoder();
    private final CatalogDeltaBatchEncoder batchEncoder = new CatalogDeltaBatchEncoder();
    private final ColdQueryEncoder queryEncoder = new ColdQueryEncoder();
    private final BatchRecordWriter batchRecordWriter = new BatchRecordWriter();

    /**
     * @param publisher the transport's sending half; its message size bounds every frame and batch.
     */
    public CatalogProxy(final PeerPublisher publisher)
    {
        final int maxMessageBytes = publisher.maxMessageBytes();
        this.maxBatchRecords =
            Math.min(MAX_DELTA_BATCH_RECORDS, (maxMessageBytes - BATCH_OVERHEAD_BYTES) / MAX_RECORD_ENCODED_BYTES);
        if (maxBatchRecords < 1)
        {
            throw new IllegalArgumentException("message size cannot hold one delta record: " + maxMessageBytes);
        }
        this.publisher = publisher;
        this.counters = publisher.counters();
        this.buffer = new UnsafeBuffer(BufferUtil.allocateDirectAligned(maxMessageBytes, 64));
    }

    /**
     * @return records an owner may put in one delta batch with this transport's message size.
     */
    public int maxBatchRecords()
    {
        return maxBatchRecords;
    }

    /**
     * Owner: send journal records of a shard to a catalog host from {@code fromSequence} (at most
     * {@code maxRecords}, capped at {@link #MAX_DELTA_BATCH_RECORDS} and at what the largest records would need in
     * one message) as one batch.
     *
     * @return records sent, 0 when the client is not active, nothing is pending or the offer failed, or
     * {@link OwnerJournal#READ_RESYNC_REQUIRED} when the journal no longer holds {@code fromSequence}.
     */
    public int sendDeltaBatch(
        final PeerClient client,
        final int shard,
        final OwnerJournal journal,
        final long fromSequence,
        final int maxRecords)
    {
        if (!client.isActive())
        {
            return 0;
        }
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
            publisher.send(client, buffer, 0, MessageHeaderEncoder.ENCODED_LENGTH + batchEncoder.encodedLength());
        return sent ? count : 0;
    }

    public long nextCorrelationId()
    {
        return publisher.nextCorrelationId();
    }

    /**
     * Requester: one batched cold query to a catalog host (the batching policy belongs to the caller).
     *
     * @return false when the client is not active or the offer failed.
     */
    public boolean sendColdQuery(
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
        if (!client.isActive())
        {
            return false;
        }
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
        return publisher.send(client, buffer, 0, MessageHeaderEncoder.ENCODED_LENGTH + queryEncoder.encodedLength());
    }

    /**
     * Owner: answer a host with a status (e.g. RESYNC_REQUIRED when a repair asks for history already dropped).
     *
     * @return false when the client is not active or the offer failed.
     */
    public boolean sendResponse(
        final PeerClient client, final int shard, final long correlationId, final CatalogStatus code,
        final long relevantSequence)
    {
        return client.isActive() && response(client, shard, correlationId, code, relevantSequence);
    }

    /**
     * Owner: a {@link io.orbitkv.catalog.SnapshotSink} that sends a {@link io.orbitkv.catalog.SnapshotCut}'s frames
     * of one shard to the host behind {@code client}. Allocates; create one per (host, shard) at set-up.
     */
    public SnapshotSender snapshotSender(final PeerClient client, final int shard)
    {
        return new SnapshotSender(publisher, this, client, shard);
    }

    /**
     * Host: refuse a request on the session it came in on.
     */
    boolean response(final PeerSession session, final int shard, final long correlationId, final CatalogStatus code)
    {
        responseEncoder.wrapAndApplyHeader(buffer, 0, headerEncoder);
        route(responseEncoder.route(), shard, session.requesterIncarnationMsb(), session.requesterIncarnationLsb());
        responseEncoder.sessionId(session.sessionId()).correlationId(correlationId).code(code).relevantSequence(-1);
        responseEncoder.putErrorMessage(empty, 0, 0);
        return countResponse(
            publisher.send(session, buffer, 0, MessageHeaderEncoder.ENCODED_LENGTH + responseEncoder.encodedLength()));
    }

    /**
     * Host: the buffer a cold query's reply is encoded into before {@link #sendReply}.
     */
    MutableDirectBuffer replyBuffer()
    {
        return buffer;
    }

    /**
     * Host: send the cold query reply encoded at the start of {@link #replyBuffer()}.
     */
    boolean sendReply(final PeerSession session, final int length)
    {
        return countResponse(publisher.send(session, buffer, 0, length));
    }

    boolean ack(final PeerSession session, final int shard, final long sequence)
    {
        ackEncoder.wrapAndApplyHeader(buffer, 0, headerEncoder);
        route(ackEncoder.route(), shard, session.requesterIncarnationMsb(), session.requesterIncarnationLsb());
        ackEncoder.sessionId(session.sessionId()).contiguousSequence(sequence);
        return publisher.send(session, buffer, 0, MessageHeaderEncoder.ENCODED_LENGTH + ackEncoder.encodedLength());
    }

    boolean gapRepair(final PeerSession session, final int shard, final long fromSequence, final long toSequence)
    {
        repairEncoder.wrapAndApplyHeader(buffer, 0, headerEncoder);
        route(repairEncoder.route(), shard, session.requesterIncarnationMsb(), session.requesterIncarnationLsb());
        repairEncoder.sessionId(session.sessionId())
            .correlationId(publisher.nextCorrelationId())
            .fromSequence(fromSequence)
            .toSequence(toSequence);
        return publisher.send(session, buffer, 0, MessageHeaderEncoder.ENCODED_LENGTH + repairEncoder.encodedLength());
    }

    void route(final RouteEncoder route, final int shard, final long destinationMsb, final long destinationLsb)
    {
        route.shard((short)shard).placementFingerprint(publisher.placementFingerprint());
        route.destinationIncarnation().msb(destinationMsb).lsb(destinationLsb);
        route.senderIncarnation().msb(publisher.localIncarnationMsb()).lsb(publisher.localIncarnationLsb());
    }

    private boolean response(
        final PeerClient client,
        final int shard,
        final long correlationId,
        final CatalogStatus code,
        final long relevantSequence)
    {
        responseEncoder.wrapAndApplyHeader(buffer, 0, headerEncoder);
        route(responseEncoder.route(), shard, client.remoteIncarnationMsb(), client.remoteIncarnationLsb());
        responseEncoder.sessionId(client.sessionId()).correlationId(correlationId).code(code)
            .relevantSequence(relevantSequence);
        responseEncoder.putErrorMessage(empty, 0, 0);
        return countResponse(
            publisher.send(client, buffer, 0, MessageHeaderEncoder.ENCODED_LENGTH + responseEncoder.encodedLength()));
    }

    private boolean countResponse(final boolean sent)
    {
        if (sent)
        {
            counters.increment(PeerCounter.RESPONSES_SENT);
        }
        return sent;
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
