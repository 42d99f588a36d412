package io.orbitkv.manager.e2e;

import io.orbitkv.client.EngineClient;
import io.orbitkv.client.KeyBatch;
import io.orbitkv.client.OperationResult;
import io.orbitkv.codecs.engine.KeyStatus;
import io.orbitkv.manager.CatalogTestKeys;
import io.orbitkv.manager.authority.AuthorityLogDescriptor;
import io.orbitkv.manager.catalog.CatalogCounter;
import io.orbitkv.manager.membership.EtcdCluster;
import io.orbitkv.manager.membership.MembershipCounter;
import io.orbitkv.manager.membership.StallingTcpProxy;
import io.orbitkv.manager.status.CounterDescriptor;
import io.orbitkv.manager.transfer.TransferCounter;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.agrona.CloseHelper;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The authority log of Manager processes on a real etcd: a source whose registration expires (its connections to etcd
 * cut by a proxy, its peer still asking it) records FENCED and no grant decided after its validity deadline or its
 * fence, while it refuses the requests that come after; the log is read after the source was killed with SIGKILL, and
 * the harness's checker finds nothing stale across both Managers' logs.
 */
class AuthorityLogEndToEndTest
{
    private static final String NS = "model=e2e-authority;dtype=bf16";
    private static final int BLOCK = 16 * 1024;
    private static final int REGION_BLOCKS = 64;
    private static final long DEADLINE_NS = TimeUnit.SECONDS.toNanos(40);
    private static final ObjectMapper JSON = new ObjectMapper();

    private EtcdCluster etcd;
    private StallingTcpProxy proxy;
    private final List<OrbitKvProcesses> managers = new ArrayList<>();
    private final List<EngineClient> clients = new ArrayList<>();

    @AfterEach
    void tearDown()
    {
        CloseHelper.quietCloseAll(clients);
        CloseHelper.quietCloseAll(managers);
        CloseHelper.quietClose(proxy);
        CloseHelper.quietClose(etcd);
    }

