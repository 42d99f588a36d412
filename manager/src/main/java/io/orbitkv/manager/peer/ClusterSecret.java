package io.orbitkv.manager.peer;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.Arrays;
import java.util.Set;

/**
 * The cluster secret every Manager of one cluster shares ({@code --cluster-secret-file}), and the keys derived from it,
 * one per purpose: the peer frames' MAC key and the built-in transport's handshake key. The file must be owner-only
 * (no group or other permission bit, as {@code chmod 600} leaves it) and hold at least {@link #MIN_SECRET_BYTES} bytes
 * (at most {@link #MAX_SECRET_BYTES}); its bytes, less trailing line breaks, are the secret. Keys come from it by
 * HKDF-SHA256 (RFC 5869) with a fixed salt and one label per purpose, so no key is used for two things and none is the
 * secret itself.
 */
public final class ClusterSecret
{
    /** Fewest secret bytes accepted: 256 bits. */
    public static final int MIN_SECRET_BYTES = 32;

    /** Most secret bytes read; a larger file is refused. */
    public static final int MAX_SECRET_BYTES = 4096;

    /** Bytes of each derived key. */
    public static final int KEY_BYTES = 32;

    static final byte[] SALT = "orbitkv cluster secret v1".getBytes(StandardCharsets.US_ASCII);
    static final String FRAME_MAC_LABEL = "orbitkv peer frame mac v1";
    static final String HANDSHAKE_LABEL = "orbitkv transport handshake v1";

    private final Path file;
    private final byte[] frameMacKey;
    private final byte[] handshakeKey;

    private ClusterSecret(final Path file, final byte[] secret)
    {
        this.file = file;
        final byte[] prk = HmacSha256.mac(SALT, secret);
        this.frameMacKey = HmacSha256.expand(prk, FRAME_MAC_LABEL.getBytes(StandardCharsets.US_ASCII), KEY_BYTES);
        this.handshakeKey = HmacSha256.expand(prk, HANDSHAKE_LABEL.getBytes(StandardCharsets.US_ASCII), KEY_BYTES);
        Arrays.fill(prk, (byte)0);
    }

    /**
     * Read and check the secret file.
     *
     * @param file the file named by {@code --cluster-secret-file}.
     * @return the secret's derived keys.
     * @throws IllegalArgumentException naming the flag, the file and what is wrong (mode, length, unreadable).
     */
    public static ClusterSecret load(final Path file)
    {
        final String flag = "--cluster-secret-file ";
        try
        {
            if (!Files.isRegularFile(file))
            {
                throw new IllegalArgumentException(flag + file + " is not a readable file");
            }
            final Set<PosixFilePermission> permissions = Files.getPosixFilePermissions(file, LinkOption.NOFOLLOW_LINKS);
            for (final PosixFilePermission permission : permissions)
            {
                if (permission.name().startsWith("GROUP_") || permission.name().startsWith("OTHERS_"))
                {
                    throw new IllegalArgumentException(flag + file + " has mode " + octal(permissions) +
                        ": it must be owner-only (0600); refusing to start. Fix it with: chmod 600 " + file);
                }
            }
            if (Files.size(file) > MAX_SECRET_BYTES)
            {
                throw new IllegalArgumentException(flag + file + " is larger than " + MAX_SECRET_BYTES + " bytes");
            }
            final byte[] bytes = Files.readAllBytes(file);
            int length = bytes.length;
            while (length > 0 && ('\n' == bytes[length - 1] || '\r' == bytes[length - 1]))
            {
                length--;
            }
            if (length < MIN_SECRET_BYTES)
            {
                Arrays.fill(bytes, (byte)0);
                throw new IllegalArgumentException(flag + file + " holds " + length + " bytes; the secret must be at " +
                    "least " + MIN_SECRET_BYTES + " bytes (e.g. head -c 32 /dev/urandom | base64 > FILE; chmod 600 FILE)");
            }
            final byte[] secret = Arrays.copyOf(bytes, length);
            Arrays.fill(bytes, (byte)0);
            try
            {
                return new ClusterSecret(file, secret);
            }
            finally
            {
                Arrays.fill(secret, (byte)0);
            }
        }
        catch (final IOException | UnsupportedOperationException ex)
        {
            throw new IllegalArgumentException(flag + file + " cannot be read: " + ex, ex);
        }
    }

    /**
     * @param permissions a file's permission bits.
     * @return them as an octal mode such as {@code 0644}.
     */
    static String octal(final Set<PosixFilePermission> permissions)
    {
        int mode = 0;
        for (final PosixFilePermission permission : permissions)
        {
            mode |= 1 << (8 - permission.ordinal());
        }
        return String.format("0%03o", mode);
    }

    /**
     * @return the file the secret came from.
     */
    public Path file()
    {
        return file;
    }

    /**
     * @return a copy of the key that MACs peer frames.
     */
    public byte[] frameMacKey()
    {
        return frameMacKey.clone();
    }

    /**
     * @return a copy of the key the built-in transport's connection handshake proves.
     */
    public byte[] handshakeKey()
    {
        return handshakeKey.clone();
    }

    @Override
    public String toString()
    {
        return "ClusterSecret[" + file + "]";
    }
}
