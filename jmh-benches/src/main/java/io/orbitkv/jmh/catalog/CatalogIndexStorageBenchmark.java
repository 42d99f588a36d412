package io.orbitkv.jmh.catalog;

import java.util.concurrent.TimeUnit;

import io.orbitkv.index.CatalogRecordTable;
import net.openhft.chronicle.map.ChronicleMap;
import org.agrona.concurrent.UnsafeBuffer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The catalog host's index storage, head to head on one workload: the purpose-built off-heap
 * {@link CatalogRecordTable} against chronicle-map 2026.1. Keys are a catalog record key (namespace id, tier,
 * 32-byte block hash: 40 bytes); values are the record's version, generation, insertion sequence and byte size (32
 * bytes). {@code put} replaces the value of an existing key (a delta applied to a present residence), {@code get}
 * reads one. Bytes per entry are printed by each trial's setup ("bytes/entry").
 * <p>
 * Chronicle needs module openings and its analytics disabled; they are prepended to this benchmark's fork only
 * (BenchMain's -jvmArgsAppend still adds the project flags).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(value = 1, jvmArgsPrepend = {
    "-Dchronicle.analytics.disable=true",
    "-Xmx2g",
    "--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED",
    "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-exports=jdk.unsupported/sun.misc=ALL-UNNAMED",
    "--add-exports=jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED",
    "--add-opens=jdk.compiler/com.sun.tools.javac=ALL-UNNAMED",
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/java.util=ALL-UNNAMED",
    "--add-opens=java.base/java.nio=ALL-UNNAMED"})
public class CatalogIndexStorageBenchmark
{
    static final int KEY_BYTES = 40;
    static final int VALUE_BYTES = 32;
    static final int HASH_BYTES = 32;
    static final int KEY_MASK = (1 << 16) - 1;

    @Param({"1000000"})
    public int entries;

    @Param({"table", "chronicle"})
    public String store;

    private CatalogRecordTable table;
    private ChronicleMap<byte[], byte[]> map;
    private byte[][] keys;
    private UnsafeBuffer[] hashes;
    private final byte[] value = new byte[VALUE_BYTES];
    private int next;

    @Setup(Level.Trial)
    public void setUp()
    {
        final int sample = Math.min(entries, KEY_MASK + 1);
        keys = new byte[sample][];
        hashes = new UnsafeBuffer[sample];
        for (int i = 0; i < sample; i++)
        {
            keys[i] = key(i * (entries / sample));
            hashes[i] = new UnsafeBuffer(keys[i], KEY_BYTES - HASH_BYTES, HASH_BYTES);
        }
        final long startNs = System.nanoTime();
        if ("table".equals(store))
        {
            table = new CatalogRecordTable(CatalogRecordTable.budgetFor(entries));
            for (int i = 0; i < entries; i++)
            {
                final byte[] k = key(i);
                final int id = table.insert(1, 0, new UnsafeBuffer(k, KEY_BYTES - HASH_BYTES, HASH_BYTES), 0, HASH_BYTES);
                table.set(id, i, i, i, 4096, false);
            }
            report(startNs, table.footprintBytes());
        }
        else
        {
            map = ChronicleMap.of(byte[].class, byte[].class)
                .name("catalog-bench")
                .entries(entries)
                .averageKeySize(KEY_BYTES)
                .averageValueSize(VALUE_BYTES)
                .create();
            for (int i = 0; i < entries; i++)
            {
                map.put(key(i), value);
            }
            report(startNs, map.offHeapMemoryUsed());
        }
    }

    @TearDown(Level.Trial)
    public void tearDown()
    {
        if (null != map)
        {
            map.close();
        }
    }

    @Benchmark
    public long get()
    {
        final int i = next++ & (keys.length - 1);
        if (null != table)
        {
            final int id = table.find(1, 0, hashes[i], 0, HASH_BYTES);
            return table.version(id);
        }
        return map.get(keys[i]).length;
    }

    @Benchmark
    public long put()
    {
        final int i = next++ & (keys.length - 1);
        if (null != table)
        {
            final int id = table.find(1, 0, hashes[i], 0, HASH_BYTES);
            table.set(id, next, next, next, 4096, false);
            return id;
        }
        map.put(keys[i], value);
        return i;
    }

    /**
     * Start-up: create an empty store sized for the workload and make its first insertion.
     */
    @Benchmark
    @BenchmarkMode(Mode.SingleShotTime)
    @OutputTimeUnit(TimeUnit.MILLISECONDS)
    @Warmup(iterations = 0)
    @Measurement(iterations = 1)
    public long startUp()
    {
        if ("table".equals(store))
        {
            final CatalogRecordTable fresh = new CatalogRecordTable(CatalogRecordTable.budgetFor(entries));
            return fresh.insert(1, 0, hashes[0], 0, HASH_BYTES);
        }
        try (ChronicleMap<byte[], byte[]> fresh = ChronicleMap.of(byte[].class, byte[].class)
            .name("catalog-bench-start")
            .entries(entries)
            .averageKeySize(KEY_BYTES)
            .averageValueSize(VALUE_BYTES)
            .create())
        {
            fresh.put(keys[0], value);
            return fresh.size();
        }
    }

    private void report(final long startNs, final long bytes)
    {
        System.out.printf("%n[%s] fill %d entries: %.1f ms, %d bytes off-heap, bytes/entry %.1f%n",
            store, entries, (System.nanoTime() - startNs) / 1e6, bytes, (double)bytes / entries);
    }

    static byte[] key(final int n)
    {
        final byte[] k = new byte[KEY_BYTES];
        k[0] = 1;
        for (int i = 8; i < KEY_BYTES; i++)
        {
            k[i] = (byte)(n * 0x9E3779B1 >>> ((i & 3) * 8));
        }
        k[8] = (byte)n;
        k[9] = (byte)(n >>> 8);
        k[10] = (byte)(n >>> 16);
        k[11] = (byte)(n >>> 24);
        return k;
    }
}
