package io.orbitkv.codecs.cnc;

import org.agrona.BitUtil;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;
import org.agrona.concurrent.status.CountersReader;

/**
 * Layout of a Manager's command-and-control (CnC) file, the process interface between one Manager and the
 * engines on its host. The Manager creates the file, fills every section, then writes {@link #LAYOUT_VERSION}
 * last with release semantics; a reader that sees the version may read everything else.
 *
 * <pre>
 *   0 +-----------------------------+ header, {@link #HEADER_LENGTH} bytes
 *     | layoutVersion        int32  | written last (ordered)
 *     | headerLength         int32  |
 *     | managerPid           int64  |
 *     | startTimeMs          int64  | wall clock, ms since epoch
 *     | runtimeUuidMsb       int64  | new at every Manager start
 *     | runtimeUuidLsb       int64  |
 *     | clientLivenessNs     int64  | a client silent this long is detached
 *     | requestRingLength    int32  | capacity + ring trailer
 *     | maxClients           int32  |
 *     | responseRingLength   int32  | per client, capacity + ring trailer
 *     | countersMetaLength   int32  |
 *     | countersValuesLength int32  |
 *     | errorLogLength       int32  |
 *     | maxKeysPerRequest    int32  |
 *     | maxRequestBytes      int32  |
 *     | maxDataRegionBytes   int64  |
 *     | poolBytes            int64  |
 *  96 | poolAccess           int32  | {@link #POOL_ACCESS_NONE} or {@link #POOL_ACCESS_WRITE_RESERVED}: engines then
 *     |                             | map {@link #POOL_FILE_NAME} of the Manager's directory read-write
 *     | (zero up to offset 128)     |
 * 128 | agentState           int32  | {@link #AGENT_AWAKE}, {@link #AGENT_SLEEPING} or {@link #AGENT_RUNG}; a cache
 *     |                             | line of its own: engines read it after every request
 *     +-----------------------------+ every section starts on a {@link #SECTION_ALIGNMENT} boundary
 *     | request ring                | Agrona ManyToOneRingBuffer: engines -> Manager
 *     | client slot table           | maxClients x {@link #SLOT_LENGTH}
 *     | response rings              | maxClients x responseRingLength, Agrona OneToOneRingBuffer: Manager -> engine
 *     | counters metadata           | Agrona CountersManager
 *     | counters values             |
 *     | error log                   | Agrona DistinctErrorLog
 *     +-----------------------------+
 * </pre>
 *
 * <p>A client slot ({@link #SLOT_LENGTH} bytes) is claimed by the engine and owned thereafter by the Manager:
 * <pre>
 *   +0  claimPid     int64  0 = free; an engine claims it with compare-and-set 0 -> its pid
 *   +8  claimTimeMs  int64  written by the engine right after a successful claim
 *   +16 generation   int32  incremented by the Manager at each successful attach
 *   +20 slotState    int32  {@link #SLOT_FREE}, {@link #SLOT_CLAIMED} (engine), {@link #SLOT_ATTACHED} (Manager)
 *   +24 clientId     int64  (generation &lt;&lt; 32) | slot index while attached
 * </pre>
 * The Manager resets the slot's response ring before it writes {@code claimPid = 0}, so a new claimant always
 * finds an empty ring.
 *
 * <p>The doorbell (layout version 2, docs/engine-ring.md): an idle Manager writes {@link #AGENT_SLEEPING} into
 * {@code agentState}, fences, looks at the request ring once more and only then sleeps in epoll on the FIFO
 * {@link #DOORBELL_FILE_NAME} in its directory (created before the layout version is written). An engine, after
 * committing a request, fences and loads {@code agentState}; only when it reads {@link #AGENT_SLEEPING} does it
 * compare-and-set it to {@link #AGENT_RUNG} and, having won, write one byte into the FIFO. Either the Manager sees
 * the request or the engine sees the Manager asleep, so no request waits for a timer. The Manager writes
 * {@link #AGENT_AWAKE} when it wakes.
 */
public final class CncFileDescriptor
{
    /** Bump on any incompatible change of this layout. */
    public static final int LAYOUT_VERSION = 2;

    public static final String CNC_FILE_NAME = "cnc.dat";
    public static final String CLIENTS_DIR_NAME = "clients";

    /** The FIFO in the Manager directory that engines write one byte into to wake a sleeping Manager. */
    public static final String DOORBELL_FILE_NAME = "doorbell";

    public static final int HEADER_LENGTH = 4096;
    public static final int SECTION_ALIGNMENT = 4096;
    public static final int SLOT_LENGTH = 64;

