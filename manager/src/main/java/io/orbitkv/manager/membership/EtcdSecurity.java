package io.orbitkv.manager.membership;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.ClientBuilder;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.Set;
import javax.net.ssl.SSLException;

/**
 * How OrbitKV authenticates to etcd: TLS (a CA to verify etcd's server certificate, optionally a client certificate
 * and its PKCS#8 PEM key) and etcd user/password auth (the password read from an owner-only file). Validated when
 * built, so a bad file is a configuration error at start, not a join failure later. Also explains etcd call
 * failures that come from TLS or auth in words an operator can act on ({@link #explain}).
 *
 * @param ca           PEM file of the CA that signed etcd's server certificate, or null for no TLS.
 * @param cert         PEM client certificate (chain), or null.
 * @param key          PEM PKCS#8 private key of {@code cert}, or null.
 * @param user         etcd user, or null for no user/password auth.
 * @param passwordFile file holding the user's password, or null.
 * @param password     the password read from it (trailing line breaks dropped), or null.
 */
public record EtcdSecurity(Path ca, Path cert, Path key, String user, Path passwordFile, String password)
{
    /** Plaintext, no auth: what an etcd without TLS and auth takes. */
    public static final EtcdSecurity NONE = new EtcdSecurity(null, null, null, null, null, null);

    /** Longest password file read, in bytes; a longer file is refused. */
    public static final int MAX_PASSWORD_FILE_BYTES = 4096;

    /** How long the diagnostic probe of a plaintext endpoint waits for a TLS answer, in milliseconds. */
    static final int TLS_PROBE_TIMEOUT_MS = 500;

    @Override
    public String toString()
    {
        return "EtcdSecurity[ca=" + ca + ", cert=" + cert + ", key=" + key + ", user=" + user + ", passwordFile=" +
            passwordFile + "]";
    }

    /**
     * Build from the flags' values, checking every file.
     *
     * @param ca           {@code --etcd-ca} or null.
     * @param cert         {@code --etcd-cert} or null.
     * @param key          {@code --etcd-key} or null.
     * @param user         {@code --etcd-user} or null.
     * @param passwordFile {@code --etcd-password-file} or null.
     * @return the settings; {@link #NONE} when every value is null.
     * @throws IllegalArgumentException naming the flag and what is wrong.
     */
    public static EtcdSecurity of(
        final String ca, final String cert, final String key, final String user, final String passwordFile)
    {
        if (null == ca && null == cert && null == key && null == user && null == passwordFile)
        {
            return NONE;
        }
        if ((null == cert) != (null == key))
        {
            throw new IllegalArgumentException("--etcd-cert and --etcd-key go together (a client certificate and its key)");
        }
        if (null != cert && null == ca)
        {
            throw new IllegalArgumentException("--etcd-cert needs --etcd-ca (the CA that signed etcd's server certificate)");
        }
        if ((null == user) != (null == passwordFile))
        {
            throw new IllegalArgumentException("--etcd-user and --etcd-password-file go together");
        }
        final Path caPath = null == ca ? null : readablePem("--etcd-ca", ca, "CERTIFICATE");
        final Path certPath = null == cert ? null : readablePem("--etcd-cert", cert, "CERTIFICATE");
        final Path keyPath = null == key ? null : checkKey(key);
        if (null != user && user.isBlank())
        {
            throw new IllegalArgumentException("--etcd-user must not be empty");
        }
        final Path passwordPath = null == passwordFile ? null : Path.of(passwordFile);
        final String password = null == passwordFile ? null : readPassword(passwordPath);
        return new EtcdSecurity(caPath, certPath, keyPath, user, passwordPath, password);
    }

    /**
     * Whether the connection uses TLS.
     *
     * @return true with a CA.
     */
    public boolean tls()
    {
        return null != ca;
    }

    /**
     * Whether calls authenticate as an etcd user with a password.
     *
     * @return true with a user.
     */
    public boolean passwordAuth()
    {
        return null != user;
    }

