package io.orbitkv.manager.catalog;

import io.orbitkv.codecs.CatalogLimits;
import io.orbitkv.codecs.EngineRingLimits;
import io.orbitkv.codecs.StateKeyFlyweight;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * One batched cold query to one catalog host: at most {@link CatalogLimits#MAX_COLD_QUERY_KEYS} keys of one
 * namespace and {@link CatalogLimits#MAX_COLD_QUERY_KEY_BYTES} of namespace and hash bytes, and the lookups waiting
 * for it (the one that created it and any that coalesced onto its keys). Its creator is a lookup, or, for keys asked
 * again of other copies, the query that failed them ({@link #retryCreator}). Each row remembers which copies of its
 * shard were asked already.
 */
final class ColdQuerySlot
{
    final int index;
    boolean active;
    boolean sent;
    long correlationId;
    ColdQueryLink link;
    long budgetDeadlineMs;
    long attemptDeadlineMs;
    int keyCount;
    int keyBytes;
    int creatorIndex;
    long creatorGeneration;
    final UnsafeBuffer namespace = new UnsafeBuffer(new byte[EngineRingLimits.MAX_NAMESPACE_LENGTH]);
    int namespaceLength;
    final DirectBuffer[] namespaces = new DirectBuffer[CatalogLimits.MAX_COLD_QUERY_KEYS];
    final int[] namespaceLengths = new int[CatalogLimits.MAX_COLD_QUERY_KEYS];
    final DirectBuffer[] hashes = new DirectBuffer[CatalogLimits.MAX_COLD_QUERY_KEYS];
    final int[] hashLengths = new int[CatalogLimits.MAX_COLD_QUERY_KEYS];
    final int[] shards = new int[CatalogLimits.MAX_COLD_QUERY_KEYS];
    final long[] fingerprints = new long[CatalogLimits.MAX_COLD_QUERY_KEYS];
    final int[] triedReplicas = new int[CatalogLimits.MAX_COLD_QUERY_KEYS];
    final int[] waiterIndex;
    final long[] waiterGeneration;
    int waiterCount;

    ColdQuerySlot(final int index, final int maxWaiters)
    {
        this.index = index;
        for (int i = 0; i < hashes.length; i++)
        {
            hashes[i] = new UnsafeBuffer(new byte[EngineRingLimits.MAX_HASH_LENGTH]);
            namespaces[i] = namespace;
        }
        waiterIndex = new int[maxWaiters];
        waiterGeneration = new long[maxWaiters];
    }

    void open(
        final ColdQueryLink link,
        final long correlationId,
        final long nowMs,
        final long budgetDeadlineMs,
        final int creatorIndex,
        final long creatorGeneration,
        final DirectBuffer namespaceBuffer,
        final int namespaceOffset,
        final int namespaceLength)
    {
        this.active = true;
        this.sent = false;
        this.link = link;
        this.correlationId = correlationId;
        this.budgetDeadlineMs = budgetDeadlineMs;
        this.attemptDeadlineMs = Math.min(budgetDeadlineMs, nowMs + CatalogLimits.COLD_QUERY_ATTEMPT_MS);
        this.keyCount = 0;
        this.keyBytes = 0;
        this.waiterCount = 0;
        this.creatorIndex = creatorIndex;
        this.creatorGeneration = creatorGeneration;
        this.namespace.putBytes(0, namespaceBuffer, namespaceOffset, namespaceLength);
        this.namespaceLength = namespaceLength;
    }

    /**
     * @return the creator index the queries asking this one's keys again carry (never a lookup's index).
     */
    int retryCreator()
    {
        return -1 - index;
    }

    boolean acceptsKeysFrom(
        final int creatorIndex, final long creatorGeneration, final ColdQueryLink target, final int hashLength)
    {
        return active && !sent && link == target && this.creatorIndex == creatorIndex &&
            this.creatorGeneration == creatorGeneration && keyCount < CatalogLimits.MAX_COLD_QUERY_KEYS &&
            keyBytes + namespaceLength + hashLength <= CatalogLimits.MAX_COLD_QUERY_KEY_BYTES;
    }

    int addKey(final int shard, final StateKeyFlyweight key, final long fingerprint, final int triedReplicas)
    {
        final int row = keyCount++;
        this.triedReplicas[row] = triedReplicas;
        final int hashLength = key.hashLength();
        shards[row] = shard;
        ((UnsafeBuffer)hashes[row]).putBytes(0, key.hashBuffer(), key.hashOffset(), hashLength);
        hashLengths[row] = hashLength;
        namespaceLengths[row] = namespaceLength;
        fingerprints[row] = fingerprint;
        keyBytes += namespaceLength + hashLength;
        return row;
    }

    /**
     * @return true when row {@code row} asks for exactly this key.
     */
    boolean matches(final int row, final StateKeyFlyweight key)
    {
        return row < keyCount && key.sameNamespace(namespace, 0, namespaceLength) &&
            key.sameHash(hashes[row], 0, hashLengths[row]);
    }

    /**
     * Point a flyweight at row {@code row}'s key.
     */
    StateKeyFlyweight key(final int row, final StateKeyFlyweight key)
    {
        return key.wrap(StateKeyFlyweight.NO_NAMESPACE_ID, namespace, 0, namespaceLength, hashes[row], 0,
            hashLengths[row]);
    }

    /**
     * @return whether lookup {@code i} of {@link #waiterIndex} still waits for this query.
     */
    boolean waits(final int i, final PendingLookup lookup)
    {
        return lookup.active && lookup.generation == waiterGeneration[i];
    }

    void addWaiter(final PendingLookup lookup)
    {
        for (int i = 0; i < waiterCount; i++)
        {
            if (waiterIndex[i] == lookup.index && waiterGeneration[i] == lookup.generation)
            {
                return;
            }
        }
        waiterIndex[waiterCount] = lookup.index;
        waiterGeneration[waiterCount] = lookup.generation;
        waiterCount++;
        lookup.outstanding++;
    }
}
