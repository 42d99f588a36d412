package io.orbitkv.manager.membership;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.orbitkv.codecs.StateKeyShard;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.TreeMap;

/**
 * JSON of the transition key ({@link MembershipConfiguration#placementTransitionKey}): the {@link PlacementTransition}
 * the reconciler is driving.
 * <pre>
 * {"version":1,"fromGeneration":3,"toGeneration":4,
 *  "target":{...the target's placement record at toGeneration...},
 *  "moves":[{"shard":2,"phase":"CAUGHT_UP","handoff":{"a":17,"b":4}}, ...]}
 * </pre>
 * Moves are listed by shard, one per shard whose copies differ. Decoding refuses (with the reason) anything else: an
 * unknown version, a target that is not a valid placement record of {@code toGeneration}, generations out of order, a
 * shard out of range or listed twice, an unknown phase, a negative watermark. Whether the transition starts at the
 * installed generation is for the reader that knows it ({@link MemberViewKeeper}, the reconciler).
 */
final class TransitionRecord
{
    /** The only version written. */
    static final int VERSION = 1;

    private static final ObjectMapper JSON = new ObjectMapper();

    private TransitionRecord()
    {
    }

    static byte[] encode(final PlacementTransition transition)
    {
        final ObjectNode node = JSON.createObjectNode();
        node.put("version", VERSION);
        node.put("fromGeneration", transition.fromGeneration());
        node.put("toGeneration", transition.toGeneration());
        node.set("target", PlacementRecord.toJson(transition.target(), transition.toGeneration()));
        final ArrayNode moves = node.putArray("moves");
        for (final ShardMove move : transition.moveList())
        {
            final ObjectNode entry = moves.addObject();
            entry.put("shard", move.shard());
            entry.put("phase", move.phase().name());
            final ObjectNode handoff = entry.putObject("handoff");
            new TreeMap<>(move.handoff()).forEach(handoff::put);
        }
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
     * @param bytes the key's value.
     * @return the transition.
     * @throws IllegalStateException naming what is wrong when the record is malformed.
     */
    static PlacementTransition decode(final byte[] bytes)
    {
        final String text = new String(bytes, StandardCharsets.UTF_8);
        try
        {
            final JsonNode node = JSON.readTree(bytes);
            if (null == node || !node.isObject() || node.path("version").asInt() != VERSION)
            {
                throw new IllegalStateException("unsupported version");
            }
            final long from = wholeNumber(node, "fromGeneration");
            final long to = wholeNumber(node, "toGeneration");
            if (!node.path("target").isObject())
            {
                throw new IllegalStateException("no target placement");
            }
            final PlacementRecord.Generational target = PlacementRecord.decodeGenerational(node.get("target"));
            if (target.generation() != to)
            {
                throw new IllegalStateException("target placement is generation " + target.generation() +
                    ", the transition's toGeneration is " + to);
            }
            if (!node.path("moves").isArray())
            {
                throw new IllegalStateException("no moves array");
            }
            final ShardMove[] moves = new ShardMove[StateKeyShard.SHARD_COUNT];
            for (final JsonNode entry : node.get("moves"))
            {
                final long shard = wholeNumber(entry, "shard");
                if (shard < 0 || shard >= StateKeyShard.SHARD_COUNT || null != moves[(int)shard])
                {
                    throw new IllegalStateException("shard " + shard + " out of range or listed twice");
                }
                final MovePhase phase;
                try
                {
                    phase = MovePhase.valueOf(entry.path("phase").asText());
                }
                catch (final IllegalArgumentException ex)
                {
                    throw new IllegalStateException("unknown phase '" + entry.path("phase").asText() + "'", ex);
                }
                final Map<String, Long> handoff = new TreeMap<>();
                if (!entry.path("handoff").isMissingNode())
                {
                    if (!entry.path("handoff").isObject())
                    {
                        throw new IllegalStateException("handoff of shard " + shard + " is not an object");
                    }
                    for (final var watermark : entry.get("handoff").properties())
                    {
                        if (!watermark.getValue().isIntegralNumber() || !watermark.getValue().canConvertToLong() ||
                            watermark.getValue().asLong() < 0)
                        {
                            throw new IllegalStateException("handoff watermark of shard " + shard + " owner " +
                                watermark.getKey() + " is not a sequence");
                        }
                        handoff.put(watermark.getKey(), watermark.getValue().asLong());
                    }
                }
                moves[(int)shard] = new ShardMove((int)shard, phase, handoff);
            }
            return new PlacementTransition(from, to, target.placement(), moves);
        }
        catch (final IOException | IllegalArgumentException | IllegalStateException ex)
        {
            throw new IllegalStateException("malformed placement transition record (" + ex.getMessage() + "): " +
                text, ex);
        }
    }

    private static long wholeNumber(final JsonNode node, final String field)
    {
        final JsonNode value = node.path(field);
        if (!value.isIntegralNumber() || !value.canConvertToLong())
        {
            throw new IllegalStateException("'" + field + "' is not a whole number");
        }
        return value.asLong();
    }
}
