package io.orbitkv.manager.membership;

import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.agrona.IoUtil;

/**
 * Real etcd processes for tests: one or three members on free loopback ports (never 2379/2380), data under
 * /dev/shm, logs under target/etcd-logs. Members can be killed (SIGKILL), restarted on the same data and ports,
 * stopped and continued (SIGSTOP/SIGCONT). Every wait polls /health with a deadline.
 */
public final class EtcdCluster implements AutoCloseable
{
    static final long HEALTH_DEADLINE_NS = TimeUnit.SECONDS.toNanos(20);
    private static final Pattern JSON_NUMBER = Pattern.compile("\"%s\"\\s*:\\s*\"?(\\d+)\"?");
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();

    private final Path root;
    private final Path tlsDir;
    private final List<Member> members = new ArrayList<>();
    private final String token = "orbitkv-test-" + UUID.randomUUID();

    /** One etcd member. */
    public static final class Member
    {
        final String name;
        final int clientPort;
        final int peerPort;
        final Path dataDir;
        final Path log;
        final Path tlsDir;
        int metricsPort;
        Process process;

        Member(final String name, final int clientPort, final int peerPort, final Path dataDir, final Path log)
        {
            this(name, clientPort, peerPort, dataDir, log, null);
        }

        Member(final String name, final int clientPort, final int peerPort, final Path dataDir, final Path log,
            final Path tlsDir)
        {
            this.tlsDir = tlsDir;
            this.name = name;
            this.clientPort = clientPort;
            this.peerPort = peerPort;
            this.dataDir = dataDir;
            this.log = log;
        }

        String endpoint()
        {
            return (null == tlsDir ? "http://" : "https://") + "127.0.0.1:" + clientPort;
        }

        /** Where /health answers in plaintext: the client URL, or with TLS a separate metrics URL. */
        String healthBase()
        {
            return null == tlsDir ? endpoint() : "http://127.0.0.1:" + metricsPort;
        }

        String peerUrl()
        {
            return "http://127.0.0.1:" + peerPort;
        }

        long pid()
        {
            return process.pid();
        }
    }

    private EtcdCluster(final Path root)
    {
        this(root, null);
    }

    private EtcdCluster(final Path root, final Path tlsDir)
    {
        this.root = root;
        this.tlsDir = tlsDir;
    }

    /**
     * Start a one-member cluster whose client URL speaks TLS only and requires client certificates signed by the CA
     * in {@code tlsDir} ({@code ca.pem}, {@code server.pem}, {@code server.key}, as {@code scripts/etcd certs}
     * writes them); /health answers in plaintext on a separate metrics port.
     *
     * @param tlsDir the certificates.
     * @return the running cluster.
     */
    public static EtcdCluster startTls(final Path tlsDir) throws IOException
    {
        requireEtcd();
        IOException last = null;
        for (int attempt = 0; attempt < 3; attempt++)
        {
            final Path shm = Paths.get("/dev/shm");
            final EtcdCluster cluster = new EtcdCluster(
                Files.createTempDirectory(Files.isDirectory(shm) ? shm : Paths.get("/tmp"), "orbitkv-etcd-tls-"), tlsDir);
            try
            {
                cluster.launch(1);
                return cluster;
            }
            catch (final IOException ex)
            {
                last = ex;
                cluster.close();
            }
        }
        throw last;
    }

    /**
     * Start a cluster and wait until every member is healthy.
     *
     * @param size 1 or 3 members.
     * @return the running cluster.
     */
    public static EtcdCluster start(final int size) throws IOException
    {
        requireEtcd();
        IOException last = null;
        for (int attempt = 0; attempt < 3; attempt++)
        {
            final Path shm = Paths.get("/dev/shm");
            final EtcdCluster cluster = new EtcdCluster(
                Files.createTempDirectory(Files.isDirectory(shm) ? shm : Paths.get("/tmp"), "orbitkv-etcd-"));
            try
            {
                cluster.launch(size);
                return cluster;
            }
            catch (final IOException ex)
            {
                // most likely a port taken between probing and binding: try fresh ports
                last = ex;
                cluster.close();
            }
        }
        throw last;
    }

