package io.orbitkv.transport;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.TrustManagerFactory;

/**
 * TLS for the built-in transport's connections ({@link BuiltinTransport.Context#tls}): mutual TLS 1.3 from PEM files.
 * This end presents its certificate chain and key; it accepts a peer, in either role, only if the peer presents a
 * chain that verifies against the CA file. Peers are identified by the CA alone: no host name is checked, so every
 * holder of a certificate the CA issued is a member.
 * <p>
 * Built once, at start; {@link #engine(boolean)} makes one engine per connection.
 */
public final class TransportTls
{
    /** The only protocol offered and accepted. */
    public static final String PROTOCOL = "TLSv1.3";

    private static final char[] IN_MEMORY_PASSWORD = "orbitkv".toCharArray();
    private static final String[] KEY_ALGORITHMS = {"EC", "RSA", "Ed25519", "Ed448", "RSASSA-PSS"};

    private final SSLContext context;
    private final int packetBytes;
    private final int applicationBytes;

    private TransportTls(final SSLContext context)
    {
        this.context = context;
        final SSLEngine probe = engine(true);
        packetBytes = probe.getSession().getPacketBufferSize();
        applicationBytes = probe.getSession().getApplicationBufferSize();
    }

    /**
     * Load PEM files.
     *
     * @param certificate this end's certificate, then any intermediates (PEM {@code CERTIFICATE} blocks).
     * @param key         this end's private key, PKCS#8 PEM ({@code BEGIN PRIVATE KEY}; EC, RSA or EdDSA).
     * @param ca          the certificates a peer's chain must lead to (one or more PEM {@code CERTIFICATE} blocks).
     * @return the loaded configuration.
     * @throws IllegalArgumentException naming the file that could not be read or parsed.
     */
    public static TransportTls fromPem(final Path certificate, final Path key, final Path ca)
    {
        final List<Certificate> chain = certificates(certificate);
        final List<Certificate> authorities = certificates(ca);
        final PrivateKey privateKey = privateKey(key);
        try
        {
            final KeyStore keys = KeyStore.getInstance("PKCS12");
            keys.load(null, null);
            keys.setKeyEntry("self", privateKey, IN_MEMORY_PASSWORD, chain.toArray(new Certificate[0]));
            final KeyManagerFactory keyManagers = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            keyManagers.init(keys, IN_MEMORY_PASSWORD);

            final KeyStore trust = KeyStore.getInstance("PKCS12");
            trust.load(null, null);
            for (int i = 0; i < authorities.size(); i++)
            {
                trust.setCertificateEntry("ca" + i, authorities.get(i));
            }
            final TrustManagerFactory trustManagers =
                TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            trustManagers.init(trust);

            final SSLContext context = SSLContext.getInstance(PROTOCOL);
            context.init(keyManagers.getKeyManagers(), trustManagers.getTrustManagers(), null);
            return new TransportTls(context);
        }
        catch (final GeneralSecurityException | IOException ex)
        {
            throw new IllegalArgumentException("TLS: the key " + key + " does not fit the certificate " + certificate +
                " or the CA " + ca + ": " + ex.getMessage(), ex);
        }
    }

    /**
     * A new engine for one connection: TLS 1.3 only, the peer's certificate required both ways.
     *
     * @param client true for the requester's end (it connects), false for the source's (it accepts).
     * @return the engine.
     */
    SSLEngine engine(final boolean client)
    {
        final SSLEngine engine = context.createSSLEngine();
        engine.setUseClientMode(client);
        final SSLParameters parameters = engine.getSSLParameters();
        parameters.setProtocols(new String[] {PROTOCOL});
        parameters.setNeedClientAuth(true);
        engine.setSSLParameters(parameters);
        return engine;
    }

    int packetBytes()
    {
        return packetBytes;
    }

    int applicationBytes()
    {
        return applicationBytes;
    }

    private static List<Certificate> certificates(final Path file)
    {
        final List<Certificate> certificates = new ArrayList<>();
        try
        {
            final CertificateFactory factory = CertificateFactory.getInstance("X.509");
            for (final byte[] der : pemBlocks(file, "CERTIFICATE"))
            {
                certificates.add(factory.generateCertificate(new ByteArrayInputStream(der)));
            }
        }
        catch (final GeneralSecurityException ex)
        {
            throw new IllegalArgumentException("TLS: " + file + " holds a certificate that does not parse: " +
                ex.getMessage(), ex);
        }
        if (certificates.isEmpty())
        {
            throw new IllegalArgumentException("TLS: " + file + " holds no PEM CERTIFICATE block");
        }
        return certificates;
    }

    private static PrivateKey privateKey(final Path file)
    {
        final List<byte[]> blocks = pemBlocks(file, "PRIVATE KEY");
        if (1 != blocks.size())
        {
            throw new IllegalArgumentException("TLS: " + file + " must hold exactly one PKCS#8 PEM block " +
                "(BEGIN PRIVATE KEY); convert a key with: openssl pkcs8 -topk8 -nocrypt -in OLD -out " + file);
        }
        final PKCS8EncodedKeySpec spec = new PKCS8EncodedKeySpec(blocks.get(0));
        for (final String algorithm : KEY_ALGORITHMS)
        {
            try
            {
                return KeyFactory.getInstance(algorithm).generatePrivate(spec);
            }
            catch (final GeneralSecurityException ex)
            {
                // Not this algorithm: try the next.
            }
        }
        throw new IllegalArgumentException("TLS: " + file + " holds a PKCS#8 key of none of " +
            String.join(", ", KEY_ALGORITHMS));
    }

    private static List<byte[]> pemBlocks(final Path file, final String type)
    {
        final String text;
        try
        {
            text = Files.readString(file, StandardCharsets.US_ASCII);
        }
        catch (final IOException ex)
        {
            throw new IllegalArgumentException("TLS: cannot read " + file + ": " + ex.getMessage(), ex);
        }
        final String begin = "-----BEGIN " + type + "-----";
        final String end = "-----END " + type + "-----";
        final List<byte[]> blocks = new ArrayList<>();
        int at = text.indexOf(begin);
        while (at >= 0)
        {
            final int stop = text.indexOf(end, at);
            if (stop < 0)
            {
                throw new IllegalArgumentException("TLS: " + file + " has a " + begin + " without its END line");
            }
            try
            {
                blocks.add(Base64.getMimeDecoder().decode(text.substring(at + begin.length(), stop)));
            }
            catch (final IllegalArgumentException ex)
            {
                throw new IllegalArgumentException("TLS: " + file + " has a PEM block that is not base64", ex);
            }
            at = text.indexOf(begin, stop);
        }
        return blocks;
    }
}
