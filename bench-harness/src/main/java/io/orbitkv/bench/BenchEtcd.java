package io.orbitkv.bench;

import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import org.agrona.IoUtil;

/**
 * A single-member etcd of a benchmark's own, on free loopback ports (never the default 2379/2380), with its data
 * and log under a directory the caller owns. Started and stopped by the bench, so a run needs no etcd set up first.
 */
final class BenchEtcd implements AutoCloseable
{
    /** How long etcd may take to answer its health check once started. */
    static final long START_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(30);

    private static final int START_ATTEMPTS = 3;
    private static final long HEALTH_POLL_NS = TimeUnit.MILLISECONDS.toNanos(50);

    private final List<String> command;
    private final File log;
    private final String endpoint;
    private final Path dataDir;
    private volatile Process process;

    private BenchEtcd(final List<String> command, final File log, final String endpoint, final Path dataDir)
        throws IOException
    {
        this.command = command;
        this.log = log;
        this.endpoint = endpoint;
        this.dataDir = dataDir;
        launch();
    }

    private void launch() throws IOException
    {
        process = new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log))
            .start();
    }

    /**
     * Whether an {@code etcd} binary is on the PATH.
     *
     * @return its path, or null.
     */
    static String binary()
    {
        return BenchTools.onPath("etcd");
    }

    /**
     * Start etcd and wait until it reports healthy; a port taken between probing and binding is retried on fresh ports.
     *
     * @param dir directory for the data and the log ({@code etcd.log}).
     * @return the running etcd.
     * @throws IOException when it cannot be started or never turns healthy.
     */
    static BenchEtcd start(final Path dir) throws IOException, InterruptedException
    {
        final String etcd = binary();
        if (null == etcd)
        {
            throw new IOException("no etcd binary on PATH (scripts/deps installs etcd-server)");
        }
        final File log = dir.resolve("etcd.log").toFile();
        IOException last = null;
        for (int attempt = 0; attempt < START_ATTEMPTS; attempt++)
        {
            final int clientPort = freePort();
            final int peerPort = freePort();
            if (clientPort == peerPort)
            {
                continue;
            }
            final String client = "http://127.0.0.1:" + clientPort;
            final String peer = "http://127.0.0.1:" + peerPort;
            final Path data = dir.resolve("etcd-data-" + attempt);
            final List<String> command = List.of(etcd,
                "--name", "bench",
                "--data-dir", data.toString(),
                "--listen-client-urls", client,
                "--advertise-client-urls", client,
                "--listen-peer-urls", peer,
                "--initial-advertise-peer-urls", peer,
                "--initial-cluster", "bench=" + peer,
                "--initial-cluster-state", "new");
            final BenchEtcd started = new BenchEtcd(command, log, client, data);
            if (started.awaitHealthy())
            {
                return started;
            }
            started.close();
            last = new IOException("etcd did not turn healthy at " + client + " (see " + log + ")");
        }
        throw null != last ? last : new IOException("no two distinct free ports for etcd");
    }

    /**
     * @return the client URL, as {@code --etcd-endpoints} takes it.
     */
    String endpoint()
    {
        return endpoint;
    }

    /**
     * Stop etcd as an operator would (SIGTERM, waiting for it to exit; SIGKILL after
     * {@link BenchTools#STOP_TIMEOUT_SECS}); its data directory and ports stay for {@link #restart}.
     *
     * @return its exit code.
     */
    int stop()
    {
        final Process p = process;
        BenchTools.stop(p);
        return p.exitValue();
    }

    /**
     * Start etcd again on the same data directory and client and peer ports, and wait until it reports healthy.
     *
     * @throws IOException when it cannot be started or does not turn healthy in {@link #START_TIMEOUT_NS}.
     */
    void restart() throws IOException, InterruptedException
    {
        if (process.isAlive())
        {
            throw new IllegalStateException("etcd is still running (pid " + process.pid() + ")");
        }
        launch();
        if (!awaitHealthy())
        {
            throw new IOException("etcd did not turn healthy again at " + endpoint + " on " + dataDir + " (see " + log +
                "):" + System.lineSeparator() + BenchTools.tail(log, 20));
        }
    }

    long pid()
    {
        return process.pid();
    }

    private boolean awaitHealthy() throws InterruptedException
    {
        final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
        final HttpRequest health = HttpRequest.newBuilder(URI.create(endpoint + "/health"))
            .timeout(Duration.ofSeconds(1)).GET().build();
        final long deadlineNs = System.nanoTime() + START_TIMEOUT_NS;
        while (System.nanoTime() - deadlineNs < 0)
        {
            if (!process.isAlive())
            {
                return false;
            }
            try
            {
                final HttpResponse<String> answer = http.send(health, HttpResponse.BodyHandlers.ofString());
                if (200 == answer.statusCode() && answer.body().contains("\"health\":\"true\""))
                {
                    return true;
                }
            }
            catch (final IOException ex)
            {
                // not listening yet
            }
            LockSupport.parkNanos(HEALTH_POLL_NS);
        }
        return false;
    }

    static int freePort() throws IOException
    {
        while (true)
        {
            try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress()))
            {
                final int port = socket.getLocalPort();
                if (2379 != port && 2380 != port)
                {
                    return port;
                }
            }
        }
    }

    public void close()
    {
        BenchTools.stop(process);
        if (Files.isDirectory(dataDir))
        {
            IoUtil.delete(dataDir.toFile(), true);
        }
    }
}
