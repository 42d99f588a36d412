package io.orbitkv.manager.peer;

import java.io.File;
import java.nio.file.Path;

import io.aeron.Aeron;
import io.aeron.driver.MediaDriver;
import io.aeron.driver.ThreadingMode;
import io.orbitkv.catalog.CatalogRequestValidator;
import io.orbitkv.catalog.ColdQueryHandler;
import org.agrona.CloseHelper;
import org.agrona.ErrorHandler;
import org.agrona.IoUtil;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.SystemNanoClock;
import org.agrona.concurrent.status.CountersManager;

/**
 * The catalog's peer transport: one embedded Aeron media driver (SHARED threading, small sparse terms, backoff idle,
 * its directory inside the caller's directory and removed on close), an Aeron client run invoked from the
 * {@link PeerAgent}'s duty cycle, and one UDP subscription on {@code aeron:udp?endpoint=HOST:PORT} that receives
 * every catalog message addressed to this peer: requests as catalog host, acks and repair requests as owner,
 * responses as requester. Publications to peers are created lazily and kept in a bounded LRU.
 * <p>
 * Not thread safe: the agent and the methods it exposes belong to the thread that runs {@link #doWork()} (or the
 * composite agent the Manager builds around {@link #agent()}).
 */
public final class PeerTransport implements AutoCloseable
{
    /**
     * Stream id of catalog peer traffic on every peer endpoint.
     */
    public static final int DEFAULT_STREAM_ID = 1_201;

    /**
     * Default term length of peer publications: a 128 KiB maximum message (term / 8) holds a full delta batch of the
     * longest keys, and a full LRU of sparse logs stays modest. A SnapshotEnd interval of 1,024 records of the
     * longest keys needs 4 MiB terms; the Manager may choose that with {@link Context#termLength(int)}.
     */
    public static final int TERM_LENGTH = 1024 * 1024;

    /**
     * Aeron's cap on a message regardless of term length.
     */
    static final int MAX_MESSAGE_CAP_BYTES = 16 * 1024 * 1024;

    /**
     * Term length of IPC publications (unused by peers; the driver's minimum keeps its footprint small).
     */
    public static final int IPC_TERM_LENGTH = 64 * 1024;

    public static final long DEFAULT_CONNECT_TIMEOUT_MS = 5_000;

    private static final String UDP_PREFIX = "aeron:udp?endpoint=";

    private final Context ctx;
    private final File aeronDir;
    private final MediaDriver driver;
    private final Aeron aeron;
    private final PeerCounters counters;
    private final PeerAgent agent;

    private PeerTransport(final Context ctx)
    {
        this.ctx = ctx;
        this.aeronDir = ctx.directory().resolve("aeron-peer").toFile();
        MediaDriver launched = null;
        Aeron connected = null;
        PeerCounters allocated = null;
        try
        {
            launched = MediaDriver.launch(new MediaDriver.Context()
                .aeronDirectoryName(aeronDir.getAbsolutePath())
                .threadingMode(ThreadingMode.SHARED)
                .sharedIdleStrategy(ctx.driverIdleStrategy())
                .publicationTermBufferLength(ctx.termLength())
                .ipcTermBufferLength(IPC_TERM_LENGTH)
                .termBufferSparseFile(true)
                .dirDeleteOnStart(true)
                .dirDeleteOnShutdown(true)
                .warnIfDirectoryExists(false)
                .errorHandler(ctx.errorHandler()));
            connected = Aeron.connect(new Aeron.Context()
                .aeronDirectoryName(aeronDir.getAbsolutePath())
                .useConductorAgentInvoker(true)
                .errorHandler(ctx.errorHandler())
                .subscriberErrorHandler(ctx.errorHandler()));
            allocated = new PeerCounters(ctx.countersManager());
            this.agent = new PeerAgent(ctx, connected, allocated);
        }
        catch (final RuntimeException ex)
        {
            CloseHelper.quietCloseAll(allocated, connected, launched);
            IoUtil.delete(aeronDir, true);
            throw ex;
        }
        this.driver = launched;
        this.aeron = connected;
        this.counters = allocated;
    }

    public static PeerTransport launch(final Context ctx)
    {
        ctx.conclude();
        return new PeerTransport(ctx);
    }

    public static String channel(final String endpoint)
    {
        return UDP_PREFIX + endpoint;
    }

    /**
     * Response channels a requester may name: a UDP endpoint, nothing else (no IPC or multicast into this driver).
     */
    static boolean isPeerChannel(final String channel)
    {
        return null != channel && channel.length() > UDP_PREFIX.length() && channel.length() <= 256 &&
            channel.startsWith(UDP_PREFIX) && channel.indexOf('|') < 0;
    }

    public PeerAgent agent()
    {
        return agent;
    }

    public int doWork()
    {
        return agent.doWork();
    }

    public PeerCounters counters()
    {
        return counters;
    }

    /**
     * @return the endpoint peers reach this transport at (with a configured port 0, the port the driver bound).
     */
    public String endpoint()
    {
        return agent.localEndpoint();
    }

    public String aeronDirectoryName()
    {
        return aeronDir.getAbsolutePath();
    }

    public void close()
    {
        CloseHelper.quietClose(agent::onClose);
        CloseHelper.quietCloseAll(aeron, driver, counters);
        IoUtil.delete(aeronDir, true);
    }

