package io.orbitkv.manager.e2e;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import io.orbitkv.client.EngineClient;
import io.orbitkv.client.KeyBatch;
import io.orbitkv.client.OperationResult;
import io.orbitkv.codecs.engine.KeyStatus;
import io.orbitkv.codecs.engine.StatusCode;
import io.orbitkv.manager.CatalogTestKeys;
import io.orbitkv.manager.catalog.CatalogCounter;
import io.orbitkv.manager.membership.EtcdCluster;
import io.orbitkv.manager.peer.PeerAuthCounter;
import io.orbitkv.manager.status.CounterDescriptor;
import io.orbitkv.manager.transfer.TransferCounter;
import org.agrona.CloseHelper;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Manager processes with {@code --cluster-secret-file}: two with the same secret discover and restore each other's
 * blocks over an authenticated channel; one with another secret is heard by nobody (its frames dropped and counted);
 * a secret file readable by others or too short stops the Manager at start.
 */
class PeerAuthEndToEndTest
{
    private static final String NS = "model=e2e-peer-auth;dtype=bf16";
    private static final int BLOCK = 64 * 1024;
    private static final int REGION_BLOCKS = 64;
    private static final long DEADLINE_NS = TimeUnit.SECONDS.toNanos(40);

    @TempDir
    Path secrets;

    private EtcdCluster etcd;
    private final List<OrbitKvProcesses> managers = new ArrayList<>();
    private final List<EngineClient> clients = new ArrayList<>();
    private String cluster;

    @AfterEach
    void tearDown()
    {
        CloseHelper.quietCloseAll(clients);
        CloseHelper.quietCloseAll(managers);
        CloseHelper.quietClose(etcd);
    }

    @Test
    @Timeout(180)
    void shouldRestoreRemoteBlocksByteExactBetweenManagersOfOneSecret() throws Exception
    {
        final Path secret = secret("shared", "0123456789abcdef0123456789abcdef-one", "rw-------");
        etcd = EtcdCluster.start(1);
        cluster = "auth-" + UUID.randomUUID().toString().substring(0, 8);
        final OrbitKvProcesses a = manager("a", secret);
        final OrbitKvProcesses b = manager("b", secret);
        awaitCounter(a, CatalogCounter.INCOMPLETE_SHARDS, 0);
        awaitCounter(b, CatalogCounter.INCOMPLETE_SHARDS, 0);
        assertTrue(a.managerOutput().contains("peer authentication is on"), a.managerOutput());

        final EngineClient engineA = engine(a);
        final EngineClient engineB = engine(b);
        final OperationResult result = new OperationResult(512);
        final KeyBatch prefix = CatalogTestKeys.batch(NS, 0, 16, BLOCK, REGION_BLOCKS);
        SeededBlocks.fill(engineA, 16, BLOCK);
        engineA.publish(prefix, result);
        assertEquals(16, result.value());
        CatalogTestKeys.awaitPeerKeys(engineB, prefix, 16, result, DEADLINE_NS);
        engineB.dataBuffer().setMemory(0, REGION_BLOCKS * BLOCK, (byte)0);
        engineB.read(prefix, 0L, true, result);
        assertEquals(StatusCode.OK, result.code(), result::message);
        assertEquals(16, result.count(KeyStatus.PEER));
        assertEquals(0, SeededBlocks.mismatches(engineB, 16, BLOCK), "byte exact");
        assertEquals(16, value(b, TransferCounter.BLOCKS_FETCHED));

        for (final OrbitKvProcesses m : new OrbitKvProcesses[]{a, b})
        {
            assertEquals(1, value(m, PeerAuthCounter.ENABLED));
            assertTrue(value(m, PeerAuthCounter.FRAMES_VERIFIED) > 0, m::dump);
            assertEquals(0, value(m, PeerAuthCounter.DROPPED_BAD_MAC), m::dump);
            assertEquals(0, value(m, PeerAuthCounter.DROPPED_DUPLICATE), m::dump);
            assertEquals(0, value(m, PeerAuthCounter.DROPPED_TOO_OLD), m::dump);
            assertEquals(0, value(m, PeerAuthCounter.DROPPED_SHORT), m::dump);
            assertEquals(2, value(m, PeerAuthCounter.SENDER_WINDOWS), "itself and the other");
        }
        // The requester's transport proved the secret on its streams to A (mirrored on the stats tick).
        awaitAtLeast(b, PeerAuthCounter.HANDSHAKES_PROVED, 1);
        awaitAtLeast(a, PeerAuthCounter.HANDSHAKES_PROVED, 1);
        assertEquals(0, value(a, PeerAuthCounter.HANDSHAKES_FAILED));
    }

