package io.orbitkv.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.orbitkv.codecs.EngineRingLimits;
import io.orbitkv.codecs.cnc.CncFileDescriptor;
import io.orbitkv.codecs.engine.FailureReason;
import io.orbitkv.codecs.engine.KeyStatus;
import io.orbitkv.codecs.engine.StatusCode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 20, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class EngineClientTest
{
    private Path dir;
    private FakeManager manager;

    @BeforeEach
    void before() throws IOException
    {
        final Path shm = Paths.get("/dev/shm");
        final Path base = Files.isDirectory(shm) ? shm : Paths.get(System.getProperty("java.io.tmpdir"));
        dir = Files.createTempDirectory(base, "orbitkv-client-test-");
    }

    @AfterEach
    void after() throws Exception
    {
        if (manager != null)
        {
            manager.close();
        }
        try (Stream<Path> paths = Files.walk(dir))
        {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    private EngineClient.Context context()
    {
        return new EngineClient.Context()
            .dir(dir.toString())
            .clientName("test-engine")
            .dataRegionBytes(1 << 16)
            .attachTimeoutNs(TimeUnit.SECONDS.toNanos(5))
            .responseTimeoutNs(TimeUnit.SECONDS.toNanos(5));
    }

    @Test
    void shouldRingTheDoorbellOnlyWhenTheManagerAnnouncedItSleeps() throws IOException
    {
        manager = new FakeManager(dir, TimeUnit.SECONDS.toNanos(5), true);
        final KeyBatch batch = new KeyBatch(1);
        batch.namespace("ns".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        batch.addKey(new byte[]{1}, 0, 1);
        final OperationResult result = new OperationResult(1);
        try (EngineClient client = EngineClient.connect(context());
            java.nio.channels.FileChannel fifo = java.nio.channels.FileChannel.open(
                dir.resolve(CncFileDescriptor.DOORBELL_FILE_NAME),
                java.nio.file.StandardOpenOption.READ, java.nio.file.StandardOpenOption.WRITE))
        {
            final org.agrona.concurrent.AtomicBuffer header = manager.sections.header();
            client.lookup(batch, false, result);
            assertEquals(0, client.doorbellRings(), "an awake Manager is not rung");

            header.putIntVolatile(CncFileDescriptor.AGENT_STATE_OFFSET, CncFileDescriptor.AGENT_SLEEPING);
            client.lookup(batch, false, result);
            assertEquals(1, client.doorbellRings());
            assertEquals(CncFileDescriptor.AGENT_RUNG, header.getIntVolatile(CncFileDescriptor.AGENT_STATE_OFFSET));
            final java.nio.ByteBuffer rung = java.nio.ByteBuffer.allocate(8);
            assertEquals(1, fifo.read(rung), "one byte in the FIFO");

            // Rung already for this sleep: the next request does not ring again.
            client.lookup(batch, false, result);
            assertEquals(1, client.doorbellRings());
        }
    }

    @Test
    void shouldAttachMapTheDataRegionAndFreeTheSlotOnDetach() throws IOException
    {
        manager = new FakeManager(dir, TimeUnit.SECONDS.toNanos(5), true);
        try (EngineClient client = EngineClient.connect(context()))
        {
            assertEquals(0, client.slotIndex());
            assertEquals((1L << 32), client.clientId());
            assertEquals(1 << 16, client.dataRegion().byteSize());
            client.dataBuffer().putLong(100, 0xCAFEL);
            assertEquals(CncFileDescriptor.SLOT_ATTACHED, manager.slotState(0));
        }
        assertEquals(CncFileDescriptor.SLOT_FREE, manager.slotState(0));
        assertEquals(0, manager.claimPid(0));
    }

    @Test
    void shouldSetPeersFlagAndRebaseCandidatesOntoTheBatch() throws IOException
    {
        manager = new FakeManager(dir, TimeUnit.SECONDS.toNanos(5), true);
        manager.residentKeys = 600;
        manager.peerKeys = 3;
        final int keys = 2 * EngineRingLimits.MAX_KEYS_PER_REQUEST;
        final KeyBatch batch = new KeyBatch(keys).namespace(new byte[]{'n', 's'});
        for (int i = 0; i < keys; i++)
        {
            batch.addKey(new byte[]{(byte)i, (byte)(i >> 8)}, 0, 2);
        }
        final OperationResult result = new OperationResult(keys);
        try (EngineClient client = EngineClient.connect(context()))
        {
            client.lookup(batch, false, true, result);
            assertEquals(List.of(2, 2), manager.lookupFlags, "peers flag on every request, pin off");

            assertEquals(StatusCode.OK, result.code());
            assertEquals(600, result.value(), "value stays the local prefix");
            assertEquals(600, result.count(KeyStatus.DRAM));
            assertEquals(3, result.count(KeyStatus.PEER));
            assertEquals(KeyStatus.PEER, result.status(600));
            assertEquals(KeyStatus.PEER, result.status(602));
            assertEquals(KeyStatus.MISS, result.status(603));
            assertEquals(2, result.ownerCount());
            assertEquals("peer-1", result.ownerNodeId(1));
            assertEquals("peer-0", result.ownerNodeId(0, new StringBuilder()).toString());
            assertEquals(100, result.ownerRuntimeUuidMsb(0));
            assertEquals(201, result.ownerRuntimeUuidLsb(1));
            assertEquals(6, result.candidateCount());
            for (int c = 0; c < 6; c++)
            {
                final int requestKey = 600 - EngineRingLimits.MAX_KEYS_PER_REQUEST + c / 2;
                assertEquals(600 + c / 2, result.candidateKeyIndex(c), "key index rebased onto the batch");
                assertEquals(c % 2, result.candidateOwnerIndex(c));
                assertEquals(c % 2 == 0 ? KeyStatus.DRAM : KeyStatus.SSD, result.candidateTier(c));
                assertEquals(1000L * requestKey + c % 2, result.candidateInsertionSequence(c));
                assertEquals(4096 + requestKey, result.candidateLength(c));
            }

            client.lookup(batch, false, result);
            assertEquals(0, result.candidateCount(), "a reused result forgets the last answer's candidates");
            assertEquals(0, result.ownerCount());
            assertEquals(0, result.count(KeyStatus.PEER));
            assertEquals(0, manager.lookupFlags.get(2));
        }
    }

    @Test
    void shouldSetReadPeersFlagOnEveryRequestAndStopAtTheFailedKey() throws IOException
    {
        manager = new FakeManager(dir, TimeUnit.SECONDS.toNanos(5), true);
        manager.residentKeys = 500;
        manager.peerKeys = 50;
        manager.peerFailure = FailureReason.BUDGET;
        final int keys = 2 * EngineRingLimits.MAX_KEYS_PER_REQUEST;
        final KeyBatch batch = new KeyBatch(keys).namespace(new byte[]{'n', 's'});
        for (int i = 0; i < keys; i++)
        {
            batch.addKey(new byte[]{(byte)i, (byte)(i >> 8)}, 0, 2, 64L * i, 64);
        }
        final OperationResult result = new OperationResult(keys);
        try (EngineClient client = EngineClient.connect(context()))
        {
            client.read(batch, 0, true, result);
            assertEquals(List.of(1, 1), manager.readFlags, "peers flag on both requests");
            assertEquals(StatusCode.OK, result.code());
            assertEquals(550, result.value(), "local and peer blocks restored");
            assertEquals(500, result.count(KeyStatus.DRAM));
            assertEquals(50, result.count(KeyStatus.PEER));
            assertEquals(KeyStatus.FAILED, result.status(550));
            assertEquals(FailureReason.BUDGET, result.reason(550));
            assertEquals(FailureReason.NONE, result.reason(549));
            assertEquals(KeyStatus.NOT_ATTEMPTED, result.status(551));
            assertEquals(50, result.candidateCount(), "one source per PEER key, from both answers");
            assertEquals(1, result.ownerCount(), "the source named by both answers is one owner");
            assertEquals(500, result.candidateKeyIndex(0));
            assertEquals(549, result.candidateKeyIndex(49), "rebased onto the batch");
            assertEquals("source", result.ownerNodeId(result.candidateOwnerIndex(49)));

            client.read(batch, 0, result);
            assertEquals(0, manager.readFlags.get(2), "the overload without peers sends no flag");
        }
    }

    @Test
    void shouldSplitLongLookupAndStopAfterTheFirstShortRequest() throws IOException
    {
        manager = new FakeManager(dir, TimeUnit.SECONDS.toNanos(5), true);
        manager.residentKeys = 700;
        final int keys = 2 * EngineRingLimits.MAX_KEYS_PER_REQUEST + 276;
        final KeyBatch batch = new KeyBatch(keys).namespace(new byte[]{'n', 's'});
        for (int i = 0; i < keys; i++)
        {
            batch.addKey(new byte[]{(byte)i, (byte)(i >> 8)}, 0, 2);
        }
        final OperationResult result = new OperationResult(keys);
        try (EngineClient client = EngineClient.connect(context()))
        {
            client.lookup(batch, true, result);
        }
        assertEquals(StatusCode.OK, result.code());
        assertEquals(700, result.value());
        assertEquals(2, result.requestCount());
        assertEquals(List.of(EngineRingLimits.MAX_KEYS_PER_REQUEST, EngineRingLimits.MAX_KEYS_PER_REQUEST),
            manager.lookupKeyCounts);
        assertEquals(2, result.leaseCount());
        assertEquals(KeyStatus.DRAM, result.status(699));
        assertEquals(KeyStatus.MISS, result.status(700));
        assertEquals(KeyStatus.NOT_ATTEMPTED, result.status(701));
        assertEquals(KeyStatus.NOT_ATTEMPTED, result.status(keys - 1));
    }

    @Test
    void shouldFailWithNoManagerWhenTheDirectoryHasNoCncFile()
    {
        final EngineClientException ex = assertThrows(EngineClientException.class,
            () -> EngineClient.connect(context().attachTimeoutNs(TimeUnit.MILLISECONDS.toNanos(200))));
        assertEquals(EngineClientException.Reason.NO_MANAGER, ex.reason());
    }

    @Test
    void shouldRejectAManagerWhoseHeartbeatIsStale() throws IOException
    {
        manager = new FakeManager(dir, TimeUnit.MILLISECONDS.toNanos(100), false);
        manager.requestRing.consumerHeartbeatTime(System.currentTimeMillis() - 10_000);
        final EngineClientException ex = assertThrows(EngineClientException.class,
            () -> EngineClient.connect(context().attachTimeoutNs(TimeUnit.MILLISECONDS.toNanos(300))));
        assertEquals(EngineClientException.Reason.STALE_MANAGER, ex.reason());
        assertEquals(0, manager.claimPid(0));
    }

    @Test
    void shouldReportNameInUseAndGiveTheSlotBack() throws IOException
    {
        manager = new FakeManager(dir, TimeUnit.SECONDS.toNanos(5), true);
        final EngineClientException ex = assertThrows(EngineClientException.class,
            () -> EngineClient.connect(context().clientName(FakeManager.TAKEN_NAME)));
        assertEquals(EngineClientException.Reason.ATTACH_REJECTED, ex.reason());
        assertEquals(StatusCode.NAME_IN_USE, ex.statusCode());
        assertEquals(0, manager.claimPid(0));
        assertEquals(CncFileDescriptor.SLOT_FREE, manager.slotState(0));
    }

    @Test
    void shouldThrowManagerDiedInsteadOfHangingWhenTheManagerStops() throws IOException
    {
        manager = new FakeManager(dir, TimeUnit.MILLISECONDS.toNanos(300), true);
        final KeyBatch batch = new KeyBatch(1).namespace(new byte[]{'n'});
        batch.addKey(new byte[]{1}, 0, 1);
        try (EngineClient client = EngineClient.connect(context()))
        {
            manager.answering = false;
            manager.heartbeating = false;
            manager.awaitFlagsSeen();
            final long startNs = System.nanoTime();
            final EngineClientException ex = assertThrows(EngineClientException.class,
                () -> client.lookup(batch, false, new OperationResult(1)));
            assertEquals(EngineClientException.Reason.MANAGER_DIED, ex.reason());
            assertTrue(System.nanoTime() - startNs < TimeUnit.SECONDS.toNanos(4), "noticed before the response timeout");
            assertThrows(EngineClientException.class, () -> client.lookup(batch, false, new OperationResult(1)));
        }
    }

    @Test
    void shouldThrowDetachedWhenTheSlotIsGivenAway() throws IOException
    {
        manager = new FakeManager(dir, TimeUnit.SECONDS.toNanos(5), true);
        final KeyBatch batch = new KeyBatch(1).namespace(new byte[]{'n'});
        batch.addKey(new byte[]{1}, 0, 1);
        try (EngineClient client = EngineClient.connect(context()))
        {
            manager.answering = false;
            manager.awaitFlagsSeen();
            manager.stealSlot(client.slotIndex());
            final EngineClientException ex = assertThrows(EngineClientException.class,
                () -> client.lookup(batch, false, new OperationResult(1)));
            assertEquals(EngineClientException.Reason.DETACHED, ex.reason());
        }
    }

    @Test
    void shouldCheckRangesAgainstTheDataRegionBeforeSending() throws IOException
    {
        manager = new FakeManager(dir, TimeUnit.SECONDS.toNanos(5), true);
        final KeyBatch batch = new KeyBatch(1).namespace(new byte[]{'n'});
        batch.addKey(new byte[]{1}, 0, 1, (1 << 16) - 10, 11);
        try (EngineClient client = EngineClient.connect(context()))
        {
            assertThrows(IllegalArgumentException.class, () -> client.publish(batch, new OperationResult(1)));
        }
    }
}
