package io.orbitkv.manager.catalog;

import io.orbitkv.catalog.JournalRecord;
import io.orbitkv.catalog.ShardReceiver;
import io.orbitkv.codecs.catalog.CatalogStatus;
import io.orbitkv.codecs.catalog.ColdQueryResponseDecoder;
import io.orbitkv.manager.peer.PeerClient;
import io.orbitkv.manager.peer.PeerSession;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Decoded, validated catalog messages delivered by the {@link CatalogAdapter} on the peer agent's thread. The Manager
 * implements it over its {@link io.orbitkv.catalog.CatalogDirectory} (catalog host role) and its
 * {@link io.orbitkv.catalog.OwnerJournal} (owner role). Routes (fingerprint, destination incarnation, hosted shard),
 * the session's publisher and every key's shard have been checked before a call; judging the publisher's incarnation
 * against the member view is the handler's ({@link io.orbitkv.catalog.ShardReceiver}). Records and decoders are valid
 * only during the call.
 * <p>
 * A method returning {@link CatalogStatus} other than OK rejects the rest of the message; the adapter counts the
 * reason and answers the session with a CatalogResponse carrying it.
 */
public interface CatalogHandler
{
    /**
     * Catalog host: one record of an owner's delta batch; record i carries sequence firstSequence + i.
     *
     * @return OK (applied, duplicate or gap alike) or the rejection (e.g. STALE_INCARNATION, UNREGISTERED_PUBLISHER).
     */
    CatalogStatus onDelta(PeerSession session, int shard, long senderMsb, long senderLsb, JournalRecord record);

    /**
     * Catalog host: the receiver a delta batch from this session for this shard goes to, or null (no receiver, or a
     * handler that keeps none). The adapter resolves it once per batch to bring the batch's records into cache
     * ({@link ShardReceiver#queueTouch}) and to skip the shard check of keys the receiver already holds
     * ({@link ShardReceiver#holdsKey}); records still go through {@link #onDelta}.
     */
    default ShardReceiver deltaReceiver(final PeerSession session, final int shard)
    {
        return null;
    }

    /**
     * Catalog host: the batch ended (also after a rejection); fill what to ack and whether a gap needs repair.
     */
    void onDeltaBatchEnd(PeerSession session, int shard, long nowNs, DeltaBatchOutcome outcome);

    /**
     * Catalog host: an owner starts a snapshot cut of a shard whose pages will carry {@code recordCount} records (0
     * when a version 1 sender did not say).
     */
    CatalogStatus onSnapshotBegin(
        PeerSession session,
        int shard,
        long senderMsb,
        long senderLsb,
        long snapshotId,
        long startWatermark,
        int recordCount);

    /**
     * Catalog host: one page record; the record's sequence is its version.
     */
    CatalogStatus onSnapshotRecord(PeerSession session, int shard, long snapshotId, JournalRecord record);

    CatalogStatus onSnapshotPageEnd(PeerSession session, int shard, long snapshotId, int pageIndex);

    /**
     * Catalog host: one record of the delta interval (startWatermark, endWatermark] in order.
     */
    CatalogStatus onSnapshotIntervalRecord(PeerSession session, int shard, long snapshotId, JournalRecord record);

    /**
     * Catalog host: the cut ended; fill the ack (the end watermark when installed).
     */
    CatalogStatus onSnapshotEnd(
        PeerSession session,
        int shard,
        long snapshotId,
        long startWatermark,
        long endWatermark,
        int pageCount,
        DeltaBatchOutcome outcome);

    /**
     * Owner: a catalog host applied every sequence up to {@code contiguousSequence} of a shard.
     */
    void onAck(PeerClient client, int shard, long contiguousSequence);

    /**
     * Owner: a catalog host asks for {@code fromSequence..toSequence} of a shard again (serve from the journal, or
     * answer RESYNC_REQUIRED when it is gone).
     */
    void onGapRepair(PeerClient client, int shard, long correlationId, long fromSequence, long toSequence);

    /**
     * Host: answer a cold query that arrived on an active session from the incarnation that opened it; the reply
     * (rows in request order, or a refusal) is encoded into {@code reply}.
     *
     * @return the reply's length.
     */
    int onColdQuery(
        PeerSession session, DirectBuffer frame, int offset, int length, MutableDirectBuffer reply, int replyOffset);

    /**
     * @return the status of the last cold query answer: OK, or the refusal it carried (the transport counts it).
     */
    CatalogStatus lastColdQueryStatus();

    /**
     * Requester: rows of a cold query, aligned with the request (the decoder is rewound to its first group).
     */
    void onColdQueryResponse(PeerClient client, ColdQueryResponseDecoder response);

    /**
     * Requester or owner: the generic outcome of a request about a shard (the route's shard; informational for a
     * cold query, which may span shards).
     */
    void onResponse(PeerClient client, int shard, long correlationId, CatalogStatus code, long relevantSequence);
}
