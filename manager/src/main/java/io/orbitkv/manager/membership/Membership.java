package io.orbitkv.manager.membership;

import io.orbitkv.manager.authority.AuthorityLog;
import io.orbitkv.manager.status.SystemCounters;
import java.io.PrintStream;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import org.agrona.CloseHelper;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.NanoClock;

/**
 * A Manager's membership in a cluster. Three agents on threads of their own:
 * <ul>
 *   <li>{@link LeaseKeeper}: joins (placement install or adoption, lease, registration transaction, retried with backoff for the
 *   join timeout), keeps the lease alive and local validity (half the acknowledged TTL from the send), and after a
 *   lapsed registration registers a new incarnation;</li>
 *   <li>{@link MemberViewKeeper}: paged snapshot at one revision, Watch from the next, invalidation and repair; it
 *   follows the installed placement generation and the transition in flight ({@link MemberView#placementState()});</li>
 *   <li>{@link PlacementAgent}: writes this node's coverage reports, campaigns for the reconciler key and, while
 *   elected, drives placement transitions one etcd transaction at a time.</li>
 * </ul>
 * Keepalive never waits behind view repair (design); both threads sleep until their next due time or an event.
 * The current {@link MemberView} is published through a volatile reference with the view keeper as its single
 * writer, the current {@link Incarnation} likewise with the lease keeper as its writer; agents read
 * {@link #view()}, {@link #incarnation()} and {@link #remoteWorkEnabled(long)} without locks or etcd calls.
 *
 * <p>Fencing latches on an incarnation and never lifts (design: an expired runtime never revives). A lapsed
 * registration (see {@link FenceCause#reRegisters()}) is followed by a new incarnation: new runtime UUID, new lease,
 * epoch + 1; other causes leave the process fenced until an operator restarts it. Local DRAM service goes on
 * throughout.
 * <p>
 * This class is the one handoff between the two membership threads and the agents (the published view and
 * incarnation, the fence latch, start, join and close); the etcd work itself lives in {@link LeaseKeeper},
 * {@link MemberRegistrar} (placement and registration transactions), {@link MemberViewKeeper} and {@link EtcdGateway}.
 */
public final class Membership implements AutoCloseable
{
    /** Registration state values of the "Membership: registration state" counter. */
    public static final int STATE_STANDALONE = 0;
    public static final int STATE_REGISTERING = 1;
    public static final int STATE_REGISTERED = 2;
    public static final int STATE_EXPIRED = 3;
    public static final int STATE_FENCED = 4;

    private final MembershipSettings settings;
    private final EtcdGateway etcd;
    private final MemberRegistrar registrar;
    private final SystemCounters counters;
    private final ErrorHandler errorHandler;
    private final PrintStream log;
    private final NanoClock clock;
    private final AuthorityLog authority;
    private final DueTimeIdleStrategy leaseIdle;
    private final DueTimeIdleStrategy viewIdle;
    private final DueTimeIdleStrategy placementIdle;
    private final CompletableFuture<Incarnation> joined = new CompletableFuture<>();
    private final Set<UUID> ownRuntimeUuids = ConcurrentHashMap.newKeySet();
    private volatile MemberView view = MemberView.NONE;
    private volatile int registrationState = STATE_REGISTERING;
    private volatile Incarnation incarnation;
    private volatile UUID runtimeUuid;
    private volatile FenceCause fatalCause = FenceCause.NONE;
    private AgentRunner leaseRunner;
    private AgentRunner viewRunner;
    private AgentRunner placementRunner;
    private LeaseKeeper leaseKeeper;
    private MemberViewKeeper viewKeeper;
    private PlacementAgent placementAgent;
    private volatile PlacementRecord.Generational adoptedPlacement;
    private volatile boolean closed;
    private volatile CoverageReport coverageReport;
    private Runnable beforeWatchHook;

