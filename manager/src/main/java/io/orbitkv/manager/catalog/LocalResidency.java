package io.orbitkv.manager.catalog;

import org.agrona.DirectBuffer;

/**
 * What this Manager's own DRAM holds, as discovery asks it for the keys after a Lookup's local prefix: a key this
 * Manager holds itself needs no candidate, so the answer goes on through it to the keys peers hold after it.
 * Called on the agent thread that owns the block stores.
 */
@FunctionalInterface
public interface LocalResidency
{
    /**
     * A Manager that serves nothing from its own DRAM after a lookup's local prefix.
     */
    LocalResidency NONE = (namespaceId, hash, hashOffset, hashLength) -> -1;

    /**
     * @param namespaceId registered namespace id, or negative when the namespace is unknown here.
     * @param hash        buffer holding the hash.
     * @param hashOffset  offset of the hash.
     * @param hashLength  its length.
     * @return the length of the READY block in DRAM, or -1 when DRAM does not hold it.
     */
    int dramLength(int namespaceId, DirectBuffer hash, int hashOffset, int hashLength);
}
