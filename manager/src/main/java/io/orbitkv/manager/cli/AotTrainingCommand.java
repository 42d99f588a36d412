package io.orbitkv.manager.cli;

import io.orbitkv.manager.Manager;
import io.orbitkv.manager.ManagerContext;
import java.io.File;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import org.agrona.IoUtil;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code orbitkv aot-training}: the workload {@code scripts/orbitkv} records the JDK's ahead-of-time cache from
 * ({@code -XX:AOTCacheOutput}, JEP 483/514/515). Every later CLI call then starts with these classes already loaded
 * and linked and these methods' profiles known, instead of parsing ~2,000 classes out of the jars again.
 *
 * <p>It runs what users run, in one JVM: the usage of every command, a small standalone Manager in a temporary
 * directory, {@code stat --once} and {@code client smoke} against it, and {@code members} against an address where
 * nothing listens (the gRPC and jetcd classes load on the failed call as on a successful one). Output is discarded;
 * the exit code says whether every step ran.
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
            // Expected to fail (exit 1): what is recorded is the classes the call loads.
            run(discardWriter, "members", "--etcd-endpoints", UNREACHABLE_ETCD, "--cluster-name", "aot",
                "--etcd-deadline-ms", "200");
        }
        finally
        {
            System.setOut(realOut);
            IoUtil.delete(dir.toFile(), true);
        }
        return 0 == failures ? 0 : 1;
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
