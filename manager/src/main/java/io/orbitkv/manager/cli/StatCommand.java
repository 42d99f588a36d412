package io.orbitkv.manager.cli;

import io.orbitkv.manager.catalog.CatalogCounter;
import io.orbitkv.manager.membership.MembershipCounter;
import io.orbitkv.manager.status.CncReader;
import io.orbitkv.manager.Configuration;
import io.orbitkv.manager.status.CounterDescriptor;
import io.orbitkv.manager.status.SystemCounterDescriptor;
import io.orbitkv.manager.membership.FenceCause;
import io.orbitkv.manager.membership.Membership;
import io.orbitkv.manager.peer.PeerCounter;
import io.orbitkv.manager.store.StoreCounter;
import io.orbitkv.manager.transfer.TransferCounter;
import org.agrona.concurrent.status.CountersReader;
import io.orbitkv.codecs.cnc.CncFileDescriptor;
import java.io.File;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code orbitkv stat}: prints a Manager's header facts and every counter from its CnC file, from any process,
 * refreshed in place (like AeronStat) or once with {@code --once}.
 *
 * <p>Exit codes: 0 printed, 1 no Manager (file missing, not ready, or its Manager is dead), 2 usage.
 */
@Command(
    name = "stat",
    mixinStandardHelpOptions = true,
    description = "Print a running Manager's counters from its CnC file.")
public final class StatCommand implements Callable<Integer>
{
    private static final String CLEAR_SCREEN = "\u001b[H\u001b[2J";

    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    @Option(names = "--dir", description = "Manager directory; overrides --name.")
    File dir;

    @Option(names = "--name", description = "Manager name, directory " + Configuration.DIR_PARENT_DEFAULT +
        "/<name> (default: ${DEFAULT-VALUE}).", defaultValue = Configuration.NAME_DEFAULT)
    String name;

    @Option(names = "--once", description = "Print one snapshot and exit.")
    boolean once;

    @Option(names = "--interval-ms", description = "Refresh period (default: ${DEFAULT-VALUE}).", defaultValue = "1000")
    long intervalMs;

    @Option(names = "--errors", description = "Also print the distinct error log.")
    boolean errors;

    @Option(names = "--rate-window-ms", description = "With --once and a catalog to show: measure the metadata rate " +
        "over this window before printing; 0 prints totals only (default: ${DEFAULT-VALUE}).", defaultValue = "200")
    long rateWindowMs;

    public Integer call() throws InterruptedException
    {
        final PrintWriter out = spec.commandLine().getOut();
        final PrintWriter err = spec.commandLine().getErr();
        if (intervalMs < 1)
        {
            err.println("orbitkv stat: --interval-ms must be positive");
            return 2;
        }
        if (rateWindowMs < 0)
        {
            err.println("orbitkv stat: --rate-window-ms must not be negative");
            return 2;
        }
        final File managerDir = null != dir ? dir : Configuration.defaultDir(name);
        final File cncFile = new File(managerDir, CncFileDescriptor.CNC_FILE_NAME);

        final CncReader reader;
        try
        {
            reader = CncReader.map(cncFile);
        }
        catch (final IllegalStateException ex)
        {
            err.println("orbitkv stat: " + ex.getMessage());
            return 1;
        }

        try (reader)
        {
            if (!reader.isReady())
            {
                err.println("orbitkv stat: the Manager at " + managerDir + " has not finished starting (layout version " +
                    reader.layoutVersion() + ")");
                return 1;
            }
            final MetadataRate rate = new MetadataRate();
            if (once && rateWindowMs > 0 && catalogActive(reader.countersReader()))
            {
                // One snapshot still shows a rate: measured over a short window before printing. A Manager without
                // a catalog has no rate to show, so a standalone stat --once answers without waiting.
                rate.sample(reader.countersReader(), System.nanoTime());
                TimeUnit.MILLISECONDS.sleep(rateWindowMs);
            }
            while (true)
            {
                final StringBuilder text = new StringBuilder(4096);
                rate.sample(reader.countersReader(), System.nanoTime());
                final boolean alive = render(reader, text, rate);
                if (errors)
                {
                    renderErrors(reader, text);
                }
                if (!once)
                {
                    out.print(CLEAR_SCREEN);
                }
                out.print(text);
                out.flush();
                if (once)
                {
                    return alive ? 0 : 1;
                }
                if (!alive)
                {
                    err.println("orbitkv stat: Manager is no longer alive");
                    return 1;
                }
                TimeUnit.MILLISECONDS.sleep(intervalMs);
            }
        }
    }

