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

    @picocli.CommandLine.Mixin
    EtcdAuthOptions auth = new EtcdAuthOptions();

    /**
     * Connect to etcd with these options.
     *
     * @return the gateway, to close.
     * @throws IllegalArgumentException when a TLS or auth option is wrong.
     */
    io.orbitkv.manager.membership.EtcdGateway open()
    {
        final io.orbitkv.manager.membership.EtcdSecurity security = auth.security();
        security.checkEndpoints(etcdEndpoints);
        opened = new io.orbitkv.manager.membership.EtcdGateway(etcdEndpoints, security, etcdDeadlineMs,
            io.orbitkv.manager.SystemCounterFamilies.inMemory(), false);
        return opened;
    }

    /**
     * A failed command's reason: the TLS or auth explanation when that is why, else the failure's message.
     *
     * @param failure the failure.
     * @return one line.
     */
    String describe(final RuntimeException failure)
    {
        return null == opened ? String.valueOf(failure.getMessage()) :
            opened.describe(failure, io.orbitkv.manager.membership.MembershipConfiguration.clusterPrefix(clusterName));
    }

    private io.orbitkv.manager.membership.EtcdGateway opened;
}
