package io.orbitkv.manager.catalog;

import io.orbitkv.catalog.JournalRecord;
import io.orbitkv.catalog.SnapshotCut;
import io.orbitkv.catalog.SnapshotSink;
import io.orbitkv.codecs.catalog.CatalogOp;
import io.orbitkv.codecs.catalog.MessageHeaderEncoder;
import io.orbitkv.codecs.catalog.ResidenceTier;
import io.orbitkv.codecs.catalog.SnapshotBeginEncoder;
import io.orbitkv.codecs.catalog.SnapshotEndEncoder;
import io.orbitkv.codecs.catalog.SnapshotPageEncoder;
import io.orbitkv.manager.peer.PeerClient;
import io.orbitkv.manager.peer.PeerPublisher;
import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Encodes one shard's {@link SnapshotCut} for one catalog host (made by {@link CatalogProxy#snapshotSender}):
 * SnapshotBegin (start watermark, record count), one SnapshotPage per page, and SnapshotEnd carrying the whole delta
 * interval. Records stream in before the page or
 * interval is complete, so each group is opened with its capacity and its count patched when it closes. A page or
 * interval that does not fit one message, or an offer that fails, marks the attempt broken: the remaining frames of
 * that snapshot are not sent, so the host can never install it (its page and interval checks fail) and the owner
 * starts a new cut on the resync that follows. Single threaded (the owner's agent); allocation free after
 * construction.
 */
public final class SnapshotSender implements SnapshotSink
{
    private static final int GROUP_COUNT_OFFSET = 2;

    private final PeerPublisher publisher;
    private final CatalogProxy proxy;
    private final PeerClient client;
    private final int shard;
    private final UnsafeBuffer buffer;
    private final MessageHeaderEncoder headerEncoder = new MessageHeaderEncoder();
    private final SnapshotBeginEncoder beginEncoder = new SnapshotBeginEncoder();
    private final SnapshotPageEncoder pageEncoder = new SnapshotPageEncoder();
    private final SnapshotEndEncoder endEncoder = new SnapshotEndEncoder();
    private SnapshotPageEncoder.RecordsEncoder pageRecords;
    private SnapshotEndEncoder.IntervalEncoder intervalRecords;
    private int groupCount;
    private int groupCapacity;
    private boolean broken;
    private long brokenSnapshots;

    SnapshotSender(final PeerPublisher publisher, final CatalogProxy proxy, final PeerClient client, final int shard)
    {
        this.publisher = publisher;
        this.proxy = proxy;
        this.client = client;
        this.shard = shard;
        this.buffer = new UnsafeBuffer(BufferUtil.allocateDirectAligned(publisher.maxMessageBytes(), 64));
    }

    public void onBegin(final long snapshotId, final long startWatermark, final int recordCount)
    {
        broken = false;
        pageRecords = null;
        intervalRecords = null;
        beginEncoder.wrapAndApplyHeader(buffer, 0, headerEncoder);
        proxy.route(beginEncoder.route(), shard, client.remoteIncarnationMsb(), client.remoteIncarnationLsb());
        beginEncoder.sessionId(client.sessionId())
            .snapshotId(snapshotId)
            .startWatermark(startWatermark)
            .recordCount(recordCount);
        send(MessageHeaderEncoder.ENCODED_LENGTH + beginEncoder.encodedLength());
    }

    public void onPageRecord(final long snapshotId, final JournalRecord record)
    {
        if (broken)
        {
            return;
        }
        if (null == pageRecords)
        {
            openPage(snapshotId);
        }
        if (groupCount == groupCapacity || !fits(pageEncoder.limit()))
        {
            markBroken();
            return;
        }
        pageRecords.next()
            .tier(JournalRecord.TIER_DRAM == record.tier() ? ResidenceTier.DRAM : ResidenceTier.SSD)
            .version(record.sequence())
            .generation(record.generation())
            .insertionSequence(record.insertionSequence())
            .byteSize(record.byteSize())
            .putKeyNamespace(record.namespace(), 0, record.namespaceLength())
            .putKeyHash(record.hash(), 0, record.hashLength());
        groupCount++;
    }

    public void onPageEnd(final long snapshotId, final int pageIndex, final int nextCursor)
    {
        if (broken)
        {
            return;
        }
        if (null == pageRecords)
        {
            openPage(snapshotId);
        }
        pageEncoder.pageIndex(pageIndex).nextCursor(nextCursor);
        buffer.putShort(MessageHeaderEncoder.ENCODED_LENGTH + SnapshotPageEncoder.BLOCK_LENGTH + GROUP_COUNT_OFFSET,
            (short)groupCount, SnapshotPageEncoder.BYTE_ORDER);
        pageRecords = null;
        send(MessageHeaderEncoder.ENCODED_LENGTH + pageEncoder.encodedLength());
    }

    public void onIntervalRecord(final long snapshotId, final JournalRecord record)
    {
        if (broken)
        {
            return;
        }
        if (null == intervalRecords)
        {
            openInterval(snapshotId);
        }
        if (groupCount == groupCapacity || !fits(endEncoder.limit()))
        {
            markBroken();
            return;
        }
        intervalRecords.next()
            .tier(JournalRecord.TIER_DRAM == record.tier() ? ResidenceTier.DRAM : ResidenceTier.SSD)
            .op(JournalRecord.OP_ADD == record.op() ? CatalogOp.ADD : CatalogOp.REMOVE)
            .generation(record.generation())
            .insertionSequence(record.insertionSequence())
            .byteSize(record.byteSize())
            .putKeyNamespace(record.namespace(), 0, record.namespaceLength())
            .putKeyHash(record.hash(), 0, record.hashLength());
        groupCount++;
    }

    public void onEnd(final long snapshotId, final long startWatermark, final long endWatermark, final int pageCount)
    {
        if (broken)
        {
            return;
        }
        if (null == intervalRecords)
        {
            openInterval(snapshotId);
        }
        endEncoder.startWatermark(startWatermark).endWatermark(endWatermark).pageCount(pageCount);
        buffer.putShort(MessageHeaderEncoder.ENCODED_LENGTH + SnapshotEndEncoder.BLOCK_LENGTH + GROUP_COUNT_OFFSET,
            (short)groupCount, SnapshotEndEncoder.BYTE_ORDER);
        intervalRecords = null;
        send(MessageHeaderEncoder.ENCODED_LENGTH + endEncoder.encodedLength());
    }

    /**
     * @return snapshot attempts this sender gave up on (a frame too large or an offer failed).
     */
    public long brokenSnapshots()
    {
        return brokenSnapshots;
    }

    private void openPage(final long snapshotId)
    {
        pageEncoder.wrapAndApplyHeader(buffer, 0, headerEncoder);
        proxy.route(pageEncoder.route(), shard, client.remoteIncarnationMsb(), client.remoteIncarnationLsb());
        pageEncoder.sessionId(client.sessionId()).snapshotId(snapshotId).pageIndex(0).nextCursor(0);
        groupCapacity = CatalogProxy.MAX_DELTA_BATCH_RECORDS;
        groupCount = 0;
        pageRecords = pageEncoder.recordsCount(groupCapacity);
    }

    private void openInterval(final long snapshotId)
    {
        endEncoder.wrapAndApplyHeader(buffer, 0, headerEncoder);
        proxy.route(endEncoder.route(), shard, client.remoteIncarnationMsb(), client.remoteIncarnationLsb());
        endEncoder.sessionId(client.sessionId()).snapshotId(snapshotId).startWatermark(0).endWatermark(0).pageCount(0);
        groupCapacity = SnapshotCut.DEFAULT_MAX_INTERVAL_RECORDS;
        groupCount = 0;
        intervalRecords = endEncoder.intervalCount(groupCapacity);
    }

    private boolean fits(final int limit)
    {
        return limit + CatalogProxy.MAX_RECORD_ENCODED_BYTES <= buffer.capacity();
    }

    private void send(final int length)
    {
        if (!client.isActive() || !publisher.send(client, buffer, 0, length))
        {
            markBroken();
        }
    }

    private void markBroken()
    {
        if (!broken)
        {
            broken = true;
            brokenSnapshots++;
        }
    }
}
