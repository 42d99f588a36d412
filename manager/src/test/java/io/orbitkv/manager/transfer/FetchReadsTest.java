package io.orbitkv.manager.transfer;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

import io.orbitkv.codecs.engine.FailureReason;
import io.orbitkv.index.BlockChecksum;
import io.orbitkv.manager.SystemCounterFamilies;
import io.orbitkv.manager.status.SystemCounters;
import io.orbitkv.transport.TransportStatus;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

/**
 * How a completed peer read is checked: against the sum the transport took as the bytes landed when it delivers one,
 * else against a sum of the destination taken here. Either way a block whose bytes differ from what its source
 * sealed fails its key with CHECKSUM and stops the prefix there.
 */
class FetchReadsTest
{
    private static final int BLOCK = 64 * 1024;

    private final SystemCounters counters = SystemCounterFamilies.inMemory();
    private final List<Throwable> errors = new ArrayList<>();
    private final List<long[]> accepted = new ArrayList<>();
    private final FetchReads reads = new FetchReads(null, counters, errors::add,
        (sourceMsb, sourceLsb, requesterSessionId, transferSessionId, keyIndex, bytes) ->
            accepted.add(new long[]{sourceMsb, sourceLsb, requesterSessionId, transferSessionId, keyIndex, bytes}));
    private final PeerFetch fetch = new PeerFetch(0);
    private final PeerFetch[] fetches = {fetch};
    private Arena arena;
    private MemorySegment region;

    @BeforeEach
    void setUp()
    {
        arena = Arena.ofShared();
        region = arena.allocate(4L * BLOCK, 4096);
        for (long i = 0; i < region.byteSize(); i += Long.BYTES)
        {
            region.set(ValueLayout.JAVA_LONG, i, i * 0x9E3779B97F4A7C15L);
        }
        fetch.active = true;
        fetch.generation = 3;
        fetch.keyCount = 2;
        fetch.attemptCount = 1;
        fetch.stopKey = Integer.MAX_VALUE;
        fetch.destinationRegion(region.address(), new BlockChecksum(region));
        for (int k = 0; k < 2; k++)
        {
            fetch.keyStates[k] = PeerFetch.KEY_READING;
            fetch.keyLengths[k] = BLOCK;
            fetch.destinations[k] = region.address() + (long)k * BLOCK;
            fetch.keyCrcs[k] = crc32c(region.asSlice((long)k * BLOCK, BLOCK));
        }
    }

    @AfterEach
    void tearDown()
    {
        arena.close();
    }

    @Test
    void shouldAcceptABlockByTheTransportsSumWithoutReadingItAgain()
    {
        final int sealed = fetch.keyCrcs[0];
        // The destination no longer holds what landed: only the transport's sum of the landed bytes is looked at.
        region.set(ValueLayout.JAVA_BYTE, 100, (byte)(region.get(ValueLayout.JAVA_BYTE, 100) ^ 1));

        assertSame(fetch, reads.complete(fetches, requestId(0), TransportStatus.OK, BLOCK, true, sealed));

        assertEquals(PeerFetch.KEY_DONE, fetch.keyStates[0]);
        assertEquals(1, counters.get(TransferCounter.CHECKSUMS_FROM_TRANSPORT).get());
        assertEquals(1, counters.get(TransferCounter.BLOCKS_FETCHED).get());
        assertEquals(0, counters.get(TransferCounter.CHECKSUM_MISMATCHES).get());
        assertEquals(List.of(), errors);
    }

    @Test
    void shouldFailABlockWhoseTransportSumDiffersFromTheSealedOneAndStopThePrefix()
    {
        // What the transport summed differs from the source's sealed sum by one flipped bit of one byte.
        final MemorySegment landed = arena.allocate(BLOCK);
        landed.copyFrom(region.asSlice(BLOCK, BLOCK));
        landed.set(ValueLayout.JAVA_BYTE, BLOCK - 1, (byte)(landed.get(ValueLayout.JAVA_BYTE, BLOCK - 1) ^ 0x10));

        reads.complete(fetches, requestId(1), TransportStatus.OK, BLOCK, true, crc32c(landed));

        assertEquals(PeerFetch.KEY_FAILED, fetch.keyStates[1]);
        assertEquals(FailureReason.CHECKSUM, fetch.keyReasons[1]);
        assertEquals(1, fetch.stopKey);
        assertEquals(1, counters.get(TransferCounter.CHECKSUM_MISMATCHES).get());
        assertEquals(0, counters.get(TransferCounter.CHECKSUMS_FROM_TRANSPORT).get());
        assertEquals(0, counters.get(TransferCounter.BLOCKS_FETCHED).get());
        assertEquals(1, errors.size());
    }

