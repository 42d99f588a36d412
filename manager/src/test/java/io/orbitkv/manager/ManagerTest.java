package io.orbitkv.manager;

import io.orbitkv.codecs.RequestFlags;
import io.orbitkv.manager.ring.RingCounter;
import io.orbitkv.manager.status.CounterDescriptor;
import static io.orbitkv.manager.ManagerTestSupport.agentThread;
import static io.orbitkv.manager.ManagerTestSupport.awaitCounter;
import static io.orbitkv.manager.ManagerTestSupport.awaitTrue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.orbitkv.client.EngineClient;
import io.orbitkv.client.KeyBatch;
import io.orbitkv.client.OperationResult;
import io.orbitkv.codecs.engine.KeyStatus;
import io.orbitkv.codecs.engine.MessageHeaderDecoder;
import io.orbitkv.codecs.engine.StatusCode;
import io.orbitkv.manager.store.StoreCounter;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.agrona.concurrent.YieldingIdleStrategy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ManagerTest
{
    private static final String NS = "model=test;dtype=bf16;block=16";
    private static final int KB = 1024;
    private static final int MB = 1024 * 1024;

    private File dir;
    private Manager manager;
    private boolean internalErrorsExpected;

    @BeforeEach
    void setUp()
    {
        dir = ManagerTestSupport.newDir();
    }

    @AfterEach
    void tearDown()
    {
        ManagerTestSupport.closeCheckingErrors(manager, dir, internalErrorsExpected);
    }

    private Manager launch(final ManagerContext ctx)
    {
        manager = Manager.launch(ctx);
        return manager;
    }

    @Test
    void shouldPublishLookupAndReadBackBlocksByteExact()
    {
        launch(ManagerTestSupport.smallContext(dir));
        try (RawRingClient client = new RawRingClient(manager.cncFile()))
        {
            client.attachOrFail("engine-a", 16L * MB);
            assertTrue(new File(client.regionPath()).isFile(), "data region file exists");

            final int[] lengths = {4 * KB, 100_000, MB};
            final long[] offsets = {0, 8 * KB, 2 * MB};
            final byte[][] hashes = {RawRingClient.hash(1), RawRingClient.hash(2), RawRingClient.hash(3)};
            for (int i = 0; i < 3; i++)
            {
                client.fill(offsets[i], lengths[i], 100 + i);
            }

            final RawRingClient.Reply published = client.awaitReply(client.publish(NS, offsets, lengths, hashes));
            assertEquals(StatusCode.OK, published.code(), published::toString);
            assertEquals(3, published.value());
            assertEquals(List.of(KeyStatus.STORED, KeyStatus.STORED, KeyStatus.STORED), published.statuses());

            final byte[][] chain = {hashes[0], hashes[1], hashes[2], RawRingClient.hash(99), RawRingClient.hash(4)};
            final RawRingClient.Reply found = client.awaitReply(client.lookup(NS, false, chain));
            assertEquals(StatusCode.OK, found.code());
            assertEquals(3, found.value());
            assertEquals(0, found.leaseId());
            assertEquals(
                List.of(KeyStatus.DRAM, KeyStatus.DRAM, KeyStatus.DRAM, KeyStatus.MISS, KeyStatus.NOT_ATTEMPTED),
                found.statuses());
            assertEquals(List.of(4 * KB, 100_000, MB, 0, 0), found.lengths());

            final long[] dst = {8L * MB, 9L * MB, 10L * MB};
            final RawRingClient.Reply read = client.awaitReply(client.read(NS, 0, dst, new int[]{MB, MB, MB}, hashes));
            assertEquals(StatusCode.OK, read.code(), read::toString);
            assertEquals(3, read.value());
            assertEquals(List.of(KeyStatus.DRAM, KeyStatus.DRAM, KeyStatus.DRAM), read.statuses());
            for (int i = 0; i < 3; i++)
            {
                assertTrue(client.matches(dst[i], lengths[i], 100 + i), "block " + i + " restored byte-exact");
            }

            final RawRingClient.Reply again = client.awaitReply(client.publish(
                NS, new long[]{0}, new int[]{4 * KB}, new byte[][]{hashes[0]}));
            assertEquals(0, again.value(), "re-publish stores nothing twice");
            assertEquals(List.of(KeyStatus.ALREADY_RESIDENT), again.statuses());

            final RawRingClient.Reply otherNamespace = client.awaitReply(client.lookup("other", false, hashes));
            assertEquals(0, otherNamespace.value(), "keys are (namespace, hash): another namespace misses");

            final RawRingClient.Reply small = client.awaitReply(
                client.read(NS, 0, new long[]{0, MB}, new int[]{4 * KB, 4 * KB}, new byte[][]{hashes[0], hashes[1]}));
            assertEquals(1, small.value());
            assertEquals(List.of(KeyStatus.DRAM, KeyStatus.DESTINATION_TOO_SMALL), small.statuses());
            assertEquals(100_000, small.lengths().get(1));

            assertEquals(3, manager.counter(RingCounter.BLOCKS_PUBLISHED));
            assertEquals(4 * KB + 100_000 + MB, manager.counter(RingCounter.BYTES_PUBLISHED));
            assertEquals(4, manager.counter(RingCounter.BLOCKS_READ));
            assertEquals(3, manager.counter(RingCounter.LOOKUP_HITS));
            awaitCounter(manager, StoreCounter.BLOCKS_RESIDENT, 3);
            awaitCounter(manager, StoreCounter.PINS_ACTIVE, 0);
            awaitCounter(manager, RingCounter.CLIENTS_ATTACHED, 1);
        }
    }

    @Test
    void shouldDetachAClientWhoseDataRegionShrinksUnderACopyAndKeepServingOthers() throws Exception
    {
        launch(ManagerTestSupport.smallContext(dir));
        try (RawRingClient healthy = new RawRingClient(manager.cncFile());
            RawRingClient saboteur = new RawRingClient(manager.cncFile()))
        {
            healthy.attachOrFail("engine-healthy", 4L * MB);
            saboteur.attachOrFail("engine-saboteur", 4L * MB);
            awaitCounter(manager, RingCounter.CLIENTS_ATTACHED, 2);
            saboteur.fill(MB, MB, 7);

            // The engine owns its side of the mapping and can shrink the file: the Manager's copy then faults.
            try (java.io.RandomAccessFile file = new java.io.RandomAccessFile(saboteur.regionPath(), "rw"))
            {
                file.setLength(4096);
            }
            saboteur.publish(NS, new long[]{MB}, new int[]{MB}, new byte[][]{RawRingClient.hash(77)});

            awaitCounter(manager, RingCounter.DATA_REGION_FAULTS, 1);
            awaitCounter(manager, RingCounter.CLIENTS_ATTACHED, 1);
            awaitCounter(manager, StoreCounter.BLOCKS_RESIDENT, 0);

            healthy.fill(0, 64 * KB, 3);
            final RawRingClient.Reply stored = healthy.awaitReply(healthy.publish(
                NS, new long[]{0}, new int[]{64 * KB}, new byte[][]{RawRingClient.hash(1)}));
            assertEquals(StatusCode.OK, stored.code(), stored::toString);
            final RawRingClient.Reply found = healthy.awaitReply(
                healthy.lookup(NS, false, new byte[][]{RawRingClient.hash(1), RawRingClient.hash(77)}));
            assertEquals(List.of(KeyStatus.DRAM, KeyStatus.MISS), found.statuses(), "the faulted publish never sealed");
            assertTrue(ManagerTestSupport.errorLog(manager).contains("data region faulted"), "fault recorded in the error log");
        }
    }

    @Test
    void shouldCopyLargeBlocksInChunksAndAnswerBusyPastTheInFlightLimit()
    {
        launch(ManagerTestSupport.smallContext(dir).poolBytes(32L * MB).copyChunkBytes(4 * KB));
        try (RawRingClient client = new RawRingClient(manager.cncFile()))
        {
            client.attachOrFail("engine-chunks", 32L * MB);
            final int requests = 12;
            final long[] correlationIds = new long[requests];
            for (int i = 0; i < requests; i++)
            {
                client.fill((long)i * MB, MB, i);
            }
            for (int i = 0; i < requests; i++)
            {
                correlationIds[i] = client.publish(
                    NS, new long[]{(long)i * MB}, new int[]{MB}, new byte[][]{RawRingClient.hash(1000 + i)});
            }

            int stored = 0;
            int busy = 0;
            for (int i = 0; i < requests; i++)
            {
                final RawRingClient.Reply reply = client.awaitReply(correlationIds[i]);
                if (StatusCode.OK == reply.code())
                {
                    assertEquals(List.of(KeyStatus.STORED), reply.statuses());
                    stored++;
                }
                else
                {
                    assertEquals(StatusCode.BUSY, reply.code(), reply::toString);
                    busy++;
                }
            }
            assertTrue(busy > 0, "a 1 MiB publish copied 4 KiB per duty cycle keeps the client's queue full");
            assertTrue(stored >= 4, "up to MAX_IN_FLIGHT_PER_CLIENT publishes are queued, not refused");
            assertEquals(busy, manager.counter(RingCounter.REJECTED_BUSY));

            for (int i = 0; i < requests; i++)
            {
                final RawRingClient.Reply read = client.awaitReply(client.read(
                    NS, 0, new long[]{20L * MB}, new int[]{MB}, new byte[][]{RawRingClient.hash(1000 + i)}));
                if (1 == read.value())
                {
                    assertTrue(client.matches(20L * MB, MB, i), "chunked copy byte-exact for block " + i);
                }
            }
        }
    }

    @Test
    void shouldAnswerPeersLookupOnAStandaloneManagerExactlyAsALocalLookupAndStillRejectUnknownFlags()
    {
        launch(ManagerTestSupport.smallContext(dir));
        try (RawRingClient client = new RawRingClient(manager.cncFile()))
        {
            client.attachOrFail("peers-engine", 4L * MB);
            final byte[][] stored = {RawRingClient.hash(1), RawRingClient.hash(2)};
            client.fill(0, 4 * KB, 1);
            client.fill(8 * KB, 4 * KB, 2);
            assertEquals(2, client.awaitReply(client.publish(NS, new long[]{0, 8 * KB}, new int[]{4 * KB, 4 * KB}, stored))
                .value());
            final byte[][] chain = {stored[0], stored[1], RawRingClient.hash(3), RawRingClient.hash(4)};

            final RawRingClient.Reply local = client.awaitReply(client.lookup(NS, 0, chain));
            final RawRingClient.Reply peers = client.awaitReply(client.lookup(NS, RequestFlags.LOOKUP_PEERS, chain));
            assertEquals(StatusCode.OK, peers.code(), peers::toString);
            assertEquals(local.value(), peers.value());
            assertEquals(2, peers.value());
            assertEquals(local.statuses(), peers.statuses());
            assertEquals(local.lengths(), peers.lengths());
            assertFalse(peers.statuses().contains(KeyStatus.PEER), "no cluster, no PEER keys");
            assertEquals(0, peers.owners());
            assertEquals(0, peers.candidates());
            assertEquals(1, peers.version(), "an answer without candidates is a version-1 frame");

            final RawRingClient.Reply pinned = client.awaitReply(
                client.lookup(NS, RequestFlags.LOOKUP_PIN | RequestFlags.LOOKUP_PEERS, chain));
            assertEquals(StatusCode.OK, pinned.code(), pinned::toString);
            assertEquals(local.statuses(), pinned.statuses());
            assertNotEquals(0, pinned.leaseId(), "pin still pins the local prefix");
            assertEquals(StatusCode.OK, client.awaitReply(client.release(pinned.leaseId())).code());

            final long badFlagsBefore = manager.counter(RingCounter.REJECTED_BAD_FLAGS);
            final RawRingClient.Reply unknown = client.awaitReply(client.lookup(NS, RequestFlags.LOOKUP_PEERS | 4, chain));
            assertEquals(StatusCode.BAD_FLAGS, unknown.code(), unknown::toString);
            assertEquals(badFlagsBefore + 1, manager.counter(RingCounter.REJECTED_BAD_FLAGS));

            // the Java client with the peers flag: the same answer through OperationResult
            final EngineClient.Context ctx = new EngineClient.Context()
                .dir(dir.getAbsolutePath())
                .clientName("peers-java-engine")
                .dataRegionBytes(MB)
                .heartbeatThread(false)
                .idleStrategy(new YieldingIdleStrategy());
            try (EngineClient engine = EngineClient.connect(ctx))
            {
                final KeyBatch batch = new KeyBatch(chain.length).namespace(NS.getBytes(StandardCharsets.US_ASCII));
                for (final byte[] hash : chain)
                {
                    batch.addKey(hash, 0, hash.length);
                }
                final OperationResult result = engine.lookup(batch, false, true, new OperationResult(chain.length));
                assertEquals(StatusCode.OK, result.code());
                assertEquals(2, result.value());
                assertEquals(0, result.count(KeyStatus.PEER));
                assertEquals(0, result.candidateCount());
                assertEquals(0, result.ownerCount());
                assertEquals(KeyStatus.MISS, result.status(2));
            }
        }
    }

    @Test
    void shouldServeAVersionOneLookupFrameWithAVersionOneAnswer()
    {
        launch(ManagerTestSupport.smallContext(dir));
        try (RawRingClient client = new RawRingClient(manager.cncFile()))
        {
            client.attachOrFail("v1-engine", 4L * MB);
            client.fill(0, 4 * KB, 5);
            final byte[][] key = {RawRingClient.hash(5)};
            assertEquals(1, client.awaitReply(client.publish(NS, new long[]{0}, new int[]{4 * KB}, key)).value());

            final byte[][] chain = {key[0], RawRingClient.hash(6)};
            final int length = RawFrames.lookup(
                client.frame(), 101, 1, client.clientId(), 4242, RequestFlags.LOOKUP_PIN, chain.length, chain,
                NS.getBytes(StandardCharsets.US_ASCII));
            client.send(length);
            final RawRingClient.Reply reply = client.awaitReply(4242);
            assertEquals(StatusCode.OK, reply.code(), reply::toString);
            assertEquals(1, reply.value());
            assertEquals(List.of(KeyStatus.DRAM, KeyStatus.MISS), reply.statuses());
            assertNotEquals(0, reply.leaseId());
            assertEquals(1, reply.version(), "a version-1 client gets a frame laid out as version 1");
            assertEquals("", reply.message());
        }
    }

    @Test
    void shouldAnswerEveryKindOfMalformedFrameAndKeepServingOtherClients()
    {
        launch(ManagerTestSupport.smallContext(dir));
        try (RawRingClient bad = new RawRingClient(manager.cncFile());
            RawRingClient good = new RawRingClient(manager.cncFile()))
        {
            bad.attachOrFail("bad-engine", 4L * MB);
            final long id = bad.clientId();
            final byte[] ns = NS.getBytes(StandardCharsets.US_ASCII);
            final byte[][] oneKey = {RawRingClient.hash(1)};

            // Truncated: shorter than a message header; nobody to answer.
            final long malformedBefore = manager.counter(RingCounter.REJECTED_MALFORMED);
            bad.send(5);
            awaitCounter(manager, RingCounter.REJECTED_MALFORMED, malformedBefore + 1);

            expectError(bad, RawFrames.lookup(bad.frame(), 999, 1, id, 1001, 0, 1, oneKey, ns), 1001,
                StatusCode.SCHEMA_MISMATCH, RingCounter.REJECTED_SCHEMA_MISMATCH);
            expectError(bad, RawFrames.lookup(bad.frame(), 101, MessageHeaderDecoder.SCHEMA_VERSION + 1, id, 1002, 0, 1, oneKey, ns),
                1002, StatusCode.SCHEMA_MISMATCH, RingCounter.REJECTED_SCHEMA_MISMATCH);

            int length = RawFrames.lookup(bad.frame(), id, 1003, oneKey, ns);
            bad.frame().putShort(2, (short)77, RawFrames.LE);
            expectError(bad, length, 1003, StatusCode.UNKNOWN_TEMPLATE, RingCounter.REJECTED_UNKNOWN_TEMPLATE);

            expectError(bad, RawFrames.lookup(bad.frame(), 101, 1, id, 1004, 0, 9, oneKey, ns), 1004,
                StatusCode.MALFORMED, RingCounter.REJECTED_MALFORMED);

            length = RawFrames.lookup(bad.frame(), id, 1005, oneKey, ns);
            bad.frame().putShort(0, (short)4, RawFrames.LE);
            expectError(bad, length, 1005, StatusCode.MALFORMED, RingCounter.REJECTED_MALFORMED);

            length = RawFrames.lookup(bad.frame(), id, 1006, oneKey, ns);
            expectError(bad, length - 3, 1006, StatusCode.MALFORMED, RingCounter.REJECTED_MALFORMED);

            expectError(bad, RawFrames.lookup(bad.frame(), id, 1007, new byte[][]{new byte[65]}, ns), 1007,
                StatusCode.KEY_TOO_LARGE, RingCounter.REJECTED_KEY_TOO_LARGE);
            expectError(bad, RawFrames.lookup(bad.frame(), id, 1008, new byte[][]{new byte[0]}, ns), 1008,
                StatusCode.KEY_TOO_LARGE, RingCounter.REJECTED_KEY_TOO_LARGE);
            expectError(bad, RawFrames.lookup(bad.frame(), id, 1009, oneKey, new byte[300]), 1009,
                StatusCode.KEY_TOO_LARGE, RingCounter.REJECTED_KEY_TOO_LARGE);

            final byte[][] tooMany = new byte[513][];
            for (int i = 0; i < tooMany.length; i++)
            {
                tooMany[i] = RawRingClient.hash(i);
            }
            expectError(bad, RawFrames.lookup(bad.frame(), id, 1010, tooMany, ns), 1010,
                StatusCode.BATCH_TOO_LARGE, RingCounter.REJECTED_BATCH_TOO_LARGE);

            length = RawFrames.lookup(bad.frame(), id, 1011, oneKey, ns);
            bad.frame().setMemory(length, 70_000 - length, (byte)0);
            expectError(bad, 70_000, 1011, StatusCode.BATCH_TOO_LARGE, RingCounter.REJECTED_BATCH_TOO_LARGE);

            expectError(bad, RawFrames.lookup(bad.frame(), 101, 1, id, 1012, 0x6, 1, oneKey, ns), 1012,
                StatusCode.BAD_FLAGS, RingCounter.REJECTED_BAD_FLAGS);

            expectError(bad, RawFrames.publishOne(bad.frame(), id, 1013, 4L * MB - 10, 4 * KB, RawRingClient.hash(1), ns),
                1013, StatusCode.OUT_OF_RANGE, RingCounter.REJECTED_OUT_OF_RANGE);
            expectError(bad, RawFrames.publishOne(bad.frame(), id, 1014, -1, 4 * KB, RawRingClient.hash(1), ns),
                1014, StatusCode.OUT_OF_RANGE, RingCounter.REJECTED_OUT_OF_RANGE);
            expectError(bad, RawFrames.publishOne(bad.frame(), id, 1015, 0, 0, RawRingClient.hash(1), ns),
                1015, StatusCode.OUT_OF_RANGE, RingCounter.REJECTED_OUT_OF_RANGE);
            expectError(bad, RawFrames.publishOne(bad.frame(), id, 1016, Long.MAX_VALUE - 10, 4 * KB, RawRingClient.hash(1), ns),
                1016, StatusCode.OUT_OF_RANGE, RingCounter.REJECTED_OUT_OF_RANGE);

            final long releaseCorrelationId = bad.release(424242);
            final RawRingClient.Reply unknownLease = bad.awaitReply(releaseCorrelationId);
            assertEquals(StatusCode.UNKNOWN_LEASE, unknownLease.code());

            // Unknown client id (wrong generation): counted and dropped, never answered into anyone's ring.
            final long unknownBefore = manager.counter(RingCounter.REJECTED_UNKNOWN_CLIENT);
            RawFrames.lookup(bad.frame(), id + (1L << 32), 1017, oneKey, ns);
            bad.send(RawFrames.lookup(bad.frame(), id + (1L << 32), 1017, oneKey, ns));
            awaitCounter(manager, RingCounter.REJECTED_UNKNOWN_CLIENT, unknownBefore + 1);
            assertTrue(bad.drainReplies().isEmpty(), "no response to an unknown client id");

            // Nothing stored by any refused publish; the Manager still serves a well-behaved client.
            assertEquals(0, manager.counter(RingCounter.BLOCKS_PUBLISHED));
            good.attachOrFail("good-engine", 4L * MB);
            good.fill(0, 64 * KB, 7);
            final byte[][] goodKey = {RawRingClient.hash(7)};
            final RawRingClient.Reply stored = good.awaitReply(good.publish(NS, new long[]{0}, new int[]{64 * KB}, goodKey));
            assertEquals(1, stored.value());
            final RawRingClient.Reply read = good.awaitReply(good.read(NS, 0, new long[]{MB}, new int[]{64 * KB}, goodKey));
            assertEquals(1, read.value());
            assertTrue(good.matches(MB, 64 * KB, 7));

            // The bad client is still attached and served too.
            final RawRingClient.Reply badLookup = bad.awaitReply(bad.lookup(NS, false, goodKey));
            assertEquals(1, badLookup.value());
            assertTrue(ManagerTestSupport.errorLog(manager).contains("SCHEMA_MISMATCH"), "rejections reach the error log");
        }
    }

    private void expectError(
        final RawRingClient client,
        final int frameLength,
        final long correlationId,
        final StatusCode code,
        final CounterDescriptor counter)
    {
        final long before = manager.counter(counter);
        client.send(frameLength);
        final RawRingClient.Reply reply = client.awaitReply(correlationId);
        assertEquals(code, reply.code(), reply::toString);
        assertEquals(client.clientId(), reply.clientId());
        assertFalse(reply.message().isEmpty(), "error responses carry a reason");
        assertEquals(before + 1, manager.counter(counter), counter.label());
    }

    @Test
    void shouldRejectAttachWithBadSizeOrNameInUseAndLeaveSlotClaimed()
    {
        launch(ManagerTestSupport.smallContext(dir));
        try (RawRingClient first = new RawRingClient(manager.cncFile());
            RawRingClient second = new RawRingClient(manager.cncFile()))
        {
            first.attachOrFail("same-name", MB);

            final RawRingClient.Reply tooBig = second.attach("other", 1L << 40);
            assertEquals(StatusCode.BAD_DATA_REGION_SIZE, tooBig.code());
            final RawRingClient.Reply zero = second.attach("other", 0);
            assertEquals(StatusCode.BAD_DATA_REGION_SIZE, zero.code());
            final RawRingClient.Reply inUse = second.attach("same-name", MB);
            assertEquals(StatusCode.NAME_IN_USE, inUse.code());
            assertEquals(ProcessHandle.current().pid(), second.claimPid(second.slotIndex()), "slot stays claimed");

            assertEquals(StatusCode.OK, second.attach("other", MB).code());
            assertNotEquals(first.clientId(), second.clientId());
            assertEquals(1, manager.counter(RingCounter.REJECTED_NAME_IN_USE));
            assertEquals(2, manager.counter(RingCounter.REJECTED_BAD_DATA_REGION_SIZE));
        }
    }

    @Test
    void shouldDetachSilentClientReleasingPinsAndSlotSoTheNameCanAttachAgain()
    {
        launch(ManagerTestSupport.smallContext(dir).clientTimeoutNs(TimeUnit.MILLISECONDS.toNanos(300)));
        try (RawRingClient dead = new RawRingClient(manager.cncFile()))
        {
            dead.attachOrFail("engine-x", 4L * MB);
            final File region = new File(dead.regionPath());
            final byte[][] hashes = {RawRingClient.hash(1), RawRingClient.hash(2)};
            dead.fill(0, 64 * KB, 1);
            dead.fill(64 * KB, 64 * KB, 2);
            dead.awaitReply(dead.publish(NS, new long[]{0, 64 * KB}, new int[]{64 * KB, 64 * KB}, hashes));
            final RawRingClient.Reply leased = dead.awaitReply(dead.lookup(NS, true, hashes));
            assertEquals(2, leased.value());
            assertNotEquals(0, leased.leaseId());
            awaitCounter(manager, StoreCounter.PINS_ACTIVE, 2);
            awaitCounter(manager, RingCounter.LEASES_ACTIVE, 1);

            // The client now goes silent: no heartbeat, no request.
            awaitCounter(manager, RingCounter.CLIENT_TIMEOUTS, 1);
            awaitCounter(manager, StoreCounter.PINS_ACTIVE, 0);
            awaitCounter(manager, RingCounter.LEASES_ACTIVE, 0);
            awaitCounter(manager, RingCounter.CLIENTS_ATTACHED, 0);
            assertEquals(0, dead.claimPid(dead.slotIndex()), "slot freed");
            assertFalse(region.exists(), "data region deleted");

            try (RawRingClient reborn = new RawRingClient(manager.cncFile()))
            {
                reborn.attachOrFail("engine-x", 4L * MB);
                assertEquals(dead.slotIndex(), reborn.slotIndex(), "the freed slot is reused");

                // The dead client's id is stale now: counted, dropped, and nothing lands in the new client's ring.
                final long unknownBefore = manager.counter(RingCounter.REJECTED_UNKNOWN_CLIENT);
                dead.lookup(NS, false, hashes);
                awaitCounter(manager, RingCounter.REJECTED_UNKNOWN_CLIENT, unknownBefore + 1);
                assertTrue(reborn.drainReplies().isEmpty());

                final RawRingClient.Reply lookup = reborn.awaitReply(reborn.lookup(NS, false, hashes));
                assertEquals(2, lookup.value(), "unpinned blocks stay resident");
            }
        }
    }

    @Test
    void shouldReclaimSlotClaimedButNeverAttached()
    {
        launch(ManagerTestSupport.smallContext(dir).clientTimeoutNs(TimeUnit.MILLISECONDS.toNanos(200)));
        try (RawRingClient client = new RawRingClient(manager.cncFile()))
        {
            final int slot = client.claimSlot();
            awaitCounter(manager, RingCounter.CLAIMED_SLOTS_RECLAIMED, 1);
            assertEquals(0, client.claimPid(slot));
        }
    }

    @Test
    void shouldDetachOnRequestAndFreeTheSlotOnceTheResponseIsRead()
    {
        launch(ManagerTestSupport.smallContext(dir));
        try (RawRingClient client = new RawRingClient(manager.cncFile()))
        {
            client.attachOrFail("engine-d", MB);
            final File region = new File(client.regionPath());
            final RawRingClient.Reply detached = client.detach();
            assertEquals(StatusCode.OK, detached.code());
            assertFalse(region.exists());
            awaitTrue(() -> 0 == client.claimPid(client.slotIndex()), () -> "slot not freed after detach");
            awaitCounter(manager, RingCounter.CLIENTS_ATTACHED, 0);
            assertEquals(1, manager.counter(RingCounter.REQUESTS_DETACH));
        }
    }

    @Test
    void shouldNeverEvictALeasedBlockUnderPressure()
    {
        launch(ManagerTestSupport.smallContext(dir));
        try (RawRingClient client = new RawRingClient(manager.cncFile()))
        {
            client.attachOrFail("engine-p", 8L * MB);
            final byte[][] pinned = {RawRingClient.hash(500)};
            client.fill(0, MB, 500);
            client.awaitReply(client.publish(NS, new long[]{0}, new int[]{MB}, pinned));
            final RawRingClient.Reply lease = client.awaitReply(client.lookup(NS, true, pinned));
            assertEquals(1, lease.value());

            client.fill(MB, MB, 9);
            for (int i = 0; i < 40; i++)
            {
                final RawRingClient.Reply reply = client.awaitReply(
                    client.publish(NS, new long[]{MB}, new int[]{MB}, new byte[][]{RawRingClient.hash(i)}));
                assertEquals(List.of(KeyStatus.STORED), reply.statuses(), reply::toString);
            }
            awaitTrue(() -> manager.counter(StoreCounter.EVICTIONS) > 0, () -> "pressure caused evictions");

            final RawRingClient.Reply stillThere = client.awaitReply(client.lookup(NS, false, pinned));
            assertEquals(List.of(KeyStatus.DRAM), stillThere.statuses());

            final RawRingClient.Reply read = client.awaitReply(
                client.read(NS, lease.leaseId(), new long[]{4L * MB}, new int[]{MB}, pinned));
            assertEquals(1, read.value());
            assertTrue(client.matches(4L * MB, MB, 500), "the leased block survived byte-exact");
            awaitCounter(manager, RingCounter.LEASES_ACTIVE, 0);
            assertEquals(StatusCode.UNKNOWN_LEASE, client.awaitReply(client.release(lease.leaseId())).code(),
                "a read carrying the lease released it");
        }
    }

    @Test
    void shouldAnswerNoSpaceWhenEveryBlockIsPinned()
    {
        launch(ManagerTestSupport.smallContext(dir));
        try (RawRingClient client = new RawRingClient(manager.cncFile()))
        {
            client.attachOrFail("engine-n", 16L * MB);
            final int blocks = 8;
            final long[] offsets = new long[blocks];
            final int[] lengths = new int[blocks];
            final byte[][] hashes = new byte[blocks][];
            for (int i = 0; i < blocks; i++)
            {
                offsets[i] = (long)i * MB;
                lengths[i] = MB;
                hashes[i] = RawRingClient.hash(i);
            }
            final RawRingClient.Reply filled = client.awaitReply(client.publish(NS, offsets, lengths, hashes));
            assertEquals(blocks, filled.value(), filled::toString);
            final RawRingClient.Reply lease = client.awaitReply(client.lookup(NS, true, hashes));
            assertEquals(blocks, lease.value());

            final byte[][] extra = {RawRingClient.hash(100)};
            final RawRingClient.Reply refused = client.awaitReply(
                client.publish(NS, new long[]{0}, new int[]{MB}, extra));
            assertEquals(StatusCode.OK, refused.code());
            assertEquals(List.of(KeyStatus.NO_SPACE), refused.statuses());
            assertEquals(0, refused.value());
            assertEquals(1, manager.counter(RingCounter.REJECTED_NO_SPACE));

            assertEquals(StatusCode.OK, client.awaitReply(client.release(lease.leaseId())).code());
            final RawRingClient.Reply accepted = client.awaitReply(client.publish(NS, new long[]{0}, new int[]{MB}, extra));
            assertEquals(List.of(KeyStatus.STORED), accepted.statuses());
        }
    }

    @Test
    void shouldEnforcePinLimitsAndNamespaceLimit()
    {
        launch(ManagerTestSupport.smallContext(dir).maxNamespaces(2));
        try (RawRingClient client = new RawRingClient(manager.cncFile()))
        {
            client.attachOrFail("engine-l", 4L * MB);
            final byte[][] key = {RawRingClient.hash(1)};
            client.awaitReply(client.publish(NS, new long[]{0}, new int[]{4 * KB}, key));
            for (int i = 0; i < Configuration.MAX_LEASES_PER_CLIENT; i++)
            {
                assertEquals(StatusCode.OK, client.awaitReply(client.lookup(NS, true, key)).code());
            }
            assertEquals(StatusCode.PIN_LIMIT, client.awaitReply(client.lookup(NS, true, key)).code());
            assertEquals(1, manager.counter(RingCounter.REJECTED_PIN_LIMIT));

            assertEquals(StatusCode.OK, client.awaitReply(client.publish("ns-2", new long[]{0}, new int[]{4 * KB}, key)).code());
            final RawRingClient.Reply full = client.awaitReply(client.publish("ns-3", new long[]{0}, new int[]{4 * KB}, key));
            assertEquals(StatusCode.NAMESPACE_LIMIT, full.code());
            assertEquals(1, manager.counter(RingCounter.REJECTED_NAMESPACE_LIMIT));
        }
    }

    @Test
    void shouldRefuseToStartOverALiveManagerAndRestartCleanlyAfterClose()
    {
        launch(ManagerTestSupport.smallContext(dir));
        final IllegalStateException refused = assertThrows(
            IllegalStateException.class, () -> Manager.launch(ManagerTestSupport.smallContext(dir)));
        assertTrue(refused.getMessage().contains("live Manager"), refused.getMessage());
        assertTrue(manager.cncFile().exists(), "the refused launch left the live Manager's file alone");

        manager.close();
        assertFalse(manager.cncFile().exists(), "close deletes the CnC file");
        manager = null;
        launch(ManagerTestSupport.smallContext(dir));
        try (RawRingClient client = new RawRingClient(manager.cncFile()))
        {
            client.attachOrFail("after-restart", MB);
        }
    }

    @Test
    void shouldValidateContextWithClearMessages()
    {
        final IllegalArgumentException pool = assertThrows(IllegalArgumentException.class,
            () -> new ManagerContext().dir(dir).poolBytes(3L * MB).conclude());
        assertTrue(pool.getMessage().contains("--pool-bytes"), pool.getMessage());
        final IllegalArgumentException ring = assertThrows(IllegalArgumentException.class,
            () -> new ManagerContext().dir(dir).responseRingBytes(1000).conclude());
        assertTrue(ring.getMessage().contains("--response-ring-bytes"), ring.getMessage());
        final IllegalArgumentException idle = assertThrows(IllegalArgumentException.class,
            () -> new ManagerContext().dir(dir).idleStrategyName("spin-forever").conclude());
        assertTrue(idle.getMessage().contains("idle strategy"), idle.getMessage());
        final IllegalArgumentException slack = assertThrows(IllegalArgumentException.class,
            () -> new ManagerContext().dir(dir).agentTimerSlackNs(-1).conclude());
        assertTrue(slack.getMessage().contains("timer slack"), slack.getMessage());
    }

    @Test
    void shouldSetTheAgentThreadsTimerSlack()
    {
        // An odd value no other thread of this JVM has: the kernel reports each thread's slack under /proc, to
        // another thread only with CAP_SYS_NICE (the main thread is another thread here).
        org.junit.jupiter.api.Assumptions.assumeTrue(
            readsOtherThreadsSlack(), "no CAP_SYS_NICE: other threads' timer slack is unreadable");
        launch(ManagerTestSupport.smallContext(dir).agentTimerSlackNs(1_237));
        final Thread agent = agentThread(manager);
        // AgentRunner names its thread only once the thread runs: until then there is nothing to look for.
        awaitTrue(() -> threadsWithTimerSlack(1_237).contains(
            agent.getName().substring(0, Math.min(15, agent.getName().length()))),
            () -> "agent thread's timer slack not set: " + threadsWithTimerSlack(1_237));
    }

    private static boolean readsOtherThreadsSlack()
    {
        try
        {
            java.nio.file.Files.readString(java.nio.file.Path.of("/proc/" + ProcessHandle.current().pid() +
                "/timerslack_ns"));
            return true;
        }
        catch (final java.io.IOException ex)
        {
            return false;
        }
    }

    /**
     * Names (as the kernel keeps them, 15 characters) of this process's threads whose timer slack is {@code ns}.
     */
    private static List<String> threadsWithTimerSlack(final long ns)
    {
        final List<String> names = new java.util.ArrayList<>();
        final File[] tasks = new File("/proc/self/task").listFiles();
        for (final File task : null == tasks ? new File[0] : tasks)
        {
            try
            {
                // Only the process-level directory has the file; /proc/<tid> is that view of any one thread.
                final String slack = java.nio.file.Files.readString(
                    new File("/proc/" + task.getName() + "/timerslack_ns").toPath()).trim();
                if (Long.parseLong(slack) == ns)
                {
                    names.add(java.nio.file.Files.readString(new File(task, "comm").toPath()).trim());
                }
            }
            catch (final java.io.IOException | NumberFormatException ex)
            {
                // The thread ended while being read.
            }
        }
        return names;
    }
}
