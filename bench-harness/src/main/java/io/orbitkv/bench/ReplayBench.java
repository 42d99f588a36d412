package io.orbitkv.bench;

import io.orbitkv.manager.catalog.CatalogCounter;
import io.orbitkv.manager.membership.MembershipCounter;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import org.agrona.CloseHelper;

/**
 * Replays a request trace through N clustered Manager processes, one engine per Manager, once per mode, and reports
 * the hit fractions by source against in-process LRU references computed on the same trace and routing, a TTFT proxy,
 * restore latency, byte verification and the Managers' metadata and transfer figures.
 */
final class ReplayBench
{
    /** Pools are whole multiples of this (the Manager's rule for {@code --pool-bytes}). */
    static final long POOL_GRANULE = 2L << 20;
    /** Requests queued ahead per host engine (the dispatcher keeps the trace order within this slack). */
    static final int QUEUE_DEPTH = 2;
    /** Buckets of the hit-rate timeline. */
    static final int TIMELINE_BUCKETS = 50;
    /** How long a killed Manager stays down before it is started again. */
    static final long KILL_DOWN_NS = TimeUnit.SECONDS.toNanos(10);
    /**
     * After the replay, how long transfer pins, sessions and fetches may take to drain before they count as leaked: past
     * the Managers' default transfer session ttl (30 s), so a session that only its ttl ends is seen to end.
     */
    static final long DRAIN_NS = TimeUnit.SECONDS.toNanos(40);

    private static final long SAMPLE_NS = TimeUnit.MILLISECONDS.toNanos(100);

    /**
     * One mode of the comparison.
     *
     * @param name       as {@code --modes} names it.
     * @param peers      lookups and reads carry the peers flag.
     * @param oneCatalog only the first Manager hosts the catalog.
     * @param admission  {@code --peer-admission}.
     * @param largeIndex each Manager's candidate index can hold every block the trace names (the full-domain
     *                   operating point), instead of the design's 16 MiB.
     */
    record Mode(String name, boolean peers, boolean oneCatalog, String admission, boolean largeIndex)
    {
        Mode(final String name, final boolean peers, final boolean oneCatalog, final String admission)
        {
            this(name, peers, oneCatalog, admission, false);
        }
    }

    /**
     * Logical bytes one candidate index entry may take at most (the index's own accounting: 64 bytes of entry, a hash
     * of up to 64 bytes, 40 bytes per candidate for up to 4 candidates).
     */
    static final long CANDIDATE_ENTRY_BYTES = 64 + 64 + 4 * 40;

    /** The Manager's own default admission policy, which the cluster modes run with. */
    static final String DEFAULT_ADMISSION = io.orbitkv.manager.Configuration.PEER_ADMISSION_DEFAULT.flagValue();

    static final List<String> MODE_NAMES = List.of("isolated", "embedded", "one-catalog", "large-index",
        "admission-off", "admission-always", "admission-second-hit");

    static Mode mode(final String name)
    {
        return switch (name)
        {
            case "isolated" -> new Mode(name, false, false, "off");
            case "embedded" -> new Mode(name, true, false, DEFAULT_ADMISSION);
            case "one-catalog" -> new Mode(name, true, true, DEFAULT_ADMISSION);
            case "admission-off" -> new Mode(name, true, false, "off");
            case "admission-always" -> new Mode(name, true, false, "always");
            case "admission-second-hit" -> new Mode(name, true, false, "second-hit");
            case "large-index" -> new Mode(name, true, false, DEFAULT_ADMISSION, true);
            default -> throw new IllegalArgumentException("unknown mode '" + name + "'; modes: " + MODE_NAMES);
        };
    }

