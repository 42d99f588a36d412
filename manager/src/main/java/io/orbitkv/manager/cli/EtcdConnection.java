package io.orbitkv.manager.cli;

import picocli.CommandLine.Option;

/**
 * The options a command that reads or writes a cluster's keys in etcd connects with ({@code members},
 * {@code placement set}, {@code placement status}), as a picocli mixin.
 */
final class EtcdConnection
{
    @Option(names = "--etcd-endpoints", required = true, description = "etcd client URLs, comma-separated.")
    String etcdEndpoints;

    @Option(names = "--cluster-name", required = true, description = "Cluster name.")
    String clusterName;

    @Option(names = "--etcd-deadline-ms", description = "Deadline of every etcd call (default: ${DEFAULT-VALUE}).",
        defaultValue = "" + io.orbitkv.manager.Configuration.ETCD_DEADLINE_MS_DEFAULT)
    long etcdDeadlineMs;
}
