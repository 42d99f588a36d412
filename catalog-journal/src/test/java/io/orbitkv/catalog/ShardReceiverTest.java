package io.orbitkv.catalog;

import io.orbitkv.index.CandidateSet;
import io.orbitkv.index.CatalogRecordTable;
import io.orbitkv.index.NamespaceTable;
import org.junit.jupiter.api.Test;

import static io.orbitkv.catalog.JournalRecord.OP_ADD;
import static io.orbitkv.catalog.JournalRecord.OP_REMOVE;
import static io.orbitkv.catalog.JournalRecord.TIER_DRAM;
import static io.orbitkv.catalog.JournalRecord.TIER_SSD;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ShardReceiverTest
{
    private static final long MSB = 0x1111L;
    private static final long LSB = 0x2222L;
    private static final long NEW_MSB = 0x3333L;
    private static final long NEW_LSB = 0x4444L;
    private static final int OWNER_NODE = 7;

    private final HostBudget budget = new HostBudget(8L * 1024 * 1024);
    private final ShardReceiver receiver = new ShardReceiver(0, OWNER_NODE, budget, new NamespaceTable(), 16, 64, 1000);
    private final CandidateSet row = new CandidateSet();

    private int lookup(final int key)
    {
        row.clear();
        return receiver.lookup(Keys.NAMESPACE, 0, Keys.NAMESPACE_BYTES.length, Keys.hash(key), 0, Keys.HASH_LENGTH, row);
    }

    @Test
    void shouldAccountAgainstTheDesignHostBudgetByDefault()
    {
        assertEquals(256L * 1024 * 1024, new HostBudget().budgetBytes());
        final HostBudget exact = new HostBudget(100);
        assertTrue(exact.tryReserve(100));
        assertFalse(exact.tryReserve(1));
        assertEquals(1, exact.refusals());
        exact.release(100);
        assertEquals(0, exact.reservedBytes());
    }

    @Test
    void shouldDedupeBySequenceAndAckContiguousProgress()
    {
        receiver.admitIncarnation(MSB, LSB);
        assertEquals(ShardReceiver.APPLIED, receiver.onDelta(MSB, LSB, Keys.record(1, 1, TIER_DRAM, OP_ADD, 1)));
        assertEquals(ShardReceiver.APPLIED, receiver.onDelta(MSB, LSB, Keys.record(2, 2, TIER_DRAM, OP_ADD, 2)));
        assertEquals(ShardReceiver.DUPLICATE, receiver.onDelta(MSB, LSB, Keys.record(1, 1, TIER_DRAM, OP_ADD, 1)));
        assertEquals(2, receiver.contiguousSequence());
        assertEquals(1, receiver.duplicates());
        assertTrue(receiver.coverageComplete());
        assertEquals(1, lookup(1));
        assertEquals(OWNER_NODE, row.ownerNode(0));
        assertEquals(MSB, row.incarnationMsb(0));
        assertEquals(1001, row.insertionSequence(0));
    }

    @Test
    void shouldRequestRateLimitedRepairOnAGapAndCloseItWhenFilled()
    {
        receiver.admitIncarnation(MSB, LSB);
        receiver.onDelta(MSB, LSB, Keys.record(1, 1, TIER_DRAM, OP_ADD, 1));
        assertEquals(ShardReceiver.GAP, receiver.onDelta(MSB, LSB, Keys.record(4, 4, TIER_DRAM, OP_ADD, 4)));
        assertEquals(ShardReceiver.GAP, receiver.onDelta(MSB, LSB, Keys.record(5, 5, TIER_DRAM, OP_ADD, 5)));
        assertFalse(receiver.coverageComplete());
        assertEquals(2, receiver.gapFrom());
        assertEquals(4, receiver.gapTo());
        assertTrue(receiver.pollRepair(0));
        assertFalse(receiver.pollRepair(999));
        assertTrue(receiver.pollRepair(1000));
        assertEquals(1, receiver.gapsDetected());
        for (int s = 2; s <= 5; s++)
        {
            assertEquals(ShardReceiver.APPLIED, receiver.onDelta(MSB, LSB, Keys.record(s, s, TIER_DRAM, OP_ADD, s)));
        }
        assertTrue(receiver.coverageComplete());
        assertFalse(receiver.pollRepair(5000));
    }

    @Test
    void shouldTreatAFirstSequenceAfterOneAsAGapFromOneSoARestartedHostNeedsABaseline()
    {
        receiver.admitIncarnation(MSB, LSB);
        assertEquals(ShardReceiver.GAP, receiver.onDelta(MSB, LSB, Keys.record(9, 9, TIER_DRAM, OP_ADD, 9)));
        assertEquals(1, receiver.gapFrom());
        assertFalse(receiver.coverageComplete());
        receiver.onResyncRequired();
        assertEquals(ShardReceiver.RESYNC_REQUIRED, receiver.onDelta(MSB, LSB, Keys.record(10, 10, TIER_DRAM, OP_ADD, 10)));
        assertEquals(1, receiver.resyncs());
        assertFalse(receiver.coverageComplete());
    }

    @Test
    void shouldHonourRemovalsAndKeepDramAndSsdResidencesIndependent()
    {
        receiver.admitIncarnation(MSB, LSB);
        receiver.onDelta(MSB, LSB, Keys.record(1, 1, TIER_DRAM, OP_ADD, 1));
        receiver.onDelta(MSB, LSB, Keys.record(1, 2, TIER_SSD, OP_ADD, 2));
        assertEquals(2, lookup(1));
        receiver.onDelta(MSB, LSB, Keys.record(1, 3, TIER_DRAM, OP_REMOVE, 1));
        assertEquals(1, lookup(1));
        assertEquals(TIER_SSD, row.tier(0));
    }

    @Test
    void shouldRejectARetiredIncarnationsLateEvidenceAndAnUnregisteredPublisher()
    {
        receiver.admitIncarnation(MSB, LSB);
        receiver.onDelta(MSB, LSB, Keys.record(1, 1, TIER_DRAM, OP_ADD, 1));
        receiver.admitIncarnation(NEW_MSB, NEW_LSB);
        assertEquals(0, lookup(1));
        assertEquals(ShardReceiver.STALE_INCARNATION, receiver.onDelta(MSB, LSB, Keys.record(2, 2, TIER_DRAM, OP_ADD, 2)));
        assertFalse(receiver.admitIncarnation(MSB, LSB));
        assertEquals(ShardReceiver.UNREGISTERED_PUBLISHER, receiver.onDelta(5, 6, Keys.record(2, 1, TIER_DRAM, OP_ADD, 2)));
        assertEquals(ShardReceiver.APPLIED, receiver.onDelta(NEW_MSB, NEW_LSB, Keys.record(3, 1, TIER_DRAM, OP_ADD, 1)));
        assertEquals(2, receiver.staleIncarnationRejections());
        assertEquals(1, receiver.unregisteredPublisherRejections());
        assertEquals(1, lookup(3));
        assertEquals(NEW_MSB, row.incarnationMsb(0));
    }

    @Test
    void shouldDropTheViewWhenTheMemberLeaves()
    {
        receiver.admitIncarnation(MSB, LSB);
        receiver.onDelta(MSB, LSB, Keys.record(1, 1, TIER_DRAM, OP_ADD, 1));
        receiver.dropMember();
        assertEquals(0, lookup(1));
        assertEquals(0, budget.reservedBytes());
        assertEquals(ShardReceiver.STALE_INCARNATION, receiver.onDelta(MSB, LSB, Keys.record(2, 2, TIER_DRAM, OP_ADD, 2)));
    }

    @Test
    void shouldNotResurrectAnEvictedResidencyFromADelayedSnapshotPageRecord()
    {
        receiver.admitIncarnation(MSB, LSB);
        assertEquals(ShardReceiver.APPLIED, receiver.onSnapshotBegin(MSB, LSB, 1, 10, 4));
        // The interval removal (sequence 11) is applied before the page that still shows the addition (version 8).
        assertEquals(ShardReceiver.APPLIED, receiver.onSnapshotIntervalRecord(1, Keys.record(1, 11, TIER_DRAM, OP_REMOVE, 3)));
        assertEquals(ShardReceiver.REJECTED_OLDER, receiver.onSnapshotRecord(1, Keys.record(1, 8, TIER_DRAM, OP_ADD, 3)));
        assertEquals(ShardReceiver.APPLIED, receiver.onSnapshotRecord(1, Keys.record(2, 9, TIER_DRAM, OP_ADD, 4)));
        assertEquals(ShardReceiver.APPLIED, receiver.onSnapshotPageEnd(1, 0));
        assertEquals(ShardReceiver.APPLIED, receiver.onSnapshotEnd(1, 10, 11, 1));
        assertEquals(1, receiver.resurrectionsPrevented());
        assertEquals(0, lookup(1));
        assertEquals(1, lookup(2));
        assertEquals(11, receiver.contiguousSequence());
        assertEquals(ShardReceiver.DUPLICATE, receiver.onDelta(MSB, LSB, Keys.record(1, 8, TIER_DRAM, OP_ADD, 3)));
        assertEquals(0, lookup(1));
    }

    @Test
    void shouldCountEqualVersionConflictingRecordsAsErrors()
    {
        receiver.admitIncarnation(MSB, LSB);
        receiver.onSnapshotBegin(MSB, LSB, 1, 5, 2);
        receiver.onSnapshotRecord(1, Keys.record(1, 4, TIER_DRAM, OP_ADD, 2));
        assertEquals(ShardReceiver.DUPLICATE, receiver.onSnapshotRecord(1, Keys.record(1, 4, TIER_DRAM, OP_ADD, 2)));
        assertEquals(ShardReceiver.CONFLICT, receiver.onSnapshotRecord(1, Keys.record(1, 4, TIER_DRAM, OP_ADD, 99)));
        assertEquals(1, receiver.conflicts());

        receiver.onSnapshotPageEnd(1, 0);
        receiver.onSnapshotEnd(1, 5, 5, 1);
        receiver.onDelta(MSB, LSB, Keys.record(3, 6, TIER_DRAM, OP_ADD, 6));
        assertEquals(ShardReceiver.CONFLICT, receiver.onDelta(MSB, LSB, Keys.record(3, 6, TIER_DRAM, OP_ADD, 77)));
        assertEquals(2, receiver.conflicts());
    }

    @Test
    void shouldNotInstallASnapshotWithAMissingPageOrIntervalRecord()
    {
        receiver.admitIncarnation(MSB, LSB);
        receiver.onDelta(MSB, LSB, Keys.record(1, 1, TIER_DRAM, OP_ADD, 1));
        receiver.onSnapshotBegin(MSB, LSB, 1, 5, 2);
        receiver.onSnapshotRecord(1, Keys.record(2, 3, TIER_DRAM, OP_ADD, 2));
        receiver.onSnapshotPageEnd(1, 0);
        receiver.onSnapshotIntervalRecord(1, Keys.record(3, 6, TIER_DRAM, OP_ADD, 3));
        assertEquals(ShardReceiver.INCOMPLETE_SNAPSHOT, receiver.onSnapshotEnd(1, 5, 7, 1));
        assertEquals(1, receiver.snapshotsAbandoned());
        assertEquals(0, receiver.snapshotsInstalled());
        assertEquals(ShardReceiver.RESYNC, receiver.mode());
        assertEquals(1, lookup(1));
        assertEquals(0, lookup(2));
        assertFalse(receiver.coverageComplete());
    }

    @Test
    void shouldDropDerivedHintsWhenTheBudgetCannotHoldBothViews()
    {
        final long oneView = CatalogRecordTable.budgetFor(16);
        final long snapshotView = CatalogRecordTable.budgetFor(10 + 64);
        final HostBudget tight = new HostBudget(Math.max(oneView, snapshotView) + 1);
        final ShardReceiver small = new ShardReceiver(0, OWNER_NODE, tight, new NamespaceTable(), 16, 64, 1000);
        small.admitIncarnation(MSB, LSB);
        small.onDelta(MSB, LSB, Keys.record(1, 1, TIER_DRAM, OP_ADD, 1));
        assertEquals(oneView, tight.reservedBytes());

        assertEquals(ShardReceiver.APPLIED, small.onSnapshotBegin(MSB, LSB, 1, 1, 10));
        assertEquals(1, small.hintsDropped());
        assertFalse(small.coverageComplete());
        assertTrue(tight.reservedBytes() <= tight.budgetBytes());
        small.onSnapshotRecord(1, Keys.record(1, 1, TIER_DRAM, OP_ADD, 1));
        small.onSnapshotPageEnd(1, 0);
        assertEquals(ShardReceiver.APPLIED, small.onSnapshotEnd(1, 1, 1, 1));
        assertTrue(small.coverageComplete());
    }

    @Test
    void shouldRefuseASnapshotLargerThanTheBudgetWithoutExceedingIt()
    {
        final HostBudget tight = new HostBudget(CatalogRecordTable.budgetFor(100 + 64));
        final ShardReceiver small = new ShardReceiver(0, OWNER_NODE, tight, new NamespaceTable(), 16, 64, 1000);
        small.admitIncarnation(MSB, LSB);
        assertEquals(ShardReceiver.APPLIED, small.onSnapshotBegin(MSB, LSB, 1, 0, 100));
        small.onSnapshotPageEnd(1, 0);
        small.onSnapshotEnd(1, 0, 0, 1);
        assertEquals(ShardReceiver.BUDGET_EXCEEDED, small.onSnapshotBegin(MSB, LSB, 2, 0, 101));
        assertEquals(1, small.budgetRejections());
        assertEquals(0, tight.reservedBytes());
        assertFalse(small.coverageComplete());
    }

    @Test
    void shouldGrowTheLiveViewWithinTheBudgetAndResyncWhenItCannot()
    {
        final HostBudget tight = new HostBudget(CatalogRecordTable.budgetFor(16) + CatalogRecordTable.budgetFor(32));
        final ShardReceiver small = new ShardReceiver(0, OWNER_NODE, tight, new NamespaceTable(), 16, 64, 1000);
        small.admitIncarnation(MSB, LSB);
        int outcome = ShardReceiver.APPLIED;
        long sequence = 0;
        while (ShardReceiver.APPLIED == outcome)
        {
            sequence++;
            outcome = small.onDelta(MSB, LSB, Keys.record((int)sequence, sequence, TIER_DRAM, OP_ADD, sequence));
        }
        assertTrue(sequence > 16);
        assertEquals(ShardReceiver.VIEW_FULL, outcome);
        assertEquals(ShardReceiver.RESYNC, small.mode());
        assertTrue(tight.reservedBytes() <= tight.budgetBytes());
    }
}