    /**
     * A failure injected during a replay.
     *
     * @param kind     kill, kill-stay, restart-catalog, etcd-stop or place.
     * @param target   Manager index (kill, restart-catalog).
     * @param pauseNs  how long etcd stays stopped (etcd-stop).
     * @param atFraction fraction of the requests dispatched when it fires.
     * @param spec     the flag as given.
     * @param argument what follows the kind (the catalog nodes of a place event).
     */
    record Failure(String kind, int target, long pauseNs, double atFraction, String spec, String argument)
    {
        static Failure parse(final String spec, final int managers)
        {
            final int colon = spec.indexOf(':');
            final int at = spec.lastIndexOf('@');
            if (colon < 0 || at < colon || !spec.endsWith("%"))
            {
                throw new IllegalArgumentException("--fail takes kill:b@40%, kill-stay:b@40%, restart-catalog:a@50%, " +
                    "etcd-stop:20s@60% or place:a,b,c,d@30%: '" + spec + "'");
            }
            final String kind = spec.substring(0, colon);
            final String arg = spec.substring(colon + 1, at);
            final double fraction = Double.parseDouble(spec.substring(at + 1, spec.length() - 1)) / 100.0;
            if (fraction <= 0 || fraction >= 1)
            {
                throw new IllegalArgumentException("--fail: the point must be between 0% and 100%: '" + spec + "'");
            }
            return switch (kind)
            {
                case "kill", "kill-stay", "restart-catalog" ->
                {
                    final int target = nodeIndex(arg);
                    if (target < 0 || target >= managers)
                    {
                        throw new IllegalArgumentException("--fail: no Manager '" + arg + "' (a.." +
                            nodeId(managers - 1) + ")");
                    }
                    yield new Failure(kind, target, 0, fraction, spec, arg);
                }
                case "etcd-stop" ->
                {
                    if (!arg.endsWith("s"))
                    {
                        throw new IllegalArgumentException("--fail etcd-stop takes seconds, e.g. 20s: '" + spec + "'");
                    }
                    yield new Failure(kind, -1, TimeUnit.SECONDS.toNanos(Long.parseLong(arg.substring(0,
                        arg.length() - 1))), fraction, spec, arg);
                }
                case "place" ->
                {
                    for (final String node : arg.split(","))
                    {
                        final int index = nodeIndex(node.trim());
                        if (index < 0 || index >= managers)
                        {
                            throw new IllegalArgumentException("--fail place: no Manager '" + node + "' (a.." +
                                nodeId(managers - 1) + ")");
                        }
                    }
                    yield new Failure(kind, -1, 0, fraction, spec, arg);
                }
                default -> throw new IllegalArgumentException("--fail: unknown kind '" + kind + "'");
            };
        }
    }

    /**
     * A run's settings, filled by the command from its flags.
     */
    record Options(
        Path trace,
        int requests,
        int managers,
        int poolBlocks,
        int blockBytes,
        ReplayRoute route,
        double speed,
        List<String> modes,
        double prefillTokensPerS,
        List<Integer> capacitySweep,
        List<Failure> failures,
        Path plots,
        String etcdEndpoints,
        Path workDir,
        long seed,
        boolean progress,
        List<String> managerJvmArgs,
        int catalogReplicas,
        int catalogHosts,
        int maxShardMoves,
        double[] hitWindow,
        Path clusterSecretFile,
        List<String> managerFlags)
    {
    }

    private final Options options;
    private long blockReferences;
    private final PrintWriter out;
    private final PrintStream err;
    private List<ReplayTrace.Request> requests;
    private int[] hosts;
    private int maxChain;
    private final Map<String, ReplayOutcomes> outcomesByMode = new LinkedHashMap<>();

    ReplayBench(final Options options, final PrintWriter out, final PrintStream err)
    {
        this.options = options;
        this.out = out;
        this.err = err;
    }

    private List<String> managerJvmArgs()
    {
        final List<String> args = new ArrayList<>(List.of("-Xmx512m"));
        args.addAll(options.managerJvmArgs());
        return args;
    }

    static String nodeId(final int index)
    {
        return index < 26 ? String.valueOf((char)('a' + index)) : "m" + index;
    }

    static int nodeIndex(final String id)
    {
        if (1 == id.length() && id.charAt(0) >= 'a' && id.charAt(0) <= 'z')
        {
            return id.charAt(0) - 'a';
        }
        return id.startsWith("m") ? Integer.parseInt(id.substring(1)) : -1;
    }

    /**
     * Blocks a pool of at least {@code blocks} blocks really holds once rounded up to the pool granule.
     */
    static long effectiveCapacity(final int blocks, final int blockBytes)
    {
        return poolBytes(blocks, blockBytes) / blockBytes;
    }

    static long poolBytes(final int blocks, final int blockBytes)
    {
        final long bytes = (long)blocks * blockBytes;
        return (bytes + POOL_GRANULE - 1) / POOL_GRANULE * POOL_GRANULE;
    }

