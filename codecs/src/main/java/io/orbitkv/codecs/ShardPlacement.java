package io.orbitkv.codecs;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * The immutable catalog placement of one cluster: a canonical host set and the host of each of the
 * {@link StateKeyShard#SHARD_COUNT} logical shards, chosen by equal-weight rendezvous hashing.
 *
 * <p>Score of node {@code n} for shard {@code s} (bytes concatenated):
 * <pre>
 *   SHA-256( SCORE_DOMAIN_TAG (ASCII) | 0x00 | s as 4-byte big-endian | n (UTF-8) )
 * </pre>
 * compared as a 32-byte unsigned big-endian number. The highest score hosts the shard; equal scores (never seen
 * in practice) go to the node id that sorts first. A shard's host depends only on the configured set, never on
 * which members are alive (design: temporary liveness changes do not alter assignments).
 *
 * <p>Fingerprint: the first 16 bytes of {@code SHA-256(FINGERPRINT_DOMAIN_TAG | 0x00 | canonicalConfig())},
 * lower-case hex, where the canonical config is {@code "shards=16;nodes=a,b,c"} with nodes sorted and unique.
 * Fixed vectors for other implementations: codecs/src/test/resources/shard-placement-vectors.json.
 */
public final class ShardPlacement
{
    /** Fewest catalog nodes (design: 1-16 stable Node IDs). */
    public static final int MIN_CATALOG_NODES = 1;

    /** Most catalog nodes (design: 1-16 stable Node IDs). */
    public static final int MAX_CATALOG_NODES = 16;

    /** Longest Node ID in bytes. */
    public static final int MAX_NODE_ID_LENGTH = 64;

    /** Domain tag of the rendezvous score; changing it moves every shard. */
    public static final String SCORE_DOMAIN_TAG = "orbitkv/v1/placement-score";

    /** Domain tag of the placement fingerprint. */
    public static final String FINGERPRINT_DOMAIN_TAG = "orbitkv/v1/placement-fingerprint";

    private static final Pattern NODE_ID = Pattern.compile("[A-Za-z0-9._-]{1," + MAX_NODE_ID_LENGTH + "}");
    private static final HexFormat HEX = HexFormat.of();

    private final List<String> nodes;
    private final String[] hostByShard;
    private final String fingerprint;

    private ShardPlacement(final List<String> nodes)
    {
        this.nodes = nodes;
        this.hostByShard = new String[StateKeyShard.SHARD_COUNT];
        for (int shard = 0; shard < StateKeyShard.SHARD_COUNT; shard++)
        {
            hostByShard[shard] = chooseHost(shard, nodes);
        }
        this.fingerprint = computeFingerprint(canonicalConfig(nodes));
    }

    /**
     * Placement of a catalog node set given in any order, possibly with duplicates.
     *
     * @param catalogNodes node ids.
     * @return the placement over the sorted, de-duplicated set.
     * @throws IllegalArgumentException if a node id is invalid or the set holds fewer than 1 or more than 16 ids.
     */
    public static ShardPlacement of(final List<String> catalogNodes)
    {
        return new ShardPlacement(canonicalNodes(catalogNodes));
    }

    /**
     * Parse a comma-separated node list as given on the command line ({@code --catalog-nodes a,b,c}).
     *
     * @param commaSeparated node ids separated by commas; blanks around ids are ignored.
     * @return the placement.
     */
    public static ShardPlacement parse(final String commaSeparated)
    {
        if (null == commaSeparated || commaSeparated.isBlank())
        {
            throw new IllegalArgumentException("--catalog-nodes must name 1-" + MAX_CATALOG_NODES + " node ids");
        }
        final List<String> ids = new ArrayList<>();
        for (final String part : commaSeparated.split(",", -1))
        {
            ids.add(part.trim());
        }
        return of(ids);
    }

    /**
     * Sorted, de-duplicated and validated node ids.
     *
     * @param catalogNodes node ids in any order.
     * @return an unmodifiable canonical list.
     */
    public static List<String> canonicalNodes(final List<String> catalogNodes)
    {
        final TreeSet<String> sorted = new TreeSet<>();
        for (final String id : catalogNodes)
        {
            checkNodeId(id);
            sorted.add(id);
        }
        if (sorted.size() < MIN_CATALOG_NODES || sorted.size() > MAX_CATALOG_NODES)
        {
            throw new IllegalArgumentException("--catalog-nodes must name " + MIN_CATALOG_NODES + "-" +
                MAX_CATALOG_NODES + " distinct node ids, got " + sorted.size() + ": " + sorted);
        }
        return Collections.unmodifiableList(new ArrayList<>(sorted));
    }

    /**
     * Validate a Node ID: 1-64 characters of {@code [A-Za-z0-9._-]} (safe in etcd keys and file names).
     *
     * @param id the node id.
     * @throws IllegalArgumentException if invalid.
     */
    public static void checkNodeId(final String id)
    {
        if (null == id || !NODE_ID.matcher(id).matches())
        {
            throw new IllegalArgumentException("node id must be 1-" + MAX_NODE_ID_LENGTH +
                " characters of [A-Za-z0-9._-]: '" + id + "'");
        }
    }

    /**
     * The canonical configuration text the fingerprint is computed over.
     *
     * @param canonicalNodes sorted unique ids.
     * @return e.g. {@code shards=16;nodes=a,b,c}.
     */
    public static String canonicalConfig(final List<String> canonicalNodes)
    {
        return "shards=" + StateKeyShard.SHARD_COUNT + ";nodes=" + String.join(",", canonicalNodes);
    }

    /**
     * Rendezvous score of a node for a shard.
     *
     * @param shard  shard in [0, 16).
     * @param nodeId node id.
     * @return the 32-byte score.
     */
    public static byte[] score(final int shard, final String nodeId)
    {
        final MessageDigest sha256 = sha256();
        sha256.update(SCORE_DOMAIN_TAG.getBytes(StandardCharsets.US_ASCII));
        sha256.update((byte)0);
        sha256.update(new byte[]{(byte)(shard >>> 24), (byte)(shard >>> 16), (byte)(shard >>> 8), (byte)shard});
        sha256.update(nodeId.getBytes(StandardCharsets.UTF_8));
        return sha256.digest();
    }

    private static String chooseHost(final int shard, final List<String> nodes)
    {
        String best = null;
        byte[] bestScore = null;
        for (final String node : nodes)
        {
            final byte[] score = score(shard, node);
            // Nodes are visited in sorted order, so on an exact tie the first (smallest) id is kept.
            if (null == bestScore || Arrays.compareUnsigned(score, bestScore) > 0)
            {
                best = node;
                bestScore = score;
            }
        }
        return best;
    }

    private static String computeFingerprint(final String canonicalConfig)
    {
        final MessageDigest sha256 = sha256();
        sha256.update(FINGERPRINT_DOMAIN_TAG.getBytes(StandardCharsets.US_ASCII));
        sha256.update((byte)0);
        sha256.update(canonicalConfig.getBytes(StandardCharsets.UTF_8));
        return HEX.formatHex(sha256.digest(), 0, 16);
    }

    private static MessageDigest sha256()
    {
        try
        {
            return MessageDigest.getInstance("SHA-256");
        }
        catch (final NoSuchAlgorithmException ex)
        {
            throw new IllegalStateException("SHA-256 is required by the JDK specification", ex);
        }
    }

    /**
     * Sorted unique catalog node ids.
     *
     * @return unmodifiable list.
     */
    public List<String> nodes()
    {
        return nodes;
    }

    /**
     * Host of a shard.
     *
     * @param shard shard in [0, 16).
     * @return its configured host node id.
     */
    public String hostOf(final int shard)
    {
        return hostByShard[shard];
    }

    /**
     * Fingerprint of the canonical configuration (32 hex characters).
     *
     * @return the fingerprint.
     */
    public String fingerprint()
    {
        return fingerprint;
    }

    public String canonicalConfig()
    {
        return canonicalConfig(nodes);
    }

    public boolean equals(final Object o)
    {
        return o instanceof ShardPlacement other && nodes.equals(other.nodes);
    }

    public int hashCode()
    {
        return nodes.hashCode();
    }

    public String toString()
    {
        return "ShardPlacement{nodes=" + nodes + ", fingerprint=" + fingerprint + '}';
    }
}
