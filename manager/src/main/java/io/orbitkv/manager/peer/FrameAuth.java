package io.orbitkv.manager.peer;

import java.nio.ByteOrder;

import io.orbitkv.manager.status.SystemCounters;
import org.agrona.BufferUtil;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The MAC trailer of every peer frame when the cluster has a secret. A sender appends {@link #TRAILER_BYTES} to each
 * message it offers: its incarnation (the runtime UUID, two longs), its sequence (one counter per sending Manager,
 * from 1) and the first {@link #MAC_BYTES} of HMAC-SHA256 under the frame MAC key over the message and those three
 * fields. A receiver checks, before anything reads the frame: the length holds a trailer, the MAC verifies (compared
 * in constant time), the incarnation is named, and its {@link SenderWindows replay window} takes the sequence. A frame
 * failing any check is dropped and counted by reason in {@link PeerAuthCounter}; nothing is thrown and nothing is
 * allocated. The MAC binds the sender's identity and sequence, so a captured frame replays as a duplicate, and one
 * re-addressed under another sender's incarnation fails its MAC.
 * <p>
 * Little-endian like every other peer field. Single threaded: one instance signs on the peer agent's thread
 * ({@link PeerProxy}), another verifies ({@link PeerAdapter}).
 */
final class FrameAuth
{
    /** Bytes of the MAC: HMAC-SHA256 truncated to 128 bits. */
    static final int MAC_BYTES = 16;

    static final int MSB_OFFSET = 0;
    static final int LSB_OFFSET = 8;
    static final int SEQUENCE_OFFSET = 16;
    static final int MAC_OFFSET = 24;

    /** Bytes every authenticated frame carries after its message. */
    static final int TRAILER_BYTES = MAC_OFFSET + MAC_BYTES;

    /** Off-heap frames are hashed through a copy of this many bytes at a time. */
    static final int SCRATCH_BYTES = 4096;

    /** {@link #verify} of a frame it dropped. */
    static final int DROPPED = -1;

    private final HmacSha256 hmac;
    private final SystemCounters counters;
    private final SenderWindows windows;
    private final byte[] scratch = new byte[SCRATCH_BYTES];
    private final byte[] mac = new byte[MAC_BYTES];
    private final UnsafeBuffer trailer = new UnsafeBuffer(new byte[TRAILER_BYTES]);
    private long nextSequence = 1;

    /**
     * @param key             the frame MAC key ({@link ClusterSecret#frameMacKey()}).
     * @param counters        where {@link PeerAuthCounter}s are.
     * @param windows         the replay windows (a receiver's; null for one that only signs).
     */
    FrameAuth(final byte[] key, final SystemCounters counters, final SenderWindows windows)
    {
        this.hmac = new HmacSha256(key);
        this.counters = counters;
        this.windows = windows;
    }

    /**
     * Fill the trailer of the next message: sender incarnation, the next sequence, the MAC.
     *
     * @return the trailer to offer after the message (valid until the next call).
     */
    DirectBuffer sign(final DirectBuffer message, final int offset, final int length, final long msb, final long lsb)
    {
        trailer.putLong(MSB_OFFSET, msb, ByteOrder.LITTLE_ENDIAN);
        trailer.putLong(LSB_OFFSET, lsb, ByteOrder.LITTLE_ENDIAN);
        trailer.putLong(SEQUENCE_OFFSET, nextSequence++, ByteOrder.LITTLE_ENDIAN);
        hmac.start();
        update(message, offset, length);
        hmac.update(trailer.byteArray(), 0, MAC_OFFSET);
        hmac.finish(trailer.byteArray(), MAC_OFFSET, MAC_BYTES);
        counters.increment(PeerAuthCounter.FRAMES_SIGNED);
        return trailer;
    }

    /**
     * Check a received frame.
     *
     * @return the length of its message (the frame less the trailer), or {@link #DROPPED} (counted).
     */
    int verify(final DirectBuffer frame, final int offset, final int length, final long nowNs)
    {
        if (length < TRAILER_BYTES + 1)
        {
            counters.increment(PeerAuthCounter.DROPPED_SHORT);
            return DROPPED;
        }
        final int messageLength = length - TRAILER_BYTES;
        final int trailerOffset = offset + messageLength;
        hmac.start();
        update(frame, offset, messageLength + MAC_OFFSET);
        hmac.finish(mac, 0, MAC_BYTES);
        int difference = 0;
        for (int i = 0; i < MAC_BYTES; i++)
        {
            difference |= mac[i] ^ frame.getByte(trailerOffset + MAC_OFFSET + i);
        }
        if (0 != difference)
        {
            counters.increment(PeerAuthCounter.DROPPED_BAD_MAC);
            return DROPPED;
        }
        final long msb = frame.getLong(trailerOffset + MSB_OFFSET, ByteOrder.LITTLE_ENDIAN);
        final long lsb = frame.getLong(trailerOffset + LSB_OFFSET, ByteOrder.LITTLE_ENDIAN);
        final long sequence = frame.getLong(trailerOffset + SEQUENCE_OFFSET, ByteOrder.LITTLE_ENDIAN);
        if (0 == msb && 0 == lsb)
        {
            counters.increment(PeerAuthCounter.DROPPED_UNKNOWN_INCARNATION);
            return DROPPED;
        }
        if (sequence <= 0)
        {
            counters.increment(PeerAuthCounter.DROPPED_TOO_OLD);
            return DROPPED;
        }
        final int windowsBefore = windows.size();
        final int verdict = windows.accept(msb, lsb, sequence, nowNs);
        switch (verdict)
        {
            case SenderWindows.ACCEPTED ->
            {
                counters.increment(PeerAuthCounter.FRAMES_VERIFIED);
                if (windows.size() != windowsBefore)
                {
                    counters.get(PeerAuthCounter.SENDER_WINDOWS).setRelease(windows.size());
                }
                counters.get(PeerAuthCounter.SENDER_WINDOWS_RECYCLED).setRelease(windows.recycled());
                return messageLength;
            }
            case SenderWindows.DUPLICATE -> counters.increment(PeerAuthCounter.DROPPED_DUPLICATE);
            case SenderWindows.TOO_OLD -> counters.increment(PeerAuthCounter.DROPPED_TOO_OLD);
            default -> counters.increment(PeerAuthCounter.DROPPED_UNKNOWN_INCARNATION);
        }
        return DROPPED;
    }

    /**
     * @return the sequence the next signed frame carries.
     */
    long nextSequence()
    {
        return nextSequence;
    }

    private void update(final DirectBuffer buffer, final int offset, final int length)
    {
        final byte[] array = buffer.byteArray();
        if (null != array)
        {
            hmac.update(array, (int)(buffer.addressOffset() - BufferUtil.ARRAY_BASE_OFFSET) + offset, length);
            return;
        }
        for (int done = 0; done < length; )
        {
            final int n = Math.min(SCRATCH_BYTES, length - done);
            buffer.getBytes(offset + done, scratch, 0, n);
            hmac.update(scratch, 0, n);
            done += n;
        }
    }
}
