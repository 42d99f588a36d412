package io.orbitkv.clients;

import io.orbitkv.client.EngineClient;
import io.orbitkv.client.KeyBatch;
import io.orbitkv.client.OperationResult;
import io.orbitkv.codecs.engine.KeyStatus;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import java.io.File;
import java.io.IOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Peer detail of a Lookup with the peers flag from C and Python, against the Java client's: a real etcd, two
 * Manager processes (a and b) in one cluster, blocks published on a by a Java engine; an engine on b looks the chain
 * up with the peers flag in Java, in C ({@code okv-tool peers}) and in Python ({@code chain_tool.py peers}), and each
 * names the same candidate per key: the key index, the owner's node id and runtime UUID, its tier, the insertion
 * sequence and the length; then a Python engine on b restores the blocks from a byte-exact through a pinned lookup
 * with peers and a read of its lease.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
final class PeerCandidatesTest
{
    private static final int BLOCKS = 8;
    private static final int BLOCK_BYTES = 4096;
    private static final long SEED = 31;
    private static final String NS = "peer-detail";
    private static final long DISCOVERY_DEADLINE_NS = TimeUnit.SECONDS.toNanos(60);
    private static final String TOOL = System.getProperty("orbitkv.c.tool", "target/bin/okv-tool");
    private static final String LIB = System.getProperty("orbitkv.c.lib", "target/lib/liborbitkv.so");
    private static final Path PYTHON_DIR = Paths.get(System.getProperty("orbitkv.python.dir", "../python"));

    private final List<AutoCloseable> resources = new ArrayList<>();
    private Process etcd;
    private Path etcdDir;

