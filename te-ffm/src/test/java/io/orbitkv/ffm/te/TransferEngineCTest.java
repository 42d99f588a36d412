package io.orbitkv.ffm.te;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The binding against the C stand-in of the Transfer Engine ABI: two engines in this JVM, each serving its
 * registered memory on a loopback port, reading each other's memory through TE batches.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class TransferEngineCTest
{
    private static final long DEADLINE_NS = TimeUnit.SECONDS.toNanos(10);
    private static final int SOURCE_BYTES = 1024 * 1024;

    private Arena arena;
    private TransferEngineC te;
    private MemorySegment source;
    private MemorySegment requester;
    private String sourceName;
    private MemorySegment sourceMemory;
    private MemorySegment localMemory;
    private MemorySegment status;

    @BeforeEach
    void setUp()
    {
        arena = Arena.ofShared();
        te = TransferEngineC.load(FakeTransferEngineLibrary.path(), arena);
        source = createEngine(te);
        requester = createEngine(te);
        assertNotEquals(0, te.installTransport(source, arena.allocateFrom("tcp"), MemorySegment.NULL).address());
        assertNotEquals(0, te.installTransport(requester, arena.allocateFrom("tcp"), MemorySegment.NULL).address());

        final MemorySegment name = arena.allocate(128);
        assertEquals(0, te.getLocalIpAndPort(source, name, name.byteSize()));
        sourceName = name.getString(0);
        assertTrue(sourceName.matches("127\\.0\\.0\\.1:[1-9][0-9]*"), sourceName);

        sourceMemory = arena.allocate(SOURCE_BYTES, 4096);
        for (int i = 0; i < SOURCE_BYTES; i++)
        {
            sourceMemory.set(ValueLayout.JAVA_BYTE, i, (byte)(i * 31 + (i >>> 8)));
        }
        localMemory = arena.allocate(SOURCE_BYTES, 4096);
        final MemorySegment location = arena.allocateFrom("cpu:0");
        assertEquals(0, te.registerLocalMemory(source, sourceMemory.address(), SOURCE_BYTES, location, 1));
        assertEquals(0, te.registerLocalMemory(requester, localMemory.address(), SOURCE_BYTES, location, 1));
        status = TransferStatusStruct.allocate(arena);
    }

    @AfterEach
    void tearDown()
    {
        if (null != requester)
        {
            te.destroyTransferEngine(requester);
        }
        if (null != source)
        {
            te.destroyTransferEngine(source);
        }
        arena.close();
    }

    @Test
    void shouldReadRegisteredRemoteMemoryByteExact()
    {
        final int segment = te.openSegment(requester, arena.allocateFrom(sourceName));
        assertTrue(segment >= 1, "segment id " + segment);
        assertEquals(segment, te.openSegment(requester, arena.allocateFrom(sourceName)), "cached segment id");

        // Small, and larger than one 64 KiB slice, at unaligned offsets of both sides.
        readAndCompare(segment, 13, 7, 100);
        readAndCompare(segment, 4099, 1001, 64 * 1024 * 3 + 17);
        readAndCompare(segment, 0, 0, SOURCE_BYTES);
    }

    @Test
    void shouldFailReadOfUnregisteredRemoteMemory()
    {
        final int segment = te.openSegment(requester, arena.allocateFrom(sourceName));
        final MemorySegment unregistered = arena.allocate(4096);
        final long batch = te.allocateBatchID(requester, 2);
        final MemorySegment requests = TransferRequest.allocateArray(arena, 2);
        // Entirely outside, then straddling the end of the registered range.
        fillRead(TransferRequest.asSlice(requests, 0), segment, unregistered.address(), localMemory.address(), 64);
        fillRead(TransferRequest.asSlice(requests, 1), segment, sourceMemory.address() + SOURCE_BYTES - 8,
            localMemory.address(), 16);
        assertEquals(TransferEngineC.RC_OK, te.submitTransfer(requester, batch, requests, 2));

        assertEquals(TransferEngineC.STATUS_FAILED, awaitFinal(batch, 0));
        assertEquals(TransferEngineC.STATUS_FAILED, awaitFinal(batch, 1));
        assertEquals(TransferEngineC.RC_OK, te.freeBatchID(requester, batch));
    }

    @Test
    void shouldRefuseToFreeBatchUntilEveryTaskWasPolledFinal()
    {
        final int segment = te.openSegment(requester, arena.allocateFrom(sourceName));
        final long batch = te.allocateBatchID(requester, 2);
        assertNotEquals(TransferEngineC.INVALID_BATCH, batch);
        final MemorySegment requests = TransferRequest.allocateArray(arena, 2);
        fillRead(TransferRequest.asSlice(requests, 0), segment, sourceMemory.address(), localMemory.address(), 256);
        fillRead(TransferRequest.asSlice(requests, 1), segment, sourceMemory.address() + 256,
            localMemory.address() + 256, 256);
        assertEquals(TransferEngineC.RC_OK, te.submitTransfer(requester, batch, requests, 2));
        assertEquals(TransferEngineC.RC_BATCH_BUSY, te.freeBatchID(requester, batch), "nothing polled yet");

        assertEquals(TransferEngineC.STATUS_COMPLETED, awaitFinal(batch, 0));
        assertEquals(TransferEngineC.RC_BATCH_BUSY, te.freeBatchID(requester, batch), "task 1 not polled final");

        assertEquals(TransferEngineC.STATUS_COMPLETED, awaitFinal(batch, 1));
        assertEquals(TransferEngineC.RC_OK, te.freeBatchID(requester, batch));
        assertEquals(TransferEngineC.RC_INVALID_ARGUMENT, te.freeBatchID(requester, batch), "already freed");
    }

    @Test
    void shouldRefuseMoreTasksThanTheBatchTakes()
    {
        final int segment = te.openSegment(requester, arena.allocateFrom(sourceName));
        final long batch = te.allocateBatchID(requester, 1);
        final MemorySegment request = TransferRequest.allocate(arena);
        fillRead(request, segment, sourceMemory.address(), localMemory.address(), 8);
        assertEquals(TransferEngineC.RC_OK, te.submitTransfer(requester, batch, request, 1));
        assertEquals(TransferEngineC.RC_TOO_MANY_REQUESTS, te.submitTransfer(requester, batch, request, 1));
        assertEquals(TransferEngineC.STATUS_COMPLETED, awaitFinal(batch, 0));
        assertEquals(TransferEngineC.RC_OK, te.freeBatchID(requester, batch));
    }

    @Test
    void shouldInstallNoTransportWithoutAutoDiscovery()
    {
        final MemorySegment bare = createEngine(te);
        try
        {
            final int segment = te.openSegment(bare, arena.allocateFrom(sourceName));
            assertTrue(segment >= 1, "handshakes need no transport: " + segment);
            final long batch = te.allocateBatchID(bare, 1);
            final MemorySegment request = TransferRequest.allocate(arena);
            fillRead(request, segment, sourceMemory.address(), localMemory.address(), 8);
            assertEquals(TransferEngineC.RC_TRANSPORT_UNSUPPORTED, te.submitTransfer(bare, batch, request, 1));
            assertEquals(TransferEngineC.RC_OK, te.freeBatchID(bare, batch));
        }
        finally
        {
            te.destroyTransferEngine(bare);
        }
    }

    @Test
    void shouldReportNegativeErrorCodesFromMemoryRegistration()
    {
        final MemorySegment location = arena.allocateFrom("cpu:0");
        assertEquals(TransferEngineC.ERR_ADDRESS_OVERLAPPED,
            te.registerLocalMemory(source, sourceMemory.address() + 4096, 4096, location, 1));
        assertEquals(TransferEngineC.ERR_ADDRESS_NOT_REGISTERED,
            te.unregisterLocalMemory(source, sourceMemory.address() + 4096));
        assertEquals(0, te.unregisterLocalMemory(source, sourceMemory.address()));
        assertEquals(0, te.registerLocalMemory(source, sourceMemory.address(), SOURCE_BYTES, location, 1));
    }

    @Test
    void shouldWriteIntoRegisteredRemoteMemory()
    {
        final int segment = te.openSegment(requester, arena.allocateFrom(sourceName));
        for (int i = 0; i < 70_000; i++)
        {
            localMemory.set(ValueLayout.JAVA_BYTE, i, (byte)(i ^ 0x5a));
        }
        final long batch = te.allocateBatchID(requester, 1);
        final MemorySegment request = TransferRequest.allocate(arena);
        fillRead(request, segment, sourceMemory.address() + 8192, localMemory.address(), 70_000);
        TransferRequest.opcode(request, TransferEngineC.OPCODE_WRITE);
        assertEquals(TransferEngineC.RC_OK, te.submitTransfer(requester, batch, request, 1));
        assertEquals(TransferEngineC.STATUS_COMPLETED, awaitFinal(batch, 0));
        assertEquals(TransferEngineC.RC_OK, te.freeBatchID(requester, batch));
        assertArrayEquals(localMemory.asSlice(0, 70_000).toArray(ValueLayout.JAVA_BYTE),
            sourceMemory.asSlice(8192, 70_000).toArray(ValueLayout.JAVA_BYTE));
    }

    @Test
    void shouldRefuseUnknownMetadataSchemeBeforeTheDowncall()
    {
        // The stand-in aborts the process on an unknown scheme, as the real library does: reaching it would end
        // this JVM, so passing this test shows the check ran on the Java side.
        for (final String metadata : new String[] {"zookeeper://127.0.0.1:2181", "etcd:/x", "etcd://", "", "P2P"})
        {
            final TransferEngineException ex = assertThrows(TransferEngineException.class, () -> te.createTransferEngine(
                arena.allocateFrom(metadata), arena.allocateFrom("t"), arena.allocateFrom("127.0.0.1"), 0, 0));
            assertTrue(ex.getMessage().contains("P2PHANDSHAKE"), ex.getMessage());
        }
        TransferEngineC.checkMetadataConnection("P2PHANDSHAKE");
        TransferEngineC.checkMetadataConnection("etcd://127.0.0.1:2379");
        TransferEngineC.checkMetadataConnection("redis://127.0.0.1:6379");
        TransferEngineC.checkMetadataConnection("http://127.0.0.1:8080/metadata");
    }

    @Test
    void shouldRejectArgumentsTheLibraryWouldTripOverBeforeTheDowncall()
    {
        final MemorySegment host = arena.allocateFrom("127.0.0.1");
        final MemorySegment p2p = arena.allocateFrom("P2PHANDSHAKE");
        assertThrows(IllegalArgumentException.class,
            () -> te.createTransferEngine(p2p, MemorySegment.NULL, host, 0, 0));
        assertThrows(IllegalArgumentException.class,
            () -> te.createTransferEngine(p2p, host, host, 65536, 0));
        assertThrows(IllegalArgumentException.class,
            () -> te.openSegment(MemorySegment.NULL, arena.allocateFrom(sourceName)));
        assertThrows(IllegalArgumentException.class, () -> te.openSegment(requester, MemorySegment.NULL));
        assertThrows(IllegalArgumentException.class, () -> te.allocateBatchID(requester, 0));
        final MemorySegment oneRequest = TransferRequest.allocate(arena);
        assertThrows(IllegalArgumentException.class, () -> te.submitTransfer(requester, 1, oneRequest, 2));
        assertThrows(IllegalArgumentException.class, () -> te.getTransferStatus(requester, 1, 0, arena.allocate(8)));
        assertThrows(IllegalArgumentException.class, () -> te.getLocalIpAndPort(requester, arena.allocate(8), 64));
    }

    @Test
    void shouldExplainMissingLibrary(@TempDir final Path directory)
    {
        final Path missing = directory.resolve("libtransfer_engine.so");
        final TransferEngineException ex = assertThrows(TransferEngineException.class, () -> TransferEngineC.load(missing, arena));
        assertTrue(ex.getMessage().contains("not found") && ex.getMessage().contains(missing.toString()),
            ex.getMessage());
    }

    @Test
    void shouldExplainFileThatIsNoLibrary(@TempDir final Path directory) throws Exception
    {
        final Path notElf = Files.writeString(directory.resolve("libtransfer_engine.so"), "not a shared object");
        final TransferEngineException ex = assertThrows(TransferEngineException.class, () -> TransferEngineC.load(notElf, arena));
        assertTrue(ex.getMessage().contains("cannot load"), ex.getMessage());
    }

    @Test
    void shouldNameMissingSymbol()
    {
        final Path libm = Path.of("/lib/x86_64-linux-gnu/libm.so.6");
        final Path other = Files.isRegularFile(libm) ? libm : Path.of("/lib/aarch64-linux-gnu/libm.so.6");
        org.junit.jupiter.api.Assumptions.assumeTrue(Files.isRegularFile(other), "no libm found to load");
        final TransferEngineException ex = assertThrows(TransferEngineException.class, () -> TransferEngineC.load(other, arena));
        assertTrue(ex.getMessage().contains("has no symbol createTransferEngine"), ex.getMessage());
    }

    private MemorySegment createEngine(final TransferEngineC binding)
    {
        final MemorySegment engine = binding.createTransferEngine(
            arena.allocateFrom("P2PHANDSHAKE"), arena.allocateFrom("test"), arena.allocateFrom("127.0.0.1"), 0, 0);
        assertNotEquals(0, engine.address(), "createTransferEngine");
        return engine;
    }

    private void readAndCompare(final int segment, final long remoteOffset, final long localOffset, final int length)
    {
        localMemory.fill((byte)0);
        final long batch = te.allocateBatchID(requester, 1);
        assertNotEquals(TransferEngineC.INVALID_BATCH, batch);
        final MemorySegment request = TransferRequest.allocate(arena);
        fillRead(request, segment, sourceMemory.address() + remoteOffset, localMemory.address() + localOffset, length);
        assertEquals(TransferEngineC.RC_OK, te.submitTransfer(requester, batch, request, 1));
        assertEquals(TransferEngineC.STATUS_COMPLETED, awaitFinal(batch, 0));
        assertEquals(length, TransferStatusStruct.transferred_bytes(status));
        assertEquals(TransferEngineC.RC_OK, te.freeBatchID(requester, batch));

        final byte[] expected = sourceMemory.asSlice(remoteOffset, length).toArray(ValueLayout.JAVA_BYTE);
        final byte[] actual = localMemory.asSlice(localOffset, length).toArray(ValueLayout.JAVA_BYTE);
        assertArrayEquals(expected, actual, () -> "read of " + length + " bytes");
    }

    private static void fillRead(
        final MemorySegment request, final int segment, final long remoteAddress, final long localAddress, final long length)
    {
        TransferRequest.opcode(request, TransferEngineC.OPCODE_READ);
        TransferRequest.source(request, localAddress);
        TransferRequest.target_id(request, segment);
        TransferRequest.target_offset(request, remoteAddress);
        TransferRequest.length(request, length);
    }

    private int awaitFinal(final long batch, final long task)
    {
        final long deadlineNs = System.nanoTime() + DEADLINE_NS;
        while (System.nanoTime() - deadlineNs < 0)
        {
            assertEquals(TransferEngineC.RC_OK, te.getTransferStatus(requester, batch, task, status));
            final int state = TransferStatusStruct.status(status);
            if (TransferEngineC.STATUS_COMPLETED == state || TransferEngineC.STATUS_FAILED == state)
            {
                return state;
            }
            Thread.onSpinWait();
        }
        return fail("task " + task + " not final in time, state " + TransferStatusStruct.status(status));
    }
}
