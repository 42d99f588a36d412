package io.orbitkv.manager.peer;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;
import java.util.Random;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ClusterSecretTest
{
    private static final String SECRET = "0123456789abcdef0123456789abcdef";

    @TempDir
    Path dir;

    @Test
    void shouldRefuseASecretFileReadableByGroupOrOthersNamingItsMode() throws Exception
    {
        final Path file = secretFile(SECRET, "rw-r--r--");
        final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class, () -> ClusterSecret.load(file));
        assertTrue(ex.getMessage().contains("0644"), ex.getMessage());
        assertTrue(ex.getMessage().contains("--cluster-secret-file"), ex.getMessage());
        assertTrue(ex.getMessage().contains("chmod 600"), ex.getMessage());
        assertThrows(IllegalArgumentException.class, () -> ClusterSecret.load(secretFile(SECRET, "rw----r--")));
    }

    @Test
    void shouldRefuseASecretShorterThan32BytesAndTakeOneOf32() throws Exception
    {
        final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class,
            () -> ClusterSecret.load(secretFile(SECRET.substring(1) + "\n", "rw-------")));
        assertTrue(ex.getMessage().contains("31 bytes"), ex.getMessage());
        assertTrue(ex.getMessage().contains("at least 32"), ex.getMessage());
        ClusterSecret.load(secretFile(SECRET, "rw-------"));
        ClusterSecret.load(secretFile(SECRET, "r--------"));
        assertThrows(IllegalArgumentException.class,
            () -> ClusterSecret.load(secretFile("x".repeat(ClusterSecret.MAX_SECRET_BYTES + 1), "rw-------")));
        assertThrows(IllegalArgumentException.class, () -> ClusterSecret.load(dir.resolve("missing")));
    }

    @Test
    void shouldDeriveOneKeyPerPurposeIgnoringTrailingLineBreaks() throws Exception
    {
        final ClusterSecret plain = ClusterSecret.load(secretFile(SECRET, "rw-------"));
        final ClusterSecret withNewline = ClusterSecret.load(secretFile(SECRET + "\n", "rw-------"));
        final ClusterSecret other = ClusterSecret.load(secretFile(SECRET.replace('0', '1'), "rw-------"));
        assertArrayEquals(plain.frameMacKey(), withNewline.frameMacKey());
        assertArrayEquals(plain.handshakeKey(), withNewline.handshakeKey());
        assertFalse(Arrays.equals(plain.frameMacKey(), plain.handshakeKey()));
        assertFalse(Arrays.equals(plain.frameMacKey(), other.frameMacKey()));
        assertEquals(ClusterSecret.KEY_BYTES, plain.frameMacKey().length);

        // HKDF-SHA256 as RFC 5869 defines it, computed with the JDK's Mac.
        final byte[] prk = jdkHmac(ClusterSecret.SALT, SECRET.getBytes(StandardCharsets.US_ASCII));
        final byte[] info = ClusterSecret.FRAME_MAC_LABEL.getBytes(StandardCharsets.US_ASCII);
        final byte[] block = jdkHmac(prk, concat(info, new byte[]{1}));
        assertArrayEquals(block, plain.frameMacKey());
    }

    @Test
    void shouldComputeTheSameHmacAsTheJdkForEveryLengthAndTruncation() throws Exception
    {
        final Random random = new Random(5);
        for (final int keyLength : new int[]{16, 32, 64, 65, 100})
        {
            final byte[] key = new byte[keyLength];
            random.nextBytes(key);
            final HmacSha256 hmac = new HmacSha256(key);
            for (int length = 0; length < 300; length += 7)
            {
                final byte[] message = new byte[length];
                random.nextBytes(message);
                final byte[] expected = jdkHmac(key, message);
                hmac.start();
                hmac.update(message, 0, length / 2);
                hmac.update(message, length / 2, length - length / 2);
                final byte[] out = new byte[40];
                hmac.finish(out, 8, 16);
                assertArrayEquals(Arrays.copyOf(expected, 16), Arrays.copyOfRange(out, 8, 24));
                hmac.start();
                hmac.update(message, 0, length);
                hmac.finish(out, 0, 32);
                assertArrayEquals(expected, Arrays.copyOf(out, 32));
            }
        }
    }

    private Path secretFile(final String content, final String mode) throws Exception
    {
        final Path file = Files.createTempFile(dir, "secret", "");
        Files.writeString(file, content);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString(mode));
        return file;
    }

    private static byte[] jdkHmac(final byte[] key, final byte[] message) throws Exception
    {
        final Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(key, "HmacSHA256"));
        return mac.doFinal(message);
    }

    private static byte[] concat(final byte[] a, final byte[] b)
    {
        final byte[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
