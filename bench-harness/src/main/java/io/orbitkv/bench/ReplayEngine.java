package io.orbitkv.bench;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.orbitkv.client.EngineClient;
import io.orbitkv.client.KeyBatch;
import io.orbitkv.client.OperationResult;
import io.orbitkv.codecs.engine.KeyStatus;
import org.agrona.CloseHelper;
import org.agrona.IoUtil;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The engine of one Manager in the replay, a process of its own ({@link ReplayEngineProcess} starts it). It reads the
 * trace itself and takes request indices on its stdin; for each, a Lookup of the chain with the pin flag (and the
 * peers flag unless the mode is isolated), a Read of what was found through the lookup's leases, a check of every
 * restored byte against the contents the block's hash id implies, then a Publish of the blocks after the restored
 * prefix (written from their ids, as an engine would write the KV it recomputed). What each request found goes back on
 * its stdout (see {@link ReplayEngineProcess} for the records). A Manager that goes away (a killed process) turns its
 * requests into recomputes until it is back, then the engine attaches again; whether the Manager is up is a word of
 * the control file the coordinator writes, read before each request, so requests already queued see it at once.
 */
final class ReplayEngine
{
    /** The engine's wait for one answer. */
    static final long RESPONSE_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(10);

    private static final byte[] NAMESPACE = "bench/replay".getBytes(StandardCharsets.US_ASCII);
    private static final long GOLDEN = 0x9E3779B97F4A7C15L;

    private final int host;
    private final Path managerDir;
    private final int blockBytes;
    private final boolean peers;
    private final List<ReplayTrace.Request> requests;
    private final UnsafeBuffer control;
    private final DataOutputStream out;
    private final KeyBatch batch = new KeyBatch(ReplayTrace.MAX_CHAIN).namespace(NAMESPACE);
    private final KeyBatch publishBatch = new KeyBatch(ReplayTrace.MAX_CHAIN).namespace(NAMESPACE);
    private final OperationResult leases = new OperationResult(ReplayTrace.MAX_CHAIN);
    private final OperationResult read = new OperationResult(ReplayTrace.MAX_CHAIN);
    private final OperationResult published = new OperationResult(ReplayTrace.MAX_CHAIN);
    private final byte[] hash = new byte[32];
    private final long regionBytes;
    private EngineClient client;

    private ReplayEngine(
        final int host,
        final Path managerDir,
        final int blockBytes,
        final int maxChain,
        final boolean peers,
        final List<ReplayTrace.Request> requests,
        final UnsafeBuffer control,
        final DataOutputStream out)
    {
        this.host = host;
        this.managerDir = managerDir;
        this.blockBytes = blockBytes;
        this.peers = peers;
        this.requests = requests;
        this.control = control;
        this.out = out;
        this.regionBytes = (long)Math.max(1, maxChain) * blockBytes;
    }

    /**
     * The engine process: {@code host managerDir controlFile blockBytes maxChain peers(true|false) trace requests}.
     * Exits 0 after the end record, 1 with the reason on stderr when the trace does not match what the coordinator
     * read or the first attach fails.
     *
     * @param args as above.
     */
    public static void main(final String[] args) throws IOException
    {
        // stdout carries the records; anything else printed goes to stderr (the engine's log).
        final DataOutputStream out = new DataOutputStream(new BufferedOutputStream(
            new FileOutputStream(FileDescriptor.out), 1 << 16));
        System.setOut(new PrintStream(new FileOutputStream(FileDescriptor.err), true, StandardCharsets.UTF_8));
        final int host = Integer.parseInt(args[0]);
        final Path managerDir = Path.of(args[1]);
        final MappedByteBuffer mapped = IoUtil.mapExistingFile(Path.of(args[2]).toFile(), "replay engine control");
        final int blockBytes = Integer.parseInt(args[3]);
        final int maxChain = Integer.parseInt(args[4]);
        final boolean peers = Boolean.parseBoolean(args[5]);
        final List<ReplayTrace.Request> requests = ReplayTrace.read(Path.of(args[6]), Integer.parseInt(args[7]));
        int longest = 0;
        for (final ReplayTrace.Request r : requests)
        {
            longest = Math.max(longest, r.hashIds().length);
        }
        if (longest != maxChain)
        {
            System.err.println("engine " + host + ": the trace's longest chain is " + longest + ", the coordinator's " +
                maxChain + " (not the same trace)");
            System.exit(1);
        }
        final ReplayEngine engine = new ReplayEngine(host, managerDir, blockBytes, maxChain, peers, requests,
            new UnsafeBuffer(mapped), out);
        try
        {
            engine.connect();
        }
        catch (final RuntimeException ex)
        {
            System.err.println("engine " + host + ": cannot attach to the Manager at " + managerDir + ": " + ex);
            System.exit(1);
        }
        out.writeInt(ReplayEngineProcess.HELLO);
        out.writeLong(ProcessHandle.current().pid());
        out.writeInt(requests.size());
        out.flush();
        try (DataInputStream in = new DataInputStream(new BufferedInputStream(System.in, 1 << 12)))
        {
            engine.serveAll(in);
        }
        finally
        {
            CloseHelper.quietClose(engine.client);
            IoUtil.unmap(mapped);
        }
    }

