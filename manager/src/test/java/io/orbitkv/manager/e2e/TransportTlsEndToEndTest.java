package io.orbitkv.manager.e2e;

import java.io.IOException;
import java.nio.file.Path;
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
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Manager processes with {@code --transport-tls-*}: two with certificates of one CA restore each other's blocks
 * byte-exact over TLS; a Manager without TLS gets no block from one with it, and the TLS end counts the failed
 * handshakes.
 */
class TransportTlsEndToEndTest
{
    private static final String NS = "model=e2e-transport-tls;dtype=bf16";
    private static final int BLOCK = 64 * 1024;
    private static final int REGION_BLOCKS = 64;
    private static final long DEADLINE_NS = TimeUnit.SECONDS.toNanos(40);

    @TempDir
    Path certificates;

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
    void shouldRestoreRemoteBlocksByteExactOverTlsAndRefuseAPlainPeer() throws Exception
    {
        makeCertificates();
        etcd = EtcdCluster.start(1);
        cluster = "tls-" + UUID.randomUUID().toString().substring(0, 8);
        final OrbitKvProcesses a = manager("a", true);
        final OrbitKvProcesses b = manager("b", true);
        awaitCounter(a, CatalogCounter.INCOMPLETE_SHARDS, 0);
        awaitCounter(b, CatalogCounter.INCOMPLETE_SHARDS, 0);
        assertTrue(a.managerOutput().contains("transfer transport TLS is on"), a.managerOutput());

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
        awaitAtLeast(b, PeerAuthCounter.TLS_HANDSHAKES_DONE, 1);
        awaitAtLeast(a, PeerAuthCounter.TLS_HANDSHAKES_DONE, 1);
        for (final OrbitKvProcesses m : new OrbitKvProcesses[]{a, b})
        {
            assertEquals(1, value(m, PeerAuthCounter.TLS_ENABLED), m::dump);
            assertEquals(0, value(m, PeerAuthCounter.TLS_HANDSHAKES_FAILED), m::dump);
        }

        // A third Manager without TLS: it sees a's blocks in the catalog but its transfer connections fail.
        final OrbitKvProcesses c = manager("c", false);
        awaitCounter(c, CatalogCounter.INCOMPLETE_SHARDS, 0);
        final EngineClient engineC = engine(c);
        CatalogTestKeys.awaitPeerKeys(engineC, prefix, 16, result, DEADLINE_NS);
        engineC.read(prefix, 0L, true, result);
        assertNotEquals(16, result.count(KeyStatus.PEER), "no block crosses from a TLS Manager to a plain one");
        awaitAtLeast(a, PeerAuthCounter.TLS_HANDSHAKES_FAILED, 1);
        assertEquals(0, value(c, PeerAuthCounter.TLS_ENABLED));
    }

    private void makeCertificates() throws Exception
    {
        final String ca = certificates.resolve("ca.pem").toString();
        final String caKey = certificates.resolve("ca.key").toString();
        final String request = certificates.resolve("node.csr").toString();
        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", caKey,
            "-out", ca, "-days", "2", "-subj", "/CN=e2e-ca");
        openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
            certificates.resolve("node.key").toString(), "-out", request, "-subj", "/CN=e2e-node");
        openssl("x509", "-req", "-in", request, "-CA", ca, "-CAkey", caKey, "-CAcreateserial", "-out",
            certificates.resolve("node.pem").toString(), "-days", "2");
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

    private OrbitKvProcesses manager(final String node, final boolean tls) throws IOException
    {
        final OrbitKvProcesses m = new OrbitKvProcesses();
        managers.add(m);
        final List<String> args = new ArrayList<>(List.of(
            "--pool-bytes", "32m",
            "--max-block-bytes", "64k",
            "--etcd-endpoints", etcd.endpoints(),
            "--cluster-name", cluster,
            "--node-id", node,
            "--catalog-nodes", "a,b",
            "--membership-ttl-secs", "30",
            "--transfer-endpoint", "127.0.0.1:0",
            "--peer-admission", "off"));
        if (tls)
        {
            args.addAll(List.of(
                "--transport-tls-cert", certificates.resolve("node.pem").toString(),
                "--transport-tls-key", certificates.resolve("node.key").toString(),
                "--transport-tls-ca", certificates.resolve("ca.pem").toString()));
        }
        m.startManager(args.toArray(new String[0]));
        return m;
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
