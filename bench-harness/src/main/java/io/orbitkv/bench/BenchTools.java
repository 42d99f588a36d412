package io.orbitkv.bench;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Small helpers the transfer benchmark's parts share: finding tools, stopping processes, rates and medians.
 */
final class BenchTools
{
    /** How long a stopped child may take to exit before it is killed. */
    static final long STOP_TIMEOUT_SECS = 10;

    private BenchTools()
    {
    }

    /**
     * @param name an executable's name.
     * @return its path on PATH, or null when there is none.
     */
    static String onPath(final String name)
    {
        for (final String dir : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(File.pathSeparator))
        {
            final File candidate = new File(dir, name);
            if (candidate.canExecute())
            {
                return candidate.getPath();
            }
        }
        return null;
    }

    /**
     * Ask a child to exit (SIGTERM), then kill it when it has not within {@link #STOP_TIMEOUT_SECS}.
     *
     * @param process a process this bench started, or null.
     */
    static void stop(final Process process)
    {
        if (null == process)
        {
            return;
        }
        process.destroy();
        try
        {
            if (!process.waitFor(STOP_TIMEOUT_SECS, TimeUnit.SECONDS))
            {
                process.destroyForcibly().waitFor();
            }
        }
        catch (final InterruptedException ex)
        {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    /**
     * @param bytes   bytes moved.
     * @param elapsedNs time taken.
     * @return gigabits per second (10^9 bits), as iperf3 counts them.
     */
    static double gbps(final long bytes, final long elapsedNs)
    {
        return bytes * 8.0 / elapsedNs;
    }

    /**
     * @param values samples (not changed).
     * @return the median (the upper one of an even count).
     */
    static double median(final double[] values)
    {
        final double[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }

    /**
     * The last lines of a log, for an error message.
     *
     * @param log   a child's log file.
     * @param lines how many.
     * @return the tail, or a note that it cannot be read.
     */
    static String tail(final File log, final int lines)
    {
        try
        {
            final List<String> all = Files.readAllLines(log.toPath());
            return String.join(System.lineSeparator(), all.subList(Math.max(0, all.size() - lines), all.size()));
        }
        catch (final IOException ex)
        {
            return "(" + log + " unreadable: " + ex.getMessage() + ")";
        }
    }

    /**
     * Where the repository is: {@code $ORBITKV_ROOT}, else the working directory or its parent when one holds the
     * te-ffm module (a bench started from a module directory).
     *
     * @return the root, or the working directory when none is found.
     */
    static Path repoRoot()
    {
        final String env = System.getenv("ORBITKV_ROOT");
        if (null != env)
        {
            return Path.of(env);
        }
        Path dir = Path.of("").toAbsolutePath();
        for (int up = 0; up < 3 && null != dir; up++)
        {
            if (Files.isDirectory(dir.resolve("te-ffm")))
            {
                return dir;
            }
            dir = dir.getParent();
        }
        return Path.of("").toAbsolutePath();
    }
}
