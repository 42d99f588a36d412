package io.orbitkv.codecs;

import io.orbitkv.codecs.cnc.ClientSlot;
import io.orbitkv.codecs.cnc.CncFileDescriptor;
import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The slot protocol through the flyweight both sides use, against the byte layout CncFileDescriptor documents.
 */
class ClientSlotTest
{
    private final UnsafeBuffer table =
        new UnsafeBuffer(BufferUtil.allocateDirectAligned(4 * CncFileDescriptor.SLOT_LENGTH, 64));
    private final ClientSlot engine = new ClientSlot().wrap(table, 2);
    private final ClientSlot manager = new ClientSlot().wrap(table, 2);
    private final int offset = CncFileDescriptor.Sections.slotOffset(2);

    @Test
    void shouldClaimOnceAndRecordTheClaimInTheDocumentedLayout()
    {
        assertTrue(engine.tryClaim(100L, 5_000L));
        assertFalse(new ClientSlot().wrap(table, 2).tryClaim(200L, 5_001L), "a claimed slot is not claimed twice");

        assertEquals(100L, table.getLong(offset + CncFileDescriptor.SLOT_CLAIM_PID_OFFSET));
        assertEquals(5_000L, table.getLong(offset + CncFileDescriptor.SLOT_CLAIM_TIME_MS_OFFSET));
        assertEquals(CncFileDescriptor.SLOT_CLAIMED, table.getInt(offset + CncFileDescriptor.SLOT_STATE_OFFSET));
        assertEquals(100L, manager.claimPidVolatile());
        assertEquals(5_000L, manager.claimTimeMsVolatile());
        assertEquals(0L, new ClientSlot().wrap(table, 1).claimPidVolatile(), "neighbouring slots untouched");
    }

    @Test
    void shouldAttachAndLetOnlyAnUnattachedClaimBeFreedByItsEngine()
    {
        assertTrue(engine.tryClaim(100L, 1L));
        engine.freeClaim(999L);
        assertEquals(100L, manager.claimPidVolatile(), "another pid cannot free the claim");

        final long clientId = (7L << 32) | 2;
        manager.attach(7, clientId);
        assertEquals(7, manager.generation());
        assertTrue(engine.isAttachedAs(clientId));
        assertFalse(engine.isAttachedAs(clientId + (1L << 32)));
        engine.freeClaim(100L);
        assertEquals(100L, manager.claimPidVolatile(), "an attached slot belongs to the Manager");

        manager.reset();
        assertFalse(engine.isAttachedAs(clientId));
        assertEquals(0L, manager.claimPidVolatile());
        assertEquals(CncFileDescriptor.SLOT_FREE, manager.stateVolatile());
        assertEquals(7, manager.generation(), "the generation survives a reset, so the next client id differs");
        assertTrue(engine.tryClaim(300L, 2L));
    }

    @Test
    void shouldFreeAnUnattachedClaimAndFenceAStaleOne()
    {
        assertTrue(engine.tryClaim(100L, 1L));
        engine.freeClaim(100L);
        assertEquals(0L, manager.claimPidVolatile());
        assertEquals(CncFileDescriptor.SLOT_FREE, manager.stateVolatile());

        assertTrue(engine.tryClaim(101L, 2L));
        assertFalse(manager.fenceClaim(100L, -1L), "only the claimant seen is fenced");
        assertTrue(manager.fenceClaim(101L, -1L));
        assertFalse(new ClientSlot().wrap(table, 2).tryClaim(102L, 3L), "a fenced slot cannot be claimed");
        manager.reset();
        assertTrue(engine.tryClaim(102L, 4L));
    }
}
