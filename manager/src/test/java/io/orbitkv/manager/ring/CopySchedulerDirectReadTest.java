package io.orbitkv.manager.ring;

import io.orbitkv.manager.Configuration;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Which SSD reads may land in an engine's data region directly: at the edges of
 * {@link Configuration#SSD_DIRECT_READ_ALIGNMENT}, for the destination address and for the block length.
 */
class CopySchedulerDirectReadTest
{
    private static final int ALIGN = Configuration.SSD_DIRECT_READ_ALIGNMENT;
    private static final long REGION = 0x7f00_0000_0000L;

    @Test
    void shouldReadDirectOnlyWhenAddressAndLengthAreBothMultiplesOfTheAlignment()
    {
        assertTrue(CopyScheduler.isDirectReadable(REGION, ALIGN));
        assertTrue(CopyScheduler.isDirectReadable(REGION + ALIGN, 2 << 20));
        assertFalse(CopyScheduler.isDirectReadable(REGION + ALIGN - 1, ALIGN), "address one below");
        assertFalse(CopyScheduler.isDirectReadable(REGION + ALIGN + 1, ALIGN), "address one above");
        assertFalse(CopyScheduler.isDirectReadable(REGION + ALIGN / 2, ALIGN), "address half way");
        assertFalse(CopyScheduler.isDirectReadable(REGION, ALIGN - 1), "length one below");
        assertFalse(CopyScheduler.isDirectReadable(REGION, ALIGN + 1), "length one above");
        assertFalse(CopyScheduler.isDirectReadable(REGION, (2 << 20) - 1), "a 2 MiB block one byte short");
    }
}
