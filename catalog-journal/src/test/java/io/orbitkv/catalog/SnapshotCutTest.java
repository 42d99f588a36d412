package io.orbitkv.catalog;

import io.orbitkv.index.CandidateSet;
import io.orbitkv.index.NamespaceTable;
import org.junit.jupiter.api.Test;

import static io.orbitkv.catalog.JournalRecord.TIER_DRAM;
import static io.orbitkv.catalog.JournalRecord.TIER_SSD;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SnapshotCutTest
{
    private static final long MSB = 0xAAL;
    private static final long LSB = 0xBBL;
    private static final int SHARD = 5;

    private final OwnerJournal journal = new OwnerJournal(16, 64 * 1024, 4096, 2);
    private final ShardInventory inventory = new ShardInventory(journal, new NamespaceTable(), 256 * 1024);
    private final ShardReceiver receiver = new ShardReceiver(
        SHARD, 1, new HostBudget(), new NamespaceTable(), 16, SnapshotCut.DEFAULT_MAX_INTERVAL_RECORDS, 0);
    private final int[] keys = Keys.keysOfShard(SHARD, 200);
    private final ForwardingSink sink = new ForwardingSink();
    private final CandidateSet row = new CandidateSet();

    private long add(final int key, final int tier)
    {
        return inventory.add(tier, Keys.NAMESPACE, 0, Keys.NAMESPACE_BYTES.length, Keys.hash(key), 0, Keys.HASH_LENGTH,
            key, 4096);
    }

    private long remove(final int key, final int tier)
    {
        return inventory.remove(tier, Keys.NAMESPACE, 0, Keys.NAMESPACE_BYTES.length, Keys.hash(key), 0, Keys.HASH_LENGTH);
    }

    private int lookup(final int key)
    {
        row.clear();
        return receiver.lookup(Keys.NAMESPACE, 0, Keys.NAMESPACE_BYTES.length, Keys.hash(key), 0, Keys.HASH_LENGTH, row);
    }

    @Test
    void shouldJournalEveryInventoryTransitionWithANewGenerationPerEpisode()
    {
        assertEquals(1, add(keys[0], TIER_DRAM));
        assertEquals(2, add(keys[0], TIER_SSD));
        assertEquals(3, remove(keys[0], TIER_DRAM));
        assertEquals(ShardInventory.NOT_PRESENT, remove(keys[0], TIER_DRAM));
        assertEquals(4, add(keys[0], TIER_DRAM));
        assertEquals(4, journal.lastSequence(SHARD));
        assertEquals(2, inventory.size(SHARD));
        final long[] generations = new long[5];
        journal.read(SHARD, 1, 10, (r) -> generations[(int)r.sequence()] = r.generation());
        assertEquals(1, generations[1]);
        assertEquals(1, generations[3]);
        assertEquals(3, generations[4]);
    }

    @Test
    void shouldPageTheInventoryInBoundedPagesVisitingEveryStableRecordOnce()
    {
        for (int i = 0; i < 50; i++)
        {
            add(keys[i], TIER_DRAM);
        }
        final int[] seen = new int[1];
        int cursor = 0;
        int pages = 0;
        while (cursor != ShardInventory.END)
        {
            final int before = seen[0];
            cursor = inventory.readPage(SHARD, cursor, 8, 1000, (r) -> seen[0]++);
            assertTrue(seen[0] - before <= 8);
            pages++;
        }
        assertEquals(50, seen[0]);
        assertEquals(7, pages);
    }

    @Test
    void shouldInstallASnapshotWhoseConcurrentChangesAreCarriedByTheInterval()
    {
        for (int i = 0; i < 40; i++)
        {
            add(keys[i], TIER_DRAM);
        }
        receiver.admitIncarnation(MSB, LSB);
        final int journalReceiver = journal.addReceiver(SHARD);
        final SnapshotCut cut = new SnapshotCut(SHARD, journalReceiver, inventory, sink, 8, 1000, 100, 2, 0);
        cut.start();
        cut.doWork(0);
        cut.doWork(0);
        // Changes while paging: an eviction of a paged key, a new key, a replacement.
        remove(keys[0], TIER_DRAM);
        add(keys[100], TIER_DRAM);
        add(keys[39], TIER_DRAM);
        while (SnapshotCut.COMPLETE != cut.state())
        {
            cut.doWork(0);
        }
        assertEquals(1, receiver.snapshotsInstalled());
        assertEquals(0, lookup(keys[0]));
        assertEquals(1, lookup(keys[100]));
        assertEquals(40, receiver.viewSize());
        assertEquals(journal.lastSequence(SHARD), receiver.contiguousSequence());
        assertTrue(receiver.coverageComplete());
        assertEquals(0, receiver.conflicts());
    }

    @Test
    void shouldAbortAndRestartWhenTheIntervalOverflowsThenFailAfterTheRetryBudget()
    {
        for (int i = 0; i < 20; i++)
        {
            add(keys[i], TIER_DRAM);
        }
        receiver.admitIncarnation(MSB, LSB);
        final int journalReceiver = journal.addReceiver(SHARD);
        final SnapshotCut cut = new SnapshotCut(SHARD, journalReceiver, inventory, sink, 4, 1000, 3, 1, 10);
        cut.start();
        cut.doWork(0);
        for (int i = 0; i < 4; i++)
        {
            add(keys[50 + i], TIER_SSD);
        }
        cut.doWork(0);
        assertEquals(SnapshotCut.BACKOFF, cut.state());
        assertEquals(1, cut.aborts());
        assertEquals(0, cut.doWork(5));
        cut.doWork(10);
        assertEquals(SnapshotCut.BEGIN, cut.state());
        cut.doWork(10);
        for (int i = 0; i < 4; i++)
        {
            add(keys[60 + i], TIER_SSD);
        }
        cut.doWork(10);
        assertEquals(SnapshotCut.FAILED, cut.state());
        assertEquals(1, cut.failures());
        assertEquals(0, receiver.snapshotsInstalled());

        cut.start();
        while (SnapshotCut.COMPLETE != cut.state())
        {
            cut.doWork(20);
        }
        assertEquals(1, receiver.snapshotsInstalled());
        assertEquals(28, receiver.viewSize());
    }

    @Test
    void shouldAbortWhenTheJournalDropsTheIntervalForTheReceiver()
    {
        final OwnerJournal small = new OwnerJournal(16, 2 * 1024, 1024, 2);
        final ShardInventory owner = new ShardInventory(small, new NamespaceTable(), 256 * 1024);
        final int journalReceiver = small.addReceiver(SHARD);
        final SnapshotCut cut = new SnapshotCut(SHARD, journalReceiver, owner, sink, 4, 1000, 1000, 0, 0);
        cut.start();
        cut.doWork(0);
        for (int i = 0; i < 100; i++)
        {
            owner.add(TIER_DRAM, Keys.NAMESPACE, 0, Keys.NAMESPACE_BYTES.length, Keys.hash(keys[i]), 0,
                Keys.HASH_LENGTH, i, 1);
        }
        cut.doWork(0);
        assertEquals(SnapshotCut.FAILED, cut.state());
        assertEquals(1, small.overflowResyncs());
    }

    private final class ForwardingSink implements SnapshotSink
    {
        public void onBegin(final long snapshotId, final long startWatermark, final int recordCount)
        {
            receiver.onSnapshotBegin(MSB, LSB, snapshotId, startWatermark, recordCount);
        }

        public void onPageRecord(final long snapshotId, final JournalRecord record)
        {
            receiver.onSnapshotRecord(snapshotId, record);
        }

        public void onPageEnd(final long snapshotId, final int pageIndex, final int nextCursor)
        {
            receiver.onSnapshotPageEnd(snapshotId, pageIndex);
        }

        public void onIntervalRecord(final long snapshotId, final JournalRecord record)
        {
            receiver.onSnapshotIntervalRecord(snapshotId, record);
        }

        public void onEnd(final long snapshotId, final long startWatermark, final long endWatermark, final int pageCount)
        {
            receiver.onSnapshotEnd(snapshotId, startWatermark, endWatermark, pageCount);
        }
    }
}