    Map<String, Object> run() throws Exception
    {
        final Options o = options;
        requests = ReplayTrace.read(o.trace(), o.requests());
        hosts = o.route().assign(requests, o.managers(), o.seed());
        long refs = 0;
        for (final ReplayTrace.Request r : requests)
        {
            maxChain = Math.max(maxChain, r.hashIds().length);
            refs += r.hashIds().length;
        }
        blockReferences = refs;
        final long capacity = effectiveCapacity(o.poolBlocks(), o.blockBytes());
        out.printf(Locale.ROOT, "bench replay: %s, %d requests, %d block references (longest chain %d); %d Managers, " +
            "%d blocks of %d KiB per host (pool %d MiB; %d asked), route %s, modes %s; %d cores%n", o.trace(),
            requests.size(), refs, maxChain, o.managers(), capacity, o.blockBytes() >> 10,
            poolBytes(o.poolBlocks(), o.blockBytes()) >> 20, o.poolBlocks(), o.route().flag(), o.modes(),
            Runtime.getRuntime().availableProcessors());
        out.flush();
        final Map<String, Object> results = new LinkedHashMap<>();
        final Map<String, Object> config = new LinkedHashMap<>();
        config.put("trace", o.trace().toString());
        config.put("requests", requests.size());
        config.put("blockReferences", refs);
        config.put("managers", o.managers());
        config.put("poolBlocksAsked", o.poolBlocks());
        config.put("poolBlocks", capacity);
        config.put("blockBytes", o.blockBytes());
        config.put("route", o.route().flag());
        config.put("speed", o.speed());
        config.put("prefillTokensPerS", o.prefillTokensPerS());
        config.put("tokensPerBlock", ReplayTrace.TOKENS_PER_BLOCK);
        config.put("failures", o.failures().stream().map(Failure::spec).toList());
        config.put("cores", Runtime.getRuntime().availableProcessors());
        config.put("engines", "one engine process per Manager (ReplayEngine, an EngineClient), sent request indices " +
            "on its stdin, answering on its stdout");
        results.put("config", config);

        final Map<String, Object> modes = new LinkedHashMap<>();
        results.put("modes", modes);
        final Map<String, ReplayOutcomes> outcomes = new LinkedHashMap<>();
        BenchEtcd etcd = null;
        try
        {
            String endpoints = o.etcdEndpoints();
            if (null == endpoints)
            {
                etcd = BenchEtcd.start(o.workDir());
                endpoints = etcd.endpoint();
            }
            final Map<String, Double> reference = references(capacity);
            for (final String name : o.modes())
            {
                final Mode mode = mode(name);
                final Map<String, Object> figures = new LinkedHashMap<>();
                outcomes.put(name, replay(mode, endpoints, etcd, capacity, o.failures(), reference, figures));
                outcomesByMode.put(name, outcomes.get(name));
                modes.put(name, figures);
                printMode(name, figures);
            }
            if (!o.capacitySweep().isEmpty())
            {
                results.put("capacitySweep", sweep(endpoints));
            }
        }
        finally
        {
            CloseHelper.quietClose(etcd);
        }
        if (null != o.plots())
        {
            results.put("plots", ReplayPlots.write(o.plots(), results, outcomes, o.prefillTokensPerS()));
            out.println("plots written to " + o.plots());
        }
        summary(modes);
        return results;
    }

    private Map<String, Object> sweep(final String endpoints) throws Exception
    {
        final Map<String, Object> sweep = new LinkedHashMap<>();
        final String first = options.modes().get(0);
        for (final int blocks : options.capacitySweep())
        {
            final long capacity = effectiveCapacity(blocks, options.blockBytes());
            final Map<String, Double> reference = references(capacity);
            final Map<String, Object> figures = new LinkedHashMap<>();
            replay(mode(first), endpoints, null, capacity, List.of(), reference, figures);
            final Map<String, Object> point = new LinkedHashMap<>();
            point.put("poolBlocks", capacity);
            point.put("mode", first);
            point.put("hitFraction", ((Map<?, ?>)figures.get("hitFraction")).get("total"));
            point.put("reference", reference);
            sweep.put(Integer.toString(blocks), point);
            out.printf(Locale.ROOT, "capacity %d blocks per host: %s %.4f, isolated LRU %.4f, global LRU %.4f, " +
                "infinite %.4f%n", capacity, first, point.get("hitFraction"), reference.get("isolatedLru"),
                reference.get("globalLru"), reference.get("infinite"));
            out.flush();
        }
        return sweep;
    }

