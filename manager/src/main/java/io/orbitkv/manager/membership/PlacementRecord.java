package io.orbitkv.manager.membership;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.orbitkv.codecs.ShardPlacement;
import io.orbitkv.codecs.StateKeyShard;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * JSON of the placement keys: the installed placement ({@link MembershipConfiguration#placementKey}) and the desired
 * one ({@link MembershipConfiguration#placementDesiredKey}), each with its placement generation.
 * <ul>
 *   <li>version 1, one copy per shard: {@code {"version":1,"shardCount":16,"nodes":[...],"fingerprint":"..."}};</li>
 *   <li>version 2 adds the copies per shard: {@code {"version":2,"shardCount":16,"replicas":3,"nodes":[...],
 *   "fingerprint":"..."}}, and the nodes' failure domains when any has one ({@code "domains":{"a":"rack1",...}}),
 *   the capacity weights other than 1 ({@code "weights":{"a":2}}) and the agreed seed ({@code "seed":"s1"}) when
 *   set.</li>
 * </ul>
 * A placement of one copy is written as version 1, byte for byte the record written before copies existed (its
 * fingerprint is unchanged too), so a cluster that keeps one copy stays readable by the Managers and
 * {@code orbitkv members} of that release during a rolling upgrade; any other count is written as version 2, which
 * such a reader refuses as unsupported rather than misreading it as one copy. Decoding takes version 1 as one copy,
 * and refuses an unknown version, a replica count out of range and a fingerprint that does not match the nodes and
 * the count.
 * <p>
 * Generations: a version 1 record is generation 1. A version 2 record carries {@code "generation":N} when N is above
 * 1 (absent means 1, so the version 2 records written before generations existed keep their bytes too); any
 * placement of a later generation is written as version 2, one copy included.
 */
final class PlacementRecord
{
    /** The record of one copy per shard. */
    static final int VERSION_ONE_COPY = 1;

    /** The record that names its copies per shard. */
    static final int VERSION = 2;

    private static final ObjectMapper JSON = new ObjectMapper();

    private PlacementRecord()
    {
    }

    /** The generation of a record that names none. */
    static final long FIRST_GENERATION = 1;

    /**
     * A placement with its generation, as a placement key holds it.
     *
     * @param generation 1 or more.
     * @param placement  the placement.
     */
    record Generational(long generation, ShardPlacement placement)
    {
        PlacementState asState()
        {
            return PlacementState.stable(generation, placement);
        }
    }

    static byte[] encode(final ShardPlacement placement)
    {
        return encode(placement, FIRST_GENERATION);
    }

    static byte[] encode(final ShardPlacement placement, final long generation)
    {
        if (generation < FIRST_GENERATION)
        {
            throw new IllegalArgumentException("placement generation must be 1 or more, got " + generation);
        }
        final boolean oneCopy = ShardPlacement.MIN_REPLICAS == placement.replicas() && placement.domains().isEmpty() &&
            placement.weights().isEmpty() && placement.seed().isEmpty() && FIRST_GENERATION == generation;
        final ObjectNode node = JSON.createObjectNode();
        node.put("version", oneCopy ? VERSION_ONE_COPY : VERSION);
        node.put("shardCount", StateKeyShard.SHARD_COUNT);
        if (!oneCopy)
        {
            node.put("replicas", placement.replicas());
        }
        if (FIRST_GENERATION != generation)
        {
            node.put("generation", generation);
        }
        final var nodes = node.putArray("nodes");
        placement.nodes().forEach(nodes::add);
        if (!placement.domains().isEmpty())
        {
            final ObjectNode domains = node.putObject("domains");
            placement.domains().forEach(domains::put);
        }
        if (!placement.weights().isEmpty())
        {
            final ObjectNode weights = node.putObject("weights");
            placement.weights().forEach(weights::put);
        }
        if (!placement.seed().isEmpty())
        {
            node.put("seed", placement.seed());
        }
        node.put("fingerprint", placement.fingerprint());
        try
        {
            return JSON.writeValueAsBytes(node);
        }
        catch (final IOException ex)
        {
            throw new IllegalStateException(ex);
        }
    }

    static ShardPlacement decode(final byte[] bytes)
    {
        return decodeGenerational(bytes).placement();
    }

    /**
     * Decode a placement key's record with its generation.
     *
     * @param bytes the record.
     * @return generation and placement.
     * @throws IllegalStateException if it is malformed, of an unknown version, or its fingerprint does not match.
     */
    static Generational decodeGenerational(final byte[] bytes)
    {
        try
        {
            final JsonNode node = JSON.readTree(bytes);
            return decodeGenerational(node, bytes);
        }
        catch (final IOException ex)
        {
            throw new IllegalStateException("malformed placement record: " + ex.getMessage(), ex);
        }
    }

    /**
     * Decode a placement record embedded in another record (a transition's target).
     *
     * @param node the record's JSON.
     * @return generation and placement.
     */
    static Generational decodeGenerational(final JsonNode node)
    {
        return decodeGenerational(node, null);
    }

    static ObjectNode toJson(final ShardPlacement placement, final long generation)
    {
        try
        {
            return (ObjectNode)JSON.readTree(encode(placement, generation));
        }
        catch (final IOException ex)
        {
            throw new IllegalStateException(ex);
        }
    }

    private static Generational decodeGenerational(final JsonNode node, final byte[] bytes)
    {
        final String text = null == bytes ? String.valueOf(node) : new String(bytes, StandardCharsets.UTF_8);
        try
        {
            final int version = null == node ? 0 : node.path("version").asInt();
            if ((VERSION_ONE_COPY != version && VERSION != version) ||
                node.path("shardCount").asInt() != StateKeyShard.SHARD_COUNT || !node.path("nodes").isArray() ||
                (VERSION == version && !node.path("replicas").isInt()))
            {
                throw new IllegalStateException("unsupported placement record: " + text);
            }
            final JsonNode generationNode = node.path("generation");
            final long generation;
            if (generationNode.isMissingNode())
            {
                generation = FIRST_GENERATION;
            }
            else if (VERSION != version || !generationNode.canConvertToLong() || !generationNode.isIntegralNumber() ||
                generationNode.asLong() < FIRST_GENERATION)
            {
                throw new IllegalStateException("unsupported placement record (generation must be a whole number of " +
                    "1 or more, in version 2 records only): " + text);
            }
            else
            {
                generation = generationNode.asLong();
            }
            final int replicas = VERSION == version ? node.get("replicas").asInt() : ShardPlacement.MIN_REPLICAS;
            final List<String> nodes = new ArrayList<>();
            node.get("nodes").forEach((n) -> nodes.add(n.asText()));
            final Map<String, String> domains = new TreeMap<>();
            if (VERSION == version && node.path("domains").isObject())
            {
                node.get("domains").properties().forEach((e) -> domains.put(e.getKey(), e.getValue().asText()));
            }
            final Map<String, Integer> weights = new TreeMap<>();
            if (VERSION == version && node.path("weights").isObject())
            {
                for (final Map.Entry<String, JsonNode> weight : node.get("weights").properties())
                {
                    if (!weight.getValue().isInt())
                    {
                        throw new IllegalStateException("placement record weight of '" + weight.getKey() +
                            "' is not a whole number: " + text);
                    }
                    weights.put(weight.getKey(), weight.getValue().asInt());
                }
            }
            final String seed = VERSION == version ? node.path("seed").asText("") : "";
            final ShardPlacement placement = ShardPlacement.of(nodes, replicas, domains, weights, seed);
            if (!placement.fingerprint().equals(node.path("fingerprint").asText()))
            {
                throw new IllegalStateException("placement record fingerprint does not match its nodes and replicas: " +
                    text);
            }
            return new Generational(generation, placement);
        }
        catch (final IllegalArgumentException ex)
        {
            throw new IllegalStateException("malformed placement record: " + ex.getMessage(), ex);
        }
    }

    /**
     * A placement as its record and its join failure name it.
     *
     * @param placement the placement.
     * @return e.g. {@code catalog nodes [a, b, c] with 3 copies per shard (fingerprint ...)}.
     */
    static String describe(final ShardPlacement placement)
    {
        return "catalog nodes " + placement.nodes() + " with " + placement.replicas() +
            (ShardPlacement.MIN_REPLICAS == placement.replicas() ? " copy" : " copies") + " per shard" +
            (placement.replicaCount() < placement.replicas() ? " (" + placement.replicaCount() + " held)" : "") +
            (placement.domains().isEmpty() ? "" : ", failure domains " + placement.domains()) +
            (placement.weights().isEmpty() ? "" : ", weights " + placement.weights()) +
            (placement.seed().isEmpty() ? "" : ", seed " + placement.seed()) +
            " (fingerprint " + placement.fingerprint() + ")";
    }
}
