package io.orbitkv.ffm.te;

import java.lang.foreign.Arena;
import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * {@code struct transfer_status} of the Transfer Engine C API, 16 bytes on LP64: what {@code getTransferStatus}
 * reports for one task. Named with a suffix so it does not read as OrbitKV's own transport status.
 */
public final class TransferStatusStruct
{
    private static final GroupLayout $LAYOUT = MemoryLayout.structLayout(
        ValueLayout.JAVA_INT.withName("status"),
        MemoryLayout.paddingLayout(4),
        ValueLayout.JAVA_LONG.withName("transferred_bytes")
    ).withName("transfer_status");

    public static final long STATUS$OFFSET = $LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("status"));
    public static final long TRANSFERRED_BYTES$OFFSET =
        $LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("transferred_bytes"));

    private TransferStatusStruct()
    {
    }

    /**
     * @return the layout of {@code struct transfer_status}.
     */
    public static GroupLayout layout()
    {
        return $LAYOUT;
    }

    /**
     * @return {@code sizeof(struct transfer_status)}.
     */
    public static long sizeof()
    {
        return $LAYOUT.byteSize();
    }

    /**
     * @param arena that owns the memory.
     * @return a zeroed struct allocated in the arena.
     */
    public static MemorySegment allocate(final Arena arena)
    {
        return arena.allocate($LAYOUT);
    }

    /**
     * @return offset of {@code status}, one of {@code TransferEngineC.STATUS_*}.
     */
    public static long status$offset()
    {
        return STATUS$OFFSET;
    }

    /**
     * @param struct a {@code struct transfer_status}.
     * @return the value of {@code status}.
     */
    public static int status(final MemorySegment struct)
    {
        return struct.get(ValueLayout.JAVA_INT, STATUS$OFFSET);
    }

    /**
     * @param struct a {@code struct transfer_status}.
     * @param value  to store in {@code status}.
     */
    public static void status(final MemorySegment struct, final int value)
    {
        struct.set(ValueLayout.JAVA_INT, STATUS$OFFSET, value);
    }

    /**
     * @return offset of {@code transferred_bytes}.
     */
    public static long transferred_bytes$offset()
    {
        return TRANSFERRED_BYTES$OFFSET;
    }

    /**
     * @param struct a {@code struct transfer_status}.
     * @return the value of {@code transferred_bytes}.
     */
    public static long transferred_bytes(final MemorySegment struct)
    {
        return struct.get(ValueLayout.JAVA_LONG, TRANSFERRED_BYTES$OFFSET);
    }

    /**
     * @param struct a {@code struct transfer_status}.
     * @param value  to store in {@code transferred_bytes}.
     */
    public static void transferred_bytes(final MemorySegment struct, final long value)
    {
        struct.set(ValueLayout.JAVA_LONG, TRANSFERRED_BYTES$OFFSET, value);
    }
}
