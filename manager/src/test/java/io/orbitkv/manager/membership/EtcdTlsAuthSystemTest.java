package io.orbitkv.manager.membership;

import static io.orbitkv.manager.membership.MembershipTestSupport.awaitCompleteWith;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.auth.Permission;
import io.orbitkv.manager.ManagerContext;
import io.orbitkv.manager.cli.OrbitKvCli;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * Membership against a real etcd that speaks TLS only, requires client certificates and has auth enabled, as
 * {@code scripts/etcd start --tls} runs it: the certificates come from {@code scripts/etcd certs} (openssl), the
 * users and roles are made through jetcd's auth API before auth is enabled. A plaintext client, a client trusting
 * another CA, a client without a certificate and a user whose role covers another prefix are each refused with a
 * message naming the cause; the right user joins, keeps its lease alive and sees the others.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
final class EtcdTlsAuthSystemTest
{
    private static final String CLUSTER = "tlsc";
    private static final String PASSWORD = "orbitkv-secret";
    private static final long JOIN_TIMEOUT_MS = 20_000;

    @TempDir
    static Path tmp;

    private static Path good;
    private static Path foreign;
    private static EtcdCluster etcd;

    @BeforeAll
    static void startEtcd() throws Exception
    {
        good = certs(tmp.resolve("good"));
        foreign = certs(tmp.resolve("foreign"));
        etcd = EtcdCluster.startTls(good);
        // CN=root authenticates as root once auth is on; before that every client may administer.
        try (Client admin = Client.builder().endpoints(etcd.endpoints())
            .sslContext(ssl -> ssl.trustManager(good.resolve("ca.pem").toFile())
                .keyManager(good.resolve("root.pem").toFile(), good.resolve("root.key").toFile()))
            .build())
        {
            final var auth = admin.getAuthClient();
            auth.userAdd(bytes("root"), bytes("root-" + PASSWORD)).get(10, TimeUnit.SECONDS);
            auth.userGrantRole(bytes("root"), bytes("root")).get(10, TimeUnit.SECONDS);
            role(admin, "orbitkv", MembershipConfiguration.clusterPrefix(CLUSTER));
            role(admin, "elsewhere", MembershipConfiguration.clusterPrefix("other"));
            auth.userAdd(bytes("orbitkv"), bytes(PASSWORD)).get(10, TimeUnit.SECONDS);
            auth.userGrantRole(bytes("orbitkv"), bytes("orbitkv")).get(10, TimeUnit.SECONDS);
            auth.userAdd(bytes("intruder"), bytes(PASSWORD)).get(10, TimeUnit.SECONDS);
            auth.userGrantRole(bytes("intruder"), bytes("elsewhere")).get(10, TimeUnit.SECONDS);
            auth.authEnable().get(10, TimeUnit.SECONDS);
        }
    }

    @AfterAll
    static void stopEtcd()
    {
        if (null != etcd)
        {
            etcd.close();
        }
    }

    private static void role(final Client admin, final String role, final String prefix) throws Exception
    {
        admin.getAuthClient().roleAdd(bytes(role)).get(10, TimeUnit.SECONDS);
        admin.getAuthClient().roleGrantPermission(bytes(role), bytes(prefix),
            bytes(prefix.substring(0, prefix.length() - 1) + "0"), Permission.Type.READWRITE).get(10, TimeUnit.SECONDS);
    }

    private static ByteSequence bytes(final String s)
    {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    static Path certs(final Path dir) throws IOException, InterruptedException
    {
        Path root = Paths.get("").toAbsolutePath();
        while (null != root && !Files.isExecutable(root.resolve("scripts/etcd")))
        {
            root = root.getParent();
        }
        if (null == root)
        {
            throw new IOException("scripts/etcd not found above " + Paths.get("").toAbsolutePath());
        }
        final Process process = new ProcessBuilder(root.resolve("scripts/etcd").toString(), "certs", dir.toString())
            .redirectErrorStream(true).start();
        final String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!process.waitFor(60, TimeUnit.SECONDS) || 0 != process.exitValue())
        {
            throw new IOException("scripts/etcd certs failed: " + output);
        }
        return dir;
    }

