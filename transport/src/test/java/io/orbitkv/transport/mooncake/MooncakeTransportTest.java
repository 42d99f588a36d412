package io.orbitkv.transport.mooncake;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.orbitkv.ffm.AllocationWindows;
import io.orbitkv.ffm.te.FakeTransferEngineLibrary;
import io.orbitkv.ffm.te.TransferEngineC;
import io.orbitkv.transport.TransportException;
import io.orbitkv.transport.TransportListener;
import io.orbitkv.transport.TransportStatus;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * MooncakeTransport through the Transport SPI, two transports in this JVM over the C stand-in of the TE ABI: the
 * requester reads the source's registered memory at its absolute addresses.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MooncakeTransportTest
{
    private static final long DEADLINE_NS = TimeUnit.SECONDS.toNanos(10);
    private static final int POOL_BYTES = 1024 * 1024;

    private final Arena arena = Arena.ofShared();
    private final Recorder recorder = new Recorder();
    private MooncakeTransport source;
    private MooncakeTransport requester;
    private MemorySegment pool;
    private MemorySegment staging;

    @BeforeEach
    void setUp()
    {
        source = new MooncakeTransport(context());
        requester = new MooncakeTransport(context());
        pool = arena.allocate(POOL_BYTES, 4096);
        for (int i = 0; i < POOL_BYTES; i++)
        {
            pool.set(ValueLayout.JAVA_BYTE, i, (byte)(i * 7 + (i >>> 10)));
        }
        staging = arena.allocate(POOL_BYTES, 4096);
        source.registerMemory(pool.address(), POOL_BYTES);
        requester.registerMemory(staging.address(), POOL_BYTES);
    }

    @AfterEach
    void tearDown()
    {
        if (null != requester)
        {
            requester.close();
        }
        if (null != source)
        {
            source.close();
        }
        arena.close();
    }

    @Test
    void shouldReadGrantedRangesByteExactThroughTheSpi()
    {
        assertEquals("mooncake", source.name());
        assertTrue(source.localEndpoint().matches("127\\.0\\.0\\.1:[1-9][0-9]*"), source.localEndpoint());
        assertTrue(source.export(7, 99, new long[] {pool.address()}, new int[] {POOL_BYTES}, 1));

        final int peer = requester.peer(source.localEndpoint());
        assertTrue(peer >= 0, "peer " + peer);
        assertEquals(peer, requester.peer(new StringBuilder(source.localEndpoint())), "cached peer");

        final int[] lengths = {1, 100, 64 * 1024 + 1, 300_000};
        long remoteOffset = 3;
        long localOffset = 5;
        for (int i = 0; i < lengths.length; i++)
        {
            assertTrue(requester.submitRead(
                peer, 7, 99, pool.address() + remoteOffset, staging.address() + localOffset, lengths[i], 1000 + i));
            remoteOffset += lengths[i] + 11;
            localOffset += lengths[i] + 13;
        }
        assertEquals(lengths.length, requester.readsInFlight());
        awaitCompletions(lengths.length);

        remoteOffset = 3;
        localOffset = 5;
        for (int i = 0; i < lengths.length; i++)
        {
            final int index = recorder.indexOf(1000 + i);
            assertEquals(TransportStatus.OK, recorder.statuses.get(index), "read " + i);
            assertEquals(lengths[i], recorder.bytes.get(index));
            assertArrayEquals(
                pool.asSlice(remoteOffset, lengths[i]).toArray(ValueLayout.JAVA_BYTE),
                staging.asSlice(localOffset, lengths[i]).toArray(ValueLayout.JAVA_BYTE), "read " + i);
            remoteOffset += lengths[i] + 11;
            localOffset += lengths[i] + 13;
        }
        assertEquals(0, requester.readsInFlight());
        assertEquals(0, requester.batchesInUse(), "every batch freed once its tasks were polled");
    }

    @Test
    void shouldDeliverFailedForRangeTheSourceNeverRegistered()
    {
        final MemorySegment unregistered = arena.allocate(4096);
        final int peer = requester.peer(source.localEndpoint());
        assertTrue(requester.submitRead(peer, 1, 1, unregistered.address(), staging.address(), 64, 5));
        awaitCompletions(1);
        assertEquals(TransportStatus.FAILED, recorder.statuses.get(0));
        assertEquals(0, requester.batchesInUse());
    }

    @Test
    void shouldNotRevokeOneSidedReads()
    {
        assertFalse(source.canRevoke());
        assertTrue(source.export(3, 4, new long[] {pool.address()}, new int[] {64}, 1));
        source.revoke(3);
        source.revoke(12345);
        assertEquals(0, source.poll(recorder, 16), "TE cannot prove revocation: nothing is delivered");
        assertEquals(1, source.exportedSessions());
        assertEquals(2, source.revokedSessions());

        // A revoked session's range is still readable: why the source quarantines instead.
        final int peer = requester.peer(source.localEndpoint());
        assertTrue(requester.submitRead(peer, 3, 4, pool.address(), staging.address(), 64, 1));
        awaitCompletions(1);
        assertEquals(TransportStatus.OK, recorder.statuses.get(0));
    }

    @Test
    void shouldApplyBackPressureAtMaxReadsInFlight()
    {
        requester.close();
        requester = new MooncakeTransport(context().maxReadsInFlight(2).readsPerBatch(2));
        requester.registerMemory(staging.address(), POOL_BYTES);
        final int peer = requester.peer(source.localEndpoint());

        assertTrue(requester.submitRead(peer, 1, 1, pool.address(), staging.address(), 1024, 1));
        assertTrue(requester.submitRead(peer, 1, 1, pool.address() + 1024, staging.address() + 1024, 1024, 2));
        assertFalse(requester.submitRead(peer, 1, 1, pool.address(), staging.address(), 1024, 3));
        assertEquals(1, requester.backPressureCount());
        assertEquals(2, requester.readsInFlight());

        awaitCompletions(2);
        assertTrue(requester.submitRead(peer, 1, 1, pool.address(), staging.address(), 1024, 3));
        awaitCompletions(3);
        assertEquals(List.of(TransportStatus.OK, TransportStatus.OK, TransportStatus.OK), recorder.statuses);
        assertEquals(0, requester.batchesInUse());
    }

    @Test
    void shouldCompleteReadsOfClosedPeerAsClosed()
    {
        final int peer = requester.peer(source.localEndpoint());
        assertTrue(requester.submitRead(peer, 1, 1, pool.address(), staging.address(), 256 * 1024, 1));
        requester.closePeer(peer);
        assertTrue(requester.submitRead(peer, 1, 1, pool.address(), staging.address(), 64, 2), "stale handle");
        awaitCompletions(2);
        assertEquals(TransportStatus.CLOSED, recorder.statuses.get(recorder.indexOf(1)));
        assertEquals(TransportStatus.CLOSED, recorder.statuses.get(recorder.indexOf(2)));

        // The closed read's task is still polled until final, so that its batch is freed.
        final long deadlineNs = System.nanoTime() + DEADLINE_NS;
        while (requester.batchesInUse() > 0 && System.nanoTime() - deadlineNs < 0)
        {
            requester.poll(recorder, 16);
            Thread.onSpinWait();
        }
        assertEquals(0, requester.batchesInUse());
        assertEquals(0, requester.readsDraining());

        final int reopened = requester.peer(source.localEndpoint());
        assertTrue(reopened >= 0);
        assertNotEquals(peer, reopened, "a new handle: the old one stays closed");
    }

    @Test
    void shouldFailReadWithInvalidArgumentsWithoutSubmitting()
    {
        final int peer = requester.peer(source.localEndpoint());
        assertTrue(requester.submitRead(peer, 1, 1, 0, staging.address(), 64, 1));
        assertTrue(requester.submitRead(peer, 1, 1, pool.address(), staging.address(), 0, 2));
        awaitCompletions(2);
        assertEquals(List.of(TransportStatus.FAILED, TransportStatus.FAILED), recorder.statuses);
        assertEquals(2, requester.invalidReadCount());
        assertEquals(0, requester.batchesInUse());
    }

    @Test
    void shouldRefuseMalformedOrUnreachableEndpoints() throws Exception
    {
        assertEquals(-1, requester.peer(""));
        assertEquals(-1, requester.peer("127.0.0.1:1 2"));
        assertEquals(-1, requester.peer("x".repeat(MooncakeTransport.MAX_ENDPOINT_BYTES + 1)));
        final int freePort;
        try (ServerSocket socket = new ServerSocket(0))
        {
            freePort = socket.getLocalPort();
        }
        assertEquals(-1, requester.peer("127.0.0.1:" + freePort));
        assertEquals(4, requester.peerOpenFailureCount());
    }

    @Test
    void shouldRefuseBadContextBeforeLoadingTheLibrary()
    {
        final TransportException scheme = assertThrows(TransportException.class,
            () -> new MooncakeTransport(context().metadataConnection("zk://127.0.0.1:2181")));
        assertTrue(scheme.getMessage().contains("P2PHANDSHAKE"), scheme.getMessage());
        assertThrows(TransportException.class, () -> new MooncakeTransport(context().rpcPort(65536)));
        assertThrows(TransportException.class, () -> new MooncakeTransport(context().host("")));
        assertThrows(TransportException.class, () -> new MooncakeTransport(context().readsPerBatch(0)));
        final TransportException missing = assertThrows(TransportException.class,
            () -> new MooncakeTransport(context().libraryPath(Path.of("/nonexistent/libtransfer_engine.so"))));
        assertTrue(missing.getMessage().contains("/nonexistent/libtransfer_engine.so"), missing.getMessage());
    }

    @Test
    void shouldReadWithoutAllocatingAfterWarmUp()
    {
        final int peer = requester.peer(source.localEndpoint());
        final CountingListener counting = new CountingListener();
        final Runnable window = () ->
        {
            for (int i = 0; i < 300; i++)
            {
                final int queued = queueReads(peer, 8, i);
                final long deadlineNs = System.nanoTime() + DEADLINE_NS;
                int done = 0;
                while (done < queued && System.nanoTime() - deadlineNs < 0)
                {
                    done += requester.poll(counting, 16);
                }
            }
        };
        for (int i = 0; i < 5; i++)
        {
            window.run();
        }

        final long lastWindow = AllocationWindows.lastWindowBytes(window, 16 * 1024);
        assertEquals(0, counting.failed, "reads that did not complete ok");
        assertEquals(0, requester.readsInFlight());
        assertEquals(0, requester.batchesInUse());
        // 2,400 reads a window: anything per read would be tens of kilobytes; allow for the measurement's noise.
        assertTrue(lastWindow < 16 * 1024, () -> lastWindow + " bytes allocated by 2400 reads");
    }

    @Test
    void shouldEvictLeastRecentlyUsedIdlePeerAtCacheCapacity()
    {
        // Bare engines answer the handshake that opens a segment; reads from them fail (no tcp, no memory).
        final TransferEngineC te = TransferEngineC.load(FakeTransferEngineLibrary.path(), arena);
        final List<MemorySegment> engines = new ArrayList<>();
        try
        {
            final List<String> endpoints = new ArrayList<>();
            final MemorySegment name = arena.allocate(64);
            for (int i = 0; i <= MooncakeTransport.PEER_CACHE_CAPACITY; i++)
            {
                final MemorySegment engine = te.createTransferEngine(arena.allocateFrom("P2PHANDSHAKE"),
                    arena.allocateFrom("peer"), arena.allocateFrom("127.0.0.1"), 0, 0);
                assertNotEquals(0, engine.address());
                engines.add(engine);
                assertEquals(0, te.getLocalIpAndPort(engine, name, name.byteSize()));
                endpoints.add(name.getString(0));
            }

            final int[] handles = new int[MooncakeTransport.PEER_CACHE_CAPACITY];
            for (int i = 0; i < handles.length; i++)
            {
                handles[i] = requester.peer(endpoints.get(i));
                assertTrue(handles[i] >= 0, "peer " + i);
                assertTrue(requester.submitRead(handles[i], 1, 1, pool.address(), staging.address(), 64, i));
            }
            final String extra = endpoints.get(MooncakeTransport.PEER_CACHE_CAPACITY);
            assertEquals(-1, requester.peer(extra), "every cached peer has a read outstanding");
            assertEquals(1, requester.peerCacheFullCount());

            awaitCompletions(handles.length);
            assertEquals(handles[0], requester.peer(endpoints.get(0)), "touch peer 0: peer 1 is now the oldest");
            final int added = requester.peer(extra);
            assertTrue(added >= 0);
            assertEquals(1, requester.peerEvictionCount());
            assertEquals(handles[0], requester.peer(endpoints.get(0)), "peer 0 stayed cached");

            assertTrue(requester.submitRead(handles[1], 1, 1, pool.address(), staging.address(), 64, 99));
            awaitCompletions(handles.length + 1);
            assertEquals(TransportStatus.CLOSED, recorder.statuses.get(recorder.indexOf(99)), "evicted handle");
        }
        finally
        {
            for (final MemorySegment engine : engines)
            {
                te.destroyTransferEngine(engine);
            }
        }
    }

    @Test
    void shouldMakeNoDowncallAfterClose()
    {
        final int peer = requester.peer(source.localEndpoint());
        assertTrue(requester.submitRead(peer, 1, 1, pool.address(), staging.address(), 256 * 1024, 1));
        requester.close();
        assertEquals(0, requester.batchesInUse(), "close freed the batch of the read in flight");
        assertEquals(0, requester.poll(recorder, 16));
        assertFalse(requester.submitRead(peer, 1, 1, pool.address(), staging.address(), 64, 2));
        requester.closePeer(peer);
        assertThrows(TransportException.class, () -> requester.peer(source.localEndpoint()));
        assertThrows(TransportException.class, () -> requester.registerMemory(staging.address(), 64));
        requester.close();
        assertEquals(List.of(), recorder.statuses, "outcomes are not delivered after close");
    }

    @Test
    void shouldOpenAnotherBatchWhenTheCurrentOneIsFullAndFreeEvery()
    {
        requester.close();
        requester = new MooncakeTransport(context().maxReadsInFlight(8).readsPerBatch(2));
        requester.registerMemory(staging.address(), POOL_BYTES);
        final int peer = requester.peer(source.localEndpoint());
        for (int i = 0; i < 5; i++)
        {
            assertTrue(requester.submitRead(
                peer, 1, 1, pool.address() + i * 4096L, staging.address() + i * 4096L, 4096, i));
        }
        assertEquals(3, requester.batchesInUse(), "five reads at two per batch, none freed before a poll");
        awaitCompletions(5);
        assertEquals(List.of(0, 0, 0, 0, 0), recorder.statuses);
        assertArrayEquals(pool.asSlice(0, 5 * 4096).toArray(ValueLayout.JAVA_BYTE),
            staging.asSlice(0, 5 * 4096).toArray(ValueLayout.JAVA_BYTE));
        assertEquals(0, requester.batchesInUse());
        assertEquals(0, requester.batchFreeFailureCount());
    }

    private int queueReads(final int peer, final int count, final int round)
    {
        for (int j = 0; j < count; j++)
        {
            final long offset = ((round * count + j) % 64) * 4096L;
            if (!requester.submitRead(peer, 1, 1, pool.address() + offset, staging.address() + offset, 4096, j))
            {
                return j;
            }
        }
        return count;
    }

    private MooncakeTransport.Context context()
    {
        return new MooncakeTransport.Context().libraryPath(FakeTransferEngineLibrary.path()).host("127.0.0.1");
    }

    private void awaitCompletions(final int count)
    {
        final long deadlineNs = System.nanoTime() + DEADLINE_NS;
        while (recorder.statuses.size() < count)
        {
            if (System.nanoTime() - deadlineNs > 0)
            {
                fail("completions " + recorder.statuses.size() + " of " + count);
            }
            requester.poll(recorder, 16);
            Thread.onSpinWait();
        }
    }

    private static final class Recorder implements TransportListener
    {
        final List<Long> requestIds = new ArrayList<>();
        final List<Integer> statuses = new ArrayList<>();
        final List<Long> bytes = new ArrayList<>();

        public void onReadComplete(final long requestId, final int status, final long bytesLanded)
        {
            requestIds.add(requestId);
            statuses.add(status);
            bytes.add(bytesLanded);
        }

        public void onRevoked(final long sessionId)
        {
            fail("onRevoked from a transport that cannot revoke: " + sessionId);
        }

        int indexOf(final long requestId)
        {
            final int index = requestIds.indexOf(requestId);
            assertTrue(index >= 0, "no completion for " + requestId);
            return index;
        }
    }

    private static final class CountingListener implements TransportListener
    {
        long completed;
        long failed;

        public void onReadComplete(final long requestId, final int status, final long bytesLanded)
        {
            completed++;
            if (TransportStatus.OK != status || 4096 != bytesLanded)
            {
                failed++;
            }
        }

        public void onRevoked(final long sessionId)
        {
            failed++;
        }
    }
}