    @Test
    void shouldSumTheDestinationItselfWhenTheTransportDeliversNoSum()
    {
        region.set(ValueLayout.JAVA_BYTE, 7, (byte)(region.get(ValueLayout.JAVA_BYTE, 7) ^ 0x80));

        reads.complete(fetches, requestId(0), TransportStatus.OK, BLOCK, false, 0);
        reads.complete(fetches, requestId(1), TransportStatus.OK, BLOCK, false, 0);

        assertEquals(PeerFetch.KEY_FAILED, fetch.keyStates[0]);
        assertEquals(FailureReason.CHECKSUM, fetch.keyReasons[0]);
        assertEquals(PeerFetch.KEY_DONE, fetch.keyStates[1]);
        assertEquals(0, fetch.stopKey);
        assertEquals(1, counters.get(TransferCounter.CHECKSUM_MISMATCHES).get());
        assertEquals(0, counters.get(TransferCounter.CHECKSUMS_FROM_TRANSPORT).get());
    }

    @Test
    void shouldCountATimedOutReadWithoutAnErrorEntryAndStopThePrefix()
    {
        reads.complete(fetches, requestId(0), TransportStatus.TIMEOUT, 0, false, 0);

        assertEquals(PeerFetch.KEY_FAILED, fetch.keyStates[0]);
        assertEquals(FailureReason.TRANSFER, fetch.keyReasons[0]);
        assertEquals(0, fetch.stopKey);
        assertEquals(1, counters.get(TransferCounter.READ_TIMEOUTS).get());
        assertEquals(1, counters.get(TransferCounter.READ_FAILURES).get());
        assertEquals(List.of(), errors, "a timeout is an outcome of the network, not an internal error");

        reads.complete(fetches, requestId(1), TransportStatus.FAILED, 0, false, 0);
        assertEquals(List.of(), errors, "a connection lost with its source is not an internal error either");
        assertEquals(1, counters.get(TransferCounter.READS_LOST).get());
        assertEquals(1, counters.get(TransferCounter.READ_TIMEOUTS).get());
        assertEquals(2, counters.get(TransferCounter.READ_FAILURES).get());
    }

    @Test
    void shouldCountARefusedReadWithoutAnErrorEntryButLogAShortOne()
    {
        reads.complete(fetches, requestId(0), TransportStatus.REJECTED, 0, false, 0);
        assertEquals(List.of(), errors, "a source refusing a revoked session is not an internal error");
        assertEquals(1, counters.get(TransferCounter.READS_REFUSED).get());

        // OK with fewer bytes than asked: the transport broke its word, which is ours to look at.
        reads.complete(fetches, requestId(1), TransportStatus.OK, BLOCK - 1, false, 0);
        assertEquals(1, errors.size());
        assertEquals(PeerFetch.KEY_FAILED, fetch.keyStates[1]);
        assertEquals(2, counters.get(TransferCounter.READ_FAILURES).get());
        assertEquals(0, counters.get(TransferCounter.READS_LOST).get());
    }

    @Test
    void shouldRecordTheFirstAcceptedBlockOfASessionOnce()
    {
        final SourceAttempt attempt = fetch.attempt(0);
        attempt.begin(11, 12, 0, 2, 77, 0);
        attempt.transferSessionId = 99;

        reads.complete(fetches, requestId(0), TransportStatus.OK, BLOCK, false, 0);
        reads.complete(fetches, requestId(1), TransportStatus.OK, BLOCK, false, 0);

        assertEquals(1, accepted.size());
        assertEquals(List.of(11L, 12L, 77L, 99L, 0L, (long)BLOCK), java.util.Arrays.stream(accepted.get(0)).boxed().toList());
    }

    private long requestId(final int key)
    {
        return ((long)fetch.index << 48) | ((long)(fetch.generation & 0xFFFF) << 32) | ((long)key << 16);
    }

    private static int crc32c(final MemorySegment bytes)
    {
        final CRC32C crc = new CRC32C();
        crc.update(bytes.asByteBuffer());
        return (int)crc.getValue();
    }
}
