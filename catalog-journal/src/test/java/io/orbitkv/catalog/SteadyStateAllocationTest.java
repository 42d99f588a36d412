package io.orbitkv.catalog;

import java.lang.management.ManagementFactory;

import com.sun.management.ThreadMXBean;
import io.orbitkv.index.NamespaceTable;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertTrue;

class SteadyStateAllocationTest
{
    private static final int KEYS = 512;
    private static final int ROUNDS = 20;
    private static final int WINDOWS = 4;

    private final ThreadMXBean threads = (ThreadMXBean)ManagementFactory.getThreadMXBean();

    @Test
    void shouldNotAllocateWhenPublishingAppendingAndApplyingDeltas()
    {
        final OwnerJournal journal = new OwnerJournal(16, 1024 * 1024, 16 * 1024, 2);
        final ShardInventory inventory = new ShardInventory(journal, new NamespaceTable(), 1024 * 1024);
        final ShardReceiver receiver = new ShardReceiver(0, 1, new HostBudget(), new NamespaceTable(), 4096, 64, 0);
        receiver.admitIncarnation(1, 2);
        final int journalReceiver = journal.addReceiver(0);
        final UnsafeBuffer[] hashes = new UnsafeBuffer[KEYS];
        final int[] keys = Keys.keysOfShard(0, KEYS);
        for (int i = 0; i < KEYS; i++)
        {
            hashes[i] = Keys.hash(keys[i]);
        }
        final JournalReader apply = (r) -> receiver.onDelta(1, 2, r);

        runRounds(inventory, journal, journalReceiver, receiver, hashes, apply, 5);
        // A deoptimisation while the JIT settles re-materialises scalar-replaced objects on the heap once; an
        // allocation on the path itself shows in every window, so one quiet window of a few proves the steady state.
        long allocated = Long.MAX_VALUE;
        for (int window = 0; window < WINDOWS && allocated >= 1024; window++)
        {
            final long before = threads.getCurrentThreadAllocatedBytes();
            runRounds(inventory, journal, journalReceiver, receiver, hashes, apply, ROUNDS);
            allocated = threads.getCurrentThreadAllocatedBytes() - before;
        }
        assertTrue(allocated < 1024, "allocated " + allocated + " bytes in each of " + WINDOWS + " windows");
        assertTrue(receiver.deltasApplied() > (long)KEYS * ROUNDS);
    }

    private static void runRounds(
        final ShardInventory inventory,
        final OwnerJournal journal,
        final int journalReceiver,
        final ShardReceiver receiver,
        final UnsafeBuffer[] hashes,
        final JournalReader apply,
        final int rounds)
    {
        for (int round = 0; round < rounds; round++)
        {
            for (int i = 0; i < KEYS; i++)
            {
                if (0 == (round & 1))
                {
                    inventory.add(JournalRecord.TIER_DRAM, Keys.NAMESPACE, 0, Keys.NAMESPACE_BYTES.length, hashes[i], 0,
                        Keys.HASH_LENGTH, i, 4096);
                }
                else
                {
                    inventory.remove(JournalRecord.TIER_DRAM, Keys.NAMESPACE, 0, Keys.NAMESPACE_BYTES.length, hashes[i],
                        0, Keys.HASH_LENGTH);
                }
            }
            final long from = receiver.contiguousSequence() + 1;
            journal.read(0, from, KEYS, apply);
            journal.onAck(0, journalReceiver, receiver.contiguousSequence());
        }
    }
}
