package io.orbitkv.manager;

import io.orbitkv.manager.status.CncReader;
import io.orbitkv.manager.status.CounterDescriptor;
import io.orbitkv.manager.status.SystemCounterDescriptor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.agrona.IoUtil;
import org.agrona.concurrent.YieldingIdleStrategy;

/**
 * Shared set-up: a Manager in-process on a fresh directory under /dev/shm with a small pool and a
 * yielding idle strategy (tests must pass on 2 cores), and polling with deadlines instead of sleeps.
 */
public final class ManagerTestSupport
{
    static final long POLL_DEADLINE_NS = TimeUnit.SECONDS.toNanos(10);

    private ManagerTestSupport()
    {
    }

    public static File newDir()
    {
        final File parent = new File("/dev/shm").isDirectory() ? new File("/dev/shm") : new File(System.getProperty("java.io.tmpdir"));
        return new File(parent, "orbitkv-test-" + UUID.randomUUID());
    }

    static ManagerContext smallContext(final File dir)
    {
        return new ManagerContext()
            .dir(dir)
            .poolBytes(8L << 20)
            .maxBlockBytes(1 << 20)
            .indexBudgetBytes(1L << 20)
            .maxClients(8)
            .responseRingBytes(Configuration.MIN_RESPONSE_RING_BYTES)
            .maxDataRegionBytes(64L << 20)
            .copyChunkBytes(64 << 10)
            .idleStrategy(new YieldingIdleStrategy())
            .agentThreadFactory(new AgentThreadRecorder());
    }

    /**
     * The thread running a Manager's agents, kept by the thread factory its context was given in
     * {@link #smallContext}: there from launch on, whether or not the thread has begun to run.
     */
    static Thread agentThread(final Manager manager)
    {
        if (manager.context().agentThreadFactory() instanceof AgentThreadRecorder recorder)
        {
            return recorder.thread;
        }
        throw new IllegalStateException("the Manager's context was not made by smallContext");
    }

    /**
     * Makes the agent thread and keeps it for {@link #agentThread}.
     */
    static final class AgentThreadRecorder implements java.util.concurrent.ThreadFactory
    {
        private volatile Thread thread;

        public Thread newThread(final Runnable runnable)
        {
            final Thread made = new Thread(runnable);
            thread = made;
            return made;
        }
    }

    /**
     * Test teardown: fail if the Manager logged internal errors (unless the test provoked them), then close it and
     * delete its directory whatever the check found.
     */
    static void closeCheckingErrors(final Manager manager, final File dir, final boolean errorsExpected)
    {
        try
        {
            if (null != manager && !errorsExpected)
            {
                final long errors = manager.counter(SystemCounterDescriptor.ERRORS);
                assertEquals(0, errors, () -> "unexpected internal errors:\n" + errorLog(manager));
            }
        }
        finally
        {
            if (null != manager)
            {
                manager.close();
            }
            deleteDir(dir);
        }
    }

    public static void deleteDir(final File dir)
    {
        if (null != dir && dir.exists())
        {
            IoUtil.delete(dir, true);
        }
    }

    static void awaitTrue(final BooleanSupplier condition, final Supplier<String> message)
    {
        final long deadline = System.nanoTime() + POLL_DEADLINE_NS;
        while (!condition.getAsBoolean())
        {
            if (System.nanoTime() > deadline)
            {
                fail("timed out: " + message.get());
            }
            Thread.yield();
        }
    }

    static void awaitCounter(final Manager manager, final CounterDescriptor counter, final long expected)
    {
        awaitTrue(
            () -> manager.counter(counter) == expected,
            () -> counter.label() + " expected " + expected + " but was " + manager.counter(counter));
    }

    static String errorLog(final Manager manager)
    {
        try (CncReader reader = CncReader.map(manager.cncFile()))
        {
            final StringBuilder text = new StringBuilder();
            reader.readErrors((count, first, last, encoded) -> text.append(count).append(" x ").append(encoded).append('\n'));
            return text.toString();
        }
    }
}
