package io.orbitkv.manager.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.orbitkv.manager.cli.BlockChain;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The Manager as a separate OS process, engines as other processes running {@code orbitkv client}, as users run
 * them. Counters are read from the Manager's cnc.dat.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class EngineRingEndToEndTest
{
    private static final long CLIENT_TIMEOUT_MS = 60_000;

    @RegisterExtension
    final OrbitKvProcesses processes = OrbitKvProcesses.perTest();

    @Test
    void shouldRestoreTenThousandMixedBlocksByteExactInAnotherProcess() throws Exception
    {
        processes.startManager("--pool-bytes", "512m");
        final String[] chainA = {"--namespace", "model-a", "--seed", "11", "--blocks", "5000",
            "--min-block-bytes", "4k", "--block-bytes", "64k", "--no-keys"};
        final String[] chainB = {"--namespace", "model-b", "--seed", "22", "--blocks", "5000",
            "--min-block-bytes", "4k", "--block-bytes", "64k", "--no-keys"};

        final OrbitKvProcesses.ClientRun publishA = processes.runClient(CLIENT_TIMEOUT_MS, concat("publish", chainA));
        final OrbitKvProcesses.ClientRun publishB = processes.runClient(CLIENT_TIMEOUT_MS, concat("publish", chainB));
        assertEquals(0, publishA.exitCode(), publishA.stdout());
        assertEquals(5000, publishA.json().get("stored").asInt() + publishA.json().get("alreadyResident").asInt());
        assertEquals(5000, publishB.json().get("stored").asInt() + publishB.json().get("alreadyResident").asInt());

        final OrbitKvProcesses.ClientRun lookupA = processes.runClient(CLIENT_TIMEOUT_MS, concat("lookup", chainA));
        assertEquals(5000, lookupA.json().get("prefixLength").asInt(), lookupA.stdout());
        final OrbitKvProcesses.ClientRun prefix = processes.runClient(CLIENT_TIMEOUT_MS,
            "lookup", "--namespace", "model-a", "--seed", "11", "--blocks", "100",
            "--min-block-bytes", "4k", "--block-bytes", "64k");
        assertEquals(100, prefix.json().get("prefixLength").asInt());
        assertEquals("DRAM", prefix.json().get("tiers").get(99).asText());

        // --peers on a standalone Manager: the same answer as a local lookup, no PEER keys, no candidates
        final OrbitKvProcesses.ClientRun peers = processes.runClient(CLIENT_TIMEOUT_MS,
            "lookup", "--peers", "--namespace", "model-a", "--seed", "11", "--blocks", "100",
            "--min-block-bytes", "4k", "--block-bytes", "64k");
        assertEquals(0, peers.exitCode(), peers.stdout());
        assertEquals(100, peers.json().get("prefixLength").asInt());
        assertEquals(0, peers.json().get("peerKeys").asInt());
        assertEquals(0, peers.json().get("candidates").size());
        assertEquals(prefix.json().get("tiers"), peers.json().get("tiers"));

        // namespaces isolate identical hashes
        final OrbitKvProcesses.ClientRun crossed = processes.runClient(CLIENT_TIMEOUT_MS,
            "lookup", "--namespace", "model-b", "--seed", "11", "--blocks", "10", "--block-bytes", "4k");
        assertEquals(0, crossed.json().get("prefixLength").asInt());
        assertEquals("MISS", crossed.json().get("tiers").get(0).asText());

        final long expectedBytesA = new BlockChain(11, 5000, 4096, 65536).totalBytes(5000);
        final OrbitKvProcesses.ClientRun readA = processes.runClient(CLIENT_TIMEOUT_MS, concat("read", chainA));
        assertEquals(0, readA.exitCode(), readA.stdout());
        assertEquals(5000, readA.json().get("restored").asInt());
        assertEquals(0, readA.json().get("mismatches").asInt());
        assertEquals(expectedBytesA, readA.json().get("verifiedBytes").asLong());

        final OrbitKvProcesses.ClientRun readB = processes.runClient(CLIENT_TIMEOUT_MS, concat("read", chainB));
        assertEquals(0, readB.json().get("mismatches").asInt());
        assertEquals(new BlockChain(22, 5000, 4096, 65536).totalBytes(5000), readB.json().get("verifiedBytes").asLong());
    }

    @Test
    void shouldNeverEvictPinnedBlocksUnderPressure() throws Exception
    {
        processes.startManager("--pool-bytes", "32m");
        final OrbitKvProcesses.ClientRun publish = processes.runClient(CLIENT_TIMEOUT_MS,
            "publish", "--namespace", "pinned", "--seed", "1", "--blocks", "128", "--block-bytes", "64k", "--no-keys");
        assertEquals(128, publish.json().get("stored").asInt(), publish.stdout());

        final OrbitKvProcesses.Started holder = processes.startClient(
            "lookup", "--namespace", "pinned", "--seed", "1", "--blocks", "64", "--block-bytes", "64k",
            "--pin", "--hold-ms", "120000", "--no-keys");
        final JsonNode held = processes.awaitFirstLine(holder, TimeUnit.SECONDS.toNanos(30));
        assertEquals(64, held.get("prefixLength").asInt());
        assertTrue(processes.counter("Pins active") >= 64);

        final long evictionsBefore = processes.counter("Evictions");
        processes.runClient(CLIENT_TIMEOUT_MS,
            "publish", "--namespace", "pressure", "--seed", "2", "--blocks", "1500", "--block-bytes", "64k", "--no-keys");
        assertTrue(processes.counter("Evictions") > evictionsBefore, "pool pressure caused evictions");

        final OrbitKvProcesses.ClientRun read = processes.runClient(CLIENT_TIMEOUT_MS,
            "read", "--namespace", "pinned", "--seed", "1", "--blocks", "64", "--block-bytes", "64k", "--no-keys");
        assertEquals(64, read.json().get("restored").asInt(), read.stdout());
        assertEquals(0, read.json().get("mismatches").asInt());
        assertTrue(holder.process().isAlive(), "the lease holder was alive throughout");
    }

    @Test
    void shouldReleasePinsOfAClientKilledWhileHoldingALease() throws Exception
    {
        processes.startManager("--pool-bytes", "64m", "--client-timeout", "1s");
        processes.runClient(CLIENT_TIMEOUT_MS,
            "publish", "--namespace", "victim", "--seed", "3", "--blocks", "32", "--block-bytes", "16k", "--no-keys");
        final OrbitKvProcesses.Started holder = processes.startClient(
            "lookup", "--namespace", "victim", "--seed", "3", "--blocks", "32", "--block-bytes", "16k",
            "--pin", "--hold-ms", "120000", "--no-keys");
        final JsonNode held = processes.awaitFirstLine(holder, TimeUnit.SECONDS.toNanos(30));
        assertEquals(32, held.get("prefixLength").asInt());
        assertEquals(32, processes.counter("Pins active"));
        assertEquals(1, processes.counter("Leases active"));

        holder.process().destroyForcibly().waitFor(10, TimeUnit.SECONDS);

        assertEquals(0, processes.awaitCounter("Pins active", 0, TimeUnit.SECONDS.toNanos(10)));
        assertEquals(0, processes.counter("Leases active"));
        assertTrue(processes.counter("Client timeouts") >= 1);
        assertEquals(0, processes.awaitCounter("Clients attached", 0, TimeUnit.SECONDS.toNanos(10)));

        final OrbitKvProcesses.ClientRun read = processes.runClient(CLIENT_TIMEOUT_MS,
            "read", "--namespace", "victim", "--seed", "3", "--blocks", "32", "--block-bytes", "16k", "--no-keys");
        assertEquals(0, read.exitCode(), read.stdout());
        assertEquals(32, read.json().get("restored").asInt());
    }

    @Test
    void shouldStoreEachKeyOnceWhenTwoProcessesPublishTheSameChainConcurrently() throws Exception
    {
        processes.startManager("--pool-bytes", "256m");
        final String[] args = {"publish", "--namespace", "dup", "--seed", "5", "--blocks", "2000",
            "--block-bytes", "16k", "--no-keys"};
        final OrbitKvProcesses.Started first = processes.startClient(args);
        final OrbitKvProcesses.Started second = processes.startClient(args);
        assertTrue(first.process().waitFor(CLIENT_TIMEOUT_MS, TimeUnit.MILLISECONDS));
        assertTrue(second.process().waitFor(CLIENT_TIMEOUT_MS, TimeUnit.MILLISECONDS));
        final JsonNode a = OrbitKvProcesses.JSON.readTree(java.nio.file.Files.readString(first.out()).trim());
        final JsonNode b = OrbitKvProcesses.JSON.readTree(java.nio.file.Files.readString(second.out()).trim());

        assertEquals(2000, a.get("stored").asInt() + a.get("alreadyResident").asInt(), a.toString());
        assertEquals(2000, b.get("stored").asInt() + b.get("alreadyResident").asInt(), b.toString());
        assertEquals(2000, a.get("stored").asInt() + b.get("stored").asInt(), "each key stored exactly once");
        assertEquals(2000, processes.counter("Blocks published"));
        assertEquals(2000, processes.counter("Blocks resident"));
    }

    private static String[] concat(final String first, final String[] rest)
    {
        final String[] all = new String[rest.length + 1];
        all[0] = first;
        System.arraycopy(rest, 0, all, 1, rest.length);
        return all;
    }
}
