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
import java.util.Locale;
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
                    sources.count(KeyStatus.PEER), candidates.toArray(new PeerCandidate[0]));
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
            sources.count(KeyStatus.PEER), candidates.toArray(new PeerCandidate[0]));
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

    /**
     * Where each key of a chain came from in the last lookup or read, and the request that carried it: the rows of
     * the client's {@link OperationResult}s laid side by side for the whole chain, each key's source taken from its
     * first candidate (a Read or a pinned Lookup with the peers flag names exactly one: the peer it came from, or the
     * peer holding it). Formats the CLI's per-key report: consecutive keys with the same {@link #label(int)} and the
     * same request are one {@link Range}; keys never attempted are one range whatever request carried them.
     */
    public static final class KeySources
    {
        /** {@link #request(int)} of a key no request carried. */
        public static final int NOT_SENT = -1;

        final KeyStatus[] statuses;
        final int[] lengths;
        private final FailureReason[] reasons;
        private final int[] sourceOwners;
        private final KeyStatus[] sourceTiers;
        private final int[] requests;
        private final boolean[] mismatched;
        private final long[] requestNs;
        private final List<String> ownerNodeIds = new ArrayList<>();
        private final List<UUID> ownerUuids = new ArrayList<>();
        private int requestCount;
        private long elapsedNs;

        /**
         * Sources of a chain of {@code keyCount} keys, all {@code NOT_ATTEMPTED}.
         *
         * @param keyCount keys in the chain.
         */
        public KeySources(final int keyCount)
        {
            statuses = new KeyStatus[keyCount];
            lengths = new int[keyCount];
            reasons = new FailureReason[keyCount];
            sourceOwners = new int[keyCount];
            sourceTiers = new KeyStatus[keyCount];
            requests = new int[keyCount];
            mismatched = new boolean[keyCount];
            requestNs = new long[keyCount];
            reset();
        }

        void reset()
        {
            for (int i = 0; i < statuses.length; i++)
            {
                statuses[i] = KeyStatus.NOT_ATTEMPTED;
                lengths[i] = 0;
                reasons[i] = FailureReason.NONE;
                sourceOwners[i] = -1;
                sourceTiers[i] = null;
                requests[i] = NOT_SENT;
                mismatched[i] = false;
            }
            ownerNodeIds.clear();
            ownerUuids.clear();
            requestCount = 0;
            elapsedNs = 0;
        }

        /**
         * Take the rows and peer sources of one answered request (or client call) for keys
         * {@code [base, base + keys)} of the chain.
         *
         * @param base      chain index of the result's key 0.
         * @param result    the client's result for those keys.
         * @param keys      how many keys the request carried.
         * @param requestNs how long it took.
         */
        public void record(final int base, final OperationResult result, final int keys, final long requestNs)
        {
            final int request = requestCount++;
            this.requestNs[request] = requestNs;
            for (int i = 0; i < keys; i++)
            {
                statuses[base + i] = result.status(i);
                lengths[base + i] = result.length(i);
                reasons[base + i] = result.reason(i);
                requests[base + i] = request;
            }
            for (int c = 0; c < result.candidateCount(); c++)
            {
                final int key = base + result.candidateKeyIndex(c);
                if (result.candidateKeyIndex(c) < keys && sourceOwners[key] < 0)
                {
                    sourceOwners[key] = owner(result, result.candidateOwnerIndex(c));
                    sourceTiers[key] = result.candidateTier(c);
                }
            }
        }

        /**
         * Mark a restored key whose bytes did not match the chain.
         *
         * @param key chain index.
         */
        public void mismatch(final int key)
        {
            mismatched[key] = true;
        }

        void elapsedNs(final long elapsedNs)
        {
            this.elapsedNs = elapsedNs;
        }

        /**
         * Wall time of the whole operation.
         *
         * @return nanoseconds.
         */
        public long elapsedNs()
        {
            return elapsedNs;
        }

        public int keyCount()
        {
            return statuses.length;
        }

        public KeyStatus status(final int key)
        {
            return statuses[key];
        }

        public int length(final int key)
        {
            return lengths[key];
        }

        public FailureReason reason(final int key)
        {
            return reasons[key];
        }

        public boolean mismatched(final int key)
        {
            return mismatched[key];
        }

        /**
         * The node id of the peer a key came from (or is held on), or null.
         *
         * @param key chain index.
         * @return node id or null.
         */
        public String sourceNode(final int key)
        {
            return sourceOwners[key] < 0 ? null : ownerNodeIds.get(sourceOwners[key]);
        }

        /**
         * The runtime UUID of the peer a key came from, or null.
         *
         * @param key chain index.
         * @return runtime UUID or null.
         */
        public UUID sourceRuntimeUuid(final int key)
        {
            return sourceOwners[key] < 0 ? null : ownerUuids.get(sourceOwners[key]);
        }

        /**
         * The tier of the peer's copy a key came from, or null.
         *
         * @param key chain index.
         * @return DRAM, SSD or null.
         */
        public KeyStatus sourceTier(final int key)
        {
            return sourceTiers[key];
        }

        /**
         * The request (0-based, in the order sent) that carried a key, or {@link #NOT_SENT}.
         *
         * @param key chain index.
         * @return request index.
         */
        public int request(final int key)
        {
            return requests[key];
        }

        /**
         * How long a request took.
         *
         * @param request request index.
         * @return nanoseconds.
         */
        public long requestNs(final int request)
        {
            return requestNs[request];
        }

        public int requestCount()
        {
            return requestCount;
        }

        /**
         * Keys with a status.
         *
         * @param status the status.
         * @return how many.
         */
        public int count(final KeyStatus status)
        {
            int n = 0;
            for (final KeyStatus s : statuses)
            {
                if (s == status)
                {
                    n++;
                }
            }
            return n;
        }

        /**
         * Bytes of the keys restored (read) or resident/held (lookup): {@code DRAM}, {@code SSD} and {@code PEER}.
         *
         * @return bytes.
         */
        public long restoredBytes()
        {
            long bytes = 0;
            for (int i = 0; i < statuses.length; i++)
            {
                if (isRestored(statuses[i]))
                {
                    bytes += lengths[i];
                }
            }
            return bytes;
        }

        /**
         * Keys served locally or from (held on) a peer.
         *
         * @param status a key status.
         * @return true for DRAM, SSD and PEER.
         */
        public static boolean isRestored(final KeyStatus status)
        {
            return status == KeyStatus.DRAM || status == KeyStatus.SSD || status == KeyStatus.PEER;
        }

        /**
         * Where a key came from: {@code LOCAL DRAM}, {@code LOCAL SSD}, {@code PEER <nodeId> <DRAM|SSD>} ({@code PEER ?}
         * when the answer named no source), {@code MISS}, {@code FAILED <reason>}, else the status name; a restored key
         * whose bytes did not match gets {@code MISMATCH} appended.
         *
         * @param key chain index.
         * @return the label.
         */
        public String label(final int key)
        {
            final KeyStatus status = statuses[key];
            final String label = switch (status)
            {
                case DRAM -> "LOCAL DRAM";
                case SSD -> "LOCAL SSD";
                case PEER -> sourceOwners[key] < 0 ? "PEER ?" :
                    "PEER " + ownerNodeIds.get(sourceOwners[key]) + " " + tierName(sourceTiers[key]);
                case FAILED -> "FAILED " + reasons[key].name();
                default -> status.name();
            };
            return mismatched[key] ? label + " MISMATCH" : label;
        }

        /**
         * The chain's keys as ranges of the same label and request.
         *
         * @return ranges in key order, covering every key once.
         */
        public List<Range> ranges()
        {
            final List<Range> ranges = new ArrayList<>();
            int from = 0;
            while (from < statuses.length)
            {
                final String label = label(from);
                final boolean notAttempted = statuses[from] == KeyStatus.NOT_ATTEMPTED;
                final int request = notAttempted ? NOT_SENT : requests[from];
                long bytes = lengths[from];
                int to = from;
                while (to + 1 < statuses.length && label.equals(label(to + 1)) &&
                    (notAttempted || requests[to + 1] == request))
                {
                    to++;
                    bytes += lengths[to];
                }
                ranges.add(new Range(from, to, label, bytes, request, request == NOT_SENT ? 0 : requestNs[request]));
                from = to + 1;
            }
            return ranges;
        }

        /**
         * The per-key report, one line per {@link Range}.
         *
         * @return the lines.
         */
        public List<String> lines()
        {
            final List<String> lines = new ArrayList<>();
            for (final Range range : ranges())
            {
                lines.add(range.line());
            }
            return lines;
        }

        /**
         * {@code read: R of N blocks restored (L local, P peer), B bytes, T ms, mismatches: M}.
         *
         * @param mismatches restored blocks whose bytes did not match.
         * @return the summary line.
         */
        public String readSummary(final int mismatches)
        {
            return summary("read", "restored") + ", mismatches: " + mismatches;
        }

        /**
         * {@code lookup: H of N blocks held (L local, P peer), B bytes, T ms}: what a pinned Lookup's leases cover.
         *
         * @return the summary line.
         */
        public String lookupSummary()
        {
            return summary("lookup", "held");
        }

        private String summary(final String operation, final String verb)
        {
            final int local = count(KeyStatus.DRAM) + count(KeyStatus.SSD);
            final int peer = count(KeyStatus.PEER);
            return operation + ": " + (local + peer) + " of " + statuses.length + " blocks " + verb + " (" + local +
                " local, " + peer + " peer), " + restoredBytes() + " bytes, " + formatMs(elapsedNs) + " ms";
        }

        private int owner(final OperationResult result, final int owner)
        {
            final UUID uuid = new UUID(result.ownerRuntimeUuidMsb(owner), result.ownerRuntimeUuidLsb(owner));
            final int known = ownerUuids.indexOf(uuid);
            if (known >= 0)
            {
                return known;
            }
            ownerUuids.add(uuid);
            ownerNodeIds.add(result.ownerNodeId(owner));
            return ownerUuids.size() - 1;
        }

        private static String tierName(final KeyStatus tier)
        {
            return tier == KeyStatus.DRAM || tier == KeyStatus.SSD ? tier.name() : "?";
        }

        static String formatMs(final long ns)
        {
            return String.format(Locale.ROOT, "%.3f", ns / 1_000_000.0);
        }
    }

    /**
     * Consecutive keys {@code [from, to]} with the same label and request.
     *
     * @param from      first key.
     * @param to        last key (inclusive).
     * @param label     {@link KeySources#label(int)} of every key.
     * @param bytes     sum of the keys' lengths.
     * @param request   the request that carried them, {@link KeySources#NOT_SENT} for keys not attempted.
     * @param requestNs how long that request took (0 when not sent).
     */
    public record Range(int from, int to, String label, long bytes, int request, long requestNs)
    {
        /**
         * {@code keys 0-31: LOCAL DRAM, 2097152 bytes, request 1 0.412 ms} ({@code key 7: ...} for one key; no bytes
         * when 0, no request for keys not attempted; requests counted from 1).
         *
         * @return the report line.
         */
        public String line()
        {
            final StringBuilder line = new StringBuilder();
            line.append(from == to ? "key " + from : "keys " + from + "-" + to).append(": ").append(label);
            if (bytes > 0)
            {
                line.append(", ").append(bytes).append(" bytes");
            }
            if (request != KeySources.NOT_SENT)
            {
                line.append(", request ").append(request + 1).append(' ').append(KeySources.formatMs(requestNs)).append(" ms");
            }
            return line.toString();
        }
    }
}
