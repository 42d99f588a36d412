package io.orbitkv.transport;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Loopback throughput of two {@link BuiltinTransport}s in this JVM, for a bench command to call: reads of one size
 * kept {@code depth} deep for a while, every read from the same exported range into its own slot of local memory.
 * The polling thread yields when it finds nothing, as an agent's idle strategy would: on a two-core box a thread
 * spinning in poll takes the core one of the two I/O threads needs.
 */
final class BuiltinThroughput
{
    private static final long SESSION = 1;
    private static final long TOKEN = 2;

    private BuiltinThroughput()
    {
    }

    /**
     * @param streams    streams per peer.
     * @param readBytes  bytes per read.
     * @param depth      reads kept in flight.
     * @param durationNs how long to measure, after a warm-up of the same length.
     * @return payload bytes per second over the measured window.
     */
    static double bytesPerSecond(final int streams, final int readBytes, final int depth, final long durationNs)
    {
        return bytesPerSecond(streams, readBytes, depth, durationNs, null);
    }

    /**
     * The same over TLS when {@code tls} is not null.
     */
    static double bytesPerSecond(
        final int streams, final int readBytes, final int depth, final long durationNs, final TransportTls tls)
    {
        try (Arena arena = Arena.ofShared();
            BuiltinTransport source = new BuiltinTransport(new BuiltinTransport.Context().tls(tls));
            BuiltinTransport requester = new BuiltinTransport(new BuiltinTransport.Context().tls(tls)
                .streamsPerPeer(streams)))
        {
            final MemorySegment pool = arena.allocate(readBytes, 4096);
            final MemorySegment local = arena.allocate((long)readBytes * depth, 4096);
            source.registerMemory(pool.address(), pool.byteSize());
            requester.registerMemory(local.address(), local.byteSize());
            if (!source.export(SESSION, TOKEN, new long[]{pool.address()}, new int[]{readBytes}, 1))
            {
                throw new IllegalStateException("export refused");
            }
            final int peer = requester.peer(source.localEndpoint());
            final long[] done = new long[1];
            final int[] failures = new int[1];
            final TransportListener listener = new TransportListener()
            {
                @Override
                public void onReadComplete(final long requestId, final int status, final long bytes)
                {
                    done[0]++;
                    failures[0] += TransportStatus.OK == status ? 0 : 1;
                    if (!requester.submitRead(peer, SESSION, TOKEN, pool.address(),
                        local.address() + requestId * readBytes, readBytes, requestId))
                    {
                        throw new IllegalStateException("back-pressured at depth " + depth);
                    }
                }

                @Override
                public void onRevoked(final long sessionId)
                {
                }
            };
            for (int i = 0; i < depth; i++)
            {
                requester.submitRead(peer, SESSION, TOKEN, pool.address(), local.address() + (long)i * readBytes, readBytes, i);
            }
            final long warmUntilNs = System.nanoTime() + durationNs;
            while (System.nanoTime() - warmUntilNs < 0)
            {
                if (0 == requester.poll(listener, 16))
                {
                    Thread.yield();
                }
            }
            final long startDone = done[0];
            final long startNs = System.nanoTime();
            final long endNs = startNs + durationNs;
            while (System.nanoTime() - endNs < 0)
            {
                if (0 == requester.poll(listener, 16))
                {
                    Thread.yield();
                }
            }
            final long elapsedNs = System.nanoTime() - startNs;
            if (failures[0] > 0)
            {
                throw new IllegalStateException(failures[0] + " reads failed: " + requester.stats());
            }
            return (done[0] - startDone) * (double)readBytes * 1e9 / elapsedNs;
        }
    }
}
