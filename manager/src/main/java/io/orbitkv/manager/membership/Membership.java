package io.orbitkv.manager.membership;

import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import io.orbitkv.codecs.ShardPlacement;
import io.orbitkv.manager.SystemCounterDescriptor;
import io.orbitkv.manager.SystemCounters;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicInteger;
import org.agrona.CloseHelper;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.SleepingMillisIdleStrategy;

/**
 * A Manager's membership in a cluster: installs or checks the placement, registers the node with one etcd
 * transaction, then runs two agents on their own threads:
 * <ul>
 *   <li>{@link LeaseKeeper}: keepalives and local registration validity (half the acknowledged TTL from the send);</li>
 *   <li>{@link MemberViewKeeper}: paged snapshot at one revision, Watch from the next, invalidation and repair.</li>
 * </ul>
 * Keepalive never waits behind view repair (design). The current {@link MemberView} is published through a
 * volatile reference with the view keeper as its single writer; agents read {@link #view()} and
 * {@link #remoteWorkEnabled(long)} without locks and without etcd calls.
 *
 * <p>Fencing is a one-way latch set by either thread; once fenced (or expired) the runtime refuses new remote work
 * until restart, while local DRAM service goes on (design).
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
    private final SystemCounters counters;
    private final ErrorHandler errorHandler;
    private final PrintStream log;
    private final NanoClock clock;
    private final AtomicInteger fenceCause = new AtomicInteger(FenceCause.NONE.code());
    private volatile MemberView view = MemberView.NONE;
    private volatile int registrationState = STATE_REGISTERING;
    private RegistrationValidity validity;
    private MemberRecord ownRecord;
    private long leaseId;
    private long grantedTtlSecs;
    private AgentRunner leaseRunner;
    private AgentRunner viewRunner;
    private MemberViewKeeper viewKeeper;
    private volatile boolean closed;
    private Runnable beforeWatchHook;

    private Membership(
        final MembershipSettings settings,
        final SystemCounters counters,
        final ErrorHandler errorHandler,
        final PrintStream log,
        final NanoClock clock)
    {
        this.settings = settings;
        this.counters = counters;
        this.errorHandler = errorHandler;
        this.log = log;
        this.clock = clock;
        this.etcd = new EtcdGateway(settings.etcdEndpoints(), settings.etcdDeadlineMs(), counters);
    }

    /**
     * Join a cluster: check/install placement, register, start keepalive and view keeping.
     *
     * @param settings     what to join with.
     * @param counters     the Manager's counters.
     * @param errorHandler for unexpected agent errors.
     * @param log          where state changes are reported.
     * @param clock        monotonic clock.
     * @return the running membership, to close.
     * @throws PlacementMismatchException if the cluster's placement differs from {@code --catalog-nodes}.
     * @throws NodeIdInUseException if another live runtime holds the node id.
     * @throws IllegalStateException if etcd cannot be reached within the registration attempts.
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
        final Membership membership = new Membership(settings, counters, errorHandler, log, clock);
        membership.beforeWatchHook = beforeWatchHook;
        try
        {
            membership.setState(STATE_REGISTERING);
            membership.checkOrInstallPlacement();
            membership.register();
            membership.startAgents();
        }
        catch (final RuntimeException ex)
        {
            membership.close();
            throw ex;
        }
        return membership;
    }

    private void checkOrInstallPlacement()
    {
        final ShardPlacement mine = settings.placement();
        final String key = MembershipConfiguration.placementKey(settings.clusterName());
        RuntimeException last = null;
        for (int attempt = 0; attempt < MembershipConfiguration.MAX_REGISTRATION_ATTEMPTS; attempt++)
        {
            try
            {
                // Create-if-absent in one txn; the else branch returns what is there. A retried unknown outcome
                // finds its own earlier write, which is equal, so retrying is safe.
                final TxnResponse response = etcd.txn(
                    new Cmp[]{new Cmp(EtcdGateway.bytes(key), Cmp.Op.EQUAL, CmpTarget.createRevision(0))},
                    new Op[]{Op.put(EtcdGateway.bytes(key), EtcdGateway.bytes(PlacementRecord.encode(mine)),
                        PutOption.DEFAULT)},
                    new Op[]{Op.get(EtcdGateway.bytes(key), GetOption.DEFAULT)});
                if (response.isSucceeded())
                {
                    log.println("orbitkv membership: installed placement " + mine.nodes() + " (fingerprint " +
                        mine.fingerprint() + ") at " + key);
                    return;
                }
                final KeyValue kv = response.getGetResponses().get(0).getKvs().get(0);
                final ShardPlacement installed = PlacementRecord.decode(kv.getValue().getBytes());
                if (!installed.equals(mine))
                {
                    throw new PlacementMismatchException("placement mismatch in cluster '" + settings.clusterName() +
                        "': etcd holds catalog nodes " + installed.nodes() + " (fingerprint " + installed.fingerprint() +
                        "), this Manager's --catalog-nodes is " + mine.nodes() + " (fingerprint " + mine.fingerprint() +
                        "); every Manager of a cluster must pass the same set (placement is immutable in this stage)");
                }
                return;
            }
            catch (final EtcdGateway.EtcdCallException ex)
            {
                last = ex;
            }
        }
        throw new IllegalStateException("cannot reach etcd at " + settings.etcdEndpoints() + " to check placement: " +
            last.getMessage(), last);
    }

    /**
     * Run the registration rounds again with the same lease and runtime: what a retry after an unknown-outcome
     * transaction does. It must recognise the own record and not take a new epoch (tests).
     *
     * @return the own record found.
     */
    MemberRecord retryRegistration()
    {
        register();
        return ownRecord;
    }

    Runnable beforeWatchHook()
    {
        return beforeWatchHook;
    }

    private void register()
    {
        final String nodeId = settings.nodeId();
        final String memberKey = MembershipConfiguration.memberKey(settings.clusterName(), nodeId);
        final String epochKey = MembershipConfiguration.epochKey(settings.clusterName(), nodeId);

        RuntimeException last = null;
        for (int attempt = 0; attempt < MembershipConfiguration.MAX_REGISTRATION_ATTEMPTS; attempt++)
        {
            try
            {
                if (0 == leaseId)
                {
                    final long grantSentNs = clock.nanoTime();
                    final long[] lease = etcd.grant(settings.ttlSecs());
                    leaseId = lease[0];
                    grantedTtlSecs = lease[1];
                    validity = new RegistrationValidity(grantSentNs, grantedTtlSecs);
                }

                final GetResponse epochResponse = etcd.get(epochKey);
                long epochModRevision = 0;
                long previousEpoch = 0;
                if (!epochResponse.getKvs().isEmpty())
                {
                    final KeyValue kv = epochResponse.getKvs().get(0);
                    epochModRevision = kv.getModRevision();
                    previousEpoch = Long.parseLong(kv.getValue().toString(StandardCharsets.UTF_8).trim());
                }

                final GetResponse memberResponse = etcd.get(memberKey);
                if (!memberResponse.getKvs().isEmpty())
                {
                    final KeyValue kv = memberResponse.getKvs().get(0);
                    MemberRecord existing = null;
                    try
                    {
                        existing = MemberRecord.decode(memberKey, kv.getValue().getBytes());
                    }
                    catch (final MemberRecord.MalformedRecordException ignore)
                    {
                        // reported below as an unknown holder
                    }
                    if (null != existing && existing.runtimeUuid().equals(settings.runtimeUuid()) &&
                        existing.leaseId() == leaseId && kv.getLease() == leaseId)
                    {
                        // An earlier attempt whose outcome was unknown did commit: it is ours.
                        registered(existing);
                        return;
                    }
                    throw new NodeIdInUseException("node id '" + nodeId + "' is already registered in cluster '" +
                        settings.clusterName() + "' by " + (null == existing ? "an unreadable record" :
                        "runtime " + existing.runtimeUuid() + " (epoch " + existing.epoch() + ", started " +
                        Instant.ofEpochMilli(existing.startTimeMs()) + ", peer " + existing.peerEndpoint() + ")") +
                        "; stop that Manager or wait for its lease to expire (up to its TTL after it stopped), " +
                        "or choose another --node-id");
                }

                final MemberRecord record = new MemberRecord(
                    nodeId,
                    previousEpoch + 1,
                    settings.runtimeUuid(),
                    leaseId,
                    settings.peerEndpoint(),
                    settings.transferEndpoint(),
                    MembershipConfiguration.PROTOCOL_VERSION,
                    settings.startTimeMs());
                final TxnResponse response = etcd.txn(
                    new Cmp[]{
                        new Cmp(EtcdGateway.bytes(memberKey), Cmp.Op.EQUAL, CmpTarget.createRevision(0)),
                        new Cmp(EtcdGateway.bytes(epochKey), Cmp.Op.EQUAL, CmpTarget.modRevision(epochModRevision))},
                    new Op[]{
                        Op.put(EtcdGateway.bytes(epochKey), EtcdGateway.bytes(Long.toString(record.epoch())),
                            PutOption.DEFAULT),
                        Op.put(EtcdGateway.bytes(memberKey), EtcdGateway.bytes(record.encode()),
                            PutOption.builder().withLeaseId(leaseId).build())},
                    new Op[0]);
                if (response.isSucceeded())
                {
                    registered(record);
                    return;
                }
                // Lost a race for the epoch or the record: the next round reads again and decides.
            }
            catch (final EtcdGateway.EtcdCallException ex)
            {
                // Unknown outcome: the next round recognises our own record by lease and runtime UUID.
                last = ex;
            }
        }
        throw new IllegalStateException("registration of node id '" + nodeId + "' did not complete in " +
            MembershipConfiguration.MAX_REGISTRATION_ATTEMPTS + " attempts" +
            (null == last ? " (lost every race)" : ": " + last.getMessage()), last);
    }

    private void registered(final MemberRecord record)
    {
        ownRecord = record;
        setState(STATE_REGISTERED);
        log.println("orbitkv membership: registered node '" + record.nodeId() + "' in cluster '" +
            settings.clusterName() + "' epoch " + record.epoch() + " lease " + Long.toHexString(leaseId) + " TTL " +
            grantedTtlSecs + " s runtime " + record.runtimeUuid() + " (" +
            counters.get(SystemCounterDescriptor.ETCD_CALL_TIMEOUTS).get() + " etcd call(s) timed out while joining)");
    }

    private void startAgents()
    {
        final LeaseKeeper leaseKeeper = new LeaseKeeper(this);
        viewKeeper = new MemberViewKeeper(this);
        leaseRunner = new AgentRunner(new SleepingMillisIdleStrategy(10), errorHandler, null, leaseKeeper);
        viewRunner = new AgentRunner(new SleepingMillisIdleStrategy(2), errorHandler, null, viewKeeper);
        AgentRunner.startOnThread(leaseRunner);
        AgentRunner.startOnThread(viewRunner);
    }

    /**
     * Latch a fence cause (first one wins). Called by either agent.
     *
     * @param cause why.
     * @return true if this call fenced the runtime.
     */
    boolean fence(final FenceCause cause)
    {
        if (fenceCause.compareAndSet(FenceCause.NONE.code(), cause.code()))
        {
            setState(FenceCause.REGISTRATION_EXPIRED == cause ? STATE_EXPIRED : STATE_FENCED);
            counters.get(SystemCounterDescriptor.MEMBERSHIP_FENCED).setRelease(cause.code());
            counters.get(SystemCounterDescriptor.MEMBERSHIP_REMOTE_WORK_ENABLED).setRelease(0);
            log.println("orbitkv membership: FENCED until restart: " + cause.description() + " (node '" +
                settings.nodeId() + "' epoch " + (null == ownRecord ? 0 : ownRecord.epoch()) + "). New remote work " +
                "is refused; local DRAM service continues; restart the Manager to register a new incarnation.");
            log.flush();
            return true;
        }
        return false;
    }

    private void setState(final int state)
    {
        registrationState = state;
        counters.get(SystemCounterDescriptor.MEMBERSHIP_REGISTRATION_STATE).setRelease(state);
    }

    void publish(final MemberView newView)
    {
        view = newView;
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
        return STATE_REGISTERED == registrationState &&
            FenceCause.NONE.code() == fenceCause.get() &&
            validity.isValid(nowNs) &&
            view.isComplete();
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

    public FenceCause fenceCause()
    {
        return FenceCause.of(fenceCause.get());
    }

    public int registrationState()
    {
        return registrationState;
    }

    public MemberRecord ownRecord()
    {
        return ownRecord;
    }

    public long leaseId()
    {
        return leaseId;
    }

    public long grantedTtlSecs()
    {
        return grantedTtlSecs;
    }

    MembershipSettings settings()
    {
        return settings;
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

    RegistrationValidity validity()
    {
        return validity;
    }

    PrintStream log()
    {
        return log;
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
        CloseHelper.quietClose(leaseRunner);
        CloseHelper.quietClose(viewRunner);
        if (null != viewKeeper)
        {
            viewKeeper.closeWatcher();
        }
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
     * The cluster's placement differs from this Manager's {@code --catalog-nodes}.
     */
    public static final class PlacementMismatchException extends IllegalStateException
    {
        private static final long serialVersionUID = 1L;

        PlacementMismatchException(final String message)
        {
            super(message);
        }
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
}
