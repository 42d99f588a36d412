package io.orbitkv.catalog;

import io.orbitkv.codecs.CatalogLimits;
import io.orbitkv.codecs.StateKeyShard;
import io.orbitkv.codecs.catalog.CatalogStatus;
import org.agrona.DirectBuffer;

/**
 * Checks the addressing every catalog message carries before any state is touched (design: receivers reject wrong
 * destinations, unregistered publishers and cross-shard keys; RPCs carry the shard, placement fingerprint and
 * destination incarnation), and the cold-query batch limits. Each rejection reason has its own counter. The
 * publisher's incarnation is judged by its {@link ShardReceiver}, which knows the member view.
 * Single threaded (the peer agent's adapter); allocation free.
 */
public final class CatalogRequestValidator
{
    /**
     * Route fingerprints of earlier placement generations remembered, so a route of one is refused as a stale
     * generation rather than as a foreign placement.
     */
    public static final int MAX_STALE_FINGERPRINTS = 8;

    private long localIncarnationMsb;
    private long localIncarnationLsb;
    private long installedFingerprint;
    private long targetFingerprint;
    private final long[] staleFingerprints = new long[MAX_STALE_FINGERPRINTS];
    private int staleFingerprintCount;
    private final boolean[] hostedShards;
    private final StateKeyShard shardFunction = new StateKeyShard();

    private long wrongDestinations;
    private long wrongFingerprints;
    private long staleGenerations;
    private long crossShardKeys;
    private long batchesTooLarge;
    private long malformed;

    /**
     * @param localIncarnationMsb  this runtime's incarnation, high bits.
     * @param localIncarnationLsb  this runtime's incarnation, low bits.
     * @param placementFingerprint route fingerprint of the installed placement generation.
     * @param hostedShards         which of the 16 shards this host serves (copied; {@link #hostShard} changes it).
     */
    public CatalogRequestValidator(
        final long localIncarnationMsb,
        final long localIncarnationLsb,
        final long placementFingerprint,
        final boolean[] hostedShards)
    {
        if (hostedShards.length != CatalogLimits.SHARD_COUNT)
        {
            throw new IllegalArgumentException("hostedShards must have " + CatalogLimits.SHARD_COUNT + " entries");
        }
        this.localIncarnationMsb = localIncarnationMsb;
        this.localIncarnationLsb = localIncarnationLsb;
        this.installedFingerprint = placementFingerprint;
        this.targetFingerprint = placementFingerprint;
        this.hostedShards = hostedShards.clone();
    }

    /**
     * Speak for a new incarnation of this runtime (a re-registration): routes are judged against, and sent from,
     * the new one; the old one's are refused from now on. Owner thread only.
     *
     * @param msb most significant half of the new runtime UUID.
     * @param lsb least significant half.
     */
    public void localIncarnation(final long msb, final long lsb)
    {
        localIncarnationMsb = msb;
        localIncarnationLsb = lsb;
    }

    /**
     * Judge routes against a new placement generation, or a transition between two: routes naming either generation
     * are accepted, and this host's own routes name the target. Fingerprints accepted until now and accepted no more
     * are remembered as stale (the last {@link #MAX_STALE_FINGERPRINTS}). Owner thread only.
     *
     * @param installed route fingerprint of the installed generation.
     * @param target    route fingerprint of the transition's target generation, or {@code installed} when none.
     */
    public void placementFingerprints(final long installed, final long target)
    {
        rememberStale(installedFingerprint, installed, target);
        rememberStale(targetFingerprint, installed, target);
        installedFingerprint = installed;
        targetFingerprint = target;
    }

    private void rememberStale(final long previous, final long installed, final long target)
    {
        if (previous == installed || previous == target || isStale(previous))
        {
            return;
        }
        staleFingerprints[staleFingerprintCount++ % MAX_STALE_FINGERPRINTS] = previous;
    }

