package io.orbitkv.transport;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicInteger;

import io.orbitkv.ffm.CallState;
import io.orbitkv.ffm.LibC;

/**
 * What passes between a {@link BuiltinTransport}'s owner and its I/O thread: a ring of commands one way, a ring of
 * completions the other, and the eventfd that wakes the I/O thread. Both are longs that name a slot of a table the
 * writer filled before publishing them. The owner writes the eventfd only when the I/O thread said it was about to
 * sleep, so a busy transport makes no system call per command.
 */
final class BuiltinHandOver
{
    static final int CMD_READ = 1;
    static final int CMD_EXPORT = 2;
    static final int CMD_REVOKE = 3;
    static final int CMD_CONNECT = 4;
    static final int CMD_CLOSE_PEER = 5;

    static final int EVENT_READ = 1;
    static final int EVENT_REVOKED = 2;

    final LongRing commands;
    final LongRing completions;
    final AtomicInteger ioSleeping = new AtomicInteger();
    final int wakeFd;
    private final Arena arena = Arena.ofShared();
    private final CallState callState = new CallState(arena);
    private final MemorySegment wakeValue;

    /**
     * @throws TransportException when no eventfd is available.
     */
    BuiltinHandOver(final int commandCapacity, final int completionCapacity)
    {
        commands = new LongRing(commandCapacity);
        completions = new LongRing(completionCapacity);
        wakeValue = arena.allocate(ValueLayout.JAVA_LONG);
        wakeValue.set(ValueLayout.JAVA_LONG, 0, 1L);
        wakeFd = LibC.eventfd(callState, 0, LibC.EFD_NONBLOCK | LibC.EFD_CLOEXEC);
        if (wakeFd < 0)
        {
            arena.close();
            throw new TransportException("eventfd failed, errno " + callState.errno());
        }
    }

    static long command(final int type, final int aux, final int index)
    {
        return ((long)type << 56) | ((long)(aux & 0xFFFFFF) << 32) | (index & 0xFFFFFFFFL);
    }

    static int commandType(final long command)
    {
        return (int)(command >>> 56);
    }

    static int commandAux(final long command)
    {
        return (int)(command >>> 32) & 0xFFFFFF;
    }

    static int commandIndex(final long command)
    {
        return (int)command;
    }

    static long completion(final int kind, final int status, final int slot, final long bytes)
    {
        return ((long)kind << 60) | ((long)status << 56) | ((long)(slot & 0xFFFFFF) << 32) | (bytes & 0xFFFFFFFFL);
    }

    static int completionKind(final long completion)
    {
        return (int)(completion >>> 60);
    }

    static int completionStatus(final long completion)
    {
        return (int)(completion >>> 56) & 0xF;
    }

    static int completionSlot(final long completion)
    {
        return (int)(completion >>> 32) & 0xFFFFFF;
    }

    static long completionBytes(final long completion)
    {
        return completion & 0xFFFFFFFFL;
    }

    /**
     * Publish a control command. The ring is sized for every slot's command, so waiting here means the I/O thread
     * is about to take one; it never waits on the owner.
     */
    void offerControl(final long command)
    {
        while (!commands.offer(command))
        {
            wake();
            Thread.onSpinWait();
        }
        wake();
    }

    /**
     * Publish a read command.
     *
     * @return false when the ring is full (back-pressure: nothing was published).
     */
    boolean offerRead(final long command)
    {
        if (!commands.offer(command))
        {
            return false;
        }
        wake();
        return true;
    }

    void wake()
    {
        // Pairs with the I/O thread's store of ioSleeping before it re-reads the command ring.
        VarHandle.fullFence();
        if (0 != ioSleeping.get() && 0 != ioSleeping.getAndSet(0))
        {
            // No errno: a failed wake (the counter saturated) still leaves the I/O thread readable.
            LibC.writeNoErrno(wakeFd, wakeValue, Long.BYTES);
        }
    }

    /**
     * Wake the I/O thread whether or not it said it sleeps: it is told to stop.
     */
    void wakeToStop()
    {
        LibC.write(callState, wakeFd, wakeValue, Long.BYTES);
    }

    void close()
    {
        LibC.close(callState, wakeFd);
        arena.close();
    }
}