    private OrbitKvProcesses startManager(final String node, final String endpoints, final String cluster)
        throws IOException
    {
        final OrbitKvProcesses processes = new OrbitKvProcesses();
        processes.startManager("--pool-bytes", "32m", "--max-block-bytes", "16k",
            "--etcd-endpoints", endpoints, "--cluster-name", cluster, "--node-id", node, "--catalog-nodes", "a,b",
            "--membership-ttl-secs", "10", "--transfer-endpoint", "127.0.0.1:0", "--peer-admission", "off");
        managers.add(processes);
        return processes;
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

    @Test
    @Timeout(240)
    void shouldRecordTheFenceOfAnExpiredSourceAndNoGrantAfterItsValidityReadableAfterAKill() throws Exception
    {
        etcd = EtcdCluster.start(1);
        proxy = new StallingTcpProxy(etcd.endpoints());
        final String cluster = "e2e-auth-" + UUID.randomUUID().toString().substring(0, 8);
        final OrbitKvProcesses a = startManager("a", proxy.endpoint(), cluster);
        final OrbitKvProcesses b = startManager("b", etcd.endpoints(), cluster);
        for (final OrbitKvProcesses m : managers)
        {
            assertEquals(0, m.awaitCounter(CatalogCounter.INCOMPLETE_SHARDS.label(), 0, DEADLINE_NS), m::dump);
        }
        final EngineClient engineA = engine(a);
        final EngineClient engineB = engine(b);
        final OperationResult result = new OperationResult(512);
        final KeyBatch prefix = CatalogTestKeys.batch(NS, 0, 8, BLOCK, REGION_BLOCKS);
        engineA.publish(prefix, result);
        assertEquals(8, result.value(), "published");
        CatalogTestKeys.awaitPeerKeys(engineB, prefix, 8, result, DEADLINE_NS);

        engineB.read(prefix, 0L, true, result);
        assertEquals(8, result.count(KeyStatus.PEER), "restored from a before the cut");

        // a is cut from etcd (and only from etcd): its registration expires within half the TTL, while b, whose view
        // keeps a's record until a's lease expires at etcd (the TTL), goes on asking a.
        proxy.cut();
        final long cutNs = System.nanoTime();
        assertEquals(1, a.awaitCounter(MembershipCounter.FENCED.label(), 1, DEADLINE_NS), a::dump);
        final long fencedSeenNs = System.nanoTime();
        final long refusedBefore = value(a, TransferCounter.SOURCE_REJECTED_FENCED);
        final long deadlineNs = cutNs + TimeUnit.SECONDS.toNanos(9);
        while (value(a, TransferCounter.SOURCE_REJECTED_FENCED) == refusedBefore && System.nanoTime() - deadlineNs < 0)
        {
            engineB.read(prefix, 0L, true, result);
        }
        assertTrue(value(a, TransferCounter.SOURCE_REJECTED_FENCED) > refusedBefore,
            "b asked the fenced source and was refused\n" + a.dump() + b.dump());

        a.managerProcess().destroyForcibly().waitFor();
        final Path aLog = a.dir.resolve(AuthorityLogDescriptor.FILE_NAME);
        final Records records = Records.read(aLog);
        final List<long[]> fences = records.of(AuthorityLogDescriptor.FENCED);
        assertEquals(1, fences.size(), records.toString());
        assertEquals(1, fences.get(0)[Records.F0], "cause: registration expired");
        final long fenceNs = fences.get(0)[Records.MONO];
        final long finalDeadlineNs = fences.get(0)[Records.F0 + 1];
        assertTrue(fenceNs - finalDeadlineNs >= 0, "fenced for expiry at or after its deadline");
        assertTrue(fenceNs - cutNs > 0 && fencedSeenNs - fenceNs >= 0, "fenced between the cut and the counter showing it");
        final List<long[]> grants = records.of(AuthorityLogDescriptor.GRANT);
        assertFalse(grants.isEmpty(), "the grant before the cut is recorded");
        for (final long[] grant : grants)
        {
            final long decidedNs = grant[Records.MONO];
            assertTrue(decidedNs - grant[Records.F0 + 4] < 0, "a grant decided before its own deadline");
            assertTrue(decidedNs - finalDeadlineNs < 0, "no grant after the validity deadline");
            assertTrue(decidedNs - fenceNs < 0, "no grant after the fence");
        }
        assertTrue(Records.read(b.dir.resolve(AuthorityLogDescriptor.FILE_NAME))
            .of(AuthorityLogDescriptor.FETCH_ACCEPTED).size() >= 1, "b accepted a's bytes before the cut");

        final JsonNode verdict = checker(a.dir, b.dir);
        assertEquals(0, verdict.get("violations").size(), verdict::toString);
        assertTrue(verdict.get("figures").get("grantsJudged").asInt() >= 1, verdict::toString);
        assertTrue(verdict.get("figures").get("acceptedJudged").asInt() >= 1, verdict::toString);
        assertEquals(1, verdict.get("figures").get("fences").asInt(), verdict::toString);
    }

    private static JsonNode checker(final Path... dirs) throws IOException, InterruptedException
    {
        final List<String> command = new ArrayList<>(List.of("python3", Paths.get(System.getProperty("user.dir"))
            .getParent().resolve("benches").resolve("qualify").resolve("authority.py").toString(), "--check"));
        for (final Path dir : dirs)
        {
            command.add(dir.toString());
        }
        final File err = File.createTempFile("authority-check", ".err");
        try
        {
            final Process p = new ProcessBuilder(command).redirectError(err).start();
            final String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(p.waitFor(30, TimeUnit.SECONDS));
            assertEquals("", Files.readString(err.toPath()));
            return JSON.readTree(out);
        }
        finally
        {
            Files.deleteIfExists(err.toPath());
        }
    }

    /**
     * The records of an authority log, read from its layout alone: per record {type, monotonic ns, F0..F8}.
     */
    private record Records(List<long[]> all)
    {
        static final int TYPE = 0;
        static final int MONO = 1;
        static final int F0 = 2;

        static Records read(final Path file) throws IOException
        {
            final ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.LITTLE_ENDIAN);
            assertEquals(AuthorityLogDescriptor.MAGIC, b.getInt(AuthorityLogDescriptor.MAGIC_OFFSET));
            final List<long[]> all = new ArrayList<>();
            for (int s = 0; s < b.getInt(AuthorityLogDescriptor.SECTION_COUNT_OFFSET); s++)
            {
                final int at = AuthorityLogDescriptor.sectionOffset(s);
                final long data = b.getLong(at + AuthorityLogDescriptor.SECTION_DATA_OFFSET);
                final long capacity = b.getLong(at + AuthorityLogDescriptor.SECTION_CAPACITY_OFFSET);
                final long position = b.getLong(at + AuthorityLogDescriptor.SECTION_POSITION_OFFSET);
                for (long i = Math.max(0, position - capacity); i < position; i++)
                {
                    final int r = (int)(data + (i % capacity) * AuthorityLogDescriptor.RECORD_LENGTH);
                    assertEquals(i + 1, b.getLong(r + AuthorityLogDescriptor.SEQUENCE_OFFSET), "record " + i + " complete");
                    final long[] record = new long[F0 + AuthorityLogDescriptor.FIELDS];
                    record[TYPE] = b.getInt(r + AuthorityLogDescriptor.TYPE_OFFSET);
                    record[MONO] = b.getLong(r + AuthorityLogDescriptor.MONO_NS_OFFSET);
                    for (int f = 0; f < AuthorityLogDescriptor.FIELDS; f++)
                    {
                        record[F0 + f] = b.getLong(r + AuthorityLogDescriptor.FIELDS_OFFSET + 8 * f);
                    }
                    all.add(record);
                }
            }
            return new Records(all);
        }

        List<long[]> of(final int type)
        {
            return all.stream().filter((r) -> r[TYPE] == type).toList();
        }

        public String toString()
        {
            final StringBuilder text = new StringBuilder();
            for (final long[] r : all)
            {
                text.append(AuthorityLogDescriptor.typeName((int)r[TYPE])).append(' ').append(r[MONO]).append('\n');
            }
            return text.toString();
        }
    }
}
