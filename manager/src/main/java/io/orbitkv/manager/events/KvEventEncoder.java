package io.orbitkv.manager.events;

import io.orbitkv.index.BlockIndex;
import org.agrona.DirectBuffer;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;

import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * Encodes one batch exactly as vLLM's {@code msgspec} encoder encodes a {@code KVEventBatch}
 * ({@code vllm.distributed.kv_events}, vLLM 0.32): the batch is array-like, {@code [ts, [events...], dp_rank]}; each
 * event is a tagged struct, which msgspec writes as a map whose first entry is {@code "type": <class name>}, followed
 * by the struct's fields in declaration order, fields left at their default omitted:
 * <ul>
 *     <li>{@code {"type": "BlockStored", "block_hashes": [bin], "parent_block_hash": nil, "token_ids": [],
 *     "block_size": int, "lora_id": nil, "medium": str, "lora_name": nil}};</li>
 *     <li>{@code {"type": "BlockRemoved", "block_hashes": [bin], "medium": str}};</li>
 *     <li>{@code {"type": "AllBlocksCleared"}}.</li>
 * </ul>
 * Hashes go out as msgpack bin, the bytes the engine keyed the block with: vLLM's default
 * ({@code VLLM_KV_EVENTS_USE_INT_BLOCK_HASHES} unset) also sends its sha256 block hashes as bytes.
 * {@code parent_block_hash} and {@code token_ids} are what the engine gave with the block's Publish, while
 * {@link KvEventLineage} remembers it; otherwise nil and empty, which is what vLLM's own offloading connector sends for
 * its CPU tier. {@code block_size} is the namespace's {@code block=N}, else the number of token ids, else 0.
 * <p>
 * Runs on the publisher's thread only; reuses one packer.
 */
final class KvEventEncoder
{
    static final String TYPE = "type";
    static final String BLOCK_STORED = "BlockStored";
    static final String BLOCK_REMOVED = "BlockRemoved";
    static final String ALL_BLOCKS_CLEARED = "AllBlocksCleared";
    static final int BLOCK_STORED_FIELDS = 8;
    static final int BLOCK_REMOVED_FIELDS = 3;
    private static final int[] NO_TOKENS = new int[0];

    private final MessageBufferPacker packer = MessagePack.newDefaultBufferPacker();
    private final byte[] hash = new byte[BlockIndex.MAX_HASH_BYTES];
    private final KvEventLineage lineage;

    KvEventEncoder(final KvEventLineage lineage)
    {
        this.lineage = lineage;
    }

    /**
     * @param tsNs            wall-clock time of the batch, ns since the epoch.
     * @param clearAll        whether the batch starts with {@code AllBlocksCleared}.
     * @param slots           pending records, {@link KvEventRecord#SLOT_LENGTH} bytes each.
     * @param count           how many.
     * @param dataParallelRank the rank the batch names.
     * @return the payload.
     */
    byte[] encode(
        final long tsNs, final boolean clearAll, final DirectBuffer slots, final int count, final int dataParallelRank)
    {
        try
        {
            packer.clear();
            packer.packArrayHeader(3);
            packer.packDouble(tsNs / 1e9);
            packer.packArrayHeader(count + (clearAll ? 1 : 0));
            if (clearAll)
            {
                packer.packMapHeader(1);
                packer.packString(TYPE);
                packer.packString(ALL_BLOCKS_CLEARED);
            }
            for (int i = 0; i < count; i++)
            {
                final int slot = i * KvEventRecord.SLOT_LENGTH;
                final int body = slot + KvEventRecord.SLOT_BODY_OFFSET;
                final int op = slots.getInt(slot + KvEventRecord.SLOT_OP_OFFSET);
                final String medium = KvEventRecord.mediumName(slots.getByte(body + KvEventRecord.MEDIUM_OFFSET));
                final int hashLength = slots.getByte(body + KvEventRecord.HASH_LENGTH_OFFSET) & 0xFF;
                slots.getBytes(body + KvEventRecord.HASH_OFFSET, hash, 0, hashLength);
                if (KvEventRecord.OP_STORED == op)
                {
                    packer.packMapHeader(BLOCK_STORED_FIELDS);
                    packer.packString(TYPE);
                    packer.packString(BLOCK_STORED);
                    packHashes(hashLength);
                    final KvEventLineage.Lineage known = lineage.get(
                        slots.getInt(body + KvEventRecord.NAMESPACE_ID_OFFSET), hash, hashLength);
                    packer.packString("parent_block_hash");
                    if (null == known || null == known.parent())
                    {
                        packer.packNil();
                    }
                    else
                    {
                        packer.packBinaryHeader(known.parent().length);
                        packer.writePayload(known.parent());
                    }
                    packer.packString("token_ids");
                    final int[] tokens = null == known ? NO_TOKENS : known.tokens();
                    packer.packArrayHeader(tokens.length);
                    for (final int token : tokens)
                    {
                        packer.packInt(token);
                    }
                    final int blockTokens = slots.getInt(body + KvEventRecord.BLOCK_TOKENS_OFFSET);
                    packer.packString("block_size");
                    packer.packInt(blockTokens > 0 ? blockTokens : tokens.length);
                    packer.packString("lora_id");
                    packer.packNil();
                    packer.packString("medium");
                    packer.packString(medium);
                    packer.packString("lora_name");
                    packer.packNil();
                }
                else
                {
                    packer.packMapHeader(BLOCK_REMOVED_FIELDS);
                    packer.packString(TYPE);
                    packer.packString(BLOCK_REMOVED);
                    packHashes(hashLength);
                    packer.packString("medium");
                    packer.packString(medium);
                }
            }
            packer.packInt(dataParallelRank);
            return packer.toByteArray();
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot encode a KV event batch", ex);
        }
    }

    private void packHashes(final int hashLength) throws IOException
    {
        packer.packString("block_hashes");
        packer.packArrayHeader(1);
        packer.packBinaryHeader(hashLength);
        packer.writePayload(hash, 0, hashLength);
    }
}
