package io.orbitkv.codecs;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.StringJoiner;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * The immutable catalog placement of one cluster: a canonical host set, a replica count R and the R hosts of each
 * of the {@link StateKeyShard#SHARD_COUNT} logical shards, chosen by weighted rendezvous hashing.
 *
 * <p>Score of node {@code n} for shard {@code s} (bytes concatenated):
 * <pre>
 *   SHA-256( SCORE_DOMAIN_TAG (ASCII) | 0x00 | s as 4-byte big-endian | n (UTF-8) )
 * </pre>
 * compared as a 32-byte unsigned big-endian number. A shard's replicas are the R nodes with the highest scores, in
 * descending order (replica 0, its first choice, is {@link #hostOf}); equal scores (never seen in practice) rank the
 * node id that sorts first higher. With fewer nodes than R, every node holds every shard. A shard's replicas depend
 * only on the configured set and R, never on which members are alive (design: temporary liveness changes do not
 * alter assignments), and adding or removing one node moves only the replicas that node gains or loses. Nodes may
 * carry a failure domain, part of the placement (and its fingerprint) rather than of the live member records: a
 * shard's copies then take, by rank, a node of each domain not used yet before a second node of any domain.
 *
 * <p>Capacity weights: a node may carry an integer weight in [{@link #MIN_WEIGHT}, {@link #MAX_WEIGHT}] (1 when not
 * given), and a node of weight w holds about w times the shards of a node of weight 1. With every weight equal the
 * ranking is the plain score order above (placements without weights are unchanged); otherwise a node ranks by
 * {@code w / -ln(u)}, where u = (the score's first 53 bits + 0.5) / 2^53, computed with {@link StrictMath#log} (ties:
 * the score, then the id). An agreed seed, when set, is appended to the score input
 * ({@code ... | n (UTF-8) | 0x00 | seed (UTF-8)}): the same nodes under another seed place shards independently.
 *
 * <p>Fingerprint: the first 16 bytes of {@code SHA-256(FINGERPRINT_DOMAIN_TAG | 0x00 | canonicalConfig())},
 * lower-case hex, where the canonical config is {@code "shards=16;nodes=a,b,c"} with nodes sorted and unique for one
 * replica, and {@code "shards=16;replicas=3;nodes=a,b,c"} for more: a placement with another R never matches. Domains,
 * weights other than 1 and a seed are appended when present: {@code ;domains=a@r1,b@r2;weights=a=2;seed=s1}.
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

    /** Fewest copies of each shard a placement may ask for. */
    public static final int MIN_REPLICAS = 1;

    /** Most copies of each shard a placement may ask for. */
    public static final int MAX_REPLICAS = 5;

    /** Lightest capacity weight of a node. */
    public static final int MIN_WEIGHT = 1;

    /** Heaviest capacity weight of a node. */
    public static final int MAX_WEIGHT = 1000;

    /** Domain tag of the rendezvous score; changing it moves every shard. */
    public static final String SCORE_DOMAIN_TAG = "orbitkv/v1/placement-score";

    /** Domain tag of the placement fingerprint. */
    public static final String FINGERPRINT_DOMAIN_TAG = "orbitkv/v1/placement-fingerprint";

    private static final Pattern NODE_ID = Pattern.compile("[A-Za-z0-9._-]{1," + MAX_NODE_ID_LENGTH + "}");
    private static final HexFormat HEX = HexFormat.of();

    private final List<String> nodes;
    private final int replicas;
    private final Map<String, String> domains;
    private final Map<String, Integer> weights;
    private final String seed;
    private final String[][] replicasByShard;
    private final String fingerprint;

    private ShardPlacement(
        final List<String> nodes,
        final int replicas,
        final Map<String, String> domains,
        final Map<String, Integer> weights,
        final String seed)
    {
        if (replicas < MIN_REPLICAS || replicas > MAX_REPLICAS)
        {
            throw new IllegalArgumentException(
                "--catalog-replicas must be " + MIN_REPLICAS + "-" + MAX_REPLICAS + ", got " + replicas);
        }
        for (final Map.Entry<String, String> domain : domains.entrySet())
        {
            if (!nodes.contains(domain.getKey()))
            {
                throw new IllegalArgumentException("failure domain of '" + domain.getKey() + "', not a catalog node");
            }
            checkLabel("failure domain", domain.getValue());
        }
        final TreeMap<String, Integer> heavier = new TreeMap<>();
        for (final Map.Entry<String, Integer> weight : weights.entrySet())
        {
            if (!nodes.contains(weight.getKey()))
            {
                throw new IllegalArgumentException("weight of '" + weight.getKey() + "', not a catalog node");
            }
            if (weight.getValue() < MIN_WEIGHT || weight.getValue() > MAX_WEIGHT)
            {
                throw new IllegalArgumentException("weight of '" + weight.getKey() + "' must be " + MIN_WEIGHT + "-" +
                    MAX_WEIGHT + ", got " + weight.getValue());
            }
            if (MIN_WEIGHT != weight.getValue())
            {
                heavier.put(weight.getKey(), weight.getValue());
            }
        }
        if (!seed.isEmpty())
        {
            checkLabel("placement seed", seed);
        }
        this.nodes = nodes;
        this.replicas = replicas;
        this.domains = Collections.unmodifiableMap(new TreeMap<>(domains));
        this.weights = Collections.unmodifiableMap(heavier);
        this.seed = seed;
        this.replicasByShard = new String[StateKeyShard.SHARD_COUNT][];
        for (int shard = 0; shard < StateKeyShard.SHARD_COUNT; shard++)
        {
            replicasByShard[shard] =
                rank(shard, nodes, Math.min(replicas, nodes.size()), this.domains, this.weights, seed);
        }
        this.fingerprint = computeFingerprint(canonicalConfig(nodes, replicas, this.domains, this.weights, seed));
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
        return of(catalogNodes, MIN_REPLICAS);
    }

    /**
     * Placement of a node set with {@code replicas} copies of each shard.
     *
     * @param catalogNodes node ids, any order; duplicates collapse.
     * @param replicas     copies per shard, in [{@link #MIN_REPLICAS}, {@link #MAX_REPLICAS}].
     * @return the placement.
     */
    public static ShardPlacement of(final List<String> catalogNodes, final int replicas)
    {
        return of(catalogNodes, replicas, Map.of());
    }

    /**
     * Placement of a node set with {@code replicas} copies of each shard, spread over failure domains: a shard's
     * copies go to nodes of distinct domains first, by rank, and only then to a second node of a domain already used.
     * A node without a domain is a domain of its own.
     *
     * @param catalogNodes node ids, any order; duplicates collapse.
     * @param replicas     copies per shard.
     * @param domains      failure domain label of some or all nodes.
     * @return the placement.
     */
    public static ShardPlacement of(
        final List<String> catalogNodes, final int replicas, final Map<String, String> domains)
    {
        return of(catalogNodes, replicas, domains, Map.of(), "");
    }

    /**
     * Placement of a node set with copies, failure domains, capacity weights and a seed.
     *
     * @param catalogNodes node ids, any order; duplicates collapse.
     * @param replicas     copies per shard.
     * @param domains      failure domain label of some or all nodes.
     * @param weights      capacity weight of some or all nodes (1 for the others).
     * @param seed         agreed seed of the scores, "" for none.
     * @return the placement.
     */
    public static ShardPlacement of(
        final List<String> catalogNodes,
        final int replicas,
        final Map<String, String> domains,
        final Map<String, Integer> weights,
        final String seed)
    {
        return new ShardPlacement(canonicalNodes(catalogNodes), replicas, domains, weights, seed);
    }

    /**
     * @param newSeed the agreed seed of the scores, "" for none.
     * @return this placement under another seed.
     */
    public ShardPlacement withSeed(final String newSeed)
    {
        return seed.equals(newSeed) ? this : new ShardPlacement(nodes, replicas, domains, weights, newSeed);
    }

    /**
     * Parse a comma-separated node list as given on the command line ({@code --catalog-nodes a,b,c}).
     *
     * @param commaSeparated node ids separated by commas; blanks around ids are ignored.
     * @return the placement, one copy per shard.
     */
    public static ShardPlacement parse(final String commaSeparated)
    {
        return parse(commaSeparated, MIN_REPLICAS);
    }

    /**
     * Parse a comma-separated node list with a replica count ({@code --catalog-nodes a,b,c --catalog-replicas 3});
     * a node may name its failure domain after an {@code @} ({@code a@rack1,b@rack1,c@rack2}) and then its capacity
     * weight after an {@code =} ({@code a=2,b@rack2=3,c}).
     *
     * @param commaSeparated node ids separated by commas, each optionally {@code @DOMAIN}; blanks around ignored.
     * @param replicas       copies per shard.
     * @return the placement.
     */
    public static ShardPlacement parse(final String commaSeparated, final int replicas)
    {
        if (null == commaSeparated || commaSeparated.isBlank())
        {
            throw new IllegalArgumentException("--catalog-nodes must name 1-" + MAX_CATALOG_NODES + " node ids");
        }
        final List<String> ids = new ArrayList<>();
        final Map<String, String> domains = new TreeMap<>();
        final Map<String, Integer> weights = new TreeMap<>();
        for (final String part : commaSeparated.split(",", -1))
        {
            String entry = part.trim();
            final int equals = entry.indexOf('=');
            if (equals >= 0)
            {
                final String weight = entry.substring(equals + 1);
                entry = entry.substring(0, equals);
                try
                {
                    weights.put(entry.indexOf('@') < 0 ? entry : entry.substring(0, entry.indexOf('@')),
                        Integer.parseInt(weight));
                }
                catch (final NumberFormatException ex)
                {
                    throw new IllegalArgumentException("capacity weight must be an integer " + MIN_WEIGHT + "-" +
                        MAX_WEIGHT + ": '" + part.trim() + "'");
                }
            }
            final int at = entry.indexOf('@');
            final String id = at < 0 ? entry : entry.substring(0, at);
            ids.add(id);
            if (at >= 0)
            {
                domains.put(id, entry.substring(at + 1));
            }
        }
        return of(ids, replicas, domains, weights, "");
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
        checkLabel("node id", id);
    }

    private static void checkLabel(final String what, final String label)
    {
        if (null == label || !NODE_ID.matcher(label).matches())
        {
            throw new IllegalArgumentException(what + " must be 1-" + MAX_NODE_ID_LENGTH +
                " characters of [A-Za-z0-9._-]: '" + label + "'");
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
        return canonicalConfig(canonicalNodes, MIN_REPLICAS);
    }

    /**
     * The canonical text the fingerprint is computed over; one replica keeps the text it had before replicas existed.
     *
     * @param canonicalNodes sorted unique node ids.
     * @param replicas       copies per shard.
     * @return e.g. {@code shards=16;replicas=3;nodes=a,b,c}.
     */
    public static String canonicalConfig(final List<String> canonicalNodes, final int replicas)
    {
        return canonicalConfig(canonicalNodes, replicas, Map.of());
    }

    /**
     * As {@link #canonicalConfig(List, int)}, with the failure domains appended when there are any:
     * {@code ;domains=a@rack1,b@rack2} (by node id).
     */
    public static String canonicalConfig(
        final List<String> canonicalNodes, final int replicas, final Map<String, String> domains)
    {
        return canonicalConfig(canonicalNodes, replicas, domains, Map.of(), "");
    }

    /**
     * As {@link #canonicalConfig(List, int, Map)}, with the weights other than 1 ({@code ;weights=a=2,c=3}, by node
     * id) and the seed ({@code ;seed=s1}) appended when there are any.
     */
    public static String canonicalConfig(
        final List<String> canonicalNodes,
        final int replicas,
        final Map<String, String> domains,
        final Map<String, Integer> weights,
        final String seed)
    {
        final StringBuilder text = new StringBuilder("shards=").append(StateKeyShard.SHARD_COUNT);
        if (MIN_REPLICAS != replicas)
        {
            text.append(";replicas=").append(replicas);
        }
        text.append(";nodes=").append(String.join(",", canonicalNodes));
        if (!domains.isEmpty())
        {
            final StringJoiner joined = new StringJoiner(",", ";domains=", "");
            new TreeMap<>(domains).forEach((node, domain) -> joined.add(node + "@" + domain));
            text.append(joined);
        }
        final StringJoiner heavier = new StringJoiner(",", ";weights=", "").setEmptyValue("");
        new TreeMap<>(weights).forEach((node, weight) ->
        {
            if (MIN_WEIGHT != weight)
            {
                heavier.add(node + "=" + weight);
            }
        });
        text.append(heavier);
        if (!seed.isEmpty())
        {
            text.append(";seed=").append(seed);
        }
        return text.toString();
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
        return score(shard, nodeId, "");
    }

    /**
     * Rendezvous score of a node for a shard under a seed.
     *
     * @param shard  shard in [0, 16).
     * @param nodeId node id.
     * @param seed   agreed seed, "" for none (the unseeded score).
     * @return the 32-byte score.
     */
    public static byte[] score(final int shard, final String nodeId, final String seed)
    {
        final MessageDigest sha256 = sha256();
        sha256.update(SCORE_DOMAIN_TAG.getBytes(StandardCharsets.US_ASCII));
        sha256.update((byte)0);
        sha256.update(new byte[]{(byte)(shard >>> 24), (byte)(shard >>> 16), (byte)(shard >>> 8), (byte)shard});
        sha256.update(nodeId.getBytes(StandardCharsets.UTF_8));
        if (!seed.isEmpty())
        {
            sha256.update((byte)0);
            sha256.update(seed.getBytes(StandardCharsets.UTF_8));
        }
        return sha256.digest();
    }

    /**
     * The weighted rendezvous key of a score: {@code weight / -ln(u)}, u the score's first 53 bits (+ 0.5) over
     * 2^53, in (0, 1).
     *
     * @param score  a 32-byte score.
     * @param weight the node's capacity weight.
     * @return the key; higher ranks first.
     */
    public static double weightedKey(final byte[] score, final int weight)
    {
        long top = 0;
        for (int i = 0; i < 8; i++)
        {
            top = (top << 8) | (score[i] & 0xFF);
        }
        final double u = ((top >>> 11) + 0.5) / (double)(1L << 53);
        return weight / -StrictMath.log(u);
    }

    private static String[] rank(
        final int shard,
        final List<String> nodes,
        final int count,
        final Map<String, String> domains,
        final Map<String, Integer> weights,
        final String seed)
    {
        final byte[][] scores = new byte[nodes.size()][];
        final double[] keys = new double[nodes.size()];
        final Integer[] order = new Integer[nodes.size()];
        for (int i = 0; i < order.length; i++)
        {
            scores[i] = score(shard, nodes.get(i), seed);
            keys[i] = weights.isEmpty() ? 0 : weightedKey(scores[i], weights.getOrDefault(nodes.get(i), MIN_WEIGHT));
            order[i] = i;
        }
        // Highest weighted key first (all 0 when every weight is 1), then highest score; nodes are sorted, so on an
        // exact tie the smaller index (id) ranks higher.
        Arrays.sort(order, (a, b) ->
        {
            final int byKey = Double.compare(keys[b], keys[a]);
            final int byScore = 0 != byKey ? byKey : Arrays.compareUnsigned(scores[b], scores[a]);
            return 0 != byScore ? byScore : Integer.compare(a, b);
        });
        // By rank, a node of a domain no earlier copy is in first; then the rest, still by rank.
        final String[] ranked = new String[count];
        final boolean[] taken = new boolean[order.length];
        final Set<String> used = new HashSet<>();
        int filled = 0;
        for (int i = 0; i < order.length && filled < count; i++)
        {
            final String node = nodes.get(order[i]);
            if (used.add(domains.getOrDefault(node, "@" + node)))
            {
                ranked[filled++] = node;
                taken[i] = true;
            }
        }
        for (int i = 0; i < order.length && filled < count; i++)
        {
            if (!taken[i])
            {
                ranked[filled++] = nodes.get(order[i]);
            }
        }
        return ranked;
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
        return replicasByShard[shard][0];
    }

    /**
     * @return the copies per shard asked for (R).
     */
    public int replicas()
    {
        return replicas;
    }

    /**
     * @return the copies each shard really has: R, or every node when there are fewer nodes than R.
     */
    public int replicaCount()
    {
        return replicasByShard[0].length;
    }

    /**
     * @param shard   shard in [0, 16).
     * @param replica rank in [0, {@link #replicaCount()}).
     * @return the node holding that copy of the shard.
     */
    public String replicaOf(final int shard, final int replica)
    {
        return replicasByShard[shard][replica];
    }

    /**
     * @param shard  shard in [0, 16).
     * @param nodeId a node id.
     * @return the node's rank among the shard's replicas, or -1 when it holds no copy.
     */
    public int replicaIndex(final int shard, final String nodeId)
    {
        final String[] ranked = replicasByShard[shard];
        for (int i = 0; i < ranked.length; i++)
        {
            if (ranked[i].equals(nodeId))
            {
                return i;
            }
        }
        return -1;
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

    /**
     * The 64-bit placement fingerprint routes carry at a placement generation. Generation 1 carries the first 64 bits
     * of {@link #fingerprint()} (what routes carried before generations existed); a later generation carries the
     * first 64 bits of {@code SHA-256(FINGERPRINT_DOMAIN_TAG | 0x00 | canonicalConfig() | ";generation=" | g)}, so a
     * route sent under a stale generation is refused even when that generation had the same nodes.
     *
     * @param generation placement generation, 1 or more.
     * @return the route fingerprint.
     */
    public long routeFingerprint(final long generation)
    {
        if (generation < 1)
        {
            throw new IllegalArgumentException("placement generation must be 1 or more, got " + generation);
        }
        final String hex = 1 == generation ? fingerprint :
            computeFingerprint(canonicalConfig() + ";generation=" + generation);
        return Long.parseUnsignedLong(hex.substring(0, 16), 16);
    }

    /**
     * @return the failure domain of each node that has one, by node id.
     */
    public Map<String, String> domains()
    {
        return domains;
    }

    /**
     * @return the capacity weight of each node whose weight is not 1, by node id.
     */
    public Map<String, Integer> weights()
    {
        return weights;
    }

    /**
     * @return the agreed seed of the scores, "" for none.
     */
    public String seed()
    {
        return seed;
    }

    public String canonicalConfig()
    {
        return canonicalConfig(nodes, replicas, domains, weights, seed);
    }

    public boolean equals(final Object o)
    {
        return o instanceof ShardPlacement other && replicas == other.replicas && nodes.equals(other.nodes) &&
            domains.equals(other.domains) && weights.equals(other.weights) && seed.equals(other.seed);
    }

    public int hashCode()
    {
        return 31 * (31 * (31 * nodes.hashCode() + replicas) + domains.hashCode()) + weights.hashCode() +
            seed.hashCode();
    }

    public String toString()
    {
        return "ShardPlacement{nodes=" + nodes + ", replicas=" + replicas + (domains.isEmpty() ? "" :
            ", domains=" + domains) + (weights.isEmpty() ? "" : ", weights=" + weights) +
            (seed.isEmpty() ? "" : ", seed=" + seed) + ", fingerprint=" + fingerprint + '}';
    }
}