    static boolean render(final CncReader reader, final StringBuilder text, final MetadataRate rate)
    {
        final long nowMs = System.currentTimeMillis();
        final boolean alive = reader.isManagerAlive(nowMs);
        text.append("OrbitKV Manager  ").append(reader.cncFile()).append('\n');
        text.append("  pid ").append(reader.managerPid())
            .append("  started ").append(Instant.ofEpochMilli(reader.startTimeMs()))
            .append("  uptime ").append(Duration.ofMillis(Math.max(0, nowMs - reader.startTimeMs())).toSeconds()).append(" s\n");
        text.append("  runtime UUID ").append(reader.runtimeUuid())
            .append("  heartbeat age ").append(Math.max(0, nowMs - reader.managerHeartbeatMs())).append(" ms")
            .append(alive ? "  (alive)" : "  (NOT ALIVE)").append('\n');
        text.append("  pool ").append(reader.poolBytes()).append(" bytes  client slots ").append(reader.maxClients())
            .append("  client liveness ").append(reader.clientLivenessNs() / 1_000_000).append(" ms\n");
        renderPoolTouch(reader.countersReader(), reader.poolBytes(), text);
        renderMembership(reader.countersReader(), text);
        renderCatalog(reader.countersReader(), text, rate);
        renderTransfers(reader.countersReader(), text);
        text.append("==========================\n");
        reader.countersReader().forEach((value, counterId, label) ->
            text.append(String.format("%3d: %,20d - %s%n", counterId, value, label)));
        return alive;
    }

    /**
     * E.g. {@code pool touch: 37% (380 MiB of 1 GiB), background, touching for 8.2 s}, then the time to ready.
     */
    static void renderPoolTouch(final CountersReader counters, final long poolBytes, final StringBuilder text)
    {
        final int readyId = SystemCounterDescriptor.READY_MS.fixedId();
        if (counters.maxCounterId() <= readyId || CountersReader.RECORD_ALLOCATED != counters.getCounterState(readyId))
        {
            return;
        }
        final long mode = value(counters, StoreCounter.POOL_TOUCH_MODE);
        text.append("  pool touch: ");
        if (Configuration.PoolPretouch.OFF.code() == mode)
        {
            text.append("off (first use faults pages in)");
        }
        else
        {
            final long touched = value(counters, StoreCounter.POOL_BYTES_TOUCHED);
            final long seconds100 = value(counters, StoreCounter.POOL_TOUCH_MS) / 10;
            final String took = String.format("%d.%d s", seconds100 / 100, (seconds100 / 10) % 10);
            text.append(poolBytes > 0 ? touched * 100 / poolBytes : 0).append("% (").append(bytesText(touched))
                .append(" of ").append(bytesText(poolBytes)).append("), ")
                .append(Configuration.PoolPretouch.BLOCKING.code() == mode ? "blocking" : "background");
            final long state = value(counters, StoreCounter.POOL_TOUCH_STATE);
            switch ((int)state)
            {
                case StoreCounter.POOL_TOUCH_TOUCHING -> text.append(", touching for ").append(took);
                case StoreCounter.POOL_TOUCH_DONE -> text.append(", done in ").append(took);
                case StoreCounter.POOL_TOUCH_STOPPED -> text.append(", stopped at close after ").append(took);
                case StoreCounter.POOL_TOUCH_FAILED ->
                    text.append(", FAILED after ").append(took).append(" (see --errors); first use faults the rest in");
                default -> text.append(", not started");
            }
        }
        text.append("; ready ").append(value(counters, SystemCounterDescriptor.READY_MS))
            .append(" ms after process start\n");
    }

    /**
     * Whole MiB below 1 GiB, GiB with up to two decimals above: "380 MiB", "1 GiB", "5.06 GiB".
     */
    static String bytesText(final long bytes)
    {
        final long mib = 1L << 20;
        final long gib = 1L << 30;
        if (bytes < gib)
        {
            return bytes % mib == 0 || bytes > mib ? (bytes / mib) + " MiB" : bytes + " bytes";
        }
        final long hundredths = bytes * 100 / gib;
        return hundredths % 100 == 0 ? (hundredths / 100) + " GiB" :
            String.format("%d.%02d GiB", hundredths / 100, hundredths % 100);
    }