    /**
     * The in-process references on this trace and routing: an LRU of {@code capacity} per host, one LRU of N times that
     * in trace order, and an infinite cache; each the fraction of block references that were leading hits.
     */
    Map<String, Double> references(final long capacity)
    {
        final ReplayLru[] isolated = new ReplayLru[options.managers()];
        for (int h = 0; h < isolated.length; h++)
        {
            isolated[h] = new ReplayLru(capacity);
        }
        final ReplayLru global = new ReplayLru(capacity * options.managers());
        final ReplayLru infinite = new ReplayLru(Long.MAX_VALUE);
        long refs = 0;
        long isolatedHits = 0;
        long globalHits = 0;
        long infiniteHits = 0;
        for (final ReplayTrace.Request r : requests)
        {
            refs += r.hashIds().length;
            isolatedHits += isolated[hosts[r.index()]].access(r.hashIds());
            globalHits += global.access(r.hashIds());
            infiniteHits += infinite.access(r.hashIds());
        }
        final Map<String, Double> reference = new LinkedHashMap<>();
        reference.put("isolatedLru", (double)isolatedHits / refs);
        reference.put("globalLru", (double)globalHits / refs);
        reference.put("infinite", (double)infiniteHits / refs);
        return reference;
    }

    /**
     * The isolated reference's leading hits per request (what the isolated mode must match exactly).
     */
    int[] isolatedHitsPerRequest(final long capacity)
    {
        final ReplayLru[] isolated = new ReplayLru[options.managers()];
        for (int h = 0; h < isolated.length; h++)
        {
            isolated[h] = new ReplayLru(capacity);
        }
        final int[] hits = new int[requests.size()];
        for (final ReplayTrace.Request r : requests)
        {
            hits[r.index()] = isolated[hosts[r.index()]].access(r.hashIds());
        }
        return hits;
    }

    /**
     * What each request of a replayed mode found (after {@link #run()}).
     *
     * @param mode the mode's name.
     * @return its outcomes, or null.
     */
    ReplayOutcomes outcomes(final String mode)
    {
        return outcomesByMode.get(mode);
    }

    List<ReplayTrace.Request> requests()
    {
        return requests;
    }

