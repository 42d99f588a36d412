package io.orbitkv.manager.peer;

import java.net.InetSocketAddress;
import java.nio.ByteOrder;

import io.aeron.driver.DataPacketDispatcher;
import io.aeron.driver.MediaDriver;
import io.aeron.driver.media.ReceiveChannelEndpoint;
import io.aeron.driver.media.UdpChannel;
import io.aeron.protocol.DataHeaderFlyweight;
import io.aeron.protocol.HeaderFlyweight;
import io.aeron.protocol.RttMeasurementFlyweight;
import io.aeron.protocol.SetupFlyweight;
import io.orbitkv.manager.status.SystemCounters;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * The embedded media driver's receive endpoint on the peer socket, with a guard in front of the driver: setup, data
 * and RTT measurement frames from a host that is no member's ({@link PeerSourceFilter}) are dropped; a setup
 * frame creates an image only when it carries this transport's term length, an MTU a peer transport may use
 * ({@link PeerTransport#isValidMtuLength(int)}) and an aligned term offset inside the term; a data frame is inserted
 * only at an aligned term offset whose datagram, and each frame in it, ends inside the term (and a data frame inside
 * the datagram). Every peer transport of a cluster uses the same
 * term length, so nothing a peer sends is dropped; a datagram failing a check is dropped before the driver acts on it
 * and counted ({@link PeerGuardCounter}), never logged. The driver would otherwise log bad setups as errors (an MTU of
 * 0, a term length of 0) or map a forged term length of up to 1 GiB, and an unaligned offset near a term's end would
 * leave a frame no reader can read.
 * <p>
 * Runs on the driver's thread (the peer agent's, when the driver is invoked).
 */
final class GuardedReceiveEndpoint extends ReceiveChannelEndpoint
{
    private static final int FRAME_ALIGNMENT = 32;

    private final int termLength;
    private final PeerSourceFilter sources;
    private final AtomicCounter droppedNotMember;
    private final AtomicCounter droppedTermLength;
    private final AtomicCounter droppedMtu;
    private final AtomicCounter droppedDataOffset;

    GuardedReceiveEndpoint(
        final UdpChannel udpChannel,
        final DataPacketDispatcher dispatcher,
        final AtomicCounter statusIndicator,
        final MediaDriver.Context context,
        final int termLength,
        final PeerSourceFilter sources,
        final SystemCounters counters)
    {
        super(udpChannel, dispatcher, statusIndicator, context);
        this.termLength = termLength;
        this.sources = sources;
        this.droppedNotMember = counters.get(PeerGuardCounter.DROPPED_NOT_MEMBER);
        this.droppedTermLength = counters.get(PeerGuardCounter.DROPPED_SETUP_TERM_LENGTH);
        this.droppedMtu = counters.get(PeerGuardCounter.DROPPED_SETUP_MTU);
        this.droppedDataOffset = counters.get(PeerGuardCounter.DROPPED_DATA_OFFSET);
    }

    public void onSetupMessage(
        final SetupFlyweight header,
        final UnsafeBuffer buffer,
        final int length,
        final InetSocketAddress srcAddress,
        final int transportIndex)
    {
        if (!sources.admits(srcAddress))
        {
            droppedNotMember.incrementRelease();
            return;
        }
        if (!isAcceptedSetup(header.termLength(), header.mtuLength(), header.termOffset(), termLength))
        {
            if (header.termLength() != termLength)
            {
                droppedTermLength.incrementRelease();
            }
            else
            {
                droppedMtu.incrementRelease();
            }
            return;
        }
        super.onSetupMessage(header, buffer, length, srcAddress, transportIndex);
    }

    public int onDataPacket(
        final DataHeaderFlyweight header,
        final UnsafeBuffer buffer,
        final int length,
        final InetSocketAddress srcAddress,
        final int transportIndex)
    {
        if (!sources.admits(srcAddress))
        {
            droppedNotMember.incrementRelease();
            return 0;
        }
        if (!isAcceptedData(buffer, header.termOffset(), length, termLength))
        {
            droppedDataOffset.incrementRelease();
            return 0;
        }
        return super.onDataPacket(header, buffer, length, srcAddress, transportIndex);
    }

    public void onRttMeasurement(
        final RttMeasurementFlyweight header,
        final UnsafeBuffer buffer,
        final int length,
        final InetSocketAddress srcAddress,
        final int transportIndex)
    {
        if (!sources.admits(srcAddress))
        {
            droppedNotMember.incrementRelease();
            return;
        }
        super.onRttMeasurement(header, buffer, length, srcAddress, transportIndex);
    }

    /**
     * @return whether a setup frame with these fields may create an image on a transport of {@code termLength}.
     */
    static boolean isAcceptedSetup(final int setupTermLength, final int mtuLength, final int termOffset, final int termLength)
    {
        return setupTermLength == termLength && PeerTransport.isValidMtuLength(mtuLength) &&
            termOffset >= 0 && termOffset < termLength && 0 == (termOffset & (FRAME_ALIGNMENT - 1));
    }

    /**
     * A data datagram holds whole frames from an aligned term offset: each frame's header lies in the datagram, its
     * length is a header's at least (a heartbeat, a lone header of length 0, aside) and it ends inside the term; a
     * data frame's bytes are all in the datagram (a padding frame is sent as its header only).
     *
     * @param buffer     the datagram, from index 0.
     * @param termOffset where the datagram goes in its term.
     * @param length     datagram bytes.
     * @param termLength the image's term length.
     * @return whether the driver may insert it.
     */
    static boolean isAcceptedData(final UnsafeBuffer buffer, final int termOffset, final int length, final int termLength)
    {
        if (termOffset < 0 || 0 != (termOffset & (FRAME_ALIGNMENT - 1)) || length < DataHeaderFlyweight.HEADER_LENGTH ||
            termOffset > termLength - length)
        {
            return false;
        }
        int offset = 0;
        while (offset < length)
        {
            if (length - offset < DataHeaderFlyweight.HEADER_LENGTH)
            {
                return false;
            }
            final int frameLength = buffer.getInt(offset + HeaderFlyweight.FRAME_LENGTH_FIELD_OFFSET, ByteOrder.LITTLE_ENDIAN);
            if (0 == frameLength && 0 == offset && DataHeaderFlyweight.HEADER_LENGTH == length)
            {
                return true;
            }
            if (frameLength < DataHeaderFlyweight.HEADER_LENGTH || frameLength > termLength - termOffset - offset)
            {
                return false;
            }
            final int type = buffer.getShort(offset + HeaderFlyweight.TYPE_FIELD_OFFSET, ByteOrder.LITTLE_ENDIAN) & 0xFFFF;
            if (HeaderFlyweight.HDR_TYPE_PAD != type && frameLength > length - offset)
            {
                return false;
            }
            offset += (frameLength + FRAME_ALIGNMENT - 1) & -FRAME_ALIGNMENT;
        }
        return true;
    }
}
