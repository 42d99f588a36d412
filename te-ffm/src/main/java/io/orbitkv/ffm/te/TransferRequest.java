package io.orbitkv.ffm.te;

import java.lang.foreign.Arena;
import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * {@code struct transfer_request} of the Transfer Engine C API, 40 bytes on LP64: one read or write of a batch.
 * {@code target_offset} is the absolute virtual address in the target process, not an offset into a segment.
 * The four bytes after {@code target_id} are padding in older releases and {@code file_id} in releases with file
 * buffers; this binding always writes 0 there.
 */
public final class TransferRequest
{
    private static final GroupLayout $LAYOUT = MemoryLayout.structLayout(
        ValueLayout.JAVA_INT.withName("opcode"),
        MemoryLayout.paddingLayout(4),
        ValueLayout.ADDRESS.withName("source"),
        ValueLayout.JAVA_INT.withName("target_id"),
        ValueLayout.JAVA_INT.withName("file_id"),
        ValueLayout.JAVA_LONG.withName("target_offset"),
        ValueLayout.JAVA_LONG.withName("length")
    ).withName("transfer_request");

    public static final long OPCODE$OFFSET = offsetOf("opcode");
    public static final long SOURCE$OFFSET = offsetOf("source");
    public static final long TARGET_ID$OFFSET = offsetOf("target_id");
    public static final long FILE_ID$OFFSET = offsetOf("file_id");
    public static final long TARGET_OFFSET$OFFSET = offsetOf("target_offset");
    public static final long LENGTH$OFFSET = offsetOf("length");

    private TransferRequest()
    {
    }

    /**
     * @return the layout of {@code struct transfer_request}.
     */
    public static GroupLayout layout()
    {
        return $LAYOUT;
    }

    /**
     * @return {@code sizeof(struct transfer_request)}.
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
     * @param arena that owns the memory.
     * @param count of structs.
     * @return a zeroed array of structs allocated in the arena.
     */
    public static MemorySegment allocateArray(final Arena arena, final long count)
    {
        return arena.allocate($LAYOUT, count);
    }

    /**
     * @param array an array of {@code struct transfer_request}.
     * @param index of the element.
     * @return the element as a slice (allocates a segment: for set-up paths).
     */
    public static MemorySegment asSlice(final MemorySegment array, final long index)
    {
        return array.asSlice(index * $LAYOUT.byteSize(), $LAYOUT);
    }

    /**
     * @return offset of {@code opcode}, {@link TransferEngineC#OPCODE_READ} or {@link TransferEngineC#OPCODE_WRITE}.
     */
    public static long opcode$offset()
    {
        return OPCODE$OFFSET;
    }

    /**
     * @param struct a {@code struct transfer_request}.
     * @return the value of {@code opcode}.
     */
    public static int opcode(final MemorySegment struct)
    {
        return struct.get(ValueLayout.JAVA_INT, OPCODE$OFFSET);
    }

    /**
     * @param struct a {@code struct transfer_request}.
     * @param value  to store in {@code opcode}.
     */
    public static void opcode(final MemorySegment struct, final int value)
    {
        struct.set(ValueLayout.JAVA_INT, OPCODE$OFFSET, value);
    }

    /**
     * @return offset of {@code source}, the local buffer (registered memory of this engine).
     */
    public static long source$offset()
    {
        return SOURCE$OFFSET;
    }

    /**
     * @param struct a {@code struct transfer_request}.
     * @return the value of {@code source} as an address.
     */
    public static long source(final MemorySegment struct)
    {
        return struct.get(ValueLayout.JAVA_LONG, SOURCE$OFFSET);
    }

    /**
     * Stores a raw address, so that a hot path need not wrap it in a {@link MemorySegment}.
     *
     * @param struct  a {@code struct transfer_request}.
     * @param address to store in {@code source}.
     */
    public static void source(final MemorySegment struct, final long address)
    {
        struct.set(ValueLayout.JAVA_LONG, SOURCE$OFFSET, address);
    }

    /**
     * @return offset of {@code target_id}, a segment id from {@code openSegment}.
     */
    public static long target_id$offset()
    {
        return TARGET_ID$OFFSET;
    }

    /**
     * @param struct a {@code struct transfer_request}.
     * @return the value of {@code target_id}.
     */
    public static int target_id(final MemorySegment struct)
    {
        return struct.get(ValueLayout.JAVA_INT, TARGET_ID$OFFSET);
    }

    /**
     * @param struct a {@code struct transfer_request}.
     * @param value  to store in {@code target_id}.
     */
    public static void target_id(final MemorySegment struct, final int value)
    {
        struct.set(ValueLayout.JAVA_INT, TARGET_ID$OFFSET, value);
    }

    /**
     * @return offset of {@code file_id} (padding in releases without file buffers).
     */
    public static long file_id$offset()
    {
        return FILE_ID$OFFSET;
    }

    /**
     * @param struct a {@code struct transfer_request}.
     * @return the value of {@code file_id}.
     */
    public static int file_id(final MemorySegment struct)
    {
        return struct.get(ValueLayout.JAVA_INT, FILE_ID$OFFSET);
    }

    /**
     * @param struct a {@code struct transfer_request}.
     * @param value  to store in {@code file_id}.
     */
    public static void file_id(final MemorySegment struct, final int value)
    {
        struct.set(ValueLayout.JAVA_INT, FILE_ID$OFFSET, value);
    }

    /**
     * @return offset of {@code target_offset}, the absolute address in the target process.
     */
    public static long target_offset$offset()
    {
        return TARGET_OFFSET$OFFSET;
    }

    /**
     * @param struct a {@code struct transfer_request}.
     * @return the value of {@code target_offset}.
     */
    public static long target_offset(final MemorySegment struct)
    {
        return struct.get(ValueLayout.JAVA_LONG, TARGET_OFFSET$OFFSET);
    }

    /**
     * @param struct a {@code struct transfer_request}.
     * @param value  to store in {@code target_offset}.
     */
    public static void target_offset(final MemorySegment struct, final long value)
    {
        struct.set(ValueLayout.JAVA_LONG, TARGET_OFFSET$OFFSET, value);
    }

    /**
     * @return offset of {@code length}, bytes.
     */
    public static long length$offset()
    {
        return LENGTH$OFFSET;
    }

    /**
     * @param struct a {@code struct transfer_request}.
     * @return the value of {@code length}.
     */
    public static long length(final MemorySegment struct)
    {
        return struct.get(ValueLayout.JAVA_LONG, LENGTH$OFFSET);
    }

    /**
     * @param struct a {@code struct transfer_request}.
     * @param value  to store in {@code length}.
     */
    public static void length(final MemorySegment struct, final long value)
    {
        struct.set(ValueLayout.JAVA_LONG, LENGTH$OFFSET, value);
    }

    private static long offsetOf(final String field)
    {
        return $LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement(field));
    }
}