    private static Path passwordFile(final String name, final String password) throws IOException
    {
        final Path file = tmp.resolve(name);
        Files.writeString(file, password + "\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        return file;
    }

    private static EtcdSecurity security(final Path certs, final boolean clientCert, final String user)
        throws IOException
    {
        return EtcdSecurity.of(certs.resolve("ca.pem").toString(),
            clientCert ? certs.resolve("orbitkv.pem").toString() : null,
            clientCert ? certs.resolve("orbitkv.key").toString() : null,
            user, null == user ? null : passwordFile(user + ".password", PASSWORD).toString());
    }

    private static MembershipSettings settings(final String endpoints, final String nodeId, final EtcdSecurity security)
    {
        final MembershipSettings base = MembershipTestSupport.settings(endpoints, CLUSTER, nodeId, "a,b");
        return new MembershipSettings(base.etcdEndpoints(), base.clusterName(), base.nodeId(), base.ttlSecs(),
            base.etcdDeadlineMs(), base.placement(), base.peerEndpoint(), base.transferEndpoint(), base.runtimeUuid(),
            base.startTimeMs(), JOIN_TIMEOUT_MS, base.maxShardMoves(), security);
    }

    private static String refusedJoin(final String endpoints, final EtcdSecurity security)
    {
        final long startNs = System.nanoTime();
        final RuntimeException ex = assertThrows(RuntimeException.class,
            () -> MembershipTestSupport.join(settings(endpoints, "x", security), null).close());
        final long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs);
        assertTrue(ex instanceof Membership.EtcdAccessException, "refused for TLS/auth, not a timeout: " + ex);
        assertTrue(tookMs < JOIN_TIMEOUT_MS, "refused within the join timeout: " + tookMs + " ms");
        return ex.getMessage();
    }

    @Test
    void shouldJoinKeepAliveAndSeeMembersThroughTlsWithPasswordAuth() throws Exception
    {
        final EtcdSecurity security = security(good, true, "orbitkv");
        try (MembershipTestSupport.Joined a = MembershipTestSupport.join(settings(etcd.endpoints(), "a", security), null);
            MembershipTestSupport.Joined b = MembershipTestSupport.join(settings(etcd.endpoints(), "b", security), null))
        {
            awaitCompleteWith(a, "a", "b");
            awaitCompleteWith(b, "a", "b");
            final long keepalives = a.counter(MembershipCounter.ETCD_CALLS_LEASE_KEEPALIVE);
            MembershipTestSupport.await(() -> a.counter(MembershipCounter.ETCD_CALLS_LEASE_KEEPALIVE) > keepalives + 1,
                30_000, () -> "keepalives through TLS: " + a.counter(MembershipCounter.ETCD_CALLS_LEASE_KEEPALIVE));
            assertEquals(keepaliveFailures(a), 0, "no failed etcd call: " + a.log());
            assertEquals(a.membership.ownRecord(), b.membership.view().member("a"));

            // The same etcd through the CLI's shared options.
            final String[] out = cli("members", "--etcd-endpoints", etcd.endpoints(), "--cluster-name", CLUSTER,
                "--etcd-ca", good.resolve("ca.pem").toString(), "--etcd-cert", good.resolve("orbitkv.pem").toString(),
                "--etcd-key", good.resolve("orbitkv.key").toString(), "--etcd-user", "orbitkv",
                "--etcd-password-file", tmp.resolve("orbitkv.password").toString());
            assertEquals("0", out[0], out[2]);
            assertTrue(out[1].contains("2 member(s)"), out[1]);
        }
    }

    private static long keepaliveFailures(final MembershipTestSupport.Joined joined)
    {
        return joined.counter(MembershipCounter.ETCD_CALL_FAILURES);
    }

    @Test
    void shouldJoinAsTheUserItsClientCertificateNames()
    {
        try (MembershipTestSupport.Joined c = MembershipTestSupport.join(
            settings(etcd.endpoints(), "c", EtcdSecurity.of(good.resolve("ca.pem").toString(),
                good.resolve("orbitkv.pem").toString(), good.resolve("orbitkv.key").toString(), null, null)), null))
        {
            awaitCompleteWith(c, "c");
        }
    }

    @Test
    void shouldRefuseAPlaintextClientAndSayTheEndpointSpeaksTls()
    {
        final String plain = etcd.endpoints().replace("https://", "http://");
        final String message = refusedJoin(plain, EtcdSecurity.NONE);
        assertTrue(message.contains("TLS: etcd at " + plain + " speaks TLS") && message.contains("--etcd-ca"), message);
    }

