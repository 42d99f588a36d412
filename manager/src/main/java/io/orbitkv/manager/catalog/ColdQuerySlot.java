package io.orbitkv.manager.catalog;

import io.orbitkv.codecs.CatalogLimits;
import io.orbitkv.codecs.EngineRingLimits;
import io.orbitkv.codecs.StateKeyFlyweight;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * One batched cold query to one catalog host: at most {@link CatalogLimits#MAX_COLD_QUERY_KEYS} keys of one
 * namespace and {@link CatalogLimits#MAX_COLD_QUERY_KEY_BYTES} of namespace and hash bytes, and the lookups waiting
 * for it (the one that created it and any that coalesced onto its keys).
 */
final class ColdQuerySlot
{
    final int index;
    boolean active;
    boolean sent;
    long correlationId;
    ColdQueryLink link;
    long deadlineMs;
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
        final ColdQueryLink link, final long correlationId, final long deadlineMs, final PendingLookup creator,
        final DirectBuffer namespaceBuffer, final int namespaceOffset, final int namespaceLength)
    {
        this.active = true;
        this.sent = false;
        this.link = link;
        this.correlationId = correlationId;
        this.deadlineMs = deadlineMs;
        this.keyCount = 0;
        this.keyBytes = 0;
        this.waiterCount = 0;
        this.creatorIndex = creator.index;
        this.creatorGeneration = creator.generation;
        this.namespace.putBytes(0, namespaceBuffer, namespaceOffset, namespaceLength);
        this.namespaceLength = namespaceLength;
    }

    boolean acceptsKeysFrom(final PendingLookup lookup, final ColdQueryLink target, final int hashLength)
    {
        return active && !sent && link == target && creatorIndex == lookup.index &&
            creatorGeneration == lookup.generation && keyCount < CatalogLimits.MAX_COLD_QUERY_KEYS &&
            keyBytes + namespaceLength + hashLength <= CatalogLimits.MAX_COLD_QUERY_KEY_BYTES;
    }

    int addKey(final int shard, final StateKeyFlyweight key, final long fingerprint)
    {
        final int row = keyCount++;
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
