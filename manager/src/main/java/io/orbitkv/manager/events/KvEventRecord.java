package io.orbitkv.manager.events;

import io.orbitkv.codecs.EngineRingLimits;
import io.orbitkv.index.BlockIndex;
import org.agrona.BitUtil;

/**
 * Layout of one residency record on the ring from the Manager's agent to the publisher. The ring message type is the
 * operation; the body is fixed fields followed by the hash bytes as the engine gave them:
 * <pre>
 *   0  int   namespace id (the Manager's namespace table)
 *   4  int   tokens per block, 0 when the namespace does not declare it
 *   8  byte  medium ({@link #MEDIUM_CPU} or {@link #MEDIUM_STORAGE})
 *   9  byte  hash length, 1..{@link BlockIndex#MAX_HASH_BYTES}
 *  10  bytes hash
 * </pre>
 * A lineage record ({@link #OP_LINEAGE}, written when a Publish that carries one reserves the block, so ahead of the
 * block's seal) is laid out:
 * <pre>
 *   0  int   namespace id
 *   4  byte  hash length
 *   5  byte  parent hash length, 0 for none
 *   6  short token count
 *   8  bytes hash, then the parent hash, then the token ids (little-endian int32 each)
 * </pre>
 */
final class KvEventRecord
{
    /** Ring message type: a block became resident (sealed). */
    static final int OP_STORED = 1;
    /** Ring message type: a resident block is going (evicted or removed). */
    static final int OP_REMOVED = 2;
    /** Ring message type: the lineage an engine gave a block it published. */
    static final int OP_LINEAGE = 3;

    /** DRAM pool: vLLM's {@code "CPU"} medium. */
    static final int MEDIUM_CPU = 0;
    /** SSD tier: vLLM's {@code "STORAGE"} medium. */
    static final int MEDIUM_STORAGE = 1;

    static final int NAMESPACE_ID_OFFSET = 0;
    static final int BLOCK_TOKENS_OFFSET = 4;
    static final int MEDIUM_OFFSET = 8;
    static final int HASH_LENGTH_OFFSET = 9;
    static final int HASH_OFFSET = 10;

    static final int LINEAGE_NAMESPACE_ID_OFFSET = 0;
    static final int LINEAGE_HASH_LENGTH_OFFSET = 4;
    static final int LINEAGE_PARENT_LENGTH_OFFSET = 5;
    static final int LINEAGE_TOKEN_COUNT_OFFSET = 6;
    static final int LINEAGE_HASH_OFFSET = 8;

    /** Largest lineage record body. */
    static final int MAX_LINEAGE_LENGTH = LINEAGE_HASH_OFFSET + 2 * BlockIndex.MAX_HASH_BYTES +
        EngineRingLimits.MAX_TOKENS_PER_BLOCK * Integer.BYTES;

    /** Largest residency record body. */
    static final int MAX_LENGTH = HASH_OFFSET + BlockIndex.MAX_HASH_BYTES;

    /** Slot of one record in the publisher's pending batch, with its operation in front. */
    static final int SLOT_OP_OFFSET = 0;
    static final int SLOT_BODY_OFFSET = BitUtil.SIZE_OF_INT;
    static final int SLOT_LENGTH = BitUtil.align(SLOT_BODY_OFFSET + MAX_LENGTH, BitUtil.SIZE_OF_LONG);

    private KvEventRecord()
    {
    }

    static String mediumName(final int medium)
    {
        return MEDIUM_STORAGE == medium ? "STORAGE" : "CPU";
    }
}
