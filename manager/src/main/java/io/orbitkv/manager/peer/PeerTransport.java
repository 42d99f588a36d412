package io.orbitkv.manager.peer;

import java.io.File;
import java.io.IOException;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import io.aeron.Aeron;
import io.aeron.Image;
import io.aeron.Subscription;
import io.aeron.driver.MediaDriver;
import io.aeron.driver.ThreadingMode;
import io.orbitkv.manager.status.SystemCounters;
import org.agrona.CloseHelper;
import org.agrona.ErrorHandler;
import org.agrona.IoUtil;
import org.agrona.concurrent.AgentInvoker;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.NoOpIdleStrategy;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.SystemNanoClock;
import org.agrona.concurrent.status.CountersManager;
import org.agrona.nio.TransportPoller;

/**
 * The catalog's peer transport: one embedded Aeron media driver (small sparse terms, its directory inside the
 * caller's directory and removed on close), an Aeron client, both invoked from the {@link PeerAgent}'s duty cycle
 * (driver in INVOKER mode: no driver thread and no driver park; after traffic the driver runs in every duty cycle,
 * after a quiet spell at most every {@link PeerAgent#DRIVER_QUIET_INTERVAL_NS} ns), and one UDP subscription on
 * {@code aeron:udp?endpoint=HOST:PORT} that receives every catalog message addressed to this peer: requests as
 * catalog host, acks and repair requests as owner, responses as requester. Publications to peers are created lazily
 * and kept in a bounded LRU.
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

    /**
     * Liveness timeouts between the embedded driver and its one client (client liveness, the client's service
     * interval and driver timeout). Both run invoked on the same thread, so a gap between duty cycles stalls both
     * and proves nothing about either; with Aeron's 10 s defaults a process stopped longer (SIGSTOP, a VM pause, a
     * stalled host: exactly what outlives a 10 s lease) found its client closed on resume ("service interval
     * exceeded") and its peer transport dead, so the new incarnation could not re-announce anything. Remote peers'
     * images and publications still time out on Aeron's own defaults and are set up again.
     */
    public static final long INVOKED_LIVENESS_TIMEOUT_NS = TimeUnit.HOURS.toNanos(24);

    /** Must exceed the client liveness timeout (Aeron checks it); no other publisher shares these publications. */
    static final long INVOKED_PUBLICATION_UNBLOCK_TIMEOUT_NS = INVOKED_LIVENESS_TIMEOUT_NS + TimeUnit.SECONDS.toNanos(15);

    /**
     * {@link Context#mtuLength(int)} value asking for the datagram size of the endpoint's network interface.
     */
    public static final int AUTO_MTU = 0;

    /**
     * Largest automatic datagram payload: what a 9,000-byte (jumbo frame) IPv4 network carries in one frame, rounded
     * down to Aeron's 32-byte frame alignment. Loopback allows 64 KiB, but a bigger datagram buys little more and
     * fills socket buffers in fewer messages.
     */
    public static final int MAX_AUTO_MTU_LENGTH = 8_960;

    /**
     * Aeron's default datagram payload (a 1,500-byte Ethernet frame with room for tunnel headers): used when the
     * endpoint's interface or its MTU cannot be found.
     */
    public static final int FALLBACK_MTU_LENGTH = 1_408;

    /**
     * Smallest datagram payload accepted (IPv4's guaranteed 576-byte datagram less headers, aligned).
     */
    public static final int MIN_MTU_LENGTH = 512;

    /**
     * Aeron's cap on a datagram payload.
     */
    public static final int MAX_MTU_LENGTH = 65_504;

    private static final int FRAME_ALIGNMENT = 32;

    /**
     * What {@link #isValidMtuLength(int)} accepts, for error messages.
     */
    public static final String MTU_RULE =
        "a multiple of " + FRAME_ALIGNMENT + " in " + MIN_MTU_LENGTH + ".." + MAX_MTU_LENGTH;

    private static final String UDP_PREFIX = "aeron:udp?endpoint=";

    /**
     * A driver poller with more sockets than this asks epoll once which are ready instead of reading each (Agrona's
     * {@code org.agrona.transport.iteration.threshold}, default 5). Each empty read is a system call (~1.5 us on
     * the 2-core VM the benches run on) and a requester has one send socket per catalog host, all polled for status
     * messages in every driver cycle: with three hosts, one epoll_wait replaces three reads. Set when this class
     * loads, before the driver's pollers read it, unless the JVM was started with the property.
     */
    public static final int POLLER_ITERATION_THRESHOLD = 1;

    static
    {
        if (null == System.getProperty(TransportPoller.ITERATION_THRESHOLD_PROP_NAME))
        {
            System.setProperty(TransportPoller.ITERATION_THRESHOLD_PROP_NAME, Integer.toString(POLLER_ITERATION_THRESHOLD));
        }
    }

    private static final long RESOLVE_TIMEOUT_NS = 10_000_000_000L;

    private final Context ctx;
    private final File aeronDir;
    private final MediaDriver driver;
    private final Aeron aeron;
    private final PeerCounters counters;
    private final PeerWakeup wakeup;
    private final Media media;
    private PeerAgent agent;

    private PeerTransport(final Context ctx)
    {
        this.ctx = ctx;
        this.aeronDir = ctx.directory().resolve("aeron-peer").toFile();
        final SystemCounters systemCounters = ctx.systemCounters();
        final int termLength = ctx.termLength();
        final PeerSourceFilter sources = new PeerSourceFilter();
        this.wakeup = new PeerWakeup(
            (udpChannel, dispatcher, statusIndicator, driverContext) -> new GuardedReceiveEndpoint(
                udpChannel, dispatcher, statusIndicator, driverContext, termLength, sources, systemCounters),
            ctx.errorHandler());
        final ErrorHandler driverErrorHandler = driverErrorHandler(ctx.errorHandler(), systemCounters);
        final ImagePollErrors pollErrors = new ImagePollErrors(ctx.errorHandler());
        MediaDriver launched = null;
        Aeron connected = null;
        PeerCounters allocated = null;
        try
        {
            final IdleStrategy driverIdle = ctx.driverIdleStrategy();
            launched = MediaDriver.launch(new MediaDriver.Context()
                .aeronDirectoryName(aeronDir.getAbsolutePath())
                .receiveChannelEndpointSupplier(wakeup)
                .threadingMode(null == driverIdle ? ThreadingMode.INVOKER : ThreadingMode.SHARED)
                .sharedIdleStrategy(null == driverIdle ? new NoOpIdleStrategy() : driverIdle)
                .mtuLength(ctx.mtuLength())
                .publicationTermBufferLength(ctx.termLength())
                .ipcTermBufferLength(IPC_TERM_LENGTH)
                .termBufferSparseFile(true)
                .dirDeleteOnStart(true)
                .dirDeleteOnShutdown(true)
                .warnIfDirectoryExists(false)
                // Its name resolution and log-buffer tasks run inside the driver's own (invoked) duty cycle: an
                // executor thread would back off and wake ~1,000 times a second with nothing to do (about 1.3% of a
                // core on the bench VM). Peer endpoints are numeric, so nothing slow runs there.
                .asyncExecutorEnabled(false)
                .clientLivenessTimeoutNs(INVOKED_LIVENESS_TIMEOUT_NS)
                .publicationUnblockTimeoutNs(INVOKED_PUBLICATION_UNBLOCK_TIMEOUT_NS)
                .errorHandler(driverErrorHandler));
            connected = Aeron.connect(new Aeron.Context()
                .aeronDirectoryName(aeronDir.getAbsolutePath())
                .useConductorAgentInvoker(true)
                .driverAgentInvoker(launched.sharedAgentInvoker())
                .driverTimeoutMs(TimeUnit.NANOSECONDS.toMillis(INVOKED_LIVENESS_TIMEOUT_NS))
                .errorHandler(ctx.errorHandler())
                .subscriberErrorHandler(pollErrors));
            allocated = new PeerCounters(ctx.countersManager());
            wakeup.counters(allocated);
            this.media = new Media(ctx, connected, launched.sharedAgentInvoker(), allocated, wakeup, pollErrors);
            media.publisher.sourceFilter(sources);
        }
        catch (final RuntimeException ex)
        {
            CloseHelper.quietCloseAll(allocated, connected, launched, wakeup);
            IoUtil.delete(aeronDir, true);
            throw ex;
        }
        this.driver = launched;
        this.aeron = connected;
        this.counters = allocated;
    }

    /**
     * The embedded driver's error handler: errors of frame validation (a setup frame the driver refuses to make an
     * image of: its MTU, window or term length) are what anyone who reaches the socket can cause, so they are counted
     * ({@link PeerGuardCounter#DRIVER_FRAME_ERRORS}) and not logged; every other driver error goes to {@code handler}.
     */
    static ErrorHandler driverErrorHandler(final ErrorHandler handler, final SystemCounters counters)
    {
        return (throwable) ->
        {
            if (isFrameValidationError(throwable))
            {
                counters.increment(PeerGuardCounter.DRIVER_FRAME_ERRORS);
            }
            else
            {
                handler.onError(throwable);
            }
        };
    }

    /**
     * @return whether the driver raised this while judging a received setup frame (creating an image of it).
     */
    static boolean isFrameValidationError(final Throwable throwable)
    {
        if (!(throwable instanceof IllegalArgumentException || throwable instanceof IllegalStateException ||
            throwable instanceof io.aeron.exceptions.ConfigurationException))
        {
            return false;
        }
        for (final StackTraceElement frame : throwable.getStackTrace())
        {
            final String method = frame.getMethodName();
            if ("onCreatePublicationImage".equals(method) || "onSetupMessage".equals(method))
            {
                return true;
            }
        }
        return false;
    }

    /**
     * Bind the transport: the embedded driver, its client, the subscription on the endpoint (its port resolved) and
     * the {@link PeerPublisher}. Nothing is received until {@link #newAgent} built the agent that delivers frames.
     *
     * @param ctx settings, concluded here.
     * @return the bound transport, to close.
     */
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

    /**
     * The datagram payload for peers reached through {@code host}'s interface: its MTU less the IP and UDP headers,
     * aligned down to 32 bytes, at most {@link #MAX_AUTO_MTU_LENGTH}; {@link #FALLBACK_MTU_LENGTH} when the interface
     * is unknown (a wildcard or unresolvable host). Peers on another network with a smaller MTU still receive the
     * datagrams (IP fragments them); a cluster whose path MTU is smaller than its interfaces' sets the size.
     *
     * @param host the host part of the peer endpoint.
     * @return payload bytes per datagram.
     */
    public static int autoMtuLength(final String host)
    {
        try
        {
            final InetAddress address = InetAddress.getByName(host);
            final NetworkInterface networkInterface = NetworkInterface.getByInetAddress(address);
            final int mtu = null == networkInterface ? -1 : networkInterface.getMTU();
            if (mtu <= 0)
            {
                return FALLBACK_MTU_LENGTH;
            }
            final int headers = address instanceof Inet6Address ? 48 : 28;
            final int payload = Math.min(mtu - headers, MAX_AUTO_MTU_LENGTH) & -FRAME_ALIGNMENT;
            return Math.max(payload, MIN_MTU_LENGTH);
        }
        catch (final IOException ex)
        {
            return FALLBACK_MTU_LENGTH;
        }
    }

    /**
     * @param mtuLength datagram payload bytes.
     * @return whether Aeron accepts it and it is at least {@link #MIN_MTU_LENGTH} ({@link #MTU_RULE}).
     */
    public static boolean isValidMtuLength(final int mtuLength)
    {
        return mtuLength >= MIN_MTU_LENGTH && mtuLength <= MAX_MTU_LENGTH && 0 == mtuLength % FRAME_ALIGNMENT;
    }

    /**
     * Build the agent that polls the subscription and delivers frames; once only, after the parts that send through
     * {@link #publisher()} exist.
     *
     * @param routes        judges the route of a session protocol message (a connect, its answer).
     * @param frameHandlers one per schema: where frames other than the session protocol go, raw; the catalog
     *                      schema's is required, a null one is skipped.
     * @return the agent.
     */
    public PeerAgent newAgent(final RouteValidator routes, final PeerFrameHandler... frameHandlers)
    {
        if (null != agent)
        {
            throw new IllegalStateException("the peer transport already has its agent");
        }
        if (null == routes)
        {
            throw new IllegalStateException("a route validator is required");
        }
        agent = new PeerAgent(ctx, media, routes, frameHandlers);
        return agent;
    }

    /**
     * @return the agent made by {@link #newAgent}.
     */
    public PeerAgent agent()
    {
        if (null == agent)
        {
            throw new IllegalStateException("the peer transport has no agent yet");
        }
        return agent;
    }

    /**
     * @return the sending half, usable as soon as the transport is bound.
     */
    public PeerPublisher publisher()
    {
        return media.publisher;
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
        return media.publisher.localEndpoint();
    }

    /**
     * @return payload bytes per datagram this transport sends (resolved from the interface when asked for auto).
     */
    public int mtuLength()
    {
        return ctx.mtuLength();
    }

    public String aeronDirectoryName()
    {
        return aeronDir.getAbsolutePath();
    }

    /**
     * @return the wait an idle agent running this transport sleeps in (a peer's datagram ends it).
     */
    public PeerWakeup wakeup()
    {
        return wakeup;
    }

    public void close()
    {
        if (null != agent)
        {
            CloseHelper.quietClose(agent::onClose);
        }
        else
        {
            CloseHelper.quietClose(media.publisher::close);
            CloseHelper.quietClose(media.subscription);
        }
        CloseHelper.quietCloseAll(aeron, driver, counters, wakeup);
        IoUtil.delete(aeronDir, true);
    }

    /**
     * What a bound transport has before its agent: the client and driver invokers, the subscription on this peer's
     * endpoint with the queues its image callbacks fill, and the publisher.
     */
    static final class Media
    {
        final Aeron aeron;
        final AgentInvoker driverInvoker;
        final PeerCounters counters;
        final PeerWakeup wakeup;
        final ImagePollErrors pollErrors;
        final Subscription subscription;
        final PeerPublisher publisher;
        final FrameAuth verifier;
        final ManyToOneConcurrentArrayQueue<Image> availableImages =
            new ManyToOneConcurrentArrayQueue<>(PeerAgent.IMAGE_QUEUE_CAPACITY);
        final ManyToOneConcurrentArrayQueue<Image> unavailableImages =
            new ManyToOneConcurrentArrayQueue<>(PeerAgent.IMAGE_QUEUE_CAPACITY);

        Media(
            final Context ctx,
            final Aeron aeron,
            final AgentInvoker driverInvoker,
            final PeerCounters counters,
            final PeerWakeup wakeup,
            final ImagePollErrors pollErrors)
        {
            this.aeron = aeron;
            this.pollErrors = pollErrors;
            this.driverInvoker = driverInvoker;
            this.counters = counters;
            this.wakeup = wakeup;
            this.subscription = aeron.addSubscription(
                channel(ctx.endpoint()), ctx.streamId(), this::queueAvailableImage, this::queueUnavailableImage);
            final String localChannel = resolveLocalChannel(subscription, ctx.endpoint(), driverInvoker);
            final byte[] key = ctx.frameMacKey();
            final SystemCounters systemCounters = ctx.systemCounters();
            systemCounters.get(PeerAuthCounter.ENABLED).setRelease(null == key ? 0 : 1);
            this.verifier = null == key ? null : new FrameAuth(key, systemCounters, new SenderWindows());
            this.publisher = new PeerPublisher(
                ctx, new PublicationLru(aeron, ctx.streamId(), ctx.publicationLruCapacity(), counters), counters,
                localChannel, null == key ? null : new FrameAuth(key, systemCounters, null));
        }

        private void queueAvailableImage(final Image image)
        {
            // Reentrancy rule: no client calls here (creating a publication throws); the agent handles it in doWork.
            availableImages.offer(image);
        }

        private void queueUnavailableImage(final Image image)
        {
            unavailableImages.offer(image);
        }

        /**
         * The channel peers answer on: the configured one, or with port 0 the port the driver bound (ephemeral ports
         * let several Managers share a host without choosing ports).
         */
        private static String resolveLocalChannel(
            final Subscription subscription, final String endpoint, final AgentInvoker driverInvoker)
        {
            if (!endpoint.endsWith(":0"))
            {
                return channel(endpoint);
            }
            final long deadlineNs = System.nanoTime() + RESOLVE_TIMEOUT_NS;
            String resolved;
            while (null == (resolved = subscription.tryResolveChannelEndpointPort()))
            {
                if (System.nanoTime() - deadlineNs > 0)
                {
                    throw new IllegalStateException("the media driver did not bind " + endpoint + " in time");
                }
                if (null == driverInvoker || 0 == driverInvoker.invoke())
                {
                    Thread.yield();
                }
            }
            return resolved;
        }
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
        private int mtuLength = AUTO_MTU;
        private int localNodeIndex;
        private long incarnationMsb;
        private long incarnationLsb;
        private long placementFingerprint;
        private int publicationLruCapacity = PublicationLru.MAX_CLIENTS;
        private long connectTimeoutMs = DEFAULT_CONNECT_TIMEOUT_MS;
        private CountersManager countersManager;
        private ErrorHandler errorHandler;
        private NanoClock nanoClock = SystemNanoClock.INSTANCE;
        private IdleStrategy driverIdleStrategy;
        private byte[] frameMacKey;
        private SystemCounters systemCounters;

        void conclude()
        {
            require(null == frameMacKey || ClusterSecret.KEY_BYTES == frameMacKey.length,
                "frameMacKey must be " + ClusterSecret.KEY_BYTES + " bytes");
            if (null == systemCounters)
            {
                systemCounters = SystemCounters.inMemory(PeerAuthCounter.values(), PeerGuardCounter.values());
            }
            require(null != endpoint && !endpoint.isEmpty() && endpoint.indexOf(':') > 0,
                "endpoint must be HOST:PORT: " + endpoint);
            require(null != directory, "directory is required");
            require(null != countersManager, "countersManager is required");
            require(null != errorHandler, "errorHandler is required");
            require(publicationLruCapacity >= 1 && publicationLruCapacity <= PublicationLru.MAX_CLIENTS,
                "publicationLruCapacity must be 1.." + PublicationLru.MAX_CLIENTS + ": " + publicationLruCapacity);
            require(connectTimeoutMs > 0, "connectTimeoutMs must be positive");
            if (AUTO_MTU == mtuLength)
            {
                mtuLength = autoMtuLength(endpoint.substring(0, endpoint.lastIndexOf(':')));
            }
            require(isValidMtuLength(mtuLength), "mtuLength must be " + MTU_RULE + ": " + mtuLength);
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
         * Payload bytes per datagram of peer publications; {@link #AUTO_MTU} (default) takes it from the network
         * interface of the endpoint's host (see {@link #autoMtuLength(String)}).
         */
        public Context mtuLength(final int mtuLength)
        {
            this.mtuLength = mtuLength;
            return this;
        }

        /**
         * @return payload bytes per datagram (resolved once the context is concluded).
         */
        public int mtuLength()
        {
            return mtuLength;
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
         * Give the embedded driver a thread of its own (SHARED threading) idling with this strategy. Default null: the
         * driver runs in INVOKER mode, invoked from the agent's duty cycle, which on a 2-core host removes a thread
         * and the driver's park from every hop (a diagnostic option for comparing the two).
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
         * Authenticate every peer frame with this key ({@link ClusterSecret#frameMacKey()}): each frame sent carries a
         * {@link FrameAuth} trailer and each frame received must carry a valid one. Default null: frames carry no MAC
         * and anyone who reaches the endpoint is heard.
         */
        public Context frameMacKey(final byte[] frameMacKey)
        {
            this.frameMacKey = null == frameMacKey ? null : frameMacKey.clone();
            return this;
        }

        public byte[] frameMacKey()
        {
            return frameMacKey;
        }

        /**
         * Where the {@link PeerAuthCounter}s and {@link PeerGuardCounter}s are (the Manager's system counters).
         * Default: counters nobody else reads.
         */
        public Context systemCounters(final SystemCounters systemCounters)
        {
            this.systemCounters = systemCounters;
            return this;
        }

        public SystemCounters systemCounters()
        {
            return systemCounters;
        }

        /**
         * For a driver with its own thread: backoff from 10 spins and 20 yields to parks of 1 us up to 1 ms; an idle
         * peer costs almost no CPU, at the price of up to a park period of latency on each driver hop after an idle
         * spell.
         */
        public static IdleStrategy backoffDriverIdleStrategy()
        {
            return new BackoffIdleStrategy(10, 20, 1_000, 1_000_000);
        }
    }
}
