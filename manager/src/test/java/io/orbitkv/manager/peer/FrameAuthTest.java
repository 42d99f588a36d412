package io.orbitkv.manager.peer;

import java.util.Random;

import io.orbitkv.manager.status.SystemCounters;
import org.agrona.BufferUtil;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

class FrameAuthTest
{
    private static final byte[] KEY = new byte[ClusterSecret.KEY_BYTES];

    private final SystemCounters counters = SystemCounters.inMemory(PeerAuthCounter.values());
    private final FrameAuth signer = new FrameAuth(KEY, counters, null);
    private final FrameAuth verifier = new FrameAuth(KEY, counters, new SenderWindows());

    @Test
    void shouldVerifyOffHeapFramesLongerThanTheScratchCopyAndRefuseOneChangedPastIt()
    {
        for (final int length : new int[]{1, FrameAuth.SCRATCH_BYTES - 1, FrameAuth.SCRATCH_BYTES,
            FrameAuth.SCRATCH_BYTES + 1, 3 * FrameAuth.SCRATCH_BYTES + 17})
        {
            final UnsafeBuffer direct = signedFrame(length, true);
            assertEquals(length, verifier.verify(direct, 64, length + FrameAuth.TRAILER_BYTES, 0), "length " + length);
            final UnsafeBuffer heap = signedFrame(length, false);
            assertEquals(length, verifier.verify(heap, 64, length + FrameAuth.TRAILER_BYTES, 0), "on heap, " + length);
        }
        final int length = 2 * FrameAuth.SCRATCH_BYTES + 100;
        final UnsafeBuffer frame = signedFrame(length, true);
        frame.putByte(64 + FrameAuth.SCRATCH_BYTES + 50, (byte)(frame.getByte(64 + FrameAuth.SCRATCH_BYTES + 50) ^ 1));
        final long badBefore = counters.value(PeerAuthCounter.DROPPED_BAD_MAC);
        assertEquals(FrameAuth.DROPPED, verifier.verify(frame, 64, length + FrameAuth.TRAILER_BYTES, 0));
        assertEquals(badBefore + 1, counters.value(PeerAuthCounter.DROPPED_BAD_MAC));
    }

    @Test
    void shouldRefuseAFrameOneByteShortOfATrailerAndAMessageAsShort()
    {
        final UnsafeBuffer frame = new UnsafeBuffer(new byte[128]);
        assertEquals(FrameAuth.DROPPED, verifier.verify(frame, 0, FrameAuth.TRAILER_BYTES, 0));
        assertEquals(1, counters.value(PeerAuthCounter.DROPPED_SHORT));
        assertEquals(FrameAuth.DROPPED, verifier.verify(frame, 0, FrameAuth.TRAILER_BYTES + 1, 0));
        assertEquals(1, counters.value(PeerAuthCounter.DROPPED_SHORT), "long enough: judged by its MAC");
        assertEquals(1, counters.value(PeerAuthCounter.DROPPED_BAD_MAC));
    }

    @Test
    void shouldRefuseTheZeroIncarnationAsUnknownEvenWithAValidMac()
    {
        final UnsafeBuffer frame = new UnsafeBuffer(new byte[256]);
        final DirectBuffer trailer = signer.sign(frame, 0, 100, 0, 0);
        frame.putBytes(100, trailer, 0, FrameAuth.TRAILER_BYTES);
        assertEquals(FrameAuth.DROPPED, verifier.verify(frame, 0, 100 + FrameAuth.TRAILER_BYTES, 0));
        assertEquals(1, counters.value(PeerAuthCounter.DROPPED_UNKNOWN_INCARNATION));
        assertEquals(0, counters.value(PeerAuthCounter.SENDER_WINDOWS));
    }

    private UnsafeBuffer signedFrame(final int length, final boolean direct)
    {
        final int capacity = 64 + length + FrameAuth.TRAILER_BYTES;
        final UnsafeBuffer buffer = direct ?
            new UnsafeBuffer(BufferUtil.allocateDirectAligned(org.agrona.BitUtil.align(capacity, 64), 64)) :
            new UnsafeBuffer(new byte[capacity]);
        final byte[] bytes = new byte[length];
        new Random(length).nextBytes(bytes);
        buffer.putBytes(64, bytes);
        final DirectBuffer trailer = signer.sign(buffer, 64, length, 0x11, 0x22);
        buffer.putBytes(64 + length, trailer, 0, FrameAuth.TRAILER_BYTES);
        return buffer;
    }
}
