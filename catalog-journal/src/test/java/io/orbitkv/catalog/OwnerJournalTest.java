package io.orbitkv.catalog;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class OwnerJournalTest
{
    private static final int SEGMENT_BYTES = 1024;
    private static final int SEGMENTS = 4;

    private final OwnerJournal journal = new OwnerJournal(16, SEGMENTS * SEGMENT_BYTES, SEGMENT_BYTES, 2);
    private final List<Long> read = new ArrayList<>();
    private final JournalReader collector = (r) -> read.add(r.sequence());

    @Test
    void shouldUseTheDesignBudgetByDefault()
    {
        final OwnerJournal defaults = new OwnerJournal();
        assertEquals(16L * 1024 * 1024, defaults.capacityBytes());
        assertEquals(16, defaults.shardCount());
    }

    @Test
    void shouldAssignContiguousSequencesPerShardStartingAtOne()
    {
        assertEquals(1, journal.append(3, Keys.record(1, 0, 0, 0, 1)));
        assertEquals(2, journal.append(3, Keys.record(2, 0, 0, 0, 2)));
        assertEquals(1, journal.append(4, Keys.record(3, 0, 0, 0, 3)));
        assertEquals(2, journal.lastSequence(3));
        assertEquals(1, journal.lastSequence(4));
    }

    @Test
    void shouldReadBackFromASequenceForGapRepair()
    {
        for (int i = 0; i < 20; i++)
        {
            journal.append(0, Keys.record(i, 0, 0, 0, i));
        }
        assertEquals(5, journal.read(0, 7, 5, collector));
        assertEquals(List.of(7L, 8L, 9L, 10L, 11L), read);
        read.clear();
        final JournalRecord[] last = new JournalRecord[1];
        journal.read(0, 20, 10, (r) -> last[0] = new JournalRecord().key(r.namespace(), 0, r.namespaceLength(),
            r.hash(), 0, r.hashLength()).set(r.sequence(), r.tier(), r.op(), r.generation(), r.insertionSequence(),
            r.byteSize()));
        assertEquals(19, last[0].generation());
        assertEquals(1019, last[0].insertionSequence());
    }

    @Test
    void shouldFlagResyncForALaggingReceiverWhenTheBudgetOverflowsWithoutBlockingTheAppender()
    {
        final int receiver = journal.addReceiver(0);
        final int perSegment = SEGMENT_BYTES / OwnerJournal.recordBytes(Keys.NAMESPACE_BYTES.length, Keys.HASH_LENGTH);
        final int total = perSegment * SEGMENTS * 3;
        for (int i = 0; i < total; i++)
        {
            journal.append(0, Keys.record(i, 0, 0, 0, i));
        }
        assertEquals(total, journal.lastSequence(0));
        assertTrue(journal.resyncRequired(0, receiver));
        assertEquals(1, journal.overflowResyncs());
        assertTrue(journal.droppedSegments() > 0);
        assertTrue(journal.usedBytes() <= journal.capacityBytes());
        assertEquals(OwnerJournal.READ_RESYNC_REQUIRED, journal.read(0, 1, 10, collector));
    }

    @Test
    void shouldFlagOnlyTheCopyThatFellBehindAndKeepServingTheCopiesThatAck()
    {
        // Three copies of shard 0: two ack everything, one never does. Past the budget only the slow one resyncs,
        // the others are never asked to, and the appender never waits.
        final OwnerJournal journal = new OwnerJournal(16, SEGMENTS * SEGMENT_BYTES, SEGMENT_BYTES, 4);
        final int fast1 = journal.addReceiver(0);
        final int fast2 = journal.addReceiver(0);
        final int slow = journal.addReceiver(0);
        final int perSegment = SEGMENT_BYTES / OwnerJournal.recordBytes(Keys.NAMESPACE_BYTES.length, Keys.HASH_LENGTH);
        final int total = perSegment * SEGMENTS * 3;
        for (int i = 0; i < total; i++)
        {
            final long sequence = journal.append(0, Keys.record(i, 0, 0, 0, i));
            journal.onAck(0, fast1, sequence);
            journal.onAck(0, fast2, sequence);
        }
        assertEquals(total, journal.lastSequence(0));
        assertTrue(journal.resyncRequired(0, slow));
        assertFalse(journal.resyncRequired(0, fast1));
        assertFalse(journal.resyncRequired(0, fast2));
        assertEquals(total, journal.ackedSequence(0, fast1));
        assertTrue(journal.usedBytes() <= journal.capacityBytes());

        // The slow copy, rebased by its snapshot, holds history again from there; the fast ones stay where they are.
        journal.rebaseReceiver(0, slow, journal.lastSequence(0));
        assertFalse(journal.resyncRequired(0, slow));
        final long next = journal.append(0, Keys.record(total, 0, 0, 0, total));
        assertEquals(1, journal.read(0, next, 10, collector));
    }

    @Test
    void shouldReclaimSegmentsEveryReceiverAckedWithoutRaisingResync()
    {
        final int receiver = journal.addReceiver(1);
        final int perSegment = SEGMENT_BYTES / OwnerJournal.recordBytes(Keys.NAMESPACE_BYTES.length, Keys.HASH_LENGTH);
        for (int i = 0; i < perSegment * SEGMENTS * 3; i++)
        {
            final long sequence = journal.append(1, Keys.record(i, 0, 0, 0, i));
            journal.onAck(1, receiver, sequence);
        }
        assertFalse(journal.resyncRequired(1, receiver));
        assertEquals(0, journal.overflowResyncs());
        assertTrue(journal.reclaimedSegments() > 0);
        assertEquals(SEGMENT_BYTES, journal.usedBytes());
    }

    @Test
    void shouldTakeSpaceFromTheShardHoldingTheMostSegments()
    {
        final int slow = journal.addReceiver(2);
        final int perSegment = SEGMENT_BYTES / OwnerJournal.recordBytes(Keys.NAMESPACE_BYTES.length, Keys.HASH_LENGTH);
        for (int i = 0; i < perSegment * 3; i++)
        {
            journal.append(2, Keys.record(i, 0, 0, 0, i));
        }
        final int other = journal.addReceiver(5);
        for (int i = 0; i < perSegment * 2; i++)
        {
            journal.append(5, Keys.record(i, 0, 0, 0, i));
        }
        assertTrue(journal.resyncRequired(2, slow));
        assertFalse(journal.resyncRequired(5, other));
        assertEquals(1, journal.oldestRetainedSequence(5));
    }

    @Test
    void shouldRetainTheIntervalAfterARebase()
    {
        final int receiver = journal.addReceiver(0);
        for (int i = 0; i < 10; i++)
        {
            journal.append(0, Keys.record(i, 0, 0, 0, i));
        }
        journal.rebaseReceiver(0, receiver, 10);
        journal.append(0, Keys.record(99, 0, 0, 0, 99));
        assertEquals(1, journal.read(0, 11, 100, collector));
        assertEquals(List.of(11L), read);
    }
}