    private boolean isStale(final long fingerprint)
    {
        for (int i = 0, n = Math.min(staleFingerprintCount, MAX_STALE_FINGERPRINTS); i < n; i++)
        {
            if (staleFingerprints[i] == fingerprint)
            {
                return true;
            }
        }
        return false;
    }

    /**
     * Serve a shard or stop serving it (a placement transition moved a copy here or away). Owner thread only.
     *
     * @param shard  shard in [0, 16).
     * @param hosted whether this host serves it now.
     */
    public void hostShard(final int shard, final boolean hosted)
    {
        hostedShards[shard] = hosted;
    }

    /**
     * @return the route fingerprint this host's own messages carry (the newest generation it knows).
     */
    public long sendFingerprint()
    {
        return targetFingerprint;
    }

    /**
     * Validate a message's route.
     *
     * @param requireHostedShard true for messages to a catalog host (deltas, snapshots, cold queries); false for
     *                           messages to an owner (acks, repair requests), which serve every shard.
     * @return {@link CatalogStatus#OK} or the rejection.
     */
    public CatalogStatus checkRoute(
        final int shard,
        final long fingerprint,
        final long destinationMsb,
        final long destinationLsb,
        final boolean requireHostedShard)
    {
        if (shard < 0 || shard >= CatalogLimits.SHARD_COUNT)
        {
            malformed++;
            return CatalogStatus.MALFORMED;
        }
        if (fingerprint != installedFingerprint && fingerprint != targetFingerprint)
        {
            if (isStale(fingerprint))
            {
                staleGenerations++;
            }
            wrongFingerprints++;
            return CatalogStatus.WRONG_FINGERPRINT;
        }
        if (destinationMsb != localIncarnationMsb || destinationLsb != localIncarnationLsb ||
            (requireHostedShard && !hostedShards[shard]))
        {
            wrongDestinations++;
            return CatalogStatus.WRONG_DESTINATION;
        }
        return CatalogStatus.OK;
    }

    /**
     * A key in a message for {@code shard} must map to that shard.
     */
    public CatalogStatus checkKey(
        final int shard,
        final DirectBuffer namespace,
        final int namespaceOffset,
        final int namespaceLength,
        final DirectBuffer hash,
        final int hashOffset,
        final int hashLength)
    {
        if (namespaceLength < 1 || namespaceLength > io.orbitkv.codecs.StateKey.MAX_NAMESPACE_LENGTH ||
            hashLength < 1 || hashLength > io.orbitkv.codecs.StateKey.MAX_HASH_LENGTH)
        {
            malformed++;
            return CatalogStatus.MALFORMED;
        }
        if (shardFunction.shard(namespace, namespaceOffset, namespaceLength, hash, hashOffset, hashLength) != shard)
        {
            crossShardKeys++;
            return CatalogStatus.CROSS_SHARD_KEY;
        }
        return CatalogStatus.OK;
    }

    /**
     * design: cold lookups use batches of at most 128 keys and 64 KiB of namespace/hash bytes.
     */
    public CatalogStatus checkColdQueryBatch(final int keyCount, final long keyBytes)
    {
        if (keyCount > CatalogLimits.MAX_COLD_QUERY_KEYS || keyBytes > CatalogLimits.MAX_COLD_QUERY_KEY_BYTES)
        {
            batchesTooLarge++;
            return CatalogStatus.BATCH_TOO_LARGE;
        }
        return CatalogStatus.OK;
    }

    public long wrongDestinations()
    {
        return wrongDestinations;
    }

    public long wrongFingerprints()
    {
        return wrongFingerprints;
    }

    /**
     * @return routes refused because they named an earlier placement generation of this host (also counted in
     * {@link #wrongFingerprints()}).
     */
    public long staleGenerations()
    {
        return staleGenerations;
    }

    public long crossShardKeys()
    {
        return crossShardKeys;
    }

    public long batchesTooLarge()
    {
        return batchesTooLarge;
    }

    public long malformed()
    {
        return malformed;
    }
}
