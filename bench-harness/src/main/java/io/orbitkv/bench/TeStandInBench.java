package io.orbitkv.bench;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import io.orbitkv.transport.TransportListener;
import io.orbitkv.transport.TransportStatus;
import io.orbitkv.transport.mooncake.MooncakeTransport;

/**
 * The Mooncake TE binding for comparison: two {@link MooncakeTransport}s in this JVM over loopback, loaded with the C
 * stand-in of the TE ABI that te-ffm's build compiles (not Mooncake: its TCP path is a simple one of its own). The
 * requester reads the source's registered blocks by their absolute addresses, as a Manager's fetcher would, keeping
 * as many reads in flight as the transport takes.
 */
final class TeStandInBench implements TransportListener
{
    /** Where te-ffm's build puts the stand-in, relative to the repository root. */
    static final String STAND_IN_PATH = "te-ffm/target/test-classes/libfake_transfer_engine.so";

    private static final long SESSION_ID = 1;
    private static final long TOKEN = 0x5EEDL;

    private final Path library;
    private final int blockBytes;
    private final int blocks;
    private final long stallNs;
    private int completed;
    private int failed;

    TeStandInBench(final Path library, final int blockBytes, final int blocks, final long stallNs)
    {
        this.library = library;
        this.blockBytes = blockBytes;
        this.blocks = blocks;
        this.stallNs = stallNs;
    }

    /**
     * Read every block once per round, the first round unrecorded and checked byte for byte.
     *
     * @param rounds recorded rounds.
     * @return Gb/s of each recorded round.
     */
    double[] run(final int rounds)
    {
        final long bytes = (long)blockBytes * blocks;
        final double[] gbps = new double[rounds];
        try (Arena arena = Arena.ofShared();
            MooncakeTransport source = new MooncakeTransport(context());
            MooncakeTransport requester = new MooncakeTransport(context()))
        {
            final MemorySegment pool = arena.allocate(bytes, 4096);
            final MemorySegment staging = arena.allocate(bytes, 4096);
            for (long i = 0; i < bytes; i += Long.BYTES)
            {
                pool.set(ValueLayout.JAVA_LONG_UNALIGNED, i, i * 0x9E3779B97F4A7C15L);
            }
            source.registerMemory(pool.address(), bytes);
            requester.registerMemory(staging.address(), bytes);
            final long[] addresses = new long[blocks];
            final int[] lengths = new int[blocks];
            for (int b = 0; b < blocks; b++)
            {
                addresses[b] = pool.address() + (long)b * blockBytes;
                lengths[b] = blockBytes;
            }
            if (!source.export(SESSION_ID, TOKEN, addresses, lengths, blocks))
            {
                throw new IllegalStateException("TE stand-in: the source refused to export " + blocks + " ranges");
            }
            final int peer = requester.peer(source.localEndpoint());
            if (peer < 0)
            {
                throw new IllegalStateException("TE stand-in: cannot reach " + source.localEndpoint());
            }
            for (int r = -1; r < rounds; r++)
            {
                final long t0 = System.nanoTime();
                readAll(source, requester, peer, pool, staging);
                final long elapsedNs = System.nanoTime() - t0;
                if (r < 0)
                {
                    if (pool.mismatch(staging) >= 0)
                    {
                        throw new IllegalStateException("TE stand-in: the bytes read differ from the source's at " +
                            pool.mismatch(staging));
                    }
                }
                else
                {
                    gbps[r] = BenchTools.gbps(bytes, elapsedNs);
                }
            }
        }
        return gbps;
    }

    private void readAll(
        final MooncakeTransport source,
        final MooncakeTransport requester,
        final int peer,
        final MemorySegment pool,
        final MemorySegment staging)
    {
        completed = 0;
        failed = 0;
        int submitted = 0;
        final StallDeadline stall = new StallDeadline(stallNs, 0, System.nanoTime());
        while (completed < blocks)
        {
            while (submitted < blocks && requester.submitRead(peer, SESSION_ID, TOKEN,
                pool.address() + (long)submitted * blockBytes, staging.address() + (long)submitted * blockBytes,
                blockBytes, submitted))
            {
                submitted++;
            }
            final int events = requester.poll(this, blocks) + source.poll(this, blocks);
            if (failed > 0)
            {
                throw new IllegalStateException("TE stand-in: " + failed + " reads failed");
            }
            if (stall.stalled(completed, System.nanoTime()))
            {
                throw new IllegalStateException("TE stand-in: no read completed for " +
                    TimeUnit.NANOSECONDS.toSeconds(stallNs) + " s (" + completed + " of " + blocks + ")");
            }
            if (0 == events)
            {
                Thread.yield();
            }
        }
    }

    private MooncakeTransport.Context context()
    {
        return new MooncakeTransport.Context().libraryPath(library).host("127.0.0.1");
    }

    public void onReadComplete(final long requestId, final int status, final long bytes)
    {
        if (TransportStatus.OK == status && blockBytes == bytes)
        {
            completed++;
        }
        else
        {
            completed++;
            failed++;
        }
    }

    public void onRevoked(final long sessionId)
    {
    }
}
