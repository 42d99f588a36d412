package io.orbitkv.manager.idle;

import io.orbitkv.manager.SystemCounterFamilies;
import io.orbitkv.manager.status.CounterDescriptor;
import io.orbitkv.manager.status.SystemCounterDescriptor;
import io.orbitkv.manager.status.SystemCounters;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.orbitkv.client.ManagerDoorbell;
import io.orbitkv.codecs.cnc.CncFileDescriptor;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.agrona.BufferUtil;
import org.agrona.CloseHelper;
import org.agrona.IoUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The doorbell protocol between a sleeping agent and engines, on the real FIFO and a real ring in memory: a request
 * committed before the agent announced its sleep is found by its second look (the engine did not ring), one committed
 * after the announcement rings, only one engine rings per sleep, and requests racing the announcement never wait for
 * the sleep's timeout. The longest sleep is 30 s, so a lost wake-up fails the 5 s deadlines (and, racing, any sleep
 * that runs to its timeout with a request pending fails).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class AgentSleepTest
{
    private static final long LONG_SLEEP_NS = TimeUnit.SECONDS.toNanos(30);
    private static final long DEADLINE_NS = TimeUnit.SECONDS.toNanos(5);
    private static final int RING_CAPACITY = 64 * 1024;
    private static final int RACE_ROUNDS = 400;

    private Path dir;
    private UnsafeBuffer header;
    private ManyToOneRingBuffer ring;
    private SystemCounters counters;
    private Doorbell doorbell;
    private AgentSleep sleep;
    private ManagerDoorbell engine;
    private ManagerDoorbell otherEngine;
    private final AtomicReference<Throwable> errors = new AtomicReference<>();
    private final UnsafeBuffer message = new UnsafeBuffer(new byte[8]);

    @BeforeEach
    void before() throws Exception
    {
        dir = Files.createTempDirectory("agent-sleep-");
        header = new UnsafeBuffer(BufferUtil.allocateDirectAligned(CncFileDescriptor.HEADER_LENGTH, 64));
        ring = new ManyToOneRingBuffer(new UnsafeBuffer(
            BufferUtil.allocateDirectAligned(RING_CAPACITY + RingBufferDescriptor.TRAILER_LENGTH, 64)));
        counters = SystemCounterFamilies.inMemory();
        doorbell = new Doorbell(new File(dir.toFile(), CncFileDescriptor.DOORBELL_FILE_NAME));
        sleep = new AgentSleep(header, ring, doorbell, LONG_SLEEP_NS, null, null, counters, errors::set);
        engine = ManagerDoorbell.open(dir, header);
        otherEngine = ManagerDoorbell.open(dir, header);
    }

    @AfterEach
    void after()
    {
        CloseHelper.quietCloseAll(engine, otherEngine, sleep, doorbell);
        IoUtil.delete(dir.toFile(), true);
        assertEquals(null, errors.get());
    }

    @Test
    void shouldNotSleepWhenARequestWasCommittedBeforeTheAnnouncement()
    {
        assertTrue(ring.write(1, message, 0, message.capacity()));
        assertFalse(engine.wakeIfSleeping(), "the agent was awake: nothing to ring");

        final long startNs = System.nanoTime();
        assertTrue(sleep.sleep(), "the second look finds the request");
        assertTrue(System.nanoTime() - startNs < DEADLINE_NS, "did not wait for the timeout");
        assertEquals(1, value(SystemCounterDescriptor.IDLE_SLEEPS_ABANDONED));
        assertEquals(0, value(SystemCounterDescriptor.IDLE_SLEEPS));
        assertEquals(CncFileDescriptor.AGENT_AWAKE, agentState());
    }

    @Test
    void shouldWakeOnTheDoorbellOfARequestCommittedWhileAsleep() throws Exception
    {
        final AtomicInteger rang = new AtomicInteger();
        final Thread engineThread = new Thread(() ->
        {
            // In epoll: announced, looked again, counted the sleep.
            awaitTrue(() -> 1 == value(SystemCounterDescriptor.IDLE_SLEEPS), "the agent sleeps");
            ring.write(1, message, 0, message.capacity());
            rang.set(engine.wakeIfSleeping() ? 1 : 0);
            rang.addAndGet(otherEngine.wakeIfSleeping() ? 10 : 0);
        });
        engineThread.start();

        final long startNs = System.nanoTime();
        assertTrue(sleep.sleep(), "the doorbell ended the sleep");
        final long sleptNs = System.nanoTime() - startNs;
        engineThread.join();
        assertTrue(sleptNs < DEADLINE_NS, "woken after " + sleptNs + " ns, not by the timeout");
        assertEquals(1, rang.get(), "the first engine rang, the second saw RUNG");
        assertEquals(1, engine.rings());
        assertEquals(0, otherEngine.rings());
        assertEquals(1, value(SystemCounterDescriptor.IDLE_DOORBELL_WAKEUPS));
        assertEquals(1, value(SystemCounterDescriptor.IDLE_DOORBELL_BYTES), "one byte per sleep, drained");
        assertEquals(CncFileDescriptor.AGENT_AWAKE, agentState());
    }

    @Test
    void shouldEndANapOnTheDoorbellOfARequestCommittedWhileParkedWithoutCountingASleep() throws Exception
    {
        final AtomicInteger rang = new AtomicInteger();
        final Thread engineThread = new Thread(() ->
        {
            // A nap announces itself like a sleep: the engine that commits a request meanwhile sees it and rings.
            awaitTrue(() -> CncFileDescriptor.AGENT_SLEEPING == agentState(), "the agent naps");
            ring.write(1, message, 0, message.capacity());
            rang.set(engine.wakeIfSleeping() ? 1 : 0);
        });
        engineThread.start();

        final long startNs = System.nanoTime();
        assertTrue(sleep.nap(LONG_SLEEP_NS), "the doorbell ended the nap");
        final long nappedNs = System.nanoTime() - startNs;
        engineThread.join();
        assertTrue(nappedNs < DEADLINE_NS, "woken after " + nappedNs + " ns, not by the timeout");
        assertEquals(1, rang.get(), "the engine rang the napping agent");
        assertEquals(1, value(SystemCounterDescriptor.IDLE_DOORBELL_WAKEUPS));
        assertEquals(0, value(SystemCounterDescriptor.IDLE_SLEEPS), "a nap is not a sleep");
        assertEquals(CncFileDescriptor.AGENT_AWAKE, agentState());

        // A short nap with nothing to end it lasts its timeout, not the longest sleep.
        final long shortStartNs = System.nanoTime();
        doorbell.drain();
        ring.read((msgTypeId, buffer, index, length) -> {}, 16);
        assertFalse(sleep.nap(TimeUnit.MILLISECONDS.toNanos(1)), "nothing ended the nap");
        assertTrue(System.nanoTime() - shortStartNs < DEADLINE_NS, "the nap kept to its timeout");
    }

    @Test
    void shouldNeverLeaveARequestWaitingForTheTimeoutWhenItRacesTheAnnouncement() throws Exception
    {
        final AtomicInteger go = new AtomicInteger(-1);
        final Thread engineThread = new Thread(() ->
        {
            for (int round = 0; round < RACE_ROUNDS; round++)
            {
                final int expected = round;
                awaitTrue(() -> go.get() == expected, "round " + expected + " started");
                // Land anywhere from before the agent's last empty read, through its announcement (a few
                // microseconds after the round starts), to well inside its sleep.
                final int spins = ThreadLocalRandom.current().nextInt(ThreadLocalRandom.current().nextBoolean() ? 200 : 20_000);
                for (int i = 0; i < spins; i++)
                {
                    Thread.onSpinWait();
                }
                message.putInt(0, round);
                while (!ring.write(1, message, 0, message.capacity()))
                {
                    Thread.onSpinWait();
                }
                engine.wakeIfSleeping();
            }
        });
        engineThread.setDaemon(true);
        engineThread.start();

        final int[] received = {0};
        for (int round = 0; round < RACE_ROUNDS; round++)
        {
            go.set(round);
            while (0 == ring.read((type, buffer, index, length) -> received[0]++))
            {
                // Only a doorbell or the second look ends a sleep here: one that times out missed this round's request.
                if (!sleep.sleep())
                {
                    fail("round " + round + ": a sleep ran to its timeout with a request pending (lost wake-up)");
                }
            }
        }
        engineThread.join(TimeUnit.NANOSECONDS.toMillis(DEADLINE_NS));
        assertEquals(RACE_ROUNDS, received[0]);
        System.out.println("race: sleeps " + value(SystemCounterDescriptor.IDLE_SLEEPS) + ", abandoned " +
            value(SystemCounterDescriptor.IDLE_SLEEPS_ABANDONED) + ", doorbell wake-ups " +
            value(SystemCounterDescriptor.IDLE_DOORBELL_WAKEUPS) + ", rings " + engine.rings());
    }

    private int agentState()
    {
        return header.getIntVolatile(CncFileDescriptor.AGENT_STATE_OFFSET);
    }

    private long value(final CounterDescriptor descriptor)
    {
        return counters.get(descriptor).get();
    }

    private static void awaitTrue(final BooleanSupplier condition, final String what)
    {
        final long deadlineNs = System.nanoTime() + LONG_SLEEP_NS;
        while (!condition.getAsBoolean())
        {
            if (System.nanoTime() - deadlineNs > 0)
            {
                throw new AssertionError("timed out waiting until " + what);
            }
            Thread.onSpinWait();
        }
    }
}
