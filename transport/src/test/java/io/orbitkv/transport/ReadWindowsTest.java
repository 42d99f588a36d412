package io.orbitkv.transport;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;
import java.util.zip.CRC32C;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

class ReadWindowsTest
{
    @Test
    void shouldSumRangesWithinAndAcrossViewsAsOneRange()
    {
        try (Arena arena = Arena.ofConfined())
        {
            // 4 KiB views over 37 KiB and a bit: ranges start and end anywhere, many cross one or more views.
            final int bytes = 37 * 1024 + 123;
            final MemorySegment range = arena.allocate(bytes, 4096);
            final SplittableRandom random = new SplittableRandom(11);
            for (int i = 0; i < bytes; i++)
            {
                range.set(ValueLayout.JAVA_BYTE, i, (byte)random.nextInt());
            }
            final RegisteredMemory.ReadWindows windows = new RegisteredMemory.ReadWindows(range.address(), bytes, 12);

            for (int trial = 0; trial < 500; trial++)
            {
                final int offset = random.nextInt(bytes);
                final int length = random.nextInt(bytes - offset + 1);
                final CRC32C summed = new CRC32C();
                // In two pieces, as two recv calls would land them.
                final int first = random.nextInt(length + 1);
                windows.update(summed, range.address() + offset, first);
                windows.update(summed, range.address() + offset + first, length - first);

                final CRC32C expected = new CRC32C();
                expected.update(range.asSlice(offset, length).asByteBuffer());
                assertEquals(expected.getValue(), summed.getValue(), "offset " + offset + " length " + length);
            }
        }
    }
}
