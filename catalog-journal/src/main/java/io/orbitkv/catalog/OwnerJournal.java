package io.orbitkv.catalog;

import io.orbitkv.codecs.CatalogLimits;
import org.agrona.BitUtil;
import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The owner's bounded journals: one ordered stream per logical shard of this runtime incarnation (a new incarnation
 * builds a new journal), all sharing one off-heap byte budget (default {@link CatalogLimits#JOURNAL_BUDGET_BYTES})
 * carved into fixed segments.
 * <p>
 * A shard's stream is a chain of segments; records never span segments. Sequences start at 1 per shard and
 * increase by one per appended transition. Each shard has up to {@code maxReceiversPerShard} receivers (catalog
 * hosts, or a snapshot in progress) whose acks of contiguous progress govern retention: a segment whose records every
 * active receiver has acked is returned to the pool.
 * <p>
 * Appending never blocks and never fails for lack of space (design: slow subscribers cannot stall a local Publish):
 * when the pool is empty the oldest segment of the shard holding the most segments is dropped, and every receiver of
 * that shard that had not acked all of it gets an explicit resync condition (design: overflow must not silently turn
 * into permanent missing registrations). Such a receiver can only recover through a snapshot.
 * <p>
 * Record layout in a segment, 8-byte aligned:
 * <pre>
 *   0 int32 length | 4 uint8 tier | 5 uint8 op | 6 uint16 namespace length | 8 int64 sequence | 16 int64 generation
 *   24 int64 insertion sequence | 32 int32 byte size | 36 uint8 hash length | 37 namespace bytes, hash bytes
 * </pre>
 * Single writer (the agent owning the inventory); allocation free after construction.
 */
public final class OwnerJournal
{
    /**
     * Default segment size: the unit of retention and of overflow.
     */
    public static final int DEFAULT_SEGMENT_BYTES = 64 * 1024;

    /**
     * Default receivers per shard: the catalog host plus room for a placement handoff and a snapshot.
     */
    public static final int DEFAULT_MAX_RECEIVERS_PER_SHARD = 4;

    /**
     * Returned by {@link #read} when the requested sequence is no longer retained.
     */
    public static final int READ_RESYNC_REQUIRED = -1;

    /**
     * Returned by {@link #addReceiver} when the shard has no free receiver slot.
     */
    public static final int NO_RECEIVER_SLOT = -1;

    static final int HEADER_BYTES = 37;
    private static final int LENGTH_OFFSET = 0;
    private static final int TIER_OFFSET = 4;
    private static final int OP_OFFSET = 5;
    private static final int NAMESPACE_LENGTH_OFFSET = 6;
    private static final int SEQUENCE_OFFSET = 8;
    private static final int GENERATION_OFFSET = 16;
    private static final int INSERTION_SEQUENCE_OFFSET = 24;
    private static final int BYTE_SIZE_OFFSET = 32;
    private static final int HASH_LENGTH_OFFSET = 36;
    private static final int RECORD_ALIGNMENT = 8;

    private final int shardCount;
    private final int segmentBytes;
    private final int segmentCount;
    private final int maxReceivers;
    private final UnsafeBuffer segments;

    private final int[] freeSegments;
    private int freeCount;
    private final long[] segmentFirstSequence;
    private final int[] segmentUsed;

    private final int[][] chain;
    private final int[] chainHead;
    private final int[] chainCount;
    private final long[] nextSequence;
    private final long[] oldestRetained;

    private final boolean[][] receiverActive;
    private final long[][] receiverAcked;
    private final boolean[][] receiverResync;

    private final JournalRecord readRecord = new JournalRecord();

    private long appends;
    private long droppedSegments;
    private long overflowResyncs;
    private long reclaimedSegments;

    /**
     * Journal with the design's 16 MiB budget over 16 shards.
     */
    public OwnerJournal()
    {
        this(CatalogLimits.SHARD_COUNT, CatalogLimits.JOURNAL_BUDGET_BYTES, DEFAULT_SEGMENT_BYTES,
            DEFAULT_MAX_RECEIVERS_PER_SHARD);
    }

    /**
     * @param shardCount           logical shards.
     * @param budgetBytes          total bytes of all journals.
     * @param segmentBytes         segment size, a multiple of 8 able to hold the longest record.
     * @param maxReceiversPerShard receivers tracked per shard.
     */
    public OwnerJournal(
        final int shardCount, final long budgetBytes, final int segmentBytes, final int maxReceiversPerShard)
    {
        if (segmentBytes < maxRecordBytes() || 0 != segmentBytes % RECORD_ALIGNMENT)
        {
            throw new IllegalArgumentException("segment must hold the longest record and be 8-aligned: " + segmentBytes);
        }
        final long count = budgetBytes / segmentBytes;
        if (count < 1 || count * segmentBytes > Integer.MAX_VALUE)
        {
            throw new IllegalArgumentException("budget must hold 1 segment and fit one buffer: " + budgetBytes);
        }
        this.shardCount = shardCount;
        this.segmentBytes = segmentBytes;
        this.segmentCount = (int)count;
        this.maxReceivers = maxReceiversPerShard;
        segments = new UnsafeBuffer(BufferUtil.allocateDirectAligned(segmentCount * segmentBytes, 64));
        freeSegments = new int[segmentCount];
        for (int i = 0; i < segmentCount; i++)
        {
            freeSegments[i] = segmentCount - 1 - i;
        }
        freeCount = segmentCount;
        segmentFirstSequence = new long[segmentCount];
        segmentUsed = new int[segmentCount];
        chain = new int[shardCount][segmentCount];
        chainHead = new int[shardCount];
        chainCount = new int[shardCount];
        nextSequence = new long[shardCount];
        oldestRetained = new long[shardCount];
        java.util.Arrays.fill(nextSequence, 1);
        java.util.Arrays.fill(oldestRetained, 1);
        receiverActive = new boolean[shardCount][maxReceiversPerShard];
        receiverAcked = new long[shardCount][maxReceiversPerShard];
        receiverResync = new boolean[shardCount][maxReceiversPerShard];
    }

    /**
     * Longest encoded record.
     */
    public static int maxRecordBytes()
    {
        return recordBytes(io.orbitkv.codecs.StateKey.MAX_NAMESPACE_LENGTH, io.orbitkv.codecs.StateKey.MAX_HASH_LENGTH);
    }

    static int recordBytes(final int namespaceLength, final int hashLength)
    {
        return BitUtil.align(HEADER_BYTES + namespaceLength + hashLength, RECORD_ALIGNMENT);
    }

    /**
     * Append a transition to a shard's stream. Never blocks; may drop the oldest retained segment of some shard.
     *
     * @param shard  shard of the record's key.
     * @param record the transition; its sequence is ignored and assigned here.
     * @return the sequence assigned.
     */
    public long append(final int shard, final JournalRecord record)
    {
        final int length = recordBytes(record.namespaceLength(), record.hashLength());
        int segment = tailSegment(shard);
        if (segment < 0 || segmentUsed[segment] + length > segmentBytes)
        {
            segment = newSegment(shard);
        }
        final long sequence = nextSequence[shard]++;
        final int at = segment * segmentBytes + segmentUsed[segment];
        final UnsafeBuffer buffer = segments;
        buffer.putInt(at + LENGTH_OFFSET, length);
        buffer.putByte(at + TIER_OFFSET, (byte)record.tier());
        buffer.putByte(at + OP_OFFSET, (byte)record.op());
        buffer.putShort(at + NAMESPACE_LENGTH_OFFSET, (short)record.namespaceLength());
        buffer.putLong(at + SEQUENCE_OFFSET, sequence);
        buffer.putLong(at + GENERATION_OFFSET, record.generation());
        buffer.putLong(at + INSERTION_SEQUENCE_OFFSET, record.insertionSequence());
        buffer.putInt(at + BYTE_SIZE_OFFSET, record.byteSize());
        buffer.putByte(at + HASH_LENGTH_OFFSET, (byte)record.hashLength());
        buffer.putBytes(at + HEADER_BYTES, record.namespace(), 0, record.namespaceLength());
        buffer.putBytes(at + HEADER_BYTES + record.namespaceLength(), record.hash(), 0, record.hashLength());
        segmentUsed[segment] += length;
        record.sequence(sequence);
        appends++;
        return sequence;
    }

    /**
     * Deliver retained records of a shard from a sequence, in order (gap repair, snapshot interval).
     *
     * @param shard        shard.
     * @param fromSequence first sequence wanted.
     * @param maxRecords   bound on records delivered.
     * @param reader       receives each record.
     * @return records delivered, or {@link #READ_RESYNC_REQUIRED} if {@code fromSequence} is no longer retained.
     */
    public int read(final int shard, final long fromSequence, final int maxRecords, final JournalReader reader)
    {
        if (fromSequence < oldestRetained[shard])
        {
            return READ_RESYNC_REQUIRED;
        }
        int delivered = 0;
        final int count = chainCount[shard];
        int index = 0;
        while (index + 1 < count && segmentFirstSequence[chainAt(shard, index + 1)] <= fromSequence)
        {
            index++;
        }
        for (; index < count && delivered < maxRecords; index++)
        {
            final int segment = chainAt(shard, index);
            final int base = segment * segmentBytes;
            final int used = segmentUsed[segment];
            int offset = 0;
            while (offset < used && delivered < maxRecords)
            {
                final int at = base + offset;
                final long sequence = segments.getLong(at + SEQUENCE_OFFSET);
                if (sequence >= fromSequence)
                {
                    decode(at, readRecord);
                    reader.onRecord(readRecord);
                    delivered++;
                }
                offset += segments.getInt(at + LENGTH_OFFSET);
            }
        }
        return delivered;
    }

    /**
     * Register a receiver of a shard's stream. It starts at sequence 0 (an incarnation's empty inventory) and is
     * flagged for resync if the stream's start is no longer retained.
     *
     * @return receiver id, or {@link #NO_RECEIVER_SLOT}.
     */
    public int addReceiver(final int shard)
    {
        for (int r = 0; r < maxReceivers; r++)
        {
            if (!receiverActive[shard][r])
            {
                receiverActive[shard][r] = true;
                receiverAcked[shard][r] = 0;
                receiverResync[shard][r] = oldestRetained[shard] > 1;
                return r;
            }
        }
        return NO_RECEIVER_SLOT;
    }

    public void removeReceiver(final int shard, final int receiver)
    {
        receiverActive[shard][receiver] = false;
        receiverResync[shard][receiver] = false;
        reclaimAcked(shard);
    }

    /**
     * Contiguous progress of a receiver; acks never move backwards. Frees segments every receiver has acked.
     */
    public void onAck(final int shard, final int receiver, final long contiguousSequence)
    {
        if (receiverActive[shard][receiver] && contiguousSequence > receiverAcked[shard][receiver])
        {
            receiverAcked[shard][receiver] = Math.min(contiguousSequence, nextSequence[shard] - 1);
            reclaimAcked(shard);
        }
    }

    /**
     * Rebase a receiver at a snapshot cut: retention restarts after {@code watermark} and its resync flag clears.
     */
    public void rebaseReceiver(final int shard, final int receiver, final long watermark)
    {
        receiverAcked[shard][receiver] = watermark;
        receiverResync[shard][receiver] = false;
    }

    public boolean resyncRequired(final int shard, final int receiver)
    {
        return receiverResync[shard][receiver];
    }

    public long ackedSequence(final int shard, final int receiver)
    {
        return receiverAcked[shard][receiver];
    }

    /**
     * @return the last sequence appended to a shard (0 when none).
     */
    public long lastSequence(final int shard)
    {
        return nextSequence[shard] - 1;
    }

    /**
     * @return the first sequence still readable for a shard.
     */
    public long oldestRetainedSequence(final int shard)
    {
        return oldestRetained[shard];
    }

    public int shardCount()
    {
        return shardCount;
    }

    public int segmentCount()
    {
        return segmentCount;
    }

    public int segmentBytes()
    {
        return segmentBytes;
    }

    /**
     * @return bytes of segments holding records (the journal use shown by stat).
     */
    public long usedBytes()
    {
        return (long)(segmentCount - freeCount) * segmentBytes;
    }

    public long capacityBytes()
    {
        return (long)segmentCount * segmentBytes;
    }

    public long appends()
    {
        return appends;
    }

    /**
     * @return segments dropped under budget pressure before every receiver acked them.
     */
    public long droppedSegments()
    {
        return droppedSegments;
    }

    /**
     * @return receiver resync conditions raised by overflow.
     */
    public long overflowResyncs()
    {
        return overflowResyncs;
    }

    public long reclaimedSegments()
    {
        return reclaimedSegments;
    }

    private void decode(final int at, final JournalRecord record)
    {
        final int namespaceLength = segments.getShort(at + NAMESPACE_LENGTH_OFFSET) & 0xFFFF;
        final int hashLength = segments.getByte(at + HASH_LENGTH_OFFSET) & 0xFF;
        record.key(segments, at + HEADER_BYTES, namespaceLength, segments, at + HEADER_BYTES + namespaceLength, hashLength);
        record.set(
            segments.getLong(at + SEQUENCE_OFFSET),
            segments.getByte(at + TIER_OFFSET),
            segments.getByte(at + OP_OFFSET),
            segments.getLong(at + GENERATION_OFFSET),
            segments.getLong(at + INSERTION_SEQUENCE_OFFSET),
            segments.getInt(at + BYTE_SIZE_OFFSET));
    }

    private int chainAt(final int shard, final int index)
    {
        return chain[shard][(chainHead[shard] + index) % segmentCount];
    }

    private int tailSegment(final int shard)
    {
        final int count = chainCount[shard];
        return 0 == count ? -1 : chainAt(shard, count - 1);
    }

    private int newSegment(final int shard)
    {
        if (0 == freeCount)
        {
            for (int s = 0; s < shardCount; s++)
            {
                reclaimAcked(s);
            }
        }
        if (0 == freeCount)
        {
            int victim = shard;
            for (int s = 0; s < shardCount; s++)
            {
                if (chainCount[s] > chainCount[victim])
                {
                    victim = s;
                }
            }
            dropOldest(victim, true);
        }
        final int segment = freeSegments[--freeCount];
        segmentFirstSequence[segment] = nextSequence[shard];
        segmentUsed[segment] = 0;
        chain[shard][(chainHead[shard] + chainCount[shard]) % segmentCount] = segment;
        chainCount[shard]++;
        return segment;
    }

    private long lastSequenceOfHead(final int shard)
    {
        return chainCount[shard] > 1 ? segmentFirstSequence[chainAt(shard, 1)] - 1 : nextSequence[shard] - 1;
    }

    private void dropOldest(final int shard, final boolean overflow)
    {
        final int segment = chainAt(shard, 0);
        final long lastSequence = lastSequenceOfHead(shard);
        if (overflow)
        {
            droppedSegments++;
            for (int r = 0; r < maxReceivers; r++)
            {
                if (receiverActive[shard][r] && receiverAcked[shard][r] < lastSequence && !receiverResync[shard][r])
                {
                    receiverResync[shard][r] = true;
                    overflowResyncs++;
                }
            }
        }
        else
        {
            reclaimedSegments++;
        }
        oldestRetained[shard] = lastSequence + 1;
        chainHead[shard] = (chainHead[shard] + 1) % segmentCount;
        chainCount[shard]--;
        freeSegments[freeCount++] = segment;
    }

    private void reclaimAcked(final int shard)
    {
        long minAcked = Long.MAX_VALUE;
        boolean any = false;
        for (int r = 0; r < maxReceivers; r++)
        {
            // A receiver already flagged for resync recovers by snapshot, so it holds no history back.
            if (receiverActive[shard][r] && !receiverResync[shard][r])
            {
                any = true;
                minAcked = Math.min(minAcked, receiverAcked[shard][r]);
            }
        }
        if (!any)
        {
            return;
        }
        // The tail segment stays: the appender writes into it.
        while (chainCount[shard] > 1 && lastSequenceOfHead(shard) <= minAcked)
        {
            dropOldest(shard, false);
        }
    }
}