    /**
     * A one-member cluster with its ports chosen but not started, so that a Manager can be pointed at an etcd that
     * comes up later ({@link #startPlanned()}).
     *
     * @return the cluster, not running.
     */
    public static EtcdCluster planned() throws IOException
    {
        requireEtcd();
        final Path shm = Paths.get("/dev/shm");
        final EtcdCluster cluster = new EtcdCluster(
            Files.createTempDirectory(Files.isDirectory(shm) ? shm : Paths.get("/tmp"), "orbitkv-etcd-"));
        final Path logs = Files.createDirectories(Paths.get("target", "etcd-logs"));
        cluster.members.add(new Member("m0", freePort(), freePort(), cluster.root.resolve("m0"),
            logs.resolve(cluster.root.getFileName() + "-m0.log")));
        return cluster;
    }

    /**
     * Start a {@link #planned()} cluster on its chosen ports and wait until it is healthy.
     */
    public void startPlanned() throws IOException
    {
        for (final Member member : members)
        {
            spawn(member, "new");
        }
        for (final Member member : members)
        {
            awaitHealthy(member);
        }
    }

    private static void requireEtcd() throws IOException
    {
        for (final String dir : System.getenv().getOrDefault("PATH", "/usr/bin").split(File.pathSeparator))
        {
            if (new File(dir, "etcd").canExecute())
            {
                return;
            }
        }
        throw new IOException("no etcd binary on PATH: install etcd-server (apt-get install -y etcd-server; " +
            ".ci/run does this)");
    }

    private void launch(final int size) throws IOException
    {
        final Path logs = Files.createDirectories(Paths.get("target", "etcd-logs"));
        for (int i = 0; i < size; i++)
        {
            final String name = "m" + i;
            final Member member = new Member(name, freePort(), freePort(), root.resolve(name),
                logs.resolve(root.getFileName() + "-" + name + ".log"), tlsDir);
            member.metricsPort = freePort();
            members.add(member);
        }
        for (final Member member : members)
        {
            spawn(member, "new");
        }
        for (final Member member : members)
        {
            awaitHealthy(member);
        }
    }

    private String initialCluster()
    {
        final StringBuilder text = new StringBuilder();
        for (final Member member : members)
        {
            text.append(text.isEmpty() ? "" : ",").append(member.name).append('=').append(member.peerUrl());
        }
        return text.toString();
    }

