package io.orbitkv.codecs;

import java.nio.charset.StandardCharsets;
import java.security.DigestException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Maps a StateKey to one of {@link #SHARD_COUNT} logical catalog shards. The shard is the first 8 bytes of
 * SHA-256, read big-endian as an unsigned number, modulo 16, over a domain-separated input:
 * <pre>
 *   DOMAIN_TAG (ASCII) | 0x00 | canonical StateKey encoding (see {@link StateKey})
 * </pre>
 * The tag keeps this digest distinct from any other use of SHA-256 over the same key bytes. Fixed vectors for
 * other-language clients: codecs/src/test/resources/state-key-shard-vectors.json.
 *
 * <p>Not thread safe: one instance per thread. Reuses its digest and scratch, so it allocates nothing per key.
 */
public final class StateKeyShard
{
    /** Number of logical shards (design: 16 fixed logical shards). */
    public static final int SHARD_COUNT = 16;

    /** Domain separation tag; changing it changes every shard assignment. */
    public static final String DOMAIN_TAG = "orbitkv/v1/state-key-shard";

    private static final byte[] DOMAIN_PREFIX = domainPrefix();

    private final MessageDigest sha256;
    private final byte[] scratch = new byte[StateKey.MAX_ENCODED_LENGTH];
    private final UnsafeBuffer scratchBuffer = new UnsafeBuffer(scratch);
    private final byte[] digest = new byte[32];

    public StateKeyShard()
    {
        try
        {
            sha256 = MessageDigest.getInstance("SHA-256");
        }
        catch (final NoSuchAlgorithmException ex)
        {
            throw new IllegalStateException("SHA-256 is required by the JDK specification", ex);
        }
    }

    /**
     * SHA-256 over the domain-separated canonical encoding of a key held in buffers.
     *
     * @param namespace       buffer holding the namespace.
     * @param namespaceOffset offset of the namespace.
     * @param namespaceLength namespace length, 1..256.
     * @param hash            buffer holding the hash.
     * @param hashOffset      offset of the hash.
     * @param hashLength      hash length, 1..64.
     * @return the 32-byte digest in an internal array, valid until the next call.
     */
    public byte[] digest(
        final DirectBuffer namespace,
        final int namespaceOffset,
        final int namespaceLength,
        final DirectBuffer hash,
        final int hashOffset,
        final int hashLength)
    {
        final int length = StateKey.encode(
            namespace, namespaceOffset, namespaceLength, hash, hashOffset, hashLength, scratchBuffer, 0);
        sha256.reset();
        sha256.update(DOMAIN_PREFIX);
        sha256.update(scratch, 0, length);
        try
        {
            sha256.digest(digest, 0, digest.length);
        }
        catch (final DigestException ex)
        {
            throw new IllegalStateException(ex);
        }
        return digest;
    }

    /**
     * Shard of a key held in buffers.
     *
     * @param namespace       buffer holding the namespace.
     * @param namespaceOffset offset of the namespace.
     * @param namespaceLength namespace length, 1..256.
     * @param hash            buffer holding the hash.
     * @param hashOffset      offset of the hash.
     * @param hashLength      hash length, 1..64.
     * @return shard in [0, 16).
     */
    public int shard(
        final DirectBuffer namespace,
        final int namespaceOffset,
        final int namespaceLength,
        final DirectBuffer hash,
        final int hashOffset,
        final int hashLength)
    {
        final byte[] d = digest(namespace, namespaceOffset, namespaceLength, hash, hashOffset, hashLength);
        return shardOf(d);
    }

    /**
     * Shard of a key held in buffers.
     *
     * @param key the key.
     * @return shard in [0, 16).
     */
    public int shard(final StateKeyFlyweight key)
    {
        return shard(key.namespaceBuffer(), key.namespaceOffset(), key.namespaceLength(), key.hashBuffer(),
            key.hashOffset(), key.hashLength());
    }

    /**
     * Shard of an immutable key.
     *
     * @param key the key.
     * @return shard in [0, 16).
     */
    public int shard(final StateKey key)
    {
        final byte[] ns = key.namespace();
        final byte[] h = key.hash();
        return shard(new UnsafeBuffer(ns), 0, ns.length, new UnsafeBuffer(h), 0, h.length);
    }

    /**
     * Shard from a digest: first 8 bytes big-endian, unsigned, modulo 16.
     *
     * @param digest a 32-byte SHA-256 digest.
     * @return shard in [0, 16).
     */
    public static int shardOf(final byte[] digest)
    {
        long prefix = 0;
        for (int i = 0; i < 8; i++)
        {
            prefix = (prefix << 8) | (digest[i] & 0xFFL);
        }
        return (int)Long.remainderUnsigned(prefix, SHARD_COUNT);
    }

    private static byte[] domainPrefix()
    {
        final byte[] tag = DOMAIN_TAG.getBytes(StandardCharsets.US_ASCII);
        final byte[] prefix = new byte[tag.length + 1];
        System.arraycopy(tag, 0, prefix, 0, tag.length);
        return prefix;
    }
}
