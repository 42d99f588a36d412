package io.orbitkv.bench;

import io.orbitkv.manager.cli.OptionConverters;
import java.io.File;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code orbitkv bench catalog}: the catalog benchmarks of issue 5, each next to a Redis anchor measured in the same run
 * (Redis is what FlexKV uses as its directory). See {@link CatalogBench}.
 */
@Command(
    name = "catalog",
    mixinStandardHelpOptions = true,
    description = {
        "Catalog vs Redis, same-run ratios: delta apply throughput at one host (vs redis-benchmark SET -P 64),",
        "128-key cold lookup over 3 hosts (vs MGET), update lag at a steady rate (vs paced SET), metadata bytes per",
        "record, index bytes per entry (vs used_memory per key), snapshot rebuild of a new host (vs DEBUG RELOAD).",
        "Starts redis-server on a free loopback port through scripts/redis (installing it if missing) and stops it."
    })
public final class BenchCatalogCommand implements Callable<Integer>
{
    @Option(names = "--keys", defaultValue = "1000000",
        description = "Distinct keys in the owner inventory; also the snapshot size (${DEFAULT-VALUE}).")
    long keys;

    @Option(names = "--records", defaultValue = "4000000",
        description = "Delta records measured at the host in steady state, after a first pass that inserts every key " +
            "(re-adds of held keys); also redis-benchmark -n over existing keys (${DEFAULT-VALUE}).")
    long records;

    @Option(names = "--warmup-records", defaultValue = "400000", description = "Records before each measured window " +
        "(JIT warm-up): of the first pass before its window, and re-adds before the steady window; fewer than --keys " +
        "(${DEFAULT-VALUE}).")
    long warmupRecords;

    @Option(names = "--lookup-keys", defaultValue = "100000",
        description = "Keys with evidence on the 3 hosts that lookups draw from (${DEFAULT-VALUE}).")
    int lookupKeys;

    @Option(names = "--queries", defaultValue = "20000", description = "Measured 128-key lookups (${DEFAULT-VALUE}).")
    int queries;

    @Option(names = "--warmup-queries", defaultValue = "5000", description = "Lookups before (${DEFAULT-VALUE}).")
    int warmupQueries;

    @Option(names = "--lag-rate", defaultValue = "100000",
        description = "Owner appends per second in the update lag phase (${DEFAULT-VALUE}).")
    int lagRate;

    @Option(names = "--lag-seconds", defaultValue = "5", description = "Length of the lag phase (${DEFAULT-VALUE}).")
    int lagSeconds;

    @Option(names = "--term-length", defaultValue = "1m", converter = OptionConverters.Size.class,
        description = "Peer publication term length (${DEFAULT-VALUE}; 4m if SnapshotEnd intervals must hold 1,024 " +
            "records of the longest keys).")
    long termLength;

    @Option(names = "--driver-idle", defaultValue = "invoked",
        description = "Embedded driver of every peer: invoked from the peer's duty cycle (the transport's default), " +
            "or on its own thread idling with backoff (parks up to 1 ms), backoff-short (parks up to 20 us) or " +
            "yielding (${DEFAULT-VALUE}).")
    String driverIdle;

    @Option(names = "--host-threads", defaultValue = "false",
        description = "Cold lookups with each host's agent on its own thread instead of all peers invoked from the " +
            "bench thread (${DEFAULT-VALUE}).")
    boolean hostThreads;

    @Option(names = "--anchor", negatable = true, defaultValue = "true", fallbackValue = "true",
        description = "Measure the Redis anchors (--no-anchor: OrbitKV only, no redis; for CI) (${DEFAULT-VALUE}).")
    boolean anchor;

    @Option(names = "--redis-port", defaultValue = "-1",
        description = "Use a running redis on 127.0.0.1:PORT instead of starting one (it is FLUSHALLed).")
    int redisPort;

    @Option(names = "--redis-script", description = "The start/stop helper (default: $ORBITKV_ROOT/scripts/redis).")
    String redisScript;

    @Option(names = "--dir", description = "Parent of the peers' Aeron directories (default /dev/shm/...).")
    File dir;

    @Option(names = "--cluster-secret-file", description = "Authenticate the peers' frames with a key derived from " +
        "this owner-only secret file, as Managers do with the same flag (default: unauthenticated).")
    File clusterSecretFile;

    @Option(names = "--auth-compare", description = "Run every phase twice in this run, unauthenticated and then " +
        "authenticated with --cluster-secret-file, and print each figure's ratio (authenticated / not); the Redis anchor " +
        "runs with the first pass only.")
    boolean authCompare;

    @Option(names = "--auth-first", description = "With --auth-compare: the authenticated pass first (alternate the " +
        "order between runs so that drift over a run does not count for one side).")
    boolean authFirst;

