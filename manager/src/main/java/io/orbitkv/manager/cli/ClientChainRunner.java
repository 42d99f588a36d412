package io.orbitkv.manager.cli;

import io.orbitkv.client.EngineClient;
import io.orbitkv.client.KeyBatch;
import io.orbitkv.client.OperationResult;
import io.orbitkv.codecs.engine.FailureReason;
import io.orbitkv.codecs.engine.KeyStatus;
import io.orbitkv.codecs.engine.StatusCode;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.agrona.BitUtil;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Moves a {@link BlockChain} through an attached {@link EngineClient}: blocks are staged in the data region in
 * windows (a chain may be larger than the region), per-key outcomes are kept for the whole chain in a
 * {@link KeySources} (status, length, failure reason, peer source, the request that carried the key and how long it
 * took). Lookups and reads send one request per client call (windows of at most
 * {@link EngineClient#maxKeysPerRequest()} keys) so that each key's request is timed. Used by the CLI, the
 * end-to-end tests and the bench.
 */
public final class ClientChainRunner
{
    private static final int WINDOW_KEYS = 4096;
    private static final int BLOCK_ALIGNMENT = 64;

    private final EngineClient client;
    private final BlockChain chain;
    private final byte[] namespace;
    private final KeySources sources;
    private final KeyStatus[] statuses;
    private final int[] lengths;
    private final KeyBatch window;
    private final OperationResult windowResult;
    private final int requestKeys;
    private long windowBytes;

    /**
     * Runner over one chain.
     *
     * @param client    attached client.
     * @param chain     the chain.
     * @param namespace key namespace (US-ASCII/UTF-8 bytes).
     */
    public ClientChainRunner(final EngineClient client, final BlockChain chain, final String namespace)
    {
        this.client = client;
        this.chain = chain;
        this.namespace = namespace.getBytes(StandardCharsets.UTF_8);
        sources = new KeySources(chain.blockCount());
        statuses = sources.statuses;
        lengths = sources.lengths;
        window = new KeyBatch(Math.min(WINDOW_KEYS, chain.blockCount())).namespace(this.namespace);
        windowResult = new OperationResult(window.maxKeys());
        requestKeys = Math.min(window.maxKeys(), client.maxKeysPerRequest());
        resetStatuses();
    }

    /**
     * Per-key outcomes of the last operation, with peer sources and request times.
     *
     * @return the key sources of the whole chain.
     */
    public KeySources sources()
    {
        return sources;
    }

    public int blockCount()
    {
        return chain.blockCount();
    }

    public KeyStatus keyStatus(final int index)
    {
        return statuses[index];
    }

    /**
     * Publish every block of the chain.
     *
     * @return counts by outcome.
     */
    public PublishSummary publish()
    {
        resetStatuses();
        final UnsafeBuffer region = client.dataBuffer();
        final long regionBytes = client.dataRegionBytes();
        int stored = 0;
        int alreadyResident = 0;
        int noSpace = 0;
        long storedBytes = 0;
        int requests = 0;
        int next = 0;
        while (next < chain.blockCount())
        {
            final int end = packWindow(next, window.maxKeys(), regionBytes, region);
            if (end == next)
            {
                throw new IllegalArgumentException("block " + next + " of " + chain.blockLength(next) +
                    " bytes does not fit the data region of " + regionBytes + " bytes");
            }
            client.publish(window, windowResult);
            requests += windowResult.requestCount();
            for (int i = 0; i < end - next; i++)
            {
                final KeyStatus status = windowResult.status(i);
                statuses[next + i] = status;
                lengths[next + i] = chain.blockLength(next + i);
                if (status == KeyStatus.STORED)
                {
                    stored++;
                    storedBytes += chain.blockLength(next + i);
                }
                else if (status == KeyStatus.ALREADY_RESIDENT)
                {
                    alreadyResident++;
                }
                else if (status == KeyStatus.NO_SPACE)
                {
                    noSpace++;
                }
            }
            if (!windowResult.isOk())
            {
                return new PublishSummary(stored, alreadyResident, noSpace, storedBytes, requests,
                    windowResult.code(), windowResult.message());
            }
            next = end;
        }
        return new PublishSummary(stored, alreadyResident, noSpace, storedBytes, requests, null, null);
    }

    /**
     * Look up the whole chain in one batch (the client splits it into requests).
     *
     * @param pin pin the resident prefix.
     * @return prefix length and leases.
     */
    public LookupSummary lookup(final boolean pin)
    {
        return lookup(pin, false);
    }

    /**
     * Look up the whole chain in one batch, optionally asking for peer candidates past the local prefix.
     *
     * @param pin   pin the resident prefix.
     * @param peers set the Lookup peers flag.
     * @return prefix length, leases, PEER key count and the candidates.
     */
    public LookupSummary lookup(final boolean pin, final boolean peers)
    {
        resetStatuses();
        final long startNs = System.nanoTime();
        final KeyBatch batch = new KeyBatch(requestKeys).namespace(namespace);
        final OperationResult result = new OperationResult(requestKeys);
        final List<Long> leaseIds = new ArrayList<>();
        final List<PeerCandidate> candidates = new ArrayList<>();
        long covered = 0;
        int next = 0;
        while (next < chain.blockCount())
        {
            final int end = Math.min(chain.blockCount(), next + requestKeys);
            batch.clear();
            for (int i = next; i < end; i++)
            {
                batch.addKey(chain.hashes(), chain.hashOffset(i), BlockChain.HASH_LENGTH);
            }
            final long requestStartNs = System.nanoTime();
            client.lookup(batch, pin, peers, result);
            sources.record(next, result, end - next, System.nanoTime() - requestStartNs);
            for (int c = 0; c < result.candidateCount(); c++)
            {
                final int owner = result.candidateOwnerIndex(c);
                candidates.add(new PeerCandidate(
                    next + result.candidateKeyIndex(c),
                    result.ownerNodeId(owner),
                    new UUID(result.ownerRuntimeUuidMsb(owner), result.ownerRuntimeUuidLsb(owner)).toString(),
                    result.candidateTier(c),
                    result.candidateInsertionSequence(c),
                    result.candidateLength(c)));
            }
            if (!result.isOk())
            {
                sources.elapsedNs(System.nanoTime() - startNs);
                return new LookupSummary((int)covered, toArray(leaseIds), result.code(), result.message(),
                    sources.count(KeyStatus.PEER), unavailableKeys(), candidates.toArray(new PeerCandidate[0]));
            }
            for (int i = 0; i < result.leaseCount(); i++)
            {
                leaseIds.add(result.leaseId(i));
            }
            covered += result.value();
            // as the client does within one batch: stop after the first request whose answer is short
            if (result.value() < end - next)
            {
                break;
            }
            next = end;
        }
        sources.elapsedNs(System.nanoTime() - startNs);
        return new LookupSummary((int)covered, toArray(leaseIds), null, null,
            sources.count(KeyStatus.PEER), unavailableKeys(), candidates.toArray(new PeerCandidate[0]));
    }

    /**
     * @return keys answered FAILED because no copy of their catalog shard could answer (not proven absent).
     */
    private int unavailableKeys()
    {
        int count = 0;
        for (int i = 0; i < sources.keyCount(); i++)
        {
            if (KeyStatus.FAILED == sources.status(i) && FailureReason.CATALOG_UNAVAILABLE == sources.reason(i))
            {
                count++;
            }
        }
        return count;
    }

    /**
     * Read the chain's leading resident blocks back and verify each byte against the chain.
     *
     * @return restored count, verified bytes and mismatches.
     */
    public ReadSummary read()
    {
        return read(false);
    }

    /**
     * Read the chain's leading blocks back, with the peers flag also those other Managers hold, and verify each
     * restored byte (local and peer) against the chain.
     *
     * @param peers set the Read peers flag.
     * @return restored count, verified bytes and mismatches.
     */
    public ReadSummary read(final boolean peers)
    {
        resetStatuses();
        final long startNs = System.nanoTime();
        final UnsafeBuffer region = client.dataBuffer();
        final long regionBytes = client.dataRegionBytes();
        int restored = 0;
        long verifiedBytes = 0;
        int mismatches = 0;
        int next = 0;
        while (next < chain.blockCount())
        {
            final int end = packWindow(next, requestKeys, regionBytes, null);
            if (end == next)
            {
                throw new IllegalArgumentException("block " + next + " does not fit the data region");
            }
            region.setMemory(0, (int)Math.min(windowBytes, regionBytes), (byte)0);
            final long requestStartNs = System.nanoTime();
            client.read(window, 0, peers, windowResult);
            sources.record(next, windowResult, end - next, System.nanoTime() - requestStartNs);
            for (int i = 0; i < end - next; i++)
            {
                if (KeySources.isRestored(windowResult.status(i)))
                {
                    restored++;
                    if (chain.verify(next + i, region, (int)window.offset(i), windowResult.length(i)))
                    {
                        verifiedBytes += windowResult.length(i);
                    }
                    else
                    {
                        mismatches++;
                        sources.mismatch(next + i);
                    }
                }
            }
            if (!windowResult.isOk())
            {
                sources.elapsedNs(System.nanoTime() - startNs);
                return new ReadSummary(restored, verifiedBytes, mismatches, windowResult.code(), windowResult.message());
            }
            if (windowResult.value() < end - next)
            {
                break;
            }
            next = end;
        }
        sources.elapsedNs(System.nanoTime() - startNs);
        return new ReadSummary(restored, verifiedBytes, mismatches, null, null);
    }

    /**
     * Fill {@link #window} with the chain's keys from {@code next} on, laid out at aligned offsets from the start of
     * the data region, until the window or the region is full; {@link #windowBytes} is left at the aligned end of
     * the last block taken.
     *
     * @param next        index of the first block of the window.
     * @param maxKeys     most keys to take.
     * @param regionBytes length of the data region.
     * @param fillInto    the data region to copy each block's bytes into (publish), or null to only lay out keys.
     * @return index past the last block taken; {@code next} when the first block does not fit.
     */
    private int packWindow(final int next, final int maxKeys, final long regionBytes, final UnsafeBuffer fillInto)
    {
        window.clear();
        long offset = 0;
        int end = next;
        while (end < chain.blockCount() && end - next < maxKeys)
        {
            final int length = chain.blockLength(end);
            if (offset + length > regionBytes)
            {
                break;
            }
            if (fillInto != null)
            {
                chain.fill(end, fillInto, (int)offset);
            }
            window.addKey(chain.hashes(), chain.hashOffset(end), BlockChain.HASH_LENGTH, offset, length);
            offset = BitUtil.align(offset + length, BLOCK_ALIGNMENT);
            end++;
        }
        windowBytes = offset;
        return end;
    }

    private void resetStatuses()
    {
        sources.reset();
    }

    private static long[] toArray(final List<Long> values)
    {
        final long[] array = new long[values.size()];
        for (int i = 0; i < array.length; i++)
        {
            array[i] = values.get(i);
        }
        return array;
    }

    /**
     * Outcome of {@link #publish()}.
     *
     * @param stored          blocks copied into the pool.
     * @param alreadyResident blocks found resident.
     * @param noSpace         blocks refused for lack of space.
     * @param storedBytes     bytes of the stored blocks.
     * @param requests        requests sent.
     * @param errorCode       first non-OK code, or null.
     * @param errorMessage    its message, or null.
     */
    public record PublishSummary(
        int stored, int alreadyResident, int noSpace, long storedBytes, int requests, StatusCode errorCode, String errorMessage)
    {
    }

    /**
     * Outcome of {@link #lookup(boolean, boolean)}.
     *
     * @param prefixLength resident prefix length.
     * @param leaseIds     leases when pinned.
     * @param errorCode    first non-OK code, or null.
     * @param errorMessage its message, or null.
     * @param peerKeys        keys answered PEER (only with the peers flag).
     * @param unavailableKeys keys no copy of their catalog shard could answer for (FAILED CATALOG_UNAVAILABLE).
     * @param candidates      peer candidates of those keys, in key order.
     */
    public record LookupSummary(
        int prefixLength,
        long[] leaseIds,
        StatusCode errorCode,
        String errorMessage,
        int peerKeys,
        int unavailableKeys,
        PeerCandidate[] candidates)
    {
    }

    /**
     * A copy of a chain key on another Manager.
     *
     * @param key               index of the key in the chain.
     * @param ownerNode         the owner's node id.
     * @param runtimeUuid       the owner's runtime UUID.
     * @param tier              the owner's tier (DRAM or SSD).
     * @param insertionSequence the owner's insertion sequence of the block.
     * @param bytes             block length in bytes.
     */
    public record PeerCandidate(
        int key, String ownerNode, String runtimeUuid, KeyStatus tier, long insertionSequence, int bytes)
    {
    }

    /**
     * Outcome of {@link #read()}.
     *
     * @param restored      blocks restored.
     * @param verifiedBytes bytes of restored blocks that match the chain exactly.
     * @param mismatches    restored blocks that do not match.
     * @param errorCode     first non-OK code, or null.
     * @param errorMessage  its message, or null.
     */
    public record ReadSummary(int restored, long verifiedBytes, int mismatches, StatusCode errorCode, String errorMessage)
    {
    }
}