    public static final int LAYOUT_VERSION_OFFSET = 0;
    public static final int HEADER_LENGTH_OFFSET = 4;
    public static final int MANAGER_PID_OFFSET = 8;
    public static final int START_TIME_MS_OFFSET = 16;
    public static final int RUNTIME_UUID_MSB_OFFSET = 24;
    public static final int RUNTIME_UUID_LSB_OFFSET = 32;
    public static final int CLIENT_LIVENESS_NS_OFFSET = 40;
    public static final int REQUEST_RING_LENGTH_OFFSET = 48;
    public static final int MAX_CLIENTS_OFFSET = 52;
    public static final int RESPONSE_RING_LENGTH_OFFSET = 56;
    public static final int COUNTERS_METADATA_LENGTH_OFFSET = 60;
    public static final int COUNTERS_VALUES_LENGTH_OFFSET = 64;
    public static final int ERROR_LOG_LENGTH_OFFSET = 68;
    public static final int MAX_KEYS_PER_REQUEST_OFFSET = 72;
    public static final int MAX_REQUEST_BYTES_OFFSET = 76;
    public static final int MAX_DATA_REGION_BYTES_OFFSET = 80;
    public static final int POOL_BYTES_OFFSET = 88;
    public static final int POOL_ACCESS_OFFSET = 96;
    public static final int AGENT_STATE_OFFSET = 128;

    /** poolAccess: engines have no access to the pool (0, what a Manager that predates the field leaves). */
    public static final int POOL_ACCESS_NONE = 0;
    /** poolAccess: engines map the pool file read-write and write into the slots their Prepare reserved. */
    public static final int POOL_ACCESS_WRITE_RESERVED = 1;
    /** The pool's shared file in the Manager's directory, when engines may map it. */
    public static final String POOL_FILE_NAME = "pool.dat";

    /** agentState: the Manager's agent is running duty cycles; engines do nothing more after a request. */
    public static final int AGENT_AWAKE = 0;
    /** agentState: the agent sleeps (or is about to) until the doorbell rings, a peer datagram or its timeout. */
    public static final int AGENT_SLEEPING = 1;
    /** agentState: an engine has rung the doorbell for this sleep; others need not. */
    public static final int AGENT_RUNG = 2;

    public static final int SLOT_CLAIM_PID_OFFSET = 0;
    public static final int SLOT_CLAIM_TIME_MS_OFFSET = 8;
    public static final int SLOT_GENERATION_OFFSET = 16;
    public static final int SLOT_STATE_OFFSET = 20;
    public static final int SLOT_CLIENT_ID_OFFSET = 24;

    public static final int SLOT_FREE = 0;
    public static final int SLOT_CLAIMED = 1;
    public static final int SLOT_ATTACHED = 2;

    private CncFileDescriptor()
    {
    }

    /**
     * Sizes of the sections, as chosen by the Manager. Everything else is derived from these.
     *
     * @param requestRingCapacity  power of two, request ring data capacity in bytes.
     * @param maxClients           number of client slots and response rings.
     * @param responseRingCapacity power of two, per-client response ring data capacity.
     * @param countersValuesLength counters values buffer length (metadata is four times this).
     * @param errorLogLength       error log length.
     */
    public record Lengths(
        int requestRingCapacity, int maxClients, int responseRingCapacity, int countersValuesLength, int errorLogLength)
    {
        public Lengths
        {
            if (!BitUtil.isPowerOfTwo(requestRingCapacity) || !BitUtil.isPowerOfTwo(responseRingCapacity))
            {
                throw new IllegalArgumentException("ring capacities must be powers of two: request=" +
                    requestRingCapacity + " response=" + responseRingCapacity);
            }
            if (maxClients < 1 || maxClients > 4096)
            {
                throw new IllegalArgumentException("maxClients must be in [1, 4096]: " + maxClients);
            }
            if (countersValuesLength < CountersReader.COUNTER_LENGTH || countersValuesLength % CountersReader.COUNTER_LENGTH != 0)
            {
                throw new IllegalArgumentException("countersValuesLength must be a multiple of " +
                    CountersReader.COUNTER_LENGTH + ": " + countersValuesLength);
            }
        }

        public int requestRingLength()
        {
            return requestRingCapacity + RingBufferDescriptor.TRAILER_LENGTH;
        }

        public int responseRingLength()
        {
            return responseRingCapacity + RingBufferDescriptor.TRAILER_LENGTH;
        }

        public int countersMetadataLength()
        {
            return countersValuesLength * (CountersReader.METADATA_LENGTH / CountersReader.COUNTER_LENGTH);
        }
    }

    public static int align(final int length)
    {
        return BitUtil.align(length, SECTION_ALIGNMENT);
    }

    public static long requestRingOffset()
    {
        return HEADER_LENGTH;
    }

    public static long slotTableOffset(final int requestRingLength)
    {
        return requestRingOffset() + align(requestRingLength);
    }

