package io.orbitkv.manager.peer;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * HMAC-SHA256 (RFC 2104) over two reused {@link MessageDigest}s, so a MAC allocates nothing: the JDK's
 * {@code Mac.doFinal} returns a new array per call (48 bytes per frame measured), this writes into the caller's. The
 * key's inner and outer pads are kept; each MAC hashes the inner pad, the message parts, then the outer pad and the
 * inner digest, exactly as {@code javax.crypto.Mac} "HmacSHA256" does (the tests compare the two). Single threaded.
 */
final class HmacSha256
{
    static final int BLOCK_BYTES = 64;
    static final int DIGEST_BYTES = 32;

    private final MessageDigest inner = sha256();
    private final MessageDigest outer = sha256();
    private final byte[] innerPad = new byte[BLOCK_BYTES];
    private final byte[] outerPad = new byte[BLOCK_BYTES];
    private final byte[] innerDigest = new byte[DIGEST_BYTES];

    HmacSha256(final byte[] key)
    {
        final byte[] k = key.length > BLOCK_BYTES ? sha256().digest(key) : key;
        for (int i = 0; i < BLOCK_BYTES; i++)
        {
            final byte b = i < k.length ? k[i] : 0;
            innerPad[i] = (byte)(b ^ 0x36);
            outerPad[i] = (byte)(b ^ 0x5c);
        }
    }

    /**
     * Start a MAC (drops any message part given since the last {@link #finish}).
     */
    void start()
    {
        inner.reset();
        inner.update(innerPad, 0, BLOCK_BYTES);
    }

    void update(final byte[] bytes, final int offset, final int length)
    {
        inner.update(bytes, offset, length);
    }

    /**
     * Finish the MAC and write its first {@code length} bytes.
     */
    void finish(final byte[] out, final int outOffset, final int length)
    {
        try
        {
            inner.digest(innerDigest, 0, DIGEST_BYTES);
            outer.reset();
            outer.update(outerPad, 0, BLOCK_BYTES);
            outer.update(innerDigest, 0, DIGEST_BYTES);
            if (DIGEST_BYTES == length)
            {
                outer.digest(out, outOffset, DIGEST_BYTES);
            }
            else
            {
                outer.digest(innerDigest, 0, DIGEST_BYTES);
                System.arraycopy(innerDigest, 0, out, outOffset, length);
            }
        }
        catch (final java.security.DigestException ex)
        {
            throw new IllegalStateException(ex);
        }
    }

    /**
     * One-shot MAC (start-up paths only: allocates).
     */
    static byte[] mac(final byte[] key, final byte[] message)
    {
        final HmacSha256 mac = new HmacSha256(key);
        mac.start();
        mac.update(message, 0, message.length);
        final byte[] out = new byte[DIGEST_BYTES];
        mac.finish(out, 0, DIGEST_BYTES);
        return out;
    }

    /**
     * HKDF-Expand (RFC 5869) of a pseudo-random key for one purpose.
     *
     * @param prk    HKDF-Extract's output (the HMAC of the secret under the salt).
     * @param info   the purpose's label.
     * @param length bytes wanted, at most 255 digests.
     * @return the derived key.
     */
    static byte[] expand(final byte[] prk, final byte[] info, final int length)
    {
        final HmacSha256 mac = new HmacSha256(prk);
        final byte[] out = new byte[length];
        final byte[] block = new byte[DIGEST_BYTES];
        int produced = 0;
        for (int counter = 1; produced < length; counter++)
        {
            mac.start();
            if (counter > 1)
            {
                mac.update(block, 0, DIGEST_BYTES);
            }
            mac.update(info, 0, info.length);
            mac.update(new byte[] {(byte)counter}, 0, 1);
            mac.finish(block, 0, DIGEST_BYTES);
            final int n = Math.min(DIGEST_BYTES, length - produced);
            System.arraycopy(block, 0, out, produced, n);
            produced += n;
        }
        return out;
    }

    private static MessageDigest sha256()
    {
        try
        {
            return MessageDigest.getInstance("SHA-256");
        }
        catch (final NoSuchAlgorithmException ex)
        {
            throw new IllegalStateException("SHA-256 is missing from this JDK", ex);
        }
    }
}
