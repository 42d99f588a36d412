package io.orbitkv.bench;

import static io.orbitkv.bench.CatalogBench.HASH_LENGTH;
import static io.orbitkv.bench.CatalogBench.NAMESPACE;
import static io.orbitkv.bench.CatalogBench.QUERY_KEYS;
import static io.orbitkv.bench.CatalogBench.REDIS_VALUE_BYTES;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.HdrHistogram.Histogram;

/**
 * The Redis side of {@link CatalogBench}: every catalog figure is set against a Redis measurement from the same run,
 * over the same key bytes (namespace + hash) with a value the size of one candidate. Owns the Redis connection, and
 * the server too when the bench started one ({@code --redis-port} not given); figures that belong in the results
 * (bytes and SETs per server CPU-second) are put there as they are measured.
 */
final class CatalogRedisAnchor implements AutoCloseable
{
    private final CatalogBench.Settings settings;
    private final PrintWriter out;
    private final Map<String, Object> results;
    private final byte[] hashes;
    private final String serverName;
    private final RespClient redis;

    /**
     * Connect to the Redis at {@code settings.redisPort}, or start one when it is not set (the port it took is
     * written back to the settings), and empty it.
     *
     * @param settings the bench's settings.
     * @param out      where anchors are reported.
     * @param results  the bench's results, in report order.
     * @param hashes   the bench's key hashes, {@link CatalogBench#HASH_LENGTH} bytes each.
     * @throws IOException          when Redis cannot be reached.
     * @throws InterruptedException while starting the server.
     */
    CatalogRedisAnchor(
        final CatalogBench.Settings settings, final PrintWriter out, final Map<String, Object> results, final byte[] hashes)
        throws IOException, InterruptedException
    {
        this.settings = settings;
        this.out = out;
        this.results = results;
        this.hashes = hashes;
        int port = settings.redisPort;
        String name = null;
        if (port <= 0)
        {
            name = "bench-catalog-" + ProcessHandle.current().pid();
            port = RespClient.startServer(settings.redisScript, name);
        }
        this.serverName = name;
        settings.redisPort = port;
        RespClient client = null;
        try
        {
            client = new RespClient(port);
            client.command(1).arg("FLUSHALL");
            client.flush();
            client.readReply();
        }
        catch (final IOException | RuntimeException ex)
        {
            if (null != client)
            {
                client.close();
            }
            if (null != name)
            {
                RespClient.stopServer(settings.redisScript, name);
            }
            throw ex;
        }
        this.redis = client;
    }

    /**
     * The bytes one SET of a key and its value takes on the wire, plus its {@code +OK} reply.
     *
     * @return bytes per SET and reply.
     * @throws IOException when Redis fails.
     */
    double bytesPerSet() throws IOException
    {
        redis.command(3).arg("SET").arg(NAMESPACE, NAMESPACE.length, hashes, 0,
            HASH_LENGTH).arg(new byte[REDIS_VALUE_BYTES], 0, REDIS_VALUE_BYTES);
        final double bytes = redis.pendingBytes() + "+OK\r\n".length();
        redis.flush();
        redis.readReply();
        return bytes;
    }

    Histogram mget(final int[] keys, final int total) throws IOException
    {
        // The same evidence in Redis: key = namespace + hash bytes, value = one candidate (owner, incarnation,
        // insertion sequence, generation, tier, size).
        final byte[] value = new byte[REDIS_VALUE_BYTES];
        for (int k = 0; k < settings.lookupKeys; k += 1000)
        {
            final int end = Math.min(settings.lookupKeys, k + 1000);
            for (int i = k; i < end; i++)
            {
                redis.command(3).arg("SET").arg(NAMESPACE, NAMESPACE.length, hashes, i * HASH_LENGTH, HASH_LENGTH)
                    .arg(value, 0, value.length);
            }
            redis.flush();
            for (int i = k; i < end; i++)
            {
                redis.readReply();
            }
        }
        final Histogram histogram = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
        final byte[] request = new byte[QUERY_KEYS * HASH_LENGTH];
        for (int q = 0; q < total; q++)
        {
            CatalogKeys.requestKeys(hashes, keys, q, request);
            final long startNs = System.nanoTime();
            redis.command(QUERY_KEYS + 1).arg("MGET");
            for (int i = 0; i < QUERY_KEYS; i++)
            {
                redis.arg(NAMESPACE, NAMESPACE.length, request, i * HASH_LENGTH, HASH_LENGTH);
            }
            redis.flush();
            final long present = redis.readReply();
            final long elapsedNs = System.nanoTime() - startNs;
            if (present != QUERY_KEYS)
            {
                throw new IllegalStateException("MGET found " + present + " of " + QUERY_KEYS);
            }
            if (q >= settings.warmupQueries)
            {
                histogram.recordValue(elapsedNs);
            }
        }
        return histogram;
    }

