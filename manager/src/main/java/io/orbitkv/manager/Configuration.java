package io.orbitkv.manager;

import io.orbitkv.manager.idle.WaitingBackoffIdleStrategy;
import java.io.File;
import java.util.concurrent.TimeUnit;
import org.agrona.SystemUtil;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.YieldingIdleStrategy;

/**
 * Defaults and system properties of a Manager. Every setting has a {@code *_PROP_NAME} and a {@code *_DEFAULT};
 * the static accessors read the property (sizes accept k/m/g suffixes, durations ns/us/ms/s) and fall back to
 * the default. {@link ManagerContext} starts from these values and CLI flags override them.
 */
public final class Configuration
{
    /** Parent of the default directories: one directory per Manager name (tmpfs, so the CnC never hits disk). */
    public static final String DIR_PARENT_DEFAULT = "/dev/shm/orbitkv";

    public static final String DIR_PROP_NAME = "orbitkv.manager.dir";

    public static final String NAME_PROP_NAME = "orbitkv.manager.name";
    public static final String NAME_DEFAULT = "default";

    public static final String POOL_BYTES_PROP_NAME = "orbitkv.manager.pool.bytes";
    public static final long POOL_BYTES_DEFAULT = 1L << 30;

    public static final String MAX_BLOCK_BYTES_PROP_NAME = "orbitkv.manager.max.block.bytes";
    public static final int MAX_BLOCK_BYTES_DEFAULT = 64 << 20;

    public static final String INDEX_BUDGET_BYTES_PROP_NAME = "orbitkv.manager.index.budget.bytes";
    public static final long INDEX_BUDGET_BYTES_DEFAULT = 64L << 20;

    public static final String MAX_CLIENTS_PROP_NAME = "orbitkv.manager.max.clients";
    public static final int MAX_CLIENTS_DEFAULT = 64;

    /** Hard ceiling on client slots, as the CnC layout allows. */
    public static final int MAX_CLIENTS_LIMIT = 4096;

    public static final String REQUEST_RING_BYTES_PROP_NAME = "orbitkv.manager.request.ring.bytes";
    public static final int REQUEST_RING_BYTES_DEFAULT = 1 << 20;

    public static final String RESPONSE_RING_BYTES_PROP_NAME = "orbitkv.manager.response.ring.bytes";
    /** Fits the largest response (peer candidates included) as one ring message; see MIN_RESPONSE_RING_BYTES. */
    public static final int RESPONSE_RING_BYTES_DEFAULT = 128 << 10;

    public static final String CLIENT_TIMEOUT_PROP_NAME = "orbitkv.manager.client.timeout";
    public static final long CLIENT_TIMEOUT_NS_DEFAULT = TimeUnit.SECONDS.toNanos(5);

    public static final String MAX_DATA_REGION_BYTES_PROP_NAME = "orbitkv.manager.max.data.region.bytes";
    public static final long MAX_DATA_REGION_BYTES_DEFAULT = 16L << 30;

    /**
     * How the pool is faulted in so that publishes do not pay for page faults: {@code background} (default: on a
     * helper thread while the Manager already serves), {@code blocking} (before it is ready) or {@code off} (by first
     * use). {@code true} and {@code false}, the values of the older boolean setting, mean blocking and off.
     */
    public static final String POOL_PRETOUCH_PROP_NAME = "orbitkv.manager.pool.pretouch";
    public static final PoolPretouch POOL_PRETOUCH_DEFAULT = PoolPretouch.BACKGROUND;

    /**
     * Pause after each pre-touched chunk, a duration; 0 (the default) in production. A diagnostic throttle: it makes
     * a touch in progress observable (tests publish into a pool still being touched) and lets an operator see what a
     * slow touch would do to serving.
     */
    public static final String POOL_PRETOUCH_PAUSE_PROP_NAME = "orbitkv.manager.pool.pretouch.pause";
    public static final long POOL_PRETOUCH_PAUSE_NS_DEFAULT = 0;

    /**
     * Bytes faulted in per {@code MADV_POPULATE_WRITE} call: one huge page, so the toucher sees a stop request within
     * one call (tens of ms at worst on the bench VM) and its progress counter moves in small steps.
     */
    public static final long POOL_TOUCH_CHUNK_BYTES = 2L << 20;

    /** Nice value of the background toucher thread: the least favoured, so agents and engines always run first. */
    public static final int POOL_TOUCH_NICE = 19;

