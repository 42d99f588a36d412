package io.orbitkv.manager.ring;

import io.orbitkv.codecs.engine.StatusCode;
import java.nio.charset.StandardCharsets;

/**
 * Every reason the Manager refuses a request, with the status code the engine sees and a fixed message. The
 * messages are constants on purpose: they are encoded without allocation and they keep the distinct error log to
 * one entry per reason rather than one per offending value.
 */
enum Rejection
{
    FRAME_TRUNCATED(StatusCode.MALFORMED, "frame shorter than its message header or root block"),
    BLOCK_LENGTH_TOO_SHORT(StatusCode.MALFORMED, "root block length shorter than this schema version needs"),
    GROUP_HEADER_PAST_END(StatusCode.MALFORMED, "group header runs past the end of the frame"),
    GROUP_BLOCK_LENGTH_TOO_SHORT(StatusCode.MALFORMED, "group block length shorter than this schema version needs"),
    GROUP_ENTRY_PAST_END(StatusCode.MALFORMED, "group entries run past the end of the frame"),
    VAR_DATA_PAST_END(StatusCode.MALFORMED, "variable-length field runs past the end of the frame"),
    BAD_CLIENT_NAME(StatusCode.MALFORMED, "client name must be 1..128 printable ASCII bytes"),
    SCHEMA_ID_MISMATCH(StatusCode.SCHEMA_MISMATCH, "schema id is not the engine ring schema (101)"),
    VERSION_UNSUPPORTED(StatusCode.SCHEMA_MISMATCH, "schema version not supported by this Manager"),
    UNKNOWN_TEMPLATE(StatusCode.UNKNOWN_TEMPLATE, "template id not in the engine ring schema"),
    FRAME_TOO_LARGE(StatusCode.BATCH_TOO_LARGE, "frame longer than MAX_REQUEST_BYTES"),
    KEY_COUNT(StatusCode.BATCH_TOO_LARGE, "key count must be 1..MAX_KEYS_PER_REQUEST"),
    BLOCK_TOO_LARGE(StatusCode.BATCH_TOO_LARGE, "block longer than the Manager's max block bytes"),
    HASH_LENGTH(StatusCode.KEY_TOO_LARGE, "block hash must be 1..64 bytes"),
    NAMESPACE_LENGTH(StatusCode.KEY_TOO_LARGE, "namespace must be 1..256 bytes"),
    PARENT_HASH_LENGTH(StatusCode.KEY_TOO_LARGE, "parent hash must be 0..64 bytes"),
    TOKEN_IDS_LENGTH(StatusCode.MALFORMED, "token ids must be whole little-endian int32s"),
    TOO_MANY_TOKENS(StatusCode.BATCH_TOO_LARGE, "block carries more than MAX_TOKENS_PER_BLOCK token ids"),
    RANGE_OUTSIDE_REGION(StatusCode.OUT_OF_RANGE, "offset/length outside the client's data region"),
    UNKNOWN_FLAGS(StatusCode.BAD_FLAGS, "unknown lookup flag bits"),
    NAME_IN_USE(StatusCode.NAME_IN_USE, "another attached client has this name"),
    NO_FREE_SLOT(StatusCode.TOO_MANY_CLIENTS, "no free client slot"),
    DATA_REGION_SIZE(StatusCode.BAD_DATA_REGION_SIZE, "data region size must be in (0, --max-data-region-bytes]"),
    DATA_REGION_CREATE_FAILED(StatusCode.ERROR, "could not create the client's data region"),
    NOT_ENABLED(StatusCode.NOT_ENABLED, "Prepare/Commit need --engine-pool-access write-reserved"),
    RESERVATION_LIMIT(StatusCode.PIN_LIMIT, "client would hold more than MAX_RESERVED_BLOCKS_PER_CLIENT reserved slots"),
    BLOCK_LENGTH(StatusCode.OUT_OF_RANGE, "block length must be at least 1 byte"),
    LEASE_LIMIT(StatusCode.PIN_LIMIT, "client holds MAX_LEASES_PER_CLIENT leases already"),
    PINNED_BLOCK_LIMIT(StatusCode.PIN_LIMIT, "lease would exceed MAX_PINNED_BLOCKS_PER_CLIENT"),
    UNKNOWN_LEASE(StatusCode.UNKNOWN_LEASE, "lease id not held by this client"),
    NAMESPACE_LIMIT(StatusCode.NAMESPACE_LIMIT, "Manager tracks its maximum number of namespaces"),
    TOO_MANY_IN_FLIGHT(StatusCode.BUSY, "MAX_IN_FLIGHT_PER_CLIENT requests already queued"),
    SLOT_NOT_CLAIMED(StatusCode.UNKNOWN_CLIENT, "attach through a slot not claimed by this pid"),
    SLOT_ALREADY_ATTACHED(StatusCode.UNKNOWN_CLIENT, "attach through a slot that is already attached"),
    STALE_CLIENT(StatusCode.UNKNOWN_CLIENT, "client id not attached or of a past generation"),
    REQUEST_RING_UNBLOCKED(StatusCode.MALFORMED, "request ring unblocked: a producer died between claim and commit"),
    DATA_REGION_FAULT(StatusCode.ERROR, "client's data region faulted during a copy (file shrunk under the mapping?): client detached"),
    INTERNAL_ERROR(StatusCode.ERROR, "internal error while serving the request; see the Manager's error log");

    private final StatusCode code;
    private final String text;
    private final byte[] bytes;

    Rejection(final StatusCode code, final String text)
    {
        this.code = code;
        this.text = text;
        this.bytes = text.getBytes(StandardCharsets.US_ASCII);
    }

    StatusCode code()
    {
        return code;
    }

    String text()
    {
        return text;
    }

    /**
     * The message as US-ASCII; shared, never modify.
     *
     * @return message bytes.
     */
    byte[] bytes()
    {
        return bytes;
    }
}
