package io.orbitkv.catalog;

import java.util.ArrayList;
import java.util.List;

import io.orbitkv.codecs.CatalogLimits;
import io.orbitkv.codecs.StateKey;
import io.orbitkv.codecs.StateKeyFlyweight;
import io.orbitkv.index.NamespaceTable;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ShardInventoryKeyTest
{
    private final OwnerJournal journal = new OwnerJournal(CatalogLimits.SHARD_COUNT, 64 * 1024, 4096, 2);
    private final NamespaceTable namespaces = new NamespaceTable();
    private final ShardInventory inventory = new ShardInventory(journal, namespaces, 256 * 1024);

    @Test
    void shouldRecordAKeyUnderTheNamespaceIdItCarriesAndJournalItsNameBytes()
    {
        final int namespaceId = namespaces.register(Keys.NAMESPACE, 0, Keys.NAMESPACE_BYTES.length);
        final UnsafeBuffer name = new UnsafeBuffer(0, 0);
        final int nameLength = namespaces.wrapNamespace(namespaceId, name);
        final StateKeyFlyweight key = new StateKeyFlyweight()
            .wrap(namespaceId, name, 0, nameLength, Keys.hash(5), 0, Keys.HASH_LENGTH);

        assertTrue(inventory.add(JournalRecord.TIER_DRAM, key, 11, 4096) > 0);
        final int shard = Keys.shardOf(5);
        assertEquals(1, inventory.size(shard));

        final List<StateKey> paged = new ArrayList<>();
        inventory.readPage(shard, 0, 16, 1024, (record) ->
        {
            final byte[] ns = new byte[record.namespaceLength()];
            final byte[] hash = new byte[record.hashLength()];
            record.namespace().getBytes(0, ns);
            record.hash().getBytes(0, hash);
            paged.add(new StateKey(ns, hash));
            assertEquals(11, record.insertionSequence());
        });
        assertEquals(List.of(key.toStateKey()), paged);

        // The same residence found by name: the id it was recorded under is the table's id of that name.
        assertTrue(inventory.remove(JournalRecord.TIER_DRAM, Keys.NAMESPACE, 0, Keys.NAMESPACE_BYTES.length,
            Keys.hash(5), 0, Keys.HASH_LENGTH) > 0);
        assertEquals(0, inventory.size(shard));
        assertEquals(ShardInventory.NOT_PRESENT, inventory.remove(JournalRecord.TIER_DRAM, key));
    }
}
