package io.orbitkv.manager.port;

import org.agrona.DirectBuffer;

/**
 * Where the lineage an engine gives with a Publish goes: for each block the Publish will store, its parent block's
 * hash and its token ids as the engine sent them. Called on the Manager's agent thread while the request is handled,
 * before the block is copied and sealed; the buffer is valid only during the call, so a listener copies what it keeps
 * and neither blocks nor allocates.
 */
@FunctionalInterface
public interface LineageListener
{
    /** Keeps nothing: the Manager without KV events. */
    LineageListener NONE = (namespaceId, buffer, hashOffset, hashLength, parentOffset, parentLength, tokenOffset,
        tokenCount) -> {};

    /**
     * @param namespaceId  the block's namespace in the Manager's table.
     * @param buffer       the request frame.
     * @param hashOffset   where the block's hash lies.
     * @param hashLength   its length.
     * @param parentOffset where the parent hash lies.
     * @param parentLength its length, 0 when the engine gave none.
     * @param tokenOffset  where the token ids lie, little-endian int32 each.
     * @param tokenCount   how many, 0 when the engine gave none.
     */
    void onLineage(
        int namespaceId,
        DirectBuffer buffer,
        int hashOffset,
        int hashLength,
        int parentOffset,
        int parentLength,
        int tokenOffset,
        int tokenCount);
}
