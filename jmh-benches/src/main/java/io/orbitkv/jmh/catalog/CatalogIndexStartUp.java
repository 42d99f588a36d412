package io.orbitkv.jmh.catalog;

import io.orbitkv.index.CatalogRecordTable;
import net.openhft.chronicle.map.ChronicleMap;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Cold start-up of the catalog index storage, one store per fresh JVM: time from entering main to an empty store
 * sized for {@code entries} that has taken its first insertion, and the same for a second store in the same JVM.
 * Usage: {@code java <flags> -cp benchmarks.jar io.orbitkv.jmh.catalog.CatalogIndexStartUp table|chronicle [entries]}.
 */
public final class CatalogIndexStartUp
{
    private CatalogIndexStartUp()
    {
    }

    public static void main(final String[] args)
    {
        final String store = args[0];
        final int entries = args.length > 1 ? Integer.parseInt(args[1]) : 1_000_000;
        final byte[] key = CatalogIndexStorageBenchmark.key(1);
        for (int round = 1; round <= 2; round++)
        {
            final long startNs = System.nanoTime();
            if ("table".equals(store))
            {
                final CatalogRecordTable table = new CatalogRecordTable(CatalogRecordTable.budgetFor(entries));
                table.insert(1, 0, new UnsafeBuffer(key, 8, 32), 0, 32);
            }
            else
            {
                try (ChronicleMap<byte[], byte[]> map = ChronicleMap.of(byte[].class, byte[].class)
                    .name("catalog-start-" + round)
                    .entries(entries)
                    .averageKeySize(CatalogIndexStorageBenchmark.KEY_BYTES)
                    .averageValueSize(CatalogIndexStorageBenchmark.VALUE_BYTES)
                    .create())
                {
                    map.put(key, new byte[CatalogIndexStorageBenchmark.VALUE_BYTES]);
                }
            }
            System.out.printf("%s start-up (store %d in this JVM, %d entries): %.1f ms%n",
                store, round, entries, (System.nanoTime() - startNs) / 1e6);
        }
    }
}