    private Membership(
        final MembershipSettings settings,
        final SystemCounters counters,
        final ErrorHandler errorHandler,
        final PrintStream log,
        final NanoClock clock,
        final AuthorityLog authority)
    {
        this.settings = settings;
        this.authority = authority;
        this.counters = counters;
        this.errorHandler = errorHandler;
        this.log = log;
        this.clock = clock;
        this.runtimeUuid = settings.runtimeUuid();
        this.etcd = new EtcdGateway(settings.etcdEndpoints(), settings.etcdSecurity(), settings.etcdDeadlineMs(), counters, true);
        this.registrar = new MemberRegistrar(settings, etcd, log, ownRuntimeUuids);
        final var wakeups = counters.get(MembershipCounter.WAKEUPS);
        this.leaseIdle = new DueTimeIdleStrategy(clock, wakeups);
        this.viewIdle = new DueTimeIdleStrategy(clock, wakeups);
        this.placementIdle = new DueTimeIdleStrategy(clock, wakeups);
    }

    /**
     * Start joining a cluster in the background: the lease keeper checks or installs the placement and registers,
     * retrying with backoff until {@link MembershipSettings#joinTimeoutMs()}; {@link #awaitJoined()} waits for the
     * outcome. Nothing here calls etcd on the caller's thread.
     *
     * @param settings     what to join with.
     * @param counters     the Manager's counters.
     * @param errorHandler for unexpected agent errors.
     * @param log          where state changes are reported.
     * @param clock        monotonic clock.
     * @return the membership, to await and close.
     */
    public static Membership start(
        final MembershipSettings settings,
        final SystemCounters counters,
        final ErrorHandler errorHandler,
        final PrintStream log,
        final NanoClock clock)
    {
        return start(settings, counters, errorHandler, log, clock, null, null);
    }

    /**
     * Start joining a cluster in the background, recording registrations, validity and fences in an authority log.
     *
     * @param settings     what to join with.
     * @param counters     the Manager's counters.
     * @param errorHandler for unexpected agent errors.
     * @param log          where state changes are reported.
     * @param clock        monotonic clock.
     * @param authority    where authority events are recorded, or null for nowhere.
     * @return the membership, to await and close.
     */
    public static Membership start(
        final MembershipSettings settings,
        final SystemCounters counters,
        final ErrorHandler errorHandler,
        final PrintStream log,
        final NanoClock clock,
        final AuthorityLog authority)
    {
        return start(settings, counters, errorHandler, log, clock, null, authority);
    }

    static Membership start(
        final MembershipSettings settings,
        final SystemCounters counters,
        final ErrorHandler errorHandler,
        final PrintStream log,
        final NanoClock clock,
        final Runnable beforeWatchHook,
        final AuthorityLog authority)
    {
        final Membership membership = new Membership(settings, counters, errorHandler, log, clock, authority);
        membership.beforeWatchHook = beforeWatchHook;
        try
        {
            membership.setState(STATE_REGISTERING);
            membership.startAgents();
        }
        catch (final RuntimeException ex)
        {
            membership.close();
            throw ex;
        }
        return membership;
    }

    /**
     * Join and wait for the first registration: {@link #start} then {@link #awaitJoined()}; closed on failure.
     *
     * @param settings     what to join with.
     * @param counters     the Manager's counters.
     * @param errorHandler for unexpected agent errors.
     * @param log          where state changes are reported.
     * @param clock        monotonic clock.
     * @return the running membership, to close.
     * @throws NodeIdInUseException if another live runtime holds the node id.
     * @throws JoinTimeoutException if etcd could not be reached within the join timeout.
     */
    public static Membership join(
        final MembershipSettings settings,
        final SystemCounters counters,
        final ErrorHandler errorHandler,
        final PrintStream log,
        final NanoClock clock)
    {
        return join(settings, counters, errorHandler, log, clock, null);
    }

    /**
     * Join with a hook run by the view keeper between each snapshot and opening its watch (tests use it to move
     * etcd's history past the snapshot revision).
     */
    static Membership join(
        final MembershipSettings settings,
        final SystemCounters counters,
        final ErrorHandler errorHandler,
        final PrintStream log,
        final NanoClock clock,
        final Runnable beforeWatchHook)
    {
        final Membership membership = start(settings, counters, errorHandler, log, clock, beforeWatchHook, null);
        try
        {
            membership.awaitJoined();
        }
        catch (final RuntimeException ex)
        {
            membership.close();
            throw ex;
        }
        return membership;
    }