    @Test
    @Timeout(180)
    void shouldDropAndCountEveryFrameOfAManagerWithAnotherSecret() throws Exception
    {
        etcd = EtcdCluster.start(1);
        cluster = "auth-" + UUID.randomUUID().toString().substring(0, 8);
        final int transferPort = freeTcpPort();
        final OrbitKvProcesses a = manager("a", secret("a", "0123456789abcdef0123456789abcdef-one", "rw-------"),
            "127.0.0.1:" + transferPort);
        final Path otherSecret = secret("b", "0123456789abcdef0123456789abcdef-two", "rw-------");
        final OrbitKvProcesses b = manager("b", otherSecret);
        final long deadlineNs = System.nanoTime() + DEADLINE_NS;
        while (value(a, PeerAuthCounter.DROPPED_BAD_MAC) == 0 || value(b, PeerAuthCounter.DROPPED_BAD_MAC) == 0)
        {
            assertTrue(System.nanoTime() - deadlineNs < 0, () -> "no foreign frame dropped\n" + a.dump() + b.dump());
            Thread.onSpinWait();
        }
        for (final OrbitKvProcesses m : new OrbitKvProcesses[]{a, b})
        {
            // A Manager also sends to its own endpoint; every frame that verified opened its sender's replay window, so
            // at most one window (its own, once it has sent itself a frame) means no frame of the other Manager passed,
            // and only frames that pass reach a handler.
            assertTrue(value(m, PeerAuthCounter.SENDER_WINDOWS) <= 1, m::dump);
            assertTrue(value(m, CatalogCounter.INCOMPLETE_SHARDS) > 0, "the other's shards stay uncovered");
        }

        // b's transport (its handshake key) reading from a's transfer endpoint: the handshake fails, a counts it.
        final io.orbitkv.transport.BuiltinTransport foreign = new io.orbitkv.transport.BuiltinTransport(
            new io.orbitkv.transport.BuiltinTransport.Context()
                .handshakeKey(io.orbitkv.manager.peer.ClusterSecret.load(otherSecret).handshakeKey())
                .identity(2, 2)
                .streamsPerPeer(1));
        try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined())
        {
            final java.lang.foreign.MemorySegment local = arena.allocate(1 << 16, 4096);
            foreign.registerMemory(local.address(), local.byteSize());
            final int peer = foreign.peer("127.0.0.1:" + transferPort);
            final int[] status = {-1};
            assertTrue(foreign.submitRead(peer, 1, 1, 4096, local.address(), 4096, 7));
            final long readDeadlineNs = System.nanoTime() + DEADLINE_NS;
            while (-1 == status[0])
            {
                foreign.poll(new io.orbitkv.transport.TransportListener()
                {
                    public void onReadComplete(final long requestId, final int readStatus, final long bytes)
                    {
                        status[0] = readStatus;
                    }

                    public void onRevoked(final long sessionId)
                    {
                    }
                }, 16);
                assertTrue(System.nanoTime() - readDeadlineNs < 0, "the foreign read never ended");
                Thread.onSpinWait();
            }
            assertTrue(io.orbitkv.transport.TransportStatus.OK != status[0]);
            assertTrue(foreign.stats().get(io.orbitkv.transport.BuiltinTransportStats.HANDSHAKES_FAILED) >= 1);
        }
        finally
        {
            foreign.close();
        }
        awaitAtLeast(a, PeerAuthCounter.HANDSHAKES_FAILED, 1);
        assertEquals(0, value(a, PeerAuthCounter.HANDSHAKES_PROVED));
        assertEquals(0, a.counter("transport: requests served"));
    }

    private static int freeTcpPort() throws IOException
    {
        try (java.net.ServerSocket socket = new java.net.ServerSocket(0))
        {
            return socket.getLocalPort();
        }
    }

    @Test
    @Timeout(60)
    void shouldRefuseToStartWithASecretFileOthersCanReadOrShorterThan32Bytes() throws Exception
    {
        etcd = EtcdCluster.start(1);
        cluster = "auth-" + UUID.randomUUID().toString().substring(0, 8);
        assertRefused(secret("open", "0123456789abcdef0123456789abcdef", "rw-r--r--"), "has mode 0644");
        assertRefused(secret("short", "0123456789abcdef", "rw-------"), "at least 32 bytes");
    }

    private void assertRefused(final Path secret, final String message) throws Exception
    {
        final OrbitKvProcesses m = new OrbitKvProcesses();
        managers.add(m);
        final OrbitKvProcesses.Started started = m.launchManager(args("x", secret));
        assertTrue(started.process().waitFor(30, TimeUnit.SECONDS), "the Manager stops at start");
        assertTrue(0 != started.process().exitValue());
        final String err = Files.readString(started.err()) + Files.readString(started.out());
        assertTrue(err.contains(message) && err.contains("--cluster-secret-file"), err);
    }

    private OrbitKvProcesses manager(final String node, final Path secret) throws IOException
    {
        return manager(node, secret, "127.0.0.1:0");
    }

    private OrbitKvProcesses manager(final String node, final Path secret, final String transferEndpoint)
        throws IOException
    {
        final OrbitKvProcesses m = new OrbitKvProcesses();
        managers.add(m);
        m.startManager(args(node, secret, transferEndpoint));
        return m;
    }

    private String[] args(final String node, final Path secret)
    {
        return args(node, secret, "127.0.0.1:0");
    }

    private String[] args(final String node, final Path secret, final String transferEndpoint)
    {
        return new String[]{
            "--pool-bytes", "32m",
            "--max-block-bytes", "64k",
            "--etcd-endpoints", etcd.endpoints(),
            "--cluster-name", cluster,
            "--node-id", node,
            "--catalog-nodes", "a,b",
            "--membership-ttl-secs", "30",
            "--transfer-endpoint", transferEndpoint,
            "--peer-admission", "off",
            "--cluster-secret-file", secret.toString()};
    }

    private Path secret(final String name, final String content, final String mode) throws IOException
    {
        final Path file = secrets.resolve(name);
        Files.writeString(file, content);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString(mode));
        return file;
    }

    private EngineClient engine(final OrbitKvProcesses m)
    {
        final EngineClient client = EngineClient.connect(new EngineClient.Context()
            .dir(m.dir.toString())
            .clientName("engine-" + clients.size())
            .dataRegionBytes((long)REGION_BLOCKS * BLOCK));
        clients.add(client);
        return client;
    }



    private static long value(final OrbitKvProcesses m, final CounterDescriptor d)
    {
        return m.counter(d.label());
    }


    private static void awaitAtLeast(final OrbitKvProcesses m, final CounterDescriptor d, final long least)
    {
        final long value = m.awaitCounterAtLeast(d.label(), least, DEADLINE_NS);
        assertTrue(value >= least, () -> d.label() + " at " + value + ", below " + least + "\n" + m.dump());
    }

    private static void awaitCounter(final OrbitKvProcesses m, final CounterDescriptor d, final long expected)
    {
        assertEquals(expected, m.awaitCounter(d.label(), expected, DEADLINE_NS), () -> d.label() + "\n" + m.dump());
    }
}
