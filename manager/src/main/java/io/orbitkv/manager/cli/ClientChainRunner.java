package io.orbitkv.manager.cli;

import io.orbitkv.client.EngineClient;
import io.orbitkv.client.KeyBatch;
import io.orbitkv.client.OperationResult;
import io.orbitkv.codecs.engine.KeyStatus;
import io.orbitkv.codecs.engine.StatusCode;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import org.agrona.BitUtil;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Moves a {@link BlockChain} through an attached {@link EngineClient}: blocks are staged in the data region in
 * windows (a chain may be larger than the region), per-key outcomes are kept for the whole chain. Used by the
 * CLI, the end-to-end tests and the bench.
 */
public final class ClientChainRunner
{
    private static final int WINDOW_KEYS = 4096;
    private static final int BLOCK_ALIGNMENT = 64;

    private final EngineClient client;
    private final BlockChain chain;
    private final byte[] namespace;
    private final KeyStatus[] statuses;
    private final int[] lengths;
    private final KeyBatch window;
    private final OperationResult windowResult;
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
        statuses = new KeyStatus[chain.blockCount()];
        lengths = new int[chain.blockCount()];
        window = new KeyBatch(Math.min(WINDOW_KEYS, chain.blockCount())).namespace(this.namespace);
        windowResult = new OperationResult(window.maxKeys());
        resetStatuses();
    }

    public int blockCount()
    {
        return chain.blockCount();
    }

    public KeyStatus keyStatus(final int index)
    {
        return statuses[index];
    }

    public int keyLength(final int index)
    {
        return lengths[index];
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
            final int end = packWindow(next, regionBytes, region);
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
        final KeyBatch batch = new KeyBatch(chain.blockCount()).namespace(namespace);
        for (int i = 0; i < chain.blockCount(); i++)
        {
            batch.addKey(chain.hashes(), chain.hashOffset(i), BlockChain.HASH_LENGTH);
        }
        final OperationResult result = client.lookup(batch, pin, peers, new OperationResult(chain.blockCount()));
        for (int i = 0; i < chain.blockCount(); i++)
        {
            statuses[i] = result.status(i);
            lengths[i] = result.length(i);
        }
        final long[] leaseIds = new long[result.leaseCount()];
        for (int i = 0; i < leaseIds.length; i++)
        {
            leaseIds[i] = result.leaseId(i);
        }
        final PeerCandidate[] candidates = new PeerCandidate[result.candidateCount()];
        for (int i = 0; i < candidates.length; i++)
        {
            final int owner = result.candidateOwnerIndex(i);
            candidates[i] = new PeerCandidate(
                result.candidateKeyIndex(i),
                result.ownerNodeId(owner),
                new UUID(result.ownerRuntimeUuidMsb(owner), result.ownerRuntimeUuidLsb(owner)).toString(),
                result.candidateTier(i),
                result.candidateInsertionSequence(i),
                result.candidateLength(i));
        }
        return new LookupSummary((int)result.value(), leaseIds,
            result.isOk() ? null : result.code(), result.isOk() ? null : result.message(),
            result.count(KeyStatus.PEER), candidates);
    }

    /**
     * Read the chain's leading resident blocks back and verify each byte against the chain.
     *
     * @return restored count, verified bytes and mismatches.
     */
    public ReadSummary read()
    {
        resetStatuses();
        final UnsafeBuffer region = client.dataBuffer();
        final long regionBytes = client.dataRegionBytes();
        int restored = 0;
        long verifiedBytes = 0;
        int mismatches = 0;
        int next = 0;
        while (next < chain.blockCount())
        {
            final int end = packWindow(next, regionBytes, null);
            if (end == next)
            {
                throw new IllegalArgumentException("block " + next + " does not fit the data region");
            }
            region.setMemory(0, (int)Math.min(windowBytes, regionBytes), (byte)0);
            client.read(window, 0, windowResult);
            for (int i = 0; i < end - next; i++)
            {
                final KeyStatus status = windowResult.status(i);
                statuses[next + i] = status;
                lengths[next + i] = windowResult.length(i);
                if (status == KeyStatus.DRAM || status == KeyStatus.SSD)
                {
                    restored++;
                    if (chain.verify(next + i, region, (int)window.offset(i), windowResult.length(i)))
                    {
                        verifiedBytes += windowResult.length(i);
                    }
                    else
                    {
                        mismatches++;
                    }
                }
            }
            if (!windowResult.isOk())
            {
                return new ReadSummary(restored, verifiedBytes, mismatches, windowResult.code(), windowResult.message());
            }
            if (windowResult.value() < end - next)
            {
                break;
            }
            next = end;
        }
        return new ReadSummary(restored, verifiedBytes, mismatches, null, null);
    }

    /**
     * Fill {@link #window} with the chain's keys from {@code next} on, laid out at aligned offsets from the start of
     * the data region, until the window or the region is full; {@link #windowBytes} is left at the aligned end of
     * the last block taken.
     *
     * @param next        index of the first block of the window.
     * @param regionBytes length of the data region.
     * @param fillInto    the data region to copy each block's bytes into (publish), or null to only lay out keys.
     * @return index past the last block taken; {@code next} when the first block does not fit.
     */
    private int packWindow(final int next, final long regionBytes, final UnsafeBuffer fillInto)
    {
        window.clear();
        long offset = 0;
        int end = next;
        while (end < chain.blockCount() && end - next < window.maxKeys())
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
        for (int i = 0; i < statuses.length; i++)
        {
            statuses[i] = KeyStatus.NOT_ATTEMPTED;
            lengths[i] = 0;
        }
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
     * @param peerKeys     keys answered PEER (only with the peers flag).
     * @param candidates   peer candidates of those keys, in key order.
     */
    public record LookupSummary(
        int prefixLength, long[] leaseIds, StatusCode errorCode, String errorMessage, int peerKeys, PeerCandidate[] candidates)
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