    @Option(names = "--json", description = "Also write the results as JSON to this file.")
    File jsonFile;

    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    public Integer call() throws Exception
    {
        final CatalogBench.Settings settings = new CatalogBench.Settings();
        settings.keys = keys;
        settings.records = records;
        settings.warmupRecords = warmupRecords;
        settings.lookupKeys = lookupKeys;
        settings.queries = queries;
        settings.warmupQueries = warmupQueries;
        settings.lagRate = lagRate;
        settings.lagSeconds = lagSeconds;
        settings.termLength = Math.toIntExact(termLength);
        settings.anchor = anchor;
        settings.driverIdle = driverIdle;
        settings.hostThreads = hostThreads;
        settings.redisPort = redisPort;
        settings.redisScript = null != redisScript ? redisScript :
            (null != System.getenv("ORBITKV_ROOT") ? System.getenv("ORBITKV_ROOT") + "/scripts/redis" : "scripts/redis");
        settings.dir = null != dir ? dir.toPath() : CatalogBench.defaultDir();
        if (keys < 16 || records < 1 || warmupRecords < 0 || warmupRecords >= keys ||
            lookupKeys < CatalogBench.QUERY_KEYS || queries < 1 || warmupQueries < 0 || lagRate < 1 || lagSeconds < 1)
        {
            throw new CommandLine.ParameterException(spec.commandLine(),
                "sizes must be positive (lookup keys >= 128, warm-up records < keys)");
        }
        final byte[] frameMacKey = null == clusterSecretFile ? null :
            io.orbitkv.manager.peer.ClusterSecret.load(clusterSecretFile.toPath()).frameMacKey();
        if (authCompare && null == frameMacKey)
        {
            throw new CommandLine.ParameterException(spec.commandLine(), "--auth-compare needs --cluster-secret-file");
        }
        final Map<String, Object> results;
        if (authCompare)
        {
            final Map<String, Object> off;
            final Map<String, Object> on;
            if (authFirst)
            {
                settings.frameMacKey = frameMacKey;
                on = new CatalogBench(settings, spec.commandLine().getOut()).run();
                settings.frameMacKey = null;
                settings.anchor = false;
                off = new CatalogBench(settings, spec.commandLine().getOut()).run();
            }
            else
            {
                settings.frameMacKey = null;
                off = new CatalogBench(settings, spec.commandLine().getOut()).run();
                settings.frameMacKey = frameMacKey;
                settings.anchor = false;
                on = new CatalogBench(settings, spec.commandLine().getOut()).run();
            }
            results = new java.util.LinkedHashMap<>();
            results.put("auth_off", off);
            results.put("auth_on", on);
            final Map<String, Object> ratios = new java.util.LinkedHashMap<>();
            ratios(off, on, "", ratios);
            results.put("ratio_on_over_off", ratios);
            final java.io.PrintWriter out = spec.commandLine().getOut();
            out.println("authenticated / unauthenticated, same run:");
            for (final Map.Entry<String, Object> entry : ratios.entrySet())
            {
                out.printf("  %-60s %.3f%n", entry.getKey(), (Double)entry.getValue());
            }
            out.flush();
        }
        else
        {
            settings.frameMacKey = frameMacKey;
            results = new CatalogBench(settings, spec.commandLine().getOut()).run();
        }
        if (null != jsonFile)
        {
            final File parent = jsonFile.getAbsoluteFile().getParentFile();
            if (null != parent)
            {
                parent.mkdirs();
            }
            new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(jsonFile, withoutNaN(results));
            spec.commandLine().getOut().println("results written to " + jsonFile);
            spec.commandLine().getOut().flush();
        }
        return 0;
    }

    /**
     * Every number found under the same key path in both passes, as on / off.
     */
    @SuppressWarnings("unchecked")
    static void ratios(final Map<String, Object> off, final Map<String, Object> on, final String prefix,
        final Map<String, Object> out)
    {
        for (final Map.Entry<String, Object> entry : off.entrySet())
        {
            final Object other = on.get(entry.getKey());
            final String key = prefix + entry.getKey();
            if (entry.getValue() instanceof Map<?, ?> map && other instanceof Map<?, ?> otherMap)
            {
                ratios((Map<String, Object>)map, (Map<String, Object>)otherMap, key + ".", out);
            }
            else if (entry.getValue() instanceof Number a && other instanceof Number b && 0 != a.doubleValue() &&
                Double.isFinite(a.doubleValue()) && Double.isFinite(b.doubleValue()))
            {
                out.put(key, b.doubleValue() / a.doubleValue());
            }
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> withoutNaN(final Map<String, Object> results)
    {
        final Map<String, Object> clean = new LinkedHashMap<>();
        for (final Map.Entry<String, Object> entry : results.entrySet())
        {
            final Object value = entry.getValue();
            clean.put(entry.getKey(), value instanceof Double d && (d.isNaN() || d.isInfinite()) ? null :
                value instanceof Map<?, ?> map ? withoutNaN((Map<String, Object>)map) : value);
        }
        return clean;
    }
}
