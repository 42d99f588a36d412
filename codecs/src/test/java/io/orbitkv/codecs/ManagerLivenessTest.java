package io.orbitkv.codecs;

import io.orbitkv.codecs.cnc.CncFileDescriptor;
import io.orbitkv.codecs.cnc.ManagerLiveness;
import java.util.concurrent.TimeUnit;
import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The liveness rule on a CnC file laid out in memory, with real processes: this one stands for a running Manager, a
 * child that has exited for a stopped one.
 */
class ManagerLivenessTest
{
    private static final long LIVENESS_NS = TimeUnit.SECONDS.toNanos(2);

    private final CncFileDescriptor.Lengths lengths = new CncFileDescriptor.Lengths(1 << 12, 1, 1 << 12, 1024, 4096);
    private final UnsafeBuffer file =
        new UnsafeBuffer(BufferUtil.allocateDirectAligned((int)CncFileDescriptor.fileLength(lengths), 64));
    private final UnsafeBuffer header = new UnsafeBuffer(file, 0, CncFileDescriptor.HEADER_LENGTH);

    @Test
    void shouldFindTheHeartbeatWhereTheRequestRingKeepsIt()
    {
        fill(ProcessHandle.current().pid(), 1000, LIVENESS_NS);
        final ManyToOneRingBuffer ring = new ManyToOneRingBuffer(new UnsafeBuffer(
            file, (int)CncFileDescriptor.requestRingOffset(), lengths.requestRingLength()));
        ring.consumerHeartbeatTime(123_456_789L);
        assertEquals(123_456_789L,
            file.getLongVolatile((int)ManagerLiveness.heartbeatOffset(lengths.requestRingLength())));
    }

    @Test
    void shouldJudgeALiveAStaleAndAStoppedManager() throws Exception
    {
        final long nowMs = 10_000_000L;
        fill(ProcessHandle.current().pid(), nowMs - 60_000, LIVENESS_NS);
        CncFileDescriptor.signalReady(header);

        assertTrue(ManagerLiveness.isAlive(header, nowMs - 2000, nowMs), "live: running, heartbeat at the timeout");
        assertTrue(ManagerLiveness.isHeartbeatFresh(header, nowMs - 2000, nowMs));

        assertFalse(ManagerLiveness.isAlive(header, nowMs - 2001, nowMs), "stale: running, heartbeat too old");
        assertFalse(ManagerLiveness.isHeartbeatFresh(header, nowMs - 2001, nowMs));

        final Process exited = new ProcessBuilder("true").start();
        assertEquals(0, exited.waitFor());
        header.putLong(CncFileDescriptor.MANAGER_PID_OFFSET, exited.pid());
        assertFalse(ManagerLiveness.isAlive(header, nowMs, nowMs), "stopped: fresh heartbeat, process ended");
        assertTrue(ManagerLiveness.isHeartbeatFresh(header, nowMs, nowMs), "the heartbeat half cannot see the process");
        assertFalse(ManagerLiveness.isProcessAlive(0));
    }

    @Test
    void shouldJudgeAManagerStillWritingItsFileByItsStartTime()
    {
        final long nowMs = 10_000_000L;
        fill(ProcessHandle.current().pid(), nowMs - 1500, LIVENESS_NS);
        assertTrue(ManagerLiveness.isAlive(header, 0, nowMs), "not ready: the start time stands in for the heartbeat");
        assertFalse(ManagerLiveness.isAlive(header, 0, nowMs + 501));
    }

    @Test
    void shouldNeverTimeOutBelowOneSecond()
    {
        assertEquals(ManagerLiveness.MIN_TIMEOUT_MS, ManagerLiveness.timeoutMs(TimeUnit.MILLISECONDS.toNanos(200)));
        assertEquals(5000, ManagerLiveness.timeoutMs(TimeUnit.SECONDS.toNanos(5)));
        final long nowMs = 10_000_000L;
        fill(ProcessHandle.current().pid(), nowMs, TimeUnit.MILLISECONDS.toNanos(200));
        CncFileDescriptor.signalReady(header);
        assertTrue(ManagerLiveness.isAlive(header, nowMs - 1000, nowMs));
        assertFalse(ManagerLiveness.isAlive(header, nowMs - 1001, nowMs));
    }

    private void fill(final long pid, final long startTimeMs, final long livenessNs)
    {
        CncFileDescriptor.fillHeader(header, lengths, pid, startTimeMs, 1, 2, livenessNs, 512, 4096, 1 << 20, 1 << 20);
    }
}
