package io.orbitkv.bench;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * The line-rate anchor: iperf3 over loopback, a server on a free port and a client run per stream count
 * ({@code -c 127.0.0.1 -p PORT -t SECS -J [-P N]}), the received rate taken from its JSON summary.
 */
final class IperfAnchor implements AutoCloseable
{
    /** How long the server may take to say it listens. */
    static final long SERVER_START_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(10);

    private static final long POLL_NS = TimeUnit.MILLISECONDS.toNanos(10);

    private final String iperf3;
    private final Process server;
    private final int port;
    private final File dir;

    private IperfAnchor(final String iperf3, final Process server, final int port, final File dir)
    {
        this.iperf3 = iperf3;
        this.server = server;
        this.port = port;
        this.dir = dir;
    }

    /**
     * @return the iperf3 binary on PATH, or null.
     */
    static String binary()
    {
        return BenchTools.onPath("iperf3");
    }

    /**
     * Start {@code iperf3 -s} on a free loopback port and wait until it listens.
     *
     * @param iperf3 the binary.
     * @param dir    where the client's JSON outputs are kept.
     * @return the running anchor.
     * @throws IOException when the server exits or does not listen in time.
     */
    static IperfAnchor start(final String iperf3, final File dir) throws IOException
    {
        final int port = BenchEtcd.freePort();
        // --forceflush: without it the "listening" line sits in stdio's buffer of a pipe.
        final Process server = new ProcessBuilder(iperf3, "-s", "-B", "127.0.0.1", "-p", Integer.toString(port),
            "--forceflush")
            .redirectErrorStream(true)
            .start();
        final BufferedReader lines = new BufferedReader(new InputStreamReader(server.getInputStream(), StandardCharsets.UTF_8));
        final long deadlineNs = System.nanoTime() + SERVER_START_TIMEOUT_NS;
        final StringBuilder said = new StringBuilder();
        while (System.nanoTime() - deadlineNs < 0)
        {
            if (!lines.ready())
            {
                if (!server.isAlive())
                {
                    break;
                }
                LockSupport.parkNanos(POLL_NS);
                continue;
            }
            final String line = lines.readLine();
            if (null == line)
            {
                break;
            }
            said.append(line).append('\n');
            if (line.contains("listening on " + port))
            {
                drain(lines);
                return new IperfAnchor(iperf3, server, port, dir);
            }
        }
        BenchTools.stop(server);
        throw new IOException("iperf3 -s did not listen on 127.0.0.1:" + port + ": " + said);
    }

    /**
     * Run one client against the server.
     *
     * @param streams parallel streams ({@code -P}).
     * @param seconds test length ({@code -t}).
     * @return bits per second received, as iperf3's summary says.
     * @throws IOException when the client fails or its JSON has no summary.
     */
    double run(final int streams, final int seconds) throws IOException, InterruptedException
    {
        final List<String> command = new ArrayList<>(List.of(iperf3, "-c", "127.0.0.1", "-p", Integer.toString(port),
            "-t", Integer.toString(seconds), "-J"));
        if (streams > 1)
        {
            command.add("-P");
            command.add(Integer.toString(streams));
        }
        final File json = new File(dir, "iperf3-P" + streams + ".json");
        final Process client = new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(json)
            .start();
        if (!client.waitFor(seconds + 30L, TimeUnit.SECONDS))
        {
            BenchTools.stop(client);
            throw new IOException("iperf3 client did not finish in " + (seconds + 30) + " s");
        }
        final JsonNode summary = new ObjectMapper().readTree(Files.readString(json.toPath()));
        final JsonNode received = summary.path("end").path("sum_received").path("bits_per_second");
        if (0 != client.exitValue() || !received.isNumber())
        {
            throw new IOException("iperf3 client failed (exit " + client.exitValue() + "): " +
                summary.path("error").asText(Files.readString(json.toPath())));
        }
        return received.asDouble();
    }

    private static void drain(final BufferedReader lines)
    {
        // The server keeps writing a report per test; nobody reads it, so a thread empties the pipe.
        final Thread drainer = new Thread(() ->
        {
            try
            {
                while (null != lines.readLine())
                {
                    continue;
                }
            }
            catch (final IOException ex)
            {
                // the server exited
            }
        }, "iperf3-server-output");
        drainer.setDaemon(true);
        drainer.start();
    }

    public void close()
    {
        BenchTools.stop(server);
    }
}