    static void renderMembership(final CountersReader counters, final StringBuilder text)
    {
        final int stateId = MembershipCounter.REGISTRATION_STATE.fixedId();
        if (counters.maxCounterId() <= stateId ||
            CountersReader.RECORD_ALLOCATED != counters.getCounterState(stateId))
        {
            return;
        }
        final long state = counters.getCounterValue(stateId);
        if (Membership.STATE_STANDALONE == state)
        {
            text.append("  membership: standalone (no --etcd-endpoints)\n");
            return;
        }
        final FenceCause cause =
            FenceCause.of(counters.getCounterValue(MembershipCounter.FENCED.fixedId()));
        text.append("  membership: ");
        if (FenceCause.NONE != cause)
        {
            text.append(Membership.STATE_EXPIRED == state ? "EXPIRED" : "FENCED")
                .append(cause.reRegisters() ? ", registering a new incarnation (" : " until restart (")
                .append(cause.description()).append("); remote work refused, local service continues");
        }
        else
        {
            text.append(Membership.STATE_REGISTERED == state ? "registered" : "registering");
        }
        final int incarnationId = MembershipCounter.INCARNATION.fixedId();
        if (counters.maxCounterId() >= incarnationId &&
            CountersReader.RECORD_ALLOCATED == counters.getCounterState(incarnationId))
        {
            text.append(", epoch ").append(counters.getCounterValue(MembershipCounter.EPOCH.fixedId()))
                .append(", incarnation ").append(counters.getCounterValue(incarnationId))
                .append(" (re-registrations ")
                .append(counters.getCounterValue(MembershipCounter.REREGISTRATIONS.fixedId()))
                .append(", join retries ")
                .append(counters.getCounterValue(MembershipCounter.JOIN_RETRIES.fixedId()))
                .append("), keepalive rtt max ")
                .append(counters.getCounterValue(MembershipCounter.KEEPALIVE_RTT_MAX_MS.fixedId()))
                .append(" ms");
        }
        text.append("\n  member view ")
            .append(1 == counters.getCounterValue(MembershipCounter.VIEW_COMPLETE.fixedId()) ?
                "complete" : "INCOMPLETE")
            .append(", members ").append(counters.getCounterValue(MembershipCounter.MEMBERS.fixedId()))
            .append(", remote work ")
            .append(1 == counters.getCounterValue(MembershipCounter.REMOTE_WORK_ENABLED.fixedId()) ?
                "enabled" : "DISABLED")
            .append(", shards unavailable ")
            .append(counters.getCounterValue(MembershipCounter.SHARDS_UNAVAILABLE.fixedId()))
            .append(" of 16");
        final int degradedId = MembershipCounter.SHARDS_DEGRADED.fixedId();
        final long degraded = counters.maxCounterId() >= degradedId &&
            CountersReader.RECORD_ALLOCATED == counters.getCounterState(degradedId) ?
            counters.getCounterValue(degradedId) : 0;
        if (degraded > 0)
        {
            // The gauge counts shards, whatever each one's live copies: orbitkv members shows them per shard.
            text.append(", reduced failure coverage on ").append(degraded)
                .append(" of 16 (fewer live copies than asked; orbitkv members lists them)");
        }
        text.append('\n');
    }

    private static boolean catalogActive(final CountersReader counters)
    {
        final int hostedId = CatalogCounter.HOSTED_SHARDS.fixedId();
        return counters.maxCounterId() > hostedId && CountersReader.RECORD_ALLOCATED == counters.getCounterState(hostedId) &&
            0 != PeerCounter.SESSIONS_OPENED.valueIn(counters) + counters.getCounterValue(hostedId) +
            counters.getCounterValue(CatalogCounter.RECORDS_SENT.fixedId());
    }

    private static void renderCatalog(final CountersReader counters, final StringBuilder text, final MetadataRate rate)
    {
        if (!catalogActive(counters))
        {
            return;
        }
        text.append("  catalog: metadata ");
        if (null != rate && rate.hasRate())
        {
            text.append(String.format("%,.0f B/s out, %,.0f B/s in", rate.sentPerSecond(), rate.receivedPerSecond()));
        }
        else
        {
            text.append("(rate after two samples)");
        }
        text.append(", update lag ").append(value(counters, CatalogCounter.UPDATE_LAG_US))
            .append(" us (max ").append(value(counters, CatalogCounter.UPDATE_LAG_MAX_US)).append(" us)")
            .append("\n  catalog: journal ").append(value(counters, CatalogCounter.JOURNAL_BYTES))
            .append(" bytes, resyncs ").append(value(counters, CatalogCounter.SNAPSHOTS_STARTED))
            .append(" (journal overflows ").append(value(counters, CatalogCounter.JOURNAL_OVERFLOWS))
            .append("), incomplete shards ").append(value(counters, CatalogCounter.INCOMPLETE_SHARDS))
            .append(" of ").append(value(counters, CatalogCounter.HOSTED_SHARDS)).append(" hosted")
            .append(", host index ").append(value(counters, CatalogCounter.INDEX_BYTES))
            .append(" bytes, candidate index ").append(value(counters, CatalogCounter.CANDIDATE_BYTES))
            .append(" bytes\n  catalog: cold queries served ")
            .append(value(counters, CatalogCounter.COLD_QUERIES_SERVED))
            .append(" (rows ").append(value(counters, CatalogCounter.COLD_ROWS_SERVED))
            .append(", incomplete ").append(value(counters, CatalogCounter.COLD_ROWS_INCOMPLETE))
            .append("), refused ").append(value(counters, CatalogCounter.COLD_QUERIES_REFUSED))
            .append(", malformed ").append(value(counters, CatalogCounter.COLD_QUERIES_MALFORMED))
            .append(", shard claims corrected ")
            .append(value(counters, CatalogCounter.COLD_CLAIMS_CORRECTED))
            .append("\n  catalog: discovery cold queries ").append(value(counters, CatalogCounter.COLD_QUERIES))
            .append(" (keys ").append(value(counters, CatalogCounter.COLD_KEYS))
            .append("), keys from own shards ").append(value(counters, CatalogCounter.LOCAL_HOST_KEYS))
            .append(", candidate hits ").append(value(counters, CatalogCounter.CANDIDATE_HITS))
            .append('\n');
    }

