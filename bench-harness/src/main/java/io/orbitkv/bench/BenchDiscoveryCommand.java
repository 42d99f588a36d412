package io.orbitkv.bench;

import java.io.File;
import java.util.Map;
import java.util.concurrent.Callable;

import com.fasterxml.jackson.databind.ObjectMapper;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code orbitkv bench discovery}: cold and warm peer lookups and publish-to-discoverable time through three real
 * Managers against a real etcd, with Redis MGET as the anchor.
 */
@Command(
    name = "discovery",
    mixinStandardHelpOptions = true,
    description = {
        "Engine-level discovery through three Managers (a, b, c) in one JVM: cold lookups of 128 keys (one cold query",
        "per catalog host), warm lookups (candidate index, no RPC) and publish-to-discoverable time, against Redis",
        "MGET of the same 128 keys. Needs an etcd (eval \"$(scripts/etcd start)\")."
    })
public final class BenchDiscoveryCommand implements Callable<Integer>
{
    @Option(names = "--etcd-endpoints", required = true, description = "etcd client URLs.")
    String etcdEndpoints;

    @picocli.CommandLine.Mixin
    io.orbitkv.manager.cli.EtcdAuthOptions etcdAuth = new io.orbitkv.manager.cli.EtcdAuthOptions();

    @Option(names = "--queries", defaultValue = "1000", description = "Measured cold lookups (${DEFAULT-VALUE}).")
    int queries;

    @Option(names = "--warmup-queries", defaultValue = "1500", description = "Lookups before, on keys of their own " +
        "(${DEFAULT-VALUE}: with 250 the hosts' and B's paths were still being compiled during the measured lookups).")
    int warmupQueries;

    @Option(names = "--pause-us", defaultValue = "0", description = "Microseconds the engine thread parks between " +
        "cold lookups (${DEFAULT-VALUE}; a lightly loaded cluster whose agents back off between requests).")
    long pauseUs;

    @Option(names = "--keys", defaultValue = "128", description = "Keys per lookup, 1-128 (${DEFAULT-VALUE}).")
    int keys;

    @Option(names = "--managers", defaultValue = "3", description = "3: a, b, c, each hosting shards; 2: a hosts " +
        "every shard and b only asks (${DEFAULT-VALUE}).")
    int managers;

    @Option(names = "--lag-samples", defaultValue = "300", description = "Publish-to-discoverable samples " +
        "(${DEFAULT-VALUE}).")
    int lagSamples;

    @Option(names = "--anchor", negatable = true, defaultValue = "true", fallbackValue = "true",
        description = "Measure the Redis MGET anchor (${DEFAULT-VALUE}).")
    boolean anchor;

    @Option(names = "--redis-script", description = "The start/stop helper (default: $ORBITKV_ROOT/scripts/redis).")
    String redisScript;

    @Option(names = "--json", description = "Also write the results as JSON to this file.")
    File jsonFile;

    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    public Integer call() throws Exception
    {
        if (queries < 1 || warmupQueries < 0 || lagSamples < 1 || pauseUs < 0 || pauseUs > 1_000_000 ||
            keys < 1 || keys > DiscoveryBench.QUERY_KEYS || (2 != managers && 3 != managers))
        {
            throw new CommandLine.ParameterException(spec.commandLine(),
                "counts must be positive, --pause-us in [0, 1000000], --keys in [1, 128], --managers 2 or 3");
        }
        final String script = null != redisScript ? redisScript :
            (null != System.getenv("ORBITKV_ROOT") ? System.getenv("ORBITKV_ROOT") + "/scripts/redis" : "scripts/redis");
        // The in-process Managers take TLS and auth from these properties' values.
        etcdAuth.exportAsProperties();
        final Map<String, Object> results = new DiscoveryBench(
            etcdEndpoints, queries, warmupQueries, lagSamples, pauseUs, keys, managers, anchor, script, spec.commandLine().getOut()).run();
        if (null != jsonFile)
        {
            new ObjectMapper().writerWithDefaultPrettyPrinter().writeValue(jsonFile, results);
            spec.commandLine().getOut().println("results written to " + jsonFile);
        }
        return 0;
    }
}