    private void serveAll(final DataInputStream in) throws IOException
    {
        while (true)
        {
            final int index = in.readInt();
            if (ReplayEngineProcess.END == index)
            {
                break;
            }
            if (index < 0 || index >= requests.size())
            {
                throw new IOException("engine " + host + ": request index " + index + " not in the trace (" +
                    requests.size() + " requests)");
            }
            serve(requests.get(index));
            out.flush();
        }
        out.writeInt(ReplayEngineProcess.END);
        out.flush();
    }

    private void connect()
    {
        client = EngineClient.connect(new EngineClient.Context()
            .dir(managerDir.toString())
            .clientName("bench-replay-" + host)
            .dataRegionBytes(regionBytes)
            .responseTimeoutNs(RESPONSE_TIMEOUT_NS));
    }

    private boolean managerUp()
    {
        return 0 != control.getIntVolatile(ReplayEngineProcess.MANAGER_UP_OFFSET);
    }

    private void record(
        final ReplayTrace.Request request,
        final int dram,
        final int ssd,
        final int peer,
        final long restoreNs,
        final long serviceNs,
        final long wrong,
        final boolean unserved) throws IOException
    {
        out.writeInt(request.index());
        out.writeInt(dram);
        out.writeInt(ssd);
        out.writeInt(peer);
        out.writeLong(restoreNs);
        out.writeLong(serviceNs);
        out.writeLong(wrong);
        out.writeBoolean(unserved);
    }

    private void serve(final ReplayTrace.Request request) throws IOException
    {
        final long[] chain = request.hashIds();
        final long startNs = System.nanoTime();
        final boolean up = managerUp();
        if (null == client && up)
        {
            try
            {
                connect();
            }
            catch (final RuntimeException ex)
            {
                client = null;
            }
        }
        if (null == client || !up)
        {
            record(request, 0, 0, 0, 0, System.nanoTime() - startNs, 0, true);
            return;
        }
        try
        {
            batch.clear();
            for (int i = 0; i < chain.length; i++)
            {
                hashOf(chain[i], hash);
                batch.addKey(hash, 0, hash.length, (long)i * blockBytes, blockBytes);
            }
            client.lookup(batch, true, peers, leases);
            if (!leases.isOk())
            {
                client.release(leases);
                record(request, 0, 0, 0, 0, System.nanoTime() - startNs, 0, true);
                return;
            }
            final long lookedUpNs = System.nanoTime();
            client.read(batch, leases, peers, read);
            final long readNs = System.nanoTime();
            int dram = 0;
            int ssd = 0;
            int peer = 0;
            int restored = 0;
            final int answered = read.isOk() ? read.keyCount() : 0;
            for (; restored < answered; restored++)
            {
                final KeyStatus status = read.status(restored);
                if (KeyStatus.DRAM == status)
                {
                    dram++;
                }
                else if (KeyStatus.SSD == status)
                {
                    ssd++;
                }
                else if (KeyStatus.PEER == status)
                {
                    peer++;
                }
                else
                {
                    break;
                }
            }
            final long wrong = verify(chain, restored);
            final UnsafeBuffer region = client.dataBuffer();
            publishBatch.clear();
            for (int i = restored; i < chain.length; i++)
            {
                fill(region, (long)i * blockBytes, chain[i], blockBytes);
                hashOf(chain[i], hash);
                publishBatch.addKey(hash, 0, hash.length, (long)i * blockBytes, blockBytes);
            }
            if (publishBatch.keyCount() > 0)
            {
                client.publish(publishBatch, published);
            }
            record(request, dram, ssd, peer, readNs - lookedUpNs, readNs - startNs, wrong, false);
        }
        catch (final RuntimeException ex)
        {
            // The Manager went away (or stopped answering): this request is recomputed, the next one attaches again.
            CloseHelper.quietClose(client);
            client = null;
            record(request, 0, 0, 0, 0, System.nanoTime() - startNs, 0, true);
        }
    }

    private long verify(final long[] chain, final int restored)
    {
        final UnsafeBuffer region = client.dataBuffer();
        long wrong = 0;
        for (int i = 0; i < restored; i++)
        {
            final int length = read.length(i);
            final long base = (long)i * blockBytes;
            if (length != blockBytes)
            {
                wrong += blockBytes;
                continue;
            }
            final long seed = chain[i] * GOLDEN;
            for (int w = 0; w < blockBytes; w += Long.BYTES)
            {
                if (region.getLong((int)(base + w)) != word(seed, w))
                {
                    wrong += Long.BYTES;
                }
            }
        }
        return wrong;
    }

    private static void fill(final UnsafeBuffer region, final long base, final long id, final int blockBytes)
    {
        final long seed = id * GOLDEN;
        for (int w = 0; w < blockBytes; w += Long.BYTES)
        {
            region.putLong((int)(base + w), word(seed, w));
        }
    }

    static long word(final long seed, final int offset)
    {
        return (seed + offset) * 0xBF58476D1CE4E5B9L;
    }

    static void hashOf(final long id, final byte[] hash)
    {
        final ByteBuffer buffer = ByteBuffer.wrap(hash);
        long x = id;
        for (int i = 0; i < hash.length / Long.BYTES; i++)
        {
            x = (x + GOLDEN) * 0xBF58476D1CE4E5B9L;
            x ^= x >>> 29;
            buffer.putLong(i * Long.BYTES, 0 == i ? id : x);
        }
    }
}
