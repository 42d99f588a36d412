package io.orbitkv.transport;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * Certificates for TLS tests, made with openssl: a CA (EC P-256, self-signed) and a node certificate it issued, the
 * node's key in PKCS#8 PEM.
 */
final class TestCertificates
{
    private TestCertificates()
    {
    }

    /**
     * Make {@code ca.pem}/{@code ca.key} (unless there) and {@code node.pem}/{@code node.key} issued by it, in
     * {@code directory}, named by the two names.
     */
    static void make(final Path directory, final String ca, final String node) throws IOException, InterruptedException
    {
        final Path caPem = directory.resolve(ca + ".pem");
        final Path caKey = directory.resolve(ca + ".key");
        if (!Files.exists(caPem))
        {
            run("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-keyout", caKey.toString(), "-out", caPem.toString(), "-days", "2", "-subj", "/CN=" + ca);
        }
        final Path request = directory.resolve(node + ".csr");
        run("openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", directory.resolve(node + ".key").toString(), "-out", request.toString(), "-subj", "/CN=" + node);
        run("openssl", "x509", "-req", "-in", request.toString(), "-CA", caPem.toString(), "-CAkey", caKey.toString(),
            "-CAcreateserial", "-out", directory.resolve(node + ".pem").toString(), "-days", "2");
    }

    static void run(final String... command) throws IOException, InterruptedException
    {
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        final String output = new String(process.getInputStream().readAllBytes());
        if (!process.waitFor(30, TimeUnit.SECONDS) || 0 != process.exitValue())
        {
            throw new IOException(String.join(" ", command) + " failed: " + output);
        }
    }
}
