package io.orbitkv.manager.membership;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.UUID;

/**
 * JSON of the reconciler election key ({@link MembershipConfiguration#reconcilerKey}), put by the elected Manager
 * under its lease: {@code {"nodeId":"a","runtimeUuid":"..."}}.
 *
 * @param nodeId      the elected node.
 * @param runtimeUuid its runtime.
 */
record ReconcilerRecord(String nodeId, UUID runtimeUuid)
{
    private static final ObjectMapper JSON = new ObjectMapper();

    byte[] encode()
    {
        final ObjectNode node = JSON.createObjectNode();
        node.put("nodeId", nodeId);
        node.put("runtimeUuid", runtimeUuid.toString());
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
     * @return the record.
     * @throws IllegalStateException when it is malformed.
     */
    static ReconcilerRecord decode(final byte[] bytes)
    {
        try
        {
            final JsonNode node = JSON.readTree(bytes);
            if (null == node || !node.path("nodeId").isTextual())
            {
                throw new IllegalStateException("no nodeId");
            }
            return new ReconcilerRecord(node.get("nodeId").asText(), UUID.fromString(node.path("runtimeUuid").asText()));
        }
        catch (final IOException | IllegalArgumentException | IllegalStateException ex)
        {
            throw new IllegalStateException("malformed reconciler record (" + ex.getMessage() + "): " +
                new String(bytes, StandardCharsets.UTF_8), ex);
        }
    }
}
