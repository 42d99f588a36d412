package io.orbitkv.manager.events;

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
 */
final class KvEventRecord
{
    /** Ring message type: a block became resident (sealed). */
    static final int OP_STORED = 1;
    /** Ring message type: a resident block is going (evicted or removed). */
    static final int OP_REMOVED = 2;

    /** DRAM pool: vLLM's {@code "CPU"} medium. */
    static final int MEDIUM_CPU = 0;
    /** SSD tier: vLLM's {@code "STORAGE"} medium. */
    static final int MEDIUM_STORAGE = 1;

    static final int NAMESPACE_ID_OFFSET = 0;
    static final int BLOCK_TOKENS_OFFSET = 4;
    static final int MEDIUM_OFFSET = 8;
    static final int HASH_LENGTH_OFFSET = 9;
    static final int HASH_OFFSET = 10;

    /** Largest record body. */
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