    /**
     * The URL scheme the etcd endpoints must have.
     *
     * @return {@code https://} with TLS, else {@code http://}.
     */
    public String scheme()
    {
        return tls() ? "https://" : "http://";
    }

    /**
     * Check that every endpoint has this connection's scheme.
     *
     * @param endpoints comma-separated URLs.
     * @throws IllegalArgumentException naming the endpoint and the flag that changes the scheme.
     */
    public void checkEndpoints(final String endpoints)
    {
        for (final String endpoint : endpoints.split(","))
        {
            if (!endpoint.startsWith(scheme()))
            {
                throw new IllegalArgumentException(tls() ?
                    "--etcd-endpoints takes https:// URLs with --etcd-ca: '" + endpoint + "'" :
                    "--etcd-endpoints takes http:// URLs; an https:// (TLS) etcd needs --etcd-ca (and, when it asks for " +
                    "client certificates, --etcd-cert and --etcd-key): '" + endpoint + "'");
            }
        }
    }

    /**
     * Configure a jetcd client builder.
     *
     * @param builder the builder.
     */
    void apply(final ClientBuilder builder)
    {
        if (tls())
        {
            try
            {
                builder.sslContext(ssl ->
                {
                    ssl.trustManager(ca.toFile());
                    if (null != cert)
                    {
                        ssl.keyManager(cert.toFile(), key.toFile());
                    }
                });
            }
            catch (final SSLException | RuntimeException ex)
            {
                throw new IllegalArgumentException("cannot use --etcd-ca " + ca +
                    (null == cert ? "" : ", --etcd-cert " + cert + ", --etcd-key " + key) + ": " + ex.getMessage(), ex);
            }
        }
        if (passwordAuth())
        {
            builder.user(ByteSequence.from(user, StandardCharsets.UTF_8));
            builder.password(ByteSequence.from(password, StandardCharsets.UTF_8));
        }
    }

    private static Path readablePem(final String flag, final String file, final String type)
    {
        final Path path = Path.of(file);
        final String text = readSmall(flag, path);
        if (!text.contains("-----BEGIN " + type + "-----"))
        {
            throw new IllegalArgumentException(flag + " " + file + " holds no PEM " + type + " block");
        }
        return path;
    }

