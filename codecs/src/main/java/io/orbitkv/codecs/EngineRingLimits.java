package io.orbitkv.codecs;

import io.orbitkv.codecs.engine.MessageHeaderEncoder;
import io.orbitkv.codecs.engine.ResponseEncoder;

/**
 * Per-request limits of the engine ring protocol, shared by Manager and engine client. The Manager enforces
 * them and answers with {@code BATCH_TOO_LARGE}/{@code KEY_TOO_LARGE}; the Java client checks them before
 * sending so that a caller learns of a breach without a round trip. Values are also published in the CnC
 * header so that clients in other languages need not hard-code them.
 */
public final class EngineRingLimits
{
    /**
     * Keys in one Publish, Lookup or Read. A vLLM prefix of 8k tokens in 16-token blocks is 512 keys; longer
     * chains are sent as several requests (the Java client splits them).
     */
    public static final int MAX_KEYS_PER_REQUEST = 512;

    /** Largest encoded request frame; 512 keys of 64-byte hashes with offsets fit with room to spare. */
    public static final int MAX_REQUEST_BYTES = 64 * 1024;

    /** Largest namespace in bytes (design: namespace binds model, computation and representation). */
    public static final int MAX_NAMESPACE_LENGTH = 256;

    /** Largest block hash in bytes (design: chained block hash, up to 64 bytes). */
    public static final int MAX_HASH_LENGTH = 64;

    /**
     * Token ids one Publish block may carry as its lineage (4 bytes each on the wire). Blocks of engines run from 16
     * to a few hundred tokens; a longer list is refused with {@code BATCH_TOO_LARGE}.
     */
    public static final int MAX_TOKENS_PER_BLOCK = 2048;

    /** Largest client name in bytes. */
    public static final int MAX_CLIENT_NAME_LENGTH = 128;

    /** Largest error message carried in a response. */
    public static final int MAX_MESSAGE_LENGTH = 1024;

    /**
     * Keys after the local prefix that one Lookup answer (schema version 2, {@code peers} flag) may extend with peer
     * candidates: those keys are answered {@code PEER}, the rest stay {@code MISS}/{@code NOT_ATTEMPTED}. Long enough
     * for the chains engines send (a conversation of 256 blocks of 512 tokens is 128 Ki tokens); discovery asks
     * catalog hosts for them in cold queries of at most {@link CatalogLimits#MAX_COLD_QUERY_KEYS} keys each.
     */
    public static final int MAX_PEER_KEYS_PER_LOOKUP = 256;

    /** Peer copies listed for one {@code PEER} key. */
    public static final int MAX_CANDIDATES_PER_KEY = 4;

    /** Distinct owners (other Managers) named by one Lookup answer. */
    public static final int MAX_PEER_OWNERS_PER_LOOKUP = 32;

    /**
     * Candidate rows in one Lookup answer: up to four for each of 128 keys, at least one for each of 256, which keeps
     * the largest response within a message of the smallest response ring (128 KiB / 8).
     */
    public static final int MAX_CANDIDATES_PER_LOOKUP = 512;

    /** Largest owner node id in bytes; the same rule as cluster node ids. */
    public static final int MAX_NODE_ID_LENGTH = ShardPlacement.MAX_NODE_ID_LENGTH;

    /**
     * Largest encoded {@code Response} frame, header included: a row for each key of a full batch, every candidate
     * and owner an answer may carry (longest node ids) and the longest message. A response ring must be able to
     * take it as one message (Agrona allows a ring's capacity / 8). A Prepare's answer has the slots group (8 bytes
     * a key) but neither owners nor candidates, so it is shorter; answers with candidates have no slots group.
     */
    public static final int MAX_RESPONSE_BYTES = MessageHeaderEncoder.ENCODED_LENGTH + ResponseEncoder.BLOCK_LENGTH +
        ResponseEncoder.KeysEncoder.sbeHeaderSize() + MAX_KEYS_PER_REQUEST * ResponseEncoder.KeysEncoder.sbeBlockLength() +
        ResponseEncoder.OwnersEncoder.sbeHeaderSize() + MAX_PEER_OWNERS_PER_LOOKUP *
        (ResponseEncoder.OwnersEncoder.sbeBlockLength() + ResponseEncoder.OwnersEncoder.nodeIdHeaderLength() + MAX_NODE_ID_LENGTH) +
        ResponseEncoder.CandidatesEncoder.sbeHeaderSize() +
        MAX_CANDIDATES_PER_LOOKUP * ResponseEncoder.CandidatesEncoder.sbeBlockLength() +
        ResponseEncoder.messageHeaderLength() + MAX_MESSAGE_LENGTH;

    private EngineRingLimits()
    {
    }
}
