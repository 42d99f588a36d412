package io.orbitkv.manager.authority;

/**
 * Layout of the authority log file ({@value #FILE_NAME} in the Manager's directory): a header, then one ring of
 * fixed-size records per writer. Every number is little-endian (the machine's order; the file never leaves the host).
 *
 * <pre>
 * header ({@value #HEADER_LENGTH} bytes)
 *   0  int   magic {@link #MAGIC}            4  int  version {@link #VERSION}
 *   8  int   header length                   12 int  record length
 *   16 long  pid                             24 long start, wall clock (ms since the epoch)
 *   32 long  start, monotonic clock (ns)     40 long process runtime UUID, msb (the CnC file's)
 *   48 long  process runtime UUID, lsb       56 int  sections
 *   60 int   node id length                  64      node id, UTF-8 ({@value #MAX_NAME_BYTES} bytes)
 *   128 int  cluster name length             132     cluster name, UTF-8 ({@value #MAX_NAME_BYTES} bytes)
 *   256 + 64 * s: section s
 *     +0 long data offset (from the start of the file)   +8 long capacity (records)
 *     +16 long position: records ever written, stored after the record it counts is complete
 * record ({@value #RECORD_LENGTH} bytes) at data offset + (index mod capacity) * record length
 *   0  long  sequence: index + 1 once complete; -(index + 1) while being written
 *   8  int   type                             12 int  own incarnation number (1 = first registration)
 *   16 long  monotonic clock (ns)             24 long wall clock (ms since the epoch)
 *   32 long  own epoch                        40 long own incarnation's runtime UUID, msb
 *   48 long  own runtime UUID, lsb            56..127 nine type-specific longs, F0..F8 (below)
 * </pre>
 * The monotonic clock is the Manager's nano clock, {@code System.nanoTime()}, which on Linux is
 * {@code clock_gettime(CLOCK_MONOTONIC)}: one clock for every process on the host, network namespaces included, so the
 * logs of several Managers on one host order against each other.
 */
public final class AuthorityLogDescriptor
{
    /** Name of the file in the Manager's directory; earlier ones are kept as {@code authority.N.log}. */
    public static final String FILE_NAME = "authority.log";

    /** Earlier logs kept beside the current one (authority.1.log the newest), so a restart does not lose a kill's. */
    public static final int KEPT_LOGS = 3;

    public static final int MAGIC = 0x4C414B4F;
    public static final int VERSION = 1;
    public static final int HEADER_LENGTH = 4096;
    public static final int RECORD_LENGTH = 128;
    public static final int MAX_NAME_BYTES = 64;

    public static final int MAGIC_OFFSET = 0;
    public static final int VERSION_OFFSET = 4;
    public static final int HEADER_LENGTH_OFFSET = 8;
    public static final int RECORD_LENGTH_OFFSET = 12;
    public static final int PID_OFFSET = 16;
    public static final int START_WALL_MS_OFFSET = 24;
    public static final int START_MONO_NS_OFFSET = 32;
    public static final int PROCESS_UUID_MSB_OFFSET = 40;
    public static final int PROCESS_UUID_LSB_OFFSET = 48;
    public static final int SECTION_COUNT_OFFSET = 56;
    public static final int NODE_ID_LENGTH_OFFSET = 60;
    public static final int NODE_ID_OFFSET = 64;
    public static final int CLUSTER_LENGTH_OFFSET = 128;
    public static final int CLUSTER_OFFSET = 132;
    public static final int SECTIONS_OFFSET = 256;
    public static final int SECTION_LENGTH = 64;
    public static final int SECTION_DATA_OFFSET = 0;
    public static final int SECTION_CAPACITY_OFFSET = 8;
    public static final int SECTION_POSITION_OFFSET = 16;

    /** Section of the membership threads (registrations, validity, fences, close). */
    public static final int MEMBERSHIP_SECTION = 0;
    /** Section of the agent thread (grants as a source, bytes accepted as a requester). */
    public static final int AGENT_SECTION = 1;
    public static final int SECTIONS = 2;
    /** Share of the records the membership section gets: one in this many (it writes a few a minute). */
    public static final int MEMBERSHIP_SHARE = 8;

    public static final int SEQUENCE_OFFSET = 0;
    public static final int TYPE_OFFSET = 8;
    public static final int INCARNATION_OFFSET = 12;
    public static final int MONO_NS_OFFSET = 16;
    public static final int WALL_MS_OFFSET = 24;
    public static final int EPOCH_OFFSET = 32;
    public static final int UUID_MSB_OFFSET = 40;
    public static final int UUID_LSB_OFFSET = 48;
    /** Offset of type-specific field {@code i} (0..8): {@code FIELDS_OFFSET + 8 * i}. */
    public static final int FIELDS_OFFSET = 56;
    public static final int FIELDS = 9;

    /**
     * A new incarnation registered. F0 lease id, F1 granted TTL (s), F2 validity deadline (monotonic ns),
     * F3 fence cause code that ended the previous incarnation (0 for the first).
     */
    public static final int REGISTERED = 1;
    /**
     * The local validity deadline was extended by an acknowledged keepalive. F0 the deadline (monotonic ns),
     * F1 when the acknowledged keepalive was sent (monotonic ns). Coalesced: not every extension is written, but every
     * deadline written is one the registration really had, never a later one.
     */
    public static final int VALIDITY = 2;
    /**
     * The incarnation was fenced (or the process fenced until restart). F0 cause code (FenceCause), F1 the validity
     * deadline at that moment (monotonic ns). Written after the fence latched: no grant is decided after it.
     */
    public static final int FENCED = 3;
    /**
     * Source side: an authorization granted. F0/F1 requester incarnation's runtime UUID, F2 requester session id,
     * F3 transfer session id, F4 this incarnation's validity deadline when the grant was decided (monotonic ns),
     * F5 keys granted, F6 bytes charged. The record's monotonic time is when the grant was decided.
     */
    public static final int GRANT = 4;
    /**
     * Requester side: the first block read under a granted session passed its checks and was accepted. F0/F1 source
     * incarnation's runtime UUID, F2 requester session id, F3 transfer session id, F4 that key's index in its fetch,
     * F5 its bytes.
     */
    public static final int FETCH_ACCEPTED = 5;
    /** The membership closed (graceful stop, lease revoked next): no grant is decided after it. F0 validity deadline. */
    public static final int CLOSING = 6;

    private AuthorityLogDescriptor()
    {
    }

    /**
     * Offset of a section's descriptor.
     *
     * @param section section index.
     * @return offset in the header.
     */
    public static int sectionOffset(final int section)
    {
        return SECTIONS_OFFSET + section * SECTION_LENGTH;
    }

    /**
     * @param type record type.
     * @return its name, as the readers print it.
     */
    public static String typeName(final int type)
    {
        return switch (type)
        {
            case REGISTERED -> "REGISTERED";
            case VALIDITY -> "VALIDITY";
            case FENCED -> "FENCED";
            case GRANT -> "GRANT";
            case FETCH_ACCEPTED -> "FETCH_ACCEPTED";
            case CLOSING -> "CLOSING";
            default -> "UNKNOWN(" + type + ")";
        };
    }
}
