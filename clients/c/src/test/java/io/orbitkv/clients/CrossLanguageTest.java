package io.orbitkv.clients;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.orbitkv.client.BlockHashes;
import io.orbitkv.client.EngineClient;
import io.orbitkv.client.KeyBatch;
import io.orbitkv.client.OperationResult;
import io.orbitkv.codecs.engine.KeyStatus;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersReader;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Engines in C (okv-tool over liborbitkv.so), Python (the orbitkv package) and Java (EngineClient, in this JVM)
 * against one real Manager process: each publishes a chain the others restore byte-exact; bad input from C and
 * Python gets its statuses while the Manager keeps serving; a Python engine killed with SIGKILL while it holds pins
 * has them released; and the Python unittest suite runs against the same Manager.
 */
final class CrossLanguageTest
{
    private static final int BLOCK_BYTES = 8192;
    private static final int BLOCKS = 16;
    private static final long PROCESS_TIMEOUT_MS = 30_000;

    private static ManagerProcess manager;
    private static EngineClient java;

    private static final String TOOL = System.getProperty("orbitkv.c.tool", "target/bin/okv-tool");
    private static final String LIB = System.getProperty("orbitkv.c.lib", "target/lib/liborbitkv.so");
    private static final Path PYTHON_DIR = Paths.get(System.getProperty("orbitkv.python.dir", "../python"));

    @BeforeAll
    static void startManager() throws IOException
    {
        manager = ManagerProcess.start("--pool-bytes", "64m", "--client-timeout", "1s",
            "--engine-pool-access", "write-reserved");
        java = EngineClient.connect(new EngineClient.Context()
            .dir(manager.dir())
            .clientName("java-driver")
            .dataRegionBytes((long)BLOCKS * BLOCK_BYTES)
            .attachTimeoutNs(TimeUnit.SECONDS.toNanos(30)));
    }

    @AfterAll
    static void stopManager() throws Exception
    {
        if (java != null)
        {
            java.close();
        }
        if (manager != null)
        {
            manager.close();
        }
    }

    @Test
    void cRestoresWhatJavaPublishedAndJavaRestoresWhatCPublished() throws Exception
    {
        final String ns = "cross-c";
        javaPublish(ns, 11);
        final Run read = run(List.of(TOOL, manager.dir(), "read", ns, "11", "" + BLOCKS, "" + BLOCK_BYTES));
        assertEquals(0, read.exit, read.output);
        assertTrue(read.output.contains("restored=" + BLOCKS + " mismatches=0"), read.output);

        final Run publish = run(List.of(TOOL, manager.dir(), "publish", ns, "12", "" + BLOCKS, "" + BLOCK_BYTES));
        assertEquals(0, publish.exit, publish.output);
        assertTrue(publish.output.contains("stored=" + BLOCKS), publish.output);
        javaReadAndCheck(ns, 12);
    }

    @Test
    void cSavesIntoThePoolWithoutACopyAndJavaRestoresIt() throws Exception
    {
        final String ns = "cross-c-zero-copy";
        final Run save = run(List.of(TOOL, manager.dir(), "zero-copy", ns, "14", "" + BLOCKS, "" + BLOCK_BYTES));
        assertEquals(0, save.exit, save.output);
        assertTrue(save.output.contains("reserved=" + BLOCKS + " committed=" + BLOCKS + " unusable=0"), save.output);
        javaReadAndCheck(ns, 14);

        final Run again = run(List.of(TOOL, manager.dir(), "zero-copy", ns, "14", "" + BLOCKS, "" + BLOCK_BYTES));
        assertEquals(1, again.exit, again.output);
        assertTrue(again.output.contains("reserved=0 committed=0 unusable=" + BLOCKS), "resident keys get no slot: " +
            again.output);
    }

    @Test
    void cSplitsAChainLongerThanOneRequestAndJavaRestoresIt() throws Exception
    {
        // 1300 keys: three requests of at most 512 for the publish, the pinned lookup (of 2600 keys, stopping at
        // the third request's short prefix) and the read of its three leases
        final String ns = "cross-c-chain";
        final int count = 1300;
        final int bytes = 64;
        final Run chain = run(List.of(TOOL, manager.dir(), "chain", ns, "13", "" + count, "" + bytes));
        assertEquals(0, chain.exit, chain.output);
        assertTrue(chain.output.contains("single=6 publish_requests=3 stored=1300 lookup_requests=3 needed=6 " +
            "prefix=1300 read_requests=3 restored=1300 mismatches=0 too_long=6 failures=0"), chain.output);

        final KeyBatch batch = new KeyBatch(count).namespace(ns.getBytes(StandardCharsets.US_ASCII));
        for (int i = 0; i < count; i++)
        {
            final byte[] hash = Chain.hash(13, i);
            batch.addKey(hash, 0, hash.length, (long)i * bytes, bytes);
        }
        final OperationResult result = java.read(batch, 0, new OperationResult(count));
        assertTrue(result.isOk(), result.code() + " " + result.message());
        assertEquals(count, result.value());
        assertEquals(3, result.requestCount());
        final byte[] actual = new byte[bytes];
        for (int i = 0; i < count; i++)
        {
            java.dataBuffer().getBytes(i * bytes, actual);
            assertArrayEquals(Chain.content(Chain.hash(13, i), bytes), actual, "block " + i);
        }
    }

