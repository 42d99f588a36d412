package io.orbitkv.manager.membership;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.orbitkv.codecs.ShardPlacement;
import io.orbitkv.codecs.StateKeyShard;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * JSON of the placement key: {@code {"version":1,"shardCount":16,"nodes":[...],"fingerprint":"..."}}.
 */
final class PlacementRecord
{
    static final int VERSION = 1;
    private static final ObjectMapper JSON = new ObjectMapper();

    private PlacementRecord()
    {
    }

    static byte[] encode(final ShardPlacement placement)
    {
        final ObjectNode node = JSON.createObjectNode();
        node.put("version", VERSION);
        node.put("shardCount", StateKeyShard.SHARD_COUNT);
        final var nodes = node.putArray("nodes");
        placement.nodes().forEach(nodes::add);
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
        try
        {
            final JsonNode node = JSON.readTree(bytes);
            if (null == node || node.path("version").asInt() != VERSION ||
                node.path("shardCount").asInt() != StateKeyShard.SHARD_COUNT || !node.path("nodes").isArray())
            {
                throw new IllegalStateException("unsupported placement record: " + new String(bytes));
            }
            final List<String> nodes = new ArrayList<>();
            node.get("nodes").forEach((n) -> nodes.add(n.asText()));
            final ShardPlacement placement = ShardPlacement.of(nodes);
            if (!placement.fingerprint().equals(node.path("fingerprint").asText()))
            {
                throw new IllegalStateException("placement record fingerprint does not match its nodes: " +
                    new String(bytes));
            }
            return placement;
        }
        catch (final IOException | IllegalArgumentException ex)
        {
            throw new IllegalStateException("malformed placement record: " + ex.getMessage(), ex);
        }
    }
}