    private void spawn(final Member member, final String state) throws IOException
    {
        final List<String> command = new ArrayList<>(List.of(
            "etcd",
            "--name", member.name,
            "--data-dir", member.dataDir.toString(),
            "--listen-client-urls", member.endpoint(),
            "--advertise-client-urls", member.endpoint(),
            "--listen-peer-urls", member.peerUrl(),
            "--initial-advertise-peer-urls", member.peerUrl(),
            "--initial-cluster", initialCluster(),
            "--initial-cluster-token", token,
            "--initial-cluster-state", state));
        if (null != member.tlsDir)
        {
            command.addAll(List.of(
                "--cert-file", member.tlsDir.resolve("server.pem").toString(),
                "--key-file", member.tlsDir.resolve("server.key").toString(),
                "--trusted-ca-file", member.tlsDir.resolve("ca.pem").toString(),
                "--client-cert-auth",
                "--listen-metrics-urls", member.healthBase()));
        }
        member.process = new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(member.log.toFile()))
            .start();
    }

    private static int freePort() throws IOException
    {
        while (true)
        {
            try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress()))
            {
                final int port = socket.getLocalPort();
                if (2379 != port && 2380 != port)
                {
                    return port;
                }
            }
        }
    }

    public Member member(final int index)
    {
        return members.get(index);
    }

    int size()
    {
        return members.size();
    }

    /**
     * Client URLs of every member, comma-separated.
     *
     * @return endpoints.
     */
    public String endpoints()
    {
        final StringBuilder text = new StringBuilder();
        for (final Member member : members)
        {
            text.append(text.isEmpty() ? "" : ",").append(member.endpoint());
        }
        return text.toString();
    }

    static boolean isHealthy(final Member member)
    {
        try
        {
            final HttpResponse<String> response = HTTP.send(
                HttpRequest.newBuilder(URI.create(member.healthBase() + "/health")).timeout(Duration.ofSeconds(1)).build(),
                HttpResponse.BodyHandlers.ofString());
            return 200 == response.statusCode() && response.body().contains("\"true\"");
        }
        catch (final IOException ex)
        {
            return false;
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    void awaitHealthy(final Member member) throws IOException
    {
        final long deadlineNs = System.nanoTime() + HEALTH_DEADLINE_NS;
        while (!isHealthy(member))
        {
            if (!member.process.isAlive())
            {
                throw new IOException("etcd " + member.name + " exited with " + member.process.exitValue() + ": " +
                    tail(member.log));
            }
            if (System.nanoTime() - deadlineNs > 0)
            {
                throw new IOException("etcd " + member.name + " not healthy in time: " + tail(member.log));
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
        }
    }

    /**
     * SIGKILL a member and wait for it to die.
     *
     * @param member the member.
     */
    public void kill(final Member member) throws InterruptedException
    {
        member.process.destroyForcibly();
        if (!member.process.waitFor(10, TimeUnit.SECONDS))
        {
            throw new IllegalStateException("etcd " + member.name + " survived SIGKILL");
        }
    }

    /**
     * Start a killed member again on its data and ports, and wait for health.
     *
     * @param member the member.
     */
    public void restart(final Member member) throws IOException
    {
        spawn(member, "existing");
        awaitHealthy(member);
    }

    /**
     * Index of the member the others follow, polled with a deadline.
     *
     * @return leader index.
     */
    int awaitLeaderIndex() throws IOException, InterruptedException
    {
        final long deadlineNs = System.nanoTime() + HEALTH_DEADLINE_NS;
        while (System.nanoTime() - deadlineNs < 0)
        {
            for (int i = 0; i < members.size(); i++)
            {
                final Member member = members.get(i);
                if (!member.process.isAlive())
                {
                    continue;
                }
                try
                {
                    final HttpResponse<String> response = HTTP.send(
                        HttpRequest.newBuilder(URI.create(member.endpoint() + "/v3/maintenance/status"))
                            .timeout(Duration.ofSeconds(1))
                            .POST(HttpRequest.BodyPublishers.ofString("{}")).build(),
                        HttpResponse.BodyHandlers.ofString());
                    final String memberId = number(response.body(), "member_id");
                    final String leader = number(response.body(), "leader");
                    if (null != memberId && memberId.equals(leader))
                    {
                        return i;
                    }
                }
                catch (final IOException ignore)
                {
                    // not answering yet
                }
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
        }
        throw new IOException("no etcd leader in time");
    }

    private static String number(final String json, final String field)
    {
        final Matcher matcher = Pattern.compile(String.format(JSON_NUMBER.pattern(), field)).matcher(json);
        return matcher.find() ? matcher.group(1) : null;
    }

    static String tail(final Path log)
    {
        try
        {
            final String text = Files.readString(log);
            return text.substring(Math.max(0, text.length() - 2000));
        }
        catch (final IOException ex)
        {
            return ex.toString();
        }
    }

    public static void signal(final long pid, final String signal) throws IOException, InterruptedException
    {
        final Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).inheritIO().start();
        if (0 != kill.waitFor())
        {
            throw new IOException("kill -" + signal + " " + pid + " failed");
        }
    }

    public void close()
    {
        // one at a time: stopping all members at once made the survivors wait for elections (notes/etcd.md)
        for (final Member member : members)
        {
            if (null != member.process && member.process.isAlive())
            {
                member.process.destroy();
                try
                {
                    if (!member.process.waitFor(5, TimeUnit.SECONDS))
                    {
                        member.process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
                    }
                }
                catch (final InterruptedException ex)
                {
                    member.process.destroyForcibly();
                    Thread.currentThread().interrupt();
                }
            }
        }
        IoUtil.delete(root.toFile(), true);
    }
}
