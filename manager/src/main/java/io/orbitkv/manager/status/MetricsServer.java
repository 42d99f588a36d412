package io.orbitkv.manager.status;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.agrona.concurrent.status.CountersReader;

/**
 * Serves the CnC counters in Prometheus text format at {@code /metrics}, on its own thread: off the data path, it
 * only reads counter values the agents publish with release semantics.
 */
public final class MetricsServer implements AutoCloseable
{
    static final String PATH = "/metrics";

    private final HttpServer server;
    private final ExecutorService executor;
    private final CountersReader countersReader;
    private final SystemCounters systemCounters;

    public MetricsServer(final int port, final CountersReader countersReader, final SystemCounters systemCounters)
        throws IOException
    {
        this.countersReader = countersReader;
        this.systemCounters = systemCounters;
        server = HttpServer.create(new InetSocketAddress(port), 0);
        executor = Executors.newSingleThreadExecutor((runnable) ->
        {
            final Thread thread = new Thread(runnable, "orbitkv-metrics");
            thread.setDaemon(true);
            return thread;
        });
        server.setExecutor(executor);
        server.createContext(PATH, this::handle);
        server.start();
    }

    public int port()
    {
        return server.getAddress().getPort();
    }

    private void handle(final HttpExchange exchange) throws IOException
    {
        try (exchange)
        {
            if (!"GET".equals(exchange.getRequestMethod()))
            {
                exchange.sendResponseHeaders(405, -1);
                return;
            }
            final byte[] body = render(countersReader, systemCounters).getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream out = exchange.getResponseBody())
            {
                out.write(body);
            }
        }
    }

    /**
     * The counters in Prometheus text exposition format.
     *
     * @param countersReader to read.
     * @param systemCounters  which of its counters are gauges.
     * @return the text.
     */
    static String render(final CountersReader countersReader, final SystemCounters systemCounters)
    {
        final StringBuilder text = new StringBuilder(4096);
        countersReader.forEach((value, counterId, label) ->
        {
            final String name = metricName(label);
            text.append("# HELP ").append(name).append(' ').append(label.replace('\n', ' ')).append('\n');
            text.append("# TYPE ").append(name).append(' ').append(isGauge(systemCounters, counterId) ? "gauge" : "counter").append('\n');
            text.append(name).append(' ').append(value).append('\n');
        });
        return text.toString();
    }

    private static boolean isGauge(final SystemCounters systemCounters, final int counterId)
    {
        final CounterDescriptor descriptor = systemCounters.descriptor(counterId);
        return null != descriptor && descriptor.isGauge();
    }

    /**
     * {@code orbitkv_} and the label in snake case: "Requests: publish" becomes {@code orbitkv_requests_publish}.
     *
     * @param label a counter label.
     * @return a valid Prometheus metric name.
     */
    public static String metricName(final String label)
    {
        final StringBuilder name = new StringBuilder("orbitkv_");
        boolean pendingUnderscore = false;
        for (int i = 0; i < label.length(); i++)
        {
            final char c = Character.toLowerCase(label.charAt(i));
            if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
            {
                if (pendingUnderscore && name.length() > "orbitkv_".length())
                {
                    name.append('_');
                }
                name.append(c);
                pendingUnderscore = false;
            }
            else
            {
                pendingUnderscore = true;
            }
        }
        return name.toString();
    }

    public void close()
    {
        server.stop(0);
        executor.shutdownNow();
    }
}