    @Test
    void pythonRestoresWhatJavaPublishedAndJavaRestoresWhatPythonPublished() throws Exception
    {
        final String ns = "cross-python";
        javaPublish(ns, 21);
        final Run read = run(python("read", ns, "21", "" + BLOCKS, "" + BLOCK_BYTES));
        assertEquals(0, read.exit, read.output);
        assertTrue(read.output.contains("restored=" + BLOCKS + " mismatches=0"), read.output);

        final Run publish = run(python("publish", ns, "22", "" + BLOCKS, "" + BLOCK_BYTES));
        assertEquals(0, publish.exit, publish.output);
        javaReadAndCheck(ns, 22);

        // and C restores what Python published
        final Run c = run(List.of(TOOL, manager.dir(), "read", ns, "22", "" + BLOCKS, "" + BLOCK_BYTES));
        assertEquals(0, c.exit, c.output);
    }

    @Test
    void integerHashesHaveTheSameBytesInEveryLanguage() throws Exception
    {
        // Java publishes a block under an integer hash; Python finds it under orbitkv.hash_from_int of the same value
        final KeyBatch batch = new KeyBatch(1).namespace("cross-int".getBytes(StandardCharsets.US_ASCII));
        final byte[] hash = BlockHashes.fromLong(-1234567890123L);
        batch.addKey(hash, 0, hash.length, 0, 64);
        java.dataBuffer().setMemory(0, 64, (byte)7);
        assertTrue(java.publish(batch, new OperationResult(1)).isOk());
        final Run found = run(List.of("python3", "-c",
            "import orbitkv,sys\n" +
            "with orbitkv.Client(dir=sys.argv[1], data_region_bytes=4096) as c:\n" +
            "    print(c.get(b'cross-int', [orbitkv.hash_from_int(-1234567890123)]) == [bytes([7]) * 64])\n",
            manager.dir()));
        assertTrue(found.output.contains("True"), found.output);
    }

    @Test
    void cComputesTheCommittedStateKeyShardVectors() throws Exception
    {
        final JsonNode vectors = new ObjectMapper().readTree(
            Paths.get("..", "..", "codecs", "src", "test", "resources", "state-key-shard-vectors.json").toFile());
        int checked = 0;
        for (final JsonNode vector : vectors.get("vectors"))
        {
            final Run shard = run(List.of(TOOL, "-", "shard", vector.get("namespaceHex").asText(), vector.get("hashHex").asText()));
            assertEquals(0, shard.exit, shard.output);
            assertEquals("canonical=" + vector.get("canonicalHex").asText() + " digest=" + vector.get("digestHex").asText() +
                " shard=" + vector.get("shard").asInt(), shard.output.trim());
            checked++;
        }
        assertTrue(checked > 0);
    }

    @Test
    void badInputFromCGetsStatusesAndTheManagerKeepsServing() throws Exception
    {
        final Run bad = run(List.of(TOOL, manager.dir(), "badargs"));
        assertEquals(0, bad.exit, bad.output);
        assertTrue(bad.output.contains("oversized=6 long_hash=7 out_of_range=8 unknown_lease=15 good=0 short_options=-1 " +
            "bad_wait_yield=-1,-1 v1_options=0 short_result=0 failures=0"), bad.output);
        javaPublish("after-bad-c", 31);
        javaReadAndCheck("after-bad-c", 31);
        assertTrue(manager.isAlive());
    }

    @Test
    void cAnswersEightConcurrentTickets() throws Exception
    {
        run(List.of(TOOL, manager.dir(), "publish", "cross-async", "41", "8", "1024"));
        final Run async = run(List.of(TOOL, manager.dir(), "async", "cross-async", "41", "8"));
        assertEquals(0, async.exit, async.output);
        assertTrue(async.output.contains("tickets=8 answered=8"), async.output);
    }

