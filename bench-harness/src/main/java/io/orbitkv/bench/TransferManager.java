package io.orbitkv.bench;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongPredicate;

import io.orbitkv.codecs.cnc.CncFileDescriptor;
import io.orbitkv.manager.status.CncReader;
import io.orbitkv.manager.status.SystemCounterDescriptor;
import org.agrona.CloseHelper;
import org.agrona.concurrent.status.CountersReader;

/**
 * One clustered Manager of the transfer benchmark, a separate OS process started through {@link ChildJvm} with the
 * flags a peer transfer needs (its own transfer endpoint on a free loopback port, 2 MiB blocks, no admission of
 * fetched blocks so every Read goes to the peer again), and its CnC file mapped for readiness and counters.
 */
final class TransferManager implements AutoCloseable
{
    /** How long a Manager may take from start to ready, and a cluster to show every member. */
    static final long START_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(90);

    private static final long POLL_NS = TimeUnit.MILLISECONDS.toNanos(5);

    private final String nodeId;
    private final Path dir;
    private final File log;
    private final Process process;
    private CncReader cnc;

    private TransferManager(final String nodeId, final Path dir, final File log, final Process process)
    {
        this.nodeId = nodeId;
        this.dir = dir;
        this.log = log;
        this.process = process;
    }

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
        Path teLibrary)
    {
    }

    /**
     * Start a Manager process; it is not ready yet (see {@link #awaitReady}).
     *
     * @param nodeId   node id in the cluster.
     * @param workDir  parent of its directory and log.
     * @param settings the pair's settings.
     * @return the started Manager.
     * @throws IOException when the process cannot be started.
     */
    static TransferManager start(final String nodeId, final Path workDir, final Settings settings) throws IOException
    {
        final Path dir = workDir.resolve("manager-" + nodeId);
        final File log = workDir.resolve("manager-" + nodeId + ".log").toFile();
        final List<String> args = new ArrayList<>(List.of(
            "manager",
            "--dir", dir.toString(),
            "--pool-bytes", Long.toString(settings.poolBytes()),
            // The whole pool: a Read's span is granted while the previous span's release may still be on its way.
            "--transfer-budget", Long.toString(settings.poolBytes()),
            "--max-block-bytes", Integer.toString(settings.maxBlockBytes()),
            "--max-data-region-bytes", Long.toString(settings.regionBytes()),
            "--pool-pretouch", "off",
            "--etcd-endpoints", settings.etcdEndpoints(),
            "--cluster-name", settings.cluster(),
            "--node-id", nodeId,
            "--catalog-nodes", settings.catalogNodes(),
            "--peer-endpoint", "127.0.0.1:0",
            "--transfer-endpoint", "127.0.0.1:0",
            "--transport", settings.transport(),
            "--transfer-streams", Integer.toString(settings.streams()),
            "--peer-admission", "off"));
        if (null != settings.teLibrary())
        {
            args.add("--te-library");
            args.add(settings.teLibrary().toString());
        }
        return new TransferManager(nodeId, dir, log, ChildJvm.startOrbitkv(log, List.of(), args));
    }

    /**
     * Wait until the Manager's CnC file is ready.
     *
     * @throws IllegalStateException when it exits or is not ready in {@link #START_TIMEOUT_NS}.
     */
    void awaitReady()
    {
        final File file = dir.resolve(CncFileDescriptor.CNC_FILE_NAME).toFile();
        final long deadlineNs = System.nanoTime() + START_TIMEOUT_NS;
        while (null == cnc)
        {
            checkAlive();
            cnc = CncReader.mapIfReady(file);
            if (null == cnc)
            {
                if (System.nanoTime() - deadlineNs > 0)
                {
                    throw failure("not ready in " + TimeUnit.NANOSECONDS.toSeconds(START_TIMEOUT_NS) + " s");
                }
                LockSupport.parkNanos(POLL_NS);
            }
        }
    }

    /**
     * Wait until a counter of this Manager satisfies a condition.
     *
     * @param counter   the counter.
     * @param condition what its value must satisfy.
     * @param timeoutNs how long to wait.
     * @throws IllegalStateException when the Manager exits or the time runs out.
     */
    void awaitCounter(final SystemCounterDescriptor counter, final LongPredicate condition, final long timeoutNs)
    {
        final long deadlineNs = System.nanoTime() + timeoutNs;
        while (!condition.test(counter(counter)))
        {
            checkAlive();
            if (System.nanoTime() - deadlineNs > 0)
            {
                throw failure("'" + counter.label() + "' stayed at " + counter(counter));
            }
            LockSupport.parkNanos(POLL_NS);
        }
    }

    long counter(final SystemCounterDescriptor counter)
    {
        return cnc.countersReader().getCounterValue(counter.id());
    }

    CountersReader counters()
    {
        return cnc.countersReader();
    }

    /**
     * Every counter of this Manager that is not zero, one per line, for a failure's evidence.
     *
     * @return the lines, or a note when the CnC file is not mapped.
     */
    String nonZeroCounters()
    {
        if (null == cnc)
        {
            return "  (no CnC file mapped)" + System.lineSeparator();
        }
        final StringBuilder text = new StringBuilder();
        final CountersReader counters = cnc.countersReader();
        counters.forEach((counterId, typeId, keyBuffer, label) ->
        {
            final long value = counters.getCounterValue(counterId);
            if (0 != value)
            {
                text.append("  ").append(counterId).append(' ').append(label).append(" = ").append(value)
                    .append(System.lineSeparator());
            }
        });
        return text.toString();
    }

    String nodeId()
    {
        return nodeId;
    }

    /**
     * @return the Manager's directory, where its engine clients attach.
     */
    Path dir()
    {
        return dir;
    }

    long pid()
    {
        return process.pid();
    }

    void checkAlive()
    {
        if (!process.isAlive())
        {
            throw failure("exited with " + process.exitValue());
        }
    }

    /**
     * @param what what went wrong.
     * @return an exception naming the Manager, with the tail of its log.
     */
    IllegalStateException failure(final String what)
    {
        return new IllegalStateException("Manager " + nodeId + " " + what + "; last lines of " + log + ":" +
            System.lineSeparator() + BenchTools.tail(log, 20));
    }

    public void close()
    {
        CloseHelper.quietClose(cnc);
        BenchTools.stop(process);
        try
        {
            if (Files.isDirectory(dir))
            {
                org.agrona.IoUtil.delete(dir.toFile(), true);
            }
        }
        catch (final RuntimeException ex)
        {
            // a leftover directory under the work dir is not worth failing the run for
        }
    }
}