    /**
     * Wait until the first incarnation is registered, or joining failed for good.
     *
     * @return the first incarnation.
     * @throws NodeIdInUseException if another live runtime holds the node id.
     * @throws JoinTimeoutException if etcd could not be reached within the join timeout.
     */
    public Incarnation awaitJoined()
    {
        try
        {
            return joined.get();
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while joining the cluster", ex);
        }
        catch (final ExecutionException ex)
        {
            if (ex.getCause() instanceof RuntimeException runtime)
            {
                throw runtime;
            }
            throw new IllegalStateException(ex.getCause());
        }
    }

    void joinFailed(final RuntimeException failure)
    {
        fatalCause = failure instanceof NodeIdInUseException ? FenceCause.NODE_ID_TAKEN : FenceCause.NONE;
        setState(STATE_FENCED);
        joined.completeExceptionally(failure);
    }

    /**
     * Run the registration rounds again with the current incarnation's lease and runtime: what a retry after an
     * unknown-outcome transaction does. It must recognise the own record and not take a new epoch (tests).
     *
     * @return the own record found.
     */
    MemberRecord retryRegistration()
    {
        final Incarnation current = incarnation;
        return registrar.register(current.number(), current.runtimeUuid(), current.leaseId(), current.ttlSecs(),
            current.validity()).record();
    }

    Runnable beforeWatchHook()
    {
        return beforeWatchHook;
    }

    /**
     * A new incarnation is registered (lease keeper thread).
     *
     * @param registered the incarnation.
     * @param after      what ended the previous one, or null for the first.
     */
    void registered(final Incarnation registered, final FenceCause after)
    {
        incarnation = registered;
        runtimeUuid = registered.runtimeUuid();
        counters.get(MembershipCounter.FENCED).setRelease(FenceCause.NONE.code());
        counters.get(MembershipCounter.INCARNATION).setRelease(registered.number());
        counters.get(MembershipCounter.EPOCH).setRelease(registered.epoch());
        if (null != after)
        {
            counters.get(MembershipCounter.REREGISTRATIONS).increment();
        }
        setState(STATE_REGISTERED);
        if (null != authority)
        {
            authority.registered(registered.number(), registered.epoch(), registered.runtimeUuid().getMostSignificantBits(),
                registered.runtimeUuid().getLeastSignificantBits(), registered.leaseId(), registered.ttlSecs(),
                registered.validUntilNs(), null == after ? 0 : after.code());
        }
        log.println("orbitkv membership: registered node '" + settings.nodeId() + "' in cluster '" +
            settings.clusterName() + "' epoch " + registered.epoch() + " lease " +
            Long.toHexString(registered.leaseId()) + " TTL " + registered.ttlSecs() + " s runtime " +
            registered.runtimeUuid() + " (incarnation " + registered.number() +
            (null == after ? "" : ", after the previous one was fenced: " + after.description()) + "; " +
            counters.get(MembershipCounter.ETCD_CALL_TIMEOUTS).get() + " etcd call(s) timed out so far)");
        log.flush();
        joined.complete(registered);
        viewIdle.signal();
        placementIdle.signal();
    }

    /**
     * A new incarnation is about to be registered under this runtime UUID (lease keeper thread); from now on the
     * catalog speaks for it and watch events carrying it are this process's own.
     *
     * @param uuid the new runtime UUID.
     */
    void registering(final UUID uuid)
    {
        ownRuntimeUuids.add(uuid);
        runtimeUuid = uuid;
        setState(STATE_REGISTERING);
    }

    /**
     * Re-registration found the node id held by another runtime, or a placement that is not ours: the process stays
     * fenced until restart.
     */
    void fatal(final FenceCause cause, final String reason)
    {
        fatalCause = cause;
        setState(STATE_FENCED);
        counters.get(MembershipCounter.FENCED).setRelease(cause.code());
        counters.get(MembershipCounter.REMOTE_WORK_ENABLED).setRelease(0);
        recordFence(incarnation, cause);
        log.println("orbitkv membership: FENCED until restart: " + cause.description() + ": " + reason +
            ". New remote work is refused; local DRAM service continues; restart the Manager once resolved.");
        log.flush();
    }

