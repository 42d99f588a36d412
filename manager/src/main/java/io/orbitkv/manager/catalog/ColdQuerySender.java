package io.orbitkv.manager.catalog;

import io.orbitkv.manager.peer.PeerClient;
import org.agrona.DirectBuffer;

/**
 * Where {@link PeerDiscovery} sends its cold queries: the Manager's is the {@link CatalogProxy}; a unit test's records
 * them.
 */
interface ColdQuerySender
{
    /**
     * @return a correlation id no other request of this peer carries.
     */
    long nextCorrelationId();

    /**
     * One batched cold query to the catalog host behind {@code client}.
     *
     * @return false when the client is not active or the offer failed: the query is tried again on a later cycle.
     */
    boolean sendColdQuery(
        PeerClient client,
        long correlationId,
        int shard,
        int keyCount,
        int[] keyShards,
        DirectBuffer[] namespaces,
        int[] namespaceLengths,
        DirectBuffer[] hashes,
        int[] hashLengths);
}