    @Test
    void cKeepsBothRingsConsistentAcrossManyWrapArounds() throws Exception
    {
        // 3,000 64-key lookups of about 2.5 KiB each go round the request ring and the 128 KiB response ring many
        // times (padding records at every wrap); a byte-exact round trip afterwards shows both rings still agree
        final Run many = run(List.of(TOOL, manager.dir(), "bench", "cross-wrap", "64", "3000"));
        assertEquals(0, many.exit, many.output);
        assertTrue(many.output.contains("iterations=3000"), many.output);
        final Run publish = run(List.of(TOOL, manager.dir(), "publish", "cross-wrap", "61", "" + BLOCKS, "" + BLOCK_BYTES));
        assertEquals(0, publish.exit, publish.output);
        javaReadAndCheck("cross-wrap", 61);
    }

    @Test
    void pythonEngineKilledWhileHoldingPinsHasThemReleased() throws Exception
    {
        final String ns = "cross-kill";
        javaPublish(ns, 51);
        final long before = counter("Pins active");
        final ProcessBuilder builder = new ProcessBuilder(python("pin-and-hold", ns, "51", "" + BLOCKS))
            .redirectErrorStream(true);
        pythonEnv(builder.environment());
        final Process holder = builder.start();
        try
        {
            final BufferedReader lines = new BufferedReader(new InputStreamReader(holder.getInputStream(), StandardCharsets.UTF_8));
            final String line = lines.readLine();
            assertEquals("pinned " + BLOCKS, line);
            // a gauge the Manager refreshes in its duty cycle: poll it with a deadline
            final long pinnedBy = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
            while (counter("Pins active") != before + BLOCKS && System.nanoTime() - pinnedBy < 0)
            {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
            }
            assertEquals(before + BLOCKS, counter("Pins active"));
        }
        finally
        {
            holder.destroyForcibly(); // SIGKILL: no detach, the Manager finds it silent
            holder.waitFor(5, TimeUnit.SECONDS);
        }
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        while (counter("Pins active") != before && System.nanoTime() - deadline < 0)
        {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
        }
        assertEquals(before, counter("Pins active"), "pins of the killed engine");
        javaReadAndCheck(ns, 51);
    }

    @Test
    void pipInstallsThePackageOfflineAndItAttaches() throws Exception
    {
        final Run venvSupport = run(List.of("python3", "-c", "import ensurepip, venv"));
        Assumptions.assumeTrue(venvSupport.exit == 0, "python3 without venv/ensurepip: " + venvSupport.output);
        final Path venv = Files.createTempDirectory("orbitkv-venv");
        try
        {
            final Run created = run(List.of("python3", "-m", "venv", venv.toString()));
            assertEquals(0, created.exit, created.output);
            final Run installed = run(List.of(venv.resolve("bin/pip").toString(), "install", "--no-index", "--no-cache-dir",
                "--disable-pip-version-check", PYTHON_DIR.toAbsolutePath().toString()));
            assertEquals(0, installed.exit, installed.output);
            final ProcessBuilder builder = new ProcessBuilder(venv.resolve("bin/python").toString(), "-c",
                "import orbitkv,sys\n" +
                "assert '/site-packages/orbitkv/' in orbitkv.__file__, orbitkv.__file__\n" +
                "with orbitkv.Client(dir=sys.argv[1], name='pip-installed', data_region_bytes=4096) as c:\n" +
                "    print('prefix', c.lookup(b'cross-c', [orbitkv.hash_from_int(1)]).prefix_len)\n",
                manager.dir()).directory(venv.toFile()).redirectErrorStream(true);
            builder.environment().remove("PYTHONPATH");
            builder.environment().remove("ORBITKV_LIB");
            final Process process = builder.start();
            final String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(process.waitFor(PROCESS_TIMEOUT_MS, TimeUnit.MILLISECONDS));
            assertEquals(0, process.exitValue(), output);
            assertTrue(output.contains("prefix 0"), output);
        }
        finally
        {
            run(List.of("rm", "-rf", venv.toString()));
        }
    }

    @Test
    void aManagerThatDiesIsReportedToPythonAsAStatus() throws Exception
    {
        try (ManagerProcess doomed = ManagerProcess.start("--pool-bytes", "16m", "--client-timeout", "1s"))
        {
            final ProcessBuilder builder = new ProcessBuilder("python3", "-c",
                "import orbitkv,sys\n" +
                "c = orbitkv.Client(dir=sys.argv[1], name='survivor', data_region_bytes=4096, attach_timeout_ms=30000)\n" +
                "print('attached', flush=True)\n" +
                "sys.stdin.readline()\n" +
                "try:\n" +
                "    c.lookup(b'ns', [b'h'])\n" +
                "    print('no error')\n" +
                "except orbitkv.OrbitKVError as e:\n" +
                "    print('code', e.code, flush=True)\n" +
                "c.close()\n" +
                "print('closed')\n",
                doomed.dir()).redirectErrorStream(true);
            pythonEnv(builder.environment());
            final Process engine = builder.start();
            try
            {
                final BufferedReader lines = new BufferedReader(new InputStreamReader(engine.getInputStream(), StandardCharsets.UTF_8));
                assertEquals("attached", lines.readLine());
                doomed.kill();
                engine.getOutputStream().write('\n');
                engine.getOutputStream().flush();
                assertEquals("code -7", lines.readLine()); // OKV_E_MANAGER_DIED
                assertEquals("closed", lines.readLine());
                assertTrue(engine.waitFor(PROCESS_TIMEOUT_MS, TimeUnit.MILLISECONDS));
                assertEquals(0, engine.exitValue());
            }
            finally
            {
                engine.destroyForcibly();
            }
        }
    }

