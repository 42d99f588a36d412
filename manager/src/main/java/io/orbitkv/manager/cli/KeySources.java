package io.orbitkv.manager.cli;

import io.orbitkv.client.OperationResult;
import io.orbitkv.codecs.engine.FailureReason;
import io.orbitkv.codecs.engine.KeyStatus;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;

/**
 * Where each key of a chain came from in the last lookup or read, and the request that carried it: the rows of
 * the client's {@link OperationResult}s laid side by side for the whole chain, each key's source taken from its
 * first candidate (a Read or a pinned Lookup with the peers flag names exactly one: the peer it came from, or the
 * peer holding it). Formats the CLI's per-key report: consecutive keys with the same {@link #label(int)} and the
 * same request are one {@link Range}; keys never attempted are one range whatever request carried them.
 */
public final class KeySources
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

    /**
     * Consecutive keys {@code [from, to]} with the same label and request.
     *
     * @param from      first key.
     * @param to        last key (inclusive).
     * @param label     {@link #label(int)} of every key.
     * @param bytes     sum of the keys' lengths.
     * @param request   the request that carried them, {@link #NOT_SENT} for keys not attempted.
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
