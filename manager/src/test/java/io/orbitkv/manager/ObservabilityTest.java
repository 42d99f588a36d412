package io.orbitkv.manager;

import io.orbitkv.manager.status.CounterDescriptor;
import io.orbitkv.manager.status.MetricsServer;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.orbitkv.manager.cli.OrbitKvCli;
import java.io.File;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ObservabilityTest
{
    private final File dir = ManagerTestSupport.newDir();
    private Manager manager;

    @AfterEach
    void tearDown()
    {
        if (null != manager)
        {
            manager.close();
        }
        ManagerTestSupport.deleteDir(dir);
    }

    @Test
    void shouldPrintHeaderAndEveryCounterWithStatOnce() throws Exception
    {
        manager = Manager.launch(ManagerTestSupport.smallContext(dir));
        try (RawRingClient client = new RawRingClient(manager.cncFile()))
        {
            client.attachOrFail("stat-engine", 1 << 20);
        }

        final StringWriter out = new StringWriter();
        final CommandLine cli = OrbitKvCli.commandLine();
        cli.setOut(new PrintWriter(out));
        final int exit = cli.execute("stat", "--dir", dir.getAbsolutePath(), "--once");
        final String text = out.toString();

        assertEquals(0, exit, text);
        assertTrue(text.contains("pid " + ProcessHandle.current().pid()), text);
        assertTrue(text.contains(manager.runtimeUuid().toString()), text);
        for (final CounterDescriptor descriptor : SystemCounterFamilies.descriptors().toList())
        {
            assertTrue(text.contains(descriptor.label()), "missing " + descriptor.label());
        }
        assertTrue(text.matches("(?s).*\\s1 - Requests: attach.*"), text);
    }

    @Test
    void shouldExplainWhenNoManagerIsThere()
    {
        final StringWriter err = new StringWriter();
        final CommandLine cli = OrbitKvCli.commandLine();
        cli.setErr(new PrintWriter(err));
        final int exit = cli.execute("stat", "--dir", dir.getAbsolutePath(), "--once");
        assertEquals(1, exit);
        assertTrue(err.toString().contains("no Manager CnC file"), err.toString());
    }

    @Test
    void shouldServeCountersInPrometheusFormat() throws Exception
    {
        final int port;
        try (ServerSocket socket = new ServerSocket(0))
        {
            port = socket.getLocalPort();
        }
        manager = Manager.launch(ManagerTestSupport.smallContext(dir).metricsPort(port));
        try (RawRingClient client = new RawRingClient(manager.cncFile()))
        {
            client.attachOrFail("metrics-engine", 1 << 20);
        }

        final HttpResponse<String> response;
        try (HttpClient http = HttpClient.newHttpClient())
        {
            response = http.send(
                HttpRequest.newBuilder(URI.create("http://localhost:" + manager.metricsPort() + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString());
        }
        assertEquals(200, response.statusCode());
        final String body = response.body();
        assertTrue(body.contains("\norbitkv_requests_attach 1\n"), body);
        assertTrue(body.contains("# TYPE orbitkv_pool_bytes_free gauge"), body);
        assertTrue(body.contains("orbitkv_rejected_unknown_client 0"), body);
        assertEquals("orbitkv_lookup_hits_keys", MetricsServer.metricName("Lookup hits (keys)"));
    }
}