    /**
     * SETs of the lookup keys at the lag phase's rate from one connection: each loop iteration writes the SETs that
     * fell due as one pipeline and reads their replies; a SET's lag is issue to its reply (then any reader sees it).
     */
    Histogram pacedSet(final long records) throws IOException
    {
        final Histogram histogram = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
        final byte[] value = new byte[REDIS_VALUE_BYTES];
        final long periodNs = 1_000_000_000L / settings.lagRate;
        final long[] issuedNs = new long[(int)Math.min(records, 1 << 20)];
        final long startNs = System.nanoTime();
        long issued = 0;
        while (issued < records)
        {
            final long due = Math.min(records, (System.nanoTime() - startNs) / periodNs + 1);
            final long first = issued;
            while (issued < due && issued - first < issuedNs.length)
            {
                final int key = (int)(issued % settings.lookupKeys);
                value[0] = (byte)issued;
                redis.command(3).arg("SET").arg(NAMESPACE, NAMESPACE.length, hashes, key * HASH_LENGTH, HASH_LENGTH)
                    .arg(value, 0, value.length);
                issuedNs[(int)(issued - first)] = System.nanoTime();
                issued++;
            }
            if (issued == first)
            {
                Thread.onSpinWait();
                continue;
            }
            redis.flush();
            for (long i = first; i < issued; i++)
            {
                redis.readReply();
                histogram.recordValue(Math.max(0, System.nanoTime() - issuedNs[(int)(i - first)]));
            }
        }
        return histogram;
    }

    /**
     * redis-benchmark pipelined SETs of random keys among settings.keys: into an empty db (the first SET of a key
     * creates it, as the host's first pass inserts), or after every key was SET once (overwrites only, as the host's
     * steady state updates held records).
     */
    double benchmarkSet(final boolean overExistingKeys) throws IOException, InterruptedException
    {
        if (overExistingKeys)
        {
            prefillBenchmarkKeys();
        }
        final long requests = overExistingKeys ? settings.records : settings.keys;
        final List<String> command = List.of("redis-benchmark", "-h", "127.0.0.1", "-p",
            Integer.toString(settings.redisPort), "-t", "set", "-P", "64", "-n", Long.toString(requests),
            "-d", "96", "-r", Long.toString(settings.keys), "-q", "--csv");
        final double cpuBefore = cpuSeconds();
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        final String text = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (0 != process.waitFor())
        {
            throw new IllegalStateException("redis-benchmark failed: " + text);
        }
        out.printf(Locale.ROOT, "%n[1] anchor (%s): %s%n", overExistingKeys ? "every key SET once before, " +
            "overwrites" : "empty db", String.join(" ", command));
        double rps = Double.NaN;
        for (final String line : text.split("\n"))
        {
            out.println("    " + line.trim());
            final String[] fields = line.trim().replace("\"", "").split(",");
            if (fields.length > 1 && "SET".equals(fields[0]))
            {
                rps = Double.parseDouble(fields[1]);
            }
        }
        out.flush();
        if (Double.isNaN(rps))
        {
            throw new IllegalStateException("no SET row in redis-benchmark output: " + text);
        }
        final double cpuSeconds = cpuSeconds() - cpuBefore;
        out.printf(Locale.ROOT, "    redis-server used %.2f CPU-seconds (INFO cpu, user + sys): %.0f SETs per server " +
            "CPU-second%n", cpuSeconds, requests / cpuSeconds);
        if (overExistingKeys)
        {
            results.put("anchor_redis_sets_per_server_cpu_s", requests / cpuSeconds);
        }
        redis.command(1).arg("FLUSHALL");
        redis.flush();
        redis.readReply();
        return rps;
    }