    /**
     * Configuration of one peer transport.
     */
    public static final class Context
    {
        private String endpoint;
        private Path directory;
        private int streamId = DEFAULT_STREAM_ID;
        private int termLength = TERM_LENGTH;
        private int localNodeIndex;
        private long incarnationMsb;
        private long incarnationLsb;
        private long placementFingerprint;
        private int publicationLruCapacity = PublicationLru.MAX_CLIENTS;
        private long connectTimeoutMs = DEFAULT_CONNECT_TIMEOUT_MS;
        private CatalogRequestValidator validator;
        private ColdQueryHandler coldQueryHandler;
        private PeerHandler handler;
        private CountersManager countersManager;
        private ErrorHandler errorHandler;
        private NanoClock nanoClock = SystemNanoClock.INSTANCE;
        private IdleStrategy driverIdleStrategy;

        void conclude()
        {
            if (null == driverIdleStrategy)
            {
                driverIdleStrategy = defaultDriverIdleStrategy();
            }
            require(null != endpoint && !endpoint.isEmpty() && endpoint.indexOf(':') > 0,
                "endpoint must be HOST:PORT: " + endpoint);
            require(null != directory, "directory is required");
            require(null != validator, "validator is required");
            require(null != coldQueryHandler, "coldQueryHandler is required");
            require(null != handler, "handler is required");
            require(null != countersManager, "countersManager is required");
            require(null != errorHandler, "errorHandler is required");
            require(publicationLruCapacity >= 1 && publicationLruCapacity <= PublicationLru.MAX_CLIENTS,
                "publicationLruCapacity must be 1.." + PublicationLru.MAX_CLIENTS + ": " + publicationLruCapacity);
            require(connectTimeoutMs > 0, "connectTimeoutMs must be positive");
            require(termLength >= IPC_TERM_LENGTH && termLength <= 64 * 1024 * 1024 && Integer.bitCount(termLength) == 1,
                "termLength must be a power of two in 64 KiB..64 MiB: " + termLength);
        }

        private static void require(final boolean condition, final String message)
        {
            if (!condition)
            {
                throw new IllegalStateException(message);
            }
        }

        public Context endpoint(final String endpoint)
        {
            this.endpoint = endpoint;
            return this;
        }

        public String endpoint()
        {
            return endpoint;
        }

        public Context directory(final Path directory)
        {
            this.directory = directory;
            return this;
        }

        public Path directory()
        {
            return directory;
        }

        public Context streamId(final int streamId)
        {
            this.streamId = streamId;
            return this;
        }

        public int streamId()
        {
            return streamId;
        }

        public Context termLength(final int termLength)
        {
            this.termLength = termLength;
            return this;
        }

        public int termLength()
        {
            return termLength;
        }

        /**
         * @return the largest message peer publications accept: term length / 8, capped by Aeron.
         */
        public int maxMessageBytes()
        {
            return Math.min(termLength / 8, MAX_MESSAGE_CAP_BYTES);
        }

        public Context localNodeIndex(final int localNodeIndex)
        {
            this.localNodeIndex = localNodeIndex;
            return this;
        }

        public int localNodeIndex()
        {
            return localNodeIndex;
        }

        public Context incarnation(final long msb, final long lsb)
        {
            this.incarnationMsb = msb;
            this.incarnationLsb = lsb;
            return this;
        }

        public long incarnationMsb()
        {
            return incarnationMsb;
        }

        public long incarnationLsb()
        {
            return incarnationLsb;
        }

        public Context placementFingerprint(final long placementFingerprint)
        {
            this.placementFingerprint = placementFingerprint;
            return this;
        }

        public long placementFingerprint()
        {
            return placementFingerprint;
        }

        public Context publicationLruCapacity(final int publicationLruCapacity)
        {
            this.publicationLruCapacity = publicationLruCapacity;
            return this;
        }

        public int publicationLruCapacity()
        {
            return publicationLruCapacity;
        }

        public Context connectTimeoutMs(final long connectTimeoutMs)
        {
            this.connectTimeoutMs = connectTimeoutMs;
            return this;
        }

        public long connectTimeoutMs()
        {
            return connectTimeoutMs;
        }

        public Context validator(final CatalogRequestValidator validator)
        {
            this.validator = validator;
            return this;
        }

        public CatalogRequestValidator validator()
        {
            return validator;
        }

        public Context coldQueryHandler(final ColdQueryHandler coldQueryHandler)
        {
            this.coldQueryHandler = coldQueryHandler;
            return this;
        }

        public ColdQueryHandler coldQueryHandler()
        {
            return coldQueryHandler;
        }

        public Context handler(final PeerHandler handler)
        {
            this.handler = handler;
            return this;
        }

        public PeerHandler handler()
        {
            return handler;
        }

        public Context countersManager(final CountersManager countersManager)
        {
            this.countersManager = countersManager;
            return this;
        }

        public CountersManager countersManager()
        {
            return countersManager;
        }

        public Context errorHandler(final ErrorHandler errorHandler)
        {
            this.errorHandler = errorHandler;
            return this;
        }

        public ErrorHandler errorHandler()
        {
            return errorHandler;
        }

        public Context nanoClock(final NanoClock nanoClock)
        {
            this.nanoClock = nanoClock;
            return this;
        }

        public NanoClock nanoClock()
        {
            return nanoClock;
        }

        /**
         * The embedded driver's (SHARED) idle strategy; default {@link #defaultDriverIdleStrategy()}.
         */
        public Context driverIdleStrategy(final IdleStrategy driverIdleStrategy)
        {
            this.driverIdleStrategy = driverIdleStrategy;
            return this;
        }

        public IdleStrategy driverIdleStrategy()
        {
            return driverIdleStrategy;
        }

        /**
         * Backoff from 10 spins and 20 yields to parks of 1 us up to 1 ms: an idle peer costs almost no CPU on a
         * shared host, at the price of up to a park period of latency on each driver hop after an idle spell.
         */
        public static IdleStrategy defaultDriverIdleStrategy()
        {
            return new BackoffIdleStrategy(10, 20, 1_000, 1_000_000);
        }
    }
}
