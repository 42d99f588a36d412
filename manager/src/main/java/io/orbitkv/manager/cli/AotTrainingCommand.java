package io.orbitkv.manager.cli;

import io.orbitkv.manager.Manager;
import io.orbitkv.manager.ManagerContext;
import io.orbitkv.manager.SystemCounterFamilies;
import io.orbitkv.manager.membership.EtcdGateway;
import java.io.File;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.agrona.IoUtil;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code orbitkv aot-training}: the workload {@code scripts/orbitkv} records the JDK's ahead-of-time cache from
 * ({@code -XX:AOTCacheOutput}, JEP 483/514/515). Every later CLI call then starts with these classes already loaded
 * and linked and these methods' profiles known, instead of parsing ~2,000 classes out of the jars again.
 *
 * <p>It runs what users run, in one JVM: the usage of every command, a small standalone Manager in a temporary
 * directory, {@code stat --once} and {@code client smoke} against it, then, where an {@code etcd} binary is on the
 * PATH, a throw-away etcd on free loopback ports with a clustered Manager joining it and {@code members} reading it
 * (a successful call loads and exercises far more of gRPC and jetcd than a failed one). Without etcd, {@code members}
 * runs against an address where nothing listens. Output is discarded; the exit code says whether every step ran.
 */
@Command(
    name = "aot-training",
    hidden = true,
    description = "Workload that scripts/orbitkv records its start-up cache from (not for direct use).")
public final class AotTrainingCommand implements Callable<Integer>
{
    /** Small enough that the Manager starts in well under a second and its pool is touched at once. */
    private static final long TRAINING_POOL_BYTES = 8L << 20;

    /** No server listens on port 1 on loopback: the connection is refused at once. */
    private static final String UNREACHABLE_ETCD = "http://127.0.0.1:1";

    /** etcd's well-known ports, which a throw-away instance must never take from a real one. */
    private static final int ETCD_CLIENT_PORT = 2379;
    private static final int ETCD_PEER_PORT = 2380;

    /** How long the throw-away etcd may take to answer its first call. */
    private static final long ETCD_START_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(20);

    public Integer call() throws Exception
    {
        final PrintStream realOut = System.out;
        final PrintStream discard = new PrintStream(OutputStream.nullOutputStream());
        final PrintWriter discardWriter = new PrintWriter(discard);
        final Path dir = Files.createTempDirectory(shmOrTmp(), "orbitkv-aot-training-");
        int failures = 0;
        System.setOut(discard);
        try
        {
            final CommandLine all = OrbitKvCli.commandLine();
            all.usage(discard);
            for (final CommandLine sub : all.getSubcommands().values())
            {
                sub.usage(discard);
                for (final CommandLine nested : sub.getSubcommands().values())
                {
                    nested.usage(discard);
                }
            }

            final ManagerContext ctx = new ManagerContext()
                .dir(dir.toFile())
                .poolBytes(TRAINING_POOL_BYTES)
                .maxBlockBytes(1 << 20)
                .indexBudgetBytes(1L << 20)
                .maxClients(4)
                .maxDataRegionBytes(16L << 20);
            try (Manager ignored = Manager.launch(ctx))
            {
                failures += run(discardWriter, "stat", "--dir", dir.toString(), "--once");
                failures += run(discardWriter, "client", "--dir", dir.toString(), "smoke", "--blocks", "4",
                    "--block-bytes", "4096");
                failures += run(discardWriter, "client", "--dir", dir.toString(), "lookup", "--blocks", "4",
                    "--block-bytes", "4096");
            }
            final String etcd = onPath("etcd");
            if (null == etcd)
            {
                // Expected to fail (exit 1): what is recorded is the classes the call loads.
                run(discardWriter, "members", "--etcd-endpoints", UNREACHABLE_ETCD, "--cluster-name", "aot",
                    "--etcd-deadline-ms", "200");
            }
            else
            {
                failures += trainClustered(etcd, dir, discardWriter);
            }
        }
        finally
        {
            System.setOut(realOut);
            IoUtil.delete(dir.toFile(), true);
        }
        return 0 == failures ? 0 : 1;
    }

    private static int trainClustered(final String etcd, final Path dir, final PrintWriter out) throws Exception
    {
        final int clientPort = freePort();
        final int peerPort = freePort();
        final String endpoint = "http://127.0.0.1:" + clientPort;
        final String peerUrl = "http://127.0.0.1:" + peerPort;
        final Process server = new ProcessBuilder(etcd, "--name", "aot", "--data-dir", dir.resolve("etcd").toString(),
            "--listen-client-urls", endpoint, "--advertise-client-urls", endpoint, "--listen-peer-urls", peerUrl,
            "--initial-advertise-peer-urls", peerUrl, "--initial-cluster", "aot=" + peerUrl)
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("etcd.log").toFile())
            .start();
        try
        {
            final long deadlineNs = System.nanoTime() + ETCD_START_TIMEOUT_NS;
            while (!etcdAnswers(endpoint))
            {
                if (System.nanoTime() > deadlineNs || !server.isAlive())
                {
                    return 1;
                }
                TimeUnit.MILLISECONDS.sleep(20);
            }
            final ManagerContext ctx = new ManagerContext()
                .dir(dir.resolve("clustered").toFile())
                .poolBytes(TRAINING_POOL_BYTES)
                .maxBlockBytes(1 << 20)
                .indexBudgetBytes(1L << 20)
                .maxClients(4)
                .maxDataRegionBytes(16L << 20)
                .etcdEndpoints(endpoint)
                .clusterName("aot")
                .nodeId("a")
                .catalogNodes("a");
            int failures = 0;
            try (Manager ignored = Manager.launch(ctx))
            {
                failures += run(out, "members", "--etcd-endpoints", endpoint, "--cluster-name", "aot");
                failures += run(out, "stat", "--dir", dir.resolve("clustered").toString(), "--once",
                    "--rate-window-ms", "10");
                failures += run(out, "client", "--dir", dir.resolve("clustered").toString(), "lookup", "--peers",
                    "--blocks", "4", "--block-bytes", "4096");
            }
            return failures;
        }
        finally
        {
            server.destroy();
            if (!server.waitFor(10, TimeUnit.SECONDS))
            {
                server.destroyForcibly().waitFor();
            }
        }
    }

    private static boolean etcdAnswers(final String endpoint)
    {
        try (EtcdGateway gateway = new EtcdGateway(endpoint, 500, SystemCounterFamilies.inMemory()))
        {
            gateway.get("/orbitkv/v1/aot/placement");
            return true;
        }
        catch (final RuntimeException ex)
        {
            return false;
        }
    }

    private static String onPath(final String binary)
    {
        for (final String entry : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator))
        {
            final File candidate = new File(entry, binary);
            if (candidate.canExecute())
            {
                return candidate.getPath();
            }
        }
        return null;
    }

    private static int freePort() throws java.io.IOException
    {
        while (true)
        {
            try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress()))
            {
                final int port = socket.getLocalPort();
                if (ETCD_CLIENT_PORT != port && ETCD_PEER_PORT != port)
                {
                    return port;
                }
            }
        }
    }

    private static int run(final PrintWriter out, final String... args)
    {
        final CommandLine commandLine = OrbitKvCli.commandLine();
        commandLine.setOut(out);
        commandLine.setErr(out);
        return 0 == commandLine.execute(args) ? 0 : 1;
    }

    private static Path shmOrTmp()
    {
        final File shm = new File("/dev/shm");
        return (shm.isDirectory() && shm.canWrite() ? shm : new File(System.getProperty("java.io.tmpdir"))).toPath();
    }
}