    @Test
    void pythonUnittestSuite() throws Exception
    {
        final Run suite = run(List.of("python3", "-m", "unittest", "discover", "-s", PYTHON_DIR.resolve("tests").toString(),
            "-t", PYTHON_DIR.resolve("tests").toString(), "-p", "test_client.py", "-v"));
        System.out.println(suite.output);
        assertEquals(0, suite.exit, suite.output);
        assertTrue(suite.output.contains("OK"), suite.output);
        assertTrue(!suite.output.contains("skipped"), suite.output);
    }

    private static List<String> python(final String... args)
    {
        final List<String> command = new ArrayList<>(List.of("python3",
            PYTHON_DIR.resolve("tests").resolve("chain_tool.py").toString(), manager.dir()));
        command.addAll(List.of(args));
        return command;
    }

    private static void pythonEnv(final Map<String, String> env)
    {
        env.put("ORBITKV_LIB", Paths.get(LIB).toAbsolutePath().toString());
        env.put("ORBITKV_TEST_DIR", manager.dir());
        env.put("PYTHONPATH", PYTHON_DIR.toAbsolutePath().toString());
        env.put("PYTHONDONTWRITEBYTECODE", "1");
    }

    private record Run(int exit, String output)
    {
    }

    private static Run run(final List<String> command) throws IOException, InterruptedException
    {
        final Path out = Files.createTempFile("okv-client-run", ".log");
        try
        {
            final ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile());
            pythonEnv(builder.environment());
            final Process process = builder.start();
            if (!process.waitFor(PROCESS_TIMEOUT_MS, TimeUnit.MILLISECONDS))
            {
                process.destroyForcibly();
                throw new AssertionError("did not finish in " + PROCESS_TIMEOUT_MS + " ms: " + command + "\n" +
                    Files.readString(out));
            }
            return new Run(process.exitValue(), Files.readString(out));
        }
        finally
        {
            Files.deleteIfExists(out);
        }
    }

    private static KeyBatch chainBatch(final String ns, final long seed)
    {
        final KeyBatch batch = new KeyBatch(BLOCKS).namespace(ns.getBytes(StandardCharsets.US_ASCII));
        for (int i = 0; i < BLOCKS; i++)
        {
            final byte[] hash = Chain.hash(seed, i);
            batch.addKey(hash, 0, hash.length, (long)i * BLOCK_BYTES, BLOCK_BYTES);
        }
        return batch;
    }

    private static void javaPublish(final String ns, final long seed)
    {
        final UnsafeBuffer region = java.dataBuffer();
        for (int i = 0; i < BLOCKS; i++)
        {
            Chain.fill(Chain.hash(seed, i), region, i * BLOCK_BYTES, BLOCK_BYTES);
        }
        final OperationResult result = java.publish(chainBatch(ns, seed), new OperationResult(BLOCKS));
        assertTrue(result.isOk(), result.code() + " " + result.message());
        assertEquals(BLOCKS, result.keyCount());
    }

    private static void javaReadAndCheck(final String ns, final long seed)
    {
        final UnsafeBuffer region = java.dataBuffer();
        region.setMemory(0, BLOCKS * BLOCK_BYTES, (byte)0);
        final OperationResult result = java.read(chainBatch(ns, seed), 0, new OperationResult(BLOCKS));
        assertTrue(result.isOk(), result.code() + " " + result.message());
        assertEquals(BLOCKS, result.value());
        final byte[] actual = new byte[BLOCK_BYTES];
        for (int i = 0; i < BLOCKS; i++)
        {
            assertEquals(KeyStatus.DRAM, result.status(i));
            region.getBytes(i * BLOCK_BYTES, actual);
            assertArrayEquals(Chain.content(Chain.hash(seed, i), BLOCK_BYTES), actual, "block " + i);
        }
    }

    private static long counter(final String label)
    {
        final CountersReader counters = java.countersReader();
        final long[] value = {Long.MIN_VALUE};
        counters.forEach((id, label2) ->
        {
            if (label.equals(label2))
            {
                value[0] = counters.getCounterValue(id);
            }
        });
        assertTrue(value[0] != Long.MIN_VALUE, "no counter " + label);
        return value[0];
    }
}
