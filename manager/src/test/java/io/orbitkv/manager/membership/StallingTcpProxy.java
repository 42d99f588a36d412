package io.orbitkv.manager.membership;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * A TCP proxy on loopback in front of one etcd endpoint that can stall connections the way a partition leaves them:
 * {@link #cut()} stops forwarding on every connection, existing and new (the peer's data waits in buffers, nothing
 * arrives, nothing is refused: a silent drop); {@link #heal()} lets new connections through at once while the
 * connections that lived through the cut stay stalled, as TCP's retransmission backoff holds them for seconds after a
 * real heal; {@link #stallExisting()} is that after-heal state without a cut before it.
 */
public final class StallingTcpProxy implements AutoCloseable
{
    private final ServerSocket server;
    private final InetSocketAddress target;
    private final List<Link> links = new CopyOnWriteArrayList<>();
    private final AtomicInteger accepted = new AtomicInteger();
    private final Thread acceptor;
    private volatile boolean cut;
    private volatile boolean closed;

    private static final class Link
    {
        final Socket client;
        final Socket upstream;
        volatile boolean stalled;

        Link(final Socket client, final Socket upstream, final boolean stalled)
        {
            this.client = client;
            this.upstream = upstream;
            this.stalled = stalled;
        }
    }

    /**
     * @param targetEndpoint {@code http://host:port} of the etcd member to forward to.
     * @throws IOException if no port could be bound.
     */
    public StallingTcpProxy(final String targetEndpoint) throws IOException
    {
        final String hostPort = targetEndpoint.replaceFirst("^https?://", "");
        final int colon = hostPort.lastIndexOf(':');
        target = new InetSocketAddress(hostPort.substring(0, colon), Integer.parseInt(hostPort.substring(colon + 1)));
        server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        acceptor = new Thread(this::acceptLoop, "stalling-proxy-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /**
     * @return {@code http://127.0.0.1:port} of the proxy.
     */
    public String endpoint()
    {
        return "http://127.0.0.1:" + server.getLocalPort();
    }

    /**
     * @return connections accepted so far.
     */
    public int accepted()
    {
        return accepted.get();
    }

    /** Stop forwarding on every connection, and on every new one until {@link #heal()}. */
    public void cut()
    {
        cut = true;
        stallExisting();
    }

    /** New connections forward again; the ones that lived through the cut stay stalled. */
    public void heal()
    {
        cut = false;
    }

    /** Every connection open now stops forwarding for good; new ones forward (unless cut). */
    public void stallExisting()
    {
        for (final Link link : links)
        {
            link.stalled = true;
        }
    }

    private void acceptLoop()
    {
        while (!closed)
        {
            try
            {
                final Socket client = server.accept();
                final Socket upstream = new Socket();
                upstream.connect(target, 2_000);
                client.setTcpNoDelay(true);
                upstream.setTcpNoDelay(true);
                final Link link = new Link(client, upstream, cut);
                links.add(link);
                accepted.incrementAndGet();
                pump(link, client, upstream, "up");
                pump(link, upstream, client, "down");
            }
            catch (final IOException ex)
            {
                if (closed)
                {
                    return;
                }
            }
        }
    }

    private void pump(final Link link, final Socket from, final Socket to, final String direction)
    {
        final Thread t = new Thread(() ->
        {
            final byte[] buffer = new byte[16 * 1024];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream())
            {
                int n;
                while ((n = in.read(buffer)) >= 0)
                {
                    while (link.stalled && !closed)
                    {
                        // Held, not dropped: what a stalled connection carries is never delivered while it stalls.
                        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
                    }
                    if (closed)
                    {
                        return;
                    }
                    out.write(buffer, 0, n);
                    out.flush();
                }
            }
            catch (final IOException ignore)
            {
                // either side closed
            }
            finally
            {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, "stalling-proxy-" + direction);
        t.setDaemon(true);
        t.start();
    }

    private static void closeQuietly(final Socket socket)
    {
        try
        {
            socket.close();
        }
        catch (final IOException ignore)
        {
            // closing
        }
    }

    public void close()
    {
        closed = true;
        try
        {
            server.close();
        }
        catch (final IOException ignore)
        {
            // closing
        }
        for (final Link link : links)
        {
            closeQuietly(link.client);
            closeQuietly(link.upstream);
        }
    }
}
