package io.orbitkv.manager;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The transport's TLS files are loaded when the context is concluded: all three or none, a bad one named.
 */
class TransportTlsContextTest
{
    @TempDir
    Path dir;

    @Test
    void shouldLoadAllThreeFilesAtConcludeAndRefuseAPartialOrBrokenSet() throws Exception
    {
        assertNull(ManagerTestSupport.smallContext(ManagerTestSupport.newDir()).conclude().transportTls(),
            "no flag: plain TCP");

        final String ca = dir.resolve("ca.pem").toString();
        final String caKey = dir.resolve("ca.key").toString();
        final String key = dir.resolve("node.key").toString();
        final String cert = dir.resolve("node.pem").toString();
        final String request = dir.resolve("node.csr").toString();
        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", caKey,
            "-out", ca, "-days", "2", "-subj", "/CN=test-ca");
        openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out", request,
            "-subj", "/CN=test-node");
        openssl("x509", "-req", "-in", request, "-CA", ca, "-CAkey", caKey, "-CAcreateserial", "-out", cert, "-days", "2");

        assertNotNull(ManagerTestSupport.smallContext(ManagerTestSupport.newDir()).transportTls(cert, key, ca)
            .conclude().transportTls());

        final IllegalArgumentException partial = assertThrows(IllegalArgumentException.class,
            () -> ManagerTestSupport.smallContext(ManagerTestSupport.newDir()).transportTls(cert, null, ca).conclude());
        assertTrue(partial.getMessage().contains("--transport-tls-key"), partial.getMessage());

        final IllegalArgumentException broken = assertThrows(IllegalArgumentException.class,
            () -> ManagerTestSupport.smallContext(ManagerTestSupport.newDir()).transportTls(cert, request, ca).conclude());
        assertTrue(broken.getMessage().contains(request), broken.getMessage());
    }

    private static void openssl(final String... arguments) throws Exception
    {
        final String[] command = new String[arguments.length + 1];
        command[0] = "openssl";
        System.arraycopy(arguments, 0, command, 1, arguments.length);
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        final String output = new String(process.getInputStream().readAllBytes());
        assertTrue(process.waitFor(30, TimeUnit.SECONDS) && 0 == process.exitValue(), output);
    }
}
