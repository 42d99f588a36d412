package io.orbitkv.manager.peer;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import io.aeron.protocol.DataHeaderFlyweight;
import io.aeron.protocol.HeaderFlyweight;
import io.aeron.protocol.SetupFlyweight;
import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The peer socket's guard over real Aeron: a stranger's raw UDP socket sends forged Aeron setup and data frames at a
 * peer transport's endpoint while a member peer uses it. Nothing forged creates an image of another term length or
 * lands at an unaligned offset, every drop is counted, nothing reaches the error log, and the member is still served.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PeerGuardTest
{
    private static final long AWAIT_NS = TimeUnit.SECONDS.toNanos(10);
    private static final int SESSION_ID = 0x5150;
    private static final int TERM_ID = 7;

    @TempDir
    Path dir;

    private PeerNode host;
    private PeerNode owner;
    private DatagramChannel stranger;
    private final ByteBuffer datagram = BufferUtil.allocateDirectAligned(4096, 64);
    private final UnsafeBuffer frame = new UnsafeBuffer(datagram);

    @AfterEach
    void tearDown() throws IOException
    {
        if (null != stranger)
        {
            stranger.close();
        }
        for (final PeerNode node : new PeerNode[]{ owner, host })
        {
            if (null != node)
            {
                node.close();
            }
        }
        for (final PeerNode node : new PeerNode[]{ owner, host })
        {
            if (null != node && !node.errors.isEmpty())
            {
                fail("errors logged by node " + node.nodeIndex + ": " + node.errors, node.errors.get(0));
            }
        }
    }

    @Test
    void shouldDropASetupOfAGigabyteTermAndDataAtAnUnalignedOffsetWithoutAnImage() throws IOException
    {
        start();
        final long imagesBefore = host.counter(PeerCounter.IMAGES_AVAILABLE);
        final int giant = 1 << 30;
        for (int i = 0; i < 5; i++)
        {
            sendSetup(giant, 1_408, 0);
            sendData(giant - 1, 8);
        }
        await(() -> host.counter(PeerGuardCounter.DROPPED_SETUP_TERM_LENGTH) >= 5, "the giant setups dropped");
        await(() -> host.counter(PeerGuardCounter.DROPPED_DATA_OFFSET) >= 5, "the unaligned data dropped");
        settle();
        assertEquals(imagesBefore, host.counter(PeerCounter.IMAGES_AVAILABLE), "no image of the stranger");
        assertEquals(0, host.counter(PeerGuardCounter.IMAGE_POLL_ERRORS));
        assertEquals(0, host.counter(PeerGuardCounter.DRIVER_FRAME_ERRORS));
        servesTheMember();
    }

    @Test
    void shouldCountSetupsOfMtuZeroOrTermLengthZeroWithoutLoggingThem() throws IOException
    {
        start();
        sendSetup(PeerTransport.TERM_LENGTH, 0, 0);
        await(() -> host.counter(PeerGuardCounter.DROPPED_SETUP_MTU) == 1, "the setup of MTU 0 dropped");
        sendSetup(0, 1_408, 0);
        await(() -> host.counter(PeerGuardCounter.DROPPED_SETUP_TERM_LENGTH) == 1, "the setup of term length 0 dropped");
        sendSetup(PeerTransport.TERM_LENGTH, 1_408, 13);
        await(() -> host.counter(PeerGuardCounter.DROPPED_SETUP_MTU) == 2, "the setup at an unaligned offset dropped");
        settle();
        assertTrue(host.errors.isEmpty(), () -> "errors: " + host.errors);
        servesTheMember();
    }

    @Test
    void shouldDropMisplacedDataIntoAStrangersImageAndKeepReading() throws IOException
    {
        start();
        final long imagesBefore = host.counter(PeerCounter.IMAGES_AVAILABLE);
        sendSetup(PeerTransport.TERM_LENGTH, 1_408, 0);
        await(() -> host.counter(PeerCounter.IMAGES_AVAILABLE) > imagesBefore, "the stranger's image");
        sendData(PeerTransport.TERM_LENGTH - 1, 8);
        await(() -> host.counter(PeerGuardCounter.DROPPED_DATA_OFFSET) == 1, "data at an unaligned offset dropped");
        sendData(PeerTransport.TERM_LENGTH - 32, 64);
        await(() -> host.counter(PeerGuardCounter.DROPPED_DATA_OFFSET) == 2, "data past the term's end dropped");
        sendDataClaiming(0, 1 << 20);
        await(() -> host.counter(PeerGuardCounter.DROPPED_DATA_OFFSET) == 3, "a frame longer than its datagram dropped");
        settle();
        assertEquals(0, host.counter(PeerGuardCounter.IMAGE_POLL_ERRORS));
        servesTheMember();
    }

    @Test
    void shouldDropEveryFrameFromAHostThatIsNoMembersOnceAViewNamesTheMembers() throws IOException
    {
        start();
        stranger.close();
        stranger = DatagramChannel.open();
        stranger.bind(new InetSocketAddress("127.0.0.2", 0));
        final PeerSourceFilter sources = host.publisher().sourceFilter();
        assertFalse(sources.isRestricted(), "no view yet: every host is heard");

        sources.admit(java.util.List.of(host.transport.endpoint(), owner.transport.endpoint()));
        assertTrue(sources.isRestricted());
        final long imagesBefore = host.counter(PeerCounter.IMAGES_AVAILABLE);
        sendSetup(PeerTransport.TERM_LENGTH, 1_408, 0);
        sendData(0, 8);
        await(() -> host.counter(PeerGuardCounter.DROPPED_NOT_MEMBER) == 2, "the stranger's setup and data dropped");
        settle();
        assertEquals(imagesBefore, host.counter(PeerCounter.IMAGES_AVAILABLE), "no image of the stranger");
        servesTheMember();

        // A member endpoint that names no single host (a wildcard) restricts nothing.
        sources.admit(java.util.List.of("0.0.0.0:7470", owner.transport.endpoint()));
        assertFalse(sources.isRestricted());
        sendSetup(PeerTransport.TERM_LENGTH, 1_408, 0);
        await(() -> host.counter(PeerCounter.IMAGES_AVAILABLE) > imagesBefore, "the image of a host heard again");
        assertEquals(2, host.counter(PeerGuardCounter.DROPPED_NOT_MEMBER));
    }

    @Test
    void shouldAcceptWhatAPeerSendsAndJudgeDatagramsByTheirFrames()
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[256]);
        final int term = PeerTransport.TERM_LENGTH;
        assertTrue(GuardedReceiveEndpoint.isAcceptedSetup(term, 1_408, 0, term));
        assertFalse(GuardedReceiveEndpoint.isAcceptedSetup(term * 2, 1_408, 0, term));
        assertFalse(GuardedReceiveEndpoint.isAcceptedSetup(term, 1_400, 0, term));
        assertFalse(GuardedReceiveEndpoint.isAcceptedSetup(term, 1_408, term, term));

        // A heartbeat: a lone header of length 0.
        assertTrue(GuardedReceiveEndpoint.isAcceptedData(buffer, term - 32, 32, term));
        // Two data frames, the second ending exactly at the term's end.
        buffer.putInt(0, 40, java.nio.ByteOrder.LITTLE_ENDIAN);
        buffer.putShort(6, (short)HeaderFlyweight.HDR_TYPE_DATA, java.nio.ByteOrder.LITTLE_ENDIAN);
        buffer.putInt(64, 64, java.nio.ByteOrder.LITTLE_ENDIAN);
        buffer.putShort(70, (short)HeaderFlyweight.HDR_TYPE_DATA, java.nio.ByteOrder.LITTLE_ENDIAN);
        assertTrue(GuardedReceiveEndpoint.isAcceptedData(buffer, term - 128, 128, term));
        assertFalse(GuardedReceiveEndpoint.isAcceptedData(buffer, term - 96, 128, term), "past the term");
        assertFalse(GuardedReceiveEndpoint.isAcceptedData(buffer, 0, 120, term), "second frame cut short");
        // A padding frame is sent as its header: its length may pass the datagram's end, not the term's.
        buffer.putInt(64, 4096, java.nio.ByteOrder.LITTLE_ENDIAN);
        buffer.putShort(70, (short)HeaderFlyweight.HDR_TYPE_PAD, java.nio.ByteOrder.LITTLE_ENDIAN);
        assertTrue(GuardedReceiveEndpoint.isAcceptedData(buffer, term - 64 - 4096, 96, term));
        assertFalse(GuardedReceiveEndpoint.isAcceptedData(buffer, term - 64 - 4064, 96, term));
        // A frame length below a header's is no frame.
        buffer.putInt(0, 8, java.nio.ByteOrder.LITTLE_ENDIAN);
        assertFalse(GuardedReceiveEndpoint.isAcceptedData(buffer, 0, 64, term));
    }

    @Test
    void shouldCountTheDriversRefusalOfASetupAndLogEveryOtherDriverError()
    {
        final java.util.List<Throwable> logged = new java.util.ArrayList<>();
        final io.orbitkv.manager.status.SystemCounters counters =
            io.orbitkv.manager.status.SystemCounters.inMemory(PeerGuardCounter.values());
        final org.agrona.ErrorHandler handler = PeerTransport.driverErrorHandler(logged::add, counters);

        final IllegalArgumentException refusal = new IllegalArgumentException("invalid term buffer length: 0");
        refusal.setStackTrace(new StackTraceElement[]{
            new StackTraceElement("io.aeron.driver.DriverConductor", "onCreatePublicationImage", null, 1) });
        handler.onError(refusal);
        final io.aeron.exceptions.ConfigurationException mtu =
            new io.aeron.exceptions.ConfigurationException("mtuLength=0 <= HEADER_LENGTH=32");
        mtu.setStackTrace(refusal.getStackTrace());
        handler.onError(mtu);
        assertEquals(2, counters.value(PeerGuardCounter.DRIVER_FRAME_ERRORS));
        assertTrue(logged.isEmpty());

        final IllegalStateException other = new IllegalStateException("bind failed");
        handler.onError(other);
        handler.onError(new IllegalArgumentException("not from a setup"));
        assertEquals(2, counters.value(PeerGuardCounter.DRIVER_FRAME_ERRORS));
        assertEquals(2, logged.size());
    }

    private void start() throws IOException
    {
        host = new PeerNode(dir, 1, 0x1111, 0x2222);
        owner = new PeerNode(dir, 2, 0x3333, 0x4444);
        stranger = DatagramChannel.open();
        stranger.bind(new InetSocketAddress("127.0.0.1", 0));
    }

    private void servesTheMember()
    {
        final PeerClient client =
            owner.publisher().connect(host.transport.endpoint(), host.nodeIndex, host.incarnationMsb, host.incarnationLsb);
        await(client::isActive, "the member's session on " + host.transport.endpoint());
    }

    private void sendSetup(final int termLength, final int mtuLength, final int termOffset) throws IOException
    {
        final SetupFlyweight setup = new SetupFlyweight(frame);
        setup.frameLength(SetupFlyweight.HEADER_LENGTH);
        setup.version(HeaderFlyweight.CURRENT_VERSION).flags((short)0).headerType(HeaderFlyweight.HDR_TYPE_SETUP);
        setup.termOffset(termOffset).sessionId(SESSION_ID).streamId(PeerTransport.DEFAULT_STREAM_ID)
            .initialTermId(TERM_ID).activeTermId(TERM_ID).termLength(termLength).mtuLength(mtuLength).ttl(0);
        send(SetupFlyweight.HEADER_LENGTH);
    }

    private void sendData(final int termOffset, final int payload) throws IOException
    {
        final int length = DataHeaderFlyweight.HEADER_LENGTH + payload;
        writeData(termOffset, length);
        send(length);
    }

    private void sendDataClaiming(final int termOffset, final int claimedLength) throws IOException
    {
        writeData(termOffset, claimedLength);
        send(DataHeaderFlyweight.HEADER_LENGTH + 32);
    }

    private void writeData(final int termOffset, final int frameLength)
    {
        final DataHeaderFlyweight data = new DataHeaderFlyweight(frame);
        data.frameLength(frameLength);
        data.version(HeaderFlyweight.CURRENT_VERSION).flags(DataHeaderFlyweight.BEGIN_AND_END_FLAGS)
            .headerType(HeaderFlyweight.HDR_TYPE_DATA);
        data.termOffset(termOffset).sessionId(SESSION_ID).streamId(PeerTransport.DEFAULT_STREAM_ID).termId(TERM_ID);
        data.reservedValue(0);
    }

    private void send(final int length) throws IOException
    {
        final String endpoint = host.transport.endpoint();
        final int colon = endpoint.lastIndexOf(':');
        datagram.clear().limit(length);
        stranger.send(datagram,
            new InetSocketAddress(endpoint.substring(0, colon), Integer.parseInt(endpoint.substring(colon + 1))));
    }

    /**
     * Run both peers for a while, so whatever the driver would do with what arrived has happened.
     */
    private void settle()
    {
        final long untilNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(300);
        await(() -> System.nanoTime() - untilNs > 0, "the peers to settle");
    }

    private void await(final BooleanSupplier condition, final String what)
    {
        final long deadlineNs = System.nanoTime() + AWAIT_NS;
        while (!condition.getAsBoolean())
        {
            final int work = host.transport.doWork() + owner.transport.doWork();
            if (System.nanoTime() - deadlineNs > 0)
            {
                fail("timed out awaiting " + what);
            }
            if (0 == work)
            {
                Thread.yield();
            }
        }
    }
}
