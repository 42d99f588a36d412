package io.orbitkv.manager.events;

import io.orbitkv.index.BlockStore;
import io.orbitkv.index.NamespaceTable;
import io.orbitkv.manager.port.LineageListener;
import io.orbitkv.manager.status.SystemCounters;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.RingBuffer;
import org.agrona.concurrent.status.AtomicCounter;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Writes residency and lineage records into the ring the publisher drains. Runs on the Manager's agent thread inside the stores'
 * residency callbacks, so it claims ring space and writes the record in place: no allocation, no lock, and a full
 * ring drops the record and counts it rather than waiting for the publisher.
 * <p>
 * Tokens per block come from the namespace: the vLLM connector binds {@code block=N} into it. Namespaces are never
 * removed from the table, so each id's answer is worked out once and kept.
 */
final class KvEventProxy implements LineageListener
{
    private static final int TOKENS_UNRESOLVED = -1;
    private static final byte[] BLOCK_FIELD = "block=".getBytes(StandardCharsets.US_ASCII);
    private static final int MAX_BLOCK_TOKENS_DIGITS = 9;

    private final RingBuffer ring;
    private final NamespaceTable namespaces;
    private final int[] blockTokensByNamespace;
    private final UnsafeBuffer namespaceView = new UnsafeBuffer(0, 0);
    private final AtomicCounter queued;
    private final AtomicCounter dropped;
    private final AtomicCounter lineageQueued;
    private final AtomicCounter lineageDropped;

    KvEventProxy(final RingBuffer ring, final NamespaceTable namespaces, final SystemCounters counters)
    {
        this.ring = ring;
        this.namespaces = namespaces;
        this.blockTokensByNamespace = new int[namespaces.maxNamespaces()];
        Arrays.fill(blockTokensByNamespace, TOKENS_UNRESOLVED);
        this.queued = counters.get(KvEventCounter.EVENTS_QUEUED);
        this.dropped = counters.get(KvEventCounter.EVENTS_DROPPED);
        this.lineageQueued = counters.get(KvEventCounter.LINEAGE_QUEUED);
        this.lineageDropped = counters.get(KvEventCounter.LINEAGE_DROPPED);
    }

    /**
     * Queue a published block's lineage; the publisher attaches it to the block's {@code BlockStored} events.
     */
    public void onLineage(
        final int namespaceId,
        final DirectBuffer buffer,
        final int hashOffset,
        final int hashLength,
        final int parentOffset,
        final int parentLength,
        final int tokenOffset,
        final int tokenCount)
    {
        final int tokenBytes = tokenCount * Integer.BYTES;
        final int length = KvEventRecord.LINEAGE_HASH_OFFSET + hashLength + parentLength + tokenBytes;
        final int index = length > ring.maxMsgLength() ? -1 : ring.tryClaim(KvEventRecord.OP_LINEAGE, length);
        if (index <= 0)
        {
            lineageDropped.incrementRelease();
            return;
        }
        final MutableDirectBuffer out = ring.buffer();
        out.putInt(index + KvEventRecord.LINEAGE_NAMESPACE_ID_OFFSET, namespaceId);
        out.putByte(index + KvEventRecord.LINEAGE_HASH_LENGTH_OFFSET, (byte)hashLength);
        out.putByte(index + KvEventRecord.LINEAGE_PARENT_LENGTH_OFFSET, (byte)parentLength);
        out.putShort(index + KvEventRecord.LINEAGE_TOKEN_COUNT_OFFSET, (short)tokenCount);
        int position = index + KvEventRecord.LINEAGE_HASH_OFFSET;
        out.putBytes(position, buffer, hashOffset, hashLength);
        position += hashLength;
        out.putBytes(position, buffer, parentOffset, parentLength);
        position += parentLength;
        out.putBytes(position, buffer, tokenOffset, tokenBytes);
        ring.commit(index);
        lineageQueued.incrementRelease();
    }

    /**
     * @param op      {@link KvEventRecord#OP_STORED} or {@link KvEventRecord#OP_REMOVED}.
     * @param medium  {@link KvEventRecord#MEDIUM_CPU} or {@link KvEventRecord#MEDIUM_STORAGE}.
     * @param store   the store reporting; only read.
     * @param entryId the entry, its key still readable.
     * @return true when queued, false when dropped.
     */
    boolean offer(final int op, final int medium, final BlockStore store, final int entryId)
    {
        final int hashLength = store.hashLength(entryId);
        final int length = KvEventRecord.HASH_OFFSET + hashLength;
        final int index = ring.tryClaim(op, length);
        if (index <= 0)
        {
            dropped.incrementRelease();
            return false;
        }
        final int namespaceId = store.namespaceId(entryId);
        final MutableDirectBuffer buffer = ring.buffer();
        buffer.putInt(index + KvEventRecord.NAMESPACE_ID_OFFSET, namespaceId);
        buffer.putInt(index + KvEventRecord.BLOCK_TOKENS_OFFSET, blockTokens(namespaceId));
        buffer.putByte(index + KvEventRecord.MEDIUM_OFFSET, (byte)medium);
        buffer.putByte(index + KvEventRecord.HASH_LENGTH_OFFSET, (byte)hashLength);
        store.getHash(entryId, buffer, index + KvEventRecord.HASH_OFFSET);
        ring.commit(index);
        queued.incrementRelease();
        return true;
    }

    private int blockTokens(final int namespaceId)
    {
        if (namespaceId < 0 || namespaceId >= blockTokensByNamespace.length)
        {
            return 0;
        }
        int tokens = blockTokensByNamespace[namespaceId];
        if (TOKENS_UNRESOLVED == tokens)
        {
            final int length = namespaces.wrapNamespace(namespaceId, namespaceView);
            tokens = parseBlockTokens(namespaceView, length);
            blockTokensByNamespace[namespaceId] = tokens;
        }
        return tokens;
    }

    /**
     * The value of a {@code block=N} field of a {@code ;}-separated namespace (the vLLM connector's form), else 0.
     *
     * @param name   the namespace bytes.
     * @param length their length.
     * @return tokens per block, or 0 when not declared or not a positive number.
     */
    static int parseBlockTokens(final DirectBuffer name, final int length)
    {
        int fieldStart = 0;
        while (fieldStart < length)
        {
            int fieldEnd = fieldStart;
            while (fieldEnd < length && ';' != name.getByte(fieldEnd))
            {
                fieldEnd++;
            }
            if (startsWithBlockField(name, fieldStart, fieldEnd))
            {
                return parsePositive(name, fieldStart + BLOCK_FIELD.length, fieldEnd);
            }
            fieldStart = fieldEnd + 1;
        }
        return 0;
    }

    private static boolean startsWithBlockField(final DirectBuffer name, final int start, final int end)
    {
        if (end - start <= BLOCK_FIELD.length)
        {
            return false;
        }
        for (int i = 0; i < BLOCK_FIELD.length; i++)
        {
            if (BLOCK_FIELD[i] != name.getByte(start + i))
            {
                return false;
            }
        }
        return true;
    }

    private static int parsePositive(final DirectBuffer name, final int start, final int end)
    {
        if (end - start > MAX_BLOCK_TOKENS_DIGITS)
        {
            return 0;
        }
        int value = 0;
        for (int i = start; i < end; i++)
        {
            final byte b = name.getByte(i);
            if (b < '0' || b > '9')
            {
                return 0;
            }
            value = value * 10 + (b - '0');
        }
        return value;
    }
}
