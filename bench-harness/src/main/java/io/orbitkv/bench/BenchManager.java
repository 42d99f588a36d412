package io.orbitkv.bench;

import io.orbitkv.manager.status.CounterDescriptor;
import java.io.File;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongPredicate;

import io.orbitkv.codecs.cnc.CncFileDescriptor;
import io.orbitkv.manager.status.CncReader;
import org.agrona.CloseHelper;
import org.agrona.concurrent.status.CountersReader;

/**
 * One Manager process of a benchmark, started through {@link ChildJvm} with the flags the benchmark asks for, its CnC
 * file mapped for readiness and counters. It can be killed (SIGKILL) and started again on the same directory and
 * flags. The benchmarks that run clustered Managers ({@code bench transfer}, {@code bench replay}) share it.
 */
final class BenchManager implements AutoCloseable
{
    /** How long a Manager may take from start to ready. */
    static final long START_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(90);

    private static final long POLL_NS = TimeUnit.MILLISECONDS.toNanos(5);

    private final String nodeId;
    private final Path dir;
    private final File log;
    private final List<String> jvmArgs;
    private final List<String> args;
    private final List<Map<String, Long>> retired = new ArrayList<>();
    private Process process;
    private volatile CncReader cnc;

    private BenchManager(
        final String nodeId, final Path dir, final File log, final List<String> jvmArgs, final List<String> args)
    {
        this.nodeId = nodeId;
        this.dir = dir;
        this.log = log;
        this.jvmArgs = jvmArgs;
        this.args = args;
    }

    /**
     * Start a Manager; it is not ready yet (see {@link #awaitReady}).
     *
     * @param nodeId    node id.
     * @param workDir   parent of its directory and log.
     * @param jvmArgs   options of the child JVM.
     * @param flags     every flag but {@code --dir} and {@code --node-id}; {@code {dir}} in a flag stands for the
     *                  Manager's own directory (e.g. {@code --ssd-dir {dir}/ssd}).
     * @return the started Manager.
     * @throws IOException when the process cannot be started.
     */
    static BenchManager start(
        final String nodeId, final Path workDir, final List<String> jvmArgs, final List<String> flags) throws IOException
    {
        final Path dir = workDir.resolve("manager-" + nodeId);
        final File log = workDir.resolve("manager-" + nodeId + ".log").toFile();
        final List<String> args = new ArrayList<>(List.of("manager", "--dir", dir.toString(), "--node-id", nodeId));
        for (final String flag : flags)
        {
            args.add(flag.replace("{dir}", dir.toString()));
        }
        final BenchManager manager = new BenchManager(nodeId, dir, log, List.copyOf(jvmArgs), List.copyOf(args));
        manager.launch();
        return manager;
    }

    private void launch() throws IOException
    {
        process = ChildJvm.startOrbitkv(log, jvmArgs, args);
    }

    void awaitReady()
    {
        final File file = dir.resolve(CncFileDescriptor.CNC_FILE_NAME).toFile();
        final long deadlineNs = System.nanoTime() + START_TIMEOUT_NS;
        while (null == cnc)
        {
            checkAlive();
            CncReader mapped = CncReader.mapIfReady(file);
            if (null != mapped && mapped.managerPid() != process.pid())
            {
                // A killed process's CnC file stays until the next process replaces it: mapping it would read the
                // dead process's counters as the new one's.
                CloseHelper.quietClose(mapped);
                mapped = null;
            }
            synchronized (this)
            {
                cnc = mapped;
            }
            if (null == mapped)
            {
                if (System.nanoTime() - deadlineNs > 0)
                {
                    throw failure("not ready in " + TimeUnit.NANOSECONDS.toSeconds(START_TIMEOUT_NS) + " s");
                }
                LockSupport.parkNanos(POLL_NS);
            }
        }
    }

    void awaitCounter(final CounterDescriptor counter, final LongPredicate condition, final long timeoutNs)
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

    synchronized long counter(final CounterDescriptor counter)
    {
        return null == cnc ? 0 : cnc.countersReader().getCounterValue(counter.fixedId());
    }

    /**
     * Every allocated counter by label (the first of a label wins).
     *
     * @return label to value; empty while the CnC file is not mapped.
     */
    synchronized Map<String, Long> counters()
    {
        final Map<String, Long> all = new LinkedHashMap<>();
        if (null == cnc)
        {
            return all;
        }
        final CountersReader counters = cnc.countersReader();
        counters.forEach((counterId, typeId, keyBuffer, label) ->
            all.putIfAbsent(label, counters.getCounterValue(counterId)));
        return all;
    }

    /**
     * @return the mapped counters; only once {@link #awaitReady} returned.
     */
    synchronized CountersReader countersReader()
    {
        return cnc.countersReader();
    }

    /**
     * Every counter of this Manager that is not zero, one per line, for a failure's evidence.
     *
     * @return the lines, or a note when the CnC file is not mapped.
     */
    synchronized String nonZeroCounters()
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

    /**
     * SIGKILL the process, keep what its counters last said (see {@link #retiredCounters}) and forget its CnC file.
     */
    void kill() throws InterruptedException
    {
        process.destroyForcibly().waitFor();
        retire();
    }

    /**
     * Stop the process as an operator would (SIGTERM, SIGKILL after {@link BenchTools#STOP_TIMEOUT_SECS}), keep what
     * its counters last said (see {@link #retiredCounters}) and forget its CnC file.
     */
    void stop()
    {
        BenchTools.stop(process);
        retire();
    }

    /**
     * The exited process's counters are read from the CnC file still mapped: the mapping outlives the process (and the
     * file's deletion by the Manager's close or by the next start), so nothing it counted up to its end is lost.
     */
    private synchronized void retire()
    {
        if (null != cnc)
        {
            retired.add(counters());
            CloseHelper.quietClose(cnc);
            cnc = null;
        }
    }

    /**
     * The counters of each earlier process of this Manager (one per {@link #kill} or {@link #stop} of a ready process),
     * as they stood when it had exited, oldest first; the running process's are {@link #counters()}.
     *
     * @return a copy.
     */
    synchronized List<Map<String, Long>> retiredCounters()
    {
        return new ArrayList<>(retired);
    }

    /**
     * Start the process again with the same flags.
     *
     * @throws IOException when it cannot be started.
     */
    void restart() throws IOException
    {
        launch();
    }

    /**
     * @return the pid the mapped CnC file names, or -1 while none is mapped.
     */
    synchronized long mappedManagerPid()
    {
        return null == cnc ? -1 : cnc.managerPid();
    }

    String nodeId()
    {
        return nodeId;
    }

    Path dir()
    {
        return dir;
    }

    long pid()
    {
        return process.pid();
    }

    boolean isAlive()
    {
        return process.isAlive();
    }

    void checkAlive()
    {
        if (!process.isAlive())
        {
            throw failure("exited with " + process.exitValue());
        }
    }

    IllegalStateException failure(final String what)
    {
        return new IllegalStateException("Manager " + nodeId + " " + what + "; last lines of " + log + ":" +
            System.lineSeparator() + BenchTools.tail(log, 20));
    }

    public synchronized void close()
    {
        CloseHelper.quietClose(cnc);
        cnc = null;
        BenchTools.stop(process);
    }
}