    /**
     * How long {@link Manager#close()} waits for the toucher thread to stop. Past it the pool is left mapped (and
     * the failure logged) rather than unmapped under a thread that may still touch it.
     */
    public static final long POOL_TOUCH_STOP_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(10);

    public static final String COPY_CHUNK_BYTES_PROP_NAME = "orbitkv.manager.copy.chunk.bytes";
    public static final int COPY_CHUNK_BYTES_DEFAULT = 8 << 20;

    public static final String THREADING_PROP_NAME = "orbitkv.manager.threading";
    public static final ThreadingMode THREADING_DEFAULT = ThreadingMode.DEDICATED;

    public static final String IDLE_STRATEGY_PROP_NAME = "orbitkv.manager.idle.strategy";
    public static final String IDLE_STRATEGY_DEFAULT = "backoff";

    /**
     * Timer slack of the agent thread, in nanoseconds: how late the kernel may end its parks to batch wake-ups; 0
     * (the default) leaves the kernel's, 50 us for a normal thread. With it a backoff park of 1 us sleeps ~90 us on
     * the 2-vCPU bench VM and with 1 us of slack ~13 us (benches/tools/ParkLatency.java). Shorter sleeps mean more
     * wake-ups: on that VM, with three Managers and two engines sharing two cores, 1 us of slack made the engine-level
     * cold lookup slower in six alternating pairs of runs (benches/RESULTS.md, fifth session). A Manager whose agent
     * has a core of its own is where to try 1000.
     */
    public static final String AGENT_TIMER_SLACK_NS_PROP_NAME = "orbitkv.manager.agent.timer.slack.ns";
    public static final long AGENT_TIMER_SLACK_NS_DEFAULT = 0L;

    /**
     * Whether a clustered Manager's idle agent sleeps in epoll on its peer socket (a peer's datagram ends the sleep)
     * rather than parking on a timer. Only the {@code backoff} idle strategy sleeps this way.
     */
    public static final String IDLE_PEER_WAIT_PROP_NAME = "orbitkv.manager.idle.peer.wait";
    public static final boolean IDLE_PEER_WAIT_DEFAULT = true;

    /**
     * Whether the idle agent, after a spell of parking ({@link #IDLE_SLEEP_AFTER_PROP_NAME}), sleeps until an engine
     * rings the doorbell, a peer's datagram arrives or its longest sleep is up (docs/engine-ring.md, "Waking a sleeping
     * Manager"). Off, it parks at most 100 us at a time for ever: ~10,000 wake-ups a second and a quarter of a core
     * or more on the 2-vCPU bench VM, for the latency of never having to be woken. Only the {@code backoff} idle
     * strategy sleeps.
     */
    public static final String IDLE_SLEEP_PROP_NAME = "orbitkv.manager.idle.sleep";
    public static final boolean IDLE_SLEEP_DEFAULT = true;

    /** How long the idle agent parks (backoff up to 100 us) before it sleeps; work in between starts it again. */
    public static final String IDLE_SLEEP_AFTER_PROP_NAME = "orbitkv.manager.idle.sleep.after";
    public static final long IDLE_SLEEP_AFTER_NS_DEFAULT = TimeUnit.MILLISECONDS.toNanos(1);

    /** Longest accepted {@link #IDLE_SLEEP_AFTER_PROP_NAME}. */
    public static final long MAX_IDLE_SLEEP_AFTER_NS = TimeUnit.SECONDS.toNanos(1);

    /**
     * The longest single sleep, and so how late an idle Manager runs its timers: heartbeat, client liveness sweeps,
     * the media driver's heartbeats to peers (every 100 ms) and its client keepalives (every 500 ms). Capped at a
     * quarter of the client liveness timeout so engines never see a stale heartbeat.
     */
    public static final String IDLE_SLEEP_MAX_PROP_NAME = "orbitkv.manager.idle.sleep.max";
    public static final long IDLE_SLEEP_MAX_NS_DEFAULT = TimeUnit.MILLISECONDS.toNanos(100);

    /** A sleep lasts at most the client liveness timeout over this, so engines always find the heartbeat fresh. */
    public static final int IDLE_SLEEP_LIVENESS_FRACTION = 4;

