package io.orbitkv.manager.transfer.ext;

import io.orbitkv.manager.ManagerContext;
import io.orbitkv.manager.transfer.TransportSupplier;
import io.orbitkv.manager.transfer.Transports;
import io.orbitkv.transport.Transport;
import io.orbitkv.transport.TransportListener;
import io.orbitkv.transport.TransportStatus;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A fault injector in the manner of Aeron's {@code ext/} loss generators: opens the transport the context names and
 * wraps it so that a requester's reads are held back while a file exists. The first held read creates
 * {@code <file>.held}; once the file is gone the held reads go to the wrapped transport in the order they came. A
 * peer closed meanwhile fails its held reads as {@link TransportStatus#CLOSED}. A test or serving gate uses it to stop
 * a load after the source granted and pinned its blocks and before any byte moved, kill the source there, and then
 * let the reads run into the dead source. Named by {@code -Dorbitkv.manager.transfer.transport.supplier}, the file by
 * {@link #HOLD_FILE_PROP_NAME}; nothing in the product path refers to it.
 */
public final class HoldReadsTransportSupplier implements TransportSupplier
{
    /**
     * The file whose presence holds reads back.
     */
    public static final String HOLD_FILE_PROP_NAME = "orbitkv.manager.transfer.ext.holdReadsFile";

    /**
     * Reads held at most; one more is refused as back-pressure ({@link Transport#submitRead} returns false).
     */
    public static final int CAPACITY = 256;

    /**
     * Suffix of the file created when the first read is held.
     */
    public static final String HELD_SUFFIX = ".held";

    public Transport newTransport(final ManagerContext ctx)
    {
        final String file = System.getProperty(HOLD_FILE_PROP_NAME, "").trim();
        if (file.isEmpty())
        {
            throw new IllegalArgumentException(HOLD_FILE_PROP_NAME + " must name the file that holds reads back");
        }

        return new HoldingTransport(new Transports().newTransport(ctx), Path.of(file));
    }

    /**
     * Holds reads while the hold file exists, releases them in {@link #poll} once it is gone.
     */
    public static final class HoldingTransport extends ForwardingTransport
    {
        private static final int CLOSED_PEER = -1;

        private final Path holdFile;
        private final Path heldSignal;
        private final int[] peers = new int[CAPACITY];
        private final long[] sessionIds = new long[CAPACITY];
        private final long[] tokens = new long[CAPACITY];
        private final long[] remoteAddresses = new long[CAPACITY];
        private final long[] localAddresses = new long[CAPACITY];
        private final int[] lengths = new int[CAPACITY];
        private final long[] requestIds = new long[CAPACITY];
        private int first;
        private int held;
        private boolean signalled;

        public HoldingTransport(final Transport transport, final Path holdFile)
        {
            super(transport);
            this.holdFile = holdFile;
            this.heldSignal = holdFile.resolveSibling(holdFile.getFileName() + HELD_SUFFIX);
        }

        public boolean submitRead(
            final int peer,
            final long sessionId,
            final long token,
            final long remoteAddress,
            final long localAddress,
            final int length,
            final long requestId)
        {
            if (0 == held && !Files.exists(holdFile))
            {
                return transport.submitRead(peer, sessionId, token, remoteAddress, localAddress, length, requestId);
            }
            if (CAPACITY == held)
            {
                return false;
            }

            final int i = (first + held) % CAPACITY;
            peers[i] = peer;
            sessionIds[i] = sessionId;
            tokens[i] = token;
            remoteAddresses[i] = remoteAddress;
            localAddresses[i] = localAddress;
            lengths[i] = length;
            requestIds[i] = requestId;
            held++;
            if (!signalled)
            {
                signalled = true;
                try
                {
                    Files.write(heldSignal, new byte[0]);
                }
                catch (final IOException ex)
                {
                    throw new UncheckedIOException(ex);
                }
            }
            return true;
        }

        public void closePeer(final int peer)
        {
            for (int n = 0; n < held; n++)
            {
                final int i = (first + n) % CAPACITY;
                if (peers[i] == peer)
                {
                    peers[i] = CLOSED_PEER;
                }
            }
            transport.closePeer(peer);
        }

        public int poll(final TransportListener listener, final int limit)
        {
            int events = 0;
            if (held > 0 && !Files.exists(holdFile))
            {
                events = release(listener, limit);
            }
            return events + (events < limit ? transport.poll(listener, limit - events) : 0);
        }

        public int readsInFlight()
        {
            return transport.readsInFlight() + held;
        }

        private int release(final TransportListener listener, final int limit)
        {
            int events = 0;
            while (held > 0 && events < limit)
            {
                final int i = first;
                if (CLOSED_PEER == peers[i])
                {
                    listener.onReadComplete(requestIds[i], TransportStatus.CLOSED, 0);
                    events++;
                }
                else if (!transport.submitRead(
                    peers[i], sessionIds[i], tokens[i], remoteAddresses[i], localAddresses[i], lengths[i], requestIds[i]))
                {
                    break;
                }
                first = (first + 1) % CAPACITY;
                held--;
            }
            if (0 == held)
            {
                first = 0;
                signalled = false;
            }
            return events;
        }
    }
}
