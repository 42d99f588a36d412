package io.orbitkv.codecs;

import io.orbitkv.codecs.cnc.CncFileDescriptor;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CncFileDescriptorTest
{
    @Test
    void shouldLaySectionsOutWithoutOverlapOnPageBoundaries()
    {
        final CncFileDescriptor.Lengths lengths = new CncFileDescriptor.Lengths(1 << 20, 8, 1 << 16, 128 * 64, 1 << 16);
        final int req = lengths.requestRingLength();
        final int resp = lengths.responseRingLength();
        final long slots = CncFileDescriptor.slotTableOffset(req);
        final long rings = CncFileDescriptor.responseRingsOffset(req, 8);
        final long meta = CncFileDescriptor.countersMetadataOffset(req, 8, resp);
        final long values = CncFileDescriptor.countersValuesOffset(req, 8, resp, lengths.countersMetadataLength());
        final long errors = CncFileDescriptor.errorLogOffset(req, 8, resp, lengths.countersMetadataLength(), 128 * 64);

        assertTrue(CncFileDescriptor.requestRingOffset() + req <= slots);
        assertTrue(slots + 8 * CncFileDescriptor.SLOT_LENGTH <= rings);
        assertTrue(CncFileDescriptor.responseRingOffset(req, 8, resp, 7) + resp <= meta);
        assertTrue(meta + lengths.countersMetadataLength() <= values);
        assertTrue(values + 128 * 64 <= errors);
        assertEquals(errors + (1 << 16), CncFileDescriptor.fileLength(lengths));
        for (final long offset : new long[]{slots, rings, meta, values, errors})
        {
            assertEquals(0, offset % CncFileDescriptor.SECTION_ALIGNMENT);
        }
        assertEquals(4 * 128 * 64, lengths.countersMetadataLength());
        assertEquals((1 << 20) + RingBufferDescriptor.TRAILER_LENGTH, req);
    }

    @Test
    void shouldRecoverSectionsFromHeaderAlone()
    {
        final CncFileDescriptor.Lengths lengths = new CncFileDescriptor.Lengths(1 << 16, 4, 1 << 12, 128 * 16, 1 << 14);
        final long length = CncFileDescriptor.fileLength(lengths);
        final UnsafeBuffer file = new UnsafeBuffer(java.nio.ByteBuffer.allocateDirect((int)length));
        final UnsafeBuffer header = new UnsafeBuffer(file, 0, CncFileDescriptor.HEADER_LENGTH);
        CncFileDescriptor.fillHeader(header, lengths, 42, 1000, 1, 2, 5_000_000_000L, 512, 65536, 1L << 30, 1L << 30);
        assertEquals(0, CncFileDescriptor.layoutVersion(header));
        CncFileDescriptor.signalReady(header);
        assertEquals(CncFileDescriptor.LAYOUT_VERSION, CncFileDescriptor.layoutVersion(header));

        final CncFileDescriptor.Sections sections = new CncFileDescriptor.Sections(file.addressOffset(), length);
        assertEquals(4, sections.maxClients());
        assertEquals(lengths.responseRingLength(), sections.responseRing(3).capacity());
        assertEquals(file.addressOffset() + CncFileDescriptor.responseRingOffset(
            lengths.requestRingLength(), 4, lengths.responseRingLength(), 3), sections.responseRing(3).addressOffset());
        assertEquals(1 << 14, sections.errorLog().capacity());
        assertThrows(IllegalStateException.class, () -> new CncFileDescriptor.Sections(file.addressOffset(), length - 1));
    }

    @Test
    void shouldRejectRingCapacitiesThatAreNotPowersOfTwo()
    {
        assertThrows(IllegalArgumentException.class, () -> new CncFileDescriptor.Lengths(1000, 4, 1 << 12, 128, 4096));
        assertThrows(IllegalArgumentException.class, () -> new CncFileDescriptor.Lengths(1 << 16, 0, 1 << 12, 128, 4096));
    }
}
