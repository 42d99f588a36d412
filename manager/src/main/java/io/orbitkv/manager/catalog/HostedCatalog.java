package io.orbitkv.manager.catalog;

import io.orbitkv.codecs.StateKeyFlyweight;
import io.orbitkv.index.CandidateSet;

/**
 * The shards this Manager hosts as catalog host and its own view of them, as {@link PeerDiscovery} reads them for
 * keys of those shards instead of asking itself over the network. The Manager's is the {@link CatalogHost}.
 */
interface HostedCatalog
{
    boolean hostsShard(int shard);

    /**
     * Fill {@code row} with the candidates this Manager's view of {@code shard} holds for {@code key}.
     *
     * @return whether the view covers every owner completely (an incomplete view's empty row proves nothing).
     */
    boolean lookup(int shard, StateKeyFlyweight key, CandidateSet row);
}
