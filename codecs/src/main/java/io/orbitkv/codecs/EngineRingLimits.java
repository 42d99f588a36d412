package io.orbitkv.codecs;

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

    /** Largest client name in bytes. */
    public static final int MAX_CLIENT_NAME_LENGTH = 128;

    /** Largest error message carried in a response. */
    public static final int MAX_MESSAGE_LENGTH = 1024;

    private EngineRingLimits()
    {
    }
}