    @AfterEach
    void stop() throws Exception
    {
        for (int i = resources.size() - 1; i >= 0; i--)
        {
            resources.get(i).close();
        }
        if (etcd != null)
        {
            etcd.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        if (etcdDir != null)
        {
            try (Stream<Path> paths = Files.walk(etcdDir))
            {
                paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    @Test
    void cAndPythonNameTheSameCandidatesAsJava() throws Exception
    {
        final String endpoint = startEtcd();
        final String cluster = "clients-" + UUID.randomUUID().toString().substring(0, 8);
        final ManagerProcess a = manager(endpoint, cluster, "a");
        final ManagerProcess b = manager(endpoint, cluster, "b");
        final EngineClient onA = engine(a, "engine-a");
        final EngineClient onB = engine(b, "engine-b");

        final UnsafeBuffer region = onA.dataBuffer();
        for (int i = 0; i < BLOCKS; i++)
        {
            Chain.fill(Chain.hash(SEED, i), region, i * BLOCK_BYTES, BLOCK_BYTES);
        }
        final OperationResult published = onA.publish(batch(), new OperationResult(BLOCKS));
        assertTrue(published.isOk(), published.code() + " " + published.message());

        // the catalog learns of a's blocks asynchronously: poll b with a deadline until every key is a PEER
        final OperationResult found = new OperationResult(BLOCKS);
        final long deadline = System.nanoTime() + DISCOVERY_DEADLINE_NS;
        while (onB.lookup(batch(), false, true, found).count(KeyStatus.PEER) < BLOCKS || found.candidateCount() < BLOCKS)
        {
            assertTrue(System.nanoTime() - deadline < 0, "b never saw a's blocks: " + found.candidateCount());
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
        }
        final List<String> expected = new ArrayList<>();
        for (int i = 0; i < found.candidateCount(); i++)
        {
            final int owner = found.candidateOwnerIndex(i);
            expected.add(String.format("candidate key=%d owner=%s uuid=%s tier=%s sequence=%d length=%d",
                found.candidateKeyIndex(i), found.ownerNodeId(owner),
                new UUID(found.ownerRuntimeUuidMsb(owner), found.ownerRuntimeUuidLsb(owner)),
                found.candidateTier(i), found.candidateInsertionSequence(i), found.candidateLength(i)));
        }
        assertEquals("a", found.ownerNodeId(0));

        final String c = run(List.of(TOOL, b.dir(), "peers", NS, "" + SEED, "" + BLOCKS));
        assertTrue(c.contains("status=0 prefix=0 candidates=" + expected.size() + " owners=1"), c);
        final String python = run(List.of("python3", PYTHON_DIR.resolve("tests").resolve("chain_tool.py").toString(),
            b.dir(), "peers", NS, "" + SEED, "" + BLOCKS));
        assertTrue(python.contains("prefix=0 candidates=" + expected.size() + " owners=1"), python);
        for (final String line : expected)
        {
            assertTrue(c.contains(line + "\n"), "C lacks '" + line + "':\n" + c);
            assertTrue(python.contains(line + "\n"), "Python lacks '" + line + "':\n" + python);
        }

        // and a Python engine on b restores a's blocks byte-exact: a pinned lookup with peers holds them at a, the
        // read of its lease fetches them
        final String fetched = run(List.of("python3", PYTHON_DIR.resolve("tests").resolve("chain_tool.py").toString(),
            b.dir(), "fetch", NS, "" + SEED, "" + BLOCKS, "" + BLOCK_BYTES));
        assertTrue(fetched.contains("op=fetch prefix=" + BLOCKS + " restored=" + BLOCKS + " mismatches=0 peer=" + BLOCKS),
            fetched);
    }

    private static KeyBatch batch()
    {
        final KeyBatch batch = new KeyBatch(BLOCKS).namespace(NS.getBytes(StandardCharsets.US_ASCII));
        for (int i = 0; i < BLOCKS; i++)
        {
            final byte[] hash = Chain.hash(SEED, i);
            batch.addKey(hash, 0, hash.length, (long)i * BLOCK_BYTES, BLOCK_BYTES);
        }
        return batch;
    }

    private ManagerProcess manager(final String etcdEndpoint, final String cluster, final String node) throws IOException
    {
        final ManagerProcess manager = ManagerProcess.start("--pool-bytes", "32m", "--client-timeout", "5s",
            "--etcd-endpoints", etcdEndpoint, "--cluster-name", cluster, "--node-id", node, "--catalog-nodes", "a,b",
            "--peer-endpoint", "127.0.0.1:" + freeUdpPort(), "--transfer-endpoint", "127.0.0.1:0");
        resources.add(manager);
        return manager;
    }

    private EngineClient engine(final ManagerProcess manager, final String name)
    {
        final EngineClient client = EngineClient.connect(new EngineClient.Context()
            .dir(manager.dir())
            .clientName(name)
            .dataRegionBytes((long)BLOCKS * BLOCK_BYTES)
            .attachTimeoutNs(TimeUnit.SECONDS.toNanos(30)));
        resources.add(client);
        return client;
    }

    /** One etcd member on free loopback ports, its data under /dev/shm; returns its client URL once healthy. */
    private String startEtcd() throws Exception
    {
        final Path shm = Paths.get("/dev/shm");
        etcdDir = Files.createTempDirectory(Files.isDirectory(shm) ? shm : Paths.get(System.getProperty("java.io.tmpdir")),
            "orbitkv-clients-etcd-");
        final String client = "http://127.0.0.1:" + freeTcpPort();
        final String peer = "http://127.0.0.1:" + freeTcpPort();
        final Path logs = Files.createDirectories(Paths.get("target", "clients-logs"));
        etcd = new ProcessBuilder("etcd", "--name", "m0", "--data-dir", etcdDir.resolve("m0").toString(),
            "--listen-client-urls", client, "--advertise-client-urls", client, "--listen-peer-urls", peer,
            "--initial-advertise-peer-urls", peer, "--initial-cluster", "m0=" + peer)
            .redirectErrorStream(true)
            .redirectOutput(logs.resolve(etcdDir.getFileName() + ".log").toFile())
            .start();
        final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (true)
        {
            try
            {
                final HttpResponse<String> health = http.send(HttpRequest.newBuilder(URI.create(client + "/health"))
                    .timeout(Duration.ofSeconds(1)).build(), HttpResponse.BodyHandlers.ofString());
                if (health.statusCode() == 200 && health.body().contains("\"true\""))
                {
                    return client;
                }
            }
            catch (final IOException ex)
            {
                // not listening yet
            }
            assertTrue(etcd.isAlive() && System.nanoTime() - deadline < 0, "etcd did not become healthy");
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
        }
    }

    private static int freeTcpPort() throws IOException
    {
        while (true)
        {
            try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress()))
            {
                final int port = socket.getLocalPort();
                if (port != 2379 && port != 2380)
                {
                    return port;
                }
            }
        }
    }

    private static int freeUdpPort() throws IOException
    {
        try (DatagramSocket socket = new DatagramSocket(0, InetAddress.getLoopbackAddress()))
        {
            return socket.getLocalPort();
        }
    }

    private static String run(final List<String> command) throws IOException, InterruptedException
    {
        final File out = Files.createTempFile("okv-peers", ".log").toFile();
        try
        {
            final ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out);
            builder.environment().put("ORBITKV_LIB", Paths.get(LIB).toAbsolutePath().toString());
            builder.environment().put("PYTHONPATH", PYTHON_DIR.toAbsolutePath().toString());
            builder.environment().put("PYTHONDONTWRITEBYTECODE", "1");
            final Process process = builder.start();
            if (!process.waitFor(30, TimeUnit.SECONDS))
            {
                process.destroyForcibly();
                throw new AssertionError("did not finish: " + command);
            }
            final String text = Files.readString(out.toPath());
            assertEquals(0, process.exitValue(), text);
            return text;
        }
        finally
        {
            Files.deleteIfExists(out.toPath());
        }
    }
}