    private static Path checkKey(final String file)
    {
        final Path path = Path.of(file);
        final String text = readSmall("--etcd-key", path);
        if (text.contains("-----BEGIN RSA PRIVATE KEY-----") || text.contains("-----BEGIN EC PRIVATE KEY-----"))
        {
            throw new IllegalArgumentException("--etcd-key " + file + " is a PKCS#1/SEC1 key (BEGIN RSA/EC PRIVATE KEY); " +
                "give it as unencrypted PKCS#8 (BEGIN PRIVATE KEY): openssl pkcs8 -topk8 -nocrypt -in " + file +
                " -out " + file + ".pk8");
        }
        if (text.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----"))
        {
            throw new IllegalArgumentException("--etcd-key " + file + " is encrypted; give it unencrypted (and owner-only): " +
                "openssl pkcs8 -topk8 -nocrypt -in " + file + " -out " + file + ".pk8");
        }
        if (!text.contains("-----BEGIN PRIVATE KEY-----"))
        {
            throw new IllegalArgumentException("--etcd-key " + file + " holds no PEM PKCS#8 key (BEGIN PRIVATE KEY)");
        }
        return path;
    }

    private static String readSmall(final String flag, final Path path)
    {
        try
        {
            if (!Files.isRegularFile(path))
            {
                throw new IllegalArgumentException(flag + " " + path + " is not a readable file");
            }
            if (Files.size(path) > 1 << 20)
            {
                throw new IllegalArgumentException(flag + " " + path + " is larger than 1 MiB: not a PEM file");
            }
            return Files.readString(path, StandardCharsets.US_ASCII);
        }
        catch (final IOException ex)
        {
            throw new IllegalArgumentException(flag + " " + path + " cannot be read: " + ex, ex);
        }
    }

    private static String readPassword(final Path path)
    {
        try
        {
            if (!Files.isRegularFile(path))
            {
                throw new IllegalArgumentException("--etcd-password-file " + path + " is not a readable file");
            }
            final Set<PosixFilePermission> permissions = Files.getPosixFilePermissions(path, LinkOption.NOFOLLOW_LINKS);
            for (final PosixFilePermission permission : permissions)
            {
                if (permission.name().startsWith("GROUP_") || permission.name().startsWith("OTHERS_"))
                {
                    throw new IllegalArgumentException("--etcd-password-file " + path + " is accessible to its group or " +
                        "others (" + java.nio.file.attribute.PosixFilePermissions.toString(permissions) +
                        "); make it owner-only: chmod 600 " + path);
                }
            }
            if (Files.size(path) > MAX_PASSWORD_FILE_BYTES)
            {
                throw new IllegalArgumentException("--etcd-password-file " + path + " is larger than " +
                    MAX_PASSWORD_FILE_BYTES + " bytes");
            }
            String password = Files.readString(path, StandardCharsets.UTF_8);
            while (password.endsWith("\n") || password.endsWith("\r"))
            {
                password = password.substring(0, password.length() - 1);
            }
            if (password.isEmpty())
            {
                throw new IllegalArgumentException("--etcd-password-file " + path + " is empty");
            }
            return password;
        }
        catch (final IOException ex)
        {
            throw new IllegalArgumentException("--etcd-password-file " + path + " cannot be read: " + ex, ex);
        }
    }

    /**
     * Explain a failed etcd call when TLS or auth is why, for an operator.
     *
     * @param failure   the failure (any wrapping).
     * @param endpoints the endpoints the client used.
     * @param prefix    the key prefix the caller needs to read and write.
     * @return the explanation, or null when the failure is not about TLS or auth.
     */
    public String explain(final Throwable failure, final String endpoints, final String prefix)
    {
        for (Throwable t = failure; null != t; t = t.getCause())
        {
            if (t instanceof SSLException)
            {
                return explainTls(t);
            }
            final String message = null == t.getMessage() ? "" : t.getMessage();
            final Status.Code code = t instanceof StatusRuntimeException status ? status.getStatus().getCode() : null;
            if (Status.Code.PERMISSION_DENIED == code || message.contains("etcdserver: permission denied"))
            {
                return "etcd auth: permission denied: " + whoAmI() + " has no role that grants read and write on " +
                    prefix + " (etcdctl role grant-permission ROLE --prefix=true readwrite " + prefix + "; " +
                    "etcdctl user grant-role USER ROLE) [" + message + "]";
            }
            if (message.contains("authentication failed") || message.contains("invalid user ID or password"))
            {
                return "etcd auth: authentication failed for user '" + user + "' (check --etcd-user and the password in " +
                    passwordFile + ") [" + message + "]";
            }
            if (message.contains("user name is empty") || message.contains("user name not found") ||
                message.contains("invalid auth token"))
            {
                return "etcd auth: etcd has authentication enabled and " + whoAmI() + " is not a known etcd user: give " +
                    "--etcd-user and --etcd-password-file, or a client certificate whose CN is an etcd user [" + message + "]";
            }
        }
        if (!tls())
        {
            for (final String endpoint : endpoints.split(","))
            {
                final String certificate = tlsPeer(endpoint);
                if (null != certificate)
                {
                    return "TLS: etcd at " + endpoint + " speaks TLS (it presented the certificate " + certificate +
                        ") but this client connects in plaintext: use https:// endpoints with --etcd-ca (and " +
                        "--etcd-cert/--etcd-key when etcd requires client certificates)";
                }
            }
        }
        return null;
    }

    private String whoAmI()
    {
        if (passwordAuth())
        {
            return "etcd user '" + user + "'";
        }
        return null == cert ? "this client (no --etcd-user, no client certificate)" :
            "the user named by the CN of client certificate " + cert;
    }

    private String explainTls(final Throwable t)
    {
        final String message = String.valueOf(t.getMessage());
        final String lower = message.toLowerCase(java.util.Locale.ROOT);
        if (lower.contains("pkix") || lower.contains("certification path") || lower.contains("unable to find valid"))
        {
            return "TLS: etcd's server certificate is not signed by the CA in --etcd-ca " + ca + " [" + message + "]";
        }
        if (lower.contains("subject alternative name") || lower.contains("hostname"))
        {
            return "TLS: etcd's server certificate does not name the endpoint's host (its subjectAltName must list it) [" +
                message + "]";
        }
        if (lower.contains("bad_certificate") || lower.contains("certificate_required") ||
            lower.contains("bad certificate") || lower.contains("certificate required") ||
            lower.contains("unknown_ca") || lower.contains("unknown ca"))
        {
            return "TLS: etcd refused " + (null == cert ? "the connection without a client certificate: give " +
                "--etcd-cert and --etcd-key" : "the client certificate " + cert + ": it must be signed by a CA etcd trusts " +
                "(--trusted-ca-file)") + " [" + message + "]";
        }
        return "TLS: the handshake with etcd failed [" + message + "]";
    }

    /**
     * Whether a plaintext endpoint actually speaks TLS: send a ClientHello and report the certificate it answers
     * with. Only called after a call failed, to explain it.
     *
     * @param endpoint an http:// URL.
     * @return the subject of the server certificate, or null when it did not answer TLS.
     */
    static String tlsPeer(final String endpoint)
    {
        try
        {
            final URI uri = URI.create(endpoint.trim());
            if (null == uri.getHost() || uri.getPort() <= 0)
            {
                return null;
            }
            final javax.net.ssl.SSLContext context = javax.net.ssl.SSLContext.getInstance("TLS");
            final java.security.cert.X509Certificate[][] seen = new java.security.cert.X509Certificate[1][];
            context.init(null, new javax.net.ssl.TrustManager[]{new RecordingTrustManager(seen)}, null);
            try (Socket plain = new Socket())
            {
                plain.connect(new InetSocketAddress(uri.getHost(), uri.getPort()), TLS_PROBE_TIMEOUT_MS);
                plain.setSoTimeout(TLS_PROBE_TIMEOUT_MS);
                try (javax.net.ssl.SSLSocket socket = (javax.net.ssl.SSLSocket)context.getSocketFactory()
                    .createSocket(plain, uri.getHost(), uri.getPort(), true))
                {
                    try
                    {
                        socket.startHandshake();
                    }
                    catch (final IOException ex)
                    {
                        // a server that requires a client certificate fails the handshake after sending its own
                    }
                    if (null != seen[0] && seen[0].length > 0)
                    {
                        return "'" + seen[0][0].getSubjectX500Principal().getName() + "'";
                    }
                }
            }
        }
        catch (final IOException | java.security.GeneralSecurityException | IllegalArgumentException ex)
        {
            return null;
        }
        return null;
    }

    /** Accepts any server certificate and remembers it: used only by the diagnostic probe, which sends nothing. */
    private static final class RecordingTrustManager implements javax.net.ssl.X509TrustManager
    {
        private final java.security.cert.X509Certificate[][] seen;

        RecordingTrustManager(final java.security.cert.X509Certificate[][] seen)
        {
            this.seen = seen;
        }

        public void checkClientTrusted(final java.security.cert.X509Certificate[] chain, final String authType)
        {
            throw new UnsupportedOperationException("client side only");
        }

        public void checkServerTrusted(final java.security.cert.X509Certificate[] chain, final String authType)
        {
            seen[0] = chain;
        }

        public java.security.cert.X509Certificate[] getAcceptedIssuers()
        {
            return new java.security.cert.X509Certificate[0];
        }
    }
}