    public static long responseRingsOffset(final int requestRingLength, final int maxClients)
    {
        return slotTableOffset(requestRingLength) + align(maxClients * SLOT_LENGTH);
    }

    /**
     * Offset of one client's response ring.
     *
     * @param requestRingLength  request ring length including trailer.
     * @param maxClients         number of slots.
     * @param responseRingLength response ring length including trailer.
     * @param slotIndex          the client's slot.
     * @return byte offset from the start of the file.
     */
    public static long responseRingOffset(
        final int requestRingLength, final int maxClients, final int responseRingLength, final int slotIndex)
    {
        return responseRingsOffset(requestRingLength, maxClients) + (long)slotIndex * align(responseRingLength);
    }

    public static long countersMetadataOffset(final int requestRingLength, final int maxClients, final int responseRingLength)
    {
        return responseRingsOffset(requestRingLength, maxClients) + (long)maxClients * align(responseRingLength);
    }

    public static long countersValuesOffset(
        final int requestRingLength, final int maxClients, final int responseRingLength, final int countersMetadataLength)
    {
        return countersMetadataOffset(requestRingLength, maxClients, responseRingLength) + align(countersMetadataLength);
    }

    public static long errorLogOffset(
        final int requestRingLength,
        final int maxClients,
        final int responseRingLength,
        final int countersMetadataLength,
        final int countersValuesLength)
    {
        return countersValuesOffset(requestRingLength, maxClients, responseRingLength, countersMetadataLength) +
            align(countersValuesLength);
    }

    /**
     * Total file length for the given section lengths.
     *
     * @param lengths section lengths.
     * @return file length in bytes.
     */
    public static long fileLength(final Lengths lengths)
    {
        return errorLogOffset(
            lengths.requestRingLength(),
            lengths.maxClients(),
            lengths.responseRingLength(),
            lengths.countersMetadataLength(),
            lengths.countersValuesLength()) + align(lengths.errorLogLength());
    }

    /**
     * Views over the sections of a mapped CnC file whose header is complete. Both the Manager (after writing
     * the header) and engines/stat readers (after seeing {@link #LAYOUT_VERSION}) use it.
     */
    public static final class Sections
    {
        private final UnsafeBuffer header;
        private final UnsafeBuffer requestRing;
        private final UnsafeBuffer slotTable;
        private final UnsafeBuffer[] responseRings;
        private final UnsafeBuffer countersMetadata;
        private final UnsafeBuffer countersValues;
        private final UnsafeBuffer errorLog;

        /**
         * Wrap the sections of a mapped CnC file.
         *
         * @param address base address of the mapping (kept alive by the caller).
         * @param length  mapping length.
         */
        public Sections(final long address, final long length)
        {
            header = new UnsafeBuffer(address, HEADER_LENGTH);
            final int requestRingLength = header.getInt(REQUEST_RING_LENGTH_OFFSET);
            final int maxClients = header.getInt(MAX_CLIENTS_OFFSET);
            final int responseRingLength = header.getInt(RESPONSE_RING_LENGTH_OFFSET);
            final int metaLength = header.getInt(COUNTERS_METADATA_LENGTH_OFFSET);
            final int valuesLength = header.getInt(COUNTERS_VALUES_LENGTH_OFFSET);
            final int errorLogLength = header.getInt(ERROR_LOG_LENGTH_OFFSET);

            final long expected = fileLength(new Lengths(
                requestRingLength - RingBufferDescriptor.TRAILER_LENGTH,
                maxClients,
                responseRingLength - RingBufferDescriptor.TRAILER_LENGTH,
                valuesLength,
                errorLogLength));
            if (expected > length)
            {
                throw new IllegalStateException("CnC file shorter than its header describes: " + length + " < " + expected);
            }

            requestRing = new UnsafeBuffer(address + requestRingOffset(), requestRingLength);
            slotTable = new UnsafeBuffer(address + slotTableOffset(requestRingLength), maxClients * SLOT_LENGTH);
            responseRings = new UnsafeBuffer[maxClients];
            for (int i = 0; i < maxClients; i++)
            {
                responseRings[i] = new UnsafeBuffer(
                    address + responseRingOffset(requestRingLength, maxClients, responseRingLength, i), responseRingLength);
            }
            countersMetadata = new UnsafeBuffer(
                address + countersMetadataOffset(requestRingLength, maxClients, responseRingLength), metaLength);
            countersValues = new UnsafeBuffer(
                address + countersValuesOffset(requestRingLength, maxClients, responseRingLength, metaLength), valuesLength);
            errorLog = new UnsafeBuffer(
                address + errorLogOffset(requestRingLength, maxClients, responseRingLength, metaLength, valuesLength),
                errorLogLength);
        }

        public AtomicBuffer header()
        {
            return header;
        }

