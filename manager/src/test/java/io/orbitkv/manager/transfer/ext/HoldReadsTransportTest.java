package io.orbitkv.manager.transfer.ext;

import io.orbitkv.transport.Transport;
import io.orbitkv.transport.TransportListener;
import io.orbitkv.transport.TransportStatus;
import org.agrona.collections.MutableLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class HoldReadsTransportTest
{
    @TempDir
    Path dir;

    @Test
    void holdsReadsWhileTheFileExistsAndSubmitsThemInOrderOnceItIsGone() throws Exception
    {
        final Path file = dir.resolve("hold");
        final RecordingTransport inner = new RecordingTransport();
        final HoldReadsTransportSupplier.HoldingTransport holding =
            new HoldReadsTransportSupplier.HoldingTransport(inner, file);

        assertTrue(holding.submitRead(1, 10, 11, 100, 200, 64, 1));
        assertEquals(List.of(1L), inner.submitted, "no hold file: the read goes straight through");

        Files.write(file, new byte[0]);
        assertTrue(holding.submitRead(1, 10, 11, 164, 264, 64, 2));
        assertTrue(holding.submitRead(1, 10, 11, 228, 328, 64, 3));
        assertEquals(List.of(1L), inner.submitted);
        assertTrue(Files.exists(dir.resolve("hold" + HoldReadsTransportSupplier.HELD_SUFFIX)));
        assertEquals(2 + inner.readsInFlight(), holding.readsInFlight());
        holding.poll(new CountingListener(), 16);
        assertEquals(List.of(1L), inner.submitted, "still held while the file exists");

        Files.delete(file);
        holding.poll(new CountingListener(), 16);
        assertEquals(List.of(1L, 2L, 3L), inner.submitted);
        assertEquals(inner.readsInFlight(), holding.readsInFlight());
    }

    @Test
    void failsHeldReadsOfAClosedPeerAndPushesBackWhenFull() throws Exception
    {
        final Path file = dir.resolve("hold");
        Files.write(file, new byte[0]);
        final RecordingTransport inner = new RecordingTransport();
        final HoldReadsTransportSupplier.HoldingTransport holding =
            new HoldReadsTransportSupplier.HoldingTransport(inner, file);

        for (int i = 0; i < HoldReadsTransportSupplier.CAPACITY; i++)
        {
            assertTrue(holding.submitRead(i % 2, 10, 11, 100, 200, 64, i));
        }
        assertFalse(holding.submitRead(0, 10, 11, 100, 200, 64, 999), "full: back-pressure");

        holding.closePeer(1);
        Files.delete(file);
        final CountingListener listener = new CountingListener();
        int events = 0;
        // 16 events a poll: every held read is settled within CAPACITY / 16 polls, or the release is broken.
        for (int polls = 0; polls < HoldReadsTransportSupplier.CAPACITY / 16 + 1; polls++)
        {
            events += holding.poll(listener, 16);
        }
        assertEquals(inner.readsInFlight(), holding.readsInFlight(), "nothing left held");
        assertEquals(HoldReadsTransportSupplier.CAPACITY / 2, listener.closed.get());
        assertEquals(HoldReadsTransportSupplier.CAPACITY / 2, events);
        assertEquals(HoldReadsTransportSupplier.CAPACITY / 2, inner.submitted.size());
        assertTrue(inner.submitted.stream().allMatch(id -> id % 2 == 0), "only the open peer's reads go on");
    }

    private static final class CountingListener implements TransportListener
    {
        final MutableLong closed = new MutableLong();

        public void onReadComplete(final long requestId, final int status, final long bytes)
        {
            if (TransportStatus.CLOSED == status)
            {
                closed.increment();
            }
        }

        public void onRevoked(final long sessionId)
        {
        }
    }

    /**
     * The wrapped transport, as a record of the reads it was given (a fake of our own interface).
     */
    private static final class RecordingTransport implements Transport
    {
        final List<Long> submitted = new ArrayList<>();

        public String name()
        {
            return "recording";
        }

        public String localEndpoint()
        {
            return "";
        }

        public boolean canRevoke()
        {
            return true;
        }

        public void registerMemory(final long address, final long length)
        {
        }

        public void unregisterMemory(final long address)
        {
        }

        public boolean export(
            final long sessionId, final long token, final long[] addresses, final int[] lengths, final int count)
        {
            return true;
        }

        public void revoke(final long sessionId)
        {
        }

        public int peer(final CharSequence endpoint)
        {
            return 0;
        }

        public void closePeer(final int peer)
        {
        }

        public boolean submitRead(
            final int peer,
            final long sessionId,
            final long token,
            final long remoteAddress,
            final long localAddress,
            final int length,
            final long requestId)
        {
            submitted.add(requestId);
            return true;
        }

        public int poll(final TransportListener listener, final int limit)
        {
            return 0;
        }

        public int readsInFlight()
        {
            return submitted.size();
        }

        public void close()
        {
        }
    }
}