    /**
     * SET every key redis-benchmark's {@code -r} draws from ({@code key:} and the number in 12 digits) with a 96-byte
     * value, pipelined, untimed.
     */
    private void prefillBenchmarkKeys() throws IOException
    {
        final String value = "x".repeat(96);
        final int window = 1_000;
        for (long k = 0; k < settings.keys; k += window)
        {
            final long end = Math.min(settings.keys, k + window);
            for (long i = k; i < end; i++)
            {
                redis.command(3).arg("SET").arg(String.format(Locale.ROOT, "key:%012d", i)).arg(value);
            }
            redis.flush();
            for (long i = k; i < end; i++)
            {
                redis.readReply();
            }
        }
    }

    /**
     * Load the owner's keys (same key bytes, one candidate as value) into an empty Redis: used_memory per key is the
     * index anchor; DEBUG RELOAD (save an RDB, empty, load it back) of them is the snapshot rebuild anchor.
     */
    double loadAndReload() throws IOException
    {
        redis.command(1).arg("FLUSHALL");
        redis.flush();
        redis.readReply();
        final long before = redis.infoField("memory", "used_memory");
        final byte[] value = new byte[REDIS_VALUE_BYTES];
        for (long k = 0; k < settings.keys; k += 1000)
        {
            final long end = Math.min(settings.keys, k + 1000);
            for (long i = k; i < end; i++)
            {
                redis.command(3).arg("SET")
                    .arg(NAMESPACE, NAMESPACE.length, hashes, (int)i * HASH_LENGTH, HASH_LENGTH)
                    .arg(value, 0, value.length);
            }
            redis.flush();
            for (long i = k; i < end; i++)
            {
                redis.readReply();
            }
        }
        final long after = redis.infoField("memory", "used_memory");
        final double perKey = (double)(after - before) / settings.keys;
        results.put("anchor_redis_bytes_per_key", perKey);
        final long startNs = System.nanoTime();
        redis.command(2).arg("DEBUG").arg("RELOAD");
        redis.flush();
        redis.readReply();
        final double ms = (System.nanoTime() - startNs) / 1e6;
        redis.command(1).arg("DBSIZE");
        redis.flush();
        final long size = redis.readReply();
        out.printf(Locale.ROOT, "    anchor: redis with the same %d keys (%d B key, %d B value): used_memory %.1f " +
            "B/key; DEBUG RELOAD (RDB save + load, %d keys back) %.0f ms%n", settings.keys,
            NAMESPACE.length + HASH_LENGTH, REDIS_VALUE_BYTES, perKey, size, ms);
        out.flush();
        redis.command(1).arg("FLUSHALL");
        redis.flush();
        redis.readReply();
        return ms;
    }

    private double cpuSeconds() throws IOException
    {
        redis.command(2).arg("INFO").arg("cpu");
        redis.flush();
        double seconds = 0;
        for (final String line : redis.readBulkString().split("\r\n"))
        {
            if (line.startsWith("used_cpu_sys:") || line.startsWith("used_cpu_user:"))
            {
                seconds += Double.parseDouble(line.substring(line.indexOf(':') + 1).trim());
            }
        }
        return seconds;
    }

    String version() throws IOException
    {
        redis.command(2).arg("INFO").arg("server");
        redis.flush();
        for (final String line : redis.readBulkString().split("\r\n"))
        {
            if (line.startsWith("redis_version:"))
            {
                return line.substring("redis_version:".length());
            }
        }
        return "unknown";
    }

    public void close() throws IOException, InterruptedException
    {
        redis.close();
        if (null != serverName)
        {
            RespClient.stopServer(settings.redisScript, serverName);
        }
    }
}