    @Test
    void shouldRefuseAServerCertificateFromAnotherCa() throws IOException
    {
        final String message = refusedJoin(etcd.endpoints(), security(foreign, true, "orbitkv"));
        assertTrue(message.contains("TLS: etcd's server certificate is not signed by the CA in --etcd-ca " +
            foreign.resolve("ca.pem")), message);
    }

    @Test
    void shouldRefuseAClientWithoutACertificate() throws IOException
    {
        final String message = refusedJoin(etcd.endpoints(), security(good, false, "orbitkv"));
        assertTrue(message.contains("TLS: etcd refused the connection without a client certificate"), message);
    }

    @Test
    void shouldDenyAUserWhoseRoleCoversAnotherPrefixAndSaySo() throws IOException
    {
        final String message = refusedJoin(etcd.endpoints(), security(good, true, "intruder"));
        assertTrue(message.contains("etcd auth: permission denied: etcd user 'intruder' has no role that grants read " +
            "and write on /orbitkv/v1/tlsc/"), message);

        final String[] out = cli("placement", "status", "--etcd-endpoints", etcd.endpoints(), "--cluster-name", CLUSTER,
            "--etcd-ca", good.resolve("ca.pem").toString(), "--etcd-cert", good.resolve("orbitkv.pem").toString(),
            "--etcd-key", good.resolve("orbitkv.key").toString(), "--etcd-user", "intruder",
            "--etcd-password-file", tmp.resolve("intruder.password").toString());
        assertEquals("1", out[0], out[1] + out[2]);
        assertTrue(out[2].contains("permission denied: etcd user 'intruder'"), out[2]);
    }

    @Test
    void shouldRefuseAWrongPassword() throws IOException
    {
        final EtcdSecurity wrong = EtcdSecurity.of(good.resolve("ca.pem").toString(), good.resolve("orbitkv.pem").toString(),
            good.resolve("orbitkv.key").toString(), "orbitkv", passwordFile("wrong.password", "not-it").toString());
        final String message = refusedJoin(etcd.endpoints(), wrong);
        assertTrue(message.contains("etcd auth: authentication failed for user 'orbitkv'"), message);
    }

    @Test
    void shouldRefuseBadFilesAtStartWithWhatToDo() throws Exception
    {
        final Path open = tmp.resolve("open.password");
        Files.writeString(open, PASSWORD);
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rw-r--r--"));
        final IllegalArgumentException readable = assertThrows(IllegalArgumentException.class,
            () -> EtcdSecurity.of(null, null, null, "orbitkv", open.toString()));
        assertTrue(readable.getMessage().contains("accessible to its group or others") &&
            readable.getMessage().contains("chmod 600 " + open), readable.getMessage());

        final Path pkcs1 = tmp.resolve("pkcs1.key");
        final Process convert = new ProcessBuilder("openssl", "genrsa", "-traditional", "-out", pkcs1.toString(), "2048")
            .redirectErrorStream(true).start();
        convert.getInputStream().readAllBytes();
        assertEquals(0, convert.waitFor());
        assertTrue(Files.readString(pkcs1).contains("BEGIN RSA PRIVATE KEY"));
        final IllegalArgumentException legacy = assertThrows(IllegalArgumentException.class,
            () -> EtcdSecurity.of(good.resolve("ca.pem").toString(), good.resolve("orbitkv.pem").toString(),
                pkcs1.toString(), null, null));
        assertTrue(legacy.getMessage().contains("PKCS#1") &&
            legacy.getMessage().contains("openssl pkcs8 -topk8 -nocrypt -in " + pkcs1), legacy.getMessage());

        final IllegalArgumentException https = assertThrows(IllegalArgumentException.class, () -> new ManagerContext()
            .dir(tmp.resolve("mgr").toFile()).etcdEndpoints(etcd.endpoints()).clusterName(CLUSTER).nodeId("a")
            .catalogNodes("a").conclude());
        assertTrue(https.getMessage().contains("an https:// (TLS) etcd needs --etcd-ca"), https.getMessage());
    }

    private static String[] cli(final String... args)
    {
        final StringWriter out = new StringWriter();
        final StringWriter err = new StringWriter();
        final CommandLine cli = OrbitKvCli.commandLine();
        cli.setOut(new PrintWriter(out));
        cli.setErr(new PrintWriter(err));
        final List<String> all = new ArrayList<>(List.of(args));
        final int code = cli.execute(all.toArray(new String[0]));
        return new String[]{Integer.toString(code), out.toString(), err.toString()};
    }
}
