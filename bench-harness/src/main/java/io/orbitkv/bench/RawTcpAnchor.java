package io.orbitkv.bench;

import java.io.EOFException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;

import org.HdrHistogram.Histogram;

/**
 * The restore anchor: the same bytes a remote restore moves, sent over one plain TCP socket between two threads of
 * this JVM. The requesting thread writes an 8-byte request naming the length and reads that many bytes; the serving
 * thread answers every request from one direct buffer. Nothing else is on the path: no lookup, no grant, no checksum.
 */
final class RawTcpAnchor implements AutoCloseable
{
    private static final int REQUEST_BYTES = Long.BYTES;

    private final ServerSocketChannel listener;
    private final SocketChannel requester;
    private final ByteBuffer request = ByteBuffer.allocateDirect(REQUEST_BYTES);
    private final ByteBuffer sink;
    private final Thread server;
    private volatile Throwable serverFailure;

    /**
     * Connect the two ends over loopback and start the serving thread.
     *
     * @param maxBytes the largest answer asked for.
     * @throws IOException when loopback sockets cannot be opened.
     */
    RawTcpAnchor(final int maxBytes) throws IOException
    {
        listener = ServerSocketChannel.open();
        listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 1);
        requester = SocketChannel.open(listener.getLocalAddress());
        requester.setOption(StandardSocketOptions.TCP_NODELAY, true);
        final SocketChannel served = listener.accept();
        served.setOption(StandardSocketOptions.TCP_NODELAY, true);
        sink = ByteBuffer.allocateDirect(maxBytes);
        final ByteBuffer source = ByteBuffer.allocateDirect(maxBytes);
        for (int i = 0; i < maxBytes; i += Long.BYTES)
        {
            source.putLong(i, i * 0x9E3779B97F4A7C15L);
        }
        server = new Thread(() -> serve(served, source), "raw-tcp-anchor");
        server.setDaemon(true);
        server.start();
    }

    /**
     * Measure request-to-last-byte times of {@code bytes}.
     *
     * @param bytes   bytes per answer.
     * @param warmup  unrecorded repetitions first.
     * @param reps    recorded repetitions.
     * @return the recorded times in ns.
     * @throws IOException when the socket fails.
     */
    Histogram measure(final int bytes, final int warmup, final int reps) throws IOException
    {
        final Histogram histogram = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
        for (int i = 0; i < warmup + reps; i++)
        {
            final long t0 = System.nanoTime();
            fetch(bytes);
            final long t1 = System.nanoTime();
            if (i >= warmup)
            {
                histogram.recordValue(t1 - t0);
            }
        }
        if (sink.getLong(bytes - Long.BYTES) != (bytes - Long.BYTES) * 0x9E3779B97F4A7C15L)
        {
            throw new IllegalStateException("raw TCP anchor: the last word received is not the one sent");
        }
        return histogram;
    }

    private void fetch(final int bytes) throws IOException
    {
        request.clear();
        request.putLong(0, bytes);
        while (request.hasRemaining())
        {
            requester.write(request);
        }
        sink.clear().limit(bytes);
        while (sink.hasRemaining())
        {
            if (requester.read(sink) < 0)
            {
                throw new EOFException("raw TCP anchor: server closed" +
                    (null != serverFailure ? ": " + serverFailure : ""));
            }
        }
    }

    private void serve(final SocketChannel served, final ByteBuffer source)
    {
        final ByteBuffer ask = ByteBuffer.allocateDirect(REQUEST_BYTES);
        try (SocketChannel channel = served)
        {
            while (true)
            {
                ask.clear();
                while (ask.hasRemaining())
                {
                    if (channel.read(ask) < 0)
                    {
                        return;
                    }
                }
                final ByteBuffer answer = source.duplicate().clear().limit((int)ask.getLong(0));
                while (answer.hasRemaining())
                {
                    channel.write(answer);
                }
            }
        }
        catch (final IOException ex)
        {
            serverFailure = ex;
        }
    }

    public void close() throws IOException
    {
        requester.close();
        listener.close();
        try
        {
            server.join(TimeUnit.SECONDS.toMillis(5));
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }
}