        public AtomicBuffer requestRing()
        {
            return requestRing;
        }

        public AtomicBuffer slotTable()
        {
            return slotTable;
        }

        public int maxClients()
        {
            return responseRings.length;
        }

        public AtomicBuffer responseRing(final int slotIndex)
        {
            return responseRings[slotIndex];
        }

        public AtomicBuffer countersMetadata()
        {
            return countersMetadata;
        }

        public AtomicBuffer countersValues()
        {
            return countersValues;
        }

        public AtomicBuffer errorLog()
        {
            return errorLog;
        }

        public static int slotOffset(final int slotIndex)
        {
            return slotIndex * SLOT_LENGTH;
        }
    }

    /**
     * Write every header field except the layout version, which {@link #signalReady(AtomicBuffer)} writes last.
     *
     * @param header             the first {@link #HEADER_LENGTH} bytes of the file.
     * @param lengths            section lengths.
     * @param managerPid         the Manager's process id.
     * @param startTimeMs        wall-clock start time.
     * @param runtimeUuidMsb     runtime UUID, most significant half.
     * @param runtimeUuidLsb     runtime UUID, least significant half.
     * @param clientLivenessNs   client liveness timeout.
     * @param maxKeysPerRequest  per-request key limit in force.
     * @param maxRequestBytes    per-request frame limit in force.
     * @param maxDataRegionBytes largest data region a client may ask for.
     * @param poolBytes          DRAM pool size.
     */
    public static void fillHeader(
        final AtomicBuffer header,
        final Lengths lengths,
        final long managerPid,
        final long startTimeMs,
        final long runtimeUuidMsb,
        final long runtimeUuidLsb,
        final long clientLivenessNs,
        final int maxKeysPerRequest,
        final int maxRequestBytes,
        final long maxDataRegionBytes,
        final long poolBytes)
    {
        header.putInt(HEADER_LENGTH_OFFSET, HEADER_LENGTH);
        header.putLong(MANAGER_PID_OFFSET, managerPid);
        header.putLong(START_TIME_MS_OFFSET, startTimeMs);
        header.putLong(RUNTIME_UUID_MSB_OFFSET, runtimeUuidMsb);
        header.putLong(RUNTIME_UUID_LSB_OFFSET, runtimeUuidLsb);
        header.putLong(CLIENT_LIVENESS_NS_OFFSET, clientLivenessNs);
        header.putInt(REQUEST_RING_LENGTH_OFFSET, lengths.requestRingLength());
        header.putInt(MAX_CLIENTS_OFFSET, lengths.maxClients());
        header.putInt(RESPONSE_RING_LENGTH_OFFSET, lengths.responseRingLength());
        header.putInt(COUNTERS_METADATA_LENGTH_OFFSET, lengths.countersMetadataLength());
        header.putInt(COUNTERS_VALUES_LENGTH_OFFSET, lengths.countersValuesLength());
        header.putInt(ERROR_LOG_LENGTH_OFFSET, lengths.errorLogLength());
        header.putInt(MAX_KEYS_PER_REQUEST_OFFSET, maxKeysPerRequest);
        header.putInt(MAX_REQUEST_BYTES_OFFSET, maxRequestBytes);
        header.putLong(MAX_DATA_REGION_BYTES_OFFSET, maxDataRegionBytes);
        header.putLong(POOL_BYTES_OFFSET, poolBytes);
        header.putIntVolatile(AGENT_STATE_OFFSET, AGENT_AWAKE);
    }

    /**
     * Say whether engines may map the pool; before {@link #signalReady(AtomicBuffer)}.
     *
     * @param header     the header buffer.
     * @param poolAccess {@link #POOL_ACCESS_NONE} or {@link #POOL_ACCESS_WRITE_RESERVED}.
     */
    public static void poolAccess(final AtomicBuffer header, final int poolAccess)
    {
        header.putInt(POOL_ACCESS_OFFSET, poolAccess);
    }

    /**
     * @param header the header buffer.
     * @return {@link #POOL_ACCESS_NONE} or {@link #POOL_ACCESS_WRITE_RESERVED}.
     */
    public static int poolAccess(final DirectBuffer header)
    {
        return header.getInt(POOL_ACCESS_OFFSET);
    }

    public static void signalReady(final AtomicBuffer header)
    {
        header.putIntRelease(LAYOUT_VERSION_OFFSET, LAYOUT_VERSION);
    }

    /**
     * The layout version a reader sees, 0 while the Manager is still writing the file.
     *
     * @param header the header buffer.
     * @return the layout version.
     */
    public static int layoutVersion(final DirectBuffer header)
    {
        return ((AtomicBuffer)header).getIntVolatile(LAYOUT_VERSION_OFFSET);
    }
}