    /** Accepted range of {@link #IDLE_SLEEP_MAX_PROP_NAME}. */
    public static final long MIN_IDLE_SLEEP_MAX_NS = TimeUnit.MILLISECONDS.toNanos(1);
    public static final long MAX_IDLE_SLEEP_MAX_NS = TimeUnit.SECONDS.toNanos(10);

    /**
     * How long a clustered Manager keeps retrying its join (placement check and first registration) while etcd does
     * not answer, before it gives up. Engines are served meanwhile. Value: a duration with a unit (ms, s) or a bare
     * number of seconds.
     */
    public static final String JOIN_TIMEOUT_PROP_NAME = "orbitkv.manager.join.timeout";
    public static final long JOIN_TIMEOUT_MS_DEFAULT = io.orbitkv.manager.membership.MembershipConfiguration.JOIN_TIMEOUT_MS_DEFAULT;

    /** {@link #JOIN_TIMEOUT_MS_DEFAULT} as a flag value. */
    public static final String JOIN_TIMEOUT_DEFAULT_TEXT = "60s";

    public static final String METRICS_PORT_PROP_NAME = "orbitkv.manager.metrics.port";
    public static final int METRICS_PORT_DEFAULT = 0;

    public static final String MAX_NAMESPACES_PROP_NAME = "orbitkv.manager.max.namespaces";
    public static final int MAX_NAMESPACES_DEFAULT = 1024;

    public static final String COUNTERS_VALUES_BYTES_PROP_NAME = "orbitkv.manager.counters.values.bytes";
    public static final int COUNTERS_VALUES_BYTES_DEFAULT = 64 << 10;

    public static final String ERROR_LOG_BYTES_PROP_NAME = "orbitkv.manager.error.log.bytes";
    public static final int ERROR_LOG_BYTES_DEFAULT = 1 << 20;

    /** Directory of the SSD tier's files; unset = no SSD tier. */
    public static final String SSD_DIR_PROP_NAME = "orbitkv.manager.ssd.dir";

    public static final String SSD_BYTES_PROP_NAME = "orbitkv.manager.ssd.bytes";
    public static final long SSD_BYTES_DEFAULT = 16L << 30;

    public static final String SSD_ADMISSION_PROP_NAME = "orbitkv.manager.ssd.admission";
    public static final SsdAdmission SSD_ADMISSION_DEFAULT = SsdAdmission.ON_EVICT;

    public static final String SSD_PROMOTE_PROP_NAME = "orbitkv.manager.ssd.promote";
    public static final boolean SSD_PROMOTE_DEFAULT = false;

    public static final String SSD_QUEUE_DEPTH_PROP_NAME = "orbitkv.manager.ssd.queue.depth";
    public static final int SSD_QUEUE_DEPTH_DEFAULT = 64;

    /** Longest an eviction waits for in-flight SSD writes to free staging before it skips the admission. */
    public static final long SSD_ADMISSION_WAIT_NS = java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(100);

    /** Slice of that wait spent in the kernel per completion poll. */
    public static final long SSD_ADMISSION_WAIT_SLICE_NS = java.util.concurrent.TimeUnit.MICROSECONDS.toNanos(50);

    public static final String SSD_BACKEND_PROP_NAME = "orbitkv.manager.ssd.backend";
    public static final SsdBackendChoice SSD_BACKEND_DEFAULT = SsdBackendChoice.AUTO;

    /** Staging memory for SSD I/O (2 MiB-aligned THP mapping registered with the ring); 0 = derived. */
    public static final String SSD_STAGING_BYTES_PROP_NAME = "orbitkv.manager.ssd.staging.bytes";
    public static final long SSD_STAGING_BYTES_DEFAULT = 64L << 20;

    /** Longest wait in the kernel for SSD completions when a duty cycle found nothing else to do. */
    public static final long SSD_IDLE_WAIT_NS = TimeUnit.MICROSECONDS.toNanos(50);

    /** O_DIRECT granule: extents, I/O lengths and staging offsets are multiples of it. */
    public static final int SSD_BLOCK_BYTES = 4096;

    /**
     * When a block gets an SSD copy.
     */
    public enum SsdAdmission
    {
        /** A DRAM victim not yet on SSD is written before its DRAM space is reused (default). */
        ON_EVICT,
        /** Every sealed publish is also written to SSD. */
        ON_PUBLISH,
        /** Nothing is written: the SSD tier only serves what is already there (i.e. nothing, after a restart). */
        OFF
    }

