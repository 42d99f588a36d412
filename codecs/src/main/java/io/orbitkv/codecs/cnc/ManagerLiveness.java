package io.orbitkv.codecs.cnc;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;

/**
 * The one rule by which any process decides from a CnC file whether its Manager is alive: the engines' client, and
 * {@code orbitkv stat}, the metrics endpoint and a starting Manager on the Manager's side.
 * <ul>
 *   <li><b>Heartbeat.</b> The Manager's heartbeat is the request ring's consumer heartbeat (epoch ms, see
 *   docs/engine-ring.md); before the file is ready its start time stands in for it. It must be no older than the
 *   timeout: the header's client liveness, at least {@link #MIN_TIMEOUT_MS} so that a sub-second liveness setting
 *   does not declare a Manager dead over one late timer.</li>
 *   <li><b>Process.</b> A Manager whose process has ended is dead at once, whatever its heartbeat says. Only an
 *   observer that shares the Manager's pid namespace can tell: {@link #isAlive} is the whole rule for the Manager's
 *   own tools; the engine client, which may run in another container sharing only {@code /dev/shm}, judges by the
 *   heartbeat ({@link #isHeartbeatFresh}) and asks about the process only to stop waiting for a stale Manager that
 *   will not come back.</li>
 * </ul>
 * Allocation-free except {@link #isProcessAlive(long)}, which is for slow paths.
 */
public final class ManagerLiveness
{
    /** The shortest timeout, whatever the header's client liveness. */
    public static final long MIN_TIMEOUT_MS = 1000;

    private ManagerLiveness()
    {
    }

    /**
     * @param clientLivenessNs the header's client liveness.
     * @return how old the Manager's heartbeat may be while it is alive.
     */
    public static long timeoutMs(final long clientLivenessNs)
    {
        return Math.max(MIN_TIMEOUT_MS, clientLivenessNs / 1_000_000);
    }

    /**
     * @param header the CnC header.
     * @return how old its Manager's heartbeat may be while it is alive.
     */
    public static long timeoutMs(final DirectBuffer header)
    {
        return timeoutMs(header.getLong(CncFileDescriptor.CLIENT_LIVENESS_NS_OFFSET));
    }

    /**
     * Where the Manager's heartbeat is: the consumer heartbeat in the request ring's trailer.
     *
     * @param requestRingLength the header's request ring length (capacity and trailer).
     * @return its offset from the start of the file.
     */
    public static long heartbeatOffset(final int requestRingLength)
    {
        return CncFileDescriptor.requestRingOffset() + requestRingLength - RingBufferDescriptor.TRAILER_LENGTH +
            RingBufferDescriptor.CONSUMER_HEARTBEAT_OFFSET;
    }

    /**
     * The heartbeat half of the rule, on values the caller has read.
     *
     * @param heartbeatMs the Manager's heartbeat (or, before the file is ready, its start time).
     * @param nowMs       epoch time now.
     * @param timeoutMs   {@link #timeoutMs(long)} of the header.
     * @return true while the heartbeat is fresh.
     */
    public static boolean isHeartbeatFresh(final long heartbeatMs, final long nowMs, final long timeoutMs)
    {
        return nowMs - heartbeatMs <= timeoutMs;
    }

    /**
     * The heartbeat half of the rule, on the header: the heartbeat once the file is ready, the start time before.
     *
     * @param header      the CnC header.
     * @param heartbeatMs the Manager's heartbeat as read from the request ring (ignored before the file is ready).
     * @param nowMs       epoch time now.
     * @return true while the Manager's heartbeat is fresh.
     */
    public static boolean isHeartbeatFresh(final DirectBuffer header, final long heartbeatMs, final long nowMs)
    {
        final boolean ready = CncFileDescriptor.LAYOUT_VERSION == CncFileDescriptor.layoutVersion(header);
        final long timeMs = ready ? heartbeatMs : header.getLong(CncFileDescriptor.START_TIME_MS_OFFSET);
        return isHeartbeatFresh(timeMs, nowMs, timeoutMs(header));
    }

    /**
     * Whether a process with this pid exists, as this process sees it (slow: asks the operating system).
     *
     * @param pid the header's Manager pid.
     * @return true if it is running.
     */
    public static boolean isProcessAlive(final long pid)
    {
        return pid > 0 && ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
    }

    /**
     * The whole rule, for an observer in the Manager's pid namespace: its process runs and its heartbeat is fresh.
     *
     * @param header      the CnC header.
     * @param heartbeatMs the Manager's heartbeat as read from the request ring (ignored before the file is ready).
     * @param nowMs       epoch time now.
     * @return true if a live Manager owns the file.
     */
    public static boolean isAlive(final DirectBuffer header, final long heartbeatMs, final long nowMs)
    {
        return isProcessAlive(header.getLong(CncFileDescriptor.MANAGER_PID_OFFSET)) &&
            isHeartbeatFresh(header, heartbeatMs, nowMs);
    }
}
