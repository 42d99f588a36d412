package io.orbitkv.index;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CatalogRecordTableTest
{
    private final UnsafeBuffer hash = new UnsafeBuffer(new byte[32]);

    private UnsafeBuffer hash(final int n)
    {
        hash.putInt(0, n);
        hash.putInt(28, n * 7);
        return hash;
    }

    @Test
    void shouldHoldExactlyTheRecordsItsBudgetWasSizedFor()
    {
        final long budget = CatalogRecordTable.budgetFor(100);
        final CatalogRecordTable table = new CatalogRecordTable(budget);
        assertTrue(table.capacity() >= 100);
        assertTrue(table.footprintBytes() <= budget);
        for (int i = 0; i < table.capacity(); i++)
        {
            assertTrue(table.insert(1, 0, hash(i), 0, 32) >= 0);
        }
        assertEquals(CatalogRecordTable.FULL, table.insert(1, 0, hash(-1), 0, 32));
    }

    @Test
    void shouldFailBoundsChecksInsteadOfTouchingFreedMemory()
    {
        final CatalogRecordTable table = new CatalogRecordTable(CatalogRecordTable.budgetFor(8));
        final int id = table.insert(1, 0, hash(1), 0, 32);
        table.set(id, 5, 1, 10, 4096, false);
        assertEquals(id, table.find(1, 0, hash(1), 0, 32));

        table.free();
        table.free();
        assertThrows(IndexOutOfBoundsException.class, () -> table.find(1, 0, hash(1), 0, 32));
        assertThrows(IndexOutOfBoundsException.class, () -> table.version(id));
    }

    @Test
    void shouldKnowWhichTiersHoldRecordsThroughInsertsRemovalsTombstonesAndClear()
    {
        final CatalogRecordTable table = new CatalogRecordTable(CatalogRecordTable.budgetFor(8));
        assertFalse(table.holdsTier(0));
        assertFalse(table.holdsTier(1));
        final int dram = table.insert(3, 0, hash(1), 0, 32);
        table.set(dram, 5, 1, 10, 4096, false);
        assertTrue(table.holdsTier(0));
        assertFalse(table.holdsTier(1));
        assertEquals(CatalogRecordTable.NOT_FOUND, table.find(3, 1, hash(1), 0, 32));

        // A tombstone is a record of its tier: finding it is what stops a delayed addition.
        final int ssd = table.insert(3, 1, hash(2), 0, 32);
        table.set(ssd, 6, 2, 11, 4096, true);
        assertTrue(table.holdsTier(1));
        assertEquals(ssd, table.find(3, 1, hash(2), 0, 32));
        assertEquals(1, table.purgeTombstonesUpTo(6));
        assertFalse(table.holdsTier(1));
        assertEquals(CatalogRecordTable.NOT_FOUND, table.find(3, 1, hash(2), 0, 32));

        table.remove(dram);
        assertFalse(table.holdsTier(0));
        table.insert(3, 0, hash(3), 0, 32);
        table.insert(4, 1, hash(3), 0, 32);
        table.clear();
        assertFalse(table.holdsTier(0));
        assertFalse(table.holdsTier(1));
        final int again = table.insert(3, 1, hash(3), 0, 32);
        assertEquals(again, table.find(3, 1, hash(3), 0, 32));
    }

    @Test
    void shouldKeepTheTiersOfOneKeyIndependent()
    {
        final CatalogRecordTable table = new CatalogRecordTable(CatalogRecordTable.budgetFor(8));
        final int dram = table.insert(3, 0, hash(1), 0, 32);
        final int ssd = table.insert(3, 1, hash(1), 0, 32);
        table.set(dram, 5, 1, 10, 4096, false);
        table.set(ssd, 6, 2, 11, 4096, false);
        table.remove(dram);
        assertEquals(CatalogRecordTable.NOT_FOUND, table.find(3, 0, hash(1), 0, 32));
        assertEquals(ssd, table.find(3, 1, hash(1), 0, 32));
        assertEquals(1, table.tier(ssd));
        assertEquals(3, table.namespaceId(ssd));
        assertEquals(6, table.version(ssd));
    }

    @Test
    void shouldVisitEveryRecordPresentThroughoutAScanExactlyOnceDespiteChurn()
    {
        final CatalogRecordTable table = new CatalogRecordTable(CatalogRecordTable.budgetFor(64));
        for (int i = 0; i < 40; i++)
        {
            table.insert(1, 0, hash(i), 0, 32);
        }
        final boolean[] seen = new boolean[40];
        int cursor = 0;
        int visits = 0;
        int churn = 1000;
        while (true)
        {
            final int id = table.nextLive(cursor, 1_000);
            if (CatalogRecordTable.END == id)
            {
                break;
            }
            visits++;
            cursor = id + 1;
            // Churn behind and ahead of the cursor: remove odd keys below 10, add new keys.
            if (visits < 5)
            {
                table.remove(table.find(1, 0, hash(visits * 2 + 1), 0, 32));
                table.insert(1, 0, hash(churn++), 0, 32);
            }
            final UnsafeBuffer copy = new UnsafeBuffer(new byte[64]);
            table.getHash(id, copy, 0);
            final int key = copy.getInt(0);
            if (key < 40)
            {
                assertFalse(seen[key], "visited twice: " + key);
                seen[key] = true;
            }
        }
        for (int i = 10; i < 40; i++)
        {
            assertTrue(seen[i], "stable record missed: " + i);
        }
    }

    @Test
    void shouldBoundAScanAndResumeFromTheReturnedCursor()
    {
        final CatalogRecordTable table = new CatalogRecordTable(CatalogRecordTable.budgetFor(64));
        for (int i = 0; i < 20; i++)
        {
            table.insert(1, 0, hash(i), 0, 32);
        }
        for (int i = 0; i < 15; i++)
        {
            table.remove(table.find(1, 0, hash(i), 0, 32));
        }
        final int bounded = table.nextLive(0, 10);
        assertTrue(bounded < CatalogRecordTable.END);
        assertEquals(10, CatalogRecordTable.resumeCursor(bounded));
        assertEquals(15, table.nextLive(10, 10));
    }

    @Test
    void shouldPurgeTombstonesAtOrBelowAWatermark()
    {
        final CatalogRecordTable table = new CatalogRecordTable(CatalogRecordTable.budgetFor(8));
        final int a = table.insert(1, 0, hash(1), 0, 32);
        final int b = table.insert(1, 0, hash(2), 0, 32);
        final int c = table.insert(1, 0, hash(3), 0, 32);
        table.set(a, 5, 1, 1, 1, true);
        table.set(b, 9, 1, 1, 1, true);
        table.set(c, 7, 1, 1, 1, false);
        assertEquals(2, table.tombstones());
        assertEquals(1, table.liveSize());
        assertEquals(1, table.purgeTombstonesUpTo(8));
        assertEquals(1, table.tombstones());
        assertEquals(2, table.size());
    }
}