    /**
     * Latch a fence cause on an incarnation (first one wins); a cause about an incarnation that is no longer the
     * current one changes nothing. Called by either agent.
     *
     * @param fenced the incarnation the evidence is about.
     * @param cause  why.
     * @return true if this call fenced the current incarnation.
     */
    boolean fence(final Incarnation fenced, final FenceCause cause)
    {
        if (null == fenced || fenced != incarnation || !fenced.fence(cause))
        {
            return false;
        }
        setState(FenceCause.REGISTRATION_EXPIRED == cause ? STATE_EXPIRED : STATE_FENCED);
        counters.get(MembershipCounter.FENCED).setRelease(cause.code());
        counters.get(MembershipCounter.REMOTE_WORK_ENABLED).setRelease(0);
        recordFence(fenced, cause);
        final String what = "(node '" + settings.nodeId() + "' " + fenced + "). New remote work is refused; local " +
            "DRAM service continues; ";
        if (cause.reRegisters())
        {
            log.println("orbitkv membership: incarnation fenced: " + cause.description() + " " + what +
                "registering a new incarnation (this one stays dead).");
        }
        else
        {
            fatalCause = cause;
            log.println("orbitkv membership: FENCED until restart: " + cause.description() + " " + what +
                "another runtime or another placement owns this identity: restart the Manager once resolved.");
        }
        log.flush();
        leaseIdle.signal();
        placementIdle.signal();
        return true;
    }

    private void recordFence(final Incarnation fenced, final FenceCause cause)
    {
        if (null != authority && null != fenced)
        {
            authority.fenced(fenced.number(), fenced.epoch(), fenced.runtimeUuid().getMostSignificantBits(),
                fenced.runtimeUuid().getLeastSignificantBits(), cause.code(), fenced.validUntilNs());
        }
    }

    /**
     * An acknowledged keepalive extended the incarnation's validity (lease keeper thread): recorded, coalesced.
     *
     * @param extended the incarnation.
     * @param sentNs   when the acknowledged keepalive was sent.
     */
    void validityExtended(final Incarnation extended, final long sentNs)
    {
        if (null != authority)
        {
            authority.validity(extended.number(), extended.epoch(), extended.runtimeUuid().getMostSignificantBits(),
                extended.runtimeUuid().getLeastSignificantBits(), extended.validUntilNs(), sentNs);
        }
    }

    private void setState(final int state)
    {
        registrationState = state;
        counters.get(MembershipCounter.REGISTRATION_STATE).setRelease(state);
    }

    void publish(final MemberView newView)
    {
        view = newView;
    }

    /**
     * Refresh the gauges derived from the view and the registration (view keeper on every change).
     *
     * @param nowNs now.
     */
    void updateGauges(final long nowNs)
    {
        final MemberView current = view;
        counters.get(MembershipCounter.VIEW_COMPLETE).setRelease(current.isComplete() ? 1 : 0);
        counters.get(MembershipCounter.MEMBERS).setRelease(current.members().size());
        counters.get(MembershipCounter.VIEW_REVISION).setRelease(current.revision());
        counters.get(MembershipCounter.SHARDS_UNAVAILABLE).setRelease(current.unavailableShards());
        counters.get(MembershipCounter.SHARDS_DEGRADED).setRelease(current.degradedShards());
        updateRemoteWorkGauge(nowNs);
    }

    void updateRemoteWorkGauge(final long nowNs)
    {
        counters.get(MembershipCounter.REMOTE_WORK_ENABLED).setRelease(remoteWorkEnabled(nowNs) ? 1 : 0);
    }

