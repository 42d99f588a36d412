package io.orbitkv.bench;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The clustered Managers of the transfer benchmark: {@link BenchManager} processes with the flags a peer transfer needs
 * (its own transfer endpoint on a free loopback port, 2 MiB blocks, no admission of fetched blocks so every Read goes to
 * the peer again).
 */
final class TransferManager
{
    /**
     * Settings the Managers of one pair share.
     *
     * @param etcdEndpoints  the bench's etcd.
     * @param cluster        cluster name, new per pair.
     * @param catalogNodes   catalog node ids.
     * @param poolBytes      DRAM pool of each Manager.
     * @param maxBlockBytes  largest block.
     * @param regionBytes    largest client data region.
     * @param streams        {@code --transfer-streams}.
     * @param transport      {@code --transport}.
     * @param teLibrary      {@code --te-library} with the mooncake transport, else null.
     * @param clusterSecretFile {@code --cluster-secret-file}, or null for an unauthenticated peer channel.
     * @param tlsDir         directory of {@code ca.pem}, {@code node.pem}, {@code node.key} for the transport's TLS,
     *                       or null for plain TCP.
     */
    record Settings(
        String etcdEndpoints,
        String cluster,
        String catalogNodes,
        long poolBytes,
        int maxBlockBytes,
        long regionBytes,
        int streams,
        String transport,
        Path teLibrary,
        Path clusterSecretFile,
        Path tlsDir)
    {
    }

    /**
     * Start a Manager process of a pair; it is not ready yet (see {@link BenchManager#awaitReady}).
     *
     * @param nodeId   node id in the cluster.
     * @param workDir  parent of its directory and log.
     * @param settings the pair's settings.
     * @return the started Manager.
     * @throws IOException when the process cannot be started.
     */
    static BenchManager start(final String nodeId, final Path workDir, final Settings settings) throws IOException
    {
        final List<String> args = new ArrayList<>(List.of(
            "--pool-bytes", Long.toString(settings.poolBytes()),
            // The whole pool: a Read's span is granted while the previous span's release may still be on its way.
            "--transfer-budget", Long.toString(settings.poolBytes()),
            "--max-block-bytes", Integer.toString(settings.maxBlockBytes()),
            "--max-data-region-bytes", Long.toString(settings.regionBytes()),
            "--pool-pretouch", "off",
            "--etcd-endpoints", settings.etcdEndpoints(),
            "--cluster-name", settings.cluster(),
            "--catalog-nodes", settings.catalogNodes(),
            "--peer-endpoint", "127.0.0.1:0",
            "--transfer-endpoint", "127.0.0.1:0",
            "--transport", settings.transport(),
            "--transfer-streams", Integer.toString(settings.streams()),
            "--peer-admission", "off"));
        // a given etcd may need TLS and auth: BenchTransferCommand sets the properties only then
        args.addAll(io.orbitkv.manager.cli.EtcdAuthOptions.argsFromProperties());
        if (null != settings.clusterSecretFile())
        {
            args.add("--cluster-secret-file");
            args.add(settings.clusterSecretFile().toString());
        }
        if (null != settings.tlsDir())
        {
            args.add("--transport-tls-cert");
            args.add(settings.tlsDir().resolve(BenchTransferCommand.TLS_CERT).toString());
            args.add("--transport-tls-key");
            args.add(settings.tlsDir().resolve(BenchTransferCommand.TLS_KEY).toString());
            args.add("--transport-tls-ca");
            args.add(settings.tlsDir().resolve(BenchTransferCommand.TLS_CA).toString());
        }
        if (null != settings.teLibrary())
        {
            args.add("--te-library");
            args.add(settings.teLibrary().toString());
        }
        return BenchManager.start(nodeId, workDir, List.of(), args);
    }

    private TransferManager()
    {
    }
}