    /**
     * When the DRAM pool's pages are faulted in. The code is what the pool touch mode counter shows.
     */
    public enum PoolPretouch
    {
        /** Not ahead of use: the first write to each page faults it in. */
        OFF(0),
        /** On a low-priority helper thread from start, low offsets first, while the Manager already serves. */
        BACKGROUND(1),
        /** Before the Manager is ready: start-up takes as long as the kernel needs to populate the pool. */
        BLOCKING(2);

        private final int code;

        PoolPretouch(final int code)
        {
            this.code = code;
        }

        public int code()
        {
            return code;
        }

        /**
         * @return the name as the flag spells it.
         */
        public String flagValue()
        {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /**
     * Which I/O path the SSD tier uses.
     */
    public enum SsdBackendChoice
    {
        /** io_uring when the probe succeeds, else FileChannel. */
        AUTO,
        /** io_uring or fail at start. */
        IO_URING,
        /** FileChannel with ExtendedOpenOption.DIRECT, even when io_uring works. */
        FILECHANNEL
    }

    public static SsdAdmission parseSsdAdmission(final String value)
    {
        return switch (value.trim().toLowerCase(java.util.Locale.ROOT))
        {
            case "on-evict", "on_evict" -> SsdAdmission.ON_EVICT;
            case "on-publish", "on_publish" -> SsdAdmission.ON_PUBLISH;
            case "off" -> SsdAdmission.OFF;
            default -> throw new IllegalArgumentException("--ssd-admission must be on-evict, on-publish or off: " + value);
        };
    }

    public static SsdBackendChoice parseSsdBackend(final String value)
    {
        return switch (value.trim().toLowerCase(java.util.Locale.ROOT))
        {
            case "auto" -> SsdBackendChoice.AUTO;
            case "io_uring", "io-uring", "iouring" -> SsdBackendChoice.IO_URING;
            case "filechannel", "file-channel" -> SsdBackendChoice.FILECHANNEL;
            default -> throw new IllegalArgumentException("--ssd-backend must be auto, io_uring or filechannel: " + value);
        };
    }

    /** Leases (pinned Lookup prefixes) one client may hold at once (design: pins are bounded per client). */
    public static final int MAX_LEASES_PER_CLIENT = 64;

    /** Blocks one client may hold pinned under leases at once. */
    public static final int MAX_PINNED_BLOCKS_PER_CLIENT = 4096;

    /** Queued Publish/Read operations per client; more are answered {@code BUSY}. */
    public static final int MAX_IN_FLIGHT_PER_CLIENT = 4;

    /** Requests taken off the request ring per duty cycle, so housekeeping and copies keep running. */
    public static final int REQUESTS_PER_CYCLE = 64;

    /** Attempts to write one response into a full client ring before it is dropped and counted. */
    public static final int RESPONSE_WRITE_ATTEMPTS = 3;

    /** Lookup flag bit: pin the resident prefix under a lease (schema set LookupFlags, choice 0). */
    public static final int LOOKUP_FLAG_PIN = 1;

    /**
     * Lookup flag bit: after the local prefix, ask the cluster catalog for the following keys (schema set LookupFlags,
     * choice 1, since version 2). A standalone Manager accepts it and answers as a local lookup.
     */
    public static final int LOOKUP_FLAG_PEERS = 2;

    /** Housekeeping period: liveness scans, heartbeat and gauges. */
    public static final long HOUSEKEEPING_INTERVAL_NS = TimeUnit.MILLISECONDS.toNanos(1);

    /** The pool is carved in 2 MiB pages (one huge page each). */
    public static final long POOL_BYTES_ALIGNMENT = 2L << 20;

    /** Smallest pool that makes sense: one 2 MiB huge page. */
    public static final long MIN_POOL_BYTES = 2L << 20;

    /**
     * Smallest response ring the protocol fits in: the largest response, {@code EngineRingLimits.MAX_RESPONSE_BYTES}
     * (about 15 KiB with a full set of peer candidates), must fit one message, and Agrona allows capacity / 8.
     */
    public static final int MIN_RESPONSE_RING_BYTES = 128 << 10;

    private Configuration()
    {
    }

    /**
     * How the Manager's agents map onto threads.
     */
    public enum ThreadingMode
    {
        /** The ring agent on its own thread; the right choice on hosts with cores to spare. */
        DEDICATED,
        /** Every agent composed into one thread (CompositeAgent): for 2-core boxes and tests. */
        SHARED
    }

    public static String name()
    {
        return System.getProperty(NAME_PROP_NAME, NAME_DEFAULT);
    }

    /**
     * @return the join timeout in milliseconds from {@link #JOIN_TIMEOUT_PROP_NAME}, or its default.
     */
    public static long joinTimeoutMs()
    {
        final String value = System.getProperty(JOIN_TIMEOUT_PROP_NAME);
        return null == value ? JOIN_TIMEOUT_MS_DEFAULT : parseJoinTimeoutMs(value);
    }

    /**
     * Parse a join timeout: {@code 500ms}, {@code 60s} or a bare number of seconds.
     *
     * @param value the text.
     * @return milliseconds.
     * @throws IllegalArgumentException if it is not of that form.
     */
    public static long parseJoinTimeoutMs(final String value)
    {
        final String text = value.trim().toLowerCase(java.util.Locale.ROOT);
        try
        {
            if (text.endsWith("ms"))
            {
                return Long.parseLong(text.substring(0, text.length() - 2).trim());
            }
            if (text.endsWith("s"))
            {
                return TimeUnit.SECONDS.toMillis(Long.parseLong(text.substring(0, text.length() - 1).trim()));
            }
            return TimeUnit.SECONDS.toMillis(Long.parseLong(text));
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException("--join-timeout takes a duration such as 60s or 500ms: '" + value + "'");
        }
    }

    /**
     * The Manager directory: the property if set, else {@code /dev/shm/orbitkv/<name>}.
     *
     * @param name the Manager name.
     * @return the directory.
     */
    public static File dir(final String name)
    {
        final String dir = System.getProperty(DIR_PROP_NAME);
        return null != dir ? new File(dir) : defaultDir(name);
    }

    public static File defaultDir(final String name)
    {
        return new File(DIR_PARENT_DEFAULT, name);
    }

    public static long poolBytes()
    {
        return SystemUtil.getSizeAsLong(POOL_BYTES_PROP_NAME, POOL_BYTES_DEFAULT);
    }

    public static int maxBlockBytes()
    {
        return SystemUtil.getSizeAsInt(MAX_BLOCK_BYTES_PROP_NAME, MAX_BLOCK_BYTES_DEFAULT);
    }

    public static long indexBudgetBytes()
    {
        return SystemUtil.getSizeAsLong(INDEX_BUDGET_BYTES_PROP_NAME, INDEX_BUDGET_BYTES_DEFAULT);
    }

    public static int maxClients()
    {
        return Integer.getInteger(MAX_CLIENTS_PROP_NAME, MAX_CLIENTS_DEFAULT);
    }

    public static int requestRingBytes()
    {
        return SystemUtil.getSizeAsInt(REQUEST_RING_BYTES_PROP_NAME, REQUEST_RING_BYTES_DEFAULT);
    }

    public static int responseRingBytes()
    {
        return SystemUtil.getSizeAsInt(RESPONSE_RING_BYTES_PROP_NAME, RESPONSE_RING_BYTES_DEFAULT);
    }

    public static long clientTimeoutNs()
    {
        return SystemUtil.getDurationInNanos(CLIENT_TIMEOUT_PROP_NAME, CLIENT_TIMEOUT_NS_DEFAULT);
    }

    public static long maxDataRegionBytes()
    {
        return SystemUtil.getSizeAsLong(MAX_DATA_REGION_BYTES_PROP_NAME, MAX_DATA_REGION_BYTES_DEFAULT);
    }

    public static PoolPretouch poolPretouch()
    {
        final String value = System.getProperty(POOL_PRETOUCH_PROP_NAME);
        return null == value ? POOL_PRETOUCH_DEFAULT : parsePoolPretouch(value);
    }

    public static long poolPretouchPauseNs()
    {
        return SystemUtil.getDurationInNanos(POOL_PRETOUCH_PAUSE_PROP_NAME, POOL_PRETOUCH_PAUSE_NS_DEFAULT);
    }

    /**
     * Parse a pre-touch mode, case-insensitive.
     *
     * @param value {@code background}, {@code blocking} or {@code off}; {@code true}/{@code false} for blocking/off.
     * @return the mode.
     */
    public static PoolPretouch parsePoolPretouch(final String value)
    {
        return switch (value.trim().toLowerCase(java.util.Locale.ROOT))
        {
            case "background" -> PoolPretouch.BACKGROUND;
            case "blocking", "true" -> PoolPretouch.BLOCKING;
            case "off", "false" -> PoolPretouch.OFF;
            default -> throw new IllegalArgumentException(
                "--pool-pretouch must be background, blocking or off (true/false: blocking/off): " + value);
        };
    }

    public static int copyChunkBytes()
    {
        return SystemUtil.getSizeAsInt(COPY_CHUNK_BYTES_PROP_NAME, COPY_CHUNK_BYTES_DEFAULT);
    }

    public static ThreadingMode threadingMode()
    {
        final String value = System.getProperty(THREADING_PROP_NAME);
        return null == value ? THREADING_DEFAULT : parseThreadingMode(value);
    }

    public static String idleStrategyName()
    {
        return System.getProperty(IDLE_STRATEGY_PROP_NAME, IDLE_STRATEGY_DEFAULT);
    }

    public static boolean idlePeerWait()
    {
        final String value = System.getProperty(IDLE_PEER_WAIT_PROP_NAME);
        return null == value ? IDLE_PEER_WAIT_DEFAULT : Boolean.parseBoolean(value);
    }

    public static boolean idleSleep()
    {
        final String value = System.getProperty(IDLE_SLEEP_PROP_NAME);
        return null == value ? IDLE_SLEEP_DEFAULT : Boolean.parseBoolean(value);
    }

    public static long idleSleepAfterNs()
    {
        return SystemUtil.getDurationInNanos(IDLE_SLEEP_AFTER_PROP_NAME, IDLE_SLEEP_AFTER_NS_DEFAULT);
    }

    public static long idleSleepMaxNs()
    {
        return SystemUtil.getDurationInNanos(IDLE_SLEEP_MAX_PROP_NAME, IDLE_SLEEP_MAX_NS_DEFAULT);
    }

    public static long agentTimerSlackNs()
    {
        return Long.getLong(AGENT_TIMER_SLACK_NS_PROP_NAME, AGENT_TIMER_SLACK_NS_DEFAULT);
    }

    public static int metricsPort()
    {
        return Integer.getInteger(METRICS_PORT_PROP_NAME, METRICS_PORT_DEFAULT);
    }

    public static int maxNamespaces()
    {
        return Integer.getInteger(MAX_NAMESPACES_PROP_NAME, MAX_NAMESPACES_DEFAULT);
    }

    public static int countersValuesBytes()
    {
        return SystemUtil.getSizeAsInt(COUNTERS_VALUES_BYTES_PROP_NAME, COUNTERS_VALUES_BYTES_DEFAULT);
    }

    public static int errorLogBytes()
    {
        return SystemUtil.getSizeAsInt(ERROR_LOG_BYTES_PROP_NAME, ERROR_LOG_BYTES_DEFAULT);
    }

    /**
     * Parse a threading mode name, case-insensitive.
     *
     * @param value {@code dedicated} or {@code shared}.
     * @return the mode.
     */
    public static ThreadingMode parseThreadingMode(final String value)
    {
        switch (value.trim().toLowerCase(java.util.Locale.ROOT))
        {
            case "dedicated":
                return ThreadingMode.DEDICATED;
            case "shared":
                return ThreadingMode.SHARED;
            default:
                throw new IllegalArgumentException("unknown threading mode '" + value + "': expected dedicated or shared");
        }
    }

    /**
     * A new idle strategy by name. Busy spinning is opt-in only: on a 2-core host it starves everything else.
     *
     * @param name {@code backoff}, {@code agrona-backoff} (Agrona's defaults: parks up to 1 ms, never sleeps;
     *             for comparison), {@code yielding} or {@code busy}.
     * @return a new idle strategy.
     */
    public static IdleStrategy newIdleStrategy(final String name)
    {
        switch (name.trim().toLowerCase(java.util.Locale.ROOT))
        {
            case "backoff":
                return new WaitingBackoffIdleStrategy(
                    100, 10, TimeUnit.MICROSECONDS.toNanos(1), TimeUnit.MICROSECONDS.toNanos(100));
            case "agrona-backoff":
                return new BackoffIdleStrategy();
            case "yielding":
                return new YieldingIdleStrategy();
            case "busy":
                return new BusySpinIdleStrategy();
            default:
                throw new IllegalArgumentException(
                    "unknown idle strategy '" + name + "': expected backoff, agrona-backoff, yielding or busy");
        }
    }
}