    private void startAgents()
    {
        leaseKeeper = new LeaseKeeper(this, leaseIdle);
        placementAgent = new PlacementAgent(this, placementIdle);
        viewKeeper = new MemberViewKeeper(this, viewIdle, placementAgent);
        leaseRunner = new AgentRunner(leaseIdle, errorHandler, null, leaseKeeper);
        viewRunner = new AgentRunner(viewIdle, errorHandler, null, viewKeeper);
        placementRunner = new AgentRunner(placementIdle, errorHandler, null, placementAgent);
        AgentRunner.startOnThread(leaseRunner);
        AgentRunner.startOnThread(viewRunner);
        AgentRunner.startOnThread(placementRunner);
    }

    /**
     * Whether new remote work may start: registered, locally valid, not fenced, and the view is complete
     * (design). Lock-free and etcd-free; any thread.
     *
     * @param nowNs now, from the Manager's nano clock.
     * @return true if remote work is allowed.
     */
    public boolean remoteWorkEnabled(final long nowNs)
    {
        return null != remoteWorkIncarnation(nowNs);
    }

    /**
     * The incarnation remote work may start under, when it may: registered, locally valid, not fenced, view complete,
     * membership not closing. Lock-free and etcd-free; any thread.
     *
     * @param nowNs now, from the Manager's nano clock.
     * @return the current incarnation, or null when remote work is not allowed.
     */
    public Incarnation remoteWorkIncarnation(final long nowNs)
    {
        final Incarnation current = incarnation;
        final boolean enabled = !closed &&
            null != current &&
            STATE_REGISTERED == registrationState &&
            FenceCause.NONE == current.fenceCause() &&
            current.validity().isValid(nowNs) &&
            view.isComplete();
        return enabled ? current : null;
    }

    /**
     * The current member view (immutable).
     *
     * @return view.
     */
    public MemberView view()
    {
        return view;
    }

    /**
     * The current (or, while a new one registers, the last) incarnation; null before the first registration.
     *
     * @return incarnation.
     */
    public Incarnation incarnation()
    {
        return incarnation;
    }

    /**
     * The runtime UUID this process speaks for in the cluster: the current incarnation's, or the one being
     * registered after a lapse. The catalog follows it.
     *
     * @return runtime UUID.
     */
    public UUID runtimeUuid()
    {
        return runtimeUuid;
    }

    boolean isOwnRuntime(final UUID uuid)
    {
        return ownRuntimeUuids.contains(uuid);
    }

    /**
     * Why the process refuses remote work: a fatal cause if there is one, else the current incarnation's.
     *
     * @return cause, NONE when not fenced.
     */
    public FenceCause fenceCause()
    {
        final FenceCause fatal = fatalCause;
        if (FenceCause.NONE != fatal)
        {
            return fatal;
        }
        final Incarnation current = incarnation;
        return null == current ? FenceCause.NONE : current.fenceCause();
    }

    /**
     * Hand the newest coverage report of the shards a transition moves to this node to the placement agent, which
     * writes it to etcd when it differs from the last one written. Any thread; never blocks.
     *
     * @param report the report.
     */
    public void reportCoverage(final CoverageReport report)
    {
        coverageReport = report;
        placementIdle.signal();
    }

    /**
     * The placement the join installed or adopted (lease keeper thread): the view keeper's first state until its
     * snapshot reads the keys.
     *
     * @param installed generation and placement.
     */
    void placementAdopted(final PlacementRecord.Generational installed)
    {
        adoptedPlacement = installed;
    }

    PlacementRecord.Generational adoptedPlacement()
    {
        return adoptedPlacement;
    }

    /**
     * The placement this Manager acts on: the view's {@link MemberView#placementState()}, or before the first
     * snapshot the generation the join installed or adopted; null before joining.
     *
     * @return the state, or null.
     */
    public PlacementState placementState()
    {
        final PlacementState fromView = view.placementState();
        if (null != fromView)
        {
            return fromView;
        }
        final PlacementRecord.Generational adopted = adoptedPlacement;
        return null == adopted ? null : adopted.asState();
    }

    /**
     * Whether this Manager is the elected placement reconciler right now (its key holds this runtime under the
     * current lease, as last seen by the placement agent).
     *
     * @return true while elected.
     */
    public boolean isReconciler()
    {
        final PlacementAgent agent = placementAgent;
        return !closed && null != agent && agent.isLeader();
    }

