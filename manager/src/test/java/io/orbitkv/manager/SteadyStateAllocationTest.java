package io.orbitkv.manager;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.lang.management.ManagementFactory;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * design: the steady-state path (Publish/Lookup/Read for known namespaces) allocates nothing. Measured on the agent
 * thread itself with the JVM's per-thread allocation counter, over real requests through the CnC rings.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class SteadyStateAllocationTest
{
    private static final String NS = "model=alloc;dtype=bf16";
    private static final int KEYS = 64;
    private static final int BLOCK = 16 * 1024;

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
    void shouldNotAllocateOnTheAgentThreadForPublishLookupAndRead()
    {
        manager = Manager.launch(ManagerTestSupport.smallContext(dir).poolBytes(16L << 20));
        final com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
        assertTrue(threads.isThreadAllocatedMemorySupported());
        threads.setThreadAllocatedMemoryEnabled(true);

        try (RawRingClient client = new RawRingClient(manager.cncFile()))
        {
            client.attachOrFail("alloc-engine", 8L << 20);
            final long[] offsets = new long[KEYS];
            final long[] dst = new long[KEYS];
            final int[] lengths = new int[KEYS];
            for (int i = 0; i < KEYS; i++)
            {
                offsets[i] = (long)i * BLOCK;
                dst[i] = (4L << 20) + (long)i * BLOCK;
                lengths[i] = BLOCK;
                client.fill(offsets[i], BLOCK, i);
            }

            // Warm up: JIT, namespace registration and every code path once.
            runRounds(client, 0, 500, offsets, dst, lengths);

            final Thread agent = manager.agentThread();
            assertNotNull(agent);
            final long before = threads.getThreadAllocatedBytes(agent.threadId());
            final int rounds = 1000;
            runRounds(client, 500, rounds, offsets, dst, lengths);
            final long allocated = threads.getThreadAllocatedBytes(agent.threadId()) - before;

            assertEquals(0, manager.counter(SystemCounterDescriptor.ERRORS));
            assertTrue(manager.counter(SystemCounterDescriptor.EVICTIONS) > 0, "the run churned the pool");
            // Three requests of 64 keys per round. One object per request would be >= 16 B/request; the bound of
            // < 1 B/request leaves room only for one-off runtime bookkeeping (JIT transitions), not for a leak.
            final int requests = rounds * 3;
            assertTrue(allocated < requests, "agent thread allocated " + allocated + " bytes over " + requests + " requests");
        }
    }

    @Test
    void shouldNotAllocateOnTheAgentThreadWhileEvictingToSsdAndReadingFromSsd()
    {
        final File ssdDir = new File("target/ssd-alloc/" + dir.getName()).getAbsoluteFile();
        try
        {
            manager = Manager.launch(ManagerTestSupport.smallContext(dir)
                .poolBytes(16L << 20)
                .ssdDir(ssdDir)
                .ssdBytes(32L << 20)
                .ssdStagingBytes(8L << 20)
                .ssdQueueDepth(16));
            final com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
            threads.setThreadAllocatedMemoryEnabled(true);

            try (RawRingClient client = new RawRingClient(manager.cncFile()))
            {
                client.attachOrFail("alloc-ssd-engine", 8L << 20);
                final long[] offsets = new long[KEYS];
                final long[] dst = new long[KEYS];
                final int[] lengths = new int[KEYS];
                for (int i = 0; i < KEYS; i++)
                {
                    offsets[i] = (long)i * BLOCK;
                    dst[i] = (4L << 20) + (long)i * BLOCK;
                    lengths[i] = BLOCK;
                    client.fill(offsets[i], BLOCK, i);
                }

                runSsdRounds(client, 0, 2000, offsets, dst, lengths);

                final Thread agent = manager.agentThread();
                final long readsBefore = manager.counter(SystemCounterDescriptor.SSD_READS);
                final long before = threads.getThreadAllocatedBytes(agent.threadId());
                final int rounds = 500;
                final int requests = runSsdRounds(client, 2000, rounds, offsets, dst, lengths);
                final long allocated = threads.getThreadAllocatedBytes(agent.threadId()) - before;

                assertEquals(0, manager.counter(SystemCounterDescriptor.ERRORS));
                assertTrue(manager.counter(SystemCounterDescriptor.SSD_READS) - readsBefore > rounds * KEYS / 2L,
                    "most old keys were served from SSD");
                assertTrue(manager.counter(SystemCounterDescriptor.SSD_EVICTIONS) > 0, "the run churned the SSD");
                assertTrue(allocated < requests,
                    "agent thread allocated " + allocated + " bytes over " + requests + " requests");
            }
        }
        finally
        {
            ManagerTestSupport.deleteDir(ssdDir);
        }
    }

    /** Publish a new round (evicting an older one to SSD), look it up, and read a round old enough to be on SSD. */
    private static int runSsdRounds(
        final RawRingClient client, final int start, final int rounds, final long[] offsets, final long[] dst, final int[] lengths)
    {
        final byte[][] hashes = new byte[KEYS][];
        final byte[][] old = new byte[KEYS][];
        final int[] capacities = lengths.clone();
        int requests = 0;
        for (int round = start; round < start + rounds; round++)
        {
            for (int i = 0; i < KEYS; i++)
            {
                hashes[i] = RawRingClient.hash(round * KEYS + i);
                old[i] = RawRingClient.hash(Math.max(0, round - 20) * KEYS + i);
            }
            assertEquals(KEYS, client.awaitReply(client.publish(NS, offsets, lengths, hashes)).value());
            assertEquals(KEYS, client.awaitReply(client.lookup(NS, false, hashes)).value());
            client.awaitReply(client.read(NS, 0, dst, capacities, old));
            requests += 3;
        }
        return requests;
    }

    private static void runRounds(
        final RawRingClient client, final int start, final int rounds, final long[] offsets, final long[] dst, final int[] lengths)
    {
        final byte[][] hashes = new byte[KEYS][];
        final int[] capacities = lengths.clone();
        for (int round = start; round < start + rounds; round++)
        {
            for (int i = 0; i < KEYS; i++)
            {
                hashes[i] = RawRingClient.hash(round * KEYS + i);
            }
            assertEquals(KEYS, client.awaitReply(client.publish(NS, offsets, lengths, hashes)).value());
            assertEquals(KEYS, client.awaitReply(client.lookup(NS, false, hashes)).value());
            assertEquals(KEYS, client.awaitReply(client.read(NS, 0, dst, capacities, hashes)).value());
        }
    }
}
