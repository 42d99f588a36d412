package io.orbitkv.manager.membership;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.orbitkv.codecs.StateKeyShard;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;

/**
 * JSON of a coverage key ({@link MembershipConfiguration#coverageKey}), written by each Manager's placement agent
 * under its own lease: {@code {"generation":4,"runtimeUuid":"...","shards":{"3":{"a":12,"b":7}}}}, the shards of
 * the transition to {@code generation} whose view on this node is complete, each with the stream sequence applied
 * per owner node.
 *
 * @param report      the report.
 * @param runtimeUuid the runtime that wrote it.
 */
record CoverageRecord(CoverageReport report, UUID runtimeUuid)
{
    private static final ObjectMapper JSON = new ObjectMapper();

    byte[] encode()
    {
        final ObjectNode node = JSON.createObjectNode();
        node.put("generation", report.generation());
        node.put("runtimeUuid", runtimeUuid.toString());
        final ObjectNode shards = node.putObject("shards");
        new TreeMap<>(report.completeShards()).forEach((shard, watermarks) ->
        {
            final ObjectNode owners = shards.putObject(Integer.toString(shard));
            new TreeMap<>(watermarks).forEach(owners::put);
        });
        try
        {
            return JSON.writeValueAsBytes(node);
        }
        catch (final IOException ex)
        {
            throw new IllegalStateException(ex);
        }
    }

    /**
     * @param bytes a coverage key's value.
     * @return the record.
     * @throws IllegalStateException naming what is wrong when it is malformed.
     */
    static CoverageRecord decode(final byte[] bytes)
    {
        try
        {
            final JsonNode node = JSON.readTree(bytes);
            if (null == node || !node.path("generation").isIntegralNumber() || !node.path("shards").isObject())
            {
                throw new IllegalStateException("no generation or shards");
            }
            final UUID uuid = UUID.fromString(node.path("runtimeUuid").asText());
            final Map<Integer, Map<String, Long>> shards = new TreeMap<>();
            for (final var entry : node.get("shards").properties())
            {
                final int shard = Integer.parseInt(entry.getKey());
                if (shard < 0 || shard >= StateKeyShard.SHARD_COUNT || !entry.getValue().isObject())
                {
                    throw new IllegalStateException("shard " + entry.getKey() + " out of range or not an object");
                }
                final Map<String, Long> owners = new TreeMap<>();
                for (final var owner : entry.getValue().properties())
                {
                    if (!owner.getValue().isIntegralNumber() || owner.getValue().asLong() < 0)
                    {
                        throw new IllegalStateException("sequence of owner " + owner.getKey() + " is not a sequence");
                    }
                    owners.put(owner.getKey(), owner.getValue().asLong());
                }
                shards.put(shard, owners);
            }
            return new CoverageRecord(new CoverageReport(node.get("generation").asLong(), shards), uuid);
        }
        catch (final IOException | IllegalArgumentException | IllegalStateException ex)
        {
            throw new IllegalStateException("malformed coverage record (" + ex.getMessage() + "): " +
                new String(bytes, StandardCharsets.UTF_8), ex);
        }
    }
}