    /**
     * @return the newest coverage report handed over, or null.
     */
    CoverageReport coverageReport()
    {
        return coverageReport;
    }

    public int registrationState()
    {
        return registrationState;
    }

    public MemberRecord ownRecord()
    {
        final Incarnation current = incarnation;
        return null == current ? null : current.record();
    }

    public long leaseId()
    {
        final Incarnation current = incarnation;
        return null == current ? 0 : current.leaseId();
    }

    MembershipSettings settings()
    {
        return settings;
    }

    MemberRegistrar registrar()
    {
        return registrar;
    }

    EtcdGateway etcd()
    {
        return etcd;
    }

    SystemCounters counters()
    {
        return counters;
    }

    NanoClock clock()
    {
        return clock;
    }

    /**
     * Where membership reports state changes (the catalog reports retired incarnations there too).
     *
     * @return the log.
     */
    public PrintStream log()
    {
        return log;
    }

    boolean isClosed()
    {
        return closed;
    }

    /**
     * The lease keeper's, the view keeper's and the placement agent's threads (tests measure what they cost).
     *
     * @return the threads, null entries before they started.
     */
    Thread[] threads()
    {
        return new Thread[]{leaseRunner.thread(), viewRunner.thread(), placementRunner.thread()};
    }

    /**
     * Stop the agents and, on a graceful stop, revoke the lease so the record disappears at once (design); a
     * killed process lets it expire instead.
     */
    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        final Incarnation last = incarnation;
        if (null != authority && null != last)
        {
            // After closed is set: a grant decided from here on would find remote work disabled.
            authority.closing(last.number(), last.epoch(), last.runtimeUuid().getMostSignificantBits(),
                last.runtimeUuid().getLeastSignificantBits(), last.validUntilNs());
        }
        leaseIdle.shutdown();
        viewIdle.shutdown();
        placementIdle.shutdown();
        CloseHelper.quietClose(placementRunner);
        CloseHelper.quietClose(leaseRunner);
        CloseHelper.quietClose(viewRunner);
        if (null != viewKeeper)
        {
            viewKeeper.closeWatcher();
        }
        joined.completeExceptionally(new IllegalStateException("membership closed before joining the cluster"));
        final long leaseId = null == leaseKeeper ? 0 : leaseKeeper.leaseToRevoke();
        if (0 != leaseId)
        {
            try
            {
                etcd.revoke(leaseId);
                log.println("orbitkv membership: revoked lease " + Long.toHexString(leaseId) + " of node '" +
                    settings.nodeId() + "'");
            }
            catch (final RuntimeException ex)
            {
                log.println("orbitkv membership: could not revoke lease " + Long.toHexString(leaseId) +
                    " (it expires within its TTL): " + ex.getMessage());
            }
        }
        CloseHelper.quietClose(etcd);
    }

    /**
     * Another live runtime holds the node id.
     */
    public static final class NodeIdInUseException extends IllegalStateException
    {
        private static final long serialVersionUID = 1L;

        NodeIdInUseException(final String message)
        {
            super(message);
        }
    }

    /**
     * Joining gave up at once: etcd refused this client's TLS or auth (wrong CA, no client certificate, plaintext to
     * a TLS endpoint, bad password, no permission on the cluster's prefix). Retrying cannot help.
     */
    public static final class EtcdAccessException extends IllegalStateException
    {
        private static final long serialVersionUID = 1L;

        EtcdAccessException(final String message, final Throwable cause)
        {
            super(message, cause);
        }
    }

    /**
     * Joining gave up: etcd did not answer within the join timeout.
     */
    public static final class JoinTimeoutException extends IllegalStateException
    {
        private static final long serialVersionUID = 1L;

        JoinTimeoutException(final String message, final Throwable cause)
        {
            super(message, cause);
        }
    }

    /**
     * Every registration round of one attempt lost a race for the epoch or the record.
     */
    static final class LostRacesException extends IllegalStateException
    {
        private static final long serialVersionUID = 1L;

        LostRacesException(final String message)
        {
            super(message);
        }
    }
}