    private ReplayOutcomes replay(
        final Mode mode,
        final String endpoints,
        final BenchEtcd etcd,
        final long capacity,
        final List<Failure> failures,
        final Map<String, Double> reference,
        final Map<String, Object> figures) throws Exception
    {
        final Options o = options;
        final int n = o.managers();
        final StringBuilder catalog = new StringBuilder();
        for (int h = 0; h < (mode.oneCatalog() ? 1 : 0 == o.catalogHosts() ? n : Math.min(n, o.catalogHosts())); h++)
        {
            catalog.append(0 == h ? "" : ",").append(nodeId(h));
        }
        final long pool = poolBytes((int)capacity, o.blockBytes());
        final long region = (long)maxChain * o.blockBytes();
        // Every block reference of the trace as a distinct entry bounds what the large index must hold.
        final long candidateBytes = Math.min(4L << 30, Math.max(16L << 20, blockReferences * CANDIDATE_ENTRY_BYTES));
        final String clusterName = "bench-replay-" + UUID.randomUUID().toString().substring(0, 8);
        final List<String> flags = List.of(
            "--catalog-candidate-bytes", mode.largeIndex() ? Long.toString(candidateBytes) : "16m",
            "--pool-bytes", Long.toString(pool),
            "--max-block-bytes", Integer.toString(o.blockBytes()),
            "--max-data-region-bytes", Long.toString(Math.max(region, o.blockBytes())),
            "--pool-pretouch", "off",
            "--etcd-endpoints", endpoints,
            "--cluster-name", clusterName,
            "--catalog-nodes", catalog.toString(),
            "--catalog-replicas", Integer.toString(o.catalogReplicas()),
            "--max-shard-moves", Integer.toString(o.maxShardMoves()),
            "--peer-endpoint", "127.0.0.1:0",
            "--transfer-endpoint", "127.0.0.1:0",
            "--peer-admission", mode.admission());
        final List<String> managerFlags = new java.util.ArrayList<>(flags);
        // the bench's own etcd is plaintext; a given one may need TLS and auth (BenchReplayCommand sets the properties)
        managerFlags.addAll(io.orbitkv.manager.cli.EtcdAuthOptions.argsFromProperties());
        if (null != o.clusterSecretFile())
        {
            managerFlags.add("--cluster-secret-file");
            managerFlags.add(o.clusterSecretFile().toString());
        }
        managerFlags.addAll(o.managerFlags());
        final Path dir = o.workDir().resolve(mode.name() + "-" + capacity);
        java.nio.file.Files.createDirectories(dir);
        final List<BenchManager> managers = new ArrayList<>();
        final List<ReplayEngineProcess> engines = new ArrayList<>();
        final ReplaySampler sampler = new ReplaySampler(managers);
        try
        {
            final long startNs = System.nanoTime();
            for (int h = 0; h < n; h++)
            {
                managers.add(BenchManager.start(nodeId(h), dir, managerJvmArgs(), managerFlags));
            }
            for (final BenchManager m : managers)
            {
                m.awaitReady();
            }
            for (final BenchManager m : managers)
            {
                m.awaitCounter(MembershipCounter.VIEW_COMPLETE, (v) -> 1 == v,
                    BenchManager.START_TIMEOUT_NS);
                m.awaitCounter(MembershipCounter.MEMBERS, (v) -> n == v, BenchManager.START_TIMEOUT_NS);
                m.awaitCounter(CatalogCounter.INCOMPLETE_SHARDS, (v) -> 0 == v,
                    BenchManager.START_TIMEOUT_NS);
            }
            out.printf(Locale.ROOT, "%nmode %s: %d Managers (catalog on %s, --peer-admission %s, peers flag %s) ready " +
                "in %.1f s%n", mode.name(), n, catalog, mode.admission(), mode.peers(), (System.nanoTime() - startNs) / 1e9);
            out.flush();
            final ReplayOutcomes outcomes = new ReplayOutcomes(requests.size());
            for (int h = 0; h < n; h++)
            {
                engines.add(ReplayEngineProcess.start(h, nodeId(h), managers.get(h).dir(), dir, o.blockBytes(), maxChain, mode.peers(),
                    o.trace(), o.requests(), requests, outcomes));
            }
            for (final ReplayEngineProcess e : engines)
            {
                e.awaitReady();
            }
            final List<Map<String, Long>> before = new ArrayList<>();
            for (final BenchManager m : managers)
            {
                before.add(m.counters());
            }
            final long replayStartNs = System.nanoTime();
            outcomes.begin(replayStartNs);
            sampler.start();
            final ReplayFailures injected = new ReplayFailures(failures, managers, engines, etcd, out,
                endpoints, clusterName, o.catalogReplicas());
            final ReplayProgress progress = o.progress() ? new ReplayProgress(err, mode.name(), outcomes, requests.size()) : null;
            final long firstTs = requests.get(0).timestampMs();
            for (final ReplayTrace.Request r : requests)
            {
                if (o.speed() > 0)
                {
                    final long dueNs = replayStartNs + (long)((r.timestampMs() - firstTs) * 1e6 / o.speed());
                    while (System.nanoTime() - dueNs < 0)
                    {
                        LockSupport.parkNanos(Math.min(dueNs - System.nanoTime(), TimeUnit.MILLISECONDS.toNanos(50)));
                    }
                }
                injected.onDispatch(r.index(), requests.size(), outcomes);
                engines.get(hosts[r.index()]).dispatch(r.index());
                if (null != progress)
                {
                    progress.maybePrint();
                }
            }
            for (final ReplayEngineProcess e : engines)
            {
                e.finish();
            }
            final long replayNs = System.nanoTime() - replayStartNs;
            if (null != progress)
            {
                progress.finish();
            }
            injected.close();
            figures.put("engineProcesses", ReplayEngineProcess.describeAll(engines));
            final Map<String, Long> atEnd = sampler.drain(0);
            final long drainStartNs = System.nanoTime();
            final Map<String, Long> leaks = new LinkedHashMap<>(sampler.drain(DRAIN_NS));
            leaks.put("drainMs", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - drainStartNs));
            for (final Map.Entry<String, Long> e : atEnd.entrySet())
            {
                leaks.put(e.getKey() + "AtEnd", e.getValue());
            }
            sampler.close();
            final List<Map<String, Long>> after = new ArrayList<>();
            final List<Map<String, Long>> moved = new ArrayList<>();
            final List<Integer> processes = new ArrayList<>();
            for (int h = 0; h < n; h++)
            {
                final BenchManager m = managers.get(h);
                final List<Map<String, Long>> retired = m.retiredCounters();
                after.add(m.counters());
                moved.add(ReplayFigures.movedAcrossProcesses(before.get(h), retired, after.get(h)));
                processes.add(retired.size() + 1);
            }
            figures.put("managerProcesses", processes);
            ReplayFigures.fill(figures, mode, outcomes, reference, moved, after, sampler, leaks, replayNs,
                o.prefillTokensPerS(), injected.events());
            if (null != o.hitWindow())
            {
                figures.put("hitWindow", ReplayFigures.hitBetween(outcomes, o.hitWindow()[0], o.hitWindow()[1]));
            }
            return outcomes;
        }
        finally
        {
            sampler.close();
            CloseHelper.quietCloseAll(engines);
            CloseHelper.quietCloseAll(managers);
        }
    }

    private void printMode(final String name, final Map<String, Object> figures)
    {
        final Map<?, ?> hit = (Map<?, ?>)figures.get("hitFraction");
        final Map<?, ?> ref = (Map<?, ?>)figures.get("reference");
        final Map<?, ?> ttft = (Map<?, ?>)figures.get("ttftMs");
        final Map<?, ?> restore = (Map<?, ?>)figures.get("restoreMs");
        out.printf(Locale.ROOT, "mode %s: hit %.4f (local DRAM %.4f, local SSD %.4f, peer %.4f; recompute %.4f); " +
            "references isolated LRU %.4f, global LRU %.4f, infinite %.4f; ratio to global LRU %.3fx%n", name,
            hit.get("total"), hit.get("localDram"), hit.get("localSsd"), hit.get("peer"), figures.get("recomputeFraction"),
            ref.get("isolatedLru"), ref.get("globalLru"), ref.get("infinite"), figures.get("ratioToGlobalLru"));
        out.printf(Locale.ROOT, "  TTFT proxy p50 %.1f ms, p95 %.1f ms, p99 %.1f ms; restore p50 %.3f ms, p99 %.3f ms; " +
            "wrong bytes %d; etcd calls per request %.4f; %.1f requests/s over %.1f s%n", ttft.get("p50"), ttft.get("p95"),
            ttft.get("p99"), restore.get("p50"), restore.get("p99"), figures.get("wrongBytes"),
            figures.get("etcdCallsPerRequest"), figures.get("requestsPerS"), figures.get("replaySeconds"));
        out.println("  metadata: " + figures.get("metadata"));
        out.println("  transfer: " + figures.get("transfer"));
        if (figures.containsKey("failures"))
        {
            out.println("  failures: " + figures.get("failures"));
        }
        out.flush();
    }

    private void summary(final Map<String, Object> modes)
    {
        out.println();
        out.println("| mode | hit | local DRAM | peer | isolated LRU | global LRU | infinite | ratio to global LRU (goal >= 0.97x)" +
            " | TTFT p50/p95/p99 ms | wrong bytes | etcd calls/request |");
        out.println("|---|---|---|---|---|---|---|---|---|---|---|");
        for (final Map.Entry<String, Object> e : modes.entrySet())
        {
            final Map<?, ?> f = (Map<?, ?>)e.getValue();
            final Map<?, ?> hit = (Map<?, ?>)f.get("hitFraction");
            final Map<?, ?> ref = (Map<?, ?>)f.get("reference");
            final Map<?, ?> ttft = (Map<?, ?>)f.get("ttftMs");
            out.printf(Locale.ROOT, "| %s | %.4f | %.4f | %.4f | %.4f | %.4f | %.4f | %.3fx | %.1f / %.1f / %.1f | %d | %.4f |%n",
                e.getKey(), hit.get("total"), hit.get("localDram"), hit.get("peer"), ref.get("isolatedLru"),
                ref.get("globalLru"), ref.get("infinite"), f.get("ratioToGlobalLru"), ttft.get("p50"), ttft.get("p95"),
                ttft.get("p99"), f.get("wrongBytes"), f.get("etcdCallsPerRequest"));
        }
        out.flush();
    }
}
