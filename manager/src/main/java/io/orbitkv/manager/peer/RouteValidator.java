package io.orbitkv.manager.peer;

import io.orbitkv.codecs.catalog.CatalogStatus;

/**
 * Judges the route a session protocol message carries (placement fingerprint, destination incarnation, and for a host
 * bound message that this peer hosts the shard). The catalog gives its request validator; the transport keeps no
 * placement or membership of its own.
 */
@FunctionalInterface
public interface RouteValidator
{
    /**
     * @return OK, or the refusal (WRONG_FINGERPRINT, WRONG_DESTINATION, STALE_INCARNATION, ...).
     */
    CatalogStatus checkRoute(
        int shard, long placementFingerprint, long destinationMsb, long destinationLsb, boolean requireHostedShard);
}
