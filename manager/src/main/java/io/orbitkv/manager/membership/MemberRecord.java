package io.orbitkv.manager.membership;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.orbitkv.codecs.ShardPlacement;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.UUID;

/**
 * One leased member record, stored as JSON of at most {@link MembershipConfiguration#MAX_RECORD_BYTES} at
 * {@code /orbitkv/v1/<cluster>/members/<nodeId>}. {@code leaseId} is the etcd lease the record was written with:
 * together with {@code epoch} and {@code runtimeUuid} it is the binding a runtime checks to notice it was
 * replaced (fencing) and to recognise its own earlier write after an unknown-outcome registration.
 *
 * @param nodeId           stable node id.
 * @param epoch            persistent per-node incarnation counter, incremented by every registration.
 * @param runtimeUuid      new at every Manager start (the CnC file's runtime UUID).
 * @param leaseId          etcd lease id of the record.
 * @param peerEndpoint     where peers reach this Manager.
 * @param transferEndpoint where KV bytes are fetched from.
 * @param protocolVersion  {@link MembershipConfiguration#PROTOCOL_VERSION}.
 * @param startTimeMs      Manager start, epoch ms.
 */
public record MemberRecord(
    String nodeId,
    long epoch,
    UUID runtimeUuid,
    long leaseId,
    String peerEndpoint,
    String transferEndpoint,
    int protocolVersion,
    long startTimeMs)
{
    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * Encode as compact JSON.
     *
     * @return UTF-8 JSON bytes.
     * @throws IllegalArgumentException if longer than 1 KiB.
     */
    public byte[] encode()
    {
        final ObjectNode node = JSON.createObjectNode();
        node.put("nodeId", nodeId);
        node.put("epoch", epoch);
        node.put("runtimeUuid", runtimeUuid.toString());
        node.put("leaseId", leaseId);
        node.put("peerEndpoint", peerEndpoint);
        node.put("transferEndpoint", transferEndpoint);
        node.put("protocolVersion", protocolVersion);
        node.put("startTimeMs", startTimeMs);
        final byte[] bytes;
        try
        {
            bytes = JSON.writeValueAsBytes(node);
        }
        catch (final JsonProcessingException ex)
        {
            throw new IllegalStateException(ex);
        }
        if (bytes.length > MembershipConfiguration.MAX_RECORD_BYTES)
        {
            throw new IllegalArgumentException("member record is " + bytes.length + " bytes, the limit is " +
                MembershipConfiguration.MAX_RECORD_BYTES + ": shorten --peer-endpoint/--transfer-endpoint");
        }
        return bytes;
    }

    /**
     * Decode and validate a record read from etcd.
     *
     * @param key   the etcd key, whose last segment must equal the node id.
     * @param bytes the value.
     * @return the record.
     * @throws RecordTooLargeException if over 1 KiB.
     * @throws MalformedRecordException if not a valid record.
     */
    public static MemberRecord decode(final String key, final byte[] bytes)
    {
        if (bytes.length > MembershipConfiguration.MAX_RECORD_BYTES)
        {
            throw new RecordTooLargeException(key + ": " + bytes.length + " bytes exceeds " +
                MembershipConfiguration.MAX_RECORD_BYTES);
        }
        try
        {
            final JsonNode node = JSON.readTree(bytes);
            if (null == node || !node.isObject())
            {
                throw new MalformedRecordException(key + ": not a JSON object");
            }
            final MemberRecord record = new MemberRecord(
                text(node, "nodeId"),
                number(node, "epoch"),
                UUID.fromString(text(node, "runtimeUuid")),
                number(node, "leaseId"),
                text(node, "peerEndpoint"),
                text(node, "transferEndpoint"),
                (int)number(node, "protocolVersion"),
                number(node, "startTimeMs"));
            ShardPlacement.checkNodeId(record.nodeId);
            if (!key.endsWith("/" + record.nodeId))
            {
                throw new MalformedRecordException(key + ": holds node id '" + record.nodeId + "'");
            }
            if (record.epoch < 1)
            {
                throw new MalformedRecordException(key + ": epoch " + record.epoch);
            }
            return record;
        }
        catch (final IOException | IllegalArgumentException ex)
        {
            if (ex instanceof MalformedRecordException malformed)
            {
                throw malformed;
            }
            throw new MalformedRecordException(key + ": " + ex.getMessage());
        }
    }

    private static String text(final JsonNode node, final String field)
    {
        final JsonNode value = node.get(field);
        if (null == value || !value.isTextual())
        {
            throw new MalformedRecordException("field '" + field + "' missing or not a string");
        }
        return value.asText();
    }

    private static long number(final JsonNode node, final String field)
    {
        final JsonNode value = node.get(field);
        if (null == value || !value.canConvertToLong())
        {
            throw new MalformedRecordException("field '" + field + "' missing or not an integer");
        }
        return value.asLong();
    }

    public String toString()
    {
        return new String(encode(), StandardCharsets.UTF_8);
    }

    /**
     * A member record that is not valid JSON or misses fields.
     */
    public static class MalformedRecordException extends IllegalArgumentException
    {
        private static final long serialVersionUID = 1L;

        MalformedRecordException(final String message)
        {
            super(message);
        }
    }

    /**
     * A member record over 1 KiB.
     */
    public static final class RecordTooLargeException extends MalformedRecordException
    {
        private static final long serialVersionUID = 1L;

        RecordTooLargeException(final String message)
        {
            super(message);
        }
    }
}
