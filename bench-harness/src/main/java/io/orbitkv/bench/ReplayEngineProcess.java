package io.orbitkv.bench;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.File;
import java.io.IOException;
import java.nio.MappedByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import org.agrona.IoUtil;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The coordinator's side of one {@link ReplayEngine} process: starts it with this JVM's java binary, class path and
 * flags (as {@link BenchManager} starts Managers), sends it request indices on its stdin (the engine reads the same
 * trace), keeps at most {@link #IN_FLIGHT} of them outstanding, and records what it answers on its stdout into the
 * replay's {@link ReplayOutcomes}. Whether its Manager is up is the first word of a small memory-mapped control file.
 * An engine that exits, or stops answering for {@link #STALL_NS}, fails the replay with its log's last lines.
 *
 * <p>The records, big-endian: to the engine, an {@code int} request index or {@link #END}; from it, first
 * {@link #HELLO}, its pid ({@code long}) and the requests it read ({@code int}), then per request its index,
 * local DRAM, local SSD and peer blocks ({@code int} each), restore and service time in ns and wrong bytes
 * ({@code long} each) and whether it was recomputed without its Manager ({@code boolean}); {@link #END} last.
 */
final class ReplayEngineProcess implements AutoCloseable
{
    /** Ends the requests (to the engine) and the outcomes (from it). */
    static final int END = -1;
    /** The engine's first record, once it has read the trace and attached. */
    static final int HELLO = 0x52504C59;
    /** Offset of the Manager-up word in the control file (1 up, 0 down). */
    static final int MANAGER_UP_OFFSET = 0;
    /** Requests outstanding per engine: the one it serves and {@link ReplayBench#QUEUE_DEPTH} queued behind it. */
    static final int IN_FLIGHT = ReplayBench.QUEUE_DEPTH + 1;
    /** How long an engine may take to start, read the trace and attach. */
    static final long START_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(60);
    /**
     * How long an engine may leave its oldest request unanswered before the replay fails: a few of its Manager's
     * answer timeouts, so a killed Manager (each call times out once) never trips it.
     */
    static final long STALL_NS = 6 * ReplayEngine.RESPONSE_TIMEOUT_NS;

    private static final int CONTROL_BYTES = 64;
    private static final long POLL_NS = TimeUnit.MILLISECONDS.toNanos(10);

    private final int host;
    private final String nodeId;
    private final File log;
    private final File controlFile;
    private final MappedByteBuffer controlMapping;
    private final UnsafeBuffer control;
    private final Process process;
    private final DataOutputStream toEngine;
    private final List<ReplayTrace.Request> requests;
    private final ReplayOutcomes outcomes;
    private final Thread reader;
    private final AtomicInteger inFlight = new AtomicInteger();
    private volatile long reportedPid;
    private volatile boolean ready;
    private volatile boolean ended;
    private volatile String error;
    private volatile Thread waiter;
    private volatile long lastAnswerNs = System.nanoTime();
    private boolean aliveAtLastDispatch;

    private ReplayEngineProcess(
        final int host,
        final String nodeId,
        final File log,
        final File controlFile,
        final MappedByteBuffer controlMapping,
        final Process process,
        final List<ReplayTrace.Request> requests,
        final ReplayOutcomes outcomes)
    {
        this.host = host;
        this.nodeId = nodeId;
        this.log = log;
        this.controlFile = controlFile;
        this.controlMapping = controlMapping;
        this.control = new UnsafeBuffer(controlMapping);
        this.process = process;
        this.toEngine = new DataOutputStream(new BufferedOutputStream(process.getOutputStream(), 1 << 12));
        this.requests = requests;
        this.outcomes = outcomes;
        this.reader = new Thread(this::readOutcomes, "replay-engine-reader-" + nodeId);
        this.reader.setDaemon(true);
    }

    /**
     * Start the engine of one Manager; it is not attached yet (see {@link #awaitReady}).
     *
     * @param host       the Manager's index.
     * @param nodeId     the Manager's node id.
     * @param managerDir the directory of the Manager it attaches to.
     * @param workDir    where its control file and log go.
     * @param blockBytes bytes per block.
     * @param maxChain   the trace's longest chain (the engine checks it read the same).
     * @param peers      lookups and reads carry the peers flag.
     * @param trace      the trace file and the number of requests read from it ({@code 0}: all).
     * @param limit      requests read from the trace.
     * @param requests   the requests the coordinator read.
     * @param outcomes   where the engine's answers go.
     * @return the started engine.
     * @throws IOException when it cannot be started.
     */
    static ReplayEngineProcess start(
        final int host,
        final String nodeId,
        final Path managerDir,
        final Path workDir,
        final int blockBytes,
        final int maxChain,
        final boolean peers,
        final Path trace,
        final int limit,
        final List<ReplayTrace.Request> requests,
        final ReplayOutcomes outcomes) throws IOException
    {
        final File controlFile = workDir.resolve("engine-" + nodeId + ".control").toFile();
        final MappedByteBuffer mapping = IoUtil.mapNewFile(controlFile, CONTROL_BYTES);
        new UnsafeBuffer(mapping).putIntVolatile(MANAGER_UP_OFFSET, 1);
        final File log = workDir.resolve("engine-" + nodeId + ".log").toFile();
        final List<String> args = List.of(Integer.toString(host), managerDir.toString(), controlFile.toString(),
            Integer.toString(blockBytes), Integer.toString(maxChain), Boolean.toString(peers), trace.toString(),
            Integer.toString(limit));
        final Process process;
        try
        {
            process = new ProcessBuilder(ChildJvm.command(List.of("-Xmx256m"), ReplayEngine.class, args))
                .redirectError(ProcessBuilder.Redirect.appendTo(log))
                .start();
        }
        catch (final IOException ex)
        {
            IoUtil.unmap(mapping);
            throw ex;
        }
        final ReplayEngineProcess engine = new ReplayEngineProcess(host, nodeId, log, controlFile, mapping, process,
            requests, outcomes);
        engine.reader.start();
        return engine;
    }

    /**
     * Wait until the engine has read the trace and attached to its Manager.
     */
    void awaitReady()
    {
        final long deadlineNs = System.nanoTime() + START_TIMEOUT_NS;
        while (!ready)
        {
            checkRunning();
            if (System.nanoTime() - deadlineNs > 0)
            {
                throw failure("not attached in " + TimeUnit.NANOSECONDS.toSeconds(START_TIMEOUT_NS) + " s");
            }
            LockSupport.parkNanos(POLL_NS);
        }
    }

    /**
     * Send one request, waiting while {@link #IN_FLIGHT} are outstanding.
     *
     * @param index the request's index in the trace.
     */
    void dispatch(final int index)
    {
        waitForInFlightBelow(IN_FLIGHT);
        inFlight.incrementAndGet();
        try
        {
            toEngine.writeInt(index);
            toEngine.flush();
        }
        catch (final IOException ex)
        {
            checkRunning();
            throw failure("refused request " + index + ": " + ex);
        }
        aliveAtLastDispatch = process.isAlive();
    }

    private void waitForInFlightBelow(final int limit)
    {
        waiter = Thread.currentThread();
        try
        {
            while (inFlight.get() >= limit)
            {
                checkRunning();
                if (System.nanoTime() - lastAnswerNs - STALL_NS > 0)
                {
                    throw failure("answered nothing for " + TimeUnit.NANOSECONDS.toSeconds(STALL_NS) + " s with " +
                        inFlight.get() + " requests outstanding");
                }
                LockSupport.parkNanos(POLL_NS);
            }
        }
        finally
        {
            waiter = null;
        }
    }

    /**
     * Say whether the Manager is there; while it is not, the engine recomputes its requests without asking it.
     *
     * @param up whether it is up (ready).
     */
    void managerUp(final boolean up)
    {
        control.putIntVolatile(MANAGER_UP_OFFSET, up ? 1 : 0);
    }

    /**
     * Send the end, wait for every outstanding answer and for the process to exit 0.
     */
    void finish()
    {
        waitForInFlightBelow(1);
        try
        {
            toEngine.writeInt(END);
            toEngine.flush();
        }
        catch (final IOException ex)
        {
            checkRunning();
            throw failure("refused the end: " + ex);
        }
        final long deadlineNs = System.nanoTime() + STALL_NS;
        while (!ended || process.isAlive())
        {
            checkRunning();
            if (System.nanoTime() - deadlineNs > 0)
            {
                throw failure("did not end in " + TimeUnit.NANOSECONDS.toSeconds(STALL_NS) + " s");
            }
            LockSupport.parkNanos(POLL_NS);
        }
        if (0 != process.exitValue())
        {
            throw failure("exited with " + process.exitValue() + " after the end");
        }
    }

    private void checkRunning()
    {
        final String why = error;
        if (null != why)
        {
            throw failure(why);
        }
        if (!ended && !process.isAlive())
        {
            throw failure("exited with " + process.exitValue() + " while the replay ran");
        }
    }

    private IllegalStateException failure(final String what)
    {
        return new IllegalStateException("engine process of Manager " + nodeId + " (pid " + process.pid() + ") " +
            what + "; last lines of " + log + ":" + System.lineSeparator() + BenchTools.tail(log, 20));
    }

    private void readOutcomes()
    {
        try (DataInputStream in = new DataInputStream(new BufferedInputStream(process.getInputStream(), 1 << 16)))
        {
            if (HELLO != in.readInt())
            {
                error = "sent no hello";
                return;
            }
            reportedPid = in.readLong();
            final int count = in.readInt();
            if (count != requests.size())
            {
                error = "read " + count + " requests of the trace, the coordinator " + requests.size();
                return;
            }
            ready = true;
            while (true)
            {
                final int index = in.readInt();
                if (END == index)
                {
                    ended = true;
                    return;
                }
                final int dram = in.readInt();
                final int ssd = in.readInt();
                final int peer = in.readInt();
                final long restoreNs = in.readLong();
                final long serviceNs = in.readLong();
                final long wrong = in.readLong();
                final boolean unserved = in.readBoolean();
                if (index < 0 || index >= requests.size())
                {
                    error = "answered for request " + index + ", not in the trace";
                    return;
                }
                outcomes.record(requests.get(index), host, dram, ssd, peer, restoreNs, serviceNs, wrong, unserved);
                lastAnswerNs = System.nanoTime();
                inFlight.decrementAndGet();
                final Thread t = waiter;
                if (null != t)
                {
                    LockSupport.unpark(t);
                }
            }
        }
        catch (final EOFException ex)
        {
            error = exitedOrNot("closed its output before the end");
        }
        catch (final IOException ex)
        {
            error = "output unreadable: " + ex;
        }
    }

    private String exitedOrNot(final String what)
    {
        try
        {
            if (process.waitFor(BenchTools.STOP_TIMEOUT_SECS, TimeUnit.SECONDS))
            {
                return what + ": exited with " + process.exitValue();
            }
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        return what + " and is still running";
    }

    long pid()
    {
        return process.pid();
    }

    boolean isAlive()
    {
        return process.isAlive();
    }

    /**
     * What the figures report of this engine process.
     *
     * @return its pid as started and as it reported it, whether it was alive when it was sent its last request, and its
     * exit code (or null while it runs).
     */
    Map<String, Object> describe()
    {
        final Map<String, Object> d = new LinkedHashMap<>();
        d.put("manager", nodeId);
        d.put("pid", process.pid());
        d.put("reportedPid", reportedPid);
        d.put("aliveAtLastDispatch", aliveAtLastDispatch);
        d.put("exitCode", process.isAlive() ? null : process.exitValue());
        return d;
    }

    static List<Map<String, Object>> describeAll(final List<ReplayEngineProcess> engines)
    {
        final List<Map<String, Object>> all = new ArrayList<>();
        for (final ReplayEngineProcess e : engines)
        {
            all.add(e.describe());
        }
        return all;
    }

    public void close()
    {
        if (process.isAlive())
        {
            process.destroyForcibly();
            try
            {
                process.waitFor(BenchTools.STOP_TIMEOUT_SECS, TimeUnit.SECONDS);
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
        }
        IoUtil.unmap(controlMapping);
        IoUtil.deleteIfExists(controlFile);
    }
}