    /**
     * One line per side of peer transfers, once the Manager has done any: what it served and what it holds for peers,
     * what it restored from them and how often it failed or waited.
     */
    private static void renderTransfers(final CountersReader counters, final StringBuilder text)
    {
        final int lastId = TransferCounter.BUDGET_WAITS.fixedId();
        if (counters.maxCounterId() < lastId || CountersReader.RECORD_ALLOCATED != counters.getCounterState(lastId) ||
            0 == value(counters, TransferCounter.SOURCE_GRANTS) +
            value(counters, TransferCounter.AUTHORIZE_SENT))
        {
            return;
        }
        text.append("  transfers served: sessions ").append(value(counters, TransferCounter.SOURCE_GRANTS))
            .append(" (keys ").append(value(counters, TransferCounter.SOURCE_GRANTED_KEYS))
            .append(", from SSD ").append(value(counters, TransferCounter.SOURCE_SSD_GRANTED_KEYS))
            .append("), held now ").append(value(counters, TransferCounter.SOURCE_SESSIONS_ACTIVE))
            .append(", pinned ").append(value(counters, TransferCounter.SOURCE_PINNED_BYTES))
            .append(" bytes, SSD export staging ")
            .append(value(counters, TransferCounter.SOURCE_SSD_STAGED_BYTES))
            .append(" bytes, quarantined ").append(value(counters, TransferCounter.SOURCE_QUARANTINED_SESSIONS))
            .append("\n  transfers fetched: blocks ").append(value(counters, TransferCounter.BLOCKS_FETCHED))
            .append(" (").append(value(counters, TransferCounter.BYTES_FETCHED))
            .append(" bytes), refusals ").append(value(counters, TransferCounter.REFUSALS_RECEIVED))
            .append(", checksum mismatches ").append(value(counters, TransferCounter.CHECKSUM_MISMATCHES))
            .append(", read failures ").append(value(counters, TransferCounter.READ_FAILURES))
            .append(", budget waits ").append(value(counters, TransferCounter.BUDGET_WAITS))
            .append(", over budget ").append(value(counters, TransferCounter.FETCH_BUDGET_EXPIRED))
            .append('\n');
    }

    private static long value(final CountersReader counters, final CounterDescriptor descriptor)
    {
        return descriptor.valueIn(counters);
    }

    /**
     * Metadata bytes per second sent and received by the peer transport, between the last two samples.
     */
    static final class MetadataRate
    {
        private long previousNs;
        private long previousSent;
        private long previousReceived;
        private double sentPerSecond = Double.NaN;
        private double receivedPerSecond = Double.NaN;
        private boolean sampled;

        void sample(final CountersReader counters, final long nowNs)
        {
            final long sent = PeerCounter.METADATA_BYTES_SENT.valueIn(counters);
            final long received = PeerCounter.METADATA_BYTES_RECEIVED.valueIn(counters);
            if (sampled && nowNs > previousNs)
            {
                final double seconds = (nowNs - previousNs) / 1e9;
                sentPerSecond = (sent - previousSent) / seconds;
                receivedPerSecond = (received - previousReceived) / seconds;
            }
            previousNs = nowNs;
            previousSent = sent;
            previousReceived = received;
            sampled = true;
        }

        boolean hasRate()
        {
            return !Double.isNaN(sentPerSecond);
        }

        double sentPerSecond()
        {
            return sentPerSecond;
        }

        double receivedPerSecond()
        {
            return receivedPerSecond;
        }
    }

    private static void renderErrors(final CncReader reader, final StringBuilder text)
    {
        text.append("== distinct errors ==\n");
        final int count = reader.readErrors((observationCount, firstMs, lastMs, encodedException) ->
            text.append(observationCount).append(" observations, first ").append(Instant.ofEpochMilli(firstMs))
                .append(", last ").append(Instant.ofEpochMilli(lastMs)).append('\n').append(encodedException).append('\n'));
        text.append(count).append(" distinct errors\n");
    }
}
